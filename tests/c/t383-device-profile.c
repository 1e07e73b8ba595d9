/* Issue 34, point 4: OP2_DEVICE_PROFILE=1 makes op_timing_output say, per loop on opencl, how
 * many launches it made, how long its kernels ran by the device's own clock (OpenCL profiling
 * events) and how long the loop took in the backend: where a slow device loop's time goes.
 * A direct loop (3 calls: 3 launches) and an indirect increment (2 calls, one launch or more
 * each); every backend gives the hand-computed values; on opencl the table's rows are checked:
 * calls and launches exact, kernel time positive and within the backend time (with OP2_LAZY=1
 * the direct calls run as fused units, so only that they ran is checked). Elsewhere there is no
 * such table (nothing runs on a device). */
#include "test.h"

#define N 4000
#define NN (N / 2 + 1)

static const char *src_scale = "void scale(const double *x, double *y) { *y = 2.0 * *x; }\n";
static const char *src_edge = "void edge(const double *x, double *r0, double *r1) { *r0 += *x; *r1 += 1.0; }\n";

/* The row of `loop` in the device profile: calls, launches, kernel ms, backend ms. */
static int row_of(const char *text, const char *loop, long *calls, long *launches, double *kms, double *bms)
{
  const char *at = strstr(text, "device profile (OP2_DEVICE_PROFILE=1");
  char key[64];
  if (at == NULL) return 0;
  snprintf(key, sizeof key, "\n  %s ", loop);
  at = strstr(at, key);
  if (at == NULL) return 0;
  return sscanf(at + strlen(key), "%ld %ld %lf %lf", calls, launches, kms, bms) == 4;
}

int main(int argc, char **argv)
{
  char token[64];
  double x0[N], y[N], zero[NN], r[NN], want[NN];
  int c2n[2 * N], i, it, opencl, lazy;
  if (argc < 2) return 2;
  opencl = strcmp(argv[1], "opencl") == 0;
  lazy = getenv("OP2_LAZY") != NULL && strcmp(getenv("OP2_LAZY"), "1") == 0;
  for (i = 0; i < N; i++) {
    x0[i] = (double)(i % 13);
    c2n[2 * i] = i / 2;
    c2n[2 * i + 1] = (i / 2 + 1) % NN;
  }
  for (i = 0; i < NN; i++) zero[i] = want[i] = 0.0;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  test_init_tokens("t383", token, "OP2_DEVICE_PROFILE=1", (const char *)NULL);
  {
    op_set cells = op_decl_set(N, "cells"), nodes = op_decl_set(NN, "nodes");
    op_map pcn = op_decl_map(cells, nodes, 2, c2n, "pcn");
    op_dat dx = op_decl_dat(cells, 1, "double", x0, "x"), dy = op_decl_dat(cells, 1, "double", NULL, "y");
    op_dat dr = op_decl_dat(nodes, 1, "double", zero, "r");
    op_kernel kscale = op_decl_kernel(src_scale, "scale"), kedge = op_decl_kernel(src_edge, "edge");
    char *text;
    long calls, launches;
    double kms, bms;
    for (it = 0; it < 3; it++) {
      PAR_LOOP(kscale, "scale", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(dy, -1, OP_ID, 1, "double", OP_WRITE));
      CHECK_OK();
    }
    for (it = 0; it < 2; it++) {
      PAR_LOOP(kedge, "edge", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(dr, 0, pcn, 1, "double", OP_INC), op_arg_dat(dr, 1, pcn, 1, "double", OP_INC));
      CHECK_OK();
      for (i = 0; i < N; i++) {
        want[c2n[2 * i]] += x0[i];
        want[c2n[2 * i + 1]] += 1.0;
      }
    }
    op_fetch_data(dy, y);
    for (i = 0; i < N; i++) CHECK_DBL(y[i], 2.0 * x0[i]);
    op_fetch_data(dr, r);
    for (i = 0; i < NN; i++) CHECK_DBL(r[i], want[i]);

    text = test_stdout_of(op_timing_output);
    if (opencl) {
      CHECK(row_of(text, "scale", &calls, &launches, &kms, &bms));
      CHECK(lazy ? calls >= 1 : calls == 3);
      CHECK(lazy ? launches >= 1 : launches == 3);
      CHECK(kms > 0.0);
      CHECK(kms <= bms);
      CHECK(row_of(text, "edge", &calls, &launches, &kms, &bms));
      CHECK_INT((int)calls, 2);
      CHECK(launches >= 2);
      CHECK(kms > 0.0);
      CHECK(kms <= bms);
    } else if (strcmp(argv[1], "cuda") != 0) {
      CHECK(strstr(text, "device profile") == NULL);
    }
    free(text);
  }
  op_exit();
  return 0;
}
