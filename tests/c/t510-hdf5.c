/* OP2's HDF5 functions, round trip: op_dump_to_hdf5 writes every set, map and dat (values set
 * by a loop); a new session declares them back with op_decl_*_hdf5 and gets the same values;
 * constants through op_write_const_hdf5 / op_get_const_hdf5; op_fetch_data_hdf5_file adds a
 * dat to an existing file and overwrites it in place; lossless conversions (float -> double,
 * int -> ll) are allowed. */
#include "test.h"

#include <unistd.h>

#define NN 7
#define NC 5

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t510-XXXXXX", path[256], path2[256];
  double x[2 * NN];
  float w[NC];
  int cmap[3 * NC], flag[NC], i;
  long long big[NC];
  if (mkdtemp(dir) == NULL) test_fail_(__FILE__, __LINE__, "mkdtemp failed");
  snprintf(path, sizeof path, "%s/mesh.h5", dir);
  snprintf(path2, sizeof path2, "%s/extra.h5", dir);
  for (i = 0; i < 2 * NN; i++) x[i] = 0.1 * i - 0.35;
  for (i = 0; i < NC; i++) {
    w[i] = 1.0f / (i + 1);
    flag[i] = 100 - 7 * i;
    big[i] = 5000000000LL * (i - 2);
    cmap[3 * i] = i;
    cmap[3 * i + 1] = (i + 1) % NN;
    cmap[3 * i + 2] = (i + 5) % NN;
  }

  test_init(argc, argv);
  op_set nodes = op_decl_set(NN, "nodes");
  op_set cells = op_decl_set(NC, "cells");
  op_set empty = op_decl_set(0, "empty");
  op_decl_map(cells, nodes, 3, cmap, "pcell");
  op_dat p_x = op_decl_dat(nodes, 2, "double", x, "p_x");
  op_decl_dat(cells, 1, "float", w, "p_w");
  op_dat p_flag = op_decl_dat(cells, 1, "int", flag, "p_flag");
  op_decl_dat(cells, 1, "ll", big, "p_big");
  op_decl_dat(empty, 3, "double", NULL, "p_none");
  op_kernel k = op_decl_kernel("void twice(double *x) { x[0] *= 2.0; x[1] = -x[1]; }\n", "twice");
  PAR_LOOP(k, "twice", nodes, op_arg_dat(p_x, -1, OP_ID, 2, "double", OP_RW));
  op_dump_to_hdf5(path);
  CHECK_OK();

  double qinf[4] = {1.0, 0.47328638264796924, 0.0, 2.6120000000000001};
  int iters = 42;
  op_write_const_hdf5("qinf", 4, "double", (char *)qinf, path);
  CHECK_OK();
  op_write_const_hdf5("iters", 1, "int", (char *)&iters, path);
  CHECK_OK();
  /* a dat into a new file, then again into the same file (overwritten in place) */
  op_fetch_data_hdf5_file(p_flag, path2);
  CHECK_OK();
  op_kernel k2 = op_decl_kernel("void inc(int *f) { f[0] += 1; }\n", "inc");
  PAR_LOOP(k2, "inc", cells, op_arg_dat(p_flag, -1, OP_ID, 1, "int", OP_RW));
  op_fetch_data_hdf5_file(p_flag, path2);
  CHECK_OK();
  op_exit();

  test_init(argc, argv);
  op_set n2 = op_decl_set_hdf5(path, "nodes");
  CHECK_OK();
  op_set c2 = op_decl_set_hdf5(path, "cells");
  op_set e2 = op_decl_set_hdf5(path, "empty");
  CHECK_INT(op_get_size(n2), NN);
  CHECK_INT(op_get_size(c2), NC);
  CHECK_INT(op_get_size(e2), 0);
  op_map m2 = op_decl_map_hdf5(c2, n2, 3, path, "pcell");
  CHECK_OK();
  CHECK(m2 != NULL);
  op_dat x2 = op_decl_dat_hdf5(n2, 2, "double", path, "p_x");
  CHECK_OK();
  double xo[2 * NN];
  op_fetch_data(x2, xo);
  for (i = 0; i < NN; i++) {
    CHECK_DBL(xo[2 * i], 2.0 * x[2 * i]);
    CHECK_DBL(xo[2 * i + 1], -x[2 * i + 1]);
  }
  /* float in the file, double asked: lossless */
  op_dat w2 = op_decl_dat_hdf5(c2, 1, "double", path, "p_w");
  CHECK_OK();
  double wo[NC];
  op_fetch_data(w2, wo);
  for (i = 0; i < NC; i++) CHECK_DBL(wo[i], (double)w[i]);
  /* int in the file, ll asked: lossless */
  op_dat f2 = op_decl_dat_hdf5(c2, 1, "ll", path, "p_flag");
  CHECK_OK();
  long long fo[NC], bo[NC];
  op_fetch_data(f2, fo);
  for (i = 0; i < NC; i++) CHECK_INT(fo[i], flag[i]);
  op_dat b2 = op_decl_dat_hdf5(c2, 1, "ll", path, "p_big");
  op_fetch_data(b2, bo);
  for (i = 0; i < NC; i++) CHECK_INT(bo[i], big[i]);
  op_decl_dat_hdf5(e2, 3, "double", path, "p_none");
  CHECK_OK();
  /* the map came back: a loop through it gathers the right nodes */
  op_dat s2 = op_decl_dat(c2, 1, "double", NULL, "s");
  op_kernel g = op_decl_kernel("void gather(const double *a, const double *b, const double *c, double *s)"
                               " { s[0] = a[0] + 10.0 * b[0] + 100.0 * c[0]; }\n",
                               "gather");
  PAR_LOOP(g, "gather", c2, op_arg_dat(x2, 0, m2, 2, "double", OP_READ), op_arg_dat(x2, 1, m2, 2, "double", OP_READ),
           op_arg_dat(x2, 2, m2, 2, "double", OP_READ), op_arg_dat(s2, -1, OP_ID, 1, "double", OP_WRITE));
  double so[NC];
  op_fetch_data(s2, so);
  for (i = 0; i < NC; i++)
    CHECK_DBL(so[i], xo[2 * cmap[3 * i]] + 10.0 * xo[2 * cmap[3 * i + 1]] + 100.0 * xo[2 * cmap[3 * i + 2]]);

  double q2[4] = {0, 0, 0, 0};
  int it2 = 0;
  op_get_const_hdf5("qinf", 4, "double", (char *)q2, path);
  CHECK_OK();
  for (i = 0; i < 4; i++) CHECK_DBL(q2[i], qinf[i]);
  op_get_const_hdf5("iters", 1, "int", (char *)&it2, path);
  CHECK_INT(it2, 42);

  /* the second file holds p_flag after the increment */
  int fl[NC];
  op_dat f3 = op_decl_dat_hdf5(c2, 1, "int", path2, "p_flag");
  CHECK_OK();
  op_fetch_data(f3, fl);
  for (i = 0; i < NC; i++) CHECK_INT(fl[i], flag[i] + 1);
  op_exit();
  CHECK(unlink(path) == 0 && unlink(path2) == 0 && rmdir(dir) == 0);
  return 0;
}
