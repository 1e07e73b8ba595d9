/* Bad HDF5 files and mismatched calls are named errors, never crashes: a missing file
 * (OP2_ERR_IO), a dataset the file does not hold (OP2_ERR_NO_DATASET: the op_decl_*_hdf5 call
 * returns NULL and the program goes on also under the default exit handler, as OP2 lets a
 * program probe for an optional dataset; at diagnostics level 1 it says so), a file that is
 * not HDF5, a group where a dataset is expected, a wrong dim, a row count that disagrees with
 * the set, a lossy type conversion, a set dataset that lies (too large,
 * negative, several values), constants without OP2's attributes or of another type or dim, an
 * existing dataset of another shape (OP2_ERR_FILE_FORMAT), map entries out of range
 * (OP2_ERR_MAP_OUT_OF_RANGE). Failed declarations return NULL and later calls still work. */
#include "test.h"

#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t515-XXXXXX", path[256], text[256], missing[256];
  double x[10], d2[2] = {1.5, 2.5};
  int cmap[8] = {0, 1, 1, 2, 2, 3, 3, 4}, i;
  long long huge = 5000000000LL;
  int neg = -3, two[2] = {4, 5};
  if (mkdtemp(dir) == NULL) test_fail_(__FILE__, __LINE__, "mkdtemp failed");
  snprintf(path, sizeof path, "%s/mesh.h5", dir);
  snprintf(text, sizeof text, "%s/text.h5", dir);
  snprintf(missing, sizeof missing, "%s/missing.h5", dir);
  for (i = 0; i < 10; i++) x[i] = i + 0.5;
  FILE *f = fopen(text, "w");
  CHECK(f != NULL);
  fputs("this is not an HDF5 file\n", f);
  fclose(f);

  test_init(argc, argv);
  op_set nodes = op_decl_set(5, "nodes");
  op_set edges = op_decl_set(4, "edges");
  op_decl_map(edges, nodes, 2, cmap, "pedge");
  op_dat p_x = op_decl_dat(nodes, 2, "double", x, "p_x");
  op_decl_dat(nodes, 1, "double", x, "grp/q"); /* makes the group 'grp' */
  op_dump_to_hdf5(path);
  CHECK_OK();
  op_write_const_hdf5("huge", 1, "ll", (char *)&huge, path);
  op_write_const_hdf5("neg", 1, "int", (char *)&neg, path);
  op_write_const_hdf5("two", 2, "int", (char *)two, path);
  op_write_const_hdf5("d2", 2, "double", (char *)d2, path);
  CHECK_OK();

  /* absent datasets under the default handler: NULL, named, and the program goes on */
  CHECK(op_decl_dat_hdf5(nodes, 2, "double", path, "p_test") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_dat_hdf5", "no dataset 'p_test'", path);
  CHECK(op_decl_map_hdf5(edges, nodes, 2, path, "m_test") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_map_hdf5", "no dataset 'm_test'", path);
  CHECK(op_decl_set_hdf5(path, "s_test") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_set_hdf5", "no dataset 's_test'", path);

  op_set_error_handler(OP_ERRORS_RETURN);
  /* files */
  CHECK(op_decl_set_hdf5(missing, "nodes") == NULL);
  CHECK_ERR(OP2_ERR_IO, "op_decl_set_hdf5", "cannot open", "missing.h5");
  CHECK(op_decl_set_hdf5(text, "nodes") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_set_hdf5", "text.h5", "not a readable HDF5 file");
  CHECK(op_decl_set_hdf5(path, "cells") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_set_hdf5", "mesh.h5", "no dataset 'cells'");
  CHECK(op_decl_set_hdf5(path, "a/b/c") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_set_hdf5", "no dataset 'a/b/c'");
  CHECK(op_decl_dat_hdf5(nodes, 2, "double", missing, "p_x") == NULL);
  CHECK_ERR(OP2_ERR_IO, "op_decl_dat_hdf5", "missing.h5");
  CHECK(op_decl_map_hdf5(edges, nodes, 2, path, "nomap") == NULL);
  CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_map_hdf5", "no dataset 'nomap'");
  CHECK(op_decl_dat_hdf5(nodes, 1, "double", path, "grp") == NULL); /* present, not a dataset */
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "mesh.h5", "'grp' is not a dataset");

  /* lying or odd set datasets */
  CHECK(op_decl_set_hdf5(path, "huge") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_set_hdf5", "'huge'", "5000000000");
  CHECK(op_decl_set_hdf5(path, "neg") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_set_hdf5", "'neg'", "negative size -3");
  CHECK(op_decl_set_hdf5(path, "two") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_set_hdf5", "'two'", "2 elements", "expected 1");
  CHECK(op_decl_set_hdf5(path, "d2") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_set_hdf5", "'d2'", "64-bit float", "integer expected");

  /* dims and sizes */
  CHECK(op_decl_map_hdf5(edges, nodes, 3, path, "pedge") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_map_hdf5", "'pedge'", "mesh.h5", "dim 2", "expects dim 3");
  op_set e5 = op_decl_set(5, "edges5");
  CHECK(op_decl_map_hdf5(e5, nodes, 2, path, "pedge") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_map_hdf5", "'pedge'", "4 rows", "'edges5' has 5 elements");
  CHECK(op_decl_dat_hdf5(nodes, 1, "double", path, "p_x") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "'p_x'", "dim 2", "expects dim 1");
  op_set big = op_decl_set(1000000000, "big"); /* a set far larger than the file's rows */
  CHECK(op_decl_dat_hdf5(big, 2, "double", path, "p_x") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "'p_x'", "5 rows", "'big' has 1000000000 elements");

  /* types */
  CHECK(op_decl_dat_hdf5(nodes, 2, "int", path, "p_x") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "'p_x'", "64-bit float", "'int'", "without loss");
  CHECK(op_decl_dat_hdf5(nodes, 2, "float", path, "p_x") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "'float'", "without loss");
  CHECK(op_decl_dat_hdf5(nodes, 2, "quad", path, "p_x") == NULL);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_decl_dat_hdf5", "quad");
  CHECK(op_decl_map_hdf5(nodes, nodes, 2, path, "p_x") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_map_hdf5", "'p_x'", "64-bit float", "integers expected");

  /* map entries out of range for a smaller target set */
  op_set few = op_decl_set(3, "few");
  CHECK(op_decl_map_hdf5(edges, few, 2, path, "pedge") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map_hdf5", "'pedge'", "is 3", "outside [0, 3)", "'few'");

  /* constants */
  double q[2];
  int iv[2];
  op_get_const_hdf5("nodes", 1, "int", (char *)iv, path);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_get_const_hdf5", "'nodes'", "no integer 'dim' attribute");
  op_get_const_hdf5("d2", 2, "int", (char *)iv, path);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_get_const_hdf5", "'d2'", "type 'double'", "expects 'int'");
  op_get_const_hdf5("d2", 3, "double", (char *)q, path);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_get_const_hdf5", "'d2'", "dim 2", "expects dim 3");
  op_get_const_hdf5("gone", 1, "double", (char *)q, path);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_get_const_hdf5", "no dataset 'gone'");
  op_get_const_hdf5("d2", 2, "double", (char *)q, missing);
  CHECK_ERR(OP2_ERR_IO, "op_get_const_hdf5", "missing.h5");
  op_get_const_hdf5("d2", 2, "double", NULL, path);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_get_const_hdf5", "const_data");
  op_get_const_hdf5("d2", 2, "double", (char *)q, path);
  CHECK_OK();
  CHECK_DBL(q[0], 1.5);
  CHECK_DBL(q[1], 2.5);

  /* writing: an existing dataset of another shape is refused; a text file is not HDF5 */
  op_dat other = op_decl_dat_temp_char(edges, 2, "double", 8, "p_x");
  op_fetch_data_hdf5_file(other, path);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_fetch_data_hdf5_file", "'p_x'", "[5][2]", "[4][2]");
  op_free_dat_temp_char(other); /* two dats 'p_x' could not be dumped together (t521) */
  op_fetch_data_hdf5_file(p_x, text);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_fetch_data_hdf5_file", "text.h5");
  snprintf(missing, sizeof missing, "%s/no/such/dir.h5", dir);
  op_dump_to_hdf5(missing);
  CHECK_ERR(OP2_ERR_IO, "op_dump_to_hdf5", "no/such/dir.h5");

  /* a truncated copy of the file (its superblock promises more than is there) */
  char cut[256];
  snprintf(cut, sizeof cut, "%s/cut.h5", dir);
  {
    char *whole = NULL;
    long n;
    FILE *in = fopen(path, "rb"), *out = fopen(cut, "wb");
    CHECK(in != NULL && out != NULL);
    CHECK(fseek(in, 0, SEEK_END) == 0 && (n = ftell(in)) > 100 && fseek(in, 0, SEEK_SET) == 0);
    whole = malloc((size_t)n);
    CHECK(whole != NULL && fread(whole, 1, (size_t)n, in) == (size_t)n);
    CHECK(fwrite(whole, 1, (size_t)n / 2, out) == (size_t)n / 2);
    fclose(in);
    fclose(out);
    free(whole);
  }
  CHECK(op_decl_dat_hdf5(nodes, 2, "double", cut, "p_x") == NULL);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "cut.h5");
  CHECK(unlink(cut) == 0);

  /* still usable */
  op_dat ok = op_decl_dat_hdf5(nodes, 2, "double", path, "p_x");
  CHECK_OK();
  CHECK(ok != NULL);
  op_exit();

  /* at diagnostics level 1 process 0 says that an absent dataset gave NULL (stdout captured) */
  {
    char out[256], token[64], said[1024] = {0}, want[512];
    int fd, saved;
    snprintf(out, sizeof out, "%s/stdout.txt", dir);
    snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
    fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    fflush(stdout);
    saved = dup(1);
    CHECK(saved >= 0 && dup2(fd, 1) == 1);
    test_init_tokens("t515", token, "OP2_DIAGNOSTICS=1", (const char *)NULL);
    CHECK(op_decl_set_hdf5(path, "s_test") == NULL);
    op_exit();
    fflush(stdout);
    CHECK(dup2(saved, 1) == 1);
    close(saved);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    CHECK(read(fd, said, sizeof said - 1) > 0);
    close(fd);
    snprintf(want, sizeof want, "op2: op_decl_set_hdf5: file '%s' has no dataset 's_test': returned NULL\n", path);
    if (strstr(said, want) == NULL) test_fail_(__FILE__, __LINE__, "no \"%s\" in:\n%s", want, said);
    CHECK(unlink(out) == 0);
  }
  CHECK(unlink(path) == 0 && unlink(text) == 0 && rmdir(dir) == 0);
  return 0;
}
