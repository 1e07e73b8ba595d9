/* Issue 9, point 7: vector arguments over maps of large arity. A map of dim INT_MAX on an empty
 * set is legal and its loop runs (no statement per map entry is generated); arities 12 (filled
 * by a loop) and 300 (beyond the stack threshold: the driver's scratch) give the right sums. */
#include "test.h"
#include <limits.h>

static void wide(int argc, char **argv, int dim)
{
  enum { E = 7, NODES = 50 };
  int *m = malloc(sizeof(int) * (size_t)E * dim), i, j;
  double xs[NODES], out[E], want;
  char src[256], name[32];
  CHECK(m != NULL);
  for (i = 0; i < NODES; i++) xs[i] = (double)(i * i % 17);
  for (i = 0; i < E * dim; i++) m[i] = (i * 7 + 3) % NODES;
  (void)argc;
  (void)argv;
  {
    op_set nodes = op_decl_set(NODES, "nodes");
    op_set cells = op_decl_set(E, "cells");
    op_map map = op_decl_map(cells, nodes, dim, m, "wide");
    op_dat x = op_decl_dat(nodes, 1, "double", xs, "x");
    op_dat s = op_decl_dat(cells, 1, "double", NULL, "s");
    snprintf(name, sizeof name, "sum%d", dim);
    snprintf(src, sizeof src,
             "void %s(const double **v, double *s) { for (int j = 0; j < %d; j++) s[0] += v[j][0]; }\n",
             name, dim);
    PAR_LOOP(op_decl_kernel(src, name), name, cells, op_arg_dat(x, -dim, map, 1, "double", OP_READ),
             op_arg_dat(s, -1, OP_ID, 1, "double", OP_INC));
    op_fetch_data(s, out);
    for (i = 0; i < E; i++) {
      want = 0;
      for (j = 0; j < dim; j++) want += xs[m[i * dim + j]];
      CHECK_DBL(out[i], want);
    }
  }
  free(m);
}

int main(int argc, char **argv)
{
  test_init(argc, argv);
  {
    op_set empty = op_decl_set(0, "empty");
    op_set nodes = op_decl_set(3, "nodes");
    op_map huge = op_decl_map(empty, nodes, INT_MAX, NULL, "huge");
    op_dat x = op_decl_dat(nodes, 1, "double", NULL, "x");
    op_kernel k = op_decl_kernel("void touch(double **v) { v[0][0] += 1.0; }\n", "touch");
    double out[3];
    CHECK_OK();
    PAR_LOOP(k, "touch", empty, op_arg_dat(x, -INT_MAX, huge, 1, "double", OP_INC));
    CHECK_OK();
    op_fetch_data(x, out);
    CHECK_DBL(out[0] + out[1] + out[2], 0.0);
  }
  wide(argc, argv, 12);
  wide(argc, argv, 300);
  op_exit();
  return 0;
}
