/* Issue 34, point 1: OP2_INC=measure (cuda's default) chooses each loop's increment strategy by
 * measure: its first calls try atomics, colour and blocks (two calls each), then the fastest is
 * kept for the loop's later calls and, in the JIT cache, for a later run on the same device.
 * An indirect increment (integer values: exact with every strategy) runs 9 times in each of two
 * runs sharing a fresh cache directory. Every call gives the hand-computed values on every
 * backend; on opencl and cuda op_timing_output names the loop's choice: measured, with the
 * three strategies' times, in the first run, and the same choice kept from the cache in the
 * second. A direct loop is never measured (nothing to choose). */
#include "test.h"

#define N 3000
#define NN (N / 2 + 1)
#define CALLS 9

static const char *src_edge = "void edge(const double *x, double *r0, double *r1) { *r0 += *x; *r1 += 1.0; }\n";
static const char *src_scale = "void scale(const double *x, double *y) { *y = 3.0 * *x; }\n";

/* One run; returns op_timing_output's text (malloc'd). */
static char *run(const char *backend, const char *cache_dir)
{
  char token[64], cache[600];
  double x0[N], zero[NN], r[NN], want[NN], y[N];
  int c2n[2 * N], i, it;
  char *text;
  for (i = 0; i < N; i++) {
    x0[i] = (double)(i % 17);
    c2n[2 * i] = i / 2;
    c2n[2 * i + 1] = (i / 2 + 1) % NN;
  }
  for (i = 0; i < NN; i++) zero[i] = want[i] = 0.0;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  snprintf(cache, sizeof cache, "OP2_CACHE_DIR=%s", cache_dir);
  test_init_tokens("t384", token, cache, "OP2_INC=measure", (const char *)NULL);
  {
    op_set cells = op_decl_set(N, "cells"), nodes = op_decl_set(NN, "nodes");
    op_map pcn = op_decl_map(cells, nodes, 2, c2n, "pcn");
    op_dat dx = op_decl_dat(cells, 1, "double", x0, "x"), dr = op_decl_dat(nodes, 1, "double", zero, "r");
    op_dat dy = op_decl_dat(cells, 1, "double", NULL, "y");
    op_kernel kedge = op_decl_kernel(src_edge, "edge"), kscale = op_decl_kernel(src_scale, "scale");
    for (it = 0; it < CALLS; it++) {
      PAR_LOOP(kedge, "edge", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(dr, 0, pcn, 1, "double", OP_INC), op_arg_dat(dr, 1, pcn, 1, "double", OP_INC));
      CHECK_OK();
      PAR_LOOP(kscale, "scale", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(dy, -1, OP_ID, 1, "double", OP_WRITE));
      CHECK_OK();
      for (i = 0; i < N; i++) {
        want[c2n[2 * i]] += x0[i];
        want[c2n[2 * i + 1]] += 1.0;
      }
      /* Each call's values, whichever strategy ran it. */
      op_fetch_data(dr, r);
      for (i = 0; i < NN; i++) CHECK_DBL(r[i], want[i]);
    }
    op_fetch_data(dy, y);
    for (i = 0; i < N; i++) CHECK_DBL(y[i], 3.0 * x0[i]);
    text = test_stdout_of(op_timing_output);
  }
  op_exit();
  return text;
}

/* The strategy op_timing_output names for the edge loop, followed by `how`; "" if none. */
static void choice_of(const char *text, const char *how, char *out, size_t n)
{
  const char *key = "\n  inc: edge [0, 3000): ";
  const char *at = strstr(text, key);
  out[0] = '\0';
  if (at == NULL) return;
  at += strlen(key);
  if (sscanf(at, "%15s", out) != 1 || strncmp(at + strlen(out), how, strlen(how)) != 0 || n < 16) out[0] = '\0';
}

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t384-XXXXXX", first[16], second[16], cmd[600];
  char *t1, *t2;
  int device;
  if (argc < 2) return 2;
  device = strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0;
  CHECK(mkdtemp(dir) != NULL);
  t1 = run(argv[1], dir);
  t2 = run(argv[1], dir);
  if (device) {
    choice_of(t1, " (measured: ", first, sizeof first);
    choice_of(t2, " (kept from an earlier run)", second, sizeof second);
    CHECK(first[0] != '\0');
    CHECK_STR(second, first);
    CHECK(strstr(t1, " colour ") != NULL && strstr(t1, " blocks ") != NULL);
    CHECK(strstr(t1, "inc: scale") == NULL);
  } else {
    CHECK(strstr(t1, "inc: edge") == NULL);
  }
  free(t1);
  free(t2);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  return 0;
}
