/* Issue 9, point 4: no panic crosses the C boundary, also during exit(): op2 calls from an
 * atexit handler, which runs after this thread's thread-locals are destroyed, return normally
 * (op_exit there is a common pattern; so are late error queries and calls that fail). */
#include "test.h"

static void late(void)
{
  op_set_error_handler(OP_ERRORS_RETURN);
  (void)op_decl_set(3, "late_set");
  (void)op_last_error_code();
  (void)op_last_error_message();
  op_exit();
  op_exit(); /* fails: not initialised; must return */
  (void)op_last_error_code();
  (void)op_decl_set(-1, "bad"); /* fails; must return */
  (void)op_backend_name();
  fflush(NULL);
}

int main(int argc, char **argv)
{
  double out[2];
  test_init(argc, argv);
  atexit(late);
  {
    op_set s = op_decl_set(2, "s");
    op_dat x = op_decl_dat(s, 1, "double", NULL, "x");
    op_kernel k = op_decl_kernel("void one(double *x) { x[0] = 1.0; }\n", "one");
    op_set_error_handler(OP_ERRORS_RETURN);
    (void)op_decl_set(-1, "fails_now"); /* leaves a recorded error in this thread's slot */
    op_set_error_handler(OP_ERRORS_ABORT);
    PAR_LOOP(k, "one", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_WRITE));
    op_fetch_data(x, out);
    CHECK_DBL(out[1], 1.0);
  }
  return 0; /* exit() runs `late` */
}
