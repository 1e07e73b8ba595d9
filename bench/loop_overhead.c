/* Fixed costs of op2's JIT and loop driver (issue: foundation, point 12):
 *   cold    first op_par_loop of a new loop shape on an empty cache (generate + cc + load)
 *   disk    first op_par_loop of that shape in a new session, found in the disk cache
 *   memory  first op_par_loop of a new kernel handle whose code is already loaded
 *   call    one op_par_loop on a 1-element set, steady state (median of 5 x 200000 calls)
 *   plain   the same for a loop without a global reduction, with op_flush after every 8 calls
 *           (under OP2_LAZY=1 the 8 loops are queued, then run as one chain by op_flush)
 * Usage: loop_overhead BACKEND   (uses OP2_CACHE_DIR; run it on an empty directory for cold) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "op2.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static const char *src = "void axpy(const double *x, double *y, double *s) { *y += a * *x; *s += *y; }\n";

static void loop(op_kernel k, op_set set, op_dat x, op_dat y, double *s) {
  OP_PAR_LOOP(k, "axpy", set, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
              op_arg_dat(y, -1, OP_ID, 1, "double", OP_RW), op_arg_gbl(s, 1, "double", OP_INC));
}

static const char *src_plain = "void scale(const double *x, double *y) { *y = a * *x; }\n";

static int cmp(const void *a, const void *b) {
  double d = *(const double *)a - *(const double *)b;
  return (d > 0) - (d < 0);
}

int main(int argc, char **argv) {
  char token[64];
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argc > 1 ? argv[1] : "seq");
  char *args[] = {"loop_overhead", token, NULL};
  double a = 0.5, s = 0, one = 1;
  double t0, first, disk, mem;

  op_init(2, args, 0);
  op_decl_const(1, "double", &a, "a");
  op_set set = op_decl_set(1, "one");
  op_dat x = op_decl_dat(set, 1, "double", &one, "x");
  op_dat y = op_decl_dat(set, 1, "double", NULL, "y");
  t0 = now();
  loop(op_decl_kernel(src, "axpy"), set, x, y, &s);
  first = now() - t0;
  op_exit();

  op_init(2, args, 0);
  op_decl_const(1, "double", &a, "a");
  set = op_decl_set(1, "one");
  x = op_decl_dat(set, 1, "double", &one, "x");
  y = op_decl_dat(set, 1, "double", NULL, "y");
  op_kernel k = op_decl_kernel(src, "axpy");
  t0 = now();
  loop(k, set, x, y, &s);
  disk = now() - t0;
  t0 = now();
  loop(op_decl_kernel(src, "axpy"), set, x, y, &s);
  mem = now() - t0;

  enum { REPS = 5, CALLS = 200000 };
  double per[REPS];
  for (int r = 0; r < REPS; r++) {
    t0 = now();
    for (int i = 0; i < CALLS; i++) loop(k, set, x, y, &s);
    per[r] = (now() - t0) / CALLS;
  }
  qsort(per, REPS, sizeof per[0], cmp);
  op_kernel kp = op_decl_kernel(src_plain, "scale");
  double plain[REPS];
  for (int r = 0; r < REPS; r++) {
    t0 = now();
    for (int i = 0; i < CALLS; i++) {
      OP_PAR_LOOP(kp, "scale", set, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
                  op_arg_dat(y, -1, OP_ID, 1, "double", OP_WRITE));
      if (i % 8 == 7) op_flush();
    }
    op_flush();
    plain[r] = (now() - t0) / CALLS;
  }
  qsort(plain, REPS, sizeof plain[0], cmp);
  printf("backend %s: first call %.1f ms (cold if the cache was empty), disk-cache load %.3f ms, "
         "memory hit %.2f us, steady op_par_loop on 1 element %.3f us, without a reduction "
         "(op_flush every 8) %.3f us%s\n",
         op_backend_name(), 1e3 * first, 1e3 * disk, 1e6 * mem, 1e6 * per[REPS / 2], 1e6 * plain[REPS / 2],
         getenv("OP2_LAZY") && getenv("OP2_LAZY")[0] == '1' ? " (OP2_LAZY=1)" : "");
  op_exit();
  return s > 0 ? 0 : 1;
}
