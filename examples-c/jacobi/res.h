// res.h: one stencil entry of the residual, per edge (kept exactly as an OP2 app keeps it)
inline void res(const double *A, const double *u, double *du, const double *beta) {
  *du += (*beta) * (*A) * (*u);
}
