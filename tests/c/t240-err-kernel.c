/* Kernel errors: op_decl_kernel with NULLs, a name that is not an identifier or not defined in
 * the source (OP2_ERR_BAD_KERNEL); a kernel that does not compile (OP2_ERR_COMPILE, reported by
 * op_par_loop, with the compiler's diagnostics numbered in the user's source lines and the path
 * of the dumped .c file). A failed loop leaves dats and the caller's globals untouched. */
#include "test.h"

#include <ctype.h>

/* The error is on line 3 of the kernel source. */
static const char *src_bad =
    "void bad(double *x, double *s)\n"
    "{\n"
    "  *x = undeclared_thing + 1.0;\n"
    "  *s += 1.0;\n"
    "}\n";

/* Line 5, after a helper function. */
static const char *src_bad5 =
    "static double helper(double a) { return 2.0 * a; }\n"
    "\n"
    "void bad5(double *x, double *s)\n"
    "{\n"
    "  *x = helper(*x) +;\n"
    "  *s += 1.0;\n"
    "}\n";

/* The message mentions a path ending in ".c": ".c" after a file-name character and before the
 * end or a character that cannot continue a file name here (':', ';', quote, space, ...). */
static int mentions_c_path(const char *msg)
{
  const char *p = msg;
  while ((p = strstr(p, ".c")) != NULL) {
    char next = p[2];
    if (p > msg && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-') &&
        !(isalnum((unsigned char)next) || next == '_' || next == '.' || next == '-'))
      return 1;
    p += 2;
  }
  return 0;
}

int main(int argc, char **argv)
{
  op_set s;
  op_dat d;
  op_kernel kb, kb5, kgood;
  double v[4] = {1, 2, 3, 4}, out[4], g;
  int i;

  test_init(argc, argv);
  s = op_decl_set(4, "cells");
  d = op_decl_dat(s, 1, "double", v, "x");
  op_set_error_handler(OP_ERRORS_RETURN);

  /* op_decl_kernel. */
  CHECK(op_decl_kernel(NULL, "k") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_kernel", "source", "is NULL");
  CHECK(op_decl_kernel("void k(double *x) { *x = 1.0; }\n", NULL) == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_kernel", "name is NULL");
  CHECK(op_decl_kernel("void foobar(double *x) { *x = 1.0; }\n"
                       "void barfoo(double *x) { *x = 2.0; }\n",
                       "foo") == NULL);
  CHECK_ERR(OP2_ERR_BAD_KERNEL, "op_decl_kernel", "'foo'");
  CHECK(op_decl_kernel("", "foo") == NULL);
  CHECK_ERR(OP2_ERR_BAD_KERNEL, "op_decl_kernel", "'foo'");
  CHECK(op_decl_kernel("void my kernel(double *x) { *x = 1.0; }\n", "my kernel") == NULL);
  CHECK_ERR(OP2_ERR_BAD_KERNEL, "op_decl_kernel", "'my kernel'");
  CHECK(op_decl_kernel("void 9k(double *x) { *x = 1.0; }\n", "9k") == NULL);
  CHECK_ERR(OP2_ERR_BAD_KERNEL, "op_decl_kernel", "'9k'");
  CHECK(op_decl_kernel("void k(double *x) { *x = 1.0; }\n", "") == NULL);
  CHECK_ERR(OP2_ERR_BAD_KERNEL, "op_decl_kernel");

  /* A kernel that does not compile: declared fine, fails at the loop. */
  kb = op_decl_kernel(src_bad, "bad");
  CHECK(kb != NULL);
  CHECK_OK();
  g = 10.5;
  PAR_LOOP(kb, "badloop", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_WRITE),
           op_arg_gbl(&g, 1, "double", OP_INC));
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop", "'badloop'", "'bad'", ":3:", "undeclared_thing");
  CHECK(mentions_c_path(op_last_error_message()));
  CHECK_DBL(g, 10.5);
  op_fetch_data(d, out);
  for (i = 0; i < 4; i++) CHECK_DBL(out[i], v[i]);

  /* Again: the failure is not cached as a success. */
  PAR_LOOP(kb, "badloop", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_WRITE),
           op_arg_gbl(&g, 1, "double", OP_INC));
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop", "'badloop'", "'bad'", ":3:");
  CHECK_DBL(g, 10.5);

  /* Line numbers count the user's source, also after helper functions. */
  kb5 = op_decl_kernel(src_bad5, "bad5");
  CHECK(kb5 != NULL);
  PAR_LOOP(kb5, "bad5loop", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW),
           op_arg_gbl(&g, 1, "double", OP_INC));
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop", "'bad5loop'", "'bad5'", ":5:");
  CHECK(mentions_c_path(op_last_error_message()));
  CHECK_DBL(g, 10.5);

  /* A kernel taking fewer parameters than the loop passes does not compile either. */
  {
    op_kernel kf = op_decl_kernel("void few(double *x) { *x = 0.0; }\n", "few");
    CHECK(kf != NULL);
    PAR_LOOP(kf, "fewloop", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_WRITE),
             op_arg_gbl(&g, 1, "double", OP_INC));
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop", "'fewloop'", "'few'");
    CHECK_DBL(g, 10.5);
  }
  op_fetch_data(d, out);
  for (i = 0; i < 4; i++) CHECK_DBL(out[i], v[i]);

  /* A kernel with a mere warning (unused variable) compiles and runs; errors are cleared. */
  kgood = op_decl_kernel("void good(double *x, double *s)\n"
                         "{\n"
                         "  int unused;\n"
                         "  *x = 2.0 * *x;\n"
                         "  *s += 1.0;\n"
                         "}\n",
                         "good");
  PAR_LOOP(kgood, "goodloop", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW),
           op_arg_gbl(&g, 1, "double", OP_INC));
  CHECK_OK();
  CHECK_DBL(g, 14.5);
  op_fetch_data(d, out);
  for (i = 0; i < 4; i++) CHECK_DBL(out[i], 2.0 * v[i]);

  op_exit();
  return 0;
}
