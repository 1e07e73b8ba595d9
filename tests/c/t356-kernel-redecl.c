/* Issue 9, point 15: op_decl_kernel called again with the same name and source (inside a time
 * loop, as OP2 programs do) returns the same handle: nothing grows per call. A different source
 * under the same name is a different kernel. */
#include "test.h"

int main(int argc, char **argv)
{
  static const char *src = "void inc(double *x) { x[0] += 1.0; }\n";
  op_kernel first, again = NULL, other;
  double out[4];
  int it;
  test_init(argc, argv);
  {
    op_set s = op_decl_set(4, "s");
    op_dat x = op_decl_dat(s, 1, "double", NULL, "x");
    first = op_decl_kernel(src, "inc");
    for (it = 0; it < 200000; it++) {
      char copy[64];
      strcpy(copy, src); /* same text at another address */
      again = op_decl_kernel(copy, "inc");
      if (again != first) CHECK(again == first);
      if (it % 20000 == 0) PAR_LOOP(again, "inc", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW));
    }
    op_fetch_data(x, out);
    CHECK_DBL(out[3], 10.0);
    other = op_decl_kernel("void inc(double *x) { x[0] += 2.0; }\n", "inc");
    CHECK(other != first);
    PAR_LOOP(other, "inc2", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW));
    op_fetch_data(x, out);
    CHECK_DBL(out[0], 12.0);
  }
  op_exit();
  return 0;
}
