/* Issue 10, point 3: dats live on the device between loops and move only when needed, counted
 * exactly by op_dat_transfers. On a device backend: the first loop uploads what it reads, a
 * direct OP_WRITE over the whole set uploads nothing, a steady time loop moves nothing (globals
 * aside), a fetch after a device write downloads once and a second fetch not again. Host backends
 * never copy: every count is 0. */
#include "test.h"

#define CHECK_MOVES(dat, up, down)                                                               \
  do {                                                                                           \
    long long u_ = -1, d_ = -1;                                                                  \
    op_dat_transfers((dat), &u_, &d_);                                                           \
    CHECK_INT(u_, dev ? (up) : 0);                                                               \
    CHECK_INT(d_, dev ? (down) : 0);                                                             \
  } while (0)

int main(int argc, char **argv)
{
  enum { N = 5000 };
  static double xs[N], out[N];
  const long long B = (long long)sizeof(double) * N;
  double norm = 0;
  int i, it, dev;
  for (i = 0; i < N; i++) xs[i] = i;
  test_init(argc, argv);
  dev = strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0;
  {
    op_set s = op_decl_set(N, "s");
    op_dat x = op_decl_dat(s, 1, "double", xs, "x");
    op_dat y = op_decl_dat(s, 1, "double", NULL, "y");
    op_kernel dbl = op_decl_kernel("void dbl(const double *x, double *y) { y[0] = 2.0 * x[0]; }\n", "dbl");
    op_kernel step = op_decl_kernel("void step(double *y, const double *x, double *n) { y[0] += x[0]; *n += y[0]; }\n",
                                    "step");
    CHECK_MOVES(x, 0, 0);
    PAR_LOOP(dbl, "dbl", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(y, -1, OP_ID, 1, "double", OP_WRITE));
    CHECK_MOVES(x, B, 0);
    CHECK_MOVES(y, 0, 0); /* written whole: allocated, never uploaded */
    for (it = 0; it < 10; it++)
      PAR_LOOP(step, "step", s, op_arg_dat(y, -1, OP_ID, 1, "double", OP_RW),
               op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&norm, 1, "double", OP_INC));
    CHECK_MOVES(x, B, 0);
    CHECK_MOVES(y, 0, 0); /* steady loop: nothing moved */
    op_fetch_data(y, out);
    for (i = 0; i < N; i++) CHECK_DBL(out[i], 12.0 * i);
    CHECK_MOVES(y, 0, B);
    op_fetch_data(y, out); /* still current on the host: no second download */
    CHECK_MOVES(y, 0, B);
    op_fetch_data(x, out); /* never written on the device: no download */
    CHECK_MOVES(x, B, 0);
    PAR_LOOP(step, "step", s, op_arg_dat(y, -1, OP_ID, 1, "double", OP_RW),
             op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&norm, 1, "double", OP_INC));
    CHECK_MOVES(y, 0, B); /* the device copy was still current: no upload */
    op_fetch_data(y, out);
    CHECK_DBL(out[N - 1], 13.0 * (N - 1));
    CHECK_MOVES(y, 0, 2 * B);
  }
  op_exit();
  return 0;
}
