! Indirect INC from Fortran (twin of tests/c/t040-indirect-inc.c), with 1-based maps and idx:
! many elements hitting the same target (a star of 1000 spokes into the hub plus a ring), two
! INC args into the same dat, INC onto non-zero values, a vector (-N) INC argument, op_arg_idx
! through a map (the kernel sees 0-based values), and a random mesh checked against plain
! Fortran. Integers are exact and the doubles exactly representable: every backend must match.
program t040_indirect_inc_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  integer, parameter :: nspoke = 1000, nring = 10
  character(len=*), parameter :: nl = new_line('a')
  character(len=*), parameter :: src_star = &
    'void star(const int *w, const double *wd, int *hub, int *rim, double *hubd, double *rimd)' &
    // nl // '{' // nl // &
    '  *hub += *w;' // nl // &
    '  *rim += 1;' // nl // &
    '  hubd[0] += *wd;' // nl // &
    '  hubd[1] -= 0.25;' // nl // &
    '  *rimd += 0.5;' // nl // &
    '}' // nl
  character(len=*), parameter :: src_ring = 'void ring(int *a, int *b) { *a += 1; *b += 10; }' // nl
  character(len=*), parameter :: src_vec = &
    'void vec(int **ends, const int *first, const int *second, int *seen)' // nl // &
    '{ *ends[0] += 100; *ends[1] += 1000; seen[0] = *first; seen[1] = *second; }' // nl
  character(len=*), parameter :: src_rand = &
    'void rnd(const int *w, long long *a, long long *b, double *ad)' // nl // &
    '{ *a += *w; *b += 1000000LL * *w; *ad += 0.125 * *w; }' // nl

  type(op_set) :: nodes, spokes, rings
  type(op_map) :: pspoke, pring
  type(op_dat) :: dw, dwd, dcnt, ddd, drd, dseen
  type(op_kernel) :: kstar, kring, kvec
  character(len=:), allocatable :: backend
  integer :: spoke2node(2, nspoke), ring2node(2, nring), w(nspoke), cnt(nring + 1), i
  integer :: seen(2, nring)
  real(8) :: wd(nspoke), dd(2, nring + 1), rd(nring + 1)

  backend = test_init()
  ! Nodes (1-based): 1 is the hub, 2..nring+1 the rim. Spoke e goes hub -> 2 + mod(e-1, nring).
  do i = 1, nspoke
    spoke2node(1, i) = 1
    spoke2node(2, i) = 2 + mod(i - 1, nring)
    w(i) = i - 1
    wd(i) = 0.5d0 * (i - 1)
  end do
  do i = 1, nring
    ring2node(1, i) = 1 + i
    ring2node(2, i) = 2 + mod(i, nring)
  end do
  nodes = op_decl_set(nring + 1, 'nodes')
  spokes = op_decl_set(nspoke, 'spokes')
  rings = op_decl_set(nring, 'rings')
  pspoke = op_decl_map(spokes, nodes, 2, spoke2node, 'pspoke')
  pring = op_decl_map(rings, nodes, 2, ring2node, 'pring')
  dw = op_decl_dat(spokes, 1, w, 'w')
  dwd = op_decl_dat(spokes, 1, wd, 'wd')
  dcnt = op_decl_dat(nodes, 1, 'int', 'cnt')
  ddd = op_decl_dat(nodes, 2, 'double', 'dd')
  drd = op_decl_dat(nodes, 1, 'double', 'rd')
  kstar = op_decl_kernel(src_star, 'star')
  kring = op_decl_kernel(src_ring, 'ring')
  kvec = op_decl_kernel(src_vec, 'vec')

  ! The hub (idx 1 of every spoke) gets the sum of w; each rim node is idx 2 of 100 spokes.
  call star()
  call check_ok('star')
  call op_fetch_data(dcnt, cnt)
  call op_fetch_data(ddd, dd)
  call op_fetch_data(drd, rd)
  call check_int(cnt(1), int(nspoke * (nspoke - 1) / 2, c_int), 'hub count')
  call check_dbl(dd(1, 1), 0.5d0 * nspoke * (nspoke - 1) / 2, 'hub dd(1)')
  call check_dbl(dd(2, 1), -0.25d0 * nspoke, 'hub dd(2)')
  call check_dbl(rd(1), 0.0d0, 'hub rd')
  do i = 2, nring + 1
    call check_int(cnt(i), int(nspoke / nring, c_int), 'rim count')
    call check_dbl(dd(1, i), 0.0d0, 'rim dd(1)')
    call check_dbl(dd(2, i), 0.0d0, 'rim dd(2)')
    call check_dbl(rd(i), 0.5d0 * nspoke / nring, 'rim rd')
  end do

  ! Ring: each rim node is idx 1 of one edge (+1) and idx 2 of another (+10), onto the values
  ! already there.
  call op_par_loop(kring, 'ring', rings, [op_arg_dat(dcnt, 1, pring, 1, 'int', OP_INC), &
                                          op_arg_dat(dcnt, 2, pring, 1, 'int', OP_INC)])
  call op_fetch_data(dcnt, cnt)
  call check_int(cnt(1), 499500_c_int, 'hub count after ring')
  do i = 2, nring + 1
    call check_int(cnt(i), int(nspoke / nring + 11, c_int), 'rim count after ring')
  end do

  ! Star again: everything accumulates.
  call star()
  call op_fetch_data(dcnt, cnt)
  call op_fetch_data(ddd, dd)
  call check_int(cnt(1), 2_c_int * 499500_c_int, 'hub count, second star')
  call check_dbl(dd(1, 1), 2 * 249750.0d0, 'hub dd(1), second star')
  call check_dbl(dd(2, 1), -500.0d0, 'hub dd(2), second star')
  do i = 2, nring + 1
    call check_int(cnt(i), int(2 * (nspoke / nring) + 11, c_int), 'rim count, second star')
  end do

  ! A vector argument (idx = -2: the kernel gets both ends) with INC, and op_arg_idx(1|2, map):
  ! the kernel sees the C (0-based) node numbers.
  dseen = op_decl_dat(rings, 2, 'int', 'seen')
  call op_par_loop(kvec, 'vec', rings, [op_arg_dat(dcnt, -2, pring, 1, 'int', OP_INC), &
                                        op_arg_idx(1, pring), op_arg_idx(2, pring), &
                                        op_arg_dat(dseen, -1, OP_ID, 2, 'int', OP_WRITE)])
  call check_ok('vec')
  call op_fetch_data(dcnt, cnt)
  call op_fetch_data(dseen, seen)
  call check_int(cnt(1), 2_c_int * 499500_c_int, 'hub untouched by vec')
  do i = 2, nring + 1
    call check_int(cnt(i), int(2 * (nspoke / nring) + 11 + 1100, c_int), 'rim count after vec')
  end do
  do i = 1, nring
    call check_int(seen(1, i), int(ring2node(1, i) - 1, c_int), 'op_arg_idx(1, pring) is 0-based')
    call check_int(seen(2, i), int(ring2node(2, i) - 1, c_int), 'op_arg_idx(2, pring) is 0-based')
  end do

  ! A random mesh: 20000 edges over 500 nodes, self-loops allowed, checked against plain Fortran.
  block
    integer, parameter :: nn = 500, ne = 20000
    integer, allocatable :: emap(:, :), wr(:)
    integer :: e
    integer(c_long_long) :: wa(nn), wb(nn), ga(nn), gb(nn)
    real(8) :: wad(nn), gad(nn)
    integer(c_int64_t) :: seed
    type(op_set) :: n2, e2
    type(op_map) :: m2
    type(op_dat) :: dwr, da, db, dad
    type(op_kernel) :: kr
    allocate(emap(2, ne), wr(ne))
    n2 = op_decl_set(nn, 'rnodes')
    e2 = op_decl_set(ne, 'redges')
    kr = op_decl_kernel(src_rand, 'rnd')
    seed = 2024
    do i = 1, nn
      wa(i) = i - 1
      wb(i) = -(i - 1)
      wad(i) = 0.25d0 * (i - 1)
    end do
    do e = 1, ne
      do i = 1, 2
        seed = modulo(seed * 1664525_c_int64_t + 1013904223_c_int64_t, 4294967296_c_int64_t)
        emap(i, e) = 1 + int(modulo(seed / 1024_c_int64_t, int(nn, c_int64_t)))
      end do
      wr(e) = mod((e - 1) * 37, 101) - 50
    end do
    m2 = op_decl_map(e2, n2, 2, emap, 'remap')
    dwr = op_decl_dat(e2, 1, wr, 'wr')
    da = op_decl_dat(n2, 1, wa, 'ra')
    db = op_decl_dat(n2, 1, wb, 'rb')
    dad = op_decl_dat(n2, 1, wad, 'rad')
    call op_par_loop(kr, 'rnd', e2, [op_arg_dat(dwr, -1, OP_ID, 1, 'int', OP_READ), &
                                     op_arg_dat(da, 1, m2, 1, 'll', OP_INC), &
                                     op_arg_dat(db, 2, m2, 1, 'integer(8)', OP_INC), &
                                     op_arg_dat(dad, 2, m2, 1, 'double', OP_INC)])
    do e = 1, ne
      wa(emap(1, e)) = wa(emap(1, e)) + wr(e)
      wb(emap(2, e)) = wb(emap(2, e)) + 1000000_c_long_long * wr(e)
      wad(emap(2, e)) = wad(emap(2, e)) + 0.125d0 * wr(e)
    end do
    call op_fetch_data(da, ga)
    call op_fetch_data(db, gb)
    call op_fetch_data(dad, gad)
    do i = 1, nn
      call check_int(ga(i), wa(i), 'random mesh, ll INC through idx 1')
      call check_int(gb(i), wb(i), 'random mesh, ll INC through idx 2')
      call check_dbl(gad(i), wad(i), 'random mesh, double INC through idx 2')
    end do
  end block

  call op_exit()

contains

  subroutine star()
    call op_par_loop(kstar, 'star', spokes, [op_arg_dat(dw, -1, OP_ID, 1, 'int', OP_READ), &
                                             op_arg_dat(dwd, -1, OP_ID, 1, 'double', OP_READ), &
                                             op_arg_dat(dcnt, 1, pspoke, 1, 'int', OP_INC), &
                                             op_arg_dat(dcnt, 2, pspoke, 1, 'int', OP_INC), &
                                             op_arg_dat(ddd, 1, pspoke, 2, 'double', OP_INC), &
                                             op_arg_dat(drd, 2, pspoke, 1, 'double', OP_INC)])
  end subroutine star

end program t040_indirect_inc_f
