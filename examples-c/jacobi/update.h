// update.h: the Jacobi update of a node, with the sum of squares and the maximum
inline void update(const double *r, double *du, double *u, double *u_sum, double *u_max) {
  *u += *du + alpha * (*r);
  *du = 0.0;
  *u_sum += (*u) * (*u);
  *u_max = MAX(*u_max, *u);
}
