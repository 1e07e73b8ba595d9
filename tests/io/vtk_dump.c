/*
 * Writes meshes of every VTK cell type op_write_vtk supports (lines, triangles, quads,
 * tetrahedra, hexahedra), with dats of every type (double, float, int, uint, ll, ull, bool) and
 * dims 1..4 as point and cell data, in every mode (.vtu appended raw, ASCII, base64; .vtk binary,
 * ASCII), into the current directory; beside them the expected values through op2's own text
 * output (op_print_dat_to_binfile, exact) and the connectivity. Also op_dump_to_hdf5 of the last mesh.
 * tests/io/check_files.py compares what meshio and h5py read with these.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op2.h"

static const char *modes[5][2] = {{"binary", ".vtu"}, {"ascii", ".vtu"}, {"base64", ".vtu"},
                                  {"binary", ".vtk"}, {"ascii", ".vtk"}};
static const int flags[5] = {OP_VTK_BINARY, OP_VTK_ASCII, OP_VTK_BASE64, OP_VTK_BINARY, OP_VTK_ASCII};

static void write_mesh(const char *mesh, op_map cells, const int *conn, int ncell, int npc, op_dat coords,
                       int ndats, op_dat *dats, const char **names) {
  char path[256];
  for (int m = 0; m < 5; m++) {
    snprintf(path, sizeof path, "%s-%s%s", mesh, modes[m][0], modes[m][1]);
    op_write_vtk(path, cells, coords, ndats, dats, flags[m]);
  }
  /* The exact values (OP2's text format keeps only 16 significant digits). */
  snprintf(path, sizeof path, "%s.coords.bin", mesh);
  op_print_dat_to_binfile(coords, path);
  for (int d = 0; d < ndats; d++) {
    snprintf(path, sizeof path, "%s.%s.bin", mesh, names[d]);
    op_print_dat_to_binfile(dats[d], path);
  }
  snprintf(path, sizeof path, "%s.cells.txt", mesh);
  FILE *f = fopen(path, "w");
  if (!f) exit(1);
  fprintf(f, "%d %d\n", ncell, npc);
  for (int c = 0; c < ncell; c++)
    for (int k = 0; k < npc; k++) fprintf(f, "%d%c", conn[c * npc + k], k + 1 < npc ? ' ' : '\n');
  fclose(f);
  snprintf(path, sizeof path, "%s.list", mesh);
  f = fopen(path, "w");
  if (!f) exit(1);
  for (int d = 0; d < ndats; d++) fprintf(f, "%s\n", names[d]);
  fclose(f);
}

/* n values of every type, distinct and hard to print: full double/float precision, large
 * 64-bit integers, negative ints, alternating bools. */
static op_dat typed(op_set s, int n, int dim, const char *type, const char *name, int seed) {
  size_t cnt = (size_t)n * dim;
  void *buf = calloc(cnt, 8);
  for (size_t i = 0; i < cnt; i++) {
    double v = (double)(i + seed);
    if (!strcmp(type, "double")) ((double *)buf)[i] = 1.0 / (v + 3.0) - 1e5 * (i % 3);
    else if (!strcmp(type, "float")) ((float *)buf)[i] = (float)(1.0 / (v + 7.0));
    else if (!strcmp(type, "int")) ((int *)buf)[i] = (int)(i * 1000003u) - 7 * (int)seed;
    else if (!strcmp(type, "uint")) ((unsigned *)buf)[i] = 4000000000u - (unsigned)i;
    else if (!strcmp(type, "ll")) ((long long *)buf)[i] = -9000000000000000000LL + (long long)i * 3;
    else if (!strcmp(type, "ull")) ((unsigned long long *)buf)[i] = 18000000000000000000ULL + i;
    else if (!strcmp(type, "bool")) ((unsigned char *)buf)[i] = (unsigned char)(i % 2);
  }
  op_dat d = op_decl_dat(s, dim, type, buf, name);
  free(buf);
  return d;
}

