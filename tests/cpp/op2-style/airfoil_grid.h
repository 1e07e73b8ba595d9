// airfoil_grid.h: what the Airfoil programs of this directory share, the parts OP2's own apps
// write out in each program: the command line, the text mesh, the flow constants and the rms
// log. Include it after the op2 headers. Not a kernel header: op2 only looks for <kernel>.h.
//
// Command line of every Airfoil here:
//   PROGRAM [MESH | --mesh MESH] [--iters N] [--rms-log FILE] [--save FILE]
//           [--partition LIB[:ROUTINE]] [--mem] [NAME=VALUE ...]
//   MESH        the mesh: new_grid.dat's text format (0-based), or OP2's HDF5 layout for
//               airfoil_hdf5 (default new_grid.dat, or new_grid.h5 for airfoil_hdf5)
//   --iters N   iterations (default 1000, OP2's)
//   --rms-log F "iteration rms" for every iteration (rms as %.17e), written by the root process,
//               the format of the C Airfoil's --rms-log (tests/airfoil/cmp_rms compares them)
//   --save F    the final q, written by op_print_dat_to_txtfile
//   --partition op_partition's library and routine (airfoil_mpi, airfoil_hdf5; default
//               PTSCOTCH:KWAY)
//   --mem       airfoil_hdf5: each process prints its peak resident memory after each stage
//   NAME=VALUE  op2's configuration tokens (OP2_BACKEND=threads, ...): op_init reads argv itself
#ifndef AIRFOIL_GRID_H
#define AIRFOIL_GRID_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct airfoil_options {
  const char *mesh;
  int iters;
  const char *rms_log;
  const char *save;
  char lib[64];
  const char *routine;
  int mem;
};

// Reads the command line above into *o (defaults first); exits with status 2 on a bad one.
static inline void airfoil_parse(int argc, char **argv, const char *default_mesh, airfoil_options *o) {
  o->mesh = default_mesh;
  o->iters = 1000;
  o->rms_log = NULL;
  o->save = NULL;
  snprintf(o->lib, sizeof o->lib, "PTSCOTCH");
  o->routine = "KWAY";
  o->mem = 0;
  int positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--mesh") && i + 1 < argc) {
      o->mesh = argv[++i];
    } else if (!strcmp(a, "--iters") && i + 1 < argc) {
      char *end;
      long n = strtol(argv[++i], &end, 10);
      if (*end || end == argv[i] || n < 0 || n > 100000000L) {
        fprintf(stderr, "%s: --iters needs a non-negative integer, got '%s'\n", argv[0], argv[i]);
        exit(2);
      }
      o->iters = (int)n;
    } else if (!strcmp(a, "--rms-log") && i + 1 < argc) {
      o->rms_log = argv[++i];
    } else if (!strcmp(a, "--save") && i + 1 < argc) {
      o->save = argv[++i];
    } else if (!strcmp(a, "--partition") && i + 1 < argc) {
      // LIB or LIB:ROUTINE; without a routine op_partition gets NULL (BLOCK, RCB, RANDOM)
      const char *p = argv[++i];
      const char *colon = strchr(p, ':');
      size_t n = colon ? (size_t)(colon - p) : strlen(p);
      if (n >= sizeof o->lib) n = sizeof o->lib - 1;
      memcpy(o->lib, p, n);
      o->lib[n] = '\0';
      o->routine = colon ? colon + 1 : NULL;
    } else if (!strcmp(a, "--mem")) {
      o->mem = 1;
    } else if (a[0] != '-' && strchr(a, '=')) {
      // an op2 token: op_init has it
    } else if (a[0] != '-' && positional == 0) {
      o->mesh = a;
      positional = 1;
    } else {
      fprintf(stderr, "%s: unknown or incomplete argument '%s'\n", argv[0], a);
      exit(2);
    }
  }
}

// The mesh in new_grid.dat's format: counts, node coordinates, cells (4 nodes), edges (2 nodes,
// 2 cells), boundary edges (2 nodes, 1 cell, boundary kind).
struct airfoil_grid {
  int nnode, ncell, nedge, nbedge;
  double *x;
  int *cell, *edge, *ecell, *bedge, *becell, *bound;
};

static inline void airfoil_grid_free(airfoil_grid *g) {
  free(g->x);
  free(g->cell);
  free(g->edge);
  free(g->ecell);
  free(g->bedge);
  free(g->becell);
  free(g->bound);
  memset(g, 0, sizeof *g);
}

// n indices read from f into v, each in [0, limit); 0 when all were there and in range.
static inline int airfoil_read_indices(FILE *f, int *v, int n, int limit) {
  for (int k = 0; k < n; k++)
    if (fscanf(f, "%d", &v[k]) != 1 || v[k] < 0 || v[k] >= limit) return -1;
  return 0;
}

