/* Nothing half-written is left under the name asked for: when a write fails part way (here the
 * process's file-size limit, RLIMIT_FSIZE, with SIGXFSZ ignored, so write() fails with EFBIG as
 * it would on a full disk), op_print_dat_to_txtfile, op_print_dat_to_binfile and op_write_vtk
 * return OP2_ERR_IO saying so and the file does not exist afterwards (before, the prints left
 * the first bytes of the dat under the name). With the limit lifted the same calls write the
 * whole file, and the session goes on. */
#include "test.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 4000 /* 4000 doubles: 32 000 bytes binary, more as text; the limit is 4096 bytes */

static char dir[] = "/tmp/op2-t522-XXXXXX";

static char *path_of(const char *name)
{
  static char buf[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static long file_size(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void set_fsize(rlim_t soft)
{
  struct rlimit rl;
  CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
  rl.rlim_cur = soft == RLIM_INFINITY ? rl.rlim_max : soft;
  CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
}

int main(int argc, char **argv)
{
  static double v[N], xy[2 * (N + 1)];
  static int cells[2 * N];
  int i;
  CHECK(mkdtemp(dir) != NULL);
  test_init(argc, argv);
  for (i = 0; i < N; i++) v[i] = 1.0 / (i + 3);
  for (i = 0; i <= N; i++) {
    xy[2 * i] = i;
    xy[2 * i + 1] = 0.5 * i;
  }
  for (i = 0; i < N; i++) {
    cells[2 * i] = i;
    cells[2 * i + 1] = i + 1;
  }
  op_set nodes = op_decl_set(N + 1, "nodes");
  op_set edges = op_decl_set(N, "edges");
  op_map pedge = op_decl_map(edges, nodes, 2, cells, "pedge");
  op_dat p_x = op_decl_dat(nodes, 2, "double", xy, "p_x");
  op_dat p_v = op_decl_dat(edges, 1, "double", v, "p_v");

  signal(SIGXFSZ, SIG_IGN);
  op_set_error_handler(OP_ERRORS_RETURN);
  set_fsize(4096);

  op_print_dat_to_txtfile(p_v, path_of("v.txt"));
  CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_txtfile", "'p_v'", "v.txt", "incomplete file was removed");
  CHECK_INT(file_size(path_of("v.txt")), -1);

  op_print_dat_to_binfile(p_v, path_of("v.bin"));
  CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_binfile", "'p_v'", "v.bin");
  CHECK_INT(file_size(path_of("v.bin")), -1);

  op_dat dats[1] = {p_v};
  op_write_vtk(path_of("m.vtu"), pedge, p_x, 1, dats, OP_VTK_BINARY);
  CHECK(op_last_error_code() == OP2_ERR_IO);
  CHECK_INT(file_size(path_of("m.vtu")), -1);

  /* A previous complete file of the name is not left truncated either. */
  set_fsize(RLIM_INFINITY);
  op_print_dat_to_binfile(p_v, path_of("v.bin"));
  CHECK_OK();
  CHECK_INT(file_size(path_of("v.bin")), 2 * sizeof(int) + N * sizeof(double));
  set_fsize(4096);
  op_print_dat_to_binfile(p_v, path_of("v.bin"));
  CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_binfile", "v.bin");
  CHECK_INT(file_size(path_of("v.bin")), -1);

  /* Without the limit every call writes its whole file. */
  set_fsize(RLIM_INFINITY);
  op_print_dat_to_txtfile(p_v, path_of("v.txt"));
  CHECK_OK();
  CHECK(file_size(path_of("v.txt")) > 4096);
  op_print_dat_to_binfile(p_v, path_of("v.bin"));
  CHECK_OK();
  CHECK_INT(file_size(path_of("v.bin")), 2 * sizeof(int) + N * sizeof(double));
  op_write_vtk(path_of("m.vtu"), pedge, p_x, 1, dats, OP_VTK_BINARY);
  CHECK_OK();
  CHECK(file_size(path_of("m.vtu")) > 4096);

  unlink(path_of("v.txt"));
  unlink(path_of("v.bin"));
  unlink(path_of("m.vtu"));
  rmdir(dir);
  op_exit();
  return 0;
}
