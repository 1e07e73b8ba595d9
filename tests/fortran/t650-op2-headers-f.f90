! OP2's C-kernel loop (op_par_loop_fn, what op_seq.h's op_par_loop calls) and constants by
! address from Fortran: a bind(C) subroutine given with c_funloc whose C header (written here
! into the current directory, the "calling source's" directory) op2 compiles into the loop
! (the JIT tier: the header's kernel adds 1000, so the values say which tier ran), seeing the
! bind(C) module variable declared by address; a subroutine with no header runs once per
! element on host backends and is refused on devices; op_malloc/op_free.
module t650f_kernels
  use, intrinsic :: iso_c_binding
  implicit none
  real(c_double), bind(C, name='f650_factor'), target :: f650_factor = 3.0_c_double
contains
  subroutine f650_scale(x, y) bind(C, name='f650_scale')
    real(c_double), intent(in) :: x
    real(c_double), intent(out) :: y
    y = f650_factor * x
  end subroutine f650_scale

  subroutine f650_plain(x, y) bind(C, name='f650_plain')
    real(c_double), intent(in) :: x
    real(c_double), intent(out) :: y
    y = x * x
  end subroutine f650_plain
end module t650f_kernels

program t650_op2_headers_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  use t650f_kernels
  implicit none

  integer, parameter :: n = 9
  type(op_set) :: nodes
  type(op_dat) :: x, y
  character(len=:), allocatable :: backend
  real(8) :: xv(n), yv(n)
  real(c_double), pointer :: m(:)
  type(c_ptr) :: p
  integer :: i, u
  type(c_funptr) :: fscale, fplain

  ! The kernel's header, beside the "calling source" ('caller.f90' in the current directory).
  open(newunit=u, file='f650_scale.h', status='replace', action='write')
  write(u, '(a)') 'static inline void f650_scale(const double *x, double *y) { y[0] = f650_factor * x[0] + 1000.0; }'
  close(u)

  backend = test_init()
  fscale = c_funloc(f650_scale)
  fplain = c_funloc(f650_plain)
  do i = 1, n
    xv(i) = real(i, 8)
  end do
  nodes = op_decl_set(n, 'nodes')
  x = op_decl_dat(nodes, 1, xv, 'x')
  y = op_decl_dat(nodes, 1, 'real(8)', 'y')
  call op_decl_const_addr(1, 'double', 8, c_loc(f650_factor))
  call check_ok('op_decl_const_addr of a bind(C) module variable')

  call op_par_loop_fn(fscale, 'f650_scale', 'caller.f90', 'f650_scale', nodes, &
    [op_arg_dat(x, -1, OP_ID, 1, 'real(8)', OP_READ), op_arg_dat(y, -1, OP_ID, 1, 'real(8)', OP_WRITE)])
  call op_fetch_data(y, yv)
  do i = 1, n
    call check_dbl(yv(i), 3.0_8 * i + 1000.0_8, 'JIT tier: the header''s kernel, with the constant by address')
  end do

  call op_set_error_handler(OP_ERRORS_RETURN)
  call op_par_loop_fn(fplain, 'f650_plain', 'caller.f90', 'f650_plain', nodes, &
    [op_arg_dat(x, -1, OP_ID, 1, 'real(8)', OP_READ), op_arg_dat(y, -1, OP_ID, 1, 'real(8)', OP_WRITE)])
  if (backend == 'opencl' .or. backend == 'cuda') then
    call check_err(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop 'f650_plain'", &
                   [character(len=40) :: 'no header', 'called per element'], 'device refuses the per-element tier')
  else
    call check_ok('call-per-element tier')
    call op_fetch_data(y, yv)
    do i = 1, n
      call check_dbl(yv(i), real(i * i, 8), 'call-per-element tier: the subroutine itself')
    end do
  end if
  call op_set_error_handler(OP_ERRORS_ABORT)

  p = op_malloc(int(8 * n, c_size_t))
  call check(c_associated(p), 'op_malloc gives memory')
  call check(mod(transfer(p, 0_c_intptr_t), 64_c_intptr_t) == 0, 'op_malloc aligns to 64 bytes')
  call c_f_pointer(p, m, [n])
  m = 1.0_c_double
  call op_free(p)
  call op_exit()
end program t650_op2_headers_f
