! The flow constants of the Airfoil test, as the C Airfoil sets them (single-precision
! literals widened to double, so that both programs compute with the same values).
module airfoil_constants
  implicit none
  real(8), parameter :: gam = real(1.4, 8)
  real(8), parameter :: gm1 = gam - 1.0_8
  real(8), parameter :: cfl = real(0.9, 8)
  real(8), parameter :: eps = real(0.05, 8)
  real(8), parameter :: mach = real(0.4, 8)
  real(8), parameter :: p_inf = 1.0_8, r_inf = 1.0_8
  real(8), parameter :: u_inf = sqrt(gam * p_inf / r_inf) * mach
  real(8), parameter :: e_inf = p_inf / (r_inf * gm1) + 0.5_8 * u_inf * u_inf
  real(8), dimension(4), parameter :: qinf = [r_inf, r_inf * u_inf, 0.0_8, r_inf * e_inf]
end module airfoil_constants
