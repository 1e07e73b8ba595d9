// airfoil_mpi.cpp: airfoil.cpp as an OP2 MPI application (built with mpicxx -DUSE_MPI, run
// under mpiexec). The root process (MPI_ROOT, 0 by op_lib_mpi.h) reads the whole text mesh and
// hands every process its contiguous block of each set with MPI_Scatterv (map values stay
// global indices); each process declares its blocks, then op_partition distributes the mesh
// (--partition LIB[:ROUTINE], default PTSCOTCH:KWAY: the cells by the graph of pecell). Loops and
// the rms reduction (op_arg_gbl) are the plain Airfoil's; one process gives its rms history.
//   mpiexec -n P airfoil_mpi [MESH | --mesh MESH] [--iters N] [--rms-log FILE]
//                            [--partition LIB[:ROUTINE]] [--save FILE] [OP2 tokens]

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

// the flow constants: globals read by the kernels, declared to op2 by op_decl_const
double gam, gm1, cfl, eps, mach, alpha, qinf[4];

#include "op_lib_mpi.h"
#include "op_seq.h"
#include <op_profile.h>

#include "adt_calc.h"
#include "bres_calc.h"
#include "res_calc.h"
#include "save_soln.h"
#include "update.h"

#include "airfoil_grid.h"

// Process rank's block of n elements split over nprocs: the first n % nprocs processes get one
// element more.
static void block_of(int n, int nprocs, int rank, int *first, int *count) {
  int base = n / nprocs, extra = n % nprocs;
  *count = base + (rank < extra ? 1 : 0);
  *first = rank * base + (rank < extra ? rank : extra);
}

// Scatters `width` values per element of an n-element array held by the root (global) into
// each process's block (local, count * width values).
template <typename T>
static void scatter_blocks(const T *global, T *local, int n, int width, MPI_Datatype type, int nprocs,
                           int rank) {
  int *counts = (int *)malloc(sizeof(int) * nprocs);
  int *displs = (int *)malloc(sizeof(int) * nprocs);
  for (int p = 0; p < nprocs; p++) {
    int first, count;
    block_of(n, nprocs, p, &first, &count);
    counts[p] = count * width;
    displs[p] = first * width;
  }
  MPI_Scatterv(global, counts, displs, type, local, counts[rank], type, MPI_ROOT, MPI_COMM_WORLD);
  free(counts);
  free(displs);
}

