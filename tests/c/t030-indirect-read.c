/* Indirect READ: gathers through maps of dim 2 and 3, idx 0/1/2, with hand-computed results. */
#include "test.h"

static const char *src_diff =
    "void diff(const double *x0, const double *x1, const int *t0, double *d)\n"
    "{\n"
    "  d[0] = x1[0] - x0[0];\n"
    "  d[1] = x1[1] - x0[1];\n"
    "  d[2] = (double)*t0;\n"
    "}\n";

static const char *src_third =
    "void third(const int *t, int *out) { *out = 10 * *t; }\n";

int main(int argc, char **argv)
{
  /* 5 nodes on a line at x = 0, 1, 4, 9, 16 (y = -x); 6 edges, some reversed, one repeated. */
  int edge2node[12] = {0, 1, 1, 2, 3, 2, 4, 3, 0, 4, 2, 2};
  double xv[10] = {0, 0, 1, -1, 4, -4, 9, -9, 16, -16};
  int tag[5] = {100, 101, 102, 103, 104};
  /* 3 triangles -> nodes. */
  int tri2node[9] = {0, 1, 2, 2, 3, 4, 4, 0, 3};
  double want[6][3] = {{1, -1, 100}, {3, -3, 101}, {-5, 5, 103},
                       {-7, 7, 104}, {16, -16, 100}, {0, 0, 102}};
  double d[18];
  int out[3], i, j;
  op_set nodes, edges, tris;
  op_map pedge, ptri;
  op_dat x, t, dd, o;
  op_kernel kdiff, kthird;

  test_init(argc, argv);
  nodes = op_decl_set(5, "nodes");
  edges = op_decl_set(6, "edges");
  tris = op_decl_set(3, "tris");
  pedge = op_decl_map(edges, nodes, 2, edge2node, "pedge");
  ptri = op_decl_map(tris, nodes, 3, tri2node, "ptri");
  x = op_decl_dat(nodes, 2, "double", xv, "x");
  t = op_decl_dat(nodes, 1, "int", tag, "tag");
  dd = op_decl_dat(edges, 3, "double", NULL, "d");
  o = op_decl_dat(tris, 1, "int", NULL, "o");
  kdiff = op_decl_kernel(src_diff, "diff");
  kthird = op_decl_kernel(src_third, "third");

  PAR_LOOP(kdiff, "diff", edges, op_arg_dat(x, 0, pedge, 2, "double", OP_READ),
           op_arg_dat(x, 1, pedge, 2, "double", OP_READ),
           op_arg_dat(t, 0, pedge, 1, "int", OP_READ),
           op_arg_dat(dd, -1, OP_ID, 3, "double", OP_WRITE));
  CHECK_OK();
  op_fetch_data(dd, d);
  for (i = 0; i < 6; i++)
    for (j = 0; j < 3; j++) CHECK_DBL(d[3 * i + j], want[i][j]);

  /* idx 2 of a dim-3 map, and idx 0 / 1 of the same map in separate loops. */
  PAR_LOOP(kthird, "third2", tris, op_arg_dat(t, 2, ptri, 1, "int", OP_READ),
           op_arg_dat(o, -1, OP_ID, 1, "int", OP_WRITE));
  op_fetch_data(o, out);
  CHECK_INT(out[0], 1020);
  CHECK_INT(out[1], 1040);
  CHECK_INT(out[2], 1030);
  PAR_LOOP(kthird, "third0", tris, op_arg_dat(t, 0, ptri, 1, "int", OP_READ),
           op_arg_dat(o, -1, OP_ID, 1, "int", OP_WRITE));
  op_fetch_data(o, out);
  CHECK_INT(out[0], 1000);
  CHECK_INT(out[1], 1020);
  CHECK_INT(out[2], 1040);
  PAR_LOOP(kthird, "third1", tris, op_arg_dat(t, 1, ptri, 1, "int", OP_READ),
           op_arg_dat(o, -1, OP_ID, 1, "int", OP_WRITE));
  op_fetch_data(o, out);
  CHECK_INT(out[0], 1010);
  CHECK_INT(out[1], 1030);
  CHECK_INT(out[2], 1000);

  /* The node data were only read. */
  {
    double xo[10];
    op_fetch_data(x, xo);
    for (i = 0; i < 10; i++) CHECK_DBL(xo[i], xv[i]);
  }

  /* A larger gather, checked against a plain C loop: 2000 edges over 300 nodes. */
  {
    enum { NN = 300, NE = 2000 };
    static int emap[2 * NE];
    static double xs[NN], res[NE];
    op_set n2 = op_decl_set(NN, "nodes2"), e2 = op_decl_set(NE, "edges2");
    op_map m2;
    op_dat x2, r2;
    op_kernel ks = op_decl_kernel(
        "void sum2(const double *a, const double *b, double *r) { *r = *a + 3.0 * *b; }\n", "sum2");
    unsigned seed = 12345u;
    for (i = 0; i < NN; i++) xs[i] = i * 0.5;
    for (i = 0; i < 2 * NE; i++) {
      seed = seed * 1103515245u + 12345u;
      emap[i] = (int)((seed >> 8) % NN);
    }
    m2 = op_decl_map(e2, n2, 2, emap, "emap");
    x2 = op_decl_dat(n2, 1, "double", xs, "xs");
    r2 = op_decl_dat(e2, 1, "double", NULL, "res");
    PAR_LOOP(ks, "sum2", e2, op_arg_dat(x2, 0, m2, 1, "double", OP_READ),
             op_arg_dat(x2, 1, m2, 1, "double", OP_READ),
             op_arg_dat(r2, -1, OP_ID, 1, "double", OP_WRITE));
    op_fetch_data(r2, res);
    for (i = 0; i < NE; i++) CHECK_DBL(res[i], xs[emap[2 * i]] + 3.0 * xs[emap[2 * i + 1]]);
  }

  op_exit();
  return 0;
}
