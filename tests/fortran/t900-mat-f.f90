! Matrices from Fortran (twin of tests/c/t900 and t901 on OP2's mass2d-sized case): two
! triangles (1,2,3) and (2,4,3) each adding the local matrix [2 1 1; 1 2 1; 1 1 2]; the sparsity
! (also as a one-pair op_decl_sparsity_pairs), the assembled CSR with 1-based indices against
! the hand-assembled matrix, op_mat_mult, op_solve (native CG), op_mat_zero_rows with 1-based
! rows, op_mat_zero, and OP2_ERR_ARG_ACCESS for OP_READ. On opencl, loops with matrix arguments
! are OP2_ERR_BACKEND_UNAVAILABLE; the matrix is then set by op_mat_zero_rows only.
program t900_mat_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  character(len=*), parameter :: nl = new_line('a')
  character(len=*), parameter :: src_loc = &
    'void loc(double *A)' // nl // &
    '{' // nl // &
    '  for (int i = 0; i < 3; i++)' // nl // &
    '    for (int j = 0; j < 3; j++) A[3 * i + j] = i == j ? 2.0 : 1.0;' // nl // &
    '}' // nl

  type(op_set) :: nodes, cells
  type(op_map) :: pcell
  type(op_sparsity) :: sp, sp2
  type(op_mat) :: a, z
  type(op_dat) :: x, y, sol
  type(op_kernel) :: k
  type(op_arg) :: bad
  character(len=:), allocatable :: backend
  integer(c_int) :: rowptr(5), colidx(14)
  real(8) :: vals(14), yv(4), sv(4)
  real(4) :: valsf(14)
  integer :: its, i
  logical :: opencl

  backend = test_init()
  opencl = backend == 'opencl'
  nodes = op_decl_set(4, 'nodes')
  cells = op_decl_set(2, 'cells')
  pcell = op_decl_map(cells, nodes, 3, [1, 2, 3, 2, 4, 3], 'pcell')
  sp = op_decl_sparsity(pcell, pcell, 'sp')
  sp2 = op_decl_sparsity_pairs([pcell], [pcell], 'sp2')
  a = op_decl_mat(sp, 1, 1, 'real(8)', 'A')
  z = op_decl_mat(sp2, 1, 1, 'real(4)', 'Z')
  call check_int(op_mat_nnz(a), 14_c_int64_t, 'nnz of A')
  call check_int(op_mat_nnz(z), 14_c_int64_t, 'nnz of Z')
  k = op_decl_kernel(src_loc, 'loc')

  if (opencl) then
    call op_set_error_handler(OP_ERRORS_RETURN)
    call op_par_loop(k, 'loc', cells, [op_arg_mat(a, -3, pcell, -3, pcell, 'real(8)', OP_INC)])
    call check_err(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop 'loc'", [character(len=40) :: 'opencl'], 'opencl')
    call op_set_error_handler(OP_ERRORS_ABORT)
    call op_mat_zero_rows(a, [1, 2, 3, 4], 3.0d0)
    call op_fetch_mat_csr(a, rowptr, colidx, vals)
    call check(all(rowptr == [1, 4, 8, 12, 15]), 'rowptr')
    call check(all(colidx == [1, 2, 3, 1, 2, 3, 4, 1, 2, 3, 4, 2, 3, 4]), 'colidx')
    call check(all(vals == [3, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 3]), 'diagonal values')
  else
    call op_par_loop(k, 'loc', cells, [op_arg_mat(a, -3, pcell, -3, pcell, 'real(8)', OP_INC)])
    call op_mat_assemble(a)
    call op_fetch_mat_csr(a, rowptr, colidx, vals)
    call check(all(rowptr == [1, 4, 8, 12, 15]), 'rowptr')
    call check(all(colidx == [1, 2, 3, 1, 2, 3, 4, 1, 2, 3, 4, 2, 3, 4]), 'colidx')
    call check(all(vals == [2, 1, 1, 1, 4, 2, 1, 1, 2, 4, 1, 1, 1, 2]), 'assembled values')
  end if

  x = op_decl_dat(nodes, 1, [1.0d0, 2.0d0, 3.0d0, 4.0d0], 'x')
  y = op_decl_dat(nodes, 1, 'real(8)', 'y')
  sol = op_decl_dat(nodes, 1, 'real(8)', 'sol')
  call op_mat_mult(a, x, y)
  call op_fetch_data(y, yv)
  if (opencl) then
    call check(all(yv == [3, 6, 9, 12]), 'y = 3 x')
  else
    call check(all(yv == [7, 19, 21, 13]), 'y = A x')
  end if
  its = op_solve(a, y, sol, '-ksp_type cg -pc_type jacobi -ksp_rtol 1e-12')
  call check(its >= 1, 'iterations')
  call op_fetch_data(sol, sv)
  do i = 1, 4
    call check(abs(sv(i) - i) < 1d-9, 'solution')
  end do
  its = op_solve(a, y, sol)
  call check_ok('op_solve with default options')

  call op_mat_zero_rows(a, [1], 5.0d0)
  call op_fetch_mat_csr(a, rowptr, colidx, vals)
  call check(all(vals(1:3) == [5, 0, 0]), 'Dirichlet row 1')
  call op_mat_zero(a)
  call op_fetch_mat_csr(a, rowptr, colidx, vals)
  call check(all(vals == 0), 'op_mat_zero')
  call op_fetch_mat_csr(z, rowptr, colidx, valsf)
  call check(all(valsf == 0), 'float matrix starts at zero')

  call op_set_error_handler(OP_ERRORS_RETURN)
  bad = op_arg_mat(a, -3, pcell, -3, pcell, 'real(8)', OP_READ)
  call check_err(OP2_ERR_ARG_ACCESS, 'op_arg_mat', [character(len=40) :: "'A'", 'OP_READ'], 'OP_READ')
  bad = op_arg_mat(a, 4, pcell, 1, pcell, 'real(8)', OP_INC)
  call check_err(OP2_ERR_ARG_IDX, 'op_arg_mat', [character(len=40) :: 'ridx 3'], 'ridx out of range')
  its = op_solve(a, y, sol, '-ksp_rtol abc')
  call check_err(OP2_ERR_BAD_CONFIG, 'op_solve', [character(len=40) :: '-ksp_rtol'], 'bad option')
  call check(its == -1, 'op_solve returns -1 on error')
  call op_exit()
end program t900_mat_f
