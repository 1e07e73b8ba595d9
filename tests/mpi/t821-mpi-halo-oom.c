/* A halo exchange buffer refused on one process is OP2_ERR_OUT_OF_MEMORY on every process
 * (issue 37, point 1), and the session goes on. Two node dats of 131072 doubles per node (1 MiB
 * rows); a loop over edges reads them through the edge-node map after a direct loop wrote them
 * (dirty halos). The first read of `a` runs as usual (its exchange buffers are made and kept);
 * then the last process limits its address space to what it uses plus 2 MiB (setrlimit
 * RLIMIT_AS) and the read of `b` needs new buffers of several MiB there: every process gets
 * OP2_ERR_OUT_OF_MEMORY from that op_par_loop (the others with "(on process P-1)") instead of
 * waiting for messages that never come. With the limit lifted the same loop runs and gives
 * exact values (with OP2_LAZY=1 the loop is queued: op_flush runs it under the limit). seq and
 * threads (the device backends allocate device copies first, which is not what this test is
 * about).
 * mpi-n: 2 3 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

#define D 131072

static const char *k_fill = "void fill(double *a) { for (int i = 0; i < 131072; i++) a[i] = 1.0 + i % 3; }\n";
static const char *k_take = "void take(const double *a, const double *b, double *e) { e[0] = a[0] + b[131071]; }\n";

static void check_e(op_dat e, int ne)
{
  double *buf = malloc(sizeof(double) * (size_t)(ne + 1));
  op_fetch_data(e, buf);
  CHECK_OK();
  /* a[0] = 1, b[131071] = 1 + 131071 % 3 = 2 */
  for (int i = 0; i < ne; i++) CHECK_DBL(buf[i], 3.0);
  free(buf);
}

int main(int argc, char **argv)
{
  int rank, p;
  const char *backend = test_init(argc, argv);
  if (strcmp(backend, "seq") != 0 && strcmp(backend, "threads") != 0) {
    op_exit();
    return 0;
  }
  op_set_error_handler(OP_ERRORS_RETURN);
  p = op_num_ranks();
  op_rank(&rank);

  grid g;
  grid_make(&g, 9, 7);
  int nn = block_n(g.nnode, rank, p);
  int e0 = block_lo(g.nedge, rank, p), ne = block_n(g.nedge, rank, p);
  op_set nodes = op_decl_set(nn, "nodes");
  op_set edges = op_decl_set(ne, "edges");
  op_map penode = op_decl_map(edges, nodes, 2, g.enode + 2 * e0, "penode");
  op_dat a = op_decl_dat(nodes, D, "double", NULL, "a");
  op_dat b = op_decl_dat(nodes, D, "double", NULL, "b");
  op_dat e = op_decl_dat(edges, 1, "double", NULL, "e");
  CHECK_OK();
  op_partition("BLOCK", "ANY", nodes, OP_ID, NULL);
  CHECK_OK();

  op_kernel fill = op_decl_kernel(k_fill, "fill");
  op_kernel take = op_decl_kernel(k_take, "take");
  PAR_LOOP(fill, "fill", nodes, op_arg_dat(a, -1, OP_ID, D, "double", OP_WRITE));
  PAR_LOOP(fill, "fill", nodes, op_arg_dat(b, -1, OP_ID, D, "double", OP_WRITE));
  CHECK_OK();
  PAR_LOOP(take, "take", edges, op_arg_dat(a, 0, penode, D, "double", OP_READ),
           op_arg_dat(a, 1, penode, D, "double", OP_READ), op_arg_dat(e, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_OK();
  check_e(e, ne);

  struct rlimit old;
  if (rank == p - 1) CHECK(test_limit_address_space((unsigned long long)2 << 20, &old) == 0);
  PAR_LOOP(take, "take", edges, op_arg_dat(b, 0, penode, D, "double", OP_READ),
           op_arg_dat(b, 1, penode, D, "double", OP_READ), op_arg_dat(e, -1, OP_ID, 1, "double", OP_WRITE));
  int code = op_last_error_code();
  char msg[512];
  snprintf(msg, sizeof msg, "%s", op_last_error_message());
  if (code == 0) {
    /* OP2_LAZY=1 queued the loop: it runs (and fails) here, still under the limit */
    op_flush();
    code = op_last_error_code();
    snprintf(msg, sizeof msg, "%s", op_last_error_message());
  }
  if (rank == p - 1) CHECK(setrlimit(RLIMIT_AS, &old) == 0);
  if (code != OP2_ERR_OUT_OF_MEMORY) fprintf(stderr, "rank %d: code %d: %s\n", rank, code, msg);
  CHECK(code == OP2_ERR_OUT_OF_MEMORY);
  if (strstr(msg, "halo exchange: the ") == NULL) fprintf(stderr, "message: %s\n", msg);
  CHECK(strstr(msg, "halo exchange: the ") != NULL);
  CHECK(strstr(msg, "'b'") != NULL);
  char other[64];
  snprintf(other, sizeof other, "(on process %d)", p - 1);
  CHECK((rank == p - 1) == (strstr(msg, other) == NULL));

  /* The limit lifted: the same loop runs, exact values. */
  PAR_LOOP(take, "take", edges, op_arg_dat(b, 0, penode, D, "double", OP_READ),
           op_arg_dat(b, 1, penode, D, "double", OP_READ), op_arg_dat(e, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_OK();
  check_e(e, ne);
  grid_free(&g);
  op_exit();
  return 0;
}
