/* Vector arguments (idx == -N with a map of dim N): the kernel gets T**, one pointer per map
 * entry, for READ and for INC. */
#include "test.h"

static const char *src_centroid =
    "void centroid(const double **x, double *c)\n"
    "{\n"
    "  int i;\n"
    "  c[0] = 0.0; c[1] = 0.0;\n"
    "  for (i = 0; i < 3; i++) { c[0] += x[i][0]; c[1] += x[i][1]; }\n"
    "}\n";

static const char *src_degree =
    "void degree(int **deg, double **area, const double *a)\n"
    "{\n"
    "  int i;\n"
    "  for (i = 0; i < 3; i++) { *deg[i] += 1; *area[i] += *a; }\n"
    "}\n";

static const char *src_mixed =
    "void mixed(const int **t, const int *t1, int *out)\n"
    "{\n"
    "  *out = 100 * *t[0] + 10 * *t[1] + *t1;\n"
    "}\n";

int main(int argc, char **argv)
{
  /* A 3x2 grid of nodes split into 4 triangles:
   *   3---4---5
   *   | / | / |
   *   0---1---2      node k at (k % 3, k / 3) */
  int tri2node[12] = {0, 1, 4, 0, 4, 3, 1, 2, 5, 1, 5, 4};
  double xv[12], c[8], area[6];
  double av[4] = {0.5, 0.25, 1.0, 2.0};
  int deg[6], i;
  op_set nodes, tris;
  op_map ptri;
  op_dat x, cen, dg, ar, a;
  op_kernel kc, kd;

  test_init(argc, argv);
  for (i = 0; i < 6; i++) {
    xv[2 * i] = i % 3;
    xv[2 * i + 1] = i / 3;
  }
  nodes = op_decl_set(6, "nodes");
  tris = op_decl_set(4, "tris");
  ptri = op_decl_map(tris, nodes, 3, tri2node, "ptri");
  x = op_decl_dat(nodes, 2, "double", xv, "x");
  cen = op_decl_dat(tris, 2, "double", NULL, "cen");
  dg = op_decl_dat(nodes, 1, "int", NULL, "deg");
  ar = op_decl_dat(nodes, 1, "double", NULL, "area");
  a = op_decl_dat(tris, 1, "double", av, "a");
  kc = op_decl_kernel(src_centroid, "centroid");
  kd = op_decl_kernel(src_degree, "degree");

  PAR_LOOP(kc, "centroid", tris, op_arg_dat(x, -3, ptri, 2, "double", OP_READ),
           op_arg_dat(cen, -1, OP_ID, 2, "double", OP_WRITE));
  CHECK_OK();
  op_fetch_data(cen, c);
  CHECK_DBL(c[0], 2.0); /* 0 + 1 + 1 */
  CHECK_DBL(c[1], 1.0); /* 0 + 0 + 1 */
  CHECK_DBL(c[2], 1.0); /* 0 + 1 + 0 */
  CHECK_DBL(c[3], 2.0);
  CHECK_DBL(c[4], 5.0); /* 1 + 2 + 2 */
  CHECK_DBL(c[5], 1.0);
  CHECK_DBL(c[6], 4.0); /* 1 + 2 + 1 */
  CHECK_DBL(c[7], 2.0);

  PAR_LOOP(kd, "degree", tris, op_arg_dat(dg, -3, ptri, 1, "int", OP_INC),
           op_arg_dat(ar, -3, ptri, 1, "double", OP_INC),
           op_arg_dat(a, -1, OP_ID, 1, "double", OP_READ));
  CHECK_OK();
  op_fetch_data(dg, deg);
  op_fetch_data(ar, area);
  CHECK_INT(deg[0], 2);
  CHECK_INT(deg[1], 3);
  CHECK_INT(deg[2], 1);
  CHECK_INT(deg[3], 1);
  CHECK_INT(deg[4], 3);
  CHECK_INT(deg[5], 2);
  CHECK_DBL(area[0], 0.75); /* tris 0, 1 */
  CHECK_DBL(area[1], 3.5);  /* tris 0, 2, 3 */
  CHECK_DBL(area[2], 1.0);  /* tri 2 */
  CHECK_DBL(area[3], 0.25); /* tri 1 */
  CHECK_DBL(area[4], 2.75); /* tris 0, 1, 3 */
  CHECK_DBL(area[5], 3.0);  /* tris 2, 3 */

  /* A vector arg over a dim-2 map next to a plain indirect arg through the same map. */
  {
    int e2n[6] = {0, 1, 1, 2, 2, 0}, tv[3] = {7, 8, 9}, out[3];
    op_set n3 = op_decl_set(3, "n3"), e3 = op_decl_set(3, "e3");
    op_map pe = op_decl_map(e3, n3, 2, e2n, "pe");
    op_dat t = op_decl_dat(n3, 1, "int", tv, "t"), o = op_decl_dat(e3, 1, "int", NULL, "o");
    op_kernel km = op_decl_kernel(src_mixed, "mixed");
    PAR_LOOP(km, "mixed", e3, op_arg_dat(t, -2, pe, 1, "int", OP_READ),
             op_arg_dat(t, 1, pe, 1, "int", OP_READ), op_arg_dat(o, -1, OP_ID, 1, "int", OP_WRITE));
    op_fetch_data(o, out);
    CHECK_INT(out[0], 788);
    CHECK_INT(out[1], 899);
    CHECK_INT(out[2], 977);
  }

  op_exit();
  return 0;
}
