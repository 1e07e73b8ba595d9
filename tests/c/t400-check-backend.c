/* The check backend: correct loops run as on seq; a broken indirect OP_WRITE promise and a
 * kernel that modifies an OP_READ dat are reported as OP2_ERR_CHECK naming the
 * loop, the argument and the dat. On other backends only the correct loops run (the broken
 * ones would be races there, which is what this backend exists to find). */
#include <string.h>

#include "test.h"

int main(int argc, char **argv) {
  test_init(argc, argv);
  int is_check = strcmp(op_backend_name(), "check") == 0;
  op_set_error_handler(OP_ERRORS_RETURN);

  int perm[4] = {2, 0, 3, 1}, clash[4] = {0, 1, 1, 3};
  op_set cells = op_decl_set(4, "cells");
  op_set nodes = op_decl_set(4, "nodes");
  op_map pperm = op_decl_map(cells, nodes, 1, perm, "pperm");
  op_map pclash = op_decl_map(cells, nodes, 1, clash, "pclash");
  double xv[4] = {1, 2, 3, 4};
  op_dat x = op_decl_dat(cells, 1, "double", xv, "x");
  op_dat y = op_decl_dat(nodes, 1, "double", NULL, "y");
  op_kernel copy = op_decl_kernel("void copy(const double *a, double *b) { *b = 2.0 * *a; }", "copy");

  /* A permutation keeps the promise. */
  OP_PAR_LOOP(copy, "scatter", cells, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
              op_arg_dat(y, 0, pperm, 1, "double", OP_WRITE));
  CHECK_OK();
  double out[4];
  op_fetch_data(y, out);
  CHECK_DBL(out[0], 4.0);
  CHECK_DBL(out[1], 8.0);
  CHECK_DBL(out[2], 2.0);
  CHECK_DBL(out[3], 6.0);

  if (is_check) {
    /* Cells 1 and 2 both write node 1. */
    OP_PAR_LOOP(copy, "clash", cells, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
                op_arg_dat(y, 0, pclash, 1, "double", OP_WRITE));
    CHECK_ERR(OP2_ERR_CHECK, "op_par_loop", "'clash'", "arg 1", "'y'", "OP_WRITE", "elements 1 and 2",
              "element 1");

    /* A kernel that writes through its OP_READ pointer (casting const away). */
    op_kernel sneaky = op_decl_kernel(
        "void sneaky(double *a, double *b) { *b = *a; if (*a > 3.5) *a = 0.0; }", "sneaky");
    OP_PAR_LOOP(sneaky, "sneaky", cells, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
                op_arg_dat(y, 0, pperm, 1, "double", OP_WRITE));
    CHECK_ERR(OP2_ERR_CHECK, "op_par_loop", "'sneaky'", "arg 0", "dat 'x'", "OP_READ", "modified");

    /* A kernel writing to an OP_READ global only changes its private copy: the caller's value
     * stays as it was on every backend. */
    double g = 5.0;
    op_kernel gk = op_decl_kernel("void gk(double *y, double *g) { *y += *g; *g = 0.0; }", "gk");
    OP_PAR_LOOP(gk, "gk", nodes, op_arg_dat(y, -1, OP_ID, 1, "double", OP_RW), op_arg_gbl(&g, 1, "double", OP_READ));
    CHECK_OK();
    CHECK_DBL(g, 5.0);
  }
  op_exit();
  return 0;
}
