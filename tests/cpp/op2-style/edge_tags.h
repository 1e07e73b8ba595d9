// edge_tags (edges): the tags of the edge's two cells (an int dat read through pecell): their
// sum's total (OP_INC), smallest and largest value (OP_MIN, OP_MAX), and in a two-component
// global (OP_INC) how many edges have a positive and how many a negative sum.
inline void edge_tags(const int *t1, const int *t2, int *pair_total, int *pair_min, int *pair_max,
                      int *signs) {
  int s = *t1 + *t2;
  *pair_total += s;
  if (s < *pair_min) *pair_min = s;
  if (s > *pair_max) *pair_max = s;
  if (s > 0) signs[0] += 1;
  if (s < 0) signs[1] += 1;
}
