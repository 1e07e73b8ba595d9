/* op_partition and the dats and maps declared from HDF5 (#36): under MPI it releases those whose
 * block and file are unchanged and reads them again from the file into the new layout
 * (OP2_PARTITION_REREAD, on by default), instead of migrating them. Checked here, on a 9x7 grid
 * written once by op_dump_to_hdf5 (t851-in-<P>.h5), in four sessions: RCB (coordinates read
 * again once the parts are known), PTSCOTCH KWAY (the prime map released after its graph),
 * METIS KWAY, and PTSCOTCH KWAY with OP2_PARTITION_REREAD=0 (everything migrates):
 * - a dat read again equals, row for row, owned and halo (exec and non-exec) rows alike, the
 *   same values declared from an array (which migrate): loops over edges and cells compare
 *   them through the maps read again, and count the rows that differ (a global sum, 0);
 * - the maps read again are the file's: each cell's centre from its four nodes, and each
 *   cell's number of edges, equal the grid's;
 * - a dat whose dataset is overwritten in the file (op_fetch_data_hdf5_file of another dat of
 *   its name, before op_partition) keeps the values it was declared with: the file changed, so
 *   it migrates instead of being read again;
 * - a dat all zero in the file stays zero; op_fetch_data gives every dat's declared block.
 * mpi-n: 1 2 3 */
#include "grid.h"
#include "test.h"
#include <mpi.h>

static const char *k_cmp =
    "void cmp(const double *a0, const double *a1, const double *b0, const double *b1,"
    " const double *z0, const double *z1, int *bad)"
    " { for (int k = 0; k < 3; k++) *bad += (a0[k] != b0[k]) + (a1[k] != b1[k]);"
    "   *bad += (z0[0] != 0.0) + (z1[0] != 0.0); }\n";
static const char *k_centre =
    "void centre(const double *a, const double *b, const double *c, const double *d,"
    " const double *ya, const double *yb, const double *yc, const double *yd, double *r, int *bad)"
    " { r[0] = 0.25 * (a[0] + b[0] + c[0] + d[0]); r[1] = 0.25 * (a[1] + b[1] + c[1] + d[1]);"
    "   for (int k = 0; k < 2; k++) *bad += (a[k] != ya[k]) + (b[k] != yb[k]) + (c[k] != yc[k]) + (d[k] != yd[k]); }\n";
static const char *k_count = "void count(double *l, double *r) { l[0] += 1.0; r[0] += 1.0; }\n";

/* The value of component k of cell c's q (exact in binary). */
static double qv(int c, int k) { return 0.5 * c + 0.125 * k - 3.0; }

static double want_edges(const grid *g, int c)
{
  int i = c % g->nx, j = c / g->nx;
  return (i > 0) + (i < g->nx - 1) + (j > 0) + (j < g->ny - 1);
}

