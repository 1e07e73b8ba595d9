/*
 * check_mesh: validate an Airfoil mesh (new_grid.dat format).
 *
 *   check_mesh FILE...
 *
 * Checks, for each file:
 *  - format, counts and index ranges (the reader in examples-c/airfoil/airfoil_mesh.h);
 *  - every cell is counter-clockwise with positive area, and convex;
 *  - every interior edge "a b c1 c2" is a side of c1 traversed clockwise (b -> a is one of
 *    c1's counter-clockwise sides) and a side of c2 traversed counter-clockwise (a -> b), so
 *    its normal (dy, -dx) with (dx, dy) = xa - xb points from c1 into c2 (the convention of
 *    OP2's meshes, on which res_calc's "res1 += f, res2 -= f" relies); c1 != c2;
 *  - every boundary edge "a b c1 bound" is a clockwise side of c1 (its normal points out);
 *  - every side of every cell is claimed by exactly one edge (interior or boundary); nodes at
 *    the same position (e.g. the two sides of a C-mesh's wake cut) count as the same node;
 *  - the normals point the right way geometrically (centroid test), as a second opinion;
 *  - the boundary is made of closed loops, the wall (bound == 1) too; there is at least one
 *    wall edge and one far-field edge; every node belongs to a cell.
 * Exit status 0 if every file is valid, 1 otherwise (2 on usage errors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airfoil_mesh.h"

static const double *g_x;

static int cmp_node(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  double ax = g_x[2 * a], bx = g_x[2 * b], ay = g_x[2 * a + 1], by = g_x[2 * b + 1];
  if (ax != bx) return ax < bx ? -1 : 1;
  if (ay != by) return ay < by ? -1 : 1;
  return a - b;
}

typedef struct {
  const char *path;
  long nerr;
} checker;

static void fail(checker *ck, const char *fmt, ...) {
  ck->nerr++;
  if (ck->nerr <= 12) {
    va_list ap;
    fprintf(stderr, "check_mesh: %s: ", ck->path);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
  } else if (ck->nerr == 13) {
    fprintf(stderr, "check_mesh: %s: (further errors not shown)\n", ck->path);
  }
}

/* find side k of cell c going from rep `from` to rep `to`; -1 if none */
static int find_side(const airfoil_mesh *m, const int *rep, int c, int from, int to) {
  for (int k = 0; k < 4; k++)
    if (rep[m->cell[4 * c + k]] == from && rep[m->cell[4 * c + ((k + 1) & 3)]] == to) return k;
  return -1;
}

