! An assumed-size map array under MPI (op2_fortran_declarations' op_decl_map, index base 0):
! each process passes its own block, so the module may read only that block's values (it read
! the global size's worth, past the end of the array: a heap overflow under AddressSanitizer).
! A loop then counts each node's edges, checked in the original numbering.
module assumed_size_kernels
  implicit none
contains
  subroutine count_ends(a, b)
    integer(4) :: a, b
    a = a + 1
    b = b + 1
  end subroutine count_ends
end module assumed_size_kernels

program assumed_size
  use assumed_size_kernels
  use op2_fortran_declarations
  use op2_fortran_reference
  implicit none
  type(op_set) :: nodes, edges
  type(op_map) :: m
  type(op_dat) :: deg
  integer(4), allocatable :: e2n(:), d(:)
  integer :: rank, nproc, n, i, lo, bad
  call op_init_base(0, 0)
  rank = op_get_rank()
  nproc = op_num_ranks()
  n = 50                         ! each process: 50 edges and 51 nodes (a chain per process)
  lo = rank * 51
  allocate(e2n(2 * n), d(51))
  do i = 1, n
    e2n(2 * i - 1) = lo + i - 1
    e2n(2 * i) = lo + i
  end do
  d = 0
  call op_decl_set(51, nodes, 'nodes')
  call op_decl_set(n, edges, 'edges')
  call declare(e2n)
  call op_decl_dat(nodes, 1, 'integer(4)', d, deg, 'deg')
  call op_par_loop_2(count_ends, edges, op_arg_dat(deg, 1, m, 1, 'integer(4)', OP_INC), &
                     op_arg_dat(deg, 2, m, 1, 'integer(4)', OP_INC))
  call op_fetch_data(deg, d)
  bad = 0
  do i = 1, 51
    if (d(i) /= merge(1, 2, i == 1 .or. i == 51)) bad = bad + 1
  end do
  if (bad /= 0) then
    print *, 'assumed_size: process', rank, ':', bad, 'wrong node degrees'
    stop 1
  end if
  call op_exit()
contains
  subroutine declare(v)
    integer(4) :: v(*)
    call op_decl_map(edges, nodes, 2, v, m, 'm')
  end subroutine declare
end program assumed_size
