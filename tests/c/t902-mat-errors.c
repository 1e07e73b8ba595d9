/* Every error of the matrix functions: declarations (NULL, stale and wrong-kind handles, pairs
 * from different sets, npairs, block sizes, types), op_arg_mat (access modes, maps not in the
 * sparsity, idx, type, local block size, loop set), op_mat_zero_rows (range, n), op_mat_mult
 * (sets, dims, types, aliasing), and handles after op_exit. */
#include "test.h"

static const char *src_k = "void k(double *A) { A[0] += 1.0; }\n";

int main(int argc, char **argv)
{
  int c2n[6] = {0, 1, 2, 1, 2, 3}, e2n[4] = {0, 1, 2, 3}, c2c[2] = {0, 1}, rows[2] = {0, 4};
  static int wide[2 * 300];
  op_set nodes, cells, edges, other;
  op_map pc, pe, pself, pwide, po;
  op_sparsity s, s2;
  op_mat A, B;
  op_dat dn, dc, dn2, dnf;
  op_arg a;
  int i;

  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  nodes = op_decl_set(4, "nodes");
  cells = op_decl_set(2, "cells");
  edges = op_decl_set(2, "edges");
  other = op_decl_set(300, "other");
  pc = op_decl_map(cells, nodes, 3, c2n, "pc");
  pe = op_decl_map(edges, nodes, 2, e2n, "pe");
  pself = op_decl_map(cells, cells, 1, c2c, "pself");
  for (i = 0; i < 600; i++) wide[i] = i % 300;
  pwide = op_decl_map(cells, other, 300, wide, "pwide");
  po = op_decl_map(edges, cells, 1, c2c, "po");
  CHECK_OK();

  /* ---- declarations ---- */
  CHECK(op_decl_sparsity(pc, pe, "bad") == NULL);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_decl_sparsity", "'bad'", "row map 'pc' goes from set 'cells'",
            "column map 'pe' from set 'edges'");
  CHECK(op_decl_sparsity(NULL, pc, "s") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_sparsity", "row map 0 is NULL");
  CHECK(op_decl_sparsity(pc, pc, NULL) == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_sparsity", "name is NULL");
  CHECK(op_decl_sparsity((op_map)nodes, pc, "s") == NULL);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_decl_sparsity", "not an op_map handle");
  {
    op_map r2[2] = {pc, pself}, c2[2] = {pc, pself}, r3[2] = {pc, pe}, c3[2] = {pc, po};
    CHECK(op_decl_sparsity_pairs(0, r2, c2, "p") == NULL);
    CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_sparsity_pairs", "npairs 0");
    CHECK(op_decl_sparsity_pairs(2, NULL, c2, "p") == NULL);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_sparsity_pairs", "NULL");
    CHECK(op_decl_sparsity_pairs(2, r2, c2, "p") == NULL);
    CHECK_ERR(OP2_ERR_ARG_SET, "op_decl_sparsity_pairs", "pair 1", "row map 'pself' reaches set 'cells'",
              "pair 0's reaches set 'nodes'");
    CHECK(op_decl_sparsity_pairs(2, r3, c3, "p") == NULL);
    CHECK_ERR(OP2_ERR_ARG_SET, "op_decl_sparsity_pairs", "pair 1", "column map 'po' reaches set 'cells'");
  }
  s = op_decl_sparsity(pc, pc, "s");
  CHECK_OK();
  CHECK(op_decl_mat(s, 0, 1, "double", "A") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_mat", "'A'", "block size 0 x 1");
  CHECK(op_decl_mat(s, 1, 1, "int", "A") == NULL);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_decl_mat", "'A'", "type 'int' is not 'double' or 'float'");
  CHECK(op_decl_mat(s, 1, 1, "real", "A") == NULL);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_decl_mat", "unknown type 'real'");
  CHECK(op_decl_mat((op_sparsity)pc, 1, 1, "double", "A") == NULL);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_decl_mat", "not an op_sparsity handle");
  CHECK(op_decl_mat(NULL, 1, 1, "double", "A") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_mat", "sparsity is NULL");
  A = op_decl_mat(s, 1, 1, "double", "A");
  CHECK_OK();
  CHECK_INT(op_mat_nnz(A), 3 + 4 + 4 + 3); /* rows 0, 3: 3 entries; rows 1, 2: 4 entries */
  CHECK_INT(op_mat_nnz(NULL), -1);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_mat_nnz", "mat is NULL");
  CHECK_INT(op_mat_nnz((op_mat)s), -1);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_mat_nnz", "not an op_mat handle");

  /* ---- op_arg_mat ---- */
  a = op_arg_mat(A, -3, pc, -3, pc, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_mat", "'A'", "access OP_READ is not allowed on a matrix");
  op_arg_mat(A, -3, pc, -3, pc, "double", OP_RW);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_mat", "OP_RW");
  op_arg_mat(A, -3, pc, -3, pc, "double", OP_MIN);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_mat", "OP_MIN");
  op_arg_mat(A, -3, pc, -3, pc, "double", OP_MAX);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_mat", "OP_MAX");
  op_arg_mat(A, -3, pc, -3, pc, "double", 9);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_mat", "access 9");
  op_arg_mat(A, -2, pe, -2, pe, "double", OP_INC);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_arg_mat", "maps (pe, pe) are not a pair of the matrix's sparsity 's'",
            "(pc, pc)");
  op_arg_mat(A, -3, pc, -3, pc, "float", OP_INC);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_arg_mat", "type 'float' disagrees with the matrix's type 'double'");
  op_arg_mat(A, 3, pc, -3, pc, "double", OP_INC);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_mat", "ridx 3 is out of range for map 'pc' of dim 3");
  op_arg_mat(A, 0, pc, -2, pc, "double", OP_INC);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_mat", "cidx -2");
  op_arg_mat(NULL, 0, pc, 0, pc, "double", OP_INC);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_arg_mat", "mat is NULL");
  op_arg_mat(A, 0, NULL, 0, pc, "double", OP_INC);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_arg_mat", "rowmap is NULL");
  op_arg_mat(A, 0, pc, 0, pc, NULL, OP_INC);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_arg_mat", "type is NULL");
  s2 = op_decl_sparsity(pwide, pwide, "wide");
  B = op_decl_mat(s2, 1, 1, "double", "B");
  CHECK_OK();
  op_arg_mat(B, -300, pwide, -300, pwide, "double", OP_INC);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_arg_mat", "'B'", "300 x 300 entries", "65536");
  /* The failed op_arg's error is reported again by the loop. */
  PAR_LOOP(op_decl_kernel(src_k, "k"), "kloop", cells, a);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_par_loop 'kloop', arg 0", "OP_READ");
  /* The loop is over another set than the maps'. */
  PAR_LOOP(op_decl_kernel(src_k, "k"), "kloop", edges, op_arg_mat(A, 0, pc, 0, pc, "double", OP_INC));
  CHECK_ERR(OP2_ERR_ARG_SET, "op_par_loop 'kloop'", "mat 'A'", "map 'pc' goes from set 'cells'",
            "loop is over set 'edges'");
  /* A kernel parameter of the wrong type. */
  PAR_LOOP(op_decl_kernel("void kf(float *A) { A[0] = 1; }\n", "kf"), "kf", cells,
           op_arg_mat(A, 0, pc, 0, pc, "double", OP_INC));
  if (strcmp(argv[1], "opencl") == 0)
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop 'kf'", "not supported on the opencl backend");
  else
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'kf'", "float*", "double*");

  /* ---- zero_rows ---- */
  op_mat_zero_rows(A, 2, rows, 1.0);
  CHECK_ERR(OP2_ERR_BAD_RANGE, "op_mat_zero_rows", "mat 'A'", "rows[1] is 4, outside [0, 4)");
  op_mat_zero_rows(A, -1, rows, 1.0);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_mat_zero_rows", "n -1 is negative");
  op_mat_zero_rows(A, 1, NULL, 1.0);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_mat_zero_rows", "rows is NULL");
  op_mat_zero_rows(A, 0, NULL, 1.0);
  CHECK_OK();

  /* ---- mult ---- */
  dn = op_decl_dat(nodes, 1, "double", NULL, "dn");
  dc = op_decl_dat(cells, 1, "double", NULL, "dc");
  dn2 = op_decl_dat(nodes, 2, "double", NULL, "dn2");
  dnf = op_decl_dat(nodes, 1, "float", NULL, "dnf");
  op_mat_mult(A, dc, dn);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_mat_mult", "mat 'A'", "x dat 'dc' lives on set 'cells'",
            "column set is 'nodes'");
  op_mat_mult(A, dn, dn2);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_mat_mult", "y dat 'dn2' is double x 2", "double x 1");
  op_mat_mult(A, dnf, dn);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_mat_mult", "x dat 'dnf' is float x 1");
  op_mat_mult(A, dn, dn);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_mat_mult", "x and y are the same dat 'dn'");
  op_mat_zero(NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_mat_zero", "mat is NULL");
  op_mat_assemble((op_mat)dn);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_mat_assemble", "not an op_mat handle");
  op_fetch_mat_csr(NULL, NULL, NULL, NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_fetch_mat_csr", "mat is NULL");
  /* Rectangular matrices cannot be solved. */
  {
    op_sparsity sr = op_decl_sparsity(pc, pself, "sr");
    op_mat R = op_decl_mat(sr, 1, 1, "double", "R");
    CHECK(op_solve(R, dn, dc, NULL) == -1);
    CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_solve", "mat 'R'", "not square");
  }

  /* ---- after op_exit ---- */
  op_exit();
  op_init(0, NULL, 0);
  op_mat_zero(A);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_mat_zero", "from another op2 session");
  op_decl_mat(s, 1, 1, "double", "A");
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_decl_mat", "from another op2 session");
  op_exit();
  op_mat_zero(A);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_mat_zero", "not initialised");
  return 0;
}
