! Loop chains and op_flush from Fortran (issue 23, point 7; twin of part of tests/c/t960-lazy.c):
! inside a chain the loops wait and their reductions land at op_loop_chain_end, in loop order
! (before, the variables hold op2's placeholder, a NaN);
! op_flush inside a chain runs what is queued; a chain inside a chain and an end without a chain
! are OP2_ERR_CHAIN.
program t960_lazy_f
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  use op2
  use op2_test
  implicit none

  integer, parameter :: n = 100
  character(len=*), parameter :: nl = new_line('a')
  character(len=*), parameter :: src_add = 'void add1(double *x) { *x += 1.0; }' // nl
  character(len=*), parameter :: src_sum = 'void sumx(const double *x, double *s) { *s += *x; }' // nl

  type(op_set) :: s
  type(op_dat) :: x
  type(op_kernel) :: kadd, ksum
  character(len=:), allocatable :: backend
  real(8) :: xv(n), xout(n), s0, s1, s2
  logical :: queues
  integer :: i

  backend = test_init()
  ! The check backend runs every loop at its call (its findings are the loop's own errors).
  queues = backend /= 'check'
  s = op_decl_set(n, 'cells')
  xv = 0.0d0
  x = op_decl_dat(s, 1, xv, 'x')
  kadd = op_decl_kernel(src_add, 'add1')
  ksum = op_decl_kernel(src_sum, 'sumx')

  ! Each loop shape once before the chains: a device backend compiles a shape's code at its
  ! first call, which therefore runs at once (and would run what a chain had queued).
  s0 = 0.0d0
  call op_par_loop(kadd, 'add1', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_RW)])
  call op_par_loop(ksum, 'sumx', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_READ), op_arg_gbl(s0, 1, OP_INC)])
  call check_dbl(s0, 1.0d0 * n, 'a reduction outside a chain lands at once')

  call op_loop_chain_begin('iteration')
  call check_ok('op_loop_chain_begin')
  s1 = -1.0d0
  s2 = -1.0d0
  call op_par_loop(kadd, 'add1', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_RW)])
  call op_par_loop(ksum, 'sumx', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_READ), op_arg_gbl(s1, 1, OP_INC)])
  ! Until the chain runs, its reduction variables hold op2's placeholder (a NaN).
  if (queues) call check(ieee_is_nan(s1), 'a chain reduction waits for the chain end')
  call op_par_loop(kadd, 'add1', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_RW)])
  call op_par_loop(ksum, 'sumx', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_READ), op_arg_gbl(s2, 1, OP_INC)])
  call op_set_error_handler(OP_ERRORS_RETURN)
  call op_loop_chain_begin('inner')
  call check_err(OP2_ERR_CHAIN, 'op_loop_chain_begin', [character(len=16) :: "'inner'", "'iteration'"], 'nested chain')
  call op_set_error_handler(OP_ERRORS_ABORT)
  call op_loop_chain_end()
  call check_ok('op_loop_chain_end')
  call check_dbl(s1, -1.0d0 + 2.0d0 * n, 'first reduction of the chain')
  call check_dbl(s2, -1.0d0 + 3.0d0 * n, 'second reduction of the chain')

  call op_set_error_handler(OP_ERRORS_RETURN)
  call op_loop_chain_end()
  call check_err(OP2_ERR_CHAIN, 'op_loop_chain_end', [character(len=24) :: 'no loop chain is open'], 'end without chain')
  call op_set_error_handler(OP_ERRORS_ABORT)

  ! op_flush inside a chain runs the loops queued so far; the chain stays open.
  call op_loop_chain_begin('flushed')
  call op_par_loop(kadd, 'add1', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_RW)])
  call op_flush()
  call check_ok('op_flush')
  call op_par_loop(kadd, 'add1', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_RW)])
  call op_loop_chain_end()
  call op_fetch_data(x, xout)
  do i = 1, n
    call check_dbl(xout(i), 5.0d0, 'x after five add1 loops')
  end do
  call op_exit()
end program t960_lazy_f
