/* Issue 21, point 6: a direct OP_INC argument belongs to one element, and OP2's backends pass
 * the element's real value, so a kernel that reads it (OP2-Common's jac1/jac2 `update` does:
 * `*u += ...; *u_sum += *u * *u;`) gives the same results on every backend. The devices used
 * to stage it from zero. Here: a jac-style update (double, dim 1, with a WRITE output and a
 * global sum of the incremented value), an int dim-2 increment that reads its first component,
 * a direct INC beside an indirect INC (coloured / atomic launches on devices), and an optional
 * direct INC; every value is exact, so every backend must match seq bit for bit. The same again
 * with OP_AUTO_SOA=1 (structure-of-arrays device layout). */
#include "test.h"

#define N 1000
#define E (N - 1)

static const char *src_upd = "void upd(const double *r, double *u, double *usq, double *s)\n"
                             "{\n"
                             "  *u += 0.5 * *r;\n"
                             "  *usq = *u * *u;\n"
                             "  *s += *u;\n"
                             "}\n";

static const char *src_cnt = "void cnt(int *c) { c[0] += 1; c[1] += c[0]; }\n";

/* e: direct INC on edges, read back; n: indirect INC on the edge's two nodes. */
static const char *src_mix = "void mix(const double *w, double *e, double *n0, double *n1)\n"
                             "{\n"
                             "  e[0] += *w;\n"
                             "  *n0 += e[0];\n"
                             "  *n1 += 2.0 * e[0];\n"
                             "}\n";

static const char *src_opt = "void opt(double *a) { if (a) { a[0] += a[0]; } }\n";

static void run(const char *backend, const char *soa)
{
  static double rv[N], uv[N], wv[E], ev[E], nv[N], av[N];
  static int cv[2 * N], e2n[2 * E];
  char token[64];
  double s = 0, want_s = 0;
  int i;
  for (i = 0; i < N; i++) {
    rv[i] = (double)(i % 7);
    uv[i] = 0.25 * i;
    cv[2 * i] = i;
    cv[2 * i + 1] = 3;
    nv[i] = 1.0;
    av[i] = 0.5 * i;
  }
  for (i = 0; i < E; i++) {
    wv[i] = (double)(i % 5);
    ev[i] = 0.5 * (i % 3);
    e2n[2 * i] = i;
    e2n[2 * i + 1] = i + 1;
  }
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens("t041", token, soa, (const char *)NULL);
  {
    op_set nodes = op_decl_set(N, "nodes"), edges = op_decl_set(E, "edges");
    op_map pe = op_decl_map(edges, nodes, 2, e2n, "pe");
    op_dat r = op_decl_dat(nodes, 1, "double", rv, "r");
    op_dat u = op_decl_dat(nodes, 1, "double", uv, "u");
    op_dat q = op_decl_dat(nodes, 1, "double", NULL, "usq");
    op_dat c = op_decl_dat(nodes, 2, "int", cv, "c");
    op_dat w = op_decl_dat(edges, 1, "double", wv, "w");
    op_dat e = op_decl_dat(edges, 1, "double", ev, "e");
    op_dat n = op_decl_dat(nodes, 1, "double", nv, "n");
    op_dat a = op_decl_dat(nodes, 1, "double", av, "a");
    op_kernel kupd = op_decl_kernel(src_upd, "upd");
    op_kernel kcnt = op_decl_kernel(src_cnt, "cnt");
    op_kernel kmix = op_decl_kernel(src_mix, "mix");
    op_kernel kopt = op_decl_kernel(src_opt, "opt");
    static double got[N], got2[N];
    static int gotc[2 * N];

    PAR_LOOP(kupd, "update", nodes, op_arg_dat(r, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(u, -1, OP_ID, 1, "double", OP_INC), op_arg_dat(q, -1, OP_ID, 1, "double", OP_WRITE),
             op_arg_gbl(&s, 1, "double", OP_INC));
    CHECK_OK();
    op_fetch_data(u, got);
    op_fetch_data(q, got2);
    for (i = 0; i < N; i++) {
      double want = 0.25 * i + 0.5 * (i % 7);
      CHECK_DBL(got[i], want);
      CHECK_DBL(got2[i], want * want);
      want_s += want;
    }
    CHECK_DBL(s, want_s);

    PAR_LOOP(kcnt, "count", nodes, op_arg_dat(c, -1, OP_ID, 2, "int", OP_INC));
    CHECK_OK();
    op_fetch_data(c, gotc);
    for (i = 0; i < N; i++) {
      CHECK_INT(gotc[2 * i], i + 1);
      CHECK_INT(gotc[2 * i + 1], 3 + i + 1);
    }

    PAR_LOOP(kmix, "mix", edges, op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(e, -1, OP_ID, 1, "double", OP_INC), op_arg_dat(n, 0, pe, 1, "double", OP_INC),
             op_arg_dat(n, 1, pe, 1, "double", OP_INC));
    CHECK_OK();
    op_fetch_data(e, got);
    for (i = 0; i < E; i++) CHECK_DBL(got[i], 0.5 * (i % 3) + (i % 5));
    op_fetch_data(n, got);
    for (i = 0; i < N; i++) {
      double want = 1.0;
      if (i < E) want += 0.5 * (i % 3) + (i % 5);
      if (i > 0) want += 2.0 * (0.5 * ((i - 1) % 3) + ((i - 1) % 5));
      CHECK_DBL(got[i], want);
    }

    PAR_LOOP(kopt, "optional", nodes, op_opt_arg_dat(1, a, -1, OP_ID, 1, "double", OP_INC));
    CHECK_OK();
    PAR_LOOP(kopt, "optional-off", nodes, op_opt_arg_dat(0, a, -1, OP_ID, 1, "double", OP_INC));
    CHECK_OK();
    op_fetch_data(a, got);
    for (i = 0; i < N; i++) CHECK_DBL(got[i], 1.0 * i);
  }
  op_exit();
}

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  run(argv[1], "OP_AUTO_SOA=0");
  run(argv[1], "OP_AUTO_SOA=1");
  return 0;
}
