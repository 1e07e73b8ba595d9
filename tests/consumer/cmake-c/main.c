/* A small op2 program, built outside the op2 repository against an installed op2 (CMake
 * find_package(OP2) or pkg-config). It runs a direct loop with a constant, an indirect INC loop
 * and a global reduction, and checks the values. Silent on success; usage: main BACKEND. */
#include <op2.h>

#include <stdio.h>
#include <stdlib.h>

#define NNODE 64

static int failures = 0;

static void expect(int cond, const char *what)
{
  if (!cond) {
    fprintf(stderr, "consumer: check failed: %s\n", what);
    failures++;
  }
}

int main(int argc, char **argv)
{
  char token[64];
  char *args[3];
  int edge2node[2 * NNODE], i;
  double x[NNODE], y[NNODE], deg[NNODE], a = 3.0, sum = 1.0;

  snprintf(token, sizeof token, "OP2_BACKEND=%s", argc > 1 ? argv[1] : "seq");
  args[0] = argv[0];
  args[1] = token;
  args[2] = NULL;
  op_init(2, args, 0);

  for (i = 0; i < NNODE; i++) {
    x[i] = i;
    edge2node[2 * i] = i;                   /* a ring: edge i joins node i and node i+1 */
    edge2node[2 * i + 1] = (i + 1) % NNODE;
  }
  op_set nodes = op_decl_set(NNODE, "nodes");
  op_set edges = op_decl_set(NNODE, "edges");
  op_map pedge = op_decl_map(edges, nodes, 2, edge2node, "pedge");
  op_dat dx = op_decl_dat(nodes, 1, "double", x, "x");
  op_dat dy = op_decl_dat(nodes, 1, "double", NULL, "y");
  op_dat ddeg = op_decl_dat(nodes, 1, "double", NULL, "deg");
  op_decl_const(1, "double", &a, "a");

  op_kernel axpy = op_decl_kernel("void axpy(const double *x, double *y) { *y = a * *x + 1.0; }",
                                  "axpy");
  op_kernel count = op_decl_kernel(
      "void count(double *d0, double *d1, const double *y0, double *s) { *d0 += 1.0; *d1 += 2.0; *s += *y0; }",
      "count");

  OP_PAR_LOOP(axpy, "axpy", nodes, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
              op_arg_dat(dy, -1, OP_ID, 1, "double", OP_WRITE));
  OP_PAR_LOOP(count, "count", edges, op_arg_dat(ddeg, 0, pedge, 1, "double", OP_INC),
              op_arg_dat(ddeg, 1, pedge, 1, "double", OP_INC),
              op_arg_dat(dy, 0, pedge, 1, "double", OP_READ),
              op_arg_gbl(&sum, 1, "double", OP_INC));

  op_fetch_data(dy, y);
  op_fetch_data(ddeg, deg);
  for (i = 0; i < NNODE; i++) {
    expect(y[i] == 3.0 * i + 1.0, "y = a x + 1");
    expect(deg[i] == 3.0, "every node: +1 as first end, +2 as second end");
  }
  /* sum y = 3 * (0 + ... + 63) + 64 = 6112, onto the caller's 1 */
  expect(sum == 1.0 + 3.0 * (NNODE * (NNODE - 1) / 2) + NNODE, "global INC");
  expect(op_get_size(nodes) == NNODE, "op_get_size");
  expect(op_last_error_code() == 0, "no error");

  op_exit();
  return failures ? 1 : 0;
}
