/* Issue 9, point 14: kernel sources that are not UTF-8 compile. A Latin-1 comment is ignored and
 * a Latin-1 byte inside a string literal reaches the compiled program unchanged; only the names
 * op2 itself interprets (the kernel's name) must be ASCII identifiers. */
#include "test.h"

int main(int argc, char **argv)
{
  int out[2];
  /* The comment and the literal below are ISO-8859-1 (bytes 0xE9, 0xEF, 0xAB, 0xBB). */
  static const char src[] = "/* caf\xe9 au lait, na\xefve */\n"
                            "void latin(int *y) { // \xab commentaire \xbb\n"
                            "  const char e[] = \"\xe9t\xe9\";\n"
                            "  y[0] = (unsigned char)e[0]; y[1] = (int)sizeof e - 1;\n"
                            "}\n";
  test_init(argc, argv);
  {
    op_set s = op_decl_set(1, "s");
    op_dat y = op_decl_dat(s, 2, "int", NULL, "y");
    op_kernel k = op_decl_kernel(src, "latin");
    CHECK_OK();
    PAR_LOOP(k, "latin", s, op_arg_dat(y, -1, OP_ID, 2, "int", OP_WRITE));
    op_fetch_data(y, out);
    CHECK_INT(out[0], 0xe9);
    CHECK_INT(out[1], 3);
    /* A non-UTF-8 byte in code (not a comment or literal) is a named error, with its line. */
    op_set_error_handler(OP_ERRORS_RETURN);
    CHECK(op_decl_kernel("void bad(int *y) {\n  y[0] = 1;\xe9\n}\n", "bad") == NULL);
    CHECK_ERR(OP2_ERR_BAD_KERNEL, "op_decl_kernel 'bad'", "0xe9 on line 2");
    /* The kernel's name must be an ASCII identifier. */
    CHECK(op_decl_kernel("void x(int *y) { y[0] = 1; }\n", "caf\xe9") == NULL);
    CHECK(op_last_error_code() == OP2_ERR_BAD_NAME || op_last_error_code() == OP2_ERR_BAD_KERNEL);
  }
  op_exit();
  return 0;
}
