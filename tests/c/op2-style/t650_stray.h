/* t650: uses a program global that is not declared constant: op2 cannot compile this header
 * into its loop, so the loop calls the program's function once per element. */
static inline void t650_stray(double *y) {
  y[0] += t650_undeclared;
}