int main(int argc, char **argv) {
  op_init(argc, argv, 0);

  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  airfoil_options opt;
  airfoil_parse(argc, argv, "new_grid.dat", &opt);

  // the whole mesh on the root process only
  airfoil_grid g;
  memset(&g, 0, sizeof g);
  int counts[4] = {0, 0, 0, 0};
  if (rank == MPI_ROOT) {
    if (airfoil_read_grid(opt.mesh, &g)) MPI_Abort(MPI_COMM_WORLD, 1);
    counts[0] = g.nnode;
    counts[1] = g.ncell;
    counts[2] = g.nedge;
    counts[3] = g.nbedge;
  }
  MPI_Bcast(counts, 4, MPI_INT, MPI_ROOT, MPI_COMM_WORLD);
  int g_nnode = counts[0], g_ncell = counts[1], g_nedge = counts[2], g_nbedge = counts[3];
  op_printf("airfoil_mpi: mesh '%s': %d nodes, %d cells, %d edges, %d boundary edges; %d processes, "
            "op_partition %s %s\n", opt.mesh, g_nnode, g_ncell, g_nedge, g_nbedge, nprocs, opt.lib,
            opt.routine ? opt.routine : "");

  int first, nnode, ncell, nedge, nbedge;
  block_of(g_nnode, nprocs, rank, &first, &nnode);
  block_of(g_ncell, nprocs, rank, &first, &ncell);
  block_of(g_nedge, nprocs, rank, &first, &nedge);
  block_of(g_nbedge, nprocs, rank, &first, &nbedge);

  // this process's blocks (+1: no zero-byte allocations)
  double *x = (double *)op_malloc(sizeof(double) * (2 * (size_t)nnode + 1));
  int *cell = (int *)op_malloc(sizeof(int) * (4 * (size_t)ncell + 1));
  int *edge = (int *)op_malloc(sizeof(int) * (2 * (size_t)nedge + 1));
  int *ecell = (int *)op_malloc(sizeof(int) * (2 * (size_t)nedge + 1));
  int *bedge = (int *)op_malloc(sizeof(int) * (2 * (size_t)nbedge + 1));
  int *becell = (int *)op_malloc(sizeof(int) * ((size_t)nbedge + 1));
  int *bound = (int *)op_malloc(sizeof(int) * ((size_t)nbedge + 1));
  double *q = (double *)op_malloc(sizeof(double) * (4 * (size_t)ncell + 1));
  scatter_blocks(g.x, x, g_nnode, 2, MPI_DOUBLE, nprocs, rank);
  scatter_blocks(g.cell, cell, g_ncell, 4, MPI_INT, nprocs, rank);
  scatter_blocks(g.edge, edge, g_nedge, 2, MPI_INT, nprocs, rank);
  scatter_blocks(g.ecell, ecell, g_nedge, 2, MPI_INT, nprocs, rank);
  scatter_blocks(g.bedge, bedge, g_nbedge, 2, MPI_INT, nprocs, rank);
  scatter_blocks(g.becell, becell, g_nbedge, 1, MPI_INT, nprocs, rank);
  scatter_blocks(g.bound, bound, g_nbedge, 1, MPI_INT, nprocs, rank);
  if (rank == MPI_ROOT) airfoil_grid_free(&g);

  airfoil_flow_constants(&gam, &gm1, &cfl, &eps, &mach, &alpha, qinf);
  for (int n = 0; n < ncell; n++)
    for (int m = 0; m < 4; m++) q[4 * n + m] = qinf[m];

  op_set nodes = op_decl_set(nnode, "nodes");
  op_set edges = op_decl_set(nedge, "edges");
  op_set bedges = op_decl_set(nbedge, "bedges");
  op_set cells = op_decl_set(ncell, "cells");

  op_map pedge = op_decl_map(edges, nodes, 2, edge, "pedge");
  op_map pecell = op_decl_map(edges, cells, 2, ecell, "pecell");
  op_map pbedge = op_decl_map(bedges, nodes, 2, bedge, "pbedge");
  op_map pbecell = op_decl_map(bedges, cells, 1, becell, "pbecell");
  op_map pcell = op_decl_map(cells, nodes, 4, cell, "pcell");

  op_dat p_bound = op_decl_dat(bedges, 1, "int", bound, "p_bound");
  op_dat p_x = op_decl_dat(nodes, 2, "double", x, "p_x");
  op_dat p_q = op_decl_dat(cells, 4, "double", q, "p_q");
  op_dat p_qold = op_decl_dat(cells, 4, "double", (double *)NULL, "p_qold");
  op_dat p_adt = op_decl_dat(cells, 1, "double", (double *)NULL, "p_adt");
  op_dat p_res = op_decl_dat(cells, 4, "double", (double *)NULL, "p_res");
  // op2 copied the blocks
  op_free(x);
  op_free(cell);
  op_free(edge);
  op_free(ecell);
  op_free(bedge);
  op_free(becell);
  op_free(bound);
  op_free(q);

  op_decl_const(1, "double", &gam);
  op_decl_const(1, "double", &gm1);
  op_decl_const(1, "double", &cfl);
  op_decl_const(1, "double", &eps);
  op_decl_const(1, "double", &mach);
  op_decl_const(1, "double", &alpha);
  op_decl_const(4, "double", qinf);

  op_partition(opt.lib, opt.routine, cells, pecell, p_x);

  FILE *log = airfoil_open_log(&opt);
  double cells_total = (double)op_get_size(cells);
  double rms = 0.0, maxerr = 0.0;
  int errloc = 0;
  double cpu0, wall0, cpu1, wall1;

  op_profile_start("Airfoil (MPI)");
  op_profile_enter("time marching");
  op_timers(&cpu0, &wall0);
  for (int iter = 1; iter <= opt.iters; iter++) {
    op_par_loop(save_soln, "save_soln", cells,
                op_arg_dat(p_q, -1, OP_ID, 4, "double", OP_READ),
                op_arg_dat(p_qold, -1, OP_ID, 4, "double", OP_WRITE));

    // predictor and corrector
    for (int k = 0; k < 2; k++) {
      op_par_loop(adt_calc, "adt_calc", cells,
                  op_arg_dat(p_x, 0, pcell, 2, "double", OP_READ),
                  op_arg_dat(p_x, 1, pcell, 2, "double", OP_READ),
                  op_arg_dat(p_x, 2, pcell, 2, "double", OP_READ),
                  op_arg_dat(p_x, 3, pcell, 2, "double", OP_READ),
                  op_arg_dat(p_q, -1, OP_ID, 4, "double", OP_READ),
                  op_arg_dat(p_adt, -1, OP_ID, 1, "double", OP_WRITE));

      op_par_loop(res_calc, "res_calc", edges,
                  op_arg_dat(p_x, 0, pedge, 2, "double", OP_READ),
                  op_arg_dat(p_x, 1, pedge, 2, "double", OP_READ),
                  op_arg_dat(p_q, 0, pecell, 4, "double", OP_READ),
                  op_arg_dat(p_q, 1, pecell, 4, "double", OP_READ),
                  op_arg_dat(p_adt, 0, pecell, 1, "double", OP_READ),
                  op_arg_dat(p_adt, 1, pecell, 1, "double", OP_READ),
                  op_arg_dat(p_res, 0, pecell, 4, "double", OP_INC),
                  op_arg_dat(p_res, 1, pecell, 4, "double", OP_INC));

      op_par_loop(bres_calc, "bres_calc", bedges,
                  op_arg_dat(p_x, 0, pbedge, 2, "double", OP_READ),
                  op_arg_dat(p_x, 1, pbedge, 2, "double", OP_READ),
                  op_arg_dat(p_q, 0, pbecell, 4, "double", OP_READ),
                  op_arg_dat(p_adt, 0, pbecell, 1, "double", OP_READ),
                  op_arg_dat(p_res, 0, pbecell, 4, "double", OP_INC),
                  op_arg_dat(p_bound, -1, OP_ID, 1, "int", OP_READ));

      rms = 0.0;
      maxerr = 0.0;
      errloc = 0;
      op_par_loop(update, "update", cells,
                  op_arg_dat(p_qold, -1, OP_ID, 4, "double", OP_READ),
                  op_arg_dat(p_q, -1, OP_ID, 4, "double", OP_WRITE),
                  op_arg_dat(p_res, -1, OP_ID, 4, "double", OP_RW),
                  op_arg_dat(p_adt, -1, OP_ID, 1, "double", OP_READ),
                  op_arg_gbl(&rms, 1, "double", OP_INC),
                  op_arg_gbl(&maxerr, 1, "double", OP_MAX),
                  op_arg_idx(-1, OP_ID),
                  op_arg_info(&errloc, 1, "int", 5));
    }

    rms = sqrt(rms / cells_total);
    if (log) fprintf(log, "%d %.17e\n", iter, rms);
    if (iter % 100 == 0) op_printf(" %d  %10.5e\n", iter, rms);
  }
  op_timers(&cpu1, &wall1);
  op_profile_exit();
  op_profile_end();
  if (log) fclose(log);

  if (opt.iters > 0)
    op_printf("airfoil: last stage: largest squared change %.6e, in cell %d\n", maxerr, errloc);
  op_printf("airfoil: %d iterations, %.3f s, %.3f ms/iter\n", opt.iters, wall1 - wall0,
            opt.iters ? 1e3 * (wall1 - wall0) / opt.iters : 0.0);
  op_profile_output();
  if (opt.save) op_print_dat_to_txtfile(p_q, opt.save);

  op_exit();
  return 0;
}
