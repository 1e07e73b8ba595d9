/* t650: y = factor * x + offsets[k] for the element's k = (index % 3); a constant declared by
 * address (OP2's three-argument op_decl_const). */
static inline void t650_scale(const double *x, double *y, const int *idx) {
  y[0] = t650_factor * x[0] + t650_offsets[*idx % 3];
  y[1] = MAX(x[0], 2.0);
}
