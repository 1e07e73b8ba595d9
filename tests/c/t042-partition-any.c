/* Issue 21, point 6: OP2's tutorial Airfoil calls op_partition("BLOCK", "ANY", edges, pecell,
 * p_x). The routine means nothing to BLOCK and RANDOM, so any routine is accepted there (OP2
 * does); a misspelt library and a routine the library lacks stay OP2_ERR_BAD_CONFIG naming
 * both; GEOMKWAY needs coordinates on the to-set of prime_map (issue 25); a k-way routine
 * without a map is accepted (it partitions by blocks, as OP2's). Without MPI
 * op_partition only validates its arguments: the loop after it runs as before. */
#include "test.h"

int main(int argc, char **argv)
{
  int e2c[2 * 4] = {0, 1, 1, 2, 2, 3, 3, 0}, i;
  double xv[4 * 2] = {0, 0, 1, 0, 1, 1, 0, 1}, got[4];
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  {
    op_set cells = op_decl_set(4, "cells"), edges = op_decl_set(4, "edges");
    op_map pecell = op_decl_map(edges, cells, 2, e2c, "pecell");
    op_dat x = op_decl_dat(cells, 2, "double", xv, "p_x");
    op_dat n = op_decl_dat(cells, 1, "double", NULL, "n");
    op_kernel k = op_decl_kernel("void cnt(double *a, double *b) { *a += 1.0; *b += 1.0; }\n", "cnt");

    /* What a library lacks, or a misspelt library: named errors. */
    op_partition("BLOK", "ANY", edges, pecell, x);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "lib 'BLOK' routine 'ANY'", "supported are BLOCK, RANDOM");
    op_partition("BLOK", "GEOM", edges, pecell, x);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "lib 'BLOK' routine 'GEOM'");
    op_partition("METIS", "ANY", edges, pecell, x);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "lib 'METIS' routine 'ANY'");
    op_partition("METIS", "GEOM", edges, pecell, x); /* METIS has no geometric partitioner */
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "lib 'METIS' routine 'GEOM'");
    op_partition("PTSCOTCH", "KWAYS", edges, pecell, x);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "lib 'PTSCOTCH' routine 'KWAYS'");
    op_partition("PTSCOTCH", "GEOMKWAY", edges, pecell, x); /* OP2's GEOMKWAY is ParMETIS's */
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "lib 'PTSCOTCH' routine 'GEOMKWAY'");
    /* GEOMKWAY: coordinates on the to-set of prime_map, as OP2 requires */
    op_partition("PARMETIS", "GEOMKWAY", cells, pecell, NULL);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "GEOMKWAY needs coords", "coords is NULL");
    {
      op_dat ex = op_decl_dat(edges, 2, "double", xv, "edge_x");
      op_partition("PARMETIS", "GEOMKWAY", cells, pecell, ex);
      CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "coords 'edge_x' is on set 'edges'",
                "prime_map 'pecell' goes to set 'cells'");
    }

    /* OP2's Airfoil, and any other routine for BLOCK and RANDOM. */
    op_partition("BLOCK", "ANY", edges, pecell, x);
    CHECK_OK();
    op_partition("BLOCK", "KWAY", edges, OP_ID, NULL);
    CHECK_OK();
    op_partition("RANDOM", "ANY", edges, pecell, x);
    CHECK_OK();
    op_partition("random", NULL, edges, OP_ID, NULL);
    CHECK_OK();
    op_partition("PARMETIS", "KWAY", edges, pecell, x);
    CHECK_OK();
    op_partition("PARMETIS", "GEOM", edges, pecell, x);
    CHECK_OK();
    op_partition("PARMETIS", "GEOMKWAY", cells, pecell, x);
    CHECK_OK();
    /* a k-way routine without a map partitions by blocks, as OP2's (t816 under MPI) */
    op_partition("PTSCOTCH", "KWAY", edges, OP_ID, NULL);
    CHECK_OK();
    op_partition("METIS", "KWAY", edges, OP_ID, x);
    CHECK_OK();
    op_partition("PARMETIS", "GEOMKWAY", cells, OP_ID, NULL);
    CHECK_OK();

    PAR_LOOP(k, "count", edges, op_arg_dat(n, 0, pecell, 1, "double", OP_INC),
             op_arg_dat(n, 1, pecell, 1, "double", OP_INC));
    CHECK_OK();
    op_fetch_data(n, got);
    for (i = 0; i < 4; i++) CHECK_DBL(got[i], 2.0);
  }
  op_exit();
  return 0;
}
