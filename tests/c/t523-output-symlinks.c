/* A failed write cleans up what op2 wrote, never the user's symlink (issue 37, point 8). When a
 * write fails after the open, op2 removes the incomplete file; where the name asked for is a
 * symlink, that is the file the link leads to, and the link stays (before, the link was removed
 * and its target left truncated, and the next print of the name made a regular file there and
 * reported success).
 *  - out.txt -> /dev/full: op_print_dat_to_txtfile fails with OP2_ERR_IO (ENOSPC), nothing is
 *    removed (a device), the link is in place.
 *  - v.bin -> data/v-target.bin, v.txt -> data/v-target.txt and m.vtu -> data/m-target.vtu, a
 *    full disk simulated by RLIMIT_FSIZE (SIGXFSZ ignored, so write() fails with EFBIG): each
 *    call fails with OP2_ERR_IO saying the target was removed and the symlink kept; the link is
 *    in place, its target gone. With the limit lifted the same calls write through the links:
 *    the names are still symlinks and the targets hold the whole files. */
#include "test.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 4000 /* 4000 doubles: 32 000 bytes binary, more as text; the limit is 4096 bytes */

static char dir[] = "/tmp/op2-t523-XXXXXX";

static char *path_of(const char *name)
{
  static char buf[8][256];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static long file_size(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void check_link(const char *name, const char *to)
{
  struct stat st;
  char got[256];
  ssize_t n;
  if (lstat(path_of(name), &st) != 0 || !S_ISLNK(st.st_mode))
    test_fail_(__FILE__, __LINE__, "'%s' is no longer a symlink", name);
  n = readlink(path_of(name), got, sizeof got - 1);
  CHECK(n > 0);
  got[n] = '\0';
  CHECK_STR(got, to);
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
  char target[3][256];
  const char *names[3] = {"v.bin", "v.txt", "m.vtu"}, *targets[3] = {"v-target.bin", "v-target.txt", "m-target.vtu"};
  int i;
  CHECK(mkdtemp(dir) != NULL);
  CHECK(mkdir(path_of("data"), 0700) == 0);
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
  op_dat dats[1] = {p_v};
  op_set_error_handler(OP_ERRORS_RETURN);

  /* a symlink to /dev/full: every write fails with ENOSPC; a device is never removed */
  CHECK(symlink("/dev/full", path_of("out.txt")) == 0);
  op_print_dat_to_txtfile(p_v, path_of("out.txt"));
  CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_txtfile", "'p_v'", "out.txt", "No space left on device",
            "nothing was removed", "a character device");
  check_link("out.txt", "/dev/full");

  /* symlinks to regular files (one existing with other content, two not yet there) */
  for (i = 0; i < 3; i++) {
    snprintf(target[i], sizeof target[i], "data/%s", targets[i]);
    CHECK(symlink(target[i], path_of(names[i])) == 0);
  }
  {
    FILE *f = fopen(path_of("data/v-target.bin"), "w");
    CHECK(f != NULL);
    fputs("an older file\n", f);
    fclose(f);
  }
  signal(SIGXFSZ, SIG_IGN);
  set_fsize(4096);
  op_print_dat_to_binfile(p_v, path_of("v.bin"));
  CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_binfile", "'p_v'", "v.bin", "v-target.bin' was removed", "symlink",
            "was kept");
  op_print_dat_to_txtfile(p_v, path_of("v.txt"));
  CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_txtfile", "'p_v'", "v.txt", "v-target.txt' was removed", "was kept");
  op_write_vtk(path_of("m.vtu"), pedge, p_x, 1, dats, OP_VTK_BINARY);
  CHECK_ERR(OP2_ERR_IO, "op_write_vtk", "m.vtu", "m-target.vtu' was removed", "was kept");
  for (i = 0; i < 3; i++) {
    check_link(names[i], target[i]);
    CHECK_INT(file_size(path_of(target[i])), -1);
  }

  /* without the limit the same calls write through the links */
  set_fsize(RLIM_INFINITY);
  op_print_dat_to_binfile(p_v, path_of("v.bin"));
  CHECK_OK();
  op_print_dat_to_txtfile(p_v, path_of("v.txt"));
  CHECK_OK();
  op_write_vtk(path_of("m.vtu"), pedge, p_x, 1, dats, OP_VTK_BINARY);
  CHECK_OK();
  for (i = 0; i < 3; i++) check_link(names[i], target[i]);
  CHECK_INT(file_size(path_of("data/v-target.bin")), 2 * sizeof(int) + N * sizeof(double));
  CHECK(file_size(path_of("data/v-target.txt")) > 4096);
  CHECK(file_size(path_of("data/m-target.vtu")) > 4096);

  for (i = 0; i < 3; i++) {
    unlink(path_of(names[i]));
    unlink(path_of(target[i]));
  }
  unlink(path_of("out.txt"));
  rmdir(path_of("data"));
  rmdir(dir);
  op_exit();
  return 0;
}
