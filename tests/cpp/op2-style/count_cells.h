// count_cells (cells, direct): clears the cell's residual and reduces the cell's tag: the cell
// count and the tags' sum (OP_INC), their smallest and largest value (OP_MIN, OP_MAX).
inline void count_cells(double *res, const int *tag, int *ncells, int *tag_sum, int *tag_min,
                        int *tag_max) {
  for (int n = 0; n < 4; n++) res[n] = 0.0;
  *ncells += 1;
  *tag_sum += *tag;
  if (*tag < *tag_min) *tag_min = *tag;
  if (*tag > *tag_max) *tag_max = *tag;
}
