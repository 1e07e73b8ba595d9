! The checks only the Fortran module can make, because libop2 cannot see a Fortran array's
! length or layout: an array shorter than its set needs (op_decl_dat, op_decl_map), constant
! data shorter than dim, a global that is shorter than dim or not contiguous. Each stops the
! program with "op2 error [code]: <call> ..." rather than letting libop2 read past the array.
!
! Run as `t290-fortran-checks-f BACKEND`, it runs itself once per case (`... BACKEND CASE`) and
! checks the child stopped with a non-zero status and the expected message.
program t290_fortran_checks_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  character(len=16), parameter :: cases(5) = [character(len=16) :: 'short-dat', 'short-map', &
                                                'short-const', 'short-gbl', 'strided-gbl']
  character(len=64), parameter :: expect(5) = [character(len=64) :: &
    "op2 error [203]: op_decl_dat 'q': the Fortran array has 15 values", &
    "op2 error [203]: op_decl_map 'pm': the Fortran array has 6 values", &
    "op2 error [203]: op_decl_const 'c': dim is 3", &
    "op2 error [203]: op_arg_gbl: dim is 3", &
    "op2 error [201]: op_arg_gbl: the Fortran data is not contiguous"]
  character(len=:), allocatable :: backend, self, out
  integer :: i, status

  if (command_argument_count() >= 2) then
    call child()
    stop
  end if

  backend = test_init()
  call op_exit()
  self = argument(0)
  do i = 1, size(cases)
    out = 't290-' // trim(cases(i)) // '.out'
    call execute_command_line('"' // self // '" ' // backend // ' ' // trim(cases(i)) // &
                              ' > ' // out // ' 2>&1', exitstat=status)
    call check(status /= 0, trim(cases(i)) // ': the program stopped with a non-zero status')
    call check(has(slurp(out), trim(expect(i))), trim(cases(i)) // ': message "' // &
               trim(expect(i)) // '" in: ' // slurp(out))
    open(newunit=status, file=out)
    close(status, status='delete')
  end do

contains

  subroutine child()
    character(len=:), allocatable :: which
    type(op_set) :: s
    type(op_dat) :: d
    type(op_map) :: m
    type(op_arg) :: a
    real(8) :: short(15), c(2)
    real(8), target :: g(6)
    integer :: imap(6)
    which = argument(2)
    call op_init(backend=argument(1))
    s = op_decl_set(4, 'four')
    short = 0
    c = 0
    g = 0
    imap = 1
    select case (which)
    case ('short-dat')
      s = op_decl_set(10, 'ten')
      d = op_decl_dat(s, 2, short, 'q')               ! needs 20 values
    case ('short-map')
      m = op_decl_map(s, s, 2, imap, 'pm')             ! needs 8 entries
    case ('short-const')
      call op_decl_const(3, c, 'c')                    ! needs 3 values
    case ('short-gbl')
      a = op_arg_gbl(g(1:2), 3, OP_READ)               ! needs 3 values
    case ('strided-gbl')
      a = op_arg_gbl(g(1:6:2), 3, OP_INC)              ! 3 values, but not one block of memory
    end select
    write(*, '(a)') 'NOT STOPPED'                      ! the parent sees status 0: a failure
  end subroutine child

  function argument(i) result(arg)
    integer, intent(in) :: i
    character(len=:), allocatable :: arg
    integer :: length
    call get_command_argument(i, length=length)
    allocate(character(len=length) :: arg)
    if (length > 0) call get_command_argument(i, arg)
  end function argument

  ! A small text file, lines joined by blanks.
  function slurp(path) result(text)
    character(len=*), intent(in) :: path
    character(len=:), allocatable :: text
    character(len=512) :: line
    integer :: u, ios
    text = ''
    open(newunit=u, file=path, status='old', action='read', iostat=ios)
    if (ios /= 0) return
    do
      read(u, '(a)', iostat=ios) line
      if (ios /= 0) exit
      text = text // trim(line) // ' '
    end do
    close(u)
  end function slurp

end program t290_fortran_checks_f
