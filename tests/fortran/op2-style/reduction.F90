! OP2's reduction test in OP2's Fortran style: global INC, MIN and MAX reductions (with an
! op_arg_info payload), direct and indirect, and op_arg_idx. Reads new_grid.dat (0-based maps,
! hence op_init_base(0, 0)); every result is compared with a plain Fortran loop over the same
! mesh. Prints "Test PASSED" and exits 0, or names what differs and stops with status 1.
program reduction
  use op2_fortran_declarations
  use op2_fortran_reference
  use reduction_kernels
  implicit none

  integer(4) :: nnode, ncell, nedge, nbedge, i, n1, n2, dummy(4)
  real(8) :: xy(2)
  integer(4), allocatable :: ecell(:), ids(:)
  real(8), allocatable :: res(:)

  type(op_set) :: edges, cells
  type(op_map) :: pecell
  type(op_dat) :: p_res, p_id

  integer(4) :: ncells_counted, nedges_counted, lo, hi, where
  real(8) :: total, t0, t1
  integer(4) :: want_lo, want_hi, want_where
  real(8) :: want_total
  real(8), allocatable :: res_out(:)
  logical :: ok

  call op_init_base(0, 0)

  open(10, file='new_grid.dat', status='old', action='read')
  read(10, *) nnode, ncell, nedge, nbedge
  do i = 1, nnode
    read(10, *) xy
  end do
  do i = 1, ncell
    read(10, *) dummy
  end do
  allocate(ecell(2 * nedge))
  do i = 1, nedge
    read(10, *) n1, n2, ecell(2 * i - 1), ecell(2 * i)
  end do
  close(10)

  allocate(res(4 * ncell))
  res = 7.0_8

  call op_decl_set(nedge, edges, 'edges')
  call op_decl_set(ncell, cells, 'cells')
  call op_decl_map(edges, cells, 2, ecell, pecell, 'pecell')
  call op_decl_dat(cells, 4, 'real(8)', res, p_res, 'p_res')
  call op_decl_dat_temp(cells, 1, 'integer(4)', p_id, 'p_id')

  call op_timers(t0)

  ncells_counted = 0
  call op_par_loop_2(count_cell, cells, &
    op_arg_dat(p_res, -1, OP_ID, 4, 'real(8)', OP_WRITE), &
    op_arg_gbl(ncells_counted, 1, 'integer(4)', OP_INC))

  nedges_counted = 0
  call op_par_loop_3(count_edge, edges, &
    op_arg_dat(p_res, 1, pecell, 4, 'real(8)', OP_INC), &
    op_arg_dat(p_res, 2, pecell, 4, 'real(8)', OP_INC), &
    op_arg_gbl(nedges_counted, 1, 'integer(4)', OP_INC))

  lo = huge(lo)
  hi = -1
  where = -1
  total = 0.0_8
  call op_par_loop_7(edge_extremes, edges, &
    op_arg_idx(1, pecell), &
    op_arg_idx(2, pecell), &
    op_arg_gbl(lo, 1, 'integer(4)', OP_MIN), &
    op_arg_gbl(hi, 1, 'integer(4)', OP_MAX), &
    op_arg_gbl(total, 1, 'real(8)', OP_INC), &
    op_arg_idx(-1, OP_ID), &
    op_arg_info(where, 1, 'integer(4)', 4))

  call op_par_loop_2(cell_index, cells, &
    op_arg_idx(-1, OP_ID), &
    op_arg_dat(p_id, -1, OP_ID, 1, 'integer(4)', OP_WRITE))

  call op_timers(t1)

  ! The same by hand (cells are 1-based here: the kernels see op_arg_idx 1-based).
  want_lo = huge(want_lo)
  want_hi = -1
  want_where = -1
  want_total = 0.0_8
  do i = 1, nedge
    want_lo = min(want_lo, ecell(2 * i - 1) + 1, ecell(2 * i) + 1)
    if (max(ecell(2 * i - 1), ecell(2 * i)) + 1 > want_hi) then
      want_hi = max(ecell(2 * i - 1), ecell(2 * i)) + 1
      want_where = i
    end if
    want_total = want_total + real(ecell(2 * i - 1) + ecell(2 * i) + 2, 8)
  end do

  ok = .true.
  call expect_int('cells counted', ncells_counted, ncell)
  call expect_int('edges counted', nedges_counted, nedge)
  call expect_int('smallest cell of an edge', lo, want_lo)
  call expect_int('largest cell of an edge', hi, want_hi)
  if (abs(total - want_total) > 1e-9_8 * want_total) then
    print *, 'sum of cells of edges: ', total, ' expected ', want_total
    ok = .false.
  end if
  ! Several edges may reach the largest cell: the payload must name one of them.
  if (where < 1 .or. where > nedge) then
    print *, 'op_arg_info payload out of range: ', where
    ok = .false.
  else if (max(ecell(2 * where - 1), ecell(2 * where)) + 1 /= want_hi) then
    print *, 'op_arg_info payload: edge ', where, ' does not reach cell ', want_hi
    ok = .false.
  end if

  ! res(1) of each cell counts its edges; res(2:4) stay zero (count_cell wrote them).
  allocate(res_out(4 * ncell), ids(ncell))
  call op_fetch_data(p_res, res_out)
  res = 0.0_8
  do i = 1, nedge
    res(4 * ecell(2 * i - 1) + 1) = res(4 * ecell(2 * i - 1) + 1) + 1.0_8
    res(4 * ecell(2 * i) + 1) = res(4 * ecell(2 * i) + 1) + 1.0_8
  end do
  if (any(res_out /= res)) then
    print *, 'p_res differs from the hand count at ', count(res_out /= res), ' values'
    ok = .false.
  end if
  call op_fetch_data(p_id, ids)
  if (any(ids /= [(i, i = 1, ncell)])) then
    print *, 'op_arg_idx(-1, OP_ID) did not give 1-based cell numbers'
    ok = .false.
  end if

  if (op_free_dat_temp(p_id) /= 1) then
    print *, 'op_free_dat_temp failed'
    ok = .false.
  end if
  if (t1 < t0) then
    print *, 'op_timers went backwards'
    ok = .false.
  end if

  call op_exit()
  if (.not. ok) error stop 1
  print '(a)', 'Test PASSED'

contains

  subroutine expect_int(what, got, want)
    character(len=*), intent(in) :: what
    integer(4), intent(in) :: got, want
    if (got /= want) then
      print '(a,a,i0,a,i0)', what, ': ', got, ' expected ', want
      ok = .false.
    end if
  end subroutine expect_int

end program reduction
