// reduction.cpp: global reductions as an OP2 C++ application (OP2's reduction test, widened):
// op_arg_gbl OP_INC, OP_MIN and OP_MAX on int and double globals, scalar and two-component, in
// a direct loop over cells and in indirect loops over edges (dats read and incremented through
// maps, op_arg_idx through a map). Every result is compared exactly with plain loops over the
// same mesh: the values are integers, halves, minima and maxima, which no order of combining
// changes. An OP_INC global keeps the value it had before the loop (ncells starts at 3).
// Silent and status 0 on success; names what differs and exits 1 otherwise.
//   reduction [MESH | --mesh MESH] [OP2 tokens]   (MESH: new_grid.dat's text format)

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_seq.h"

#include "count_cells.h"
#include "count_edges.h"
#include "edge_extent.h"
#include "edge_tags.h"

#include "airfoil_grid.h"

static int bad = 0;

static void expect_int(const char *what, long long got, long long want) {
  if (got != want) {
    fprintf(stderr, "reduction: %s: %lld, expected %lld\n", what, got, want);
    bad = 1;
  }
}

static void expect_double(const char *what, double got, double want) {
  if (got != want) {
    fprintf(stderr, "reduction: %s: %.17g, expected %.17g\n", what, got, want);
    bad = 1;
  }
}

