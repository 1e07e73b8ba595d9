// count_edges (edges): adds 1 to the first residual component of both cells of the edge
// (OP_INC through pecell) and counts the edge twice over: as an int and as halves of a double
// (OP_INC; 0.5 per edge sums exactly in any order).
inline void count_edges(double *res1, double *res2, int *nedges, double *halves) {
  res1[0] += 1.0;
  res2[0] += 1.0;
  *nedges += 1;
  *halves += 0.5;
}
