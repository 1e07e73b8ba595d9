// The single-precision variant (as jac2): double matrix, float unknowns
inline void jacf_res(const double *A, const float *u, float *du, const float *beta) {
  *du += (float)((*beta) * (*A) * (*u));
}
