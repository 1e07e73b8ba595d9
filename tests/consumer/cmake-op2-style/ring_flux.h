// Each edge moves gain * (difference of its nodes' values) into both nodes' fluxes.
inline void ring_flux(const double *a, const double *b, double *fa, double *fb, double *total) {
  double f = gain * (b[0] - a[0]);
  fa[0] += f;
  fb[0] -= f;
  *total += f > 0 ? f : -f;
}
