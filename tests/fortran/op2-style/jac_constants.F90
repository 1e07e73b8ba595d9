! The constant of the jac test: declared to op2 with op_decl_const, read by the kernel directly.
module jac_constants
  implicit none
  real(8) :: alpha = 1.0_8
end module jac_constants
