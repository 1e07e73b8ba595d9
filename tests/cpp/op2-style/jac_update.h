// jac_update (nodes, direct): u moves by du plus alpha (an op_decl_const constant) times the
// right-hand side; du is cleared; the sum of u squared (OP_INC) and the largest u (OP_MAX) are
// global reductions.
inline void jac_update(const double *r, double *du, double *u, double *u_sum, double *u_max) {
  *u += *du + alpha * (*r);
  *du = 0.0;
  *u_sum += (*u) * (*u);
  *u_max = *u_max > *u ? *u_max : *u;
}
