! OP2's Fortran names of the run-time calls (op2_fortran_hdf5_declarations): op_decl_map_long
! (integer(8) entries, checked through a loop), op_fetch_data_hdf5_file_path (read back with
! op_decl_dat_hdf5, whose `stat` is the set size), op_decl_map_hdf5 / op_decl_dat_hdf5 of a
! dataset the file does not hold (stat -1, a null handle, OP2_ERR_NO_DATASET, and the program
! goes on under the default handler), and every profiling name: op_profile_start, _enter,
! _enter_kernel, _next, _exit, _end, _output and the older op_timing2_start, _enter,
! _enter_kernel, _next, _exit, _finish, _output.
!
! Run as `t633-op2-runtime-f BACKEND`, it runs itself (`... BACKEND child`) with its output in a
! file, since op_profile_output prints, and checks the region tree and the loop report there.
program t633_op2_runtime_f
  use, intrinsic :: iso_c_binding
  use op2_fortran_hdf5_declarations
  use op2, only: OP2_ERR_NO_DATASET, op_kernel, op_decl_kernel, op_par_loop
  use op2_test, only: test_init, check, check_dbl, has
  implicit none

  character(len=*), parameter :: h5 = 't633-op2-runtime-f.h5', out = 't633-op2-runtime-f.out'
  character(len=:), allocatable :: backend, text
  integer :: status, unit

  if (command_argument_count() >= 2) then
    call child()
    stop
  end if

  backend = test_init()
  call op_exit()
  call execute_command_line('"' // argument(0) // '" ' // backend // ' child > ' // out // ' 2>&1', &
                            exitstat=status)
  text = slurp(out)
  call check(status == 0, 'the child ended normally: ' // text)
  call check(has(text, 'CHILD DONE'), 'the child ran to its end: ' // text)
  call in_order([character(len=40) :: 'op2 profile (wall time in seconds)', &
                 new_line('a') // '  app ', new_line('a') // '    gather ', &
                 new_line('a') // '    write ', new_line('a') // '    spin/seq/plain ', &
                 new_line('a') // '    t2 ', new_line('a') // '    t2b ', &
                 new_line('a') // '    k2/seq/x ', 'op2 timing (', '  gl ', &
                 new_line('a') // '  second ', 'op2 timing (', 'CHILD DONE'])
  open(newunit=unit, file=out)
  close(unit, status='delete')
  open(newunit=unit, file=h5)
  close(unit, status='delete')

contains

  subroutine child()
    type(op_set) :: nodes, edges
    type(op_map) :: pedge, missing_map
    type(op_dat) :: px, ps, back, missing
    type(op_kernel) :: k
    integer(c_long_long) :: lmap(2, 3)
    real(8) :: x(4), s(3), got(3)
    integer :: stat, i
    backend = test_init()
    x = [0.5d0, 2.0d0, -8.0d0, 4.0d0]
    lmap = reshape([1_c_long_long, 2_c_long_long, 2_c_long_long, 4_c_long_long, &
                    4_c_long_long, 3_c_long_long], [2, 3])
    call op_decl_set(4, nodes, 'nodes')
    call op_decl_set(3, edges, 'edges')
    call op_decl_map_long(edges, nodes, 2, lmap, pedge, 'pedge')
    call op_decl_dat(nodes, 1, 'real(8)', x, px, 'p_x')
    s = 0
    call op_decl_dat(edges, 1, 'real(8)', s, ps, 'p_s')
    k = op_decl_kernel('void gl(const double *a, const double *b, double *s) { s[0] = a[0] + 10.0 * b[0]; }', &
                       'gl')

    call op_profile_start('app')
    call op_profile_enter('gather')
    call op_par_loop(k, 'gl', edges, [op_arg_dat(px, 1, pedge, 1, 'real(8)', OP_READ), &
                                      op_arg_dat(px, 2, pedge, 1, 'real(8)', OP_READ), &
                                      op_arg_dat(ps, -1, OP_ID, 1, 'real(8)', OP_WRITE)])
    call op_profile_next('write')
    call op_fetch_data_hdf5_file_path(ps, h5, 'results/s')
    call op_profile_exit()
    call op_profile_enter_kernel('spin', 'seq', 'plain')
    call op_profile_exit()
    call op_timing2_enter('t2')
    call op_timing2_next('t2b')
    call op_timing2_exit()
    call op_timing2_enter_kernel('k2', 'seq', 'x')
    call op_timing2_exit()
    call op_profile_exit()                     ! unbalanced: ignored
    call op_profile_end()

    call op_fetch_data(ps, got)
    do i = 1, 3
      call check_dbl(got(i), x(lmap(1, i)) + 10d0 * x(lmap(2, i)), 'gather through op_decl_map_long')
    end do
    call op_decl_dat_hdf5(edges, 1, back, 'real(8)', h5, 'results/s', stat)
    call check(stat == 3, 'stat of a declared dat is the set size')
    got = 0
    call op_fetch_data(back, got)
    call check(all(got == [(x(lmap(1, i)) + 10d0 * x(lmap(2, i)), i = 1, 3)]), &
               'op_fetch_data_hdf5_file_path read back exactly')
    ! absent datasets under the default handler: stat -1, null, and the program goes on
    call op_decl_dat_hdf5(edges, 1, missing, 'real(8)', h5, 'p_test', stat)
    call check(stat == -1 .and. .not. c_associated(missing%handle), 'absent dat: stat -1')
    call check(op_last_error_code() == OP2_ERR_NO_DATASET, 'absent dat: OP2_ERR_NO_DATASET')
    call op_decl_map_hdf5(edges, nodes, 2, missing_map, h5, 'm_test', stat)
    call check(stat == -1 .and. .not. c_associated(missing_map%handle), 'absent map: stat -1')
    call check(op_last_error_code() == OP2_ERR_NO_DATASET, 'absent map: OP2_ERR_NO_DATASET')

    call op_profile_output()
    call op_timing2_start('second')
    call op_timing2_finish()
    call op_timing2_output()
    call op_exit()
    write(*, '(a)') 'CHILD DONE'
  end subroutine child

  !> Every string of `parts` in the child's output, in this order.
  subroutine in_order(parts)
    character(len=*), intent(in) :: parts(:)
    integer :: i, at, pos
    at = 1
    do i = 1, size(parts)
      pos = index(text(at:), trim(parts(i)))
      call check(pos > 0, 'the output has "' // trim(parts(i)) // '" after what came before: ' // text)
      at = at + pos
    end do
  end subroutine in_order

  function argument(i) result(arg)
    integer, intent(in) :: i
    character(len=:), allocatable :: arg
    integer :: length
    call get_command_argument(i, length=length)
    allocate(character(len=length) :: arg)
    call get_command_argument(i, arg)
  end function argument

  function slurp(path) result(s)
    character(len=*), intent(in) :: path
    character(len=:), allocatable :: s
    integer :: u, size_bytes
    open(newunit=u, file=path, access='stream', form='unformatted', status='old')
    inquire(unit=u, size=size_bytes)
    allocate(character(len=size_bytes) :: s)
    if (size_bytes > 0) read(u) s
    close(u)
  end function slurp

end program t633_op2_runtime_f
