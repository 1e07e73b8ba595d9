! airfoil.F90: the Airfoil benchmark (2D inviscid Euler on an unstructured quad mesh around a
! NACA0012 aerofoil) driven from Fortran through the op2 module. The kernels are the C ones of
! examples-c/airfoil/kernels/<name>.c (one function per file), read at run time; so this
! program computes exactly what examples-c/airfoil/airfoil.c computes (bit for bit on seq).
!
! usage: airfoil_f [--mesh FILE] [--iters N] [--rms-log FILE] [--kernels DIR] [--backend NAME]
!                  [OP2 tokens such as OP2_BACKEND=threads]
!   --mesh FILE     mesh in new_grid.dat format (default: new_grid.dat in the current directory)
!   --iters N       number of iterations (default 1000)
!   --rms-log FILE  write "iter rms" for every iteration, rms as C's %.17e
!   --kernels DIR   directory of the kernel sources (default: KERNEL_DIR, set at compile time)
!   --backend NAME  the same as OP2_BACKEND=NAME
!   NAME=VALUE      handed to op_init by the op2 module (OP2_BACKEND=seq|threads|..., ...)
! Reader for Airfoil's new_grid.dat: counts, then node, cell, edge and boundary-edge records,
! one per line, 0-based indices. Each record is read from its own line, so a short line is an
! error rather than a silent shift of everything after it. Indices come back 1-based, as the op2
! Fortran API takes them.
module airfoil_mesh
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private
  public :: mesh_t, read_mesh

  type :: mesh_t
    integer :: nnode = 0, ncell = 0, nedge = 0, nbedge = 0
    real(8), allocatable :: x(:, :)                        ! (2, nnode)
    integer, allocatable :: cell(:, :)                     ! (4, ncell)   pcell
    integer, allocatable :: edge(:, :), ecell(:, :)        ! (2, nedge)   pedge, pecell
    integer, allocatable :: bedge(:, :)                    ! (2, nbedge)  pbedge
    integer, allocatable :: becell(:), bound(:)            ! (nbedge)     pbecell, bound
  end type mesh_t

  type :: reader_t
    character(len=:), allocatable :: path
    character(len=1024) :: record = ''
    integer :: unit = -1, line = 0
  end type reader_t

