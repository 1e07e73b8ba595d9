/* op_partition with a k-way routine and no map (OP_ID): PTSCOTCH KWAY, PARMETIS KWAY, METIS
 * KWAY and PARMETIS GEOMKWAY partition by blocks, as OP2 does, instead of failing; with
 * OP2_DIAGNOSTICS=1 process 0 (only) says so. A ring of 4 cells per process whose edges join
 * cells far apart in the declared numbering (cell 5e mod N to 5(e+1) mod N), its map declared
 * with op_decl_map_long: after the call a direct loop writes each process's rank into the
 * cells it owns, and every cell g is owned by its declared block's process g/4 (the block
 * partition); an indirect increment gives every cell 2, and a gather through the map (halo
 * values) gives each edge the sum of its two cells' values. The program initialises MPI, so
 * op_exit leaves it for the next session.
 * mpi-n: 1 2 3 */
#include "test.h"
#include <mpi.h>
#include <unistd.h>

static const char *k_cnt = "void cnt(double *a, double *b) { *a += 1.0; *b += 1.0; }\n";
static const char *k_where = "void where(double *w) { w[0] = (double)me; }\n";
static const char *k_sum = "void sum2(const double *a, const double *b, double *s) { s[0] = a[0] + b[0]; }\n";

static void run(const char *backend, const char *lib, const char *routine)
{
  char token[128], out[64], want[160];
  static char text[65536];
  int rank, p, i, fd, saved;
  ssize_t got_bytes;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* stdout to a file while op2 runs at diagnostics level 1 */
  snprintf(out, sizeof out, "/tmp/op2-t816-XXXXXX");
  fd = mkstemp(out);
  CHECK(fd >= 0);
  fflush(stdout);
  saved = dup(1);
  CHECK(saved >= 0 && dup2(fd, 1) == 1);

  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens("t816", token, "OP2_DIAGNOSTICS=1", (const char *)NULL);
  p = op_num_ranks();
  {
    enum { B = 4 };
    int total = B * p, me = rank;
    long long e2c[2 * B];
    double xv[B], w[4 * 16], n[4 * 16], s[4 * 16];
    for (i = 0; i < B; i++) {
      int e = B * rank + i;
      e2c[2 * i] = (5LL * e) % total;
      e2c[2 * i + 1] = (5LL * (e + 1)) % total;
      xv[i] = 1.5 * (B * rank + i);
    }
    op_set cells = op_decl_set(B, "cells"), edges = op_decl_set(B, "edges");
    op_map pecell = op_decl_map_long(edges, cells, 2, e2c, "pecell");
    op_dat x = op_decl_dat(cells, 1, "double", xv, "x");
    op_dat wd = op_decl_dat(cells, 1, "double", NULL, "w");
    op_dat nd = op_decl_dat(cells, 1, "double", NULL, "n");
    op_dat sd = op_decl_dat(edges, 1, "double", NULL, "s");
    op_decl_const(1, "int", &me, "me");
    op_kernel kw = op_decl_kernel(k_where, "where");
    op_kernel kc = op_decl_kernel(k_cnt, "cnt");
    op_kernel ks = op_decl_kernel(k_sum, "sum2");
    CHECK_OK();

    op_partition(lib, routine, cells, OP_ID, NULL);
    CHECK_OK();
    PAR_LOOP(kw, "where", cells, op_arg_dat(wd, -1, OP_ID, 1, "double", OP_WRITE));
    PAR_LOOP(kc, "count", edges, op_arg_dat(nd, 0, pecell, 1, "double", OP_INC),
             op_arg_dat(nd, 1, pecell, 1, "double", OP_INC));
    PAR_LOOP(ks, "sum", edges, op_arg_dat(x, 0, pecell, 1, "double", OP_READ),
             op_arg_dat(x, 1, pecell, 1, "double", OP_READ), op_arg_dat(sd, -1, OP_ID, 1, "double", OP_WRITE));
    CHECK_OK();
    op_fetch_data_idx(wd, w, 0, total - 1);
    op_fetch_data_idx(nd, n, 0, total - 1);
    op_fetch_data_idx(sd, s, 0, total - 1);
    CHECK_OK();
    for (i = 0; i < total; i++) {
      CHECK_DBL(w[i], (double)(i / B)); /* cell i stayed with its declared block */
      CHECK_DBL(n[i], 2.0);
      CHECK_DBL(s[i], 1.5 * ((5 * i) % total) + 1.5 * ((5 * (i + 1)) % total));
    }
  }
  op_exit();

  fflush(stdout);
  CHECK(dup2(saved, 1) == 1);
  close(saved);
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
  got_bytes = read(fd, text, sizeof text - 1);
  CHECK(got_bytes >= 0);
  text[got_bytes] = '\0';
  close(fd);
  unlink(out);
  snprintf(want, sizeof want, "op2: op_partition %s %s without a map: partitioned by blocks", lib,
           routine);
  if (rank == 0) {
    if (strstr(text, want) == NULL) test_fail_(__FILE__, __LINE__, "no \"%s\" in:\n%s", want, text);
  } else {
    CHECK(strstr(text, "without a map") == NULL); /* said by process 0 only */
  }
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  if (argc < 2) return 2;
  run(argv[1], "PTSCOTCH", "KWAY");
  run(argv[1], "PARMETIS", "KWAY");
  run(argv[1], "METIS", "KWAY");
  run(argv[1], "PARMETIS", "GEOMKWAY");
  MPI_Finalize();
  return 0;
}
