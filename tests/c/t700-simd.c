/* Vectorised wrappers (OP2_SIMD=on, 8 lanes): a kernel with every argument form the rewriter
 * accepts (indirect READ, direct READ, indirect INC with many lanes of one block hitting the
 * same target, direct WRITE, the element index, a global READ) must give bit for bit what its
 * scalar twin gives (the same body, made non-vectorisable by a pointer copy) on set sizes 0,
 * 1, 7, 8, 9 and 100003, on every backend; on seq also what a plain C loop gives. Kernels the
 * rewriter refuses run scalar, and op_timing_output says which wrapper each loop runs and why. */
#include "test.h"

#include <unistd.h>

#define STR_(...) #__VA_ARGS__
#define STR(...) STR_(__VA_ARGS__)

#define MIX_PARAMS (const double *x, const double *q, double *r, double *o, const int *i, const double *g)
#define MIX_BODY                                                                                   \
  double s = sqrt(x[0] * x[0] + x[1] * x[1]) / (*g + q[0]);                                        \
  r[0] += s * q[1];                                                                                \
  r[1] -= s / 3.0;                                                                                 \
  o[0] = s + (double)*i;                                                                           \
  o[1] = x[1] / 7.0;

static void mix MIX_PARAMS { MIX_BODY }

static const char *src_mix = "void mix" STR(MIX_PARAMS) "\n{\n" STR(MIX_BODY) "\n}\n";
static const char *src_twin = "void twin" STR(MIX_PARAMS) "\n{\n  const double *alias = x;\n" STR(MIX_BODY) "\n  (void)alias;\n}\n";

/* Runs kernel k over n elements into fresh r (nodes) and o (elements); returns them. */
static void run(op_kernel k, const char *name, int n, double *r_out, double *o_out)
{
  int nn = n / 2 + 3, e;
  int *emap = (int *)malloc(sizeof(int) * 2 * (size_t)(n > 0 ? n : 1));
  double *xv = (double *)malloc(sizeof(double) * 2 * (size_t)nn);
  double *qv = (double *)malloc(sizeof(double) * 2 * (size_t)(n > 0 ? n : 1));
  double *r0 = (double *)malloc(sizeof(double) * 2 * (size_t)nn);
  double g = 0.75;
  op_set nodes, elems;
  op_map m;
  op_dat dx, dq, dr, d_o;
  char nm[64];
  CHECK(emap && xv && qv && r0);
  for (e = 0; e < n; e++) {
    /* Neighbouring elements share targets: many lanes of one block increment one node. */
    emap[2 * e] = (int)((7L * e) % nn);
    emap[2 * e + 1] = e % 3 == 0 ? 0 : (int)((e / 4) % nn);
    qv[2 * e] = 1.0 + 0.001 * (e % 97);
    qv[2 * e + 1] = 0.1 * (e % 13) - 0.6;
  }
  for (e = 0; e < nn; e++) {
    xv[2 * e] = 0.3 + 0.017 * (e % 101);
    xv[2 * e + 1] = -0.2 + 0.029 * (e % 89);
    r0[2 * e] = 0.5 * (e % 5);
    r0[2 * e + 1] = -0.25 * (e % 7);
  }
  snprintf(nm, sizeof nm, "%s-nodes-%d", name, n);
  nodes = op_decl_set(nn, nm);
  snprintf(nm, sizeof nm, "%s-elems-%d", name, n);
  elems = op_decl_set(n, nm);
  m = op_decl_map(elems, nodes, 2, n > 0 ? emap : NULL, "emap");
  dx = op_decl_dat(nodes, 2, "double", xv, "x");
  dq = op_decl_dat(elems, 2, "double", n > 0 ? qv : NULL, "q");
  dr = op_decl_dat(nodes, 2, "double", r0, "r");
  d_o = op_decl_dat(elems, 2, "double", NULL, "o");
  CHECK_OK();
  PAR_LOOP(k, name, elems, op_arg_dat(dx, 0, m, 2, "double", OP_READ),
           op_arg_dat(dq, -1, OP_ID, 2, "double", OP_READ), op_arg_dat(dr, 1, m, 2, "double", OP_INC),
           op_arg_dat(d_o, -1, OP_ID, 2, "double", OP_WRITE), op_arg_idx(-1, OP_ID),
           op_arg_gbl(&g, 1, "double", OP_READ));
  CHECK_OK();
  op_fetch_data(dr, r_out);
  if (n > 0) op_fetch_data(d_o, o_out);
  CHECK_OK();
  free(emap);
  free(xv);
  free(qv);
  free(r0);
}

