/* An HDF5 declaration refused on one process only is refused on every process and declared on
 * none (issue 21, point 5): a map read from a file whose entries are in range everywhere but
 * in the last process's block (the file's map "m" reaches a set one element larger than the
 * set it is read into) is OP2_ERR_MAP_OUT_OF_RANGE on every process. A dataset absent from the
 * file is OP2_ERR_NO_DATASET on every process, and the call returns NULL without ending the
 * program also under the default (exit) handler, as OP2 lets a program probe for an optional
 * dataset; a dataset present for one process only (each asks another name) is
 * OP2_ERR_FILE_FORMAT on every process, naming the processes. Then the same map read into the right set, a dat read
 * from the file, op_partition (RANDOM, so elements move) and an indirect loop work, with every
 * value checked (before the fix the refused map stayed declared on the other processes and
 * op_partition failed on an index out of bounds).
 * mpi-n: 2 3 */
#include "test.h"
#include <stdlib.h>

static const char *k_dbl = "void dbl(const double *v, double *r) { r[0] = 2.0 * v[0]; }\n";

int main(int argc, char **argv)
{
  int rank, p, i, last;
  char file[64], msg[64];
  if (argc < 2) return 2;
  op_set_error_handler(OP_ERRORS_RETURN);
  test_init(argc, argv);
  CHECK_OK();
  p = op_num_ranks();
  op_rank(&rank);
  last = p - 1;
  snprintf(file, sizeof file, "t812-%d.h5", p);
  snprintf(msg, sizeof msg, "(on process %d)", last);

  /* 3 elements of a and b per process; c has one element fewer (the last process holds 2) */
  op_set a = op_decl_set(3, "a");
  op_set b = op_decl_set(3, "b");
  op_set c = op_decl_set(rank == last ? 2 : 3, "c");
  int mv[3];
  double vv[3], r[3];
  for (i = 0; i < 3; i++) {
    mv[i] = 3 * rank + i; /* a's element g reaches b's element g */
    vv[i] = 10.0 * (3 * rank + i);
  }
  op_decl_map(a, b, 1, mv, "m");
  op_decl_dat(b, 1, "double", vv, "v");
  CHECK_OK();
  op_dump_to_hdf5(file);
  CHECK_OK();

  /* "m" into c: entry 3p-1 (in the last block only) is outside c's 3p-1 elements */
  op_decl_map_hdf5(a, c, 1, file, "m");
  if (rank == last)
    CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map_hdf5", "'m'");
  else
    CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map_hdf5", "'m'", msg);
  /* absent everywhere: NULL under the default handler, the program goes on */
  op_set_error_handler(OP_ERRORS_ABORT);
  CHECK(op_decl_dat_hdf5(b, 1, "double", file, "nosuch") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_dat_hdf5", "no dataset 'nosuch'", file);
  CHECK(op_decl_map_hdf5(a, b, 1, file, "nomap") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_map_hdf5", "no dataset 'nomap'", file);
  CHECK(op_decl_set_hdf5(file, "noset") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_set_hdf5", "no dataset 'noset'", file);
  op_set_error_handler(OP_ERRORS_RETURN);
  /* present for process 0 only: one decision on every process, a format error naming them */
  CHECK(op_decl_dat_hdf5(b, 1, "double", file, rank == 0 ? "v" : "nosuch") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "on process(es) 0 but not on process(es) 1");

  op_map m = op_decl_map_hdf5(a, b, 1, file, "m");
  op_dat v = op_decl_dat_hdf5(b, 1, "double", file, "v");
  op_dat rd = op_decl_dat(a, 1, "double", NULL, "r");
  CHECK_OK();
  op_partition("RANDOM", NULL, b, m, NULL);
  CHECK_OK();
  op_kernel k = op_decl_kernel(k_dbl, "dbl");
  PAR_LOOP(k, "dbl", a, op_arg_dat(v, 0, m, 1, "double", OP_READ), op_arg_dat(rd, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_OK();
  op_fetch_data(rd, r);
  CHECK_OK();
  for (i = 0; i < 3; i++) CHECK_DBL(r[i], 20.0 * (3 * rank + i));
  op_exit();
  CHECK_OK();
  return 0;
}
