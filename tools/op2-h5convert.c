/*
 * op2-h5convert: converts an Airfoil mesh in new_grid.dat format (OP2's text format, as
 * op2-meshgen writes it) into OP2's HDF5 layout, the new_grid.h5 that OP2's convert_mesh writes
 * and OP2's airfoil_hdf5 reads: sets nodes, edges, bedges, cells; maps pedge, pecell, pbedge,
 * pbecell, pcell; dats p_bound, p_x, p_q (free stream), p_qold, p_res, p_adt (zeros); constants
 * gam, gm1, cfl, eps, mach, alpha, qinf. Uses op2 itself (op_dump_to_hdf5,
 * op_write_const_hdf5).
 *
 * usage: op2-h5convert IN.dat OUT.h5
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op2.h"

#include "airfoil_mesh.h"

int main(int argc, char **argv) {
  if (argc != 3 || argv[1][0] == '-') {
    fprintf(stderr, "usage: op2-h5convert IN.dat OUT.h5\n");
    return 2;
  }
  airfoil_mesh m;
  char err[1024];
  if (airfoil_mesh_read(argv[1], &m, err, sizeof err)) {
    fprintf(stderr, "op2-h5convert: %s\n", err);
    return 1;
  }
  /* the constants exactly as airfoil.c (and OP2's airfoil) computes them */
  double gam = 1.4f, gm1 = gam - 1.0, cfl = 0.9f, eps = 0.05f, mach = 0.4f;
  double alpha = 3.0f * atan(1.0f) / 45.0f;
  double p = 1.0, r = 1.0, u = sqrt(gam * p / r) * mach, e = p / (r * gm1) + 0.5 * u * u;
  double qinf[4] = {r, r * u, 0.0, r * e};
  double *q = malloc(sizeof(double) * 4 * (size_t)m.ncell);
  if (!q) {
    fprintf(stderr, "op2-h5convert: out of memory\n");
    return 1;
  }
  for (int c = 0; c < m.ncell; c++)
    for (int n = 0; n < 4; n++) q[4 * c + n] = qinf[n];

  char *args[] = {argv[0], NULL};
  op_init(1, args, 0);
  op_set nodes = op_decl_set(m.nnode, "nodes");
  op_set edges = op_decl_set(m.nedge, "edges");
  op_set bedges = op_decl_set(m.nbedge, "bedges");
  op_set cells = op_decl_set(m.ncell, "cells");
  op_decl_map(edges, nodes, 2, m.edge, "pedge");
  op_decl_map(edges, cells, 2, m.ecell, "pecell");
  op_decl_map(bedges, nodes, 2, m.bedge, "pbedge");
  op_decl_map(bedges, cells, 1, m.becell, "pbecell");
  op_decl_map(cells, nodes, 4, m.cell, "pcell");
  op_decl_dat(bedges, 1, "int", m.bound, "p_bound");
  op_decl_dat(nodes, 2, "double", m.x, "p_x");
  op_decl_dat(cells, 4, "double", q, "p_q");
  op_decl_dat(cells, 4, "double", NULL, "p_qold");
  op_decl_dat(cells, 4, "double", NULL, "p_res");
  op_decl_dat(cells, 1, "double", NULL, "p_adt");
  op_dump_to_hdf5(argv[2]);
  op_write_const_hdf5("gam", 1, "double", (char *)&gam, argv[2]);
  op_write_const_hdf5("gm1", 1, "double", (char *)&gm1, argv[2]);
  op_write_const_hdf5("cfl", 1, "double", (char *)&cfl, argv[2]);
  op_write_const_hdf5("eps", 1, "double", (char *)&eps, argv[2]);
  op_write_const_hdf5("mach", 1, "double", (char *)&mach, argv[2]);
  op_write_const_hdf5("alpha", 1, "double", (char *)&alpha, argv[2]);
  op_write_const_hdf5("qinf", 4, "double", (char *)qinf, argv[2]);
  op_exit();
  free(q);
  am_free(&m);
  return 0;
}
