/* op_write_vtk refuses what it cannot write, with named errors, and writes no file then:
 * extension, flags, base64 for legacy, coordinates on the wrong set / of the wrong dim or type,
 * map dims without a VTK cell, dats on a third set, NULL arguments, an unwritable path. */
#include "test.h"

#include <sys/stat.h>
#include <unistd.h>

static int exists(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0;
}

int main(int argc, char **argv)
{
  double x[8] = {0, 0, 1, 0, 1, 1, 0, 1}, x1[4] = {0, 1, 2, 3};
  int ix[8] = {0, 0, 1, 0, 1, 1, 0, 1};
  int quad[4] = {0, 1, 2, 3}, five[5] = {0, 1, 2, 3, 0};
  int edges[4] = {0, 1, 1, 2};
  char dir[] = "/tmp/op2-t505-XXXXXX", path[256];

  test_init(argc, argv);
  op_set nodes = op_decl_set(4, "nodes");
  op_set cells = op_decl_set(1, "cells");
  op_set eset = op_decl_set(2, "edges");
  op_map pcell = op_decl_map(cells, nodes, 4, quad, "pcell");
  op_map p5 = op_decl_map(cells, nodes, 5, five, "p5");
  op_map pedge = op_decl_map(eset, nodes, 2, edges, "pedge");
  op_dat p_x = op_decl_dat(nodes, 2, "double", x, "p_x");
  op_dat p_x1 = op_decl_dat(nodes, 1, "double", x1, "p_x1");
  op_dat p_ix = op_decl_dat(nodes, 2, "int", ix, "p_ix");
  op_dat p_c = op_decl_dat(cells, 2, "double", NULL, "p_c");
  op_dat p_e = op_decl_dat(eset, 1, "double", NULL, "p_e");
  op_dat good[1] = {p_c}, bad[2] = {p_c, p_e};
  if (mkdtemp(dir) == NULL) test_fail_(__FILE__, __LINE__, "mkdtemp failed");

  op_set_error_handler(OP_ERRORS_RETURN);
  snprintf(path, sizeof path, "%s/a.txt", dir);
  op_write_vtk(path, pcell, p_x, 1, good, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_BAD_NAME, "op_write_vtk", ".vtu", ".vtk");
  CHECK(!exists(path));

  snprintf(path, sizeof path, "%s/a.vtu", dir);
  op_write_vtk(path, pcell, p_x, 1, good, 7);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_write_vtk", "flags 7");
  op_write_vtk(path, pcell, p_x, -1, good, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_write_vtk", "ndats -1");
  op_write_vtk(path, pcell, p_x, 2, NULL, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_write_vtk", "dats is NULL");
  op_write_vtk(NULL, pcell, p_x, 1, good, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_write_vtk", "file");
  op_write_vtk(path, pcell, p_c, 1, good, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_write_vtk", "'p_c'", "'cells'", "'pcell'", "'nodes'");
  op_write_vtk(path, pcell, p_x1, 1, good, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_write_vtk", "'p_x1'", "dim 1");
  op_write_vtk(path, pcell, p_ix, 1, good, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_write_vtk", "'p_ix'", "'int'");
  op_write_vtk(path, p5, p_x, 1, good, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_write_vtk", "'p5'", "dim 5");
  op_write_vtk(path, pcell, p_x, 2, bad, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_write_vtk", "dats[1] 'p_e'", "'edges'");
  op_write_vtk(path, pcell, p_x, 1, (op_dat[]){(op_dat)pcell}, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_write_vtk", "dats[0]");
  CHECK(!exists(path));

  snprintf(path, sizeof path, "%s/a.vtk", dir);
  op_write_vtk(path, pcell, p_x, 1, good, OP_VTK_BASE64);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_write_vtk", "OP_VTK_BASE64", ".vtu");
  CHECK(!exists(path));

  snprintf(path, sizeof path, "%s/no/such/dir/a.vtu", dir);
  op_write_vtk(path, pcell, p_x, 1, good, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_IO, "op_write_vtk", "cannot create", "no/such/dir/a.vtu");

  /* lines (edges -> nodes) with edge data: fine */
  snprintf(path, sizeof path, "%s/edges.vtu", dir);
  op_write_vtk(path, pedge, p_x, 1, &p_e, OP_VTK_ASCII);
  CHECK_OK();
  char *text = test_read_file(path);
  CHECK(text != NULL);
  CHECK(strstr(text, "<Piece NumberOfPoints=\"4\" NumberOfCells=\"2\">") != NULL);
  CHECK(strstr(text, "Name=\"types\" format=\"ascii\">\n          3 3\n") != NULL);
  CHECK(strstr(text, "Name=\"offsets\" format=\"ascii\">\n          2 4\n") != NULL);
  free(text);
  CHECK(unlink(path) == 0);
  CHECK(rmdir(dir) == 0);
  op_exit();
  return 0;
}
