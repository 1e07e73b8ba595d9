! More of OP2's functions from Fortran (twin of tests/c/t600, t610 and t620): op_timers,
! op_rank, op_num_ranks, op_mpi_barrier, op_get_global_set_offset, uploads and downloads, a
! kernel read from a file, a temporary dat freed (its handle then stale), a binary dump, and
! op_renumber keeping fetches in the declared order.
program t600_more_functions_f
  use, intrinsic :: iso_c_binding
  use op2
  use op2_test
  implicit none

  character(len=*), parameter :: kfile = 't600-more-functions-f.kernel.h'
  character(len=*), parameter :: bfile = 't600-more-functions-f.bin'
  character(len=:), allocatable :: backend
  type(op_set) :: nodes, edges
  type(op_map) :: pedge
  type(op_dat) :: x, t, deg
  type(op_kernel) :: k, kcount
  real(8), target :: xv(5)
  real(8) :: cpu1, et1, cpu2, et2
  real(8), target :: xo(5), to(5), back(5)
  integer(c_int), target :: zeros(5)
  integer :: rank, u, ok, hdr(2)
  integer(c_int), target :: e2n(2, 4), dg(5)

  backend = test_init()
  call op_timers(cpu1, et1)
  call check(et1 > 1d9, 'op_timers gives seconds since the epoch')
  call op_rank(rank)
  call check_int(rank, 0, 'op_rank')
  call check_int(op_num_ranks(), 1, 'op_num_ranks')
  call op_mpi_barrier()
  call check_ok('op_mpi_barrier')

  ! A path 0-1-2-3-4 declared in a scrambled order.
  nodes = op_decl_set(5, 'nodes')
  edges = op_decl_set(4, 'edges')
  e2n = reshape([4, 5, 1, 2, 3, 4, 2, 3], [2, 4])
  pedge = op_decl_map(edges, nodes, 2, e2n, 'pedge')
  xv = [1d0, 2d0, 3d0, 4d0, 5d0]
  zeros = 0
  x = op_decl_dat(nodes, 1, xv, 'x')
  deg = op_decl_dat(nodes, 1, zeros, 'deg')
  call op_renumber(pedge)
  call check_ok('op_renumber')
  call check(op_get_global_set_offset(nodes) == 0_c_int64_t, 'op_get_global_set_offset')
  call op_upload_all()
  call op_upload_dat(x)
  call op_download_dat(x)
  call check_ok('uploads and downloads')

  open(newunit=u, file=kfile, status='replace', action='write')
  write(u, '(a)') '/* a kernel kept in its own file */'
  write(u, '(a)') 'void twice(const double *x, double *t) { *t = 2.0 * *x; }'
  close(u)
  k = op_decl_kernel_file(kfile, 'twice')
  kcount = op_decl_kernel('void count(int *a, int *b) { *a += 1; *b += 1; }', 'count')
  t = op_decl_dat_temp_char(nodes, 1, 'double', 8, 'tmp')
  call op_par_loop(k, 'twice', nodes, [op_arg_dat(x, -1, OP_ID, 1, 'double', OP_READ), &
                                       op_arg_dat(t, -1, OP_ID, 1, 'double', OP_WRITE)])
  call op_par_loop(kcount, 'count', edges, [op_arg_dat(deg, 1, pedge, 1, 'int', OP_INC), &
                                            op_arg_dat(deg, 2, pedge, 1, 'int', OP_INC)])
  call op_fetch_data(t, to)
  call op_fetch_data(x, xo)
  call op_fetch_data(deg, dg)
  do u = 1, 5
    call check_dbl(xo(u), xv(u), 'x keeps the declared order after op_renumber')
    call check_dbl(to(u), 2d0 * xv(u), 'kernel from a file')
    call check_int(dg(u), merge(1, 2, u == 1 .or. u == 5), 'node degrees in declared order')
  end do

  call op_print_dat_to_binfile(x, bfile)
  open(newunit=u, file=bfile, access='stream', form='unformatted', status='old', action='read')
  read(u) hdr, back
  close(u, status='delete')
  call check_int(hdr(1), 5, 'binfile count')
  call check_int(hdr(2), 1, 'binfile dim')
  do u = 1, 5
    call check_dbl(back(u), xv(u), 'binfile rows in declared order')
  end do

  ok = op_free_dat_temp_char(t)
  call check_int(ok, 1, 'op_free_dat_temp_char')
  call op_set_error_handler(OP_ERRORS_RETURN)
  call op_fetch_data(t, to)
  call check_err(OP2_ERR_INVALID_HANDLE, 'op_fetch_data', [character(len=16) :: "'tmp'", 'freed'], &
                 'a freed dat is stale')
  k = op_decl_kernel_file('no-such-kernel-file.h', 'twice')
  call check_err(OP2_ERR_IO, 'op_decl_kernel_file', [character(len=24) :: 'no-such-kernel-file.h'], &
                 'missing kernel file')
  call op_set_error_handler(OP_ERRORS_ABORT)
  open(newunit=u, file=kfile, status='old')
  close(u, status='delete')

  call op_timers(cpu2, et2)
  call check(et2 >= et1 .and. cpu2 >= cpu1, 'op_timers advances')
  call op_exit()
end program t600_more_functions_f
