! Direct loops from Fortran (twin of tests/c/t020-direct.c): WRITE, RW, READ, several dats of
! the Fortran types in one loop, an INC global counting calls, op_arg_idx on OP_ID, a constant
! changed between loops, sets of size 1 and 0.
program t020_direct_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  integer, parameter :: n = 1000
  character(len=*), parameter :: nl = new_line('a')
  character(len=*), parameter :: src_fill = &
    'void fill(const double *a, int *b)' // nl // &
    '{' // nl // &
    '  b[0] = (int)(a[0] + a[1]);' // nl // &
    '  b[1] = (int)(a[0] - a[1]);' // nl // &
    '}' // nl
  character(len=*), parameter :: src_upd = &
    'static double twice(double x) { return 2.0 * x; } /* a helper function */' // nl // &
    'void upd(double *a) { a[0] = twice(a[0]); a[1] += 1.0; }' // nl
  character(len=*), parameter :: src_many = &
    'void many(const double *a, const int *b, float *c, long long *l, _Bool *bo,' // nl // &
    '          const int *idx, int *where, int *count)' // nl // &
    '{' // nl // &
    '  c[0] = (float)a[0]; c[1] = (float)b[1]; c[2] = 0.5f;' // nl // &
    '  *l = *l * 1000LL - 1;' // nl // &
    '  *bo = !*bo;' // nl // &
    '  *where = *idx;' // nl // &
    '  *count += 1;' // nl // &
    '}' // nl
  character(len=*), parameter :: src_scale = &
    'void scale(const double *a, double *out) { *out = alpha * a[0]; }' // nl

  type(op_set) :: s, s1, s0
  type(op_dat) :: a, b, c, l, bo, w, o
  type(op_kernel) :: kfill, kupd, kmany, kscale
  character(len=:), allocatable :: backend
  real(8) :: av(2, n), aout(2, n), oout(n), alpha
  integer(c_int) :: bout(2, n), wout(n)
  integer(c_int), target :: count
  real(4) :: cout(3, n)
  integer(c_long_long) :: lv(n), lout(n)
  logical(c_bool) :: bov(n), boout(n)
  integer :: i

  backend = test_init()
  s = op_decl_set(n, 'cells')
  s1 = op_decl_set(1, 'one')
  s0 = op_decl_set(0, 'none')
  do i = 1, n
    av(1, i) = i - 1
    av(2, i) = 0.5d0 * (i - 1)
    lv(i) = 3000000000_c_long_long * mod(i - 1, 7) - 5
    bov(i) = mod(i - 1, 3) == 0
  end do
  a = op_decl_dat(s, 2, av, 'a')
  b = op_decl_dat(s, 2, 'int', 'b')
  c = op_decl_dat(s, 3, 'float', 'c')
  l = op_decl_dat(s, 1, lv, 'l')
  bo = op_decl_dat(s, 1, bov, 'bo')
  w = op_decl_dat(s, 1, 'integer', 'where')
  o = op_decl_dat(s, 1, 'real(8)', 'o')
  kfill = op_decl_kernel(src_fill, 'fill')
  kupd = op_decl_kernel(src_upd, 'upd')
  kmany = op_decl_kernel(src_many, 'many')

  ! READ a, WRITE b.
  call op_par_loop(kfill, 'fill', s, [op_arg_dat(a, -1, OP_ID, 2, 'double', OP_READ), &
                                       op_arg_dat(b, -1, OP_ID, 2, 'int', OP_WRITE)])
  call check_ok('fill')
  call op_fetch_data(b, bout)
  call op_fetch_data(a, aout)
  do i = 1, n
    call check_int(bout(1, i), int(1.5d0 * (i - 1), c_int), 'fill b(1)')
    call check_int(bout(2, i), int(0.5d0 * (i - 1), c_int), 'fill b(2)')
  end do
  call check(all(aout == av), 'READ leaves a alone')

  ! RW twice: a(1) -> 4 a(1), a(2) -> a(2) + 2. Fortran type spelling for the type string.
  call op_par_loop(kupd, 'upd', s, [op_arg_dat(a, -1, OP_ID, 2, 'real(8)', OP_RW)])
  call op_par_loop(kupd, 'upd', s, [op_arg_dat(a, -1, OP_ID, 2, 'double', OP_RW)])
  call op_fetch_data(a, aout)
  do i = 1, n
    call check_dbl(aout(1, i), 4.0d0 * (i - 1), 'RW a(1)')
    call check_dbl(aout(2, i), 0.5d0 * (i - 1) + 2.0d0, 'RW a(2)')
  end do

  ! Several types, the element index, and a count of the calls.
  count = 0
  call op_par_loop(kmany, 'many', s, [ &
    op_arg_dat(a, -1, OP_ID, 2, 'double', OP_READ), &
    op_arg_dat(b, -1, OP_ID, 2, 'int', OP_READ), &
    op_arg_dat(c, -1, OP_ID, 3, 'float', OP_WRITE), &
    op_arg_dat(l, -1, OP_ID, 1, 'll', OP_RW), &
    op_arg_dat(bo, -1, OP_ID, 1, 'bool', OP_RW), &
    op_arg_idx(-1, OP_ID), &
    op_arg_dat(w, -1, OP_ID, 1, 'int', OP_WRITE), &
    op_arg_gbl(count, 1, OP_INC)])
  call check_ok('many')
  call check_int(count, int(n, c_int), 'count of kernel calls')
  call op_fetch_data(c, cout)
  call op_fetch_data(l, lout)
  call op_fetch_data(bo, boout)
  call op_fetch_data(w, wout)
  do i = 1, n
    call check(cout(1, i) == real(4.0d0 * (i - 1), 4), 'many c(1)')
    call check(cout(2, i) == real(int(0.5d0 * (i - 1)), 4), 'many c(2)')
    call check(cout(3, i) == 0.5, 'many c(3)')
    call check_int(lout(i), lv(i) * 1000_c_long_long - 1_c_long_long, 'many l')
    call check(logical(boout(i) .neqv. bov(i)), 'many bo')
    call check_int(wout(i), int(i - 1, c_int), 'op_arg_idx(-1, OP_ID) is the 0-based index')
  end do

  ! A constant seen by kernels, and changed between loops.
  kscale = op_decl_kernel(src_scale, 'scale')
  alpha = 3.0d0
  call op_decl_const(1, alpha, 'alpha')
  call op_par_loop(kscale, 'scale', s, [op_arg_dat(a, -1, OP_ID, 2, 'double', OP_READ), &
                                         op_arg_dat(o, -1, OP_ID, 1, 'double', OP_WRITE)])
  call op_fetch_data(o, oout)
  do i = 1, n
    call check_dbl(oout(i), 3.0d0 * 4.0d0 * (i - 1), 'constant alpha = 3')
  end do
  alpha = -0.5d0
  call op_decl_const(1, alpha, 'alpha')
  call op_par_loop(kscale, 'scale', s, [op_arg_dat(a, -1, OP_ID, 2, 'double', OP_READ), &
                                         op_arg_dat(o, -1, OP_ID, 1, 'double', OP_WRITE)])
  call op_fetch_data(o, oout)
  do i = 1, n
    call check_dbl(oout(i), -0.5d0 * 4.0d0 * (i - 1), 'constant alpha changed to -0.5')
  end do

  ! A set of size 1.
  block
    real(8) :: one(2), out(2)
    one = [3.0d0, -1.0d0]
    d1: block
      type(op_dat) :: a1
      a1 = op_decl_dat(s1, 2, one, 'a1')
      call op_par_loop(kupd, 'upd1', s1, [op_arg_dat(a1, -1, OP_ID, 2, 'double', OP_RW)])
      call op_fetch_data(a1, out)
    end block d1
    call check_dbl(out(1), 6.0d0, 'set of size 1, a(1)')
    call check_dbl(out(2), 0.0d0, 'set of size 1, a(2)')
  end block

  ! A set of size 0: the kernel never runs, an INC global keeps the caller's value.
  block
    type(op_dat) :: a0
    a0 = op_decl_dat(s0, 2, 'double', 'a0')
    count = 17
    call op_par_loop(kupd, 'upd0', s0, [op_arg_dat(a0, -1, OP_ID, 2, 'double', OP_RW)])
    call check_ok('loop over the empty set')
    call op_par_loop(kmany, 'many0', s0, [ &
      op_arg_dat(a0, -1, OP_ID, 2, 'double', OP_READ), &
      op_arg_dat(op_decl_dat(s0, 2, 'int', 'b0'), -1, OP_ID, 2, 'int', OP_READ), &
      op_arg_dat(op_decl_dat(s0, 3, 'float', 'c0'), -1, OP_ID, 3, 'float', OP_WRITE), &
      op_arg_dat(op_decl_dat(s0, 1, 'll', 'l0'), -1, OP_ID, 1, 'll', OP_RW), &
      op_arg_dat(op_decl_dat(s0, 1, 'bool', 'bo0'), -1, OP_ID, 1, 'bool', OP_RW), &
      op_arg_idx(-1, OP_ID), &
      op_arg_dat(op_decl_dat(s0, 1, 'int', 'w0'), -1, OP_ID, 1, 'int', OP_WRITE), &
      op_arg_gbl(count, 1, OP_INC)])
    call check_ok('many over the empty set')
    call check_int(count, 17_c_int, 'INC global over the empty set')
  end block

  call op_exit()
end program t020_direct_f
