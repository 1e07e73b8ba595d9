// Counting elements with an integer global increment (as the reduction app)
inline void red_res_calc(double *data, int *count) {
  data[0] = 0.0;
  (*count)++;
}
