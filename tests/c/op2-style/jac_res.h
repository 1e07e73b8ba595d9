// Jacobi residual: one matrix entry per edge (double precision, as jac1)
inline void jac_res(const double *A, const double *u, double *du, const double *beta) {
  *du += (*beta) * (*A) * (*u);
}
