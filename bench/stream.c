/*
 * stream.c: STREAM-triad-style memory bandwidth, a[i] = b[i] + s * c[i], counting 24 bytes per
 * element per triad (two loads and a store; write-allocate traffic not counted, as STREAM does).
 *
 *   stream [--mb MB] [--reps N] [--json]
 *     --mb MB    size of each of the three arrays in MiB (default 256: far larger than cache)
 *     --reps N   repetitions; the best is reported (default 10)
 *
 * Built with OpenMP when the compiler has it: reports the bandwidth with one thread and with
 * all threads (OMP_NUM_THREADS, default all cores). Output lines:
 *   stream: triad 1 thread: X GB/s
 *   stream: triad N threads: Y GB/s
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double triad(double *restrict a, const double *restrict b, const double *restrict c,
                    long n, int reps, int nthreads) {
  const double s = 3.0;
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nthreads)
#endif
    for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    double t = now_s() - t0;
    if (t < best) best = t;
  }
  (void)nthreads;
  return 24.0 * (double)n / best / 1e9;
}

int main(int argc, char **argv) {
  long mb = 256;
  int reps = 10, json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mb") && i + 1 < argc)
      mb = atol(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json"))
      json = 1;
    else {
      fprintf(stderr, "usage: stream [--mb MB] [--reps N] [--json]\n");
      return 2;
    }
  }
  if (mb < 1 || reps < 1) {
    fprintf(stderr, "stream: --mb and --reps must be positive\n");
    return 2;
  }
  long n = mb * 1024 * 1024 / (long)sizeof(double);
  double *a = malloc(sizeof(double) * (size_t)n);
  double *b = malloc(sizeof(double) * (size_t)n);
  double *c = malloc(sizeof(double) * (size_t)n);
  if (!a || !b || !c) {
    fprintf(stderr, "stream: out of memory for 3 x %ld MiB\n", mb);
    return 1;
  }
  int nmax = 1;
#ifdef _OPENMP
  nmax = omp_get_max_threads();
#pragma omp parallel for schedule(static)
#endif
  for (long i = 0; i < n; i++) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  double g1 = triad(a, b, c, n, reps, 1);
  double gn = nmax > 1 ? triad(a, b, c, n, reps, nmax) : g1;
  /* keep the result alive */
  volatile double sink = a[n / 2];
  (void)sink;
  if (json)
    printf("{\"array_mib\": %ld, \"reps\": %d, \"triad_gbs_1thread\": %.2f, \"threads\": %d, "
           "\"triad_gbs\": %.2f}\n",
           mb, reps, g1, nmax, gn);
  else {
    printf("stream: 3 arrays of %ld MiB, best of %d\n", mb, reps);
    printf("stream: triad 1 thread: %.2f GB/s\n", g1);
    printf("stream: triad %d threads: %.2f GB/s\n", nmax, gn);
  }
  free(a);
  free(b);
  free(c);
  return 0;
}
