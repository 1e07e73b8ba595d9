! Declarations from Fortran (twin of tests/c/t010-decl.c): sets of sizes 0, 1 and n, maps with
! 1-based entries (rank 1 and 2), dats of every Fortran type the module knows (rank 1, 2 and 3
! arrays), op_decl_map_long (integer(8) entries, range errors), dats of zeros from a type
! string, op_get_size, fetch round trips, and that the
! caller may change its arrays after declaring. Also op_init / op_exit / op_init again.
program t010_decl_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  type(op_set) :: s0, s1, s5, s3
  type(op_map) :: m
  type(op_dat) :: d
  type(op_kernel) :: k
  character(len=:), allocatable :: backend
  integer :: i, j

  backend = test_init()
  call check_ok('op_init')
  call check(op_backend_name() == backend .or. &
             (backend == 'openmp' .and. op_backend_name() == 'threads'), &
             'op_backend_name() is the backend asked for: ' // op_backend_name())
  call check(op_is_root(), 'op_is_root() without MPI')

  s0 = op_decl_set(0, 'empty')
  call check_ok('op_decl_set')
  s1 = op_decl_set(1, 'single')
  s5 = op_decl_set(5, 'five')
  s3 = op_decl_set(3, 'three')
  call check(c_associated(s0%handle) .and. c_associated(s1%handle) .and. &
             c_associated(s5%handle) .and. c_associated(s3%handle), 'sets are not null')
  call check(.not. c_associated(s0%handle, s1%handle), 'sets are distinct')
  call check_int(op_get_size(s0), 0_c_int64_t, 'op_get_size(empty)')
  call check_int(op_get_size(s1), 1_c_int64_t, 'op_get_size(single)')
  call check_int(op_get_size(s5), 5_c_int64_t, 'op_get_size(five)')
  call check_int(op_get_size(s3), 3_c_int64_t, 'op_get_size(three)')

  ! Maps: 1-based entries, rank 2 (dim, n) and rank 1; the caller may overwrite them after.
  block
    integer :: imap(3, 5), flat(5), one(1)
    imap = reshape([(mod(i * 7, 3) + 1, i = 0, 14)], [3, 5])
    m = op_decl_map(s5, s3, 3, imap, 'five2three')
    call check(c_associated(m%handle), 'rank-2 map')
    call check_ok('op_decl_map rank 2')
    imap = -12345
    flat = [3, 1, 2, 3, 1]
    m = op_decl_map(s5, s3, 1, flat, 'five2three_flat')
    call check(c_associated(m%handle), 'rank-1 map')
    one = 2
    m = op_decl_map(s1, s3, 1, one, 'single2three')
    call check(c_associated(m%handle), 'single map')
    m = op_decl_map(s0, s3, 2, flat(1:0), 'empty2three')
    call check(c_associated(m%handle), 'map from the empty set')
    call check_ok('op_decl_map')
  end block

  ! op_decl_map_long: integer(8) 1-based entries, read through a loop; one entry beyond the
  ! target set, and one beyond 32 bits, are the range error op_decl_map gives (1-based).
  block
    integer(c_long_long) :: lmap(2, 5)
    real(8) :: x(3), s(5)
    type(op_dat) :: dx, ds
    type(op_kernel) :: kg
    lmap = reshape([1_c_long_long, 2_c_long_long, 2_c_long_long, 3_c_long_long, &
                    3_c_long_long, 1_c_long_long, 1_c_long_long, 3_c_long_long, &
                    2_c_long_long, 2_c_long_long], [2, 5])
    x = [0.5d0, 2.0d0, -8.0d0]
    m = op_decl_map_long(s5, s3, 2, lmap, 'five2three_long')
    call check(c_associated(m%handle), 'op_decl_map_long')
    call check_ok('op_decl_map_long')
    dx = op_decl_dat(s3, 1, x, 'xl')
    ds = op_decl_dat(s5, 1, 'double', 'sl')
    kg = op_decl_kernel('void gl(const double *a, const double *b, double *s) { s[0] = a[0] + 10.0 * b[0]; }', &
                        'gl')
    call op_par_loop(kg, 'gl', s5, [op_arg_dat(dx, 1, m, 1, 'real(8)', OP_READ), &
                                    op_arg_dat(dx, 2, m, 1, 'real(8)', OP_READ), &
                                    op_arg_dat(ds, -1, OP_ID, 1, 'real(8)', OP_WRITE)])
    call op_fetch_data(ds, s)
    do i = 1, 5
      call check_dbl(s(i), x(lmap(1, i)) + 10d0 * x(lmap(2, i)), 'gather through op_decl_map_long')
    end do
    call op_set_error_handler(OP_ERRORS_RETURN)
    lmap(2, 4) = 4
    m = op_decl_map_long(s5, s3, 2, lmap, 'long_bad')
    call check(.not. c_associated(m%handle), 'op_decl_map_long out of range is null')
    call check_err(OP2_ERR_MAP_OUT_OF_RANGE, 'op_decl_map_long', &
                   [character(len=40) :: "'long_bad'", 'entry 8 (element 4, position 2) is 4', &
                    "outside 1..3 of set 'three'"], 'op_decl_map_long range')
    lmap(2, 4) = 4294967298_c_long_long        ! 2^32 + 2: 1-based 2 if it were cut to 32 bits
    m = op_decl_map_long(s5, s3, 2, lmap, 'long_wide')
    call check_err(OP2_ERR_MAP_OUT_OF_RANGE, 'op_decl_map_long', &
                   [character(len=40) :: "'long_wide'", 'is 4294967298'], 'op_decl_map_long beyond 32 bits')
    call op_set_error_handler(OP_ERRORS_ABORT)
  end block

  ! real(8), rank 2: declared, then scribbled over by the caller, fetched back.
  block
    real(8) :: v(2, 5), out(2, 5)
    v = reshape([(0.25d0 * i - 1.0d0, i = 0, 9)], [2, 5])
    d = op_decl_dat(s5, 2, v, 'dbl')
    call check(c_associated(d%handle), 'real(8) dat')
    call check_ok('op_decl_dat real(8)')
    v = -99.0d0
    out = 0
    call op_fetch_data(d, out)
    call check_ok('op_fetch_data')
    do j = 1, 5
      do i = 1, 2
        call check_dbl(out(i, j), 0.25d0 * ((j - 1) * 2 + i - 1) - 1.0d0, 'real(8) round trip')
      end do
    end do
    ! fetch into a rank-1 array: the same values in the same order
    block
      real(8) :: flat(10)
      call op_fetch_data(d, flat)
      do i = 1, 10
        call check_dbl(flat(i), 0.25d0 * (i - 1) - 1.0d0, 'real(8) fetched into rank 1')
      end do
    end block
    ! op_fetch_data_idx: elements 2..4 (1-based, inclusive)
    block
      real(8) :: part(2, 3)
      part = 0
      call op_fetch_data_idx(d, part, 2, 4)
      call check_ok('op_fetch_data_idx')
      do j = 1, 3
        do i = 1, 2
          call check_dbl(part(i, j), 0.25d0 * (j * 2 + i - 1) - 1.0d0, 'op_fetch_data_idx')
        end do
      end do
    end block
  end block

  ! real(4), rank 1
  block
    real(4) :: v(3), out(3)
    v = [0.1, -3.5, 1e30]
    d = op_decl_dat(s3, 1, v, 'flt')
    call op_fetch_data(d, out)
    do i = 1, 3
      call check(out(i) == v(i), 'real(4) round trip')
    end do
  end block

  ! integer(4), rank 2, with extreme values
  block
    integer(c_int) :: v(2, 3), out(2, 3)
    v = reshape([-huge(0_c_int) - 1_c_int, -1_c_int, 0_c_int, 1_c_int, 42_c_int, huge(0_c_int)], &
                [2, 3])
    d = op_decl_dat(s3, 2, v, 'int')
    call op_fetch_data(d, out)
    call check(all(out == v), 'integer(4) round trip')
  end block

  ! integer(8)
  block
    integer(c_long_long) :: v(3), out(3)
    v = [-huge(0_c_long_long) - 1_c_long_long, -5000000000_c_long_long, huge(0_c_long_long)]
    d = op_decl_dat(s3, 1, v, 'll')
    call op_fetch_data(d, out)
    call check(all(out == v), 'integer(8) round trip')
  end block

  ! logical(c_bool)
  block
    logical(c_bool) :: v(3), out(3)
    v = [.true._c_bool, .false._c_bool, .true._c_bool]
    out = .not. v
    d = op_decl_dat(s3, 1, v, 'bool')
    call op_fetch_data(d, out)
    call check(logical(all(out .eqv. v)), 'logical(c_bool) round trip')
  end block

  ! rank 3: dim 4 on five elements as a (2, 2, 5) array
  block
    real(8) :: v(2, 2, 5), out(4, 5)
    v = reshape([(1.0d0 * i, i = 1, 20)], [2, 2, 5])
    d = op_decl_dat(s5, 4, v, 'rank3')
    call op_fetch_data(d, out)
    call check(all(reshape(out, [20]) == [(1.0d0 * i, i = 1, 20)]), 'rank-3 round trip')
  end block

  ! No data: zeros, from C or Fortran type names.
  block
    real(8) :: zd(6)
    real(4) :: zf(6)
    integer(c_int) :: zi(6)
    integer(c_long_long) :: zl(6)
    logical(c_bool) :: zb(6)
    zd = 1; zf = 1; zi = 1; zl = 1; zb = .true.
    call op_fetch_data(op_decl_dat(s3, 2, 'double', 'zd'), zd)
    call op_fetch_data(op_decl_dat(s3, 2, 'real(4)', 'zf'), zf)
    call op_fetch_data(op_decl_dat(s3, 2, 'integer', 'zi'), zi)
    call op_fetch_data(op_decl_dat(s3, 2, 'integer(8)', 'zl'), zl)
    call op_fetch_data(op_decl_dat(s3, 2, 'bool', 'zb'), zb)
    call check_ok('zero dats')
    call check(all(zd == 0) .and. all(zf == 0) .and. all(zi == 0) .and. all(zl == 0) .and. &
               .not. logical(any(zb)), 'dats declared without data are zero')
  end block

  ! Sets of size 1 and 0.
  block
    real(8) :: one(1), out1(1), nothing(1)
    one = 3.75d0
    d = op_decl_dat(s1, 1, one, 'one')
    call op_fetch_data(d, out1)
    call check_dbl(out1(1), 3.75d0, 'dat on a set of size 1')
    d = op_decl_dat(s0, 4, 'double', 'none')
    call check(c_associated(d%handle), 'dat of zeros on the empty set')
    call op_fetch_data(d, nothing)
    d = op_decl_dat(s0, 1, one(1:0), 'none_with_data')
    call check(c_associated(d%handle), 'dat on the empty set from an empty array')
    call check_ok('empty set dats')
  end block

  ! Constants (scalar and array) and kernels declare without error.
  block
    real(8) :: g, qinf(4)
    integer(c_int) :: n
    g = 1.4d0
    qinf = [1d0, 2d0, 3d0, 4d0]
    n = 7
    call op_decl_const(1, g, 'gam')
    call op_decl_const(4, qinf, 'qinf')
    call op_decl_const(1, n, 'nseven')
    call check_ok('op_decl_const')
    k = op_decl_kernel('void k(double *x) { *x = 1.0; }' // new_line('a'), 'k')
    call check(c_associated(k%handle), 'op_decl_kernel')
    call check_ok('op_decl_kernel')
  end block

  ! op_exit frees everything; op_init starts afresh.
  call op_exit()
  call op_init(backend=backend)
  s3 = op_decl_set(3, 'three')
  call check_int(op_get_size(s3), 3_c_int64_t, 'op_get_size after op_init again')
  call op_exit()
end program t010_decl_f
