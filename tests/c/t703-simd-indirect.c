/* The vectorised wrapper's vector path for indirect dats (OP2_SIMD=on): rows gathered as vectors
 * of 4 components and transposed, increments transposed back and added as vectors. Kernels
 * res_calc-like (two indirect READs, two indirect INCs of one dat through the two map columns)
 * over double dims 1, 2, 3, 4, 6 and 9 (remainders only, whole groups, both), float dims 4 and
 * 5, int dims 3 and 8, long long dim 4, on blocks of 4 and 8 lanes, must give bit for bit what a
 * plain C loop gives in element order (seq, check; threads and devices: what the same kernel
 * with the vector path switched off gives, and the plain loop within 1e-12 for floating types;
 * cuda within 1e-12 of both), on set sizes 0, 3, 8, 13 and 2001. Consecutive elements share
 * nodes, so lanes of one group increment one node through both columns, and every 17th element
 * has both columns on one node (its own two increments land in the kernel's order, which two
 * shapes reverse: r2 before r1, component by component). The generated
 * source must hold the vector path (OP2_DUMP_SOURCE), unless the loops come from a pack. And a
 * kernel in bres_calc's form (a component incremented in both arms of an if) is vectorised and
 * gives the plain loop's values, as do one with optional dats, present and absent, and one with
 * vector arguments (T**) read and incremented. */
#include "test.h"

#include <sys/stat.h>

typedef struct {
  const char *type;
  int dim;
  int rev; /* the kernel increments r2 before r1 */
} shape;

static const shape shapes[] = {{"double", 1, 0}, {"double", 2, 0}, {"double", 3, 0}, {"double", 4, 0},
                               {"double", 6, 0}, {"double", 9, 0}, {"float", 4, 0},  {"float", 5, 0},
                               {"int", 3, 0},    {"int", 8, 0},    {"long long", 4, 0}, {"double", 4, 1},
                               {"double", 5, 1}};
static const int sizes[] = {0, 3, 8, 13, 2001};

static int nodes_of(int n) { return n / 2 + 3; }
static int col0(int e, int nn) { return (e / 2) % nn; }
static int col1(int e, int nn)
{
  if (e % 17 == 5) return col0(e, nn);
  return (e / 2 + 1 + (e % 3 == 0)) % nn;
}
static double start_a(int node, int k) { return (double)((node * 7 + k * 3) % 11 - 5); }
static double start_b(int node, int k) { return (double)((node * 5 + k) % 13 - 6); }
static double start_r(int node, int k) { return (double)(node % 5 - 2 + k); }

/* The kernel's source: name, element type, dim; `novec` switches the vector path off; `rev`
 * puts each component's r2 increment before its r1 one. */
static char *kernel_source(const char *name, const char *t, int dim, int novec, int rev)
{
  size_t cap = 4096;
  char *s = (char *)malloc(cap);
  int k, at;
  CHECK(s != NULL);
  at = snprintf(s, cap, "%svoid %s(const %s *a, const %s *b, %s *r1, %s *r2) {\n",
                novec ? "#define OP2_NO_VEC4 1\n" : "", name, t, t, t, t);
  for (k = 0; k < dim; k++) {
    char one[160], two[160];
    snprintf(one, sizeof one, "  r1[%d] += a[%d] * (%s)3 - b[%d] / (%s)2;\n", k, k, t, k, t);
    snprintf(two, sizeof two, "  r2[%d] -= a[%d] / (%s)3 + b[%d] * (%s)5;\n", k, k, t, k, t);
    at += snprintf(s + at, cap - (size_t)at, "%s%s", rev ? two : one, rev ? one : two);
  }
  snprintf(s + at, cap - (size_t)at, "}\n");
  return s;
}

