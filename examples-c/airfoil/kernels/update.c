/* update (cells, direct): q <- qold - res/adt, res <- 0; accumulates rms (OP_INC), the
   largest squared change maxerr (OP_MAX) and the cell where it happened, errloc (op_arg_info
   following maxerr). idx is the cell's index (op_arg_idx(-1, OP_ID)). */
void update(const double *qold, double *q, double *res, const double *adt, double *rms,
            double *maxerr, int *errloc, const int *idx) {
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
