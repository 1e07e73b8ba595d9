! Declaration errors from Fortran (twin of tests/c/t210-err-decl.c), with OP_ERRORS_RETURN:
! a call before op_init, null handles, negative set size, map dims and 1-based entries out of
! range (the message quotes them 1-based, as the program wrote them: op_init sets index base
! 1), a map column idx out of range ("use 1..2"), dat dims and unknown types, constant names and
! dims, a kernel whose function is missing. Each failed declaration returns a null handle and
! leaves later declarations working.
program t210_err_decl_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  character(len=:), allocatable :: backend
  type(op_set) :: s, nodes, edges, empty, null_set
  type(op_map) :: m
  type(op_dat) :: d
  type(op_kernel) :: k
  ! 1-based entries: good is valid on 10 nodes; bad has 13 at element 4, position 2 (entry 8);
  ! zero has 0 at element 1, position 1. Messages say so in Fortran's numbering.
  integer :: good(2, 4), bad(2, 4), zero(2, 4)
  real(8) :: v(10)
  integer(c_int) :: one
  character(len=16), parameter :: none(0) = [character(len=16) ::]

  good = reshape([1, 2, 2, 3, 3, 4, 4, 5], [2, 4])
  bad = good
  bad(2, 4) = 13
  zero = good
  zero(1, 1) = 0
  v = 0
  one = 1

  ! Before op_init (the handler may be set first).
  call op_set_error_handler(OP_ERRORS_RETURN)
  s = op_decl_set(3, 'early')
  call check(.not. c_associated(s%handle), 'op_decl_set before op_init returns null')
  call check_err(OP2_ERR_NOT_INITIALISED, 'op_decl_set', [character(len=16) :: 'op_init'], &
                 'op_decl_set before op_init')

  call op_set_error_handler(OP_ERRORS_ABORT)    ! an op_init that fails must stop the test
  backend = test_init()
  call op_set_error_handler(OP_ERRORS_RETURN)

  ! Sets.
  s = op_decl_set(-3, 'nodes')
  call check(.not. c_associated(s%handle), 'negative set size returns null')
  call check_err(OP2_ERR_BAD_SIZE, 'op_decl_set', [character(len=16) :: "'nodes'", '-3'], &
                 'negative set size')
  nodes = op_decl_set(10, 'nodes')
  call check(c_associated(nodes%handle), 'nodes')
  call check_ok('op_decl_set after a failure')
  edges = op_decl_set(4, 'edges')
  empty = op_decl_set(0, 'empty')

  ! Maps.
  m = op_decl_map(edges, nodes, 2, bad, 'pedge')
  call check(.not. c_associated(m%handle), 'map out of range returns null')
  call check_err(OP2_ERR_MAP_OUT_OF_RANGE, 'op_decl_map', [character(len=16) :: "'pedge'", &
                 'entry 8 ', 'element 4,', 'position 2)', 'is 13,', 'outside 1..10', "'nodes'"], &
                 'map entry out of range (1-based)')
  m = op_decl_map(edges, nodes, 2, zero, 'pzero')
  call check(.not. c_associated(m%handle), 'map entry 0 returns null')
  call check_err(OP2_ERR_MAP_OUT_OF_RANGE, 'op_decl_map', [character(len=16) :: "'pzero'", 'is 0,', &
                 'entry 1 ', 'element 1,', 'position 1)'], 'map entry 0 (1-based) is out of range')
  m = op_decl_map(edges, empty, 2, good, 'pempty')
  call check_err(OP2_ERR_MAP_OUT_OF_RANGE, 'op_decl_map', [character(len=16) :: "'pempty'", &
                 "'empty'"], 'map onto the empty set')
  m = op_decl_map(edges, nodes, 0, good, 'pdim0')
  call check_err(OP2_ERR_BAD_SIZE, 'op_decl_map', [character(len=16) :: "'pdim0'", '0'], 'map dim 0')
  m = op_decl_map(edges, nodes, -2, good, 'pdimneg')
  call check_err(OP2_ERR_BAD_SIZE, 'op_decl_map', [character(len=16) :: "'pdimneg'", '-2'], &
                 'negative map dim')
  m = op_decl_map(null_set, nodes, 2, good, 'pnullfrom')
  call check(.not. c_associated(m%handle), 'map from a null set returns null')
  call check_err(OP2_ERR_NULL_ARGUMENT, 'op_decl_map', [character(len=16) :: 'from', 'is NULL'], &
                 'map from a null set')
  m = op_decl_map(edges, null_set, 2, good, 'pnullto')
  call check_err(OP2_ERR_NULL_ARGUMENT, 'op_decl_map', [character(len=16) :: 'to', 'is NULL'], &
                 'map to a null set')
  m = op_decl_map(edges, nodes, 2, good, 'pedge')
  call check(c_associated(m%handle), 'good map after failures')
  call check_ok('good map after failures')

  ! Dats.
  d = op_decl_dat(null_set, 1, v, 'q')
  call check(.not. c_associated(d%handle), 'dat on a null set returns null')
  call check_err(OP2_ERR_NULL_ARGUMENT, 'op_decl_dat', [character(len=16) :: 'set', 'is NULL'], &
                 'dat on a null set')
  d = op_decl_dat(nodes, 0, v, 'q')
  call check_err(OP2_ERR_BAD_SIZE, 'op_decl_dat', [character(len=16) :: "'q'", '0'], 'dat dim 0')
  d = op_decl_dat(nodes, -4, v, 'q')
  call check_err(OP2_ERR_BAD_SIZE, 'op_decl_dat', [character(len=16) :: "'q'", '-4'], &
                 'negative dat dim')
  d = op_decl_dat(nodes, 1, 'doubel', 'q')
  call check(.not. c_associated(d%handle), 'unknown type returns null')
  call check_err(OP2_ERR_BAD_TYPE, 'op_decl_dat', [character(len=16) :: "'q'", 'doubel'], &
                 'unknown type')
  d = op_decl_dat(nodes, 1, 'long', 'q')
  call check_err(OP2_ERR_BAD_TYPE, 'op_decl_dat', [character(len=16) :: "'q'", 'long'], &
                 'type "long" is not an op2 type')
  d = op_decl_dat(nodes, 1, v, 'q')
  call check(c_associated(d%handle), 'good dat after failures')
  call check_ok('good dat after failures')

  ! A column that the map does not have: Fortran's idx 3 of a dim-2 map, and idx 0.
  block
    type(op_arg) :: a
    a = op_arg_dat(d, 3, m, 1, 'double', OP_READ)
    call check_err(OP2_ERR_ARG_IDX, 'op_arg_dat', [character(len=16) :: 'idx 3 ', 'use 1..2', &
                   'or -2 for all'], 'idx past the map dim, in Fortran numbering')
    a = op_arg_dat(d, 0, m, 1, 'double', OP_READ)
    call check_err(OP2_ERR_ARG_IDX, 'op_arg_dat', [character(len=16) :: 'idx 0 ', 'use 1..2'], &
                   'idx 0 in Fortran numbering')
  end block

  ! Constants.
  call op_decl_const(0, one, 'c1')
  call check_err(OP2_ERR_BAD_SIZE, 'op_decl_const', [character(len=16) :: "'c1'", '0'], &
                 'constant dim 0')
  call op_decl_const(1, one, '1abc')
  call check_err(OP2_ERR_BAD_NAME, 'op_decl_const', [character(len=16) :: "'1abc'"], &
                 'constant name not an identifier')
  call op_decl_const(1, one, 'two words')
  call check_err(OP2_ERR_BAD_NAME, 'op_decl_const', [character(len=16) :: "'two words'"], &
                 'constant name with a blank')
  call op_decl_const(1, one, '')
  call check_err(OP2_ERR_BAD_NAME, 'op_decl_const', none, 'empty constant name')
  call op_decl_const(1, one, 'double')
  call check_err(OP2_ERR_BAD_NAME, 'op_decl_const', [character(len=16) :: "'double'"], &
                 'constant named by a C keyword')
  call op_decl_const(1, one, 'c1')
  call check_ok('good constant after failures')

  ! Kernels.
  k = op_decl_kernel('void f(int *d) { *d = 0; }', 'g')
  call check(.not. c_associated(k%handle), 'kernel without its function returns null')
  call check_err(OP2_ERR_BAD_KERNEL, 'op_decl_kernel', [character(len=16) :: "'g'"], &
                 'kernel without its function')

  ! Everything declared after the failures works in a loop.
  block
    integer(c_int) :: out(10)
    d = op_decl_dat(nodes, 1, 'int', 'd')
    k = op_decl_kernel('void k(int *d) { *d = c1 + 1; }', 'k')
    call op_set_error_handler(OP_ERRORS_ABORT)
    call op_par_loop(k, 'k', nodes, [op_arg_dat(d, -1, OP_ID, 1, 'int', OP_WRITE)])
    call op_fetch_data(d, out)
    call check(all(out == 2), 'loop after the failures')
  end block

  call op_exit()
end program t210_err_decl_f
