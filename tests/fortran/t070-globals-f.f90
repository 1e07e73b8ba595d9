! Global arguments from Fortran (twin of tests/c/t070-globals.c and t080-argmax.c): READ, INC,
! MIN, MAX combining with the caller's values; real(8), integer(4), integer(8), real(4); scalars
! and dim > 1 arrays; an empty set; an indirect loop; op_arg_info payloads with a 1-based ref.
! Globals are `target` variables: op2 uses them by address until op_par_loop returns.
program t070_globals_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  integer, parameter :: n = 100
  character(len=*), parameter :: nl = new_line('a')
  character(len=*), parameter :: src_red = &
    'void red(const double *v, const int *iv, const double *scale, double *sum, int *isum,' // nl // &
    '         double *mn, double *mx, int *imn, int *imx, double *big, double *small)' // nl // &
    '{' // nl // &
    '  *sum += *scale * *v;' // nl // &
    '  *isum += *iv;' // nl // &
    '  if (*v < *mn) *mn = *v;' // nl // &
    '  if (*v > *mx) *mx = *v;' // nl // &
    '  if (*iv < *imn) *imn = *iv;' // nl // &
    '  if (*iv > *imx) *imx = *iv;' // nl // &
    '  if (*v > *big) *big = *v;' // nl // &
    '  if (*v < *small) *small = *v;' // nl // &
    '}' // nl
  character(len=*), parameter :: src_vec = &
    'void vec(const int *iv, const double *r, int *inc3, double *mx2, double *mn2, long long *l,' &
    // nl // '         float *f)' // nl // &
    '{' // nl // &
    '  inc3[0] += 1; inc3[1] += *iv; inc3[2] -= 2 * *iv;' // nl // &
    '  if (*iv * r[0] > mx2[0]) mx2[0] = *iv * r[0];' // nl // &
    '  if (-*iv * r[1] > mx2[1]) mx2[1] = -*iv * r[1];' // nl // &
    '  if (*iv * r[0] < mn2[0]) mn2[0] = *iv * r[0];' // nl // &
    '  if (*iv + r[1] < mn2[1]) mn2[1] = *iv + r[1];' // nl // &
    '  *l += 100000000000LL;' // nl // &
    '  *f += 0.5f;' // nl // &
    '}' // nl
  character(len=*), parameter :: src_edge = &
    'void edge(const int *a, const int *b, int *sum, int *mx)' // nl // &
    '{ *sum += *a * *b; if (*a + *b > *mx) *mx = *a + *b; }' // nl
  character(len=*), parameter :: src_argmax = &
    'void argmax(const double *v, double *m, int *loc, const int *idx)' // nl // &
    '{ if (*v > *m) { *m = *v; *loc = *idx; } }' // nl
  character(len=*), parameter :: src_both = &
    'void both(const double *v, double *mx, int *mxloc, double *mn, double *mnval,' // nl // &
    '          const int *idx)' // nl // &
    '{' // nl // &
    '  if (*v > *mx) { *mx = *v; mxloc[0] = *idx; mxloc[1] = 2 * *idx + 1; }' // nl // &
    '  if (*v < *mn) { *mn = *v; *mnval = 0.5 * *idx; }' // nl // &
    '}' // nl

  character(len=:), allocatable :: backend
  real(8), target :: v(n), scale, sum, mn, mx, big, small
  integer(c_int), target :: iv(n), isum, imn, imx
  type(op_set) :: s, s0
  type(op_dat) :: dv, div
  type(op_kernel) :: kred, kvec
  integer :: i

  backend = test_init()
  ! v = 0.25 * mod(37 i, 100) - 7 (i 0-based): a permutation of -7 .. 17.75;
  ! iv = mod(53 i, 100) - 40: -40 .. 59.
  do i = 1, n
    v(i) = 0.25d0 * mod((i - 1) * 37, 100) - 7.0d0
    iv(i) = mod((i - 1) * 53, 100) - 40
  end do
  s = op_decl_set(n, 'cells')
  s0 = op_decl_set(0, 'none')
  dv = op_decl_dat(s, 1, v, 'v')
  div = op_decl_dat(s, 1, iv, 'iv')
  kred = op_decl_kernel(src_red, 'red')
  kvec = op_decl_kernel(src_vec, 'vec')

  scale = 0.5d0
  sum = 10.5d0
  isum = -3
  mn = 1d300
  mx = -1d300
  imn = 1000
  imx = -1000
  big = 100.0d0
  small = -100.0d0
  call red(s, dv, div, 'red')
  call check_ok('red')
  ! sum v = 0.25 * 4950 - 700 = 537.5; half of it is 268.75. sum iv = 4950 - 4000 = 950.
  call check_dbl(sum, 10.5d0 + 268.75d0, 'INC real(8)')
  call check_int(isum, -3_c_int + 950_c_int, 'INC integer')
  call check_dbl(mn, -7.0d0, 'MIN real(8)')
  call check_dbl(mx, 17.75d0, 'MAX real(8)')
  call check_int(imn, -40_c_int, 'MIN integer')
  call check_int(imx, 59_c_int, 'MAX integer')
  call check_dbl(big, 100.0d0, 'MAX keeps a larger caller value')
  call check_dbl(small, -100.0d0, 'MIN keeps a smaller caller value')
  call check_dbl(scale, 0.5d0, 'READ global untouched')

  ! Again: INC adds onto what the caller holds now; MIN/MAX combine with caller values that
  ! beat some but not all of the elements.
  sum = -1.0d0
  isum = 50
  mn = 0.0d0
  mx = 100.0d0
  imn = -100
  imx = 0
  scale = 2.0d0
  call red(s, dv, div, 'red')
  call check_dbl(sum, -1.0d0 + 1075.0d0, 'INC onto the caller value')
  call check_int(isum, 50_c_int + 950_c_int, 'INC integer onto the caller value')
  call check_dbl(mn, -7.0d0, 'MIN beating the caller value')
  call check_dbl(mx, 100.0d0, 'MAX keeping the caller value')
  call check_int(imn, -100_c_int, 'MIN integer keeping the caller value')
  call check_int(imx, 59_c_int, 'MAX integer beating the caller value')

  ! Over an empty set every reduction keeps the caller's value.
  sum = 10.5d0
  isum = 7
  mn = 3.0d0
  mx = -3.0d0
  imn = 5
  imx = -5
  call red(s0, op_decl_dat(s0, 1, 'double', 'ev'), op_decl_dat(s0, 1, 'int', 'ei'), 'red0')
  call check_ok('red over the empty set')
  call check_dbl(sum, 10.5d0, 'INC over the empty set')
  call check_int(isum, 7_c_int, 'INC integer over the empty set')
  call check_dbl(mn, 3.0d0, 'MIN over the empty set')
  call check_dbl(mx, -3.0d0, 'MAX over the empty set')
  call check_int(imn, 5_c_int, 'MIN integer over the empty set')
  call check_int(imx, -5_c_int, 'MAX integer over the empty set')

  ! dim > 1 globals (arrays) and other kinds; r is a dim-2 READ global.
  block
    integer(c_int), target :: inc3(3)
    real(8), target :: r(2), mx2(2), mn2(2)
    integer(c_long_long), target :: l
    real(4), target :: f
    inc3 = [1, 2, 3]
    r = [0.5d0, 2.0d0]
    mx2 = [-1d9, 1d9]
    mn2 = [1d9, -1d9]
    l = -5
    f = 1.25
    call op_par_loop(kvec, 'vec', s, [op_arg_dat(div, -1, OP_ID, 1, 'int', OP_READ), &
                                      op_arg_gbl(r, 2, OP_READ), op_arg_gbl(inc3, 3, OP_INC), &
                                      op_arg_gbl(mx2, 2, OP_MAX), op_arg_gbl(mn2, 2, OP_MIN), &
                                      op_arg_gbl(l, 1, OP_INC), op_arg_gbl(f, 1, OP_INC)])
    call check_ok('vec')
    call check_int(inc3(1), int(1 + n, c_int), 'INC dim 3, component 1')
    call check_int(inc3(2), 2_c_int + 950_c_int, 'INC dim 3, component 2')
    call check_int(inc3(3), 3_c_int - 1900_c_int, 'INC dim 3, component 3')
    call check_dbl(mx2(1), 29.5d0, 'MAX dim 2, component 1')
    call check_dbl(mx2(2), 1d9, 'MAX dim 2, component 2 keeps the caller value')
    call check_dbl(mn2(1), -20.0d0, 'MIN dim 2, component 1')
    call check_dbl(mn2(2), -1d9, 'MIN dim 2, component 2 keeps the caller value')
    call check_dbl(r(1), 0.5d0, 'READ dim 2 untouched')
    call check_dbl(r(2), 2.0d0, 'READ dim 2 untouched')
    call check_int(l, -5_c_long_long + 100_c_long_long * 100000000000_c_long_long, 'INC integer(8)')
    call check(f == 51.25, 'INC real(4)')
  end block

  ! Globals in an indirect loop.
  block
    integer :: e2n(2, n), nv(n), emax, a, b
    integer(c_int), target :: total, best
    integer(c_int) :: expect
    type(op_set) :: nodes
    type(op_map) :: pe
    type(op_dat) :: dn
    type(op_kernel) :: ke
    nodes = op_decl_set(n, 'nodes')
    ke = op_decl_kernel(src_edge, 'edge')
    do i = 1, n
      nv(i) = mod((i - 1) * 7, 13)
      e2n(1, i) = i
      e2n(2, i) = mod((i - 1) * 3 + 1, n) + 1
    end do
    expect = 1000
    emax = -1
    do i = 1, n
      a = nv(e2n(1, i))
      b = nv(e2n(2, i))
      expect = expect + a * b
      emax = max(emax, a + b)
    end do
    pe = op_decl_map(s, nodes, 2, e2n, 'pe')
    dn = op_decl_dat(nodes, 1, nv, 'nv')
    total = 1000
    best = -1
    call op_par_loop(ke, 'edge', s, [op_arg_dat(dn, 1, pe, 1, 'int', OP_READ), &
                                     op_arg_dat(dn, 2, pe, 1, 'int', OP_READ), &
                                     op_arg_gbl(total, 1, OP_INC), op_arg_gbl(best, 1, OP_MAX)])
    call check_int(total, expect, 'INC in an indirect loop')
    call check_int(best, int(emax, c_int), 'MAX in an indirect loop')
  end block

  ! op_arg_info: payloads following MIN/MAX globals; ref is the 1-based position in the array.
  block
    integer, parameter :: m = 1000
    real(8) :: w(m)
    real(8), target :: wmax, wmin, mnval
    integer(c_int), target :: loc, mxloc(2)
    type(op_set) :: cells
    type(op_dat) :: dw
    type(op_kernel) :: ka, kb
    ! A unique maximum 0 at (0-based) 637 and a unique minimum at 0.
    do i = 1, m
      w(i) = -dble(i - 1 - 637) * dble(i - 1 - 637)
    end do
    cells = op_decl_set(m, 'cells1000')
    dw = op_decl_dat(cells, 1, w, 'w')
    ka = op_decl_kernel(src_argmax, 'argmax')
    kb = op_decl_kernel(src_both, 'both')

    wmax = -1d300
    loc = -1
    call op_par_loop(ka, 'argmax', cells, [op_arg_dat(dw, -1, OP_ID, 1, 'double', OP_READ), &
                                           op_arg_gbl(wmax, 1, OP_MAX), op_arg_info(loc, 1, 2), &
                                           op_arg_idx(-1, OP_ID)])
    call check_ok('argmax')
    call check_dbl(wmax, 0.0d0, 'argmax value')
    call check_int(loc, 637_c_int, 'argmax location (0-based, from the kernel)')

    ! The caller's value wins: the payload keeps the caller's value too.
    wmax = 5.0d0
    loc = -42
    call op_par_loop(ka, 'argmax', cells, [op_arg_dat(dw, -1, OP_ID, 1, 'double', OP_READ), &
                                           op_arg_gbl(wmax, 1, OP_MAX), op_arg_info(loc, 1, 2), &
                                           op_arg_idx(-1, OP_ID)])
    call check_dbl(wmax, 5.0d0, 'argmax keeps the caller value')
    call check_int(loc, -42_c_int, 'argmax keeps the caller payload')

    ! Two reductions with payloads in one loop.
    wmax = -1d300
    wmin = 1d300
    mxloc = -1
    mnval = -1.0d0
    call op_par_loop(kb, 'both', cells, [op_arg_dat(dw, -1, OP_ID, 1, 'double', OP_READ), &
                                         op_arg_gbl(wmax, 1, OP_MAX), op_arg_info(mxloc, 2, 2), &
                                         op_arg_gbl(wmin, 1, OP_MIN), op_arg_info(mnval, 1, 4), &
                                         op_arg_idx(-1, OP_ID)])
    call check_ok('both')
    call check_dbl(wmax, 0.0d0, 'both: max')
    call check_int(mxloc(1), 637_c_int, 'both: max payload 1')
    call check_int(mxloc(2), 1275_c_int, 'both: max payload 2')
    call check_dbl(wmin, -637.0d0 * 637.0d0, 'both: min')
    call check_dbl(mnval, 0.0d0, 'both: min payload')
  end block

  call op_exit()

contains

  subroutine red(set, dv_, div_, name)
    type(op_set), intent(in) :: set
    type(op_dat), intent(in) :: dv_, div_
    character(len=*), intent(in) :: name
    call op_par_loop(kred, name, set, [op_arg_dat(dv_, -1, OP_ID, 1, 'double', OP_READ), &
                                       op_arg_dat(div_, -1, OP_ID, 1, 'int', OP_READ), &
                                       op_arg_gbl(scale, 1, OP_READ), op_arg_gbl(sum, 1, OP_INC), &
                                       op_arg_gbl(isum, 1, OP_INC), op_arg_gbl(mn, 1, OP_MIN), &
                                       op_arg_gbl(mx, 1, OP_MAX), op_arg_gbl(imn, 1, OP_MIN), &
                                       op_arg_gbl(imx, 1, OP_MAX), op_arg_gbl(big, 1, OP_MAX), &
                                       op_arg_gbl(small, 1, OP_MIN)])
  end subroutine red

end program t070_globals_f