/* The same in plain C, in element order. */
static void reference(int n, double *r, double *o)
{
  int nn = n / 2 + 3, e;
  double g = 0.75;
  for (e = 0; e < nn; e++) {
    r[2 * e] = 0.5 * (e % 5);
    r[2 * e + 1] = -0.25 * (e % 7);
  }
  for (e = 0; e < n; e++) {
    int a = (int)((7L * e) % nn), b = e % 3 == 0 ? 0 : (int)((e / 4) % nn);
    double x[2] = {0.3 + 0.017 * (a % 101), -0.2 + 0.029 * (a % 89)};
    double q[2] = {1.0 + 0.001 * (e % 97), 0.1 * (e % 13) - 0.6};
    mix(x, q, r + 2 * b, o + 2 * e, &e, &g);
  }
}

/* Bit for bit, except on cuda, whose default increments (atomicAdd) land in an order that
 * varies from launch to launch: there to 1e-12 relative. */
static int exact = 1;
static int same_bits(const double *a, const double *b, size_t n)
{
  size_t i;
  if (exact) return memcmp(a, b, n * sizeof(double)) == 0;
  for (i = 0; i < n; i++)
    if (fabs(a[i] - b[i]) > 1e-12 * fmax(1.0, fabs(b[i]))) return 0;
  return 1;
}

int main(int argc, char **argv)
{
  static const int sizes[] = {0, 1, 7, 8, 9, 100003};
  char token[64], *out;
  int s;
  op_kernel kmix, ktwin, kred;

  if (argc < 2) return 2;
  exact = strcmp(argv[1], "cuda") != 0;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  test_init_tokens(argv[0], token, "OP2_SIMD=on", "OP2_SIMD_LEN=8", (const char *)NULL);
  CHECK_OK();
  kmix = op_decl_kernel(src_mix, "mix");
  ktwin = op_decl_kernel(src_twin, "twin");
  for (s = 0; s < COUNT_OF(sizes); s++) {
    int n = sizes[s], nn = n / 2 + 3;
    size_t no = 2 * (size_t)(n > 0 ? n : 1), nr = 2 * (size_t)nn;
    double *r1 = (double *)calloc(nr, sizeof(double)), *o1 = (double *)calloc(no, sizeof(double));
    double *r2 = (double *)calloc(nr, sizeof(double)), *o2 = (double *)calloc(no, sizeof(double));
    double *r3 = (double *)calloc(nr, sizeof(double)), *o3 = (double *)calloc(no, sizeof(double));
    CHECK(r1 && o1 && r2 && o2 && r3 && o3);
    run(kmix, "mix", n, r1, o1);
    run(ktwin, "twin", n, r2, o2);
    if (!same_bits(r1, r2, nr) || !same_bits(o1, o2, 2 * (size_t)n))
      test_fail_(__FILE__, __LINE__, "n=%d: vectorised and scalar results differ", n);
    if (strcmp(argv[1], "threads") != 0) {
      /* seq and check increment in element order, as plain C does. */
      reference(n, r3, o3);
      if (!same_bits(r1, r3, nr) || !same_bits(o1, o3, 2 * (size_t)n))
        test_fail_(__FILE__, __LINE__, "n=%d: vectorised results differ from plain C", n);
    }
    if (n == 9) {
      /* A hand check: element 0 hits node 0 through both map entries. */
      double s0 = sqrt(0.3 * 0.3 + 0.2 * 0.2) / (0.75 + 1.0);
      CHECK_DBL(o1[0], s0 + 0.0);
      CHECK_DBL(o1[1], -0.2 / 7.0);
    }
    free(r1), free(o1), free(r2), free(o2), free(r3), free(o3);
  }

  /* A global reduction keeps the loop scalar; the reason is in op_timing_output. */
  kred = op_decl_kernel("void red(const double *q, double *sum) { *sum += q[0]; }", "red");
  {
    double qv[20], sum = 0.0;
    int e;
    op_set set;
    op_dat dq;
    for (e = 0; e < 20; e++) qv[e] = 0.5 * e;
    set = op_decl_set(10, "red-set");
    dq = op_decl_dat(set, 2, "double", qv, "q");
    PAR_LOOP(kred, "red", set, op_arg_dat(dq, -1, OP_ID, 2, "double", OP_READ),
             op_arg_gbl(&sum, 1, "double", OP_INC));
    CHECK_OK();
    CHECK_DBL(sum, 0.5 * (0 + 2 + 4 + 6 + 8 + 10 + 12 + 14 + 16 + 18));
  }

  out = test_stdout_of(op_timing_output);
  if (strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0) {
    /* Device backends run their own code: no host wrapper lines. */
    CHECK(strstr(out, "simd:") == NULL);
  } else if (!strstr(out, "  simd: mix: simd (OP2_SIMD=on)\n") ||
      !strstr(out, "  simd: twin: scalar (not vectorised: parameter 'x' (kernel line 3) is used other than as x[i] or *x (passed on, compared or in pointer arithmetic))\n") ||
      !strstr(out, "  simd: red: scalar (not vectorised: arg 1 is a global reduction"))
    test_fail_(__FILE__, __LINE__, "op_timing_output lacks the wrapper lines:\n%s", out);
  free(out);
  op_exit();
  return 0;
}
