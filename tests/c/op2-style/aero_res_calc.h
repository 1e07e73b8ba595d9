// A bilinear-quad finite-element residual and element matrix (the shape of aero's res_calc):
// four Gauss points, shape-function derivatives from the constant table Ng2_xi (xi-derivatives
// in entries 0..15, eta-derivatives in 16..31), weights wtg2, a density from the isentropic
// relation. K is the cell's 4x4 matrix, accessed through OP2_STRIDE as aero does.
inline void aero_res_calc(double **x, double **phim, double *K, double **res) {
  for (int j = 0; j < 16; j++)
    OP2_STRIDE(K, j) = 0.0;
  for (int g = 0; g < 4; g++) {
    double J[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
    for (int m = 0; m < 4; m++) {
      J[0][0] += Ng2_xi[4 * g + m] * x[m][0];
      J[0][1] += Ng2_xi[4 * g + 16 + m] * x[m][0];
      J[1][0] += Ng2_xi[4 * g + m] * x[m][1];
      J[1][1] += Ng2_xi[4 * g + 16 + m] * x[m][1];
    }
    double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    double N_x[8];
    for (int m = 0; m < 4; m++) {
      N_x[m] = (J[1][1] * Ng2_xi[4 * g + m] - J[1][0] * Ng2_xi[4 * g + 16 + m]) / det;
      N_x[4 + m] = (J[0][0] * Ng2_xi[4 * g + 16 + m] - J[0][1] * Ng2_xi[4 * g + m]) / det;
    }
    double w = wtg2[g] * det;
    double u[2] = {0.0, 0.0};
    for (int m = 0; m < 4; m++) {
      u[0] += N_x[m] * phim[m][0];
      u[1] += N_x[4 + m] * phim[m][0];
    }
    double Dk = 1.0 + 0.5 * gm1 * (m2 - (u[0] * u[0] + u[1] * u[1]));
    double rho = pow(Dk, gm1i);
    for (int j = 0; j < 4; j++) {
      res[j][0] += w * rho * (u[0] * N_x[j] + u[1] * N_x[4 + j]);
      for (int k = 0; k < 4; k++)
        OP2_STRIDE(K, 4 * j + k) += w * rho * (N_x[j] * N_x[k] + N_x[4 + j] * N_x[4 + k]);
    }
  }
}
