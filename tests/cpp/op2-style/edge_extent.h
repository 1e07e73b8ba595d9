// edge_extent (edges): from the edge's nodes (through pedge) its largest x extent (OP_MAX) and
// smallest squared length (OP_MIN), both doubles; from op_arg_idx through pecell the smallest
// and largest cell number an edge reaches (int OP_MIN, OP_MAX).
inline void edge_extent(const double *x1, const double *x2, const int *c1, const int *c2,
                        double *dx_max, double *len2_min, int *cell_lo, int *cell_hi) {
  double dx = x1[0] - x2[0], dy = x1[1] - x2[1];
  double len2 = dx * dx + dy * dy;
  if (fabs(dx) > *dx_max) *dx_max = fabs(dx);
  if (len2 < *len2_min) *len2_min = len2;
  int lo = *c1 < *c2 ? *c1 : *c2, hi = *c1 < *c2 ? *c2 : *c1;
  if (lo < *cell_lo) *cell_lo = lo;
  if (hi > *cell_hi) *cell_hi = hi;
}