static int check_file(const char *path) {
  airfoil_mesh m;
  char err[1024];
  checker ck = {path, 0};
  if (airfoil_mesh_read(path, &m, err, sizeof err)) {
    fprintf(stderr, "check_mesh: %s\n", err);
    return 1;
  }
  const double *x = m.x;

  /* nodes at the same position share a representative */
  int *order = malloc(sizeof(int) * (size_t)m.nnode);
  int *rep = malloc(sizeof(int) * (size_t)m.nnode);
  for (int n = 0; n < m.nnode; n++) order[n] = n;
  g_x = x;
  qsort(order, (size_t)m.nnode, sizeof(int), cmp_node);
  long ndistinct = 0;
  for (int k = 0; k < m.nnode; k++) {
    int n = order[k];
    if (k > 0 && x[2 * n] == x[2 * order[k - 1]] && x[2 * n + 1] == x[2 * order[k - 1] + 1])
      rep[n] = rep[order[k - 1]];
    else {
      rep[n] = n;
      ndistinct++;
    }
  }
  free(order);

  /* cells: counter-clockwise, positive area, convex; node usage */
  double *cen = malloc(sizeof(double) * 2 * (size_t)m.ncell);
  char *used = calloc((size_t)(unsigned)m.nnode, 1);
  double amin = 1e300, amax = 0.0;
  long nonconvex = 0;
  for (int c = 0; c < m.ncell; c++) {
    const int *cn = m.cell + 4 * c;
    double area = 0.0, cx = 0.0, cy = 0.0;
    int convex = 1;
    for (int k = 0; k < 4; k++) {
      const double *p = x + 2 * cn[k], *q = x + 2 * cn[(k + 1) & 3], *r = x + 2 * cn[(k + 2) & 3];
      area += p[0] * q[1] - q[0] * p[1];
      double turn = (q[0] - p[0]) * (r[1] - q[1]) - (q[1] - p[1]) * (r[0] - q[0]);
      if (!(turn > 0.0)) convex = 0;
      cx += p[0];
      cy += p[1];
      used[cn[k]] = 1;
    }
    area *= 0.5;
    cen[2 * c] = 0.25 * cx;
    cen[2 * c + 1] = 0.25 * cy;
    if (!(area > 0.0))
      fail(&ck, "cell %d (nodes %d %d %d %d) has area %.3g: not counter-clockwise", c, cn[0], cn[1],
           cn[2], cn[3], area);
    else if (!convex) {
      nonconvex++;
      fail(&ck, "cell %d (nodes %d %d %d %d) is not convex", c, cn[0], cn[1], cn[2], cn[3]);
    }
    if (area < amin) amin = area;
    if (area > amax) amax = area;
  }
  for (int n = 0; n < m.nnode; n++)
    if (!used[n]) fail(&ck, "node %d belongs to no cell", n);
  free(used);

  /* every cell side claimed exactly once, with the right orientation */
  unsigned char *claimed = calloc((size_t)m.ncell, 1);
  for (int e = 0; e < m.nedge; e++) {
    int a = m.edge[2 * e], b = m.edge[2 * e + 1], c1 = m.ecell[2 * e], c2 = m.ecell[2 * e + 1];
    if (c1 == c2) {
      fail(&ck, "edge %d (%d %d %d %d): both cells are the same", e, a, b, c1, c2);
      continue;
    }
    int k1 = find_side(&m, rep, c1, rep[b], rep[a]);
    int k2 = find_side(&m, rep, c2, rep[a], rep[b]);
    if (k1 < 0) {
      if (find_side(&m, rep, c1, rep[a], rep[b]) >= 0)
        fail(&ck, "edge %d (%d %d %d %d): wrong orientation: %d -> %d is a counter-clockwise side "
                  "of c1 = %d, so the normal would point into c1 (swap the nodes or the cells)",
             e, a, b, c1, c2, a, b, c1);
      else
        fail(&ck, "edge %d (%d %d %d %d): nodes %d, %d are not a side of cell c1 = %d", e, a, b, c1,
             c2, a, b, c1);
    } else if (claimed[c1] & (1u << k1)) {
      fail(&ck, "edge %d (%d %d %d %d): side %d of cell %d is claimed twice", e, a, b, c1, c2, k1, c1);
    } else {
      claimed[c1] |= (unsigned char)(1u << k1);
    }
    if (k2 < 0) {
      if (find_side(&m, rep, c2, rep[b], rep[a]) >= 0)
        fail(&ck, "edge %d (%d %d %d %d): wrong orientation: %d -> %d is a clockwise side of "
                  "c2 = %d, so the normal would point out of c2",
             e, a, b, c1, c2, a, b, c2);
      else
        fail(&ck, "edge %d (%d %d %d %d): nodes %d, %d are not a side of cell c2 = %d", e, a, b, c1,
             c2, a, b, c2);
    } else if (claimed[c2] & (1u << k2)) {
      fail(&ck, "edge %d (%d %d %d %d): side %d of cell %d is claimed twice", e, a, b, c1, c2, k2, c2);
    } else {
      claimed[c2] |= (unsigned char)(1u << k2);
    }
    /* geometric second opinion: the normal points from c1's centroid towards c2's */
    double dx = x[2 * a] - x[2 * b], dy = x[2 * a + 1] - x[2 * b + 1];
    double d = dy * (cen[2 * c2] - cen[2 * c1]) - dx * (cen[2 * c2 + 1] - cen[2 * c1 + 1]);
    if (!(d > 0.0))
      fail(&ck, "edge %d (%d %d %d %d): normal (dy, -dx) does not point from c1 to c2", e, a, b,
           c1, c2);
  }

  /* boundary edges: out of their cell, closed loops */
  long nwall = 0, nfar = 0, nother = 0;
  int *bal = calloc((size_t)m.nnode, sizeof(int));
  int *wbal = calloc((size_t)m.nnode, sizeof(int));
  for (int e = 0; e < m.nbedge; e++) {
    int a = m.bedge[2 * e], b = m.bedge[2 * e + 1], c1 = m.becell[e], fl = m.bound[e];
    if (fl == 1)
      nwall++;
    else {
      nfar++;
      if (fl != 2) nother++;
    }
    int k1 = find_side(&m, rep, c1, rep[b], rep[a]);
    if (k1 < 0) {
      if (find_side(&m, rep, c1, rep[a], rep[b]) >= 0)
        fail(&ck, "boundary edge %d (%d %d %d %d): wrong orientation: %d -> %d is a "
                  "counter-clockwise side of cell %d, so the normal would point into the cell",
             e, a, b, c1, fl, a, b, c1);
      else
        fail(&ck, "boundary edge %d (%d %d %d %d): nodes %d, %d are not a side of cell %d", e, a,
             b, c1, fl, a, b, c1);
    } else if (claimed[c1] & (1u << k1)) {
      fail(&ck, "boundary edge %d (%d %d %d %d): side %d of cell %d is claimed twice", e, a, b, c1,
           fl, k1, c1);
    } else {
      claimed[c1] |= (unsigned char)(1u << k1);
    }
    double dx = x[2 * a] - x[2 * b], dy = x[2 * a + 1] - x[2 * b + 1];
    double mx = 0.5 * (x[2 * a] + x[2 * b]), my = 0.5 * (x[2 * a + 1] + x[2 * b + 1]);
    double d = dy * (mx - cen[2 * c1]) - dx * (my - cen[2 * c1 + 1]);
    if (!(d > 0.0))
      fail(&ck, "boundary edge %d (%d %d %d %d): normal (dy, -dx) does not point out of the cell",
           e, a, b, c1, fl);
    bal[rep[a]]++;
    bal[rep[b]]--;
    if (fl == 1) {
      wbal[rep[a]]++;
      wbal[rep[b]]--;
    }
  }
  for (int c = 0; c < m.ncell; c++)
    if (claimed[c] != 0xF)
      for (int k = 0; k < 4; k++)
        if (!(claimed[c] & (1u << k)))
          fail(&ck, "cell %d: side %d (nodes %d -> %d) belongs to no edge", c, k, m.cell[4 * c + k],
               m.cell[4 * c + ((k + 1) & 3)]);
  for (int n = 0; n < m.nnode; n++) {
    if (bal[n]) fail(&ck, "the boundary is not closed at node %d (%g, %g)", n, x[2 * n], x[2 * n + 1]);
    if (wbal[n]) fail(&ck, "the wall boundary is not closed at node %d (%g, %g)", n, x[2 * n], x[2 * n + 1]);
  }
  if (nwall == 0) fail(&ck, "no wall boundary edges (bound == 1)");
  if (nfar == 0) fail(&ck, "no far-field boundary edges (bound != 1)");
  free(bal);
  free(wbal);
  free(claimed);
  free(cen);
  free(rep);

  if (ck.nerr) {
    fprintf(stderr, "check_mesh: %s: INVALID (%ld problems)\n", path, ck.nerr);
  } else {
    printf("check_mesh: %s: ok: %d nodes (%ld distinct positions), %d cells (area %.3g .. %.3g), "
           "%d edges, %d boundary edges (%ld wall, %ld far field%s)\n",
           path, m.nnode, ndistinct, m.ncell, amin, amax, m.nedge, m.nbedge, nwall, nfar,
           nother ? ", some with flags other than 2" : "");
  }
  (void)nonconvex;
  am_free(&m);
  return ck.nerr ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    fprintf(argc < 2 ? stderr : stdout, "usage: check_mesh FILE...\n");
    return argc < 2 ? 2 : 0;
  }
  int bad = 0;
  for (int k = 1; k < argc; k++) bad |= check_file(argv[k]);
  return bad;
}
