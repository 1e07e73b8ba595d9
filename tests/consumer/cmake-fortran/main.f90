! A small op2 program in Fortran, built outside the op2 repository against an installed op2.
! A ring of edges over nodes (1-based map), an indirect INC, a direct loop with a constant, and
! a global sum. Silent on success; usage: main BACKEND.
program consumer_fortran
  use op2
  implicit none
  integer, parameter :: n = 64
  character(len=32) :: backend
  type(op_set) :: nodes, edges
  type(op_map) :: pedge
  type(op_dat) :: dx, dy, ddeg
  type(op_kernel) :: axpy, count
  integer :: edge2node(2, n), i, failures
  real(8) :: x(n), y(n), deg(n), a
  real(8), target :: total

  backend = 'seq'
  if (command_argument_count() >= 1) call get_command_argument(1, backend)
  call op_init(backend=backend)

  do i = 1, n
    x(i) = i - 1
    edge2node(:, i) = [i, mod(i, n) + 1]
  end do
  nodes = op_decl_set(n, 'nodes')
  edges = op_decl_set(n, 'edges')
  pedge = op_decl_map(edges, nodes, 2, edge2node, 'pedge')
  dx = op_decl_dat(nodes, 1, x, 'x')
  dy = op_decl_dat(nodes, 1, 'real(8)', 'y')
  ddeg = op_decl_dat(nodes, 1, 'real(8)', 'deg')
  a = 3.0d0
  call op_decl_const(1, a, 'a')
  axpy = op_decl_kernel('void axpy(const double *x, double *y) { *y = a * *x + 1.0; }', 'axpy')
  count = op_decl_kernel('void count(double *d0, double *d1, const double *y0, double *s)' // &
                         ' { *d0 += 1.0; *d1 += 2.0; *s += *y0; }', 'count')

  call op_par_loop(axpy, 'axpy', nodes, [op_arg_dat(dx, -1, OP_ID, 1, 'real(8)', OP_READ), &
                                         op_arg_dat(dy, -1, OP_ID, 1, 'real(8)', OP_WRITE)])
  total = 1.0d0
  call op_par_loop(count, 'count', edges, [op_arg_dat(ddeg, 1, pedge, 1, 'real(8)', OP_INC), &
                                           op_arg_dat(ddeg, 2, pedge, 1, 'real(8)', OP_INC), &
                                           op_arg_dat(dy, 1, pedge, 1, 'real(8)', OP_READ), &
                                           op_arg_gbl(total, 1, OP_INC)])
  call op_fetch_data(dy, y)
  call op_fetch_data(ddeg, deg)

  failures = 0
  if (any(y /= 3.0d0 * x + 1.0d0)) failures = failures + 1
  if (any(deg /= 3.0d0)) failures = failures + 1
  if (total /= 1.0d0 + 3.0d0 * (n * (n - 1) / 2) + n) failures = failures + 1
  if (op_get_size(nodes) /= n) failures = failures + 1
  if (op_last_error_code() /= 0) failures = failures + 1
  call op_exit()
  if (failures /= 0) then
    write(*, '(a,i0,a)') 'consumer_fortran: ', failures, ' checks failed'
    error stop 1
  end if
end program consumer_fortran
