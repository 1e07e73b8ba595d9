/* op_write_vtk under MPI: after op_partition each process writes <stem>_<rank>.vtu (its owned
 * cells and the nodes they use) and process 0 <stem>.pvtu naming the pieces, in every .vtu
 * encoding; point data written by an OP_INC loop (stale halo copies) is refreshed first.
 * Before op_partition, and for legacy .vtk, a named error on every process. The files stay in
 * the test directory (t855-<P>[-ascii|-b64].vtu/.pvtu); tests/mpi/vtksame.py (make
 * test-mpi-io) checks through meshio that the pieces of P=2 and 3 hold exactly P=1's points,
 * cells and data.
 * mpi-n: 1 2 3 */
#include "grid.h"
#include "test.h"
#include <mpi.h>
#include <sys/stat.h>

static const char *k_sum =
    "void sum(const double *a, const double *b, const double *c, const double *d, double *r)"
    " { r[0] = a[0] + a[1] + b[0] + b[1] + c[0] + c[1] + d[0] + d[1]; }\n";
static const char *k_touch =
    "void touch(double *a, double *b, double *c, double *d) { *a += 1.0; *b += 1.0; *c += 1.0; *d += 1.0; }\n";

int main(int argc, char **argv)
{
  int rank, p, i;
  char name[64];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 2) return 2;
  char token[64];
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  test_init_tokens(argv[0], token, (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
  grid g;
  grid_make(&g, 6, 4);
  int c0 = block_lo(g.ncell, rank, p), nc = block_n(g.ncell, rank, p);
  int n0 = block_lo(g.nnode, rank, p), nn = block_n(g.nnode, rank, p);
  int e0 = block_lo(g.nedge, rank, p), ne = block_n(g.nedge, rank, p);
  op_set nodes = op_decl_set(nn, "nodes");
  op_set cells = op_decl_set(nc, "cells");
  op_set edges = op_decl_set(ne, "edges");
  op_map pcell = op_decl_map(cells, nodes, 4, g.cnode + 4 * c0, "pcell");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
  op_dat x = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "p_x");
  double *q = malloc(sizeof(double) * 2 * (size_t)(nc + 1));
  for (i = 0; i < nc; i++) {
    q[2 * i] = 0.5 * (c0 + i);
    q[2 * i + 1] = 1.0 / (c0 + i + 1);
  }
  op_dat dq = op_decl_dat(cells, 2, "double", q, "q");
  free(q);
  op_dat r = op_decl_dat(cells, 1, "double", NULL, "r");
  op_dat u = op_decl_dat(nodes, 1, "double", NULL, "u");
  op_dat out[3] = {r, u, dq};
  CHECK_OK();
  if (p > 1) {
    op_write_vtk("t855-early.vtu", pcell, x, 3, out, OP_VTK_BINARY);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_write_vtk", "call op_partition first");
  }
  op_partition("METIS", "KWAY", cells, pecell, x);
  CHECK_OK();
  PAR_LOOP(op_decl_kernel(k_sum, "sum"), "sum", cells, op_arg_dat(x, 0, pcell, 2, "double", OP_READ),
           op_arg_dat(x, 1, pcell, 2, "double", OP_READ), op_arg_dat(x, 2, pcell, 2, "double", OP_READ),
           op_arg_dat(x, 3, pcell, 2, "double", OP_READ), op_arg_dat(r, -1, OP_ID, 1, "double", OP_WRITE));
  PAR_LOOP(op_decl_kernel(k_touch, "touch"), "touch", cells, op_arg_dat(u, 0, pcell, 1, "double", OP_INC),
           op_arg_dat(u, 1, pcell, 1, "double", OP_INC), op_arg_dat(u, 2, pcell, 1, "double", OP_INC),
           op_arg_dat(u, 3, pcell, 1, "double", OP_INC));
  CHECK_OK();
  const char *mode[3] = {"", "-ascii", "-b64"};
  int flags[3] = {OP_VTK_BINARY, OP_VTK_ASCII, OP_VTK_BASE64};
  for (int m = 0; m < 3; m++) {
    snprintf(name, sizeof name, "t855-%d%s.vtu", p, mode[m]);
    op_write_vtk(name, pcell, x, 3, out, flags[m]);
    CHECK_OK();
  }
  if (p > 1) {
    op_write_vtk("t855.vtk", pcell, x, 3, out, OP_VTK_BINARY);
    CHECK_ERR(OP2_ERR_BAD_NAME, "op_write_vtk", "legacy .vtk holds one piece", "<stem>_<rank>.vtu");
    /* every piece is there once op_write_vtk returns, and the index names them */
    struct stat st;
    for (i = 0; i < p; i++) {
      snprintf(name, sizeof name, "t855-%d_%d.vtu", p, i);
      CHECK(stat(name, &st) == 0 && st.st_size > 0);
    }
    snprintf(name, sizeof name, "t855-%d.pvtu", p);
    char *index = test_read_file(name);
    CHECK(index != NULL);
    snprintf(name, sizeof name, "<Piece Source=\"t855-%d_%d.vtu\"/>", p, p - 1);
    CHECK(strstr(index, name) != NULL);
    CHECK(strstr(index, "<PDataArray type=\"Float64\" Name=\"q\" NumberOfComponents=\"2\"/>") != NULL);
    free(index);
  }
  op_exit();
  grid_free(&g);
  MPI_Finalize();
  return 0;
}
