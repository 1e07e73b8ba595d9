! Checkpoint and restart from Fortran (twin of tests/c/t950-checkpoint.c): session 1 runs 6
! steps with an OP_INC global and asks for a checkpoint after step 2 (op_checkpoint_now);
! session 2, the same program with the same data, replays steps 1-3 (their sums come back,
! op_fetch_data is skipped) and loads the dat at step 4: every sum and the final dat equal
! session 1's. A truncated checkpoint is OP2_ERR_CHECKPOINT; session 3 starts from other data
! and is refused at step 4 with OP2_ERR_CHECKPOINT naming the dat (its digest differs).
program t950_checkpoint_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  integer, parameter :: n = 50, steps = 6
  character(len=*), parameter :: file = 't950-checkpoint-f.ck', bad = 't950-checkpoint-f-bad.ck'
  character(len=*), parameter :: src = 'void step(double *d, double *sum) { *d = *d * 0.5 + 1.0; *sum += *d; }'
  character(len=1) :: byte
  real(8) :: sums1(steps), sums2(steps), final1(n), final2(n), peek(n)
  integer :: i, unit, rc

  open(newunit=unit, file=file, status='replace')
  close(unit, status='delete')
  call session(1d0, sums1, final1, .false.)
  call session(1d0, sums2, final2, .true.)
  do i = 1, steps
    call check_dbl(sums2(i), sums1(i), 'replayed or recomputed sum')
  end do
  do i = 1, n
    call check_dbl(final2(i), final1(i), 'final dat after the restart')
    call check_dbl(peek(i), -7d0, 'op_fetch_data skipped during the replay')
  end do

  call refused_session(500d0)

  ! a truncated copy: the first 600 bytes
  open(newunit=unit, file=file, access='stream', form='unformatted', status='old')
  open(newunit=rc, file=bad, access='stream', form='unformatted', status='replace')
  do i = 1, 600
    read(unit) byte
    write(rc) byte
  end do
  close(unit)
  close(rc)
  call test_init_silent()
  call op_set_error_handler(OP_ERRORS_RETURN)
  call check(.not. op_checkpointing_init(bad, 1d0), 'a truncated checkpoint is refused')
  call check_err(OP2_ERR_CHECKPOINT, 'op_checkpointing_init', [character(len=16) :: 'is truncated'], &
                 'truncated checkpoint')
  call op_exit()
  open(newunit=unit, file=file, status='old')
  close(unit, status='delete')
  open(newunit=unit, file=bad, status='old')
  close(unit, status='delete')

contains

  subroutine test_init_silent()
    character(len=:), allocatable :: backend
    backend = test_init()
  end subroutine test_init_silent

  subroutine session(start, sums, final, second)
    real(8), intent(in) :: start
    real(8), intent(out) :: sums(steps), final(n)
    logical, intent(in) :: second
    real(8), target :: d0(n), s
    type(op_set) :: cells
    type(op_dat) :: d
    type(op_kernel) :: k
    integer :: j
    call test_init_silent()
    do j = 1, n
      d0(j) = start + j
    end do
    cells = op_decl_set(n, 'cells')
    d = op_decl_dat(cells, 1, d0, 'd')
    k = op_decl_kernel(src, 'step')
    call check(op_checkpointing_init(file, 1d9), 'op_checkpointing_init')
    peek = -7d0
    do j = 1, steps
      s = 0d0
      call op_par_loop(k, 'step', cells, [op_arg_dat(d, -1, OP_ID, 1, 'real(8)', OP_RW), &
                                           op_arg_gbl(s, 1, OP_INC)])
      call check_ok('step')
      sums(j) = s
      if (j == 3) call op_checkpoint_now()
      if (second .and. j == 2) call op_fetch_data(d, peek)
    end do
    call op_fetch_data(d, final)
    call op_exit()
  end subroutine session

  ! The same program started from other data: steps 1-3 are replayed, step 4 (the restore) is
  ! refused naming the dat whose declared values differ.
  subroutine refused_session(start)
    real(8), intent(in) :: start
    real(8), target :: d0(n), s
    type(op_set) :: cells
    type(op_dat) :: d
    type(op_kernel) :: k
    integer :: j
    call test_init_silent()
    do j = 1, n
      d0(j) = start + j
    end do
    cells = op_decl_set(n, 'cells')
    d = op_decl_dat(cells, 1, d0, 'd')
    k = op_decl_kernel(src, 'step')
    call check(op_checkpointing_init(file, 1d9), 'op_checkpointing_init')
    call op_set_error_handler(OP_ERRORS_RETURN)
    do j = 1, 4
      s = 0d0
      call op_par_loop(k, 'step', cells, [op_arg_dat(d, -1, OP_ID, 1, 'real(8)', OP_RW), &
                                           op_arg_gbl(s, 1, OP_INC)])
      if (j < 4) call check_ok('replayed step')
    end do
    call check_err(OP2_ERR_CHECKPOINT, "op_par_loop 'step'", &
                   [character(len=40) :: 'of other data', "dat 'd' was declared with other values"], &
                   'a restart from other data')
    call op_set_error_handler(OP_ERRORS_ABORT)
    call op_exit()
  end subroutine refused_session
end program t950_checkpoint_f
