// airfoil.cpp: Airfoil (2D inviscid Euler on a quad mesh around a NACA0012 aerofoil) as an OP2
// C++ application: op_seq.h's op_par_loop with each kernel a C function from its own header
// (<kernel>.h, OP2's convention), constants by the three-argument op_decl_const. Built
// unchanged against op2 (tests/cpp/op2-style/Makefile); op2 compiles each kernel's header into
// its loop when it finds it (the JIT tier), else calls the compiled function per element.
// Same arithmetic as the C Airfoil (examples-c/airfoil), so on seq the rms history is its, bit
// for bit.
//   airfoil [MESH | --mesh MESH] [--iters N] [--rms-log FILE] [--save FILE] [OP2 tokens]
// (airfoil_grid.h describes the options.)

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the flow constants: globals read by the kernels, declared to op2 by op_decl_const
double gam, gm1, cfl, eps, mach, alpha, qinf[4];

#include "op_seq.h"
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
  airfoil_parse(argc, argv, "new_grid.dat", &opt);

  airfoil_grid g;
  if (airfoil_read_grid(opt.mesh, &g)) exit(1);
  op_printf("airfoil: mesh '%s': %d nodes, %d cells, %d edges, %d boundary edges\n", opt.mesh,
            g.nnode, g.ncell, g.nedge, g.nbedge);

  airfoil_flow_constants(&gam, &gm1, &cfl, &eps, &mach, &alpha, qinf);
  double *q = (double *)op_malloc(sizeof(double) * 4 * g.ncell);
  for (int n = 0; n < g.ncell; n++)
    for (int m = 0; m < 4; m++) q[4 * n + m] = qinf[m];

  op_set nodes = op_decl_set(g.nnode, "nodes");
  op_set edges = op_decl_set(g.nedge, "edges");
  op_set bedges = op_decl_set(g.nbedge, "bedges");
  op_set cells = op_decl_set(g.ncell, "cells");

  op_map pedge = op_decl_map(edges, nodes, 2, g.edge, "pedge");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell, "pecell");
  op_map pbedge = op_decl_map(bedges, nodes, 2, g.bedge, "pbedge");
  op_map pbecell = op_decl_map(bedges, cells, 1, g.becell, "pbecell");
  op_map pcell = op_decl_map(cells, nodes, 4, g.cell, "pcell");

  op_dat p_bound = op_decl_dat(bedges, 1, "int", g.bound, "p_bound");
  op_dat p_x = op_decl_dat(nodes, 2, "double", g.x, "p_x");
  op_dat p_q = op_decl_dat(cells, 4, "double", q, "p_q");
  op_dat p_qold = op_decl_dat(cells, 4, "double", (double *)NULL, "p_qold");
  op_dat p_adt = op_decl_dat(cells, 1, "double", (double *)NULL, "p_adt");
  op_dat p_res = op_decl_dat(cells, 4, "double", (double *)NULL, "p_res");
  // op2 copied the arrays
  op_free(q);
  airfoil_grid_free(&g);

  op_decl_const(1, "double", &gam);
  op_decl_const(1, "double", &gm1);
  op_decl_const(1, "double", &cfl);
  op_decl_const(1, "double", &eps);
  op_decl_const(1, "double", &mach);
  op_decl_const(1, "double", &alpha);
  op_decl_const(4, "double", qinf);

  FILE *log = airfoil_open_log(&opt);
  double cells_total = (double)op_get_size(cells);
  double rms = 0.0, maxerr = 0.0;
  int errloc = 0;
  double cpu0, wall0, cpu1, wall1;

  op_profile_start("Airfoil");
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
