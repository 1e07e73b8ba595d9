! The Airfoil kernels as Fortran subroutines: one dummy per loop argument, explicit-shape
! arrays or scalars; each computes in the order of the C Airfoil's kernel of the same name.
module airfoil_kernels
  use airfoil_constants
  implicit none
  private
  public :: save_soln, adt_calc, res_calc, bres_calc, update

contains

  subroutine save_soln(q, qold)
    real(8), intent(in) :: q(4)
    real(8), intent(out) :: qold(4)
    qold = q
  end subroutine save_soln

  ! The local time step of a cell from its four corners and its state.
  subroutine adt_calc(x1, x2, x3, x4, q, adt)
    real(8), intent(in) :: x1(2), x2(2), x3(2), x4(2), q(4)
    real(8), intent(out) :: adt
    real(8) :: ri, u, v, c, dx, dy
    ri = 1.0_8 / q(1)
    u = ri * q(2)
    v = ri * q(3)
    c = sqrt(gam * gm1 * (ri * q(4) - 0.5_8 * (u * u + v * v)))
    ! each side's term in parentheses: the C kernel's order of additions
    dx = x2(1) - x1(1)
    dy = x2(2) - x1(2)
    adt = abs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy)
    dx = x3(1) - x2(1)
    dy = x3(2) - x2(2)
    adt = adt + (abs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy))
    dx = x4(1) - x3(1)
    dy = x4(2) - x3(2)
    adt = adt + (abs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy))
    dx = x1(1) - x4(1)
    dy = x1(2) - x4(2)
    adt = adt + (abs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy))
    adt = adt / cfl
  end subroutine adt_calc

  ! The flux through an interior edge, added to one cell and taken from the other.
  subroutine res_calc(x1, x2, q1, q2, adt1, adt2, res1, res2)
    real(8), intent(in) :: x1(2), x2(2), q1(4), q2(4), adt1, adt2
    real(8), intent(inout) :: res1(4), res2(4)
    real(8) :: dx, dy, mu, ri, p1, vol1, p2, vol2, f
    dx = x1(1) - x2(1)
    dy = x1(2) - x2(2)
    ri = 1.0_8 / q1(1)
    p1 = gm1 * (q1(4) - 0.5_8 * ri * (q1(2) * q1(2) + q1(3) * q1(3)))
    vol1 = ri * (q1(2) * dy - q1(3) * dx)
    ri = 1.0_8 / q2(1)
    p2 = gm1 * (q2(4) - 0.5_8 * ri * (q2(2) * q2(2) + q2(3) * q2(3)))
    vol2 = ri * (q2(2) * dy - q2(3) * dx)
    mu = 0.5_8 * (adt1 + adt2) * eps
    f = 0.5_8 * (vol1 * q1(1) + vol2 * q2(1)) + mu * (q1(1) - q2(1))
    res1(1) = res1(1) + f
    res2(1) = res2(1) - f
    f = 0.5_8 * (vol1 * q1(2) + p1 * dy + vol2 * q2(2) + p2 * dy) + mu * (q1(2) - q2(2))
    res1(2) = res1(2) + f
    res2(2) = res2(2) - f
    f = 0.5_8 * (vol1 * q1(3) - p1 * dx + vol2 * q2(3) - p2 * dx) + mu * (q1(3) - q2(3))
    res1(3) = res1(3) + f
    res2(3) = res2(3) - f
    f = 0.5_8 * (vol1 * (q1(4) + p1) + vol2 * (q2(4) + p2)) + mu * (q1(4) - q2(4))
    res1(4) = res1(4) + f
    res2(4) = res2(4) - f
  end subroutine res_calc

  ! A boundary edge: pressure on the wall (bound 1), flux against the free stream otherwise.
  subroutine bres_calc(x1, x2, q1, adt1, res1, bound)
    real(8), intent(in) :: x1(2), x2(2), q1(4), adt1
    real(8), intent(inout) :: res1(4)
    integer(4), intent(in) :: bound
    real(8) :: dx, dy, mu, ri, p1, vol1, p2, vol2, f
    dx = x1(1) - x2(1)
    dy = x1(2) - x2(2)
    ri = 1.0_8 / q1(1)
    p1 = gm1 * (q1(4) - 0.5_8 * ri * (q1(2) * q1(2) + q1(3) * q1(3)))
    if (bound == 1) then
      res1(2) = res1(2) + p1 * dy
      res1(3) = res1(3) + (-p1 * dx)
      return
    end if
    vol1 = ri * (q1(2) * dy - q1(3) * dx)
    ri = 1.0_8 / qinf(1)
    p2 = gm1 * (qinf(4) - 0.5_8 * ri * (qinf(2) * qinf(2) + qinf(3) * qinf(3)))
    vol2 = ri * (qinf(2) * dy - qinf(3) * dx)
    mu = adt1 * eps
    f = 0.5_8 * (vol1 * q1(1) + vol2 * qinf(1)) + mu * (q1(1) - qinf(1))
    res1(1) = res1(1) + f
    f = 0.5_8 * (vol1 * q1(2) + p1 * dy + vol2 * qinf(2) + p2 * dy) + mu * (q1(2) - qinf(2))
    res1(2) = res1(2) + f
    f = 0.5_8 * (vol1 * q1(3) - p1 * dx + vol2 * qinf(3) - p2 * dx) + mu * (q1(3) - qinf(3))
    res1(3) = res1(3) + f
    f = 0.5_8 * (vol1 * (q1(4) + p1) + vol2 * (qinf(4) + p2)) + mu * (q1(4) - qinf(4))
    res1(4) = res1(4) + f
  end subroutine bres_calc

  ! The explicit step; rms sums the squared changes, maxerr keeps the largest and errloc the
  ! (1-based) cell where it happened.
  subroutine update(qold, q, res, adt, rms, maxerr, idx, errloc)
    real(8), intent(in) :: qold(4), adt
    real(8), intent(out) :: q(4)
    real(8), intent(inout) :: res(4), rms, maxerr
    integer(4), intent(in) :: idx
    integer(4), intent(inout) :: errloc
    real(8) :: del, adti
    integer(4) :: n
    adti = 1.0_8 / adt
    do n = 1, 4
      del = adti * res(n)
      q(n) = qold(n) - del
      res(n) = 0.0_8
      rms = rms + del * del
      if (del * del > maxerr) then
        maxerr = del * del
        errloc = idx
      end if
    end do
  end subroutine update

end module airfoil_kernels
