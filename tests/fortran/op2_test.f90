! Helpers shared by the Fortran tests (tests/fortran/tNNN-topic-f.f90), twins of tests/c/test.h.
!
! Every test takes the backend as its first command-line argument, is silent on success and
! ends normally; a failed check prints what was expected to stderr and stops with `error stop`.
! An unexpected op2 error goes through op2's default handler (message and non-zero exit), so
! tests switch to OP_ERRORS_RETURN only around the calls that are meant to fail.
module op2_test
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use op2
  implicit none
  private
  public :: test_init, check, check_int, check_dbl, check_ok, check_err, has

  interface check_int
    module procedure check_int4, check_int8
  end interface check_int

contains

  !> op_init with the backend named by the first command-line argument (required).
  function test_init() result(backend)
    character(len=:), allocatable :: backend
    integer :: length, status
    call get_command_argument(1, length=length, status=status)
    if (status /= 0 .or. length == 0) then
      write(error_unit, '(a)') 'usage: test BACKEND'
      error stop 2
    end if
    allocate(character(len=length) :: backend)
    call get_command_argument(1, backend)
    call op_init(backend=backend)
  end function test_init

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write(error_unit, '(2a)') 'check failed: ', what
    error stop 1
  end subroutine fail

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) call fail(what)
  end subroutine check

  subroutine check_int4(got, want, what)
    integer(c_int), intent(in) :: got, want
    character(len=*), intent(in) :: what
    character(len=64) :: buf
    if (got /= want) then
      write(buf, '(a,i0,a,i0)') ': got ', got, ', want ', want
      call fail(what // trim(buf))
    end if
  end subroutine check_int4

  subroutine check_int8(got, want, what)
    integer(c_int64_t), intent(in) :: got, want
    character(len=*), intent(in) :: what
    character(len=64) :: buf
    if (got /= want) then
      write(buf, '(a,i0,a,i0)') ': got ', got, ', want ', want
      call fail(what // trim(buf))
    end if
  end subroutine check_int8

  !> Exact equality: for values and sums that are exactly representable.
  subroutine check_dbl(got, want, what)
    real(c_double), intent(in) :: got, want
    character(len=*), intent(in) :: what
    character(len=96) :: buf
    if (.not. (got == want)) then
      write(buf, '(a,es24.17,a,es24.17)') ': got ', got, ', want ', want
      call fail(what // trim(buf))
    end if
  end subroutine check_dbl

  logical function has(haystack, needle)
    character(len=*), intent(in) :: haystack, needle
    has = index(haystack, needle) > 0
  end function has

  !> The most recent op2 call succeeded: code 0 and message "".
  subroutine check_ok(what)
    character(len=*), intent(in) :: what
    character(len=32) :: buf
    if (op_last_error_code() /= 0 .or. len(op_last_error_message()) /= 0) then
      write(buf, '(a,i0,a)') ': got code ', op_last_error_code(), ', message "'
      call fail(what // trim(buf) // op_last_error_message() // '"')
    end if
  end subroutine check_ok

  !> The most recent op2 call failed with `code`; its message starts with `call_name` and holds
  !> every string of `parts` (blank-padded entries are trimmed).
  subroutine check_err(code, call_name, parts, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: call_name
    character(len=*), intent(in) :: parts(:)
    character(len=*), intent(in) :: what
    character(len=:), allocatable :: msg
    character(len=48) :: buf
    integer :: i
    msg = op_last_error_message()
    if (op_last_error_code() /= code) then
      write(buf, '(a,i0,a,i0)') ': expected code ', code, ', got ', op_last_error_code()
      call fail(what // trim(buf) // ', message "' // msg // '"')
    end if
    if (index(msg, call_name) /= 1) &
      call fail(what // ': message does not start with "' // call_name // '": "' // msg // '"')
    do i = 1, size(parts)
      if (.not. has(msg, trim(parts(i)))) &
        call fail(what // ': message lacks "' // trim(parts(i)) // '": "' // msg // '"')
    end do
  end subroutine check_err

end module op2_test
