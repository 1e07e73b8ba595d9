! A Jacobi iteration on a square grid in OP2's Fortran style (as OP2's jac1): a sparse matrix
! stored on edges (one diagonal edge per node, one edge per neighbour), an indirect OP_INC
! product, a direct update with OP_INC and OP_MAX global reductions; op_init(0) means 1-based
! map values (the map and p_u are declared from assumed-size arrays). The kernels are internal
! procedures; `update` reads the constant `alpha` from a module and `res` the global `beta`.
! Each iteration is compared with the same sweep done by
! plain Fortran loops (values to 1e-14, the reductions to 1e-12). Prints "Test PASSED" and exits
! 0, or stops with status 1.
program jac
  use op2_fortran_declarations
  use op2_fortran_reference
  use jac_constants
  implicit none

  integer(4), parameter :: nn = 8, niter = 5
  integer(4) :: nnode, nedge, i, j, k, n, e, it
  integer(4), allocatable :: pp(:)
  real(8), allocatable :: a(:), r(:), u(:), du(:), u_op2(:)
  real(8) :: beta, u_sum, u_max, ref_sum, ref_max
  logical :: ok
  integer(4), dimension(4), parameter :: di = [-1, 1, 0, 0], dj = [0, 0, -1, 1]

  type(op_set) :: nodes, edges
  type(op_map) :: ppedge
  type(op_dat) :: p_a, p_r, p_u, p_du

  call op_init(0)

  nnode = (nn - 1) * (nn - 1)
  nedge = nnode + 4 * (nn - 1) * (nn - 2)
  allocate(pp(2 * nedge), a(nedge), r(nnode), u(nnode), du(nnode), u_op2(nnode))

  ! Node (i, j) is number i + (j - 1) * (nn - 1) (1-based); neighbours outside the grid add
  ! to the right-hand side instead of having an edge.
  e = 0
  do j = 1, nn - 1
    do i = 1, nn - 1
      n = i + (j - 1) * (nn - 1)
      r(n) = 0.0_8
      u(n) = 0.0_8
      du(n) = 0.0_8
      e = e + 1
      pp(2 * e - 1) = n
      pp(2 * e) = n
      a(e) = -1.0_8
      do k = 1, 4
        if (i + di(k) < 1 .or. i + di(k) > nn - 1 .or. j + dj(k) < 1 .or. j + dj(k) > nn - 1) then
          r(n) = r(n) + 0.25_8
        else
          e = e + 1
          pp(2 * e - 1) = n
          pp(2 * e) = (i + di(k)) + (j + dj(k) - 1) * (nn - 1)
          a(e) = 0.25_8
        end if
      end do
    end do
  end do
  if (e /= nedge) error stop 'jac: edge count'

  call op_decl_set(nnode, nodes, 'nodes')
  call op_decl_set(nedge, edges, 'edges')
  call declare_assumed_size(pp, u)
  call op_decl_dat(edges, 1, 'real(8)', a, p_a, 'p_a')
  call op_decl_dat(nodes, 1, 'real(8)', r, p_r, 'p_r')
  call op_decl_dat(nodes, 1, 'real(8)', du, p_du, 'p_du')

  alpha = 1.0_8
  call op_decl_const(alpha, 1, 'real(8)')
  beta = 1.0_8

  ok = .true.
  call op_profile_start('jac')
  do it = 1, niter
    call op_par_loop_4(res, edges, &
      op_arg_dat(p_a, -1, OP_ID, 1, 'real(8)', OP_READ), &
      op_arg_dat(p_u, 2, ppedge, 1, 'real(8)', OP_READ), &
      op_arg_dat(p_du, 1, ppedge, 1, 'real(8)', OP_INC), &
      op_arg_gbl(beta, 1, 'real(8)', OP_READ))

    u_sum = 0.0_8
    u_max = 0.0_8
    call op_par_loop_5(update, nodes, &
      op_arg_dat(p_r, -1, OP_ID, 1, 'real(8)', OP_READ), &
      op_arg_dat(p_du, -1, OP_ID, 1, 'real(8)', OP_RW), &
      op_arg_dat(p_u, -1, OP_ID, 1, 'real(8)', OP_RW), &
      op_arg_gbl(u_sum, 1, 'real(8)', OP_INC), &
      op_arg_gbl(u_max, 1, 'real(8)', OP_MAX))

    ! The same sweep by hand.
    do e = 1, nedge
      du(pp(2 * e - 1)) = du(pp(2 * e - 1)) + beta * a(e) * u(pp(2 * e))
    end do
    ref_sum = 0.0_8
    ref_max = 0.0_8
    do n = 1, nnode
      u(n) = u(n) + du(n) + alpha * r(n)
      du(n) = 0.0_8
      ref_sum = ref_sum + u(n)**2
      ref_max = max(ref_max, u(n))
    end do

    call op_fetch_data(p_u, u_op2)
    if (maxval(abs(u_op2 - u)) > 1e-14_8) then
      print *, 'iteration ', it, ': u differs by ', maxval(abs(u_op2 - u))
      ok = .false.
    end if
    if (abs(u_sum - ref_sum) > 1e-12_8 * ref_sum .or. u_max /= ref_max) then
      print *, 'iteration ', it, ': u_sum ', u_sum, ' vs ', ref_sum, '; u_max ', u_max, &
        ' vs ', ref_max
      ok = .false.
    end if
    if (ref_max <= 0.0_8) then
      print *, 'iteration ', it, ': nothing happened'
      ok = .false.
    end if
  end do
  call op_profile_end()

  call op_exit()
  if (.not. ok) error stop 1
  print '(a)', 'Test PASSED'

contains

  ! The map and p_u from assumed-size arrays (as OP2 programs with Cray pointers have them).
  subroutine declare_assumed_size(map_values, u_values)
    integer(4), intent(in) :: map_values(*)
    real(8), intent(in) :: u_values(*)
    call op_decl_map(edges, nodes, 2, map_values, ppedge, 'ppedge')
    call op_decl_dat(nodes, 1, 'real(8)', u_values, p_u, 'p_u')
  end subroutine declare_assumed_size

  subroutine res(a, u, du, beta)
    real(8), dimension(1) :: a, u, du, beta
    du(1) = du(1) + beta(1) * a(1) * u(1)
  end subroutine res

  subroutine update(r, du, u, u_sum, u_max)
    real(8), dimension(1) :: r, du, u, u_sum, u_max
    u(1) = u(1) + du(1) + alpha * r(1)
    du(1) = 0.0_8
    u_sum(1) = u_sum(1) + u(1)**2
    u_max(1) = max(u_max(1), u(1))
  end subroutine update

end program jac
