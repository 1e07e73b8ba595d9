! Airfoil in OP2's Fortran style: reads new_grid.dat (OP2's mesh file, 0-based indices, hence
! op_init_base(0, 0)), runs NITER iterations of the five Airfoil loops with the compiled Fortran
! kernels of airfoil_kernels, and writes "iteration rms" per iteration to RMS_LOG (on the root
! process), for comparison with the C Airfoil's --rms-log.
!   airfoil [NITER [RMS_LOG [MESH.h5]]]  (defaults 1000 and rms.txt; NAME=VALUE arguments go to op2)
! With MESH.h5 (OP2's HDF5 layout: sets, maps and dats by their names, as op2-h5convert writes
! them) the mesh is declared from that file with op_decl_*_hdf5 instead.
! Under MPI every process reads the file and declares its own block of every set (element ranges
! split as evenly as the processes allow); op_partition then distributes the mesh.
program airfoil
  use op2_fortran_declarations
  use op2_fortran_reference
  use op2_fortran_hdf5_declarations
  use airfoil_constants
  use airfoil_kernels
  implicit none

  integer(4) :: nnode, ncell, nedge, nbedge, niter, iter, k, i, ncell_total, nargs, pos
  integer(4), allocatable :: cell(:), edge(:), ecell(:), bedge(:), becell(:), bound(:)
  real(8), allocatable :: x(:), q(:), qold(:), adt(:), res(:)
  real(8) :: rms, maxerr
  integer(4) :: errloc
  character(len=256) :: arg, log_path, h5

  type(op_set) :: nodes, edges, bedges, cells
  type(op_map) :: pedge, pecell, pcell, pbedge, pbecell
  type(op_dat) :: p_bound, p_x, p_q, p_qold, p_adt, p_res

  niter = 1000
  log_path = 'rms.txt'
  h5 = ''
  pos = 0
  do nargs = 1, command_argument_count()
    call get_command_argument(nargs, arg)
    if (index(arg, '=') > 0) cycle
    pos = pos + 1
    if (pos == 1) read(arg, *) niter
    if (pos == 2) log_path = arg
    if (pos == 3) h5 = arg
  end do

  call op_init_base(0, 0)
  call op_timing2_start('Airfoil')

  if (len_trim(h5) > 0) then
    call op_print('Declaring OP2 sets from '//trim(h5))
    call op_decl_set_hdf5(nnode, nodes, trim(h5), 'nodes')
    call op_decl_set_hdf5(nedge, edges, trim(h5), 'edges')
    call op_decl_set_hdf5(nbedge, bedges, trim(h5), 'bedges')
    call op_decl_set_hdf5(ncell, cells, trim(h5), 'cells')

    call op_decl_map_hdf5(edges, nodes, 2, pedge, trim(h5), 'pedge')
    call op_decl_map_hdf5(edges, cells, 2, pecell, trim(h5), 'pecell')
    call op_decl_map_hdf5(bedges, nodes, 2, pbedge, trim(h5), 'pbedge')
    call op_decl_map_hdf5(bedges, cells, 1, pbecell, trim(h5), 'pbecell')
    call op_decl_map_hdf5(cells, nodes, 4, pcell, trim(h5), 'pcell')

    call op_decl_dat_hdf5(bedges, 1, p_bound, 'integer(4)', trim(h5), 'p_bound')
    call op_decl_dat_hdf5(nodes, 2, p_x, 'real(8)', trim(h5), 'p_x')
    call op_decl_dat_hdf5(cells, 4, p_q, 'real(8)', trim(h5), 'p_q')
    call op_decl_dat_hdf5(cells, 4, p_qold, 'real(8)', trim(h5), 'p_qold')
    call op_decl_dat_hdf5(cells, 1, p_adt, 'real(8)', trim(h5), 'p_adt')
    call op_decl_dat_temp(cells, 4, 'real(8)', p_res, 'p_res')
  else
    call read_mesh()

    call op_print('Declaring OP2 sets')
    call op_decl_set(nnode, nodes, 'nodes')
    call op_decl_set(nedge, edges, 'edges')
    call op_decl_set(nbedge, bedges, 'bedges')
    call op_decl_set(ncell, cells, 'cells')

    call op_decl_map(edges, nodes, 2, edge, pedge, 'pedge')
    call op_decl_map(edges, cells, 2, ecell, pecell, 'pecell')
    call op_decl_map(bedges, nodes, 2, bedge, pbedge, 'pbedge')
    call op_decl_map(bedges, cells, 1, becell, pbecell, 'pbecell')
    call op_decl_map(cells, nodes, 4, cell, pcell, 'pcell')

    call op_decl_dat(bedges, 1, 'integer(4)', bound, p_bound, 'p_bound')
    call op_decl_dat(nodes, 2, 'real(8)', x, p_x, 'p_x')
    call op_decl_dat(cells, 4, 'real(8)', q, p_q, 'p_q')
    call op_decl_dat(cells, 4, 'real(8)', qold, p_qold, 'p_qold')
    call op_decl_dat(cells, 1, 'real(8)', adt, p_adt, 'p_adt')
    call op_decl_dat_temp(cells, 4, 'real(8)', p_res, 'p_res')
    deallocate(cell, edge, ecell, bedge, becell, bound, x, q, qold, adt)
  end if

  call op_decl_const(gam, 1, 'real(8)')
  call op_decl_const(gm1, 1, 'real(8)')
  call op_decl_const(cfl, 1, 'real(8)')
  call op_decl_const(eps, 1, 'real(8)')
  call op_decl_const(qinf, 4, 'real(8)')

  call op_partition('BLOCK', 'ANY', edges, pecell, p_x)
  ncell_total = op_get_size(cells)

  if (op_is_root() == 1) open(20, file=trim(log_path), status='replace', action='write')
  call op_timing2_enter('Main computation')
  do iter = 1, niter
    call op_par_loop_2(save_soln, cells, &
      op_arg_dat(p_q, -1, OP_ID, 4, 'real(8)', OP_READ), &
      op_arg_dat(p_qold, -1, OP_ID, 4, 'real(8)', OP_WRITE))

    do k = 1, 2
      call op_par_loop_6(adt_calc, cells, &
        op_arg_dat(p_x, 1, pcell, 2, 'real(8)', OP_READ), &
        op_arg_dat(p_x, 2, pcell, 2, 'real(8)', OP_READ), &
        op_arg_dat(p_x, 3, pcell, 2, 'real(8)', OP_READ), &
        op_arg_dat(p_x, 4, pcell, 2, 'real(8)', OP_READ), &
        op_arg_dat(p_q, -1, OP_ID, 4, 'real(8)', OP_READ), &
        op_arg_dat(p_adt, -1, OP_ID, 1, 'real(8)', OP_WRITE))

      call op_par_loop_8(res_calc, edges, &
        op_arg_dat(p_x, 1, pedge, 2, 'real(8)', OP_READ), &
        op_arg_dat(p_x, 2, pedge, 2, 'real(8)', OP_READ), &
        op_arg_dat(p_q, 1, pecell, 4, 'real(8)', OP_READ), &
        op_arg_dat(p_q, 2, pecell, 4, 'real(8)', OP_READ), &
        op_arg_dat(p_adt, 1, pecell, 1, 'real(8)', OP_READ), &
        op_arg_dat(p_adt, 2, pecell, 1, 'real(8)', OP_READ), &
        op_arg_dat(p_res, 1, pecell, 4, 'real(8)', OP_INC), &
        op_arg_dat(p_res, 2, pecell, 4, 'real(8)', OP_INC))

      call op_par_loop_6(bres_calc, bedges, &
        op_arg_dat(p_x, 1, pbedge, 2, 'real(8)', OP_READ), &
        op_arg_dat(p_x, 2, pbedge, 2, 'real(8)', OP_READ), &
        op_arg_dat(p_q, 1, pbecell, 4, 'real(8)', OP_READ), &
        op_arg_dat(p_adt, 1, pbecell, 1, 'real(8)', OP_READ), &
        op_arg_dat(p_res, 1, pbecell, 4, 'real(8)', OP_INC), &
        op_arg_dat(p_bound, -1, OP_ID, 1, 'integer(4)', OP_READ))

      rms = 0.0_8
      maxerr = 0.0_8
      errloc = 0
      call op_par_loop_8(update, cells, &
        op_arg_dat(p_qold, -1, OP_ID, 4, 'real(8)', OP_READ), &
        op_arg_dat(p_q, -1, OP_ID, 4, 'real(8)', OP_WRITE), &
        op_arg_dat(p_res, -1, OP_ID, 4, 'real(8)', OP_RW), &
        op_arg_dat(p_adt, -1, OP_ID, 1, 'real(8)', OP_READ), &
        op_arg_gbl(rms, 1, 'real(8)', OP_INC), &
        op_arg_gbl(maxerr, 1, 'real(8)', OP_MAX), &
        op_arg_idx(-1, OP_ID), &
        op_arg_info(errloc, 1, 'integer(4)', 6))
    end do

    rms = sqrt(rms / real(ncell_total, 8))
    if (op_is_root() == 1) write(20, '(i0,1x,es25.17e3)') iter, rms
    if (op_is_root() == 1 .and. mod(iter, 100) == 0) then
      write(*, '(4x,i0,es16.7,4x,a,es16.7,a,i0)') iter, rms, 'max err: ', maxerr, ' at ', errloc
    end if
  end do
  call op_timing2_finish()
  if (op_is_root() == 1) close(20)
  call op_timing2_output()

  if (op_free_dat_temp(p_res) /= 1) error stop 'airfoil: op_free_dat_temp'
  call op_exit()

contains

  ! The mesh, or under MPI this process's block of each set (maps keep global numbers).
  subroutine read_mesh()
    integer(4) :: nodes_all, cells_all, edges_all, bedges_all, rank, nranks
    integer(4) :: n0, n1, c0, c1, e0, e1, b0, b1, a, b, c, d
    real(8) :: xy(2)
    rank = op_get_rank()
    nranks = op_num_ranks()
    open(10, file='new_grid.dat', status='old', action='read')
    read(10, *) nodes_all, cells_all, edges_all, bedges_all
    call block(nodes_all, rank, nranks, n0, n1)
    call block(cells_all, rank, nranks, c0, c1)
    call block(edges_all, rank, nranks, e0, e1)
    call block(bedges_all, rank, nranks, b0, b1)
    nnode = n1 - n0
    ncell = c1 - c0
    nedge = e1 - e0
    nbedge = b1 - b0
    allocate(x(2 * nnode), cell(4 * ncell), edge(2 * nedge), ecell(2 * nedge), &
             bedge(2 * nbedge), becell(nbedge), bound(nbedge))
    do i = 0, nodes_all - 1
      read(10, *) xy
      if (i >= n0 .and. i < n1) x(2 * (i - n0) + 1:2 * (i - n0) + 2) = xy
    end do
    do i = 0, cells_all - 1
      read(10, *) a, b, c, d
      if (i >= c0 .and. i < c1) cell(4 * (i - c0) + 1:4 * (i - c0) + 4) = [a, b, c, d]
    end do
    do i = 0, edges_all - 1
      read(10, *) a, b, c, d
      if (i >= e0 .and. i < e1) then
        edge(2 * (i - e0) + 1:2 * (i - e0) + 2) = [a, b]
        ecell(2 * (i - e0) + 1:2 * (i - e0) + 2) = [c, d]
      end if
    end do
    do i = 0, bedges_all - 1
      read(10, *) a, b, c, d
      if (i >= b0 .and. i < b1) then
        bedge(2 * (i - b0) + 1:2 * (i - b0) + 2) = [a, b]
        becell(i - b0 + 1) = c
        bound(i - b0 + 1) = d
      end if
    end do
    close(10)
    allocate(q(4 * ncell), qold(4 * ncell), adt(ncell), res(4 * ncell))
    do i = 1, ncell
      q(4 * (i - 1) + 1:4 * i) = qinf
    end do
    qold = 0.0_8
    adt = 0.0_8
    res = 0.0_8
  end subroutine read_mesh

  ! Elements [first, last) of n split over nranks processes.
  subroutine block(n, rank, nranks, first, last)
    integer(4), intent(in) :: n, rank, nranks
    integer(4), intent(out) :: first, last
    first = int(int(n, 8) * rank / nranks)
    last = int(int(n, 8) * (rank + 1) / nranks)
  end subroutine block

end program airfoil
