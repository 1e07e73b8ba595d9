// jac.cpp: Jacobi iterations for the 5-point Laplacian on a square grid (OP2's jac1 problem) as
// an OP2 C++ application. The matrix lives on edges: one diagonal edge per node (-1) and one edge
// per interior neighbour (1/4); neighbours outside the grid (boundary value 1) add 1/4 to the
// node's right-hand side. Each iteration is an indirect loop (OP_INC through ppedge, beta an
// op_arg_gbl OP_READ) and a direct one with an OP_INC and an OP_MAX global reduction, alpha a
// constant from op_decl_const. The same sweep is done by plain loops in this program and every
// iteration must agree: u and the maximum exactly (every value is a multiple of 4^-NITER below
// 2, so any order of the additions is exact), the sum of squares to 1e-13 relative (rounded in
// the backend's order). Silent and status 0 on success; names what differs and exits 1
// otherwise.
//   jac [OP2 tokens]

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double alpha;

#include "op_seq.h"

#include "jac_res.h"
#include "jac_update.h"

#define NN 16    // (NN - 1) x (NN - 1) unknowns
#define NITER 20

int main(int argc, char **argv) {
  op_init(argc, argv, 0);

  int nnode = (NN - 1) * (NN - 1);
  int nedge = nnode + 4 * (NN - 1) * (NN - 2);
  int *pp = (int *)op_malloc(sizeof(int) * 2 * nedge);
  double *A = (double *)op_malloc(sizeof(double) * nedge);
  double *r = (double *)op_malloc(sizeof(double) * nnode);
  double *u = (double *)op_malloc(sizeof(double) * nnode);
  double *du = (double *)op_malloc(sizeof(double) * nnode);
  double *u_op2 = (double *)op_malloc(sizeof(double) * nnode);

  // node (i, j), 0 <= i, j < NN - 1, is i + j * (NN - 1)
  int e = 0;
  const int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
  for (int j = 0; j < NN - 1; j++)
    for (int i = 0; i < NN - 1; i++) {
      int n = i + j * (NN - 1);
      r[n] = 0.0;
      u[n] = 0.0;
      du[n] = 0.0;
      pp[2 * e] = n;
      pp[2 * e + 1] = n;
      A[e] = -1.0;
      e++;
      for (int k = 0; k < 4; k++) {
        int i2 = i + di[k], j2 = j + dj[k];
        if (i2 < 0 || i2 >= NN - 1 || j2 < 0 || j2 >= NN - 1) {
          r[n] += 0.25;
        } else {
          pp[2 * e] = n;
          pp[2 * e + 1] = i2 + j2 * (NN - 1);
          A[e] = 0.25;
          e++;
        }
      }
    }
  if (e != nedge) {
    fprintf(stderr, "jac: built %d edges, expected %d\n", e, nedge);
    return 1;
  }

  op_set nodes = op_decl_set(nnode, "nodes");
  op_set edges = op_decl_set(nedge, "edges");
  op_map ppedge = op_decl_map(edges, nodes, 2, pp, "ppedge");
  op_dat p_A = op_decl_dat(edges, 1, "double", A, "p_A");
  op_dat p_r = op_decl_dat(nodes, 1, "double", r, "p_r");
  op_dat p_u = op_decl_dat(nodes, 1, "double", u, "p_u");
  op_dat p_du = op_decl_dat(nodes, 1, "double", du, "p_du");

  alpha = 1.0;
  op_decl_const(1, "double", &alpha);

  double beta = 1.0, u_sum, u_max;
  int bad = 0;
  for (int iter = 1; iter <= NITER; iter++) {
    op_par_loop(jac_res, "jac_res", edges,
                op_arg_dat(p_A, -1, OP_ID, 1, "double", OP_READ),
                op_arg_dat(p_u, 1, ppedge, 1, "double", OP_READ),
                op_arg_dat(p_du, 0, ppedge, 1, "double", OP_INC),
                op_arg_gbl(&beta, 1, "double", OP_READ));

    u_sum = 0.0;
    u_max = 0.0;
    op_par_loop(jac_update, "jac_update", nodes,
                op_arg_dat(p_r, -1, OP_ID, 1, "double", OP_READ),
                op_arg_dat(p_du, -1, OP_ID, 1, "double", OP_RW),
                op_arg_dat(p_u, -1, OP_ID, 1, "double", OP_RW),
                op_arg_gbl(&u_sum, 1, "double", OP_INC),
                op_arg_gbl(&u_max, 1, "double", OP_MAX));

    // the same sweep by plain loops
    for (int k = 0; k < nedge; k++) du[pp[2 * k]] += beta * A[k] * u[pp[2 * k + 1]];
    double want_sum = 0.0, want_max = 0.0;
    for (int n = 0; n < nnode; n++) {
      u[n] += du[n] + alpha * r[n];
      du[n] = 0.0;
      want_sum += u[n] * u[n];
      if (u[n] > want_max) want_max = u[n];
    }

    op_fetch_data(p_u, u_op2);
    int differ = 0;
    for (int n = 0; n < nnode; n++) differ += u_op2[n] != u[n];
    if (differ) {
      fprintf(stderr, "jac: iteration %d: u differs from the plain loops at %d of %d nodes\n", iter,
              differ, nnode);
      bad = 1;
    }
    if (u_max != want_max || fabs(u_sum - want_sum) > 1e-13 * want_sum) {
      fprintf(stderr, "jac: iteration %d: u_max %.17g (expected %.17g), u_sum %.17g (expected %.17g)\n",
              iter, u_max, want_max, u_sum, want_sum);
      bad = 1;
    }
  }
  // after NITER sweeps the solution (1 everywhere) is approached from below, not reached
  if (!(u_max > 0.5 && u_max < 1.0)) {
    fprintf(stderr, "jac: u_max %.17g after %d iterations: expected in (0.5, 1)\n", u_max, NITER);
    bad = 1;
  }

  op_exit();
  op_free(pp);
  op_free(A);
  op_free(r);
  op_free(u);
  op_free(du);
  op_free(u_op2);
  return bad;
}
