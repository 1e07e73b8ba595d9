// Direct update with a squared-norm reduction (as aero's update)
inline void aero_update(double *phim, double *res, double *u, double *rms) {
  *phim -= *u;
  *res = 0.0;
  *rms += (*u) * (*u);
}