contains

  subroutine read_mesh(path, m)
    character(len=*), intent(in) :: path
    type(mesh_t), intent(out) :: m
    type(reader_t) :: r
    character(len=256) :: msg
    integer :: ios, i

    r%path = path
    open(newunit=r%unit, file=path, status='old', action='read', iostat=ios, iomsg=msg)
    if (ios /= 0) call fail(r, 'cannot open: ' // trim(msg))

    call next_record(r, 'the header ''nnode ncell nedge nbedge''')
    read(r%record, *, iostat=ios) m%nnode, m%ncell, m%nedge, m%nbedge
    call check_read(r, ios, 'the header ''nnode ncell nedge nbedge''')
    if (m%nnode <= 0 .or. m%ncell <= 0 .or. m%nedge < 0 .or. m%nbedge < 0) &
      call fail(r, 'line 1: counts must be positive (nnode, ncell) or non-negative')
    allocate(m%x(2, m%nnode), m%cell(4, m%ncell), m%edge(2, m%nedge), m%ecell(2, m%nedge), &
             m%bedge(2, m%nbedge), m%becell(m%nbedge), m%bound(m%nbedge))
    do i = 1, m%nnode
      call next_record(r, 'node lines ''x y''')
      read(r%record, *, iostat=ios) m%x(:, i)
      call check_read(r, ios, 'a node ''x y''')
    end do
    do i = 1, m%ncell
      call next_record(r, 'cell lines ''n0 n1 n2 n3''')
      read(r%record, *, iostat=ios) m%cell(:, i)
      call check_read(r, ios, 'a cell ''n0 n1 n2 n3''')
      call check_range(r, m%cell(:, i), m%nnode, 'node')
    end do
    do i = 1, m%nedge
      call next_record(r, 'edge lines ''na nb c1 c2''')
      read(r%record, *, iostat=ios) m%edge(:, i), m%ecell(:, i)
      call check_read(r, ios, 'an edge ''na nb c1 c2''')
      call check_range(r, m%edge(:, i), m%nnode, 'node')
      call check_range(r, m%ecell(:, i), m%ncell, 'cell')
    end do
    do i = 1, m%nbedge
      call next_record(r, 'boundary edge lines ''na nb c1 bound''')
      read(r%record, *, iostat=ios) m%bedge(:, i), m%becell(i), m%bound(i)
      call check_read(r, ios, 'a boundary edge ''na nb c1 bound''')
      call check_range(r, m%bedge(:, i), m%nnode, 'node')
      call check_range(r, m%becell(i:i), m%ncell, 'cell')
    end do
    close(r%unit)
    m%cell = m%cell + 1
    m%edge = m%edge + 1
    m%ecell = m%ecell + 1
    m%bedge = m%bedge + 1
    m%becell = m%becell + 1
  end subroutine read_mesh

  subroutine fail(r, message)
    type(reader_t), intent(in) :: r
    character(len=*), intent(in) :: message
    write(error_unit, '(4a)') 'airfoil_f: mesh file ''', r%path, ''': ', message
    error stop 1
  end subroutine fail

  ! The next non-blank line into r%record.
  subroutine next_record(r, what)
    type(reader_t), intent(inout) :: r
    character(len=*), intent(in) :: what
    character(len=24) :: num
    integer :: ios
    do
      r%line = r%line + 1
      read(r%unit, '(a)', iostat=ios) r%record
      if (ios /= 0) then
        write(num, '(i0)') r%line - 1
        call fail(r, 'truncated after line ' // trim(num) // ': expected ' // what)
      end if
      if (len_trim(r%record) > 0) return
    end do
  end subroutine next_record

  subroutine check_read(r, ios, what)
    type(reader_t), intent(in) :: r
    integer, intent(in) :: ios
    character(len=*), intent(in) :: what
    character(len=24) :: num
    if (ios == 0) return
    write(num, '(i0)') r%line
    call fail(r, 'line ' // trim(num) // ': expected ' // what // ', found ''' // &
              trim(r%record) // '''')
  end subroutine check_read

  subroutine check_range(r, idx, n, target_set)
    type(reader_t), intent(in) :: r
    integer, intent(in) :: idx(:), n
    character(len=*), intent(in) :: target_set
    character(len=128) :: text
    if (all(idx >= 0 .and. idx < n)) return
    write(text, '(a,i0,3a,i0,a)') 'line ', r%line, ': a ', target_set, ' index is outside [0, ', n, ')'
    call fail(r, trim(text))
  end subroutine check_range

end module airfoil_mesh

program airfoil
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit, output_unit, int64
  use op2
  use airfoil_mesh
  implicit none

#ifndef KERNEL_DIR
#define KERNEL_DIR "kernels"
#endif

  character(len=:), allocatable :: mesh_path, log_path, kernel_dir, backend
  integer :: niter

  type(mesh_t) :: m                   ! 1-based indices, as the op2 Fortran API takes them
  integer :: ncell
  real(8), allocatable :: q(:, :)

  type(op_set) :: nodes, edges, bedges, cells
  type(op_map) :: pedge, pecell, pbedge, pbecell, pcell
  type(op_dat) :: p_bound, p_x, p_q, p_qold, p_adt, p_res
  type(op_kernel) :: k_save_soln, k_adt_calc, k_res_calc, k_bres_calc, k_update

  real(8) :: gam, gm1, cfl, eps, mach, p, r, u, e, qinf(4)
  ! Globals of the update loop: used by address until op_par_loop returns.
  real(8), target :: rms, maxerr
  integer(c_int), target :: errloc

  integer :: iter, k, c, log_unit
  integer(int64) :: t0, t1, rate
  real(8) :: t

  call parse_command_line()
  call read_mesh(mesh_path, m)
  ncell = m%ncell
  if (allocated(log_path)) then
    open(newunit=log_unit, file=log_path, status='replace', action='write', iostat=k)
    if (k /= 0) call die('cannot write rms log ''' // log_path // '''')
  end if

  if (allocated(backend)) then
    call op_init(diags=1, backend=backend)
  else
    call op_init(diags=1)
  end if
  write(output_unit, '(3a,4(i0,a),a)') 'airfoil (Fortran): mesh ''', mesh_path, ''': ', &
    m%nnode, ' nodes, ', m%ncell, ' cells, ', m%nedge, ' edges, ', m%nbedge, &
    ' boundary edges; backend ', op_backend_name()

  ! Flow constants: single-precision literals widened to double (as the C driver does).
  gam = real(1.4_c_float, 8)
  gm1 = gam - 1.0d0
  cfl = real(0.9_c_float, 8)
  eps = real(0.05_c_float, 8)
  mach = real(0.4_c_float, 8)
  p = 1.0d0
  r = 1.0d0
  u = sqrt(gam * p / r) * mach
  e = p / (r * gm1) + 0.5d0 * u * u
  qinf = [r, r * u, 0.0d0, r * e]

  call op_decl_const(1, gam, 'gam')
  call op_decl_const(1, gm1, 'gm1')
  call op_decl_const(1, cfl, 'cfl')
  call op_decl_const(1, eps, 'eps')
  call op_decl_const(4, qinf, 'qinf')

  ! Initial state: q = qinf everywhere; qold, adt, res = 0.
  allocate(q(4, ncell))
  do c = 1, ncell
    q(:, c) = qinf
  end do

  nodes = op_decl_set(m%nnode, 'nodes')
  edges = op_decl_set(m%nedge, 'edges')
  bedges = op_decl_set(m%nbedge, 'bedges')
  cells = op_decl_set(ncell, 'cells')

  pedge = op_decl_map(edges, nodes, 2, m%edge, 'pedge')
  pecell = op_decl_map(edges, cells, 2, m%ecell, 'pecell')
  pbedge = op_decl_map(bedges, nodes, 2, m%bedge, 'pbedge')
  pbecell = op_decl_map(bedges, cells, 1, m%becell, 'pbecell')
  pcell = op_decl_map(cells, nodes, 4, m%cell, 'pcell')

  p_bound = op_decl_dat(bedges, 1, m%bound, 'p_bound')
  p_x = op_decl_dat(nodes, 2, m%x, 'p_x')
  p_q = op_decl_dat(cells, 4, q, 'p_q')
  p_qold = op_decl_dat(cells, 4, 'double', 'p_qold')
  p_adt = op_decl_dat(cells, 1, 'double', 'p_adt')
  p_res = op_decl_dat(cells, 4, 'double', 'p_res')

  ! op2 copied everything: the host arrays can go.
  deallocate(q)
  m = mesh_t()

  k_save_soln = op_decl_kernel(read_kernel('save_soln'), 'save_soln')
  k_adt_calc = op_decl_kernel(read_kernel('adt_calc'), 'adt_calc')
  k_res_calc = op_decl_kernel(read_kernel('res_calc'), 'res_calc')
  k_bres_calc = op_decl_kernel(read_kernel('bres_calc'), 'bres_calc')
  k_update = op_decl_kernel(read_kernel('update'), 'update')

  rms = 0
  maxerr = 0
  errloc = 0
  call system_clock(t0, rate)
  do iter = 1, niter
    call op_par_loop(k_save_soln, 'save_soln', cells, [ &
      op_arg_dat(p_q, -1, OP_ID, 4, 'double', OP_READ), &
      op_arg_dat(p_qold, -1, OP_ID, 4, 'double', OP_WRITE)])

    do k = 1, 2
      call op_par_loop(k_adt_calc, 'adt_calc', cells, [ &
        op_arg_dat(p_x, 1, pcell, 2, 'double', OP_READ), &
        op_arg_dat(p_x, 2, pcell, 2, 'double', OP_READ), &
        op_arg_dat(p_x, 3, pcell, 2, 'double', OP_READ), &
        op_arg_dat(p_x, 4, pcell, 2, 'double', OP_READ), &
        op_arg_dat(p_q, -1, OP_ID, 4, 'double', OP_READ), &
        op_arg_dat(p_adt, -1, OP_ID, 1, 'double', OP_WRITE)])

      call op_par_loop(k_res_calc, 'res_calc', edges, [ &
        op_arg_dat(p_x, 1, pedge, 2, 'double', OP_READ), &
        op_arg_dat(p_x, 2, pedge, 2, 'double', OP_READ), &
        op_arg_dat(p_q, 1, pecell, 4, 'double', OP_READ), &
        op_arg_dat(p_q, 2, pecell, 4, 'double', OP_READ), &
        op_arg_dat(p_adt, 1, pecell, 1, 'double', OP_READ), &
        op_arg_dat(p_adt, 2, pecell, 1, 'double', OP_READ), &
        op_arg_dat(p_res, 1, pecell, 4, 'double', OP_INC), &
        op_arg_dat(p_res, 2, pecell, 4, 'double', OP_INC)])

      call op_par_loop(k_bres_calc, 'bres_calc', bedges, [ &
        op_arg_dat(p_x, 1, pbedge, 2, 'double', OP_READ), &
        op_arg_dat(p_x, 2, pbedge, 2, 'double', OP_READ), &
        op_arg_dat(p_q, 1, pbecell, 4, 'double', OP_READ), &
        op_arg_dat(p_adt, 1, pbecell, 1, 'double', OP_READ), &
        op_arg_dat(p_res, 1, pbecell, 4, 'double', OP_INC), &
        op_arg_dat(p_bound, -1, OP_ID, 1, 'int', OP_READ)])

      rms = 0
      maxerr = 0
      errloc = 0
      ! errloc follows maxerr, argument 6 of 8 (1-based).
      call op_par_loop(k_update, 'update', cells, [ &
        op_arg_dat(p_qold, -1, OP_ID, 4, 'double', OP_READ), &
        op_arg_dat(p_q, -1, OP_ID, 4, 'double', OP_WRITE), &
        op_arg_dat(p_res, -1, OP_ID, 4, 'double', OP_RW), &
        op_arg_dat(p_adt, -1, OP_ID, 1, 'double', OP_READ), &
        op_arg_gbl(rms, 1, OP_INC), &
        op_arg_gbl(maxerr, 1, OP_MAX), &
        op_arg_info(errloc, 1, 6), &
        op_arg_idx(-1, OP_ID)])
    end do

    rms = sqrt(rms / real(ncell, 8))
    if (allocated(log_path)) write(log_unit, '(i0,1x,a)') iter, c_fmt_e(rms, 17)
    if (mod(iter, 100) == 0) write(output_unit, '(1x,i0,2x,a)') iter, adjustr_to(c_fmt_e(rms, 5), 10)
  end do
  call system_clock(t1)
  t = real(t1 - t0, 8) / real(rate, 8)
  if (allocated(log_path)) close(log_unit)

  ! errloc is the kernel's (C, 0-based) cell index; Fortran counts cells from 1.
  if (niter > 0) write(output_unit, '(3a,i0,a)') &
    'airfoil (Fortran): last stage: largest squared change ', c_fmt_e(maxerr, 6), &
    ', in cell ', errloc + 1, ' (1-based)'
  flush(output_unit)
  call op_timing_output()
  flush(output_unit)
  if (niter > 0) then
    write(output_unit, '(a,i0,4a)') 'airfoil (Fortran): ', niter, ' iterations, ', &
      fixed3(t), ' s, ', fixed3(1d3 * t / niter) // ' ms/iter'
  end if

  call op_exit()

contains

  subroutine usage(unit)
    integer, intent(in) :: unit
    write(unit, '(a)') &
      'usage: airfoil_f [--mesh FILE] [--iters N] [--rms-log FILE] [--kernels DIR] ' // &
      '[--backend NAME] [NAME=VALUE ...]', &
      '  --mesh FILE     mesh in new_grid.dat format (default new_grid.dat)', &
      '  --iters N       iterations (default 1000)', &
      '  --rms-log FILE  write ''iter rms'' for every iteration', &
      '  --kernels DIR   directory holding the kernels <name>.c (default ' // KERNEL_DIR // ')', &
      '  --backend NAME  op2 backend (the same as OP2_BACKEND=NAME)', &
      '  NAME=VALUE      op2 configuration tokens, passed to op_init'
  end subroutine usage

  subroutine die(message)
    character(len=*), intent(in) :: message
    write(error_unit, '(2a)') 'airfoil_f: ', message
    error stop 1
  end subroutine die

  function argument(i) result(arg)
    integer, intent(in) :: i
    character(len=:), allocatable :: arg
    integer :: length
    call get_command_argument(i, length=length)
    allocate(character(len=length) :: arg)
    if (length > 0) call get_command_argument(i, arg)
  end function argument

  subroutine parse_command_line()
    character(len=:), allocatable :: arg
    integer :: i, ios
    mesh_path = 'new_grid.dat'
    kernel_dir = KERNEL_DIR
    niter = 1000
    i = 1
    do while (i <= command_argument_count())
      arg = argument(i)
      if (i < command_argument_count() .and. any(arg == [character(len=9) :: '--mesh', &
          '--iters', '--rms-log', '--kernels', '--backend'])) then
        i = i + 1
        select case (arg)
        case ('--mesh')
          mesh_path = argument(i)
        case ('--iters')
          arg = argument(i)
          read(arg, *, iostat=ios) niter
          if (ios /= 0 .or. len(arg) == 0 .or. verify(arg, '0123456789') /= 0) &
            call die('--iters needs a non-negative integer, got ''' // arg // '''')
        case ('--rms-log')
          log_path = argument(i)
        case ('--kernels')
          kernel_dir = argument(i)
        case ('--backend')
          backend = argument(i)
        end select
      else if (arg == '--help' .or. arg == '-h') then
        call usage(output_unit)
        stop
      else if (index(arg, '=') > 1 .and. arg(1:1) /= '-') then
        continue                                 ! an op2 token: op_init picks it up
      else
        call usage(error_unit)
        call die('unknown or incomplete argument ''' // arg // '''')
      end if
      i = i + 1
    end do
  end subroutine parse_command_line

  ! The C source of kernel `name`: <kernel_dir>/<name>.c, whole.
  function read_kernel(name) result(source)
    character(len=*), intent(in) :: name
    character(len=:), allocatable :: source
    character(len=:), allocatable :: path
    character(len=256) :: msg
    integer :: u, ios, n
    path = kernel_dir // '/' // name // '.c'
    open(newunit=u, file=path, access='stream', form='unformatted', status='old', &
         action='read', iostat=ios, iomsg=msg)
    if (ios /= 0) call die('kernel ''' // name // ''': cannot open ''' // path // ''': ' // &
                           trim(msg) // ' (use --kernels DIR)')
    inquire(unit=u, size=n)
    allocate(character(len=n) :: source)
    if (n > 0) read(u, iostat=ios) source
    close(u)
    if (ios /= 0) call die('kernel ''' // name // ''': cannot read ''' // path // '''')
  end function read_kernel

  ! x as C's printf("%.<prec>e", x) for finite x: Fortran's ES editing gives the same correctly
  ! rounded digits; only the exponent is spelled differently (E-0004 -> e-04).
  function c_fmt_e(x, prec) result(s)
    real(8), intent(in) :: x
    integer, intent(in) :: prec
    character(len=:), allocatable :: s
    character(len=64) :: buf, fmt
    integer :: epos, ex
    write(fmt, '(a,i0,a,i0,a)') '(es', prec + 12, '.', prec, 'e4)'
    write(buf, fmt) x
    buf = adjustl(buf)
    epos = index(buf, 'E')
    read(buf(epos + 1:), *) ex
    write(fmt, '(i0.2)') abs(ex)
    s = buf(1:epos - 1) // 'e' // merge('-', '+', ex < 0) // trim(fmt)
  end function c_fmt_e

  ! x with 3 decimals and a leading zero (C's %.3f; Fortran's F0.3 drops the zero).
  function fixed3(x) result(s)
    real(8), intent(in) :: x
    character(len=:), allocatable :: s
    character(len=32) :: buf
    write(buf, '(f32.3)') x
    s = trim(adjustl(buf))
  end function fixed3

  ! s right-justified in a field of at least `width` characters (C's %<width>...).
  function adjustr_to(s, width) result(r)
    character(len=*), intent(in) :: s
    integer, intent(in) :: width
    character(len=max(len(s), width)) :: r
    r = repeat(' ', max(0, width - len(s))) // s
  end function adjustr_to

end program airfoil