// Reads the whole mesh at path into *g; on failure prints why to stderr and returns -1.
static inline int airfoil_read_grid(const char *path, airfoil_grid *g) {
  memset(g, 0, sizeof *g);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "airfoil: cannot open the mesh '%s'\n", path);
    return -1;
  }
  if (fscanf(f, "%d %d %d %d", &g->nnode, &g->ncell, &g->nedge, &g->nbedge) != 4 || g->nnode <= 0 ||
      g->ncell <= 0 || g->nedge < 0 || g->nbedge < 0) {
    fprintf(stderr, "airfoil: '%s' does not start with the counts 'nnode ncell nedge nbedge'\n", path);
    fclose(f);
    return -1;
  }
  g->x = (double *)malloc(sizeof(double) * 2 * (size_t)g->nnode);
  g->cell = (int *)malloc(sizeof(int) * 4 * (size_t)g->ncell);
  g->edge = (int *)malloc(sizeof(int) * 2 * (size_t)g->nedge + 1);
  g->ecell = (int *)malloc(sizeof(int) * 2 * (size_t)g->nedge + 1);
  g->bedge = (int *)malloc(sizeof(int) * 2 * (size_t)g->nbedge + 1);
  g->becell = (int *)malloc(sizeof(int) * (size_t)g->nbedge + 1);
  g->bound = (int *)malloc(sizeof(int) * (size_t)g->nbedge + 1);
  const char *bad = NULL;
  if (!g->x || !g->cell || !g->edge || !g->ecell || !g->bedge || !g->becell || !g->bound) bad = "out of memory";
  for (int n = 0; !bad && n < g->nnode; n++)
    if (fscanf(f, "%lf %lf", &g->x[2 * n], &g->x[2 * n + 1]) != 2) bad = "a node's coordinates";
  for (int n = 0; !bad && n < g->ncell; n++)
    if (airfoil_read_indices(f, &g->cell[4 * n], 4, g->nnode)) bad = "a cell's nodes";
  for (int n = 0; !bad && n < g->nedge; n++)
    if (airfoil_read_indices(f, &g->edge[2 * n], 2, g->nnode) ||
        airfoil_read_indices(f, &g->ecell[2 * n], 2, g->ncell))
      bad = "an edge's nodes and cells";
  for (int n = 0; !bad && n < g->nbedge; n++)
    if (airfoil_read_indices(f, &g->bedge[2 * n], 2, g->nnode) ||
        airfoil_read_indices(f, &g->becell[n], 1, g->ncell) || fscanf(f, "%d", &g->bound[n]) != 1)
      bad = "a boundary edge's nodes, cell and kind";
  fclose(f);
  if (bad) {
    fprintf(stderr, "airfoil: mesh '%s': %s (missing, not a number or out of range)\n", path, bad);
    airfoil_grid_free(g);
    return -1;
  }
  return 0;
}

// The flow constants, as the C Airfoil (examples-c/airfoil) computes them: single-precision
// literals widened to double, the free stream from Mach 0.4 at unit pressure and density.
static inline void airfoil_flow_constants(double *gam, double *gm1, double *cfl, double *eps,
                                          double *mach, double *alpha, double qinf[4]) {
  *gam = 1.4f;
  *gm1 = *gam - 1.0;
  *cfl = 0.9f;
  *eps = 0.05f;
  *mach = 0.4f;
  *alpha = 3.0 * atan(1.0) / 45.0;  // 3 degrees (unused by the kernels, as in OP2's Airfoil)
  double p = 1.0, r = 1.0;
  double u = sqrt(*gam * p / r) * *mach;
  double e = p / (r * *gm1) + 0.5 * u * u;
  qinf[0] = r;
  qinf[1] = r * u;
  qinf[2] = 0.0;
  qinf[3] = r * e;
}

// The rms log of --rms-log, opened on the root process only (NULL elsewhere or without it).
static inline FILE *airfoil_open_log(const airfoil_options *o) {
  if (!o->rms_log || !op_is_root()) return NULL;
  FILE *f = fopen(o->rms_log, "w");
  if (!f) {
    fprintf(stderr, "airfoil: cannot write the rms log '%s'\n", o->rms_log);
    exit(1);
  }
  return f;
}

// The process's peak resident memory so far (Linux /proc/self/status VmHWM, KiB; -1 without it).
static inline long airfoil_vmhwm_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6)) {
      kib = strtol(line + 6, NULL, 10);
      break;
    }
  fclose(f);
  return kib;
}

#endif  // AIRFOIL_GRID_H
