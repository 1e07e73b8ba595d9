/* Files are read as files (issue 21, point 2): a FIFO with no writer given as an HDF5 mesh, a
 * constant's file or a kernel file is OP2_ERR_IO at once (opened O_NONBLOCK, then refused as
 * not a regular file; before, the open blocked forever), as are a directory and a character
 * device; the session goes on. A watchdog alarm turns a hang into a failure. */
#include "test.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void hung(int sig)
{
  (void)sig;
  static const char msg[] = "t516: a call blocked on a FIFO for 20 s\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
  _exit(2);
}

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t516-XXXXXX", fifo[256];
  double gam = 0.0, x[3] = {1, 2, 3}, out[3];
  op_set s;
  op_dat d;
  int hdf5;

  test_init(argc, argv);
  CHECK(mkdtemp(dir) != NULL);
  snprintf(fifo, sizeof fifo, "%s/mesh.h5", dir);
  CHECK(mkfifo(fifo, 0600) == 0);
  signal(SIGALRM, hung);
  /* A hang guard, not a time limit: a blocking open never returns at all (no assertion here
   * may depend on the machine being idle). */
  alarm(test_budget(300));
  op_set_error_handler(OP_ERRORS_RETURN);

  CHECK(op_decl_set_hdf5(fifo, "nodes") == NULL);
  hdf5 = op_last_error_code() != OP2_ERR_BACKEND_UNAVAILABLE;
  if (hdf5) {
    CHECK_ERR(OP2_ERR_IO, "op_decl_set_hdf5", fifo, "is a FIFO", "only regular files");
    op_get_const_hdf5("gam", 1, "double", (char *)&gam, fifo);
    CHECK_ERR(OP2_ERR_IO, "op_get_const_hdf5", fifo, "is a FIFO");
    CHECK(op_decl_set_hdf5(dir, "nodes") == NULL);
    CHECK_ERR(OP2_ERR_IO, "op_decl_set_hdf5", "is a directory");
    CHECK(op_decl_set_hdf5("/dev/null", "nodes") == NULL);
    CHECK_ERR(OP2_ERR_IO, "op_decl_set_hdf5", "'/dev/null' is a character device");
  }
  CHECK(op_decl_kernel_file(fifo, "k") == NULL);
  CHECK_ERR(OP2_ERR_IO, "op_decl_kernel_file", "'k'", fifo, "is a FIFO");
  CHECK(op_decl_kernel_file(dir, "k") == NULL);
  CHECK_ERR(OP2_ERR_IO, "op_decl_kernel_file", "is a directory");
  alarm(0);

  /* the session goes on */
  op_set_error_handler(OP_ERRORS_ABORT);
  s = op_decl_set(3, "s");
  d = op_decl_dat(s, 1, "double", x, "d");
  op_fetch_data(d, out);
  CHECK_DBL(out[2], 3.0);
  op_exit();
  unlink(fifo);
  rmdir(dir);
  return 0;
}
