/*
 * Jacobi iteration for the 5-point Laplacian on an NN x NN grid, written as an OP2 app is:
 * the kernels stay in their headers res.h and update.h, in OP2's style, and are read as they
 * are with op_decl_kernel_file; only the op_par_loop calls changed (see
 * README.md). The same iteration in plain C runs beside it, and the program ends with
 *   jacobi: PASS (u_sum ..., u_max ...; plain C ...)
 * when every iteration's sum and maximum agree within 1e-12 (relative), FAIL otherwise.
 *
 * usage: jacobi [--nn N] [--iters K] [--kernel-dir D] [NAME=VALUE ...]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op2.h"

#ifndef JACOBI_KERNEL_DIR
#define JACOBI_KERNEL_DIR "examples-c/jacobi"
#endif

static int node_id(int nn, int i, int j) { return (i - 1) * (nn - 1) + (j - 1); }

int main(int argc, char **argv)
{
  int nn = 64, iters = 20;
  const char *kdir = JACOBI_KERNEL_DIR;
  char *tokens[16];
  int ntok = 0;
  tokens[ntok++] = argv[0];
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--nn") && a + 1 < argc) nn = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--iters") && a + 1 < argc) iters = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--kernel-dir") && a + 1 < argc) kdir = argv[++a];
    else if (strchr(argv[a], '=') && ntok < 15) tokens[ntok++] = argv[a];
    else {
      fprintf(stderr, "usage: %s [--nn N] [--iters K] [--kernel-dir D] [NAME=VALUE ...]\n", argv[0]);
      return 2;
    }
  }
  if (nn < 3 || iters < 1) {
    fprintf(stderr, "jacobi: --nn must be >= 3 and --iters >= 1\n");
    return 2;
  }
  /* Interior nodes (nn-1)^2; one edge per stencil entry: the node itself (A = -1) and each
   * interior neighbour (A = 0.25); boundary neighbours (u = 1 there) go into r. */
  int nnode = (nn - 1) * (nn - 1), nedge = 0;
  int *pp = malloc(sizeof(int) * 2 * 5 * (size_t)nnode);
  double *A = malloc(sizeof(double) * 5 * (size_t)nnode), *r = calloc((size_t)nnode, sizeof(double));
  double *u = calloc((size_t)nnode, sizeof(double)), *du = calloc((size_t)nnode, sizeof(double));
  if (!pp || !A || !r || !u || !du) {
    fprintf(stderr, "jacobi: out of memory\n");
    return 1;
  }
  for (int i = 1; i < nn; i++)
    for (int j = 1; j < nn; j++) {
      int n = node_id(nn, i, j);
      pp[2 * nedge] = n, pp[2 * nedge + 1] = n, A[nedge++] = -1.0;
      const int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
      for (int p = 0; p < 4; p++) {
        int i2 = i + di[p], j2 = j + dj[p];
        if (i2 == 0 || i2 == nn || j2 == 0 || j2 == nn) {
          r[n] += 0.25;
        } else {
          pp[2 * nedge] = n, pp[2 * nedge + 1] = node_id(nn, i2, j2), A[nedge++] = 0.25;
        }
      }
    }
  double alpha = 1.0, beta = 1.0;

  op_init(ntok, tokens, 0);
  op_set nodes = op_decl_set(nnode, "nodes");
  op_set edges = op_decl_set(nedge, "edges");
  op_map ppedge = op_decl_map(edges, nodes, 2, pp, "ppedge");
  op_dat p_A = op_decl_dat(edges, 1, "double", A, "p_A");
  op_dat p_r = op_decl_dat(nodes, 1, "double", r, "p_r");
  op_dat p_u = op_decl_dat(nodes, 1, "double", u, "p_u");
  op_dat p_du = op_decl_dat(nodes, 1, "double", du, "p_du");
  op_decl_const(1, "double", &alpha, "alpha");
  char path[4096];
  snprintf(path, sizeof path, "%s/res.h", kdir);
  op_kernel res = op_decl_kernel_file(path, "res");
  snprintf(path, sizeof path, "%s/update.h", kdir);
  op_kernel update = op_decl_kernel_file(path, "update");

  int ok = 1;
  double u_sum = 0, u_max = 0, ref_sum = 0, ref_max = 0;
  for (int it = 0; it < iters; it++) {
    OP_PAR_LOOP(res, "res", edges, op_arg_dat(p_A, -1, OP_ID, 1, "double", OP_READ),
                op_arg_dat(p_u, 1, ppedge, 1, "double", OP_READ),
                op_arg_dat(p_du, 0, ppedge, 1, "double", OP_INC), op_arg_gbl(&beta, 1, "double", OP_READ));
    u_sum = 0.0, u_max = 0.0;
    OP_PAR_LOOP(update, "update", nodes, op_arg_dat(p_r, -1, OP_ID, 1, "double", OP_READ),
                op_arg_dat(p_du, -1, OP_ID, 1, "double", OP_RW), op_arg_dat(p_u, -1, OP_ID, 1, "double", OP_INC),
                op_arg_gbl(&u_sum, 1, "double", OP_INC), op_arg_gbl(&u_max, 1, "double", OP_MAX));
    /* The same iteration in plain C. */
    for (int e = 0; e < nedge; e++) du[pp[2 * e]] += beta * A[e] * u[pp[2 * e + 1]];
    ref_sum = 0.0, ref_max = 0.0;
    for (int n = 0; n < nnode; n++) {
      u[n] += du[n] + alpha * r[n];
      du[n] = 0.0;
      ref_sum += u[n] * u[n];
      ref_max = u[n] > ref_max ? u[n] : ref_max;
    }
    if (fabs(u_sum - ref_sum) > 1e-12 * ref_sum || fabs(u_max - ref_max) > 1e-12 * ref_max) ok = 0;
  }
  printf("jacobi: %s (u_sum %.15e, u_max %.15e; plain C %.15e, %.15e; %d x %d grid, %d iterations)\n",
         ok ? "PASS" : "FAIL", u_sum, u_max, ref_sum, ref_max, nn, nn, iters);
  op_exit();
  free(pp), free(A), free(r), free(u), free(du);
  return ok ? 0 : 1;
}