/* The plain loop, in element order, for each type (values in double after it). */
#define REFERENCE(T)                                                                             \
  static void reference_##T(int n, int dim, int rev, double *out)                               \
  {                                                                                              \
    int nn = nodes_of(n), e, k;                                                                  \
    T *a = (T *)malloc(sizeof(T) * (size_t)(nn * dim)), *b = (T *)malloc(sizeof(T) * (size_t)(nn * dim)); \
    T *r = (T *)malloc(sizeof(T) * (size_t)(nn * dim));                                          \
    CHECK(a && b && r);                                                                          \
    for (e = 0; e < nn * dim; e++) {                                                             \
      a[e] = (T)start_a(e / dim, e % dim);                                                       \
      b[e] = (T)start_b(e / dim, e % dim);                                                       \
      r[e] = (T)start_r(e / dim, e % dim);                                                       \
    }                                                                                            \
    for (e = 0; e < n; e++) {                                                                    \
      int p = col0(e, nn), q = col1(e, nn);                                                      \
      for (k = 0; k < dim; k++) {                                                                \
        if (!rev) r[p * dim + k] += a[p * dim + k] * (T)3 - b[q * dim + k] / (T)2;               \
        r[q * dim + k] -= a[p * dim + k] / (T)3 + b[q * dim + k] * (T)5;                          \
        if (rev) r[p * dim + k] += a[p * dim + k] * (T)3 - b[q * dim + k] / (T)2;                \
      }                                                                                          \
    }                                                                                            \
    for (e = 0; e < nn * dim; e++) out[e] = (double)r[e];                                        \
    free(a), free(b), free(r);                                                                   \
  }
typedef long long llong;
REFERENCE(double)
REFERENCE(float)
REFERENCE(int)
REFERENCE(llong)

static size_t size_of(const char *t)
{
  if (strcmp(t, "double") == 0 || strcmp(t, "long long") == 0) return 8;
  return 4;
}
static void store(const char *t, void *p, size_t i, double v)
{
  if (strcmp(t, "double") == 0) ((double *)p)[i] = v;
  else if (strcmp(t, "float") == 0) ((float *)p)[i] = (float)v;
  else if (strcmp(t, "int") == 0) ((int *)p)[i] = (int)v;
  else ((long long *)p)[i] = (long long)v;
}
static double load(const char *t, const void *p, size_t i)
{
  if (strcmp(t, "double") == 0) return ((const double *)p)[i];
  if (strcmp(t, "float") == 0) return ((const float *)p)[i];
  if (strcmp(t, "int") == 0) return ((const int *)p)[i];
  return (double)((const long long *)p)[i];
}

/* Runs kernel k (of shape sh) over n elements; r's values, as doubles, into out. */
static void run(op_kernel k, const char *name, const shape *sh, int n, double *out)
{
  int nn = nodes_of(n), e, dim = sh->dim;
  size_t sz = size_of(sh->type), cells = (size_t)nn * (size_t)dim;
  int *emap = (int *)malloc(sizeof(int) * 2 * (size_t)(n > 0 ? n : 1));
  void *av = malloc(sz * cells), *bv = malloc(sz * cells), *rv = malloc(sz * cells);
  op_set nodes, elems;
  op_map m;
  op_dat da, db, dr;
  char nm[96];
  CHECK(emap && av && bv && rv);
  for (e = 0; e < n; e++) {
    emap[2 * e] = col0(e, nn);
    emap[2 * e + 1] = col1(e, nn);
  }
  for (e = 0; e < (int)cells; e++) {
    store(sh->type, av, (size_t)e, start_a(e / dim, e % dim));
    store(sh->type, bv, (size_t)e, start_b(e / dim, e % dim));
    store(sh->type, rv, (size_t)e, start_r(e / dim, e % dim));
  }
  snprintf(nm, sizeof nm, "%s-nodes-%d", name, n);
  nodes = op_decl_set(nn, nm);
  snprintf(nm, sizeof nm, "%s-elems-%d", name, n);
  elems = op_decl_set(n, nm);
  m = op_decl_map(elems, nodes, 2, n > 0 ? emap : NULL, "m");
  da = op_decl_dat(nodes, dim, sh->type, av, "a");
  db = op_decl_dat(nodes, dim, sh->type, bv, "b");
  dr = op_decl_dat(nodes, dim, sh->type, rv, "r");
  CHECK_OK();
  PAR_LOOP(k, name, elems, op_arg_dat(da, 0, m, dim, sh->type, OP_READ), op_arg_dat(db, 1, m, dim, sh->type, OP_READ),
           op_arg_dat(dr, 0, m, dim, sh->type, OP_INC), op_arg_dat(dr, 1, m, dim, sh->type, OP_INC));
  CHECK_OK();
  op_fetch_data(dr, rv);
  CHECK_OK();
  for (e = 0; e < (int)cells; e++) out[e] = load(sh->type, rv, (size_t)e);
  free(emap), free(av), free(bv), free(rv);
}

