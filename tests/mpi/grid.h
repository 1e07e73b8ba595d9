/* A structured nx x ny quad grid for the MPI tests, in global numbering, and the block each
 * process declares (process r of P declares elements [N*r/P, N*(r+1)/P) of every set).
 * cells c = j*nx+i; nodes n = j*(nx+1)+i; edges: the interior sides, vertical ones first
 * (between cells (i-1,j) and (i,j)), then horizontal ones (between (i,j-1) and (i,j)). */
#ifndef OP2_TEST_GRID_H
#define OP2_TEST_GRID_H
#include <stdlib.h>

typedef struct {
  int nx, ny, ncell, nnode, nedge;
  int *ecell; /* 2 per edge */
  int *enode; /* 2 per edge */
  int *cnode; /* 4 per cell */
  double *x;  /* 2 per node */
  double *cx; /* 2 per cell: centre */
} grid;

static inline void grid_make(grid *g, int nx, int ny)
{
  int i, j, e = 0;
  g->nx = nx;
  g->ny = ny;
  g->ncell = nx * ny;
  g->nnode = (nx + 1) * (ny + 1);
  g->nedge = (nx - 1) * ny + nx * (ny - 1);
  g->ecell = (int *)malloc(sizeof(int) * 2 * (size_t)(g->nedge + 1));
  g->enode = (int *)malloc(sizeof(int) * 2 * (size_t)(g->nedge + 1));
  g->cnode = (int *)malloc(sizeof(int) * 4 * (size_t)g->ncell);
  g->x = (double *)malloc(sizeof(double) * 2 * (size_t)g->nnode);
  g->cx = (double *)malloc(sizeof(double) * 2 * (size_t)g->ncell);
  for (j = 0; j <= ny; j++)
    for (i = 0; i <= nx; i++) {
      g->x[2 * (j * (nx + 1) + i)] = i;
      g->x[2 * (j * (nx + 1) + i) + 1] = j;
    }
  for (j = 0; j < ny; j++)
    for (i = 0; i < nx; i++) {
      int c = j * nx + i, n = j * (nx + 1) + i;
      g->cnode[4 * c] = n;
      g->cnode[4 * c + 1] = n + 1;
      g->cnode[4 * c + 2] = n + nx + 2;
      g->cnode[4 * c + 3] = n + nx + 1;
      g->cx[2 * c] = i + 0.5;
      g->cx[2 * c + 1] = j + 0.5;
    }
  for (j = 0; j < ny; j++)
    for (i = 1; i < nx; i++, e++) {
      g->ecell[2 * e] = j * nx + i - 1;
      g->ecell[2 * e + 1] = j * nx + i;
      g->enode[2 * e] = j * (nx + 1) + i;
      g->enode[2 * e + 1] = (j + 1) * (nx + 1) + i;
    }
  for (j = 1; j < ny; j++)
    for (i = 0; i < nx; i++, e++) {
      g->ecell[2 * e] = (j - 1) * nx + i;
      g->ecell[2 * e + 1] = j * nx + i;
      g->enode[2 * e] = j * (nx + 1) + i;
      g->enode[2 * e + 1] = j * (nx + 1) + i + 1;
    }
}

static inline void grid_free(grid *g)
{
  free(g->ecell);
  free(g->enode);
  free(g->cnode);
  free(g->x);
  free(g->cx);
}

/* First element of process r's block of n elements over p processes. */
static inline int block_lo(int n, int r, int p) { return (int)((long long)n * r / p); }
static inline int block_n(int n, int r, int p) { return block_lo(n, r + 1, p) - block_lo(n, r, p); }

#endif
