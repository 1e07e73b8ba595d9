/* A name collision in an output file is OP2_ERR_FILE_FORMAT naming both objects, found before
 * anything is written (the file stays as it was), never one object silently dropped:
 * op_dump_to_hdf5 with a set and a dat of one name, with two dats of one name, with a dat
 * "a/b" beside a set "a" (HDF5 would make "a" a group); op_fetch_data_hdf5_file of a second
 * dat of the same name into the same file (the same dat again still overwrites in place), of a
 * dat over a map dataset of the same shape; op_write_const_hdf5 over a dat's dataset;
 * op_write_vtk with two point-data arrays of one name, and in legacy .vtk with names that
 * become one ("a b" is written "a_b"). After each refusal the file holds what it held before
 * (compared byte for byte) or does not exist. */
#include "test.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/op2-t521-XXXXXX";

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

/* The whole file, for byte comparisons (NULL when missing). */
static char *slurp(const char *path, long *len)
{
  *len = file_size(path);
  if (*len < 0) return NULL;
  char *b = malloc((size_t)*len + 1);
  FILE *f = fopen(path, "rb");
  CHECK(b != NULL && f != NULL);
  CHECK(fread(b, 1, (size_t)*len, f) == (size_t)*len);
  fclose(f);
  return b;
}

static void same_file(const char *path, const char *before, long len)
{
  long now;
  char *after = slurp(path, &now);
  CHECK(after != NULL);
  CHECK_INT(now, len);
  CHECK(memcmp(after, before, (size_t)len) == 0);
  free(after);
}

