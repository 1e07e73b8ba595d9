// update (cells, direct): the new state from the saved one and the residual scaled by the time
// step, the residual cleared; sums the squared changes into rms (OP_INC), keeps the largest in
// maxerr (OP_MAX) and the cell it happened in (errloc: op_arg_info following maxerr, set from
// idx, the cell's op_arg_idx).
inline void update(const double *qold, double *q, double *res, const double *adt, double *rms,
                   double *maxerr, const int *idx, int *errloc) {
  double del, adti;

  adti = 1.0 / (*adt);
  for (int n = 0; n < 4; n++) {
    del = adti * res[n];
    q[n] = qold[n] - del;
    res[n] = 0.0;
    *rms += del * del;
    if (del * del > *maxerr) {
      *maxerr = del * del;
      *errloc = *idx;
    }
  }
}
