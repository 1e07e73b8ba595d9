/* Issue 10, point 9: a device allocation that fails is OP2_ERR_OUT_OF_MEMORY naming the dat's
 * size, and the dat and its host data are unchanged (a later fetch gives them back). PoCL with
 * POCL_MEMORY_LIMIT=1 refuses buffers over 256 MiB; a 320 MiB dat is refused on opencl. Host
 * backends have no device memory: the loop runs. */
#include "test.h"

int main(int argc, char **argv)
{
  const size_t n = (size_t)40 << 20; /* 40 Mi doubles: 320 MiB */
  double *x = malloc(n * sizeof(double)), first[3], last[1];
  int dev;
  CHECK(x != NULL);
  for (size_t i = 0; i < n; i++) x[i] = (double)(i % 1000);
  setenv("POCL_MEMORY_LIMIT", "1", 1);
  test_init(argc, argv);
  dev = strcmp(argv[1], "opencl") == 0;
  {
    op_set s = op_decl_set((int)n, "big");
    op_dat d = op_decl_dat(s, 1, "double", x, "d");
    op_kernel k = op_decl_kernel("void inc(double *x) { x[0] += 1.0; }\n", "inc");
    free(x);
    op_set_error_handler(OP_ERRORS_RETURN);
    PAR_LOOP(k, "inc", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
    if (dev) {
      long long up = -1, down = -1;
      CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "op_par_loop 'inc', dat 'd': opencl: cannot allocate 335544320 bytes");
      op_dat_transfers(d, &up, &down);
      CHECK_INT(up, 0);
      CHECK_INT(down, 0);
    } else {
      CHECK_OK();
    }
    op_set_error_handler(OP_ERRORS_ABORT);
    op_fetch_data_idx(d, first, 0, 2);
    op_fetch_data_idx(d, last, (int)n - 1, (int)n - 1);
    CHECK_DBL(first[2], dev ? 2.0 : 3.0);
    CHECK_DBL(last[0], dev ? (double)((n - 1) % 1000) : (double)((n - 1) % 1000) + 1.0);
  }
  op_exit();
  return 0;
}