static void init(const char *prog, const char *backend, const char *extra)
{
  char token[128];
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens(prog, token, extra, (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
}

int main(int argc, char **argv)
{
  int rank, p, i, k, s;
  char in[64], ff[64];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 2) return 2;
  snprintf(in, sizeof in, "t851-in-%d.h5", p);
  snprintf(ff, sizeof ff, "t851-flag-%d.h5", p);
  grid g;
  grid_make(&g, 9, 7);
  int c0 = block_lo(g.ncell, rank, p), nc = block_n(g.ncell, rank, p);
  int n0 = block_lo(g.nnode, rank, p), nn = block_n(g.nnode, rank, p);
  int e0 = block_lo(g.nedge, rank, p), ne = block_n(g.nedge, rank, p);
  double *q = malloc(sizeof(double) * 3 * (size_t)(nc + 1));
  int *flag = malloc(sizeof(int) * (size_t)(nc + 1));
  double *zero = calloc((size_t)nc + 1, sizeof(double));
  for (i = 0; i < nc; i++) {
    for (k = 0; k < 3; k++) q[3 * i + k] = qv(c0 + i, k);
    flag[i] = 3 * (c0 + i) - 7;
  }

  /* the input file, from the declared blocks */
  init(argv[0], argv[1], "OP2_DIAGNOSTICS=0");
  {
    op_set nodes = op_decl_set(nn, "nodes");
    op_set cells = op_decl_set(nc, "cells");
    op_set edges = op_decl_set(ne, "edges");
    op_decl_map(cells, nodes, 4, g.cnode + 4 * c0, "pcell");
    op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
    op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "p_x");
    op_decl_dat(cells, 3, "double", q, "p_q");
    op_decl_dat(cells, 1, "int", flag, "p_flag");
    op_decl_dat(cells, 1, "double", zero, "p_zero");
    CHECK_OK();
    op_dump_to_hdf5(in);
    op_dump_to_hdf5(ff);
    CHECK_OK();
  }
  op_exit();

  const char *lib[4] = {"RCB", "PTSCOTCH", "METIS", "PTSCOTCH"};
  const char *routine[4] = {NULL, "KWAY", "KWAY", "KWAY"};
  const char *extra[4] = {"OP2_PARTITION_REREAD=1", "OP2_PARTITION_REREAD=1", "OP2_PARTITION_REREAD=1",
                          "OP2_PARTITION_REREAD=0"};
  for (s = 0; s < 4; s++) {
    init(argv[0], argv[1], extra[s]);
    op_set nodes = op_decl_set_hdf5(in, "nodes");
    op_set cells = op_decl_set_hdf5(in, "cells");
    op_set edges = op_decl_set_hdf5(in, "edges");
    op_map pcell = op_decl_map_hdf5(cells, nodes, 4, in, "pcell");
    op_map pecell = op_decl_map_hdf5(edges, cells, 2, in, "pecell");
    op_dat xh = op_decl_dat_hdf5(nodes, 2, "double", in, "p_x");
    op_dat qh = op_decl_dat_hdf5(cells, 3, "double", in, "p_q");
    op_dat fh = op_decl_dat_hdf5(cells, 1, "int", ff, "p_flag");
    op_dat zh = op_decl_dat_hdf5(cells, 1, "double", in, "p_zero");
    op_dat xa = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "x_array");
    op_dat qa = op_decl_dat(cells, 3, "double", q, "q_array");
    CHECK_OK();
    /* p_flag's file (a copy of the input): its p_flag overwritten (same shape: in place) and
     * a dataset added: the file changed since p_flag was read, so p_flag must keep what it was
     * declared with (migrate), while the dats and maps of the other file are read again */
    int *other = malloc(sizeof(int) * (size_t)(nc + 1));
    for (i = 0; i < nc; i++) other[i] = 1000 + c0 + i;
    op_dat fo = op_decl_dat(cells, 1, "int", other, "p_flag");
    op_fetch_data_hdf5_file(fo, ff);
    op_dat added = op_decl_dat(cells, 1, "int", other, "p_added");
    op_fetch_data_hdf5_file(added, ff);
    CHECK_OK();
    free(other);

    op_partition(lib[s], routine[s], edges, pecell, xh);
    CHECK_OK();

    int bad = 0;
    op_kernel kcmp = op_decl_kernel(k_cmp, "cmp");
    PAR_LOOP(kcmp, "cmp", edges, op_arg_dat(qh, 0, pecell, 3, "double", OP_READ),
             op_arg_dat(qh, 1, pecell, 3, "double", OP_READ), op_arg_dat(qa, 0, pecell, 3, "double", OP_READ),
             op_arg_dat(qa, 1, pecell, 3, "double", OP_READ), op_arg_dat(zh, 0, pecell, 1, "double", OP_READ),
             op_arg_dat(zh, 1, pecell, 1, "double", OP_READ), op_arg_gbl(&bad, 1, "int", OP_INC));
    CHECK_OK();
    CHECK_INT(bad, 0);
    bad = 0;
    op_dat r = op_decl_dat(cells, 2, "double", NULL, "p_centre");
    op_kernel kcentre = op_decl_kernel(k_centre, "centre");
    PAR_LOOP(kcentre, "centre", cells, op_arg_dat(xh, 0, pcell, 2, "double", OP_READ),
             op_arg_dat(xh, 1, pcell, 2, "double", OP_READ), op_arg_dat(xh, 2, pcell, 2, "double", OP_READ),
             op_arg_dat(xh, 3, pcell, 2, "double", OP_READ), op_arg_dat(xa, 0, pcell, 2, "double", OP_READ),
             op_arg_dat(xa, 1, pcell, 2, "double", OP_READ), op_arg_dat(xa, 2, pcell, 2, "double", OP_READ),
             op_arg_dat(xa, 3, pcell, 2, "double", OP_READ), op_arg_dat(r, -1, OP_ID, 2, "double", OP_WRITE),
             op_arg_gbl(&bad, 1, "int", OP_INC));
    op_dat ecount = op_decl_dat(cells, 1, "double", NULL, "p_ecount");
    op_kernel kcount = op_decl_kernel(k_count, "count");
    PAR_LOOP(kcount, "count", edges, op_arg_dat(ecount, 0, pecell, 1, "double", OP_INC),
             op_arg_dat(ecount, 1, pecell, 1, "double", OP_INC));
    CHECK_OK();
    CHECK_INT(bad, 0);

    /* every dat's declared block, as declared */
    double *b = malloc(sizeof(double) * 3 * (size_t)(nc + nn + 1));
    int *fb = malloc(sizeof(int) * (size_t)(nc + 1));
    op_fetch_data(qh, b);
    for (i = 0; i < 3 * nc; i++) CHECK_DBL(b[i], q[i]);
    op_fetch_data(xh, b);
    for (i = 0; i < 2 * nn; i++) CHECK_DBL(b[i], g.x[2 * n0 + i]);
    op_fetch_data(zh, b);
    for (i = 0; i < nc; i++) CHECK_DBL(b[i], 0.0);
    op_fetch_data(fh, fb);
    for (i = 0; i < nc; i++) CHECK_INT(fb[i], 3 * (c0 + i) - 7);
    op_fetch_data(r, b);
    for (i = 0; i < 2 * nc; i++) CHECK_DBL(b[i], g.cx[2 * c0 + i]);
    op_fetch_data(ecount, b);
    for (i = 0; i < nc; i++) CHECK_DBL(b[i], want_edges(&g, c0 + i));
    CHECK_OK();
    free(b);
    free(fb);
    op_exit();
    /* the next session reads the original p_flag again */
    init(argv[0], argv[1], "OP2_DIAGNOSTICS=0");
    {
      op_set cells2 = op_decl_set(nc, "cells");
      op_decl_dat(cells2, 1, "int", flag, "p_flag");
      CHECK_OK();
      op_dump_to_hdf5(ff);
      CHECK_OK();
    }
    op_exit();
  }
  free(q);
  free(flag);
  free(zero);
  MPI_Finalize();
  return 0;
}