int main(int argc, char **argv)
{
  double x[2 * 6] = {0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1};
  int quads[4 * 2] = {0, 1, 4, 3, 1, 2, 5, 4}, edges[2 * 7] = {0, 1, 1, 2, 3, 4, 4, 5, 0, 3, 1, 4, 2, 5};
  int u[6] = {1, 2, 3, 4, 5, 6}, v[2] = {7, 8};
  long len;
  char *before;
  if (mkdtemp(dir) == NULL) test_fail_(__FILE__, __LINE__, "mkdtemp failed");

  test_init(argc, argv);
  op_set nodes = op_decl_set(6, "nodes");
  op_set cells = op_decl_set(2, "cells");
  op_set eset = op_decl_set(7, "edges");
  op_map pcell = op_decl_map(cells, nodes, 4, quads, "pcell");
  op_decl_map(eset, nodes, 2, edges, "pedge");
  op_dat dx = op_decl_dat(nodes, 2, "double", x, "p_x");
  op_dat du = op_decl_dat(nodes, 1, "int", u, "u");
  op_dat dv = op_decl_dat(cells, 1, "int", v, "v");

  /* a good dump first: the file the refused calls must leave alone */
  op_dump_to_hdf5(path_of("dump.h5"));
  CHECK_OK();
  before = slurp(path_of("dump.h5"), &len);
  CHECK(before != NULL && len > 0);

  op_set_error_handler(OP_ERRORS_RETURN);

  /* op_dump_to_hdf5: a dat named as a set */
  op_dat clash = op_decl_dat_temp_char(cells, 1, "int", 4, "nodes");
  op_dump_to_hdf5(path_of("dump.h5"));
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_dump_to_hdf5", "set 'nodes'", "dat 'nodes'", "nothing was written");
  same_file(path_of("dump.h5"), before, len);
  op_dump_to_hdf5(path_of("new.h5"));
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_dump_to_hdf5", "set 'nodes'", "dat 'nodes'");
  CHECK_INT(file_size(path_of("new.h5")), -1);
  /* two dats of one name */
  op_dat clash2 = op_decl_dat_temp_char(cells, 1, "int", 4, "v");
  op_free_dat_temp_char(clash);
  CHECK_OK();
  op_dump_to_hdf5(path_of("new.h5"));
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_dump_to_hdf5", "dat 'v' and dat 'v'");
  CHECK_INT(file_size(path_of("new.h5")), -1);
  op_free_dat_temp_char(clash2);

  /* fetch: a second dat of one name into one file; the same dat again is an overwrite */
  op_dat u2 = op_decl_dat_temp_char(nodes, 1, "int", 4, "u"); /* same shape as du */
  op_fetch_data_hdf5_file(du, path_of("fetch.h5"));
  CHECK_OK();
  op_fetch_data_hdf5_file(du, path_of("fetch.h5"));
  CHECK_OK();
  long flen;
  char *fbefore = slurp(path_of("fetch.h5"), &flen);
  op_fetch_data_hdf5_file(u2, path_of("fetch.h5"));
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_fetch_data_hdf5_file", "dat 'u' (on set 'nodes')", "fetched into",
            "left as it was");
  same_file(path_of("fetch.h5"), fbefore, flen);
  free(fbefore);
  op_free_dat_temp_char(u2);

  /* fetch of a dat over a map of the same shape and type ([7][2] int "pedge") */
  op_dat pe = op_decl_dat_temp_char(eset, 2, "int", 4, "pedge");
  op_fetch_data_hdf5_file(pe, path_of("dump.h5"));
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_fetch_data_hdf5_file", "dat 'pedge'", "dataset 'pedge'", "dat or map",
            "attribute size 7");
  same_file(path_of("dump.h5"), before, len);
  op_free_dat_temp_char(pe);

  /* a constant over a dat's dataset */
  double c = 2.5;
  op_write_const_hdf5("p_x", 1, "double", (char *)&c, path_of("dump.h5"));
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_write_const_hdf5", "constant 'p_x'", "dataset 'p_x'", "dat or map");
  same_file(path_of("dump.h5"), before, len);
  op_write_const_hdf5("nodes", 1, "double", (char *)&c, path_of("dump.h5"));
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_write_const_hdf5", "constant 'nodes'", "a set");
  same_file(path_of("dump.h5"), before, len);
  /* ... and a constant over a constant is a rewrite */
  op_write_const_hdf5("gam", 1, "double", (char *)&c, path_of("dump.h5"));
  CHECK_OK();
  c = 1.4;
  op_write_const_hdf5("gam", 1, "double", (char *)&c, path_of("dump.h5"));
  CHECK_OK();

  /* op_dump_to_hdf5: "a/b" inside a set "a" */
  op_decl_set(1, "a");
  op_dat ab = op_decl_dat_temp_char(nodes, 1, "int", 4, "/a//b");
  op_dump_to_hdf5(path_of("new.h5"));
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_dump_to_hdf5", "set 'a' and dat '/a//b'", "dataset 'a'");
  CHECK_INT(file_size(path_of("new.h5")), -1);
  op_free_dat_temp_char(ab);
  /* without the colliding objects the same dump is written */
  op_dump_to_hdf5(path_of("new.h5"));
  CHECK_OK();
  CHECK(file_size(path_of("new.h5")) > 0);

  /* VTK: two point-data arrays of one name; legacy names that become one */
  op_dat same[2] = {du, du};
  op_write_vtk(path_of("m.vtu"), pcell, dx, 2, same, OP_VTK_ASCII);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_write_vtk", "dats[0] 'u' and dats[1] 'u'", "point data array 'u'");
  CHECK_INT(file_size(path_of("m.vtu")), -1);
  op_dat s1 = op_decl_dat(nodes, 1, "int", u, "a b");
  op_dat s2 = op_decl_dat(nodes, 1, "int", u, "a_b");
  op_dat spaced[3] = {s1, dv, s2};
  op_write_vtk(path_of("m.vtu"), pcell, dx, 3, spaced, OP_VTK_ASCII); /* XML keeps both names */
  CHECK_OK();
  op_write_vtk(path_of("m.vtk"), pcell, dx, 3, spaced, OP_VTK_ASCII);
  CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_write_vtk", "dats[0] 'a b' and dats[2] 'a_b'", "'a_b'");
  CHECK_INT(file_size(path_of("m.vtk")), -1);
  /* a cell array may share a point array's name (separate sections) */
  op_dat cu = op_decl_dat(cells, 1, "int", v, "u");
  op_dat mixed[2] = {du, cu};
  op_write_vtk(path_of("m.vtk"), pcell, dx, 2, mixed, OP_VTK_BINARY);
  CHECK_OK();

  free(before);
  op_exit();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
  return 0;
}
