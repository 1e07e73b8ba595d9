! op_mpi_init from Fortran: op2 runs on the communicator handle MPI_COMM_WORLD gives in the
! mpi module (the program initialised MPI, so op2 must leave it running at op_exit). A chain of
! nodes, each process declaring its block with global (1-based) map values, METIS partitioning,
! an indirect INC loop and a global count, checked in the original numbering.
! mpi-n: 1 2 3
program t840_mpi_init_f
  use, intrinsic :: iso_c_binding
  use mpi
  use op2
  use op2_test
  implicit none
  integer, parameter :: nnode = 11, nedge = nnode - 1
  character(len=32) :: backend
  integer :: ierr, rank, nproc, i, lo, n, nlo, nn, cnt
  logical :: up
  integer(c_int), allocatable :: e2n(:, :), deg(:)
  type(op_set) :: nodes, edges
  type(op_map) :: pedge
  type(op_dat) :: ddeg
  type(op_kernel) :: k

  call get_command_argument(1, backend)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call op_mpi_init(MPI_COMM_WORLD, MPI_COMM_WORLD, backend=trim(backend))
  call check_ok('op_mpi_init')
  call check_int(op_num_ranks(), nproc, 'op_num_ranks')

  ! this process's blocks: edges [lo, lo+n), nodes [nlo, nlo+nn) (0-based global)
  lo = nedge * rank / nproc
  n = nedge * (rank + 1) / nproc - lo
  nlo = nnode * rank / nproc
  nn = nnode * (rank + 1) / nproc - nlo
  allocate(e2n(2, max(n, 1)), deg(max(nn, 1)))
  do i = 1, n
    e2n(1, i) = lo + i          ! edge lo+i-1 (0-based) joins nodes lo+i-1 and lo+i: 1-based
    e2n(2, i) = lo + i + 1
  end do
  nodes = op_decl_set(nn, 'nodes')
  edges = op_decl_set(n, 'edges')
  pedge = op_decl_map(edges, nodes, 2, e2n(:, 1:n), 'pedge')
  ddeg = op_decl_dat(nodes, 1, 'int', 'deg')
  call check_int(op_get_global_set_offset(nodes), int(nlo, c_int64_t), 'op_get_global_set_offset')
  call op_partition('METIS', 'KWAY', edges, pedge)
  call check_ok('op_partition')
  call check_int(op_get_size(edges), int(nedge, c_int64_t), 'op_get_size')

  k = op_decl_kernel('void degree(int *a, int *b, int *c) { *a += 1; *b += 1; *c += 1; }', 'degree')
  cnt = 3
  call op_par_loop(k, 'degree', edges, [op_arg_dat(ddeg, 1, pedge, 1, 'int', OP_INC), &
                                        op_arg_dat(ddeg, 2, pedge, 1, 'int', OP_INC), &
                                        op_arg_gbl(cnt, 1, OP_INC)])
  call check_ok('degree')
  call check_int(cnt, 3 + nedge, 'global count')
  deg = -1
  call op_fetch_data(ddeg, deg)
  do i = 1, nn
    if (nlo + i == 1 .or. nlo + i == nnode) then
      call check_int(deg(i), 1, 'end node degree')
    else
      call check_int(deg(i), 2, 'inner node degree')
    end if
  end do
  call op_exit()
  call MPI_Initialized(up, ierr)
  call check(up, 'op_exit left the program''s MPI running')
  call MPI_Finalize(ierr)
end program t840_mpi_init_f
