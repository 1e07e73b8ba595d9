// Jacobi update with a sum and a maximum over the nodes (alpha is a declared constant)
inline void jac_update(const double *r, double *du, double *u, double *u_sum, double *u_max) {
  *u += *du + alpha * (*r);
  *du = 0.0;
  *u_sum += (*u) * (*u);
  *u_max = MAX(*u_max, *u);
}
