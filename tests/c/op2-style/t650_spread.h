/* t650: each edge adds its weight to both its nodes (indirect OP_INC), and counts itself. */
static inline void t650_spread(const double *w, double *a, double *b, int *count) {
  a[0] += w[0];
  b[0] += w[0];
  (*count)++;
}
