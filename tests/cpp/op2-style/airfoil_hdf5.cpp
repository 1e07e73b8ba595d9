// airfoil_hdf5.cpp: airfoil.cpp with the mesh, the initial state and the constants read from
// OP2's HDF5 layout (new_grid.h5 as OP2's convert_mesh writes it; op2-h5convert makes one from
// a text mesh) by op_decl_set_hdf5, op_decl_map_hdf5, op_decl_dat_hdf5 and op_get_const_hdf5
// (op_hdf5.h). The rms history must be the plain Airfoil's on the same mesh.
//   airfoil_hdf5 [MESH.h5 | --mesh MESH.h5] [--iters N] [--rms-log FILE] [--save FILE.h5]
//                [--partition LIB[:ROUTINE]] [--mem] [OP2 tokens]
// Under mpiexec it is an OP2 MPI program as OP2's airfoil_hdf5 is: each process declares its
// block of every set, map and dat from the file, then op_partition (default PTSCOTCH:KWAY, the
// cells by the graph of pecell; nothing on one process) distributes the mesh.
// --mem: after the iterations each process fetches its own block of q (op_fetch_data into an
// array of its declared cells), then prints its peak resident memory (VmHWM) after each stage:
//   "airfoil_hdf5: memory process R/P: VmHWM KiB: init A, declared B, partitioned C, run D,
//    fetched E"
// (init: after op_init; declared: after every op_decl_*_hdf5 and op_decl_const; the figures
// only grow: each is the peak up to the end of its stage).
// --save writes the final q with op_fetch_data_hdf5_file (dataset p_q), then reads it back
// with op_decl_dat_hdf5 and requires the values op_fetch_data gives.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the flow constants: globals read by the kernels, declared to op2 by op_decl_const
double gam, gm1, cfl, eps, mach, alpha, qinf[4];

#include "op_seq.h"
#include <op_hdf5.h>
#include <op_profile.h>

#include "adt_calc.h"
#include "bres_calc.h"
#include "res_calc.h"
#include "save_soln.h"
#include "update.h"

#include "airfoil_grid.h"

int main(int argc, char **argv) {
  op_init(argc, argv, 0);

  airfoil_options opt;
  airfoil_parse(argc, argv, "new_grid.h5", &opt);
  const char *file = opt.mesh;
  long mem_init = airfoil_vmhwm_kib();

  op_set nodes = op_decl_set_hdf5(file, "nodes");
  op_set edges = op_decl_set_hdf5(file, "edges");
  op_set bedges = op_decl_set_hdf5(file, "bedges");
  op_set cells = op_decl_set_hdf5(file, "cells");

  op_map pedge = op_decl_map_hdf5(edges, nodes, 2, file, "pedge");
  op_map pecell = op_decl_map_hdf5(edges, cells, 2, file, "pecell");
  op_map pbedge = op_decl_map_hdf5(bedges, nodes, 2, file, "pbedge");
  op_map pbecell = op_decl_map_hdf5(bedges, cells, 1, file, "pbecell");
  op_map pcell = op_decl_map_hdf5(cells, nodes, 4, file, "pcell");

  op_dat p_bound = op_decl_dat_hdf5(bedges, 1, "int", file, "p_bound");
  op_dat p_x = op_decl_dat_hdf5(nodes, 2, "double", file, "p_x");
  op_dat p_q = op_decl_dat_hdf5(cells, 4, "double", file, "p_q");
  op_dat p_qold = op_decl_dat_hdf5(cells, 4, "double", file, "p_qold");
  op_dat p_adt = op_decl_dat_hdf5(cells, 1, "double", file, "p_adt");
  op_dat p_res = op_decl_dat_hdf5(cells, 4, "double", file, "p_res");

  op_get_const_hdf5("gam", 1, "double", (char *)&gam, file);
  op_get_const_hdf5("gm1", 1, "double", (char *)&gm1, file);
  op_get_const_hdf5("cfl", 1, "double", (char *)&cfl, file);
  op_get_const_hdf5("eps", 1, "double", (char *)&eps, file);
  op_get_const_hdf5("mach", 1, "double", (char *)&mach, file);
  op_get_const_hdf5("alpha", 1, "double", (char *)&alpha, file);
  op_get_const_hdf5("qinf", 4, "double", (char *)qinf, file);

  op_decl_const(1, "double", &gam);
  op_decl_const(1, "double", &gm1);
  op_decl_const(1, "double", &cfl);
  op_decl_const(1, "double", &eps);
  op_decl_const(1, "double", &mach);
  op_decl_const(1, "double", &alpha);
  op_decl_const(4, "double", qinf);

  // this process's declared block of cells: what op_fetch_data gives it
  int my_cells = cells->size;
  long mem_decl = airfoil_vmhwm_kib();
  op_partition(opt.lib, opt.routine, cells, pecell, p_x);
  long mem_part = airfoil_vmhwm_kib();

  op_printf("airfoil_hdf5: mesh '%s': %lld nodes, %lld cells, %lld edges, %lld boundary edges\n", file,
            (long long)op_get_size(nodes), (long long)op_get_size(cells), (long long)op_get_size(edges),
            (long long)op_get_size(bedges));

  FILE *log = airfoil_open_log(&opt);
  double cells_total = (double)op_get_size(cells);
  double rms = 0.0, maxerr = 0.0;
  int errloc = 0;
  double cpu0, wall0, cpu1, wall1;

  op_profile_start("Airfoil (HDF5)");
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
  if (opt.mem) {
    long mem_run = airfoil_vmhwm_kib();
    double *q = (double *)malloc(sizeof(double) * 4 * (size_t)(my_cells > 0 ? my_cells : 1));
    if (!q) {
      fprintf(stderr, "airfoil_hdf5: out of memory for q's block (%d cells)\n", my_cells);
      exit(1);
    }
    op_fetch_data(p_q, q);
    long mem_fetch = airfoil_vmhwm_kib();
    free(q);
    int rank = 0;
    op_rank(&rank);
    printf("airfoil_hdf5: memory process %d/%d: VmHWM KiB: init %ld, declared %ld, partitioned %ld, run %ld, "
           "fetched %ld\n",
           rank, op_num_ranks(), mem_init, mem_decl, mem_part, mem_run, mem_fetch);
    fflush(stdout);
  }
  if (opt.save) {
    // the final q through HDF5 and back: what op_fetch_data gives, value for value
    op_fetch_data_hdf5_file(p_q, opt.save);
    op_dat p_back = op_decl_dat_hdf5(cells, 4, "double", opt.save, "p_q");
    size_t n = 4 * (size_t)op_get_size(cells);
    double *q = (double *)op_malloc(sizeof(double) * n);
    double *back = (double *)op_malloc(sizeof(double) * n);
    op_fetch_data(p_q, q);
    op_fetch_data(p_back, back);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) differ += q[i] != back[i];
    op_free(q);
    op_free(back);
    if (differ) {
      fprintf(stderr, "airfoil_hdf5: q read back from '%s' differs at %zu of %zu values\n", opt.save,
              differ, n);
      exit(1);
    }
  }

  op_exit();
  return 0;
}
