! op_dat_transfers from Fortran (twin of tests/c/t372): a direct write, a steady loop, then two
! fetches; on a device backend one download, on host backends no copies at all.
program t372_residency_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none
  character(len=:), allocatable :: backend
  type(op_set) :: s
  type(op_dat) :: x, y
  type(op_kernel) :: k
  real(8), target :: xv(100), out(100)
  integer(c_int64_t) :: up, down, b
  integer :: i
  logical :: dev

  backend = test_init()
  dev = backend == 'opencl' .or. backend == 'cuda'
  xv = [(dble(i), i = 1, 100)]
  b = 800
  s = op_decl_set(100, 's')
  x = op_decl_dat(s, 1, xv, 'x')
  y = op_decl_dat(s, 1, xv, 'y')
  k = op_decl_kernel('void cp(const double *x, double *y) { y[0] = 3.0 * x[0]; }', 'cp')
  call op_par_loop(k, 'cp', s, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_READ), &
                                op_arg_dat(y, -1, OP_ID, 1, 'double', OP_WRITE)])
  call op_dat_transfers(y, up, down)
  call check(up == 0 .and. down == 0, 'a whole direct write uploads nothing')
  call op_fetch_data(y, out)
  call op_fetch_data(y, out)
  call check(all(out == 3d0 * xv), 'results')
  call op_dat_transfers(y, up, down)
  if (dev) then
    call check(up == 0 .and. down == b, 'one download for two fetches')
  else
    call check(up == 0 .and. down == 0, 'host backends never copy')
  end if
  call op_dat_transfers(x, up, down)
  if (dev) then
    call check(up == b .and. down == 0, 'x uploaded once')
  else
    call check(up == 0 .and. down == 0, 'host backends never copy x')
  end if
  call op_exit()
end program t372_residency_f
