/* Issue 21, point 6: reading an indirect OP_INC argument is undefined in OP2's model (devices
 * pass a zero-staged copy, seq and threads the target's running sum), so OP2_VALIDATE=1 names
 * a kernel whose source reads one: OP2_ERR_VALIDATE naming the loop, the argument, its dat, the
 * kernel, the parameter and the line, before the loop runs (the dat is unchanged). The check
 * backend refuses it too (OP2_ERR_CHECK). Kernels that only add to indirect INC arguments, and
 * a direct INC argument that is read (the element's own), pass. Without validation, on other
 * backends, the loop runs as before. */
#include "test.h"

#define N 8
#define E (N - 1)

static const char *src_bad = "void jac(const double *a, double *u)\n"
                             "{\n"
                             "  *u += a[0];\n"
                             "  *u += 0.5 * *u;\n"
                             "}\n";

static const char *src_vec = "void vsum(const double *a, double **v)\n"
                             "{\n"
                             "  v[0][0] += a[0];\n"
                             "  v[1][0] = v[1][0] + a[0];\n"
                             "}\n";

static const char *src_ok = "void good(const double *a, double *u, double *w)\n"
                            "{\n"
                            "  *w += a[0];\n"
                            "  *u += *w;\n"
                            "  (*u) -= 0.5 * a[0];\n"
                            "}\n";

static void run(const char *backend, const char *validate, int refused, int code)
{
  static double av[E], uv[N], wv[E], got[N];
  static int e2n[2 * E];
  char token[64];
  int i;
  for (i = 0; i < E; i++) av[i] = 1.0 + i, wv[i] = 0.5, e2n[2 * i] = i, e2n[2 * i + 1] = i + 1;
  for (i = 0; i < N; i++) uv[i] = 10.0;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens("t044", token, validate, (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
  {
    op_set nodes = op_decl_set(N, "nodes"), edges = op_decl_set(E, "edges");
    op_map pe = op_decl_map(edges, nodes, 2, e2n, "pe");
    op_dat a = op_decl_dat(edges, 1, "double", av, "a");
    op_dat w = op_decl_dat(edges, 1, "double", wv, "w");
    op_dat u = op_decl_dat(nodes, 1, "double", uv, "u");
    op_kernel kbad = op_decl_kernel(src_bad, "jac");
    op_kernel kvec = op_decl_kernel(src_vec, "vsum");
    op_kernel kok = op_decl_kernel(src_ok, "good");

    /* Correct: indirect INC only added to; a direct INC (w) read after its increment. */
    PAR_LOOP(kok, "good", edges, op_arg_dat(a, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(u, 1, pe, 1, "double", OP_INC), op_arg_dat(w, -1, OP_ID, 1, "double", OP_INC));
    CHECK_OK();
    op_fetch_data(u, got);
    CHECK_DBL(got[0], 10.0);
    for (i = 1; i < N; i++) CHECK_DBL(got[i], 10.5 + 0.5 * i); /* w + 0.5 = 1.5 + e, less a / 2 */

    PAR_LOOP(kbad, "update", edges, op_arg_dat(a, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(u, 0, pe, 1, "double", OP_INC));
    if (refused) {
      CHECK_ERR(code, "op_par_loop 'update', arg 1 (dat 'u')", "kernel 'jac'", "indirect OP_INC parameter 'u'",
                "line 4");
      op_fetch_data(u, got);
      CHECK_DBL(got[0], 10.0); /* not run */
      PAR_LOOP(kvec, "vector", edges, op_arg_dat(a, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(u, -2, pe, 1, "double", OP_INC));
      CHECK_ERR(code, "op_par_loop 'vector', arg 1 (dat 'u')", "kernel 'vsum'", "parameter 'v'", "line 4");
    } else {
      CHECK_OK();
    }
  }
  op_exit();
}

int main(int argc, char **argv)
{
  int check;
  if (argc < 2) return 2;
  check = strcmp(argv[1], "check") == 0;
  run(argv[1], "OP2_VALIDATE=1", 1, OP2_ERR_VALIDATE);
  run(argv[1], "OP2_VALIDATE=0", check, OP2_ERR_CHECK);
  return 0;
}
