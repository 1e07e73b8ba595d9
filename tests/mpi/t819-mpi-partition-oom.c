/* An allocation refused on one process inside op_partition is OP2_ERR_OUT_OF_MEMORY on every
 * process (issue 37, point 1): not an abort, not a hang. The last process declares a set of
 * 2^27 elements (nothing of it is allocated at declaration) and, just before op_partition,
 * limits its address space to what it uses plus 64 MiB (setrlimit RLIMIT_AS), so the set's
 * parts (512 MiB) cannot be allocated there. Every process gets OP2_ERR_OUT_OF_MEMORY: the
 * last one naming the parts, the others the same message with "(on process P-1)"; all then end
 * with op_exit (run.sh's hang guard fails the test if one waits).
 * mpi-n: 2 3 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

int main(int argc, char **argv)
{
  int rank, p;
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  p = op_num_ranks();
  op_rank(&rank);

  grid g;
  grid_make(&g, 9, 7);
  int c0 = block_lo(g.ncell, rank, p), nc = block_n(g.ncell, rank, p);
  int e0 = block_lo(g.nedge, rank, p), ne = block_n(g.nedge, rank, p);
  op_set edges = op_decl_set(ne, "edges");
  op_set cells = op_decl_set(nc, "cells");
  op_set big = op_decl_set(rank == p - 1 ? 1 << 27 : 0, "big");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
  op_dat cx = op_decl_dat(cells, 2, "double", g.cx + 2 * c0, "cx");
  CHECK_OK();
  (void)big;
  (void)pecell;
  (void)cx;

  struct rlimit old;
  if (rank == p - 1) CHECK(test_limit_address_space((unsigned long long)64 << 20, &old) == 0);
  op_partition("BLOCK", "ANY", cells, OP_ID, NULL);
  if (rank == p - 1) CHECK(setrlimit(RLIMIT_AS, &old) == 0);
  char other[64];
  snprintf(other, sizeof other, "(on process %d)", p - 1);
  if (rank == p - 1)
    CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "op_partition: parts", "cannot allocate 536870912 bytes");
  else
    CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "op_partition: parts", "cannot allocate 536870912 bytes", other);
  grid_free(&g);
  op_exit();
  return 0;
}
