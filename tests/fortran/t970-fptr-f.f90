! op_par_loop_fptr from Fortran (the module op2): compiled Fortran subroutines as kernels, given
! with c_funloc. A direct loop (READ, WRITE, an INC global, op_arg_idx 1-based), an indirect
! OP_INC loop over a ring of edges (every node gets exactly 2 from its two edges) and another
! subroutine of the same shape (the same compiled loop calls whichever it is given), MIN/MAX
! globals with an op_arg_info payload, a loop name derived when '' is given, and the errors: a
! NULL function, a map from another set; device backends (opencl/cuda) refuse with
! OP2_ERR_BACKEND_UNAVAILABLE and leave the globals untouched.
module t970_kernels
  implicit none
contains
  subroutine scale(a, b, count, i)
    real(8), intent(in) :: a(2)
    real(8), intent(out) :: b
    integer(4), intent(inout) :: count
    integer(4), intent(in) :: i
    b = 3.0_8 * a(1) + a(2) + real(i, 8)
    count = count + 1
  end subroutine scale

  subroutine spread(x1, x2, w)
    real(8), intent(inout) :: x1, x2
    real(8), intent(in) :: w
    x1 = x1 + w
    x2 = x2 + w
  end subroutine spread

  ! The same shape as spread: the same compiled loop must call this one.
  subroutine spread_neg(x1, x2, w)
    real(8), intent(inout) :: x1, x2
    real(8), intent(in) :: w
    x1 = x1 - 10.0_8 * w
    x2 = x2 - 10.0_8 * w
  end subroutine spread_neg

  subroutine extremes(v, lo, hi, i, where)
    real(8), intent(in) :: v
    real(8), intent(inout) :: lo, hi
    integer(4), intent(in) :: i
    integer(4), intent(inout) :: where
    lo = min(lo, v)
    if (v > hi) then
      hi = v
      where = i
    end if
  end subroutine extremes
end module t970_kernels

program t970_fptr_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  use t970_kernels
  implicit none

  integer, parameter :: n = 500
  type(op_set) :: nodes, edges
  type(op_map) :: ring
  type(op_dat) :: a, b, x, w
  character(len=:), allocatable :: backend
  real(8) :: av(2, n), bout(n), xout(n), wv(n)
  integer(c_int) :: emap(2, n)
  integer(c_int), target :: count, where
  real(8), target :: lo, hi, one
  integer :: i

  backend = test_init()
  do i = 1, n
    av(1, i) = real(i, 8)
    av(2, i) = 0.5_8 * real(i, 8)
    emap(1, i) = i
    emap(2, i) = mod(i, n) + 1
    wv(i) = 1.0_8
  end do
  nodes = op_decl_set(n, 'nodes')
  edges = op_decl_set(n, 'edges')
  ring = op_decl_map(edges, nodes, 2, emap, 'ring')
  a = op_decl_dat(nodes, 2, av, 'a')
  b = op_decl_dat(nodes, 1, 'real(8)', 'b')
  x = op_decl_dat(nodes, 1, 'real(8)', 'x')
  w = op_decl_dat(edges, 1, wv, 'w')

  if (backend == 'opencl' .or. backend == 'cuda') then
    call op_set_error_handler(OP_ERRORS_RETURN)
    count = 7
    call op_par_loop_fptr(c_funloc(scale), 'scale', nodes, &
      [op_arg_dat(a, -1, OP_ID, 2, 'real(8)', OP_READ), &
       op_arg_dat(b, -1, OP_ID, 1, 'real(8)', OP_WRITE), &
       op_arg_gbl(count, 1, OP_INC), op_arg_idx(-1, OP_ID)])
    call check_err(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop_fptr 'scale'", &
                   [character(len=40) :: 'runs loops on a device', 'no Fortran device compiler'], &
                   'device backend refuses')
    call check_int(count, 7_c_int, 'global untouched after a refused loop')
    call op_set_error_handler(OP_ERRORS_ABORT)
  else
    call host_backend()
  end if
  call op_exit()

contains

  subroutine host_backend()

  count = 0
  call op_par_loop_fptr(c_funloc(scale), 'scale', nodes, &
    [op_arg_dat(a, -1, OP_ID, 2, 'real(8)', OP_READ), &
     op_arg_dat(b, -1, OP_ID, 1, 'real(8)', OP_WRITE), &
     op_arg_gbl(count, 1, OP_INC), op_arg_idx(-1, OP_ID)])
  call check_int(count, int(n, c_int), 'INC global counts every element')
  call op_fetch_data(b, bout)
  do i = 1, n
    call check_dbl(bout(i), 3.0_8 * i + 0.5_8 * i + i, 'b = 3 a1 + a2 + 1-based index')
  end do

  ! Twice, so that the second call reuses the compiled loop of the first shape.
  do i = 1, 2
    call op_par_loop_fptr(c_funloc(spread), '', edges, &
      [op_arg_dat(x, 1, ring, 1, 'real(8)', OP_INC), op_arg_dat(x, 2, ring, 1, 'real(8)', OP_INC), &
       op_arg_dat(w, -1, OP_ID, 1, 'real(8)', OP_READ)])
  end do
  call op_fetch_data(x, xout)
  do i = 1, n
    call check_dbl(xout(i), 4.0_8, 'each node gets 1 from each of its 2 edges, twice')
  end do
  ! Another subroutine of the same shape: its address is run-time data, not compiled in.
  call op_par_loop_fptr(c_funloc(spread_neg), 'spread_neg', edges, &
    [op_arg_dat(x, 1, ring, 1, 'real(8)', OP_INC), op_arg_dat(x, 2, ring, 1, 'real(8)', OP_INC), &
     op_arg_dat(w, -1, OP_ID, 1, 'real(8)', OP_READ)])
  call op_fetch_data(x, xout)
  do i = 1, n
    call check_dbl(xout(i), -16.0_8, 'a second kernel of the same shape runs its own code')
  end do

  lo = huge(lo)
  hi = -huge(hi)
  where = -1
  call op_par_loop_fptr(c_funloc(extremes), 'extremes', nodes, &
    [op_arg_dat(b, -1, OP_ID, 1, 'real(8)', OP_READ), op_arg_gbl(lo, 1, OP_MIN), &
     op_arg_gbl(hi, 1, OP_MAX), op_arg_idx(-1, OP_ID), op_arg_info(where, 1, 3)])
  call check_dbl(lo, 4.5_8, 'MIN global')
  call check_dbl(hi, 4.5_8 * n, 'MAX global')
  call check_int(where, int(n, c_int), 'info payload: where the maximum was (1-based)')

  ! Errors
  call op_set_error_handler(OP_ERRORS_RETURN)
  one = 1.0_8
  call op_par_loop_fptr(c_null_funptr, 'none', nodes, [op_arg_gbl(one, 1, OP_READ)])
  call check_err(OP2_ERR_NULL_ARGUMENT, 'op_par_loop_fptr', [character(len=8) :: 'fn is NULL'], &
                 'NULL function')
  call op_par_loop_fptr(c_funloc(spread), 'spread', nodes, &
    [op_arg_dat(x, 1, ring, 1, 'real(8)', OP_INC), op_arg_dat(x, 2, ring, 1, 'real(8)', OP_INC), &
     op_arg_dat(w, -1, OP_ID, 1, 'real(8)', OP_READ)])
  call check_err(OP2_ERR_ARG_SET, "op_par_loop 'spread'", [character(len=4) :: 'ring'], &
                 'map from another set')
  end subroutine host_backend
end program t970_fptr_f