static int close_to(const double *a, const double *b, size_t n, double tol)
{
  size_t i;
  for (i = 0; i < n; i++) {
    if (tol == 0.0 ? memcmp(&a[i], &b[i], sizeof(double)) != 0 : fabs(a[i] - b[i]) > tol * fmax(1.0, fabs(b[i])))
      return 0;
  }
  return 1;
}

int main(int argc, char **argv)
{
  static const int lanes[] = {4, 8};
  char token[64], lanetok[32], dump[] = "/tmp/op2-t703-XXXXXX";
  int exact_order, l;

  if (argc < 2) return 2;
  /* Each run of the test declares its own kernels, so it runs once per lane count. */
  l = argc > 2 ? atoi(argv[2]) : 0;
  if (l == 0) {
    int i;
    for (i = 0; i < COUNT_OF(lanes); i++) {
      char cmd[4096];
      snprintf(cmd, sizeof cmd, "'%s' '%s' %d", argv[0], argv[1], lanes[i]);
      if (system(cmd) != 0) test_fail_(__FILE__, __LINE__, "with %d lanes: failed (above)", lanes[i]);
    }
    return 0;
  }
  CHECK(mkdtemp(dump) != NULL);
  setenv("OP2_DUMP_SOURCE", dump, 1);
  /* seq and check increment in element order, as the plain loop does. */
  exact_order = strcmp(argv[1], "seq") == 0 || strcmp(argv[1], "check") == 0;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  snprintf(lanetok, sizeof lanetok, "OP2_SIMD_LEN=%d", l);
  test_init_tokens(argv[0], token, "OP2_SIMD=on", lanetok, (const char *)NULL);
  CHECK_OK();
  {
    int s, z;
    for (s = 0; s < COUNT_OF(shapes); s++) {
      const shape *sh = &shapes[s];
      char name[64], name_nv[64], *src, *src_nv;
      op_kernel kv, kn;
      int floating = strcmp(sh->type, "double") == 0 || strcmp(sh->type, "float") == 0;
      snprintf(name, sizeof name, "inc_%c%d%s", sh->type[0], sh->dim, sh->rev ? "_rev" : "");
      snprintf(name_nv, sizeof name_nv, "inc_%c%d%s_novec", sh->type[0], sh->dim, sh->rev ? "_rev" : "");
      src = kernel_source(name, sh->type, sh->dim, 0, sh->rev);
      src_nv = kernel_source(name_nv, sh->type, sh->dim, 1, sh->rev);
      kv = op_decl_kernel(src, name);
      kn = op_decl_kernel(src_nv, name_nv);
      CHECK_OK();
      for (z = 0; z < COUNT_OF(sizes); z++) {
        int n = sizes[z];
        size_t cells = (size_t)nodes_of(n) * (size_t)sh->dim;
        double *v = (double *)calloc(cells, sizeof(double)), *nv = (double *)calloc(cells, sizeof(double));
        double *ref = (double *)calloc(cells, sizeof(double));
        double order_tol = floating && !exact_order ? 1e-12 : 0.0;
        CHECK(v && nv && ref);
        run(kv, name, sh, n, v);
        run(kn, name_nv, sh, n, nv);
        if (strcmp(sh->type, "double") == 0) reference_double(n, sh->dim, sh->rev, ref);
        else if (strcmp(sh->type, "float") == 0) reference_float(n, sh->dim, sh->rev, ref);
        else if (strcmp(sh->type, "int") == 0) reference_int(n, sh->dim, sh->rev, ref);
        else reference_llong(n, sh->dim, sh->rev, ref);
        /* float sums in another order differ from the plain loop by float roundings. */
        if (strcmp(sh->type, "float") == 0 && !exact_order) order_tol = 1e-5;
        if (!close_to(v, nv, cells, strcmp(argv[1], "cuda") == 0 ? order_tol : 0.0))
          test_fail_(__FILE__, __LINE__, "%s, %d lanes, n=%d: the vector path differs from the lane loops", name, l, n);
        if (!close_to(v, ref, cells, order_tol))
          test_fail_(__FILE__, __LINE__, "%s, %d lanes, n=%d: results differ from the plain loop", name, l, n);
        if (n == 13 && sh->dim == 1 && strcmp(sh->type, "int") != 0 && exact_order) {
          /* By hand: node 0 is column 0 of elements 0 and 1 (their column 1: nodes 2 and 1) and
           * column 1 of no element; a[0] = -5, b[2] = 4, b[1] = -1, r[0] = -2. */
          double want = -2.0 + (-5.0 * 3 - 4.0 / 2) + (-5.0 * 3 - (-1.0) / 2);
          CHECK_DBL(v[0], want);
        }
        free(v), free(nv), free(ref);
      }
      free(src), free(src_nv);
    }
  }
  {
    /* bres_calc's form: one component incremented in both arms of an if (once per element). */
    static const char *src_br =
        "void branchy(const double *a, const double *b, double *r, const int *flag) {\n"
        "  if (*flag == 1) {\n    r[1] += a[1] * 2.0;\n    r[2] -= b[0];\n  } else {\n"
        "    r[0] += a[0];\n    r[1] += a[1] - b[1] / 3.0;\n    r[2] += 1.5;\n    r[3] -= b[1] * 3.0;\n  }\n}\n";
    op_kernel kb = op_decl_kernel(src_br, "branchy");
    int n = 2001, nn = nodes_of(n), e, k;
    int *emap = (int *)malloc(sizeof(int) * 2 * (size_t)n), *flag = (int *)malloc(sizeof(int) * (size_t)n);
    double *a = (double *)malloc(sizeof(double) * 2 * (size_t)nn), *b = (double *)malloc(sizeof(double) * 2 * (size_t)nn);
    double *r = (double *)malloc(sizeof(double) * 4 * (size_t)nn), *ref = (double *)malloc(sizeof(double) * 4 * (size_t)nn);
    op_set nodes, elems;
    op_map m;
    op_dat da, db, dr, df;
    char *out;
    CHECK(emap && flag && a && b && r && ref);
    for (e = 0; e < n; e++) {
      emap[2 * e] = col0(e, nn);
      emap[2 * e + 1] = col1(e, nn);
      flag[e] = e % 3 == 0;
    }
    for (e = 0; e < nn; e++) {
      for (k = 0; k < 2; k++) a[2 * e + k] = start_a(e, k) * 0.37, b[2 * e + k] = start_b(e, k) * 1.3;
      for (k = 0; k < 4; k++) r[4 * e + k] = ref[4 * e + k] = start_r(e, k) * 0.1;
    }
    for (e = 0; e < n; e++) {
      const double *pa = a + 2 * emap[2 * e], *pb = b + 2 * emap[2 * e + 1];
      double *pr = ref + 4 * emap[2 * e];
      if (flag[e] == 1) {
        pr[1] += pa[1] * 2.0;
        pr[2] -= pb[0];
      } else {
        pr[0] += pa[0];
        pr[1] += pa[1] - pb[1] / 3.0;
        pr[2] += 1.5;
        pr[3] -= pb[1] * 3.0;
      }
    }
    nodes = op_decl_set(nn, "br-nodes");
    elems = op_decl_set(n, "br-elems");
    m = op_decl_map(elems, nodes, 2, emap, "br-m");
    da = op_decl_dat(nodes, 2, "double", a, "a");
    db = op_decl_dat(nodes, 2, "double", b, "b");
    dr = op_decl_dat(nodes, 4, "double", r, "r");
    df = op_decl_dat(elems, 1, "int", flag, "flag");
    PAR_LOOP(kb, "branchy", elems, op_arg_dat(da, 0, m, 2, "double", OP_READ), op_arg_dat(db, 1, m, 2, "double", OP_READ),
             op_arg_dat(dr, 0, m, 4, "double", OP_INC), op_arg_dat(df, -1, OP_ID, 1, "int", OP_READ));
    CHECK_OK();
    op_fetch_data(dr, r);
    CHECK_OK();
    if (!close_to(r, ref, 4 * (size_t)nn, exact_order ? 0.0 : 1e-12))
      test_fail_(__FILE__, __LINE__, "branchy, %d lanes: results differ from the plain loop", l);
    out = test_stdout_of(op_timing_output);
    if (strcmp(argv[1], "opencl") != 0 && strcmp(argv[1], "cuda") != 0 && !strstr(out, "  simd: branchy: simd (OP2_SIMD=on)\n"))
      test_fail_(__FILE__, __LINE__, "branchy is not vectorised:\n%s", out);
    free(out), free(emap), free(flag), free(a), free(b), free(r), free(ref);
  }
  {
    /* Optional dats (op_opt_arg_dat): present, they are gathered and incremented as any; absent
     * (opt = 0, the kernel told by a flag), neither read nor written. */
    static const char *src_opt = "void optk(const int *flag, const double *a, const double *b, double *r, double *s) {\n"
                                 "  r[0] += a[0] * 2.0;\n  r[1] -= a[1];\n  r[2] += a[2] + a[3];\n  r[3] += 1.0;\n"
                                 "  if (*flag) {\n    s[0] += b[1] - b[0] / 4.0;\n    s[1] -= b[2] * b[3];\n  }\n}\n";
    op_kernel ko = op_decl_kernel(src_opt, "optk");
    int n = 1001, nn = nodes_of(n), e, k, opt;
    int *emap = (int *)malloc(sizeof(int) * 2 * (size_t)n);
    double *a = (double *)malloc(sizeof(double) * 4 * (size_t)nn), *b = (double *)malloc(sizeof(double) * 4 * (size_t)nn);
    double *r = (double *)malloc(sizeof(double) * 4 * (size_t)nn), *sv = (double *)malloc(sizeof(double) * 2 * (size_t)nn);
    double *rr = (double *)malloc(sizeof(double) * 4 * (size_t)nn), *rs = (double *)malloc(sizeof(double) * 2 * (size_t)nn);
    op_set nodes, elems;
    op_map m;
    op_dat da, db, dr, ds;
    char *out;
    CHECK(emap && a && b && r && sv && rr && rs);
    for (e = 0; e < n; e++) emap[2 * e] = col0(e, nn), emap[2 * e + 1] = col1(e, nn);
    for (e = 0; e < 4 * nn; e++) a[e] = start_a(e / 4, e % 4) * 0.7, b[e] = start_b(e / 4, e % 4) * 1.1, r[e] = 0.25 * (e % 9);
    for (e = 0; e < 2 * nn; e++) sv[e] = -0.5 * (e % 5);
    nodes = op_decl_set(nn, "opt-nodes");
    elems = op_decl_set(n, "opt-elems");
    m = op_decl_map(elems, nodes, 2, emap, "opt-m");
    da = op_decl_dat(nodes, 4, "double", a, "a");
    db = op_decl_dat(nodes, 4, "double", b, "b");
    dr = op_decl_dat(nodes, 4, "double", r, "r");
    ds = op_decl_dat(nodes, 2, "double", sv, "s");
    memcpy(rr, r, sizeof(double) * 4 * (size_t)nn);
    memcpy(rs, sv, sizeof(double) * 2 * (size_t)nn);
    for (opt = 1; opt >= 0; opt--) {
      for (e = 0; e < n; e++) {
        const double *pa = a + 4 * emap[2 * e], *pb = b + 4 * emap[2 * e + 1];
        double *pr = rr + 4 * emap[2 * e], *ps = rs + 2 * emap[2 * e + 1];
        pr[0] += pa[0] * 2.0;
        pr[1] -= pa[1];
        pr[2] += pa[2] + pa[3];
        pr[3] += 1.0;
        if (opt) {
          ps[0] += pb[1] - pb[0] / 4.0;
          ps[1] -= pb[2] * pb[3];
        }
      }
      PAR_LOOP(ko, "optk", elems, op_arg_gbl(&opt, 1, "int", OP_READ), op_arg_dat(da, 0, m, 4, "double", OP_READ),
               op_opt_arg_dat(opt, db, 1, m, 4, "double", OP_READ), op_arg_dat(dr, 0, m, 4, "double", OP_INC),
               op_opt_arg_dat(opt, ds, 1, m, 2, "double", OP_INC));
      CHECK_OK();
      op_fetch_data(dr, r);
      op_fetch_data(ds, sv);
      CHECK_OK();
      for (k = 0; k < 4 * nn; k++)
        if (!close_to(&r[k], &rr[k], 1, exact_order ? 0.0 : 1e-12))
          test_fail_(__FILE__, __LINE__, "optk, opt=%d, %d lanes: r[%d] = %.17g, want %.17g", opt, l, k, r[k], rr[k]);
      if (!close_to(sv, rs, 2 * (size_t)nn, exact_order ? 0.0 : 1e-12))
        test_fail_(__FILE__, __LINE__, "optk, opt=%d, %d lanes: s differs from the plain loop", opt, l);
    }
    out = test_stdout_of(op_timing_output);
    if (strcmp(argv[1], "opencl") != 0 && strcmp(argv[1], "cuda") != 0 && !strstr(out, "  simd: optk: simd (OP2_SIMD=on)\n"))
      test_fail_(__FILE__, __LINE__, "optk is not vectorised:\n%s", out);
    free(out), free(emap), free(a), free(b), free(r), free(sv), free(rr), free(rs);
  }
  {
    /* Vector arguments (T**, all of a cell's nodes): coordinates read, residuals incremented
     * column after column, one cell in 13 with a node twice (its columns 0 and 2 share a row). */
    static const char *src_v =
        "void vk(const double **x, const double *q, double **r) {\n"
        "  double a = x[0][0] - x[2][0], b = x[1][1] - x[3][1];\n"
        "  r[0][0] += a * q[0]; r[0][1] += b; r[0][2] -= q[1]; r[0][3] += a * b;\n"
        "  r[1][0] -= a; r[1][1] += q[2] * b; r[1][2] += 0.5; r[1][3] -= q[3];\n"
        "  r[2][0] += b * q[0]; r[2][1] -= a * q[1]; r[2][2] += a; r[2][3] += b;\n"
        "  r[3][0] += 1.0; r[3][1] += a + b; r[3][2] -= b * 0.25; r[3][3] += q[0] * q[1];\n}\n";
    op_kernel kv4 = op_decl_kernel(src_v, "vk");
    int n = 1001, nn = n / 2 + 6, e, k;
    int *cmap = (int *)malloc(sizeof(int) * 4 * (size_t)n);
    double *x = (double *)malloc(sizeof(double) * 2 * (size_t)nn), *q = (double *)malloc(sizeof(double) * 4 * (size_t)n);
    double *r = (double *)malloc(sizeof(double) * 4 * (size_t)nn), *rr = (double *)malloc(sizeof(double) * 4 * (size_t)nn);
    op_set nodes, cells;
    op_map m;
    op_dat dx, dq, dr;
    char *out;
    CHECK(cmap && x && q && r && rr);
    for (e = 0; e < n; e++) {
      for (k = 0; k < 4; k++) cmap[4 * e + k] = (e / 2 + k) % nn;
      if (e % 13 == 4) cmap[4 * e + 2] = cmap[4 * e];
      for (k = 0; k < 4; k++) q[4 * e + k] = 0.01 * ((e * 7 + k * 3) % 17) - 0.05;
    }
    for (e = 0; e < nn; e++) {
      x[2 * e] = start_a(e, 0) * 0.3, x[2 * e + 1] = start_b(e, 1) * 0.2;
      for (k = 0; k < 4; k++) r[4 * e + k] = rr[4 * e + k] = start_r(e, k) * 0.5;
    }
    for (e = 0; e < n; e++) {
      const double *xc[4], *qe = q + 4 * e;
      double *rc[4], a, b;
      for (k = 0; k < 4; k++) xc[k] = x + 2 * cmap[4 * e + k], rc[k] = rr + 4 * cmap[4 * e + k];
      a = xc[0][0] - xc[2][0], b = xc[1][1] - xc[3][1];
      rc[0][0] += a * qe[0]; rc[0][1] += b; rc[0][2] -= qe[1]; rc[0][3] += a * b;
      rc[1][0] -= a; rc[1][1] += qe[2] * b; rc[1][2] += 0.5; rc[1][3] -= qe[3];
      rc[2][0] += b * qe[0]; rc[2][1] -= a * qe[1]; rc[2][2] += a; rc[2][3] += b;
      rc[3][0] += 1.0; rc[3][1] += a + b; rc[3][2] -= b * 0.25; rc[3][3] += qe[0] * qe[1];
    }
    nodes = op_decl_set(nn, "v-nodes");
    cells = op_decl_set(n, "v-cells");
    m = op_decl_map(cells, nodes, 4, cmap, "v-m");
    dx = op_decl_dat(nodes, 2, "double", x, "x");
    dq = op_decl_dat(cells, 4, "double", q, "q");
    dr = op_decl_dat(nodes, 4, "double", r, "r");
    PAR_LOOP(kv4, "vk", cells, op_arg_dat(dx, -4, m, 2, "double", OP_READ), op_arg_dat(dq, -1, OP_ID, 4, "double", OP_READ),
             op_arg_dat(dr, -4, m, 4, "double", OP_INC));
    CHECK_OK();
    op_fetch_data(dr, r);
    CHECK_OK();
    if (!close_to(r, rr, 4 * (size_t)nn, exact_order ? 0.0 : 1e-12))
      test_fail_(__FILE__, __LINE__, "vk, %d lanes: results differ from the plain loop", l);
    out = test_stdout_of(op_timing_output);
    if (strcmp(argv[1], "opencl") != 0 && strcmp(argv[1], "cuda") != 0 && !strstr(out, "  simd: vk: simd (OP2_SIMD=on)\n"))
      test_fail_(__FILE__, __LINE__, "vk is not vectorised:\n%s", out);
    free(out), free(cmap), free(x), free(q), free(r), free(rr);
  }
  if (strcmp(argv[1], "opencl") != 0 && strcmp(argv[1], "cuda") != 0 && getenv("OP2_LOOP_PACK") == NULL) {
    /* The host library holds the vector path (and the switched-off kernel its lane loops);
     * loops taken from a pack (test-pack) are not generated, so nothing is dumped. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "grep -l 'OP2_TRANSPOSE4(op2_w0_0' '%s'/inc_d4-*.c >/dev/null", dump);
    if (system(cmd) != 0) test_fail_(__FILE__, __LINE__, "no vector gather in the generated inc_d4 (%s)", dump);
    snprintf(cmd, sizeof cmd, "grep -l '#define OP2_NO_VEC4 1' '%s'/inc_d4_novec-*.c >/dev/null", dump);
    if (system(cmd) != 0) test_fail_(__FILE__, __LINE__, "inc_d4_novec's source lacks its switch (%s)", dump);
  }
  op_exit();
  {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dump);
    if (system(cmd) != 0) return 1;
  }
  return 0;
}
