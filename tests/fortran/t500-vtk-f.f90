! op_write_vtk from Fortran (twin of tests/c/t500-vtk.c): the 2x2 quad mesh with 1-based map
! entries written as an ASCII .vtu; the file holds 0-based connectivity, the dats' values at
! full precision, quad cell types; a bad extension is OP2_ERR_BAD_NAME.
program t500_vtk_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  character(len=:), allocatable :: backend, text
  type(op_set) :: nodes, cells
  type(op_map) :: pcell
  type(op_dat) :: p_x, p_u, p_flag
  real(8) :: x(2, 9), u(9)
  integer :: cmap(4, 4), flag(4), i, j, n0, unit, ios
  character(len=256) :: line

  do j = 0, 2
    do i = 0, 2
      x(1, 3 * j + i + 1) = i
      x(2, 3 * j + i + 1) = j * 0.5d0 + 0.1d0
    end do
  end do
  do j = 0, 1
    do i = 0, 1
      n0 = 3 * j + i + 1
      cmap(:, 2 * j + i + 1) = [n0, n0 + 1, n0 + 4, n0 + 3]
    end do
  end do
  do i = 1, 9
    u(i) = 1d0 / (i - 1 + 3d0)
  end do
  flag = [1, -2, 30, 400]

  backend = test_init()
  nodes = op_decl_set(9, 'nodes')
  cells = op_decl_set(4, 'cells')
  pcell = op_decl_map(cells, nodes, 4, cmap, 'pcell')
  p_x = op_decl_dat(nodes, 2, x, 'x')
  p_u = op_decl_dat(nodes, 1, u, 'u')
  p_flag = op_decl_dat(cells, 1, flag, 'flag')

  call op_write_vtk('t500-vtk-f.vtu', pcell, p_x, [p_u, p_flag], OP_VTK_ASCII)
  call check_ok('op_write_vtk')
  text = ''
  open(newunit=unit, file='t500-vtk-f.vtu', status='old', action='read', iostat=ios)
  call check(ios == 0, 'open the written .vtu')
  do
    read(unit, '(a)', iostat=ios) line
    if (ios /= 0) exit
    text = text // trim(adjustl(line)) // '|'
  end do
  close(unit, status='delete')
  call check(has(text, '<Piece NumberOfPoints="9" NumberOfCells="4">'), 'piece sizes')
  call check(has(text, 'Name="connectivity" format="ascii">|0 1 4 3 1 2|5 4 3 4 7 6|4 5 8 7|'), &
             'connectivity 0-based')
  call check(has(text, 'Name="types" format="ascii">|9 9 9 9|'), 'quad cells')
  call check(has(text, '0.33333333333333331 0.25 0.20000000000000001'), 'u at full precision')
  call check(has(text, '<CellData>|<DataArray type="Int32" Name="flag" format="ascii">|1 -2 30 400|'), &
             'flag as cell data')
  call check(has(text, '2 1.1000000000000001 0|'), 'last point padded with z = 0')

  call op_set_error_handler(OP_ERRORS_RETURN)
  call op_write_vtk('t500-vtk-f.txt', pcell, p_x, [p_u])
  call check_err(OP2_ERR_BAD_NAME, 'op_write_vtk', [character(len=8) :: '.vtu', '.vtk'], 'bad extension')
  call op_exit()
end program t500_vtk_f
