! OP2's HDF5 functions from Fortran (twin of tests/c/t510-hdf5.c): op_dump_to_hdf5 and
! op_write_const_hdf5, then in a new session op_decl_set/map/dat_hdf5 and op_get_const_hdf5
! give back the sizes, the 1-based map (checked through a loop) and the values;
! op_fetch_data_hdf5_file_path writes a dat inside groups that reads back exactly; a missing
! dataset is OP2_ERR_NO_DATASET and a null handle without ending the program (default handler),
! a missing file OP2_ERR_IO.
program t510_hdf5_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  character(len=:), allocatable :: backend
  character(len=*), parameter :: file = 't510-hdf5-f.h5', path_file = 't510-hdf5-f-path.h5'
  type(op_set) :: nodes, edges
  type(op_map) :: pedge
  type(op_dat) :: p_x, p_s
  type(op_kernel) :: k
  real(8) :: x(5), s(4), qinf(4), q2(4), gam, g2
  integer :: emap(2, 4), i, n, n2, unit
  character(len=16), parameter :: none(0) = [character(len=16) ::]

  do i = 1, 5
    x(i) = i * 1.5d0
  end do
  emap = reshape([1, 2, 2, 3, 3, 4, 4, 5], [2, 4])
  qinf = [1d0, 0.25d0, 0d0, 2.5d0]
  gam = 1.4d0
  n = 7

  backend = test_init()
  nodes = op_decl_set(5, 'nodes')
  edges = op_decl_set(4, 'edges')
  pedge = op_decl_map(edges, nodes, 2, emap, 'pedge')
  p_x = op_decl_dat(nodes, 1, x, 'p_x')
  call op_dump_to_hdf5(file)
  call check_ok('op_dump_to_hdf5')
  call op_write_const_hdf5('qinf', 4, 'real(8)', qinf, file)
  call op_write_const_hdf5('gam', 1, 'double', gam, file)
  call op_write_const_hdf5('n', 1, 'integer', n, file)
  call check_ok('op_write_const_hdf5')
  call op_exit()

  backend = test_init()
  nodes = op_decl_set_hdf5(file, 'nodes')
  edges = op_decl_set_hdf5(file, 'edges')
  call check(op_get_size(nodes) == 5 .and. op_get_size(edges) == 4, 'set sizes from the file')
  pedge = op_decl_map_hdf5(edges, nodes, 2, file, 'pedge')
  p_x = op_decl_dat_hdf5(nodes, 1, 'real(8)', file, 'p_x')
  call check_ok('op_decl_dat_hdf5')
  p_s = op_decl_dat(edges, 1, 'real(8)', 's')
  k = op_decl_kernel('void sum2(const double *a, const double *b, double *s) { s[0] = a[0] + 10.0 * b[0]; }', &
                     'sum2')
  call op_par_loop(k, 'sum2', edges, [op_arg_dat(p_x, 1, pedge, 1, 'real(8)', OP_READ), &
                                      op_arg_dat(p_x, 2, pedge, 1, 'real(8)', OP_READ), &
                                      op_arg_dat(p_s, -1, OP_ID, 1, 'real(8)', OP_WRITE)])
  call op_fetch_data(p_s, s)
  do i = 1, 4
    call check_dbl(s(i), x(i) + 10d0 * x(i + 1), 'gather through the map read from the file')
  end do
  q2 = 0
  call op_get_const_hdf5('qinf', 4, 'real(8)', q2, file)
  call check(all(q2 == qinf), 'qinf from the file')
  call op_get_const_hdf5('gam', 1, 'real(8)', g2, file)
  call check_dbl(g2, 1.4d0, 'gam from the file')
  call op_get_const_hdf5('n', 1, 'integer', n2, file)
  call check(n2 == 7, 'n from the file')

  ! op_fetch_data_hdf5_file_path: the sums into a group of a new file, read back exactly
  call op_fetch_data_hdf5_file_path(p_s, path_file, 'results/step1/s')
  call check_ok('op_fetch_data_hdf5_file_path')
  block
    type(op_dat) :: back
    real(8) :: s2(4)
    back = op_decl_dat_hdf5(edges, 1, 'real(8)', path_file, 'results/step1/s')
    call check_ok('op_decl_dat_hdf5 of a path')
    s2 = 0
    call op_fetch_data(back, s2)
    call check(all(s2 == s), 'dat written at a path reads back exactly')
  end block

  ! a dataset the file does not hold: null, named, and the program goes on under the default
  ! (exit) handler
  p_x = op_decl_dat_hdf5(nodes, 1, 'real(8)', file, 'p_y')
  call check(.not. c_associated(p_x%handle), 'missing dataset returns null')
  call check_err(OP2_ERR_NO_DATASET, 'op_decl_dat_hdf5', [character(len=16) :: "'p_y'", file], 'missing dataset')
  pedge = op_decl_map_hdf5(edges, nodes, 2, file, 'm_test')
  call check(.not. c_associated(pedge%handle), 'missing map dataset returns null')
  call check_err(OP2_ERR_NO_DATASET, 'op_decl_map_hdf5', [character(len=16) :: "'m_test'"], 'missing map')
  call op_set_error_handler(OP_ERRORS_RETURN)
  nodes = op_decl_set_hdf5('no-such-file.h5', 'nodes')
  call check_err(OP2_ERR_IO, 'op_decl_set_hdf5', [character(len=16) :: 'no-such-file.h5'], 'missing file')
  call op_exit()
  open(newunit=unit, file=file, status='old')
  close(unit, status='delete')
  open(newunit=unit, file=path_file, status='old')
  close(unit, status='delete')
end program t510_hdf5_f
