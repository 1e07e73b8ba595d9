/* op_write_vtk on a 2x2 quad mesh: every mode (.vtu appended raw, ASCII, appended base64;
 * .vtk binary, ASCII) is byte-identical to the golden files in tests/golden/vtk (the same
 * files the Rust unit test io::vtk::golden_files renders). The cell data `q` is set by a loop
 * first, so the file shows the values after the loop. */
#include "test.h"

#include <unistd.h>

static void check_same(const char *got_path, const char *want_path)
{
  FILE *a = fopen(got_path, "rb"), *b = fopen(want_path, "rb");
  long pos = 0;
  int ca, cb;
  if (a == NULL) test_fail_(__FILE__, __LINE__, "cannot open written file %s", got_path);
  if (b == NULL) test_fail_(__FILE__, __LINE__, "cannot open golden file %s (run from the repo root)", want_path);
  do {
    ca = fgetc(a);
    cb = fgetc(b);
    if (ca != cb)
      test_fail_(__FILE__, __LINE__, "%s differs from %s at byte %ld (%d vs %d)", got_path, want_path, pos, ca, cb);
    pos++;
  } while (ca != EOF);
  fclose(a);
  fclose(b);
}

int main(int argc, char **argv)
{
  static const char *modes[5][2] = {{"mesh2x2-binary.vtu", "0"}, {"mesh2x2-ascii.vtu", "1"},
                                    {"mesh2x2-base64.vtu", "2"}, {"mesh2x2-binary.vtk", "0"},
                                    {"mesh2x2-ascii.vtk", "1"}};
  double x[18], u[9], q[8];
  int cells[16], flag[4] = {1, -2, 30, 400};
  char dir[] = "/tmp/op2-t500-XXXXXX", path[256], golden[256];
  int i, j, m;

  for (j = 0; j < 3; j++)
    for (i = 0; i < 3; i++) {
      x[2 * (3 * j + i)] = i;
      x[2 * (3 * j + i) + 1] = j * 0.5 + 0.1;
    }
  for (j = 0; j < 2; j++)
    for (i = 0; i < 2; i++) {
      int n0 = 3 * j + i, *c = &cells[4 * (2 * j + i)];
      c[0] = n0;
      c[1] = n0 + 1;
      c[2] = n0 + 4;
      c[3] = n0 + 3;
    }
  for (i = 0; i < 9; i++) u[i] = 1.0 / (i + 3.0);
  for (i = 0; i < 8; i++) q[i] = 0.0;

  test_init(argc, argv);
  op_set nodes = op_decl_set(9, "nodes");
  op_set cset = op_decl_set(4, "cells");
  op_map pcell = op_decl_map(cset, nodes, 4, cells, "pcell");
  op_dat p_x = op_decl_dat(nodes, 2, "double", x, "x");
  op_dat p_u = op_decl_dat(nodes, 1, "double", u, "u");
  op_dat p_q = op_decl_dat(cset, 2, "double", q, "q");
  op_dat p_flag = op_decl_dat(cset, 1, "int", flag, "flag");
  /* q = (2c * 0.25 - 1e-7, (2c+1) * 0.25 - 1e-7) for cell c, computed by a loop */
  op_kernel k = op_decl_kernel("void setq(double *q, const int *c) {\n"
                               "  q[0] = (2 * c[0]) * 0.25 - 1.0e-7;\n"
                               "  q[1] = (2 * c[0] + 1) * 0.25 - 1.0e-7;\n}\n",
                               "setq");
  PAR_LOOP(k, "setq", cset, op_arg_dat(p_q, -1, OP_ID, 2, "double", OP_WRITE), op_arg_idx(-1, OP_ID));

  if (mkdtemp(dir) == NULL) test_fail_(__FILE__, __LINE__, "mkdtemp failed");
  op_dat dats[3] = {p_u, p_q, p_flag};
  for (m = 0; m < 5; m++) {
    snprintf(path, sizeof path, "%s/%s", dir, modes[m][0]);
    snprintf(golden, sizeof golden, "tests/golden/vtk/%s", modes[m][0]);
    op_write_vtk(path, pcell, p_x, 3, dats, atoi(modes[m][1]));
    CHECK_OK();
    check_same(path, golden);
    CHECK(unlink(path) == 0);
  }
  /* the order of dats does not matter beyond the order within point and cell data */
  op_dat dats2[3] = {p_q, p_u, p_flag};
  snprintf(path, sizeof path, "%s/again.vtu", dir);
  op_write_vtk(path, pcell, p_x, 3, dats2, OP_VTK_BINARY);
  CHECK_OK();
  check_same(path, "tests/golden/vtk/mesh2x2-binary.vtu");
  CHECK(unlink(path) == 0);
  CHECK(rmdir(dir) == 0);
  op_exit();
  return 0;
}
