/*
 * op2_copy: the bandwidth of a direct op2 loop that copies one dat into another, for the GPU
 * kit's roofline (build/gpu-kit/run.sh): the same measure as cuMemcpyDtoD (op2-gpu-probe copy),
 * through op2's own generated code.
 *
 *   op2_copy MIB REPS [NAME=VALUE ...]
 *
 * Declares a set of MIB MiB / 8 elements, dats a and b (one double each), runs the loop
 * `copy(a -> b)` once untimed (code generation, upload), then REPS times timed, checks every
 * copied value, and prints op_timing_output and the line `op2_copy_gbs=G` (bytes read plus
 * bytes written per second, 1e9 bytes per GB). NAME=VALUE words go to op_init
 * (OP2_BACKEND=cuda, ...). Exit 0 on success, 1 on a wrong value or an op2 error, 2 on usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "op2.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long positive(const char *s, long max) {
  char *e;
  long v = strtol(s, &e, 10);
  return (*e || e == s || v < 1 || v > max) ? -1 : v;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: op2_copy MIB REPS [NAME=VALUE ...]\n");
    return 2;
  }
  long mib = positive(argv[1], 8192), reps = positive(argv[2], 100000);
  if (mib < 0 || reps < 0) {
    fprintf(stderr, "op2_copy: MIB must be 1 to 8192 and REPS 1 to 100000, got '%s' '%s'\n", argv[1], argv[2]);
    return 2;
  }
  long n = mib * (1L << 20) / (long)sizeof(double);
  double *a = malloc((size_t)n * sizeof(double)), *b = calloc((size_t)n, sizeof(double));
  if (!a || !b) {
    fprintf(stderr, "op2_copy: out of host memory for 2 x %ld MiB\n", mib);
    return 1;
  }
  for (long i = 0; i < n; i++) a[i] = (double)(i % 1000003) + 0.25;

  /* argv[3..] are op_init's tokens (argv[0] first, as op_init expects) */
  argv[2] = argv[0];
  op_set_error_handler(OP_ERRORS_RETURN);
  op_init(argc - 2, argv + 2, 1);
  if (op_last_error_code()) {
    fprintf(stderr, "op2_copy: %s\n", op_last_error_message());
    return 1;
  }
  op_set cells = op_decl_set((int)n, "cells");
  op_dat da = op_decl_dat(cells, 1, "double", a, "a");
  op_dat db = op_decl_dat(cells, 1, "double", b, "b");
  op_kernel k = op_decl_kernel("void copy(const double *a, double *b) { *b = *a; }\n", "copy");
  if (op_last_error_code()) {
    fprintf(stderr, "op2_copy: %s\n", op_last_error_message());
    return 1;
  }
  double t = 0;
  for (long r = 0; r <= reps; r++) {
    if (r == 1) t = now_s();
    OP_PAR_LOOP(k, "copy", cells, op_arg_dat(da, -1, OP_ID, 1, "double", OP_READ),
                op_arg_dat(db, -1, OP_ID, 1, "double", OP_WRITE));
    if (op_last_error_code()) {
      fprintf(stderr, "op2_copy: %s\n", op_last_error_message());
      return 1;
    }
  }
  t = now_s() - t;
  op_fetch_data(db, b);
  for (long i = 0; i < n; i++) {
    if (b[i] != a[i]) {
      fprintf(stderr, "op2_copy: b[%ld] = %.17g, expected %.17g\n", i, b[i], a[i]);
      return 1;
    }
  }
  double gbs = 2.0 * (double)n * sizeof(double) * (double)reps / t / 1e9;
  op_timing_output();
  printf("op2_copy: %ld MiB, %ld times: %.3f ms per loop, %.1f GB/s (read + write)\n", mib, reps, 1e3 * t / (double)reps, gbs);
  printf("op2_copy_gbs=%.1f\n", gbs);
  op_exit();
  free(a);
  free(b);
  return 0;
}