int main(int argc, char **argv) {
  (void)argc;
  char *args[] = {argv[0], NULL};
  op_init(1, args, 0);

  /* quads: 4 x 3 grid of cells on 5 x 4 nodes, double coordinates */
  {
    int nx = 4, ny = 3, nn = (nx + 1) * (ny + 1), nc = nx * ny;
    double *x = malloc(sizeof(double) * 2 * nn);
    int *conn = malloc(sizeof(int) * 4 * nc);
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        x[2 * (j * (nx + 1) + i)] = i * 0.3 + 0.01 * j;
        x[2 * (j * (nx + 1) + i) + 1] = j / 3.0;
      }
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        int n0 = j * (nx + 1) + i, *c = conn + 4 * (j * nx + i);
        c[0] = n0, c[1] = n0 + 1, c[2] = n0 + nx + 2, c[3] = n0 + nx + 1;
      }
    op_set nodes = op_decl_set(nn, "qnodes"), cells = op_decl_set(nc, "qcells");
    op_map pcell = op_decl_map(cells, nodes, 4, conn, "pcell");
    op_dat px = op_decl_dat(nodes, 2, "double", x, "p_x");
    const char *names[] = {"u", "v", "q", "i", "ui", "l", "ul", "b"};
    op_dat dats[] = {typed(nodes, nn, 1, "double", "u", 1), typed(nodes, nn, 2, "float", "v", 2),
                     typed(cells, nc, 4, "double", "q", 3), typed(cells, nc, 1, "int", "i", 4),
                     typed(cells, nc, 1, "uint", "ui", 5), typed(cells, nc, 1, "ll", "l", 6),
                     typed(cells, nc, 1, "ull", "ul", 7), typed(cells, nc, 1, "bool", "b", 8)};
    write_mesh("quad", pcell, conn, nc, 4, px, 8, dats, names);
    /* triangles: each quad split in two, float coordinates (3 components) */
    float *xf = malloc(sizeof(float) * 3 * nn);
    for (int k = 0; k < nn; k++) xf[3 * k] = (float)x[2 * k], xf[3 * k + 1] = (float)x[2 * k + 1], xf[3 * k + 2] = 0.5f;
    int *tri = malloc(sizeof(int) * 6 * nc);
    for (int c = 0; c < nc; c++) {
      int *q = conn + 4 * c;
      tri[6 * c] = q[0], tri[6 * c + 1] = q[1], tri[6 * c + 2] = q[2];
      tri[6 * c + 3] = q[0], tri[6 * c + 4] = q[2], tri[6 * c + 5] = q[3];
    }
    op_set tcells = op_decl_set(2 * nc, "tcells");
    op_map ptri = op_decl_map(tcells, nodes, 3, tri, "ptri");
    op_dat pxf = op_decl_dat(nodes, 3, "float", xf, "p_xf");
    const char *tnames[] = {"w", "u"};
    op_dat tdats[] = {typed(tcells, 2 * nc, 3, "double", "w", 9), dats[0]};
    write_mesh("tri", ptri, tri, 2 * nc, 3, pxf, 2, tdats, tnames);
    /* lines: the horizontal edges */
    int ne = nx * (ny + 1), *ln = malloc(sizeof(int) * 2 * ne);
    for (int j = 0, e = 0; j <= ny; j++)
      for (int i = 0; i < nx; i++, e++) ln[2 * e] = j * (nx + 1) + i, ln[2 * e + 1] = j * (nx + 1) + i + 1;
    op_set edges = op_decl_set(ne, "ledges");
    op_map pline = op_decl_map(edges, nodes, 2, ln, "pline");
    const char *lnames[] = {"e"};
    op_dat ldats[] = {typed(edges, ne, 2, "int", "e", 10)};
    write_mesh("line", pline, ln, ne, 2, px, 1, ldats, lnames);
    free(x), free(conn), free(xf), free(tri), free(ln);
  }
  /* tetrahedra and hexahedra: two unit cubes along x (12 nodes), 2 hexes, and 2 tets */
  {
    double x[36];
    for (int k = 0; k < 12; k++) {
      int i = k % 3, j = (k / 3) % 2, l = k / 6;
      x[3 * k] = i, x[3 * k + 1] = j * 1.25, x[3 * k + 2] = l * 0.75;
    }
    int hex[16] = {0, 1, 4, 3, 6, 7, 10, 9, 1, 2, 5, 4, 7, 8, 11, 10};
    int tet[8] = {0, 1, 3, 6, 1, 2, 5, 7};
    op_set nodes = op_decl_set(12, "hnodes"), hexes = op_decl_set(2, "hexes"), tets = op_decl_set(2, "tets");
    op_map phex = op_decl_map(hexes, nodes, 8, hex, "phex");
    op_map ptet = op_decl_map(tets, nodes, 4, tet, "ptet");
    op_dat px = op_decl_dat(nodes, 3, "double", x, "p_x3");
    const char *hnames[] = {"h", "p"};
    op_dat hdats[] = {typed(hexes, 2, 2, "double", "h", 11), typed(nodes, 12, 1, "float", "p", 12)};
    write_mesh("hex", phex, hex, 2, 8, px, 2, hdats, hnames);
    const char *tnames[] = {"t"};
    op_dat tdats[] = {typed(tets, 2, 1, "ll", "t", 13)};
    write_mesh("tet", ptet, tet, 2, 4, px, 1, tdats, tnames);
  }
  op_dump_to_hdf5("dump.h5");
  double qinf[4] = {1, 0.5, 0, 2.5};
  op_write_const_hdf5("qinf", 4, "double", (char *)qinf, "dump.h5");
  op_exit();
  return 0;
}