int main(int argc, char **argv) {
  op_init(argc, argv, 0);

  airfoil_options opt;
  airfoil_parse(argc, argv, "new_grid.dat", &opt);
  airfoil_grid g;
  if (airfoil_read_grid(opt.mesh, &g)) exit(1);

  // a tag per cell, spread over [-500, 500]
  int *tag = (int *)op_malloc(sizeof(int) * g.ncell);
  double *res = (double *)op_malloc(sizeof(double) * 4 * g.ncell);
  for (int c = 0; c < g.ncell; c++) {
    tag[c] = (int)(((long long)c * 37) % 1001) - 500;
    for (int m = 0; m < 4; m++) res[4 * c + m] = 7.0;
  }

  op_set nodes = op_decl_set(g.nnode, "nodes");
  op_set edges = op_decl_set(g.nedge, "edges");
  op_set cells = op_decl_set(g.ncell, "cells");
  op_map pedge = op_decl_map(edges, nodes, 2, g.edge, "pedge");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell, "pecell");
  op_dat p_x = op_decl_dat(nodes, 2, "double", g.x, "p_x");
  op_dat p_res = op_decl_dat(cells, 4, "double", res, "p_res");
  op_dat p_tag = op_decl_dat(cells, 1, "int", tag, "p_tag");

  // direct
  int ncells = 3, tag_sum = 0, tag_min = INT_MAX, tag_max = INT_MIN;
  op_par_loop(count_cells, "count_cells", cells,
              op_arg_dat(p_res, -1, OP_ID, 4, "double", OP_WRITE),
              op_arg_dat(p_tag, -1, OP_ID, 1, "int", OP_READ),
              op_arg_gbl(&ncells, 1, "int", OP_INC),
              op_arg_gbl(&tag_sum, 1, "int", OP_INC),
              op_arg_gbl(&tag_min, 1, "int", OP_MIN),
              op_arg_gbl(&tag_max, 1, "int", OP_MAX));

  // indirect
  int nedges = 0;
  double halves = 0.0;
  op_par_loop(count_edges, "count_edges", edges,
              op_arg_dat(p_res, 0, pecell, 4, "double", OP_INC),
              op_arg_dat(p_res, 1, pecell, 4, "double", OP_INC),
              op_arg_gbl(&nedges, 1, "int", OP_INC),
              op_arg_gbl(&halves, 1, "double", OP_INC));

  double dx_max = 0.0, len2_min = HUGE_VAL;
  int cell_lo = INT_MAX, cell_hi = -1;
  op_par_loop(edge_extent, "edge_extent", edges,
              op_arg_dat(p_x, 0, pedge, 2, "double", OP_READ),
              op_arg_dat(p_x, 1, pedge, 2, "double", OP_READ),
              op_arg_idx(0, pecell),
              op_arg_idx(1, pecell),
              op_arg_gbl(&dx_max, 1, "double", OP_MAX),
              op_arg_gbl(&len2_min, 1, "double", OP_MIN),
              op_arg_gbl(&cell_lo, 1, "int", OP_MIN),
              op_arg_gbl(&cell_hi, 1, "int", OP_MAX));

  int pair_total = 0, pair_min = INT_MAX, pair_max = INT_MIN, signs[2] = {0, 0};
  op_par_loop(edge_tags, "edge_tags", edges,
              op_arg_dat(p_tag, 0, pecell, 1, "int", OP_READ),
              op_arg_dat(p_tag, 1, pecell, 1, "int", OP_READ),
              op_arg_gbl(&pair_total, 1, "int", OP_INC),
              op_arg_gbl(&pair_min, 1, "int", OP_MIN),
              op_arg_gbl(&pair_max, 1, "int", OP_MAX),
              op_arg_gbl(signs, 2, "int", OP_INC));

  // the same by plain loops
  long long want_tag_sum = 0;
  int want_tag_min = INT_MAX, want_tag_max = INT_MIN;
  for (int c = 0; c < g.ncell; c++) {
    want_tag_sum += tag[c];
    if (tag[c] < want_tag_min) want_tag_min = tag[c];
    if (tag[c] > want_tag_max) want_tag_max = tag[c];
  }
  double want_dx_max = 0.0, want_len2_min = HUGE_VAL;
  int want_lo = INT_MAX, want_hi = -1, want_pmin = INT_MAX, want_pmax = INT_MIN, want_signs[2] = {0, 0};
  long long want_ptotal = 0;
  double *want_res = (double *)op_malloc(sizeof(double) * 4 * g.ncell);
  for (int k = 0; k < 4 * g.ncell; k++) want_res[k] = 0.0;
  for (int e = 0; e < g.nedge; e++) {
    const double *x1 = &g.x[2 * g.edge[2 * e]], *x2 = &g.x[2 * g.edge[2 * e + 1]];
    double dx = x1[0] - x2[0], dy = x1[1] - x2[1];
    if (fabs(dx) > want_dx_max) want_dx_max = fabs(dx);
    if (dx * dx + dy * dy < want_len2_min) want_len2_min = dx * dx + dy * dy;
    int c1 = g.ecell[2 * e], c2 = g.ecell[2 * e + 1];
    want_res[4 * c1] += 1.0;
    want_res[4 * c2] += 1.0;
    if ((c1 < c2 ? c1 : c2) < want_lo) want_lo = c1 < c2 ? c1 : c2;
    if ((c1 < c2 ? c2 : c1) > want_hi) want_hi = c1 < c2 ? c2 : c1;
    int s = tag[c1] + tag[c2];
    want_ptotal += s;
    if (s < want_pmin) want_pmin = s;
    if (s > want_pmax) want_pmax = s;
    want_signs[0] += s > 0;
    want_signs[1] += s < 0;
  }

  expect_int("cells counted from 3", ncells, 3 + (long long)g.ncell);
  expect_int("sum of the cells' tags", tag_sum, want_tag_sum);
  expect_int("smallest tag", tag_min, want_tag_min);
  expect_int("largest tag", tag_max, want_tag_max);
  expect_int("edges counted", nedges, g.nedge);
  expect_double("half per edge", halves, 0.5 * g.nedge);
  expect_double("largest x extent of an edge", dx_max, want_dx_max);
  expect_double("smallest squared edge length", len2_min, want_len2_min);
  expect_int("smallest cell of an edge", cell_lo, want_lo);
  expect_int("largest cell of an edge", cell_hi, want_hi);
  expect_int("total of the edges' tag sums", pair_total, want_ptotal);
  expect_int("smallest tag sum of an edge", pair_min, want_pmin);
  expect_int("largest tag sum of an edge", pair_max, want_pmax);
  expect_int("edges with a positive tag sum", signs[0], want_signs[0]);
  expect_int("edges with a negative tag sum", signs[1], want_signs[1]);
  if (want_tag_min >= 0 || want_tag_max <= 0 || want_signs[0] == 0 || want_signs[1] == 0)
    expect_int("a mesh with tags of both signs (too small a mesh?)", 0, 1);

  // each cell's first residual component counts its edges; count_cells cleared the others
  op_fetch_data(p_res, res);
  int differ = 0;
  for (int k = 0; k < 4 * g.ncell; k++) differ += res[k] != want_res[k];
  expect_int("residual values that differ from the edge counts", differ, 0);

  op_exit();
  op_free(tag);
  op_free(res);
  op_free(want_res);
  airfoil_grid_free(&g);
  return bad;
}
