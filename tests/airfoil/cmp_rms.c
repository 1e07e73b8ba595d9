/*
 * cmp_rms: compare Airfoil rms logs ("iter rms" per line, as written by --rms-log).
 *
 *   cmp_rms --exact A.log B.log          every iteration bit-identical
 *   cmp_rms --rel TOL A.log B.log        |a - b| <= TOL * |b| at every iteration
 *   cmp_rms --final VALUE TOL A.log      the last iteration's rms within TOL relative of VALUE
 *
 * Both logs must list the same iterations. Prints a one-line verdict (and the first
 * disagreement); exit status 0 on agreement, 1 otherwise, 2 on usage or file errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  long n;
  long *iter;
  double *rms;
} rmslog;

static int load(const char *path, rmslog *l) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cmp_rms: cannot open '%s'\n", path);
    return -1;
  }
  long cap = 1024;
  l->n = 0;
  l->iter = malloc(sizeof(long) * (size_t)cap);
  l->rms = malloc(sizeof(double) * (size_t)cap);
  char line[256];
  long lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    long it;
    double v;
    char extra[2];
    if (line[0] == '\n') continue;
    if (sscanf(line, "%ld %lf %1s", &it, &v, extra) != 2) {
      fprintf(stderr, "cmp_rms: %s:%ld: expected 'iter rms', got '%s'\n", path, lineno, line);
      fclose(f);
      return -1;
    }
    if (l->n == cap) {
      cap *= 2;
      l->iter = realloc(l->iter, sizeof(long) * (size_t)cap);
      l->rms = realloc(l->rms, sizeof(double) * (size_t)cap);
    }
    l->iter[l->n] = it;
    l->rms[l->n] = v;
    l->n++;
  }
  fclose(f);
  if (l->n == 0) {
    fprintf(stderr, "cmp_rms: %s: no iterations\n", path);
    return -1;
  }
  return 0;
}

static void usage(void) {
  fprintf(stderr, "usage: cmp_rms --exact A.log B.log | --rel TOL A.log B.log | "
                  "--final VALUE TOL A.log\n");
}

int main(int argc, char **argv) {
  rmslog a, b;
  if (argc == 5 && !strcmp(argv[1], "--final")) {
    double want = strtod(argv[2], NULL), tol = strtod(argv[3], NULL);
    if (load(argv[4], &a)) return 2;
    double got = a.rms[a.n - 1];
    double rel = fabs(got - want) / fabs(want);
    if (!(rel <= tol)) {
      printf("cmp_rms: FAIL: %s: final rms (iteration %ld) %.17e differs from %.17e by %.3e "
             "relative (tolerance %.1e)\n",
             argv[4], a.iter[a.n - 1], got, want, rel, tol);
      return 1;
    }
    printf("cmp_rms: ok: %s: final rms (iteration %ld) %.17e, %s %.17e (relative difference %.3e)\n",
           argv[4], a.iter[a.n - 1], got, got == want ? "identical to" : "close to", want, rel);
    return 0;
  }
  int exact;
  double tol = 0.0;
  const char *pa, *pb;
  if (argc == 4 && !strcmp(argv[1], "--exact")) {
    exact = 1;
    pa = argv[2];
    pb = argv[3];
  } else if (argc == 5 && !strcmp(argv[1], "--rel")) {
    exact = 0;
    tol = strtod(argv[2], NULL);
    pa = argv[3];
    pb = argv[4];
  } else {
    usage();
    return 2;
  }
  if (load(pa, &a) || load(pb, &b)) return 2;
  if (a.n != b.n) {
    printf("cmp_rms: FAIL: %s has %ld iterations, %s has %ld\n", pa, a.n, pb, b.n);
    return 1;
  }
  double maxrel = 0.0;
  long ndiff = 0;
  for (long k = 0; k < a.n; k++) {
    if (a.iter[k] != b.iter[k]) {
      printf("cmp_rms: FAIL: line %ld: iteration %ld in %s but %ld in %s\n", k + 1, a.iter[k], pa,
             b.iter[k], pb);
      return 1;
    }
    double x = a.rms[k], y = b.rms[k];
    double rel = (x == y) ? 0.0 : fabs(x - y) / fabs(y);
    if (!(rel <= maxrel)) maxrel = rel;
    if (x != y) ndiff++;
    int bad = exact ? (x != y || isnan(x)) : !(rel <= tol);
    if (bad) {
      printf("cmp_rms: FAIL: iteration %ld: %s has %.17e, %s has %.17e (relative difference "
             "%.3e, %s)\n",
             a.iter[k], pa, x, pb, y, rel, exact ? "bit-identical required" : "tolerance exceeded");
      return 1;
    }
  }
  if (exact)
    printf("cmp_rms: ok: %s and %s bit-identical over %ld iterations\n", pa, pb, a.n);
  else
    printf("cmp_rms: ok: %s and %s agree within %.1e relative over %ld iterations (%ld differ, max "
           "relative difference %.3e)\n",
           pa, pb, tol, a.n, ndiff, maxrel);
  return 0;
}
