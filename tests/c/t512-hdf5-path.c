/* op_fetch_data_hdf5_file_path (OP2's): a dat's values, after a loop changed them, written as a
 * dataset at a path inside groups of a new file (file and groups created), read back with
 * op_decl_dat_hdf5 from that path, equal value for value; a second dat into the same file
 * beside it; a dataset already at the path replaced by one of another shape and type; "/a//b/"
 * is "a/b"; a path naming no dataset is OP2_ERR_BAD_NAME; a group at the path, a dataset on the
 * way and a file that is not HDF5 are OP2_ERR_FILE_FORMAT and leave the file as it was. */
#include "test.h"

#include <unistd.h>

#define NN 6
#define NC 4

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t512-XXXXXX", path[256], text[256];
  double x[2 * NN], got[2 * NN];
  int flag[NC], fgot[NC], i;
  long long big[NC], lgot[NC];
  if (mkdtemp(dir) == NULL) test_fail_(__FILE__, __LINE__, "mkdtemp failed");
  snprintf(path, sizeof path, "%s/out.h5", dir);
  snprintf(text, sizeof text, "%s/text.h5", dir);
  for (i = 0; i < 2 * NN; i++) x[i] = 0.1 * i - 0.35;
  for (i = 0; i < NC; i++) {
    flag[i] = 100 - 7 * i;
    big[i] = 5000000000LL * (i - 2) + i;
  }
  FILE *f = fopen(text, "w");
  CHECK(f != NULL);
  fputs("not HDF5\n", f);
  fclose(f);

  test_init(argc, argv);
  op_set nodes = op_decl_set(NN, "nodes");
  op_set cells = op_decl_set(NC, "cells");
  op_dat p_x = op_decl_dat(nodes, 2, "double", x, "p_x");
  op_dat p_flag = op_decl_dat(cells, 1, "int", flag, "p_flag");
  op_dat p_big = op_decl_dat(cells, 1, "ll", big, "p_big");
  op_kernel k = op_decl_kernel("void twice(double *x) { x[0] *= 2.0; x[1] = -x[1] / 3.0; }\n", "twice");
  PAR_LOOP(k, "twice", nodes, op_arg_dat(p_x, -1, OP_ID, 2, "double", OP_RW));
  CHECK_OK();
  for (i = 0; i < NN; i++) {
    x[2 * i] *= 2.0;
    x[2 * i + 1] = -x[2 * i + 1] / 3.0;
  }

  /* new file, groups on the way created; a second dat beside it in the same file */
  op_fetch_data_hdf5_file_path(p_x, path, "results/step1/x");
  CHECK_OK();
  op_fetch_data_hdf5_file_path(p_flag, path, "/results//step1/flag/");
  CHECK_OK();
  op_dat r_x = op_decl_dat_hdf5(nodes, 2, "double", path, "results/step1/x");
  op_dat r_flag = op_decl_dat_hdf5(cells, 1, "int", path, "results/step1/flag");
  CHECK_OK();
  op_fetch_data(r_x, got);
  op_fetch_data(r_flag, fgot);
  for (i = 0; i < 2 * NN; i++) CHECK_DBL(got[i], x[i]);
  for (i = 0; i < NC; i++) CHECK_INT(fgot[i], flag[i]);

  /* the dataset at a path replaced by one of another shape and type */
  op_fetch_data_hdf5_file_path(p_big, path, "results/step1/x");
  CHECK_OK();
  op_dat r_big = op_decl_dat_hdf5(cells, 1, "ll", path, "results/step1/x");
  CHECK_OK();
  op_fetch_data(r_big, lgot);
  for (i = 0; i < NC; i++) CHECK_INT(lgot[i], big[i]);

  /* refused, the file left as it was */
  op_set_error_handler(OP_ERRORS_RETURN);
  op_fetch_data_hdf5_file_path(p_x, path, "");
  CHECK_ERR(OP2_ERR_BAD_NAME, "op_fetch_data_hdf5_file_path", "names no dataset");
  op_fetch_data_hdf5_file_path(p_x, path, "//");
  CHECK_ERR(OP2_ERR_BAD_NAME, "op_fetch_data_hdf5_file_path", "names no dataset");
  op_fetch_data_hdf5_file_path(p_x, path, "results/step1");
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_fetch_data_hdf5_file_path", "'results/step1'", "not a dataset");
  op_fetch_data_hdf5_file_path(p_x, path, "results/step1/flag/deeper");
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_fetch_data_hdf5_file_path", "'results/step1/flag'", "not a group");
  op_fetch_data_hdf5_file_path(p_x, text, "x");
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_fetch_data_hdf5_file_path", "text.h5");
  op_fetch_data_hdf5_file_path(NULL, path, "x");
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_fetch_data_hdf5_file_path");
  op_fetch_data_hdf5_file_path(p_x, path, NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_fetch_data_hdf5_file_path", "path_name");
  op_dat again = op_decl_dat_hdf5(cells, 1, "int", path, "results/step1/flag");
  CHECK_OK();
  op_fetch_data(again, fgot);
  for (i = 0; i < NC; i++) CHECK_INT(fgot[i], flag[i]);
  op_exit();
  CHECK(unlink(path) == 0 && unlink(text) == 0 && rmdir(dir) == 0);
  return 0;
}
