/* Declarations: sets (sizes 0, 1, n), maps, dats of every type (NULL data = zeros), the _char
 * forms, op_get_size, fetch round trips, and that the caller may free its arrays afterwards. */
#include "test.h"

#include <limits.h>

int main(int argc, char **argv)
{
  op_set s0, s1, s5, s3;
  op_map m, m0;
  op_dat d;
  int i;

  test_init(argc, argv);

  s0 = op_decl_set(0, "empty");
  CHECK_OK();
  s1 = op_decl_set(1, "single");
  s5 = op_decl_set(5, "five");
  s3 = op_decl_set(3, "three");
  CHECK(s0 != NULL && s1 != NULL && s5 != NULL && s3 != NULL);
  CHECK(s0 != s1 && s1 != s5 && s5 != s3);
  CHECK_INT(op_get_size(s0), 0);
  CHECK_INT(op_get_size(s1), 1);
  CHECK_INT(op_get_size(s5), 5);
  CHECK_INT(op_get_size(s3), 3);
  CHECK_OK();

  /* Maps: dim 1 and 3, onto a set, from and onto the empty set; the caller frees its array. */
  {
    int *imap = (int *)malloc(5 * 3 * sizeof(int));
    int dummy = 0;
    for (i = 0; i < 15; i++) imap[i] = (i * 7) % 3;
    m = op_decl_map(s5, s3, 3, imap, "five2three");
    CHECK(m != NULL);
    CHECK_OK();
    for (i = 0; i < 15; i++) imap[i] = -12345;
    free(imap);
    m0 = op_decl_map(s0, s3, 2, &dummy, "empty2three");
    CHECK(m0 != NULL);
    CHECK(op_decl_map(s1, s3, 1, (int[]){2}, "single2three") != NULL);
    CHECK(op_decl_map(s0, s0, 1, &dummy, "empty2empty") != NULL);
    CHECK_OK();
  }

  /* Dats of every type: declare from a malloc'd copy, scribble over and free it, fetch back. */
  {
    double *v = (double *)malloc(5 * 2 * sizeof(double)), out[10];
    for (i = 0; i < 10; i++) v[i] = 0.25 * i - 1.0;
    d = op_decl_dat(s5, 2, "double", v, "dbl");
    CHECK(d != NULL);
    CHECK_OK();
    for (i = 0; i < 10; i++) v[i] = -99.0;
    free(v);
    op_fetch_data(d, out);
    CHECK_OK();
    for (i = 0; i < 10; i++) CHECK_DBL(out[i], 0.25 * i - 1.0);
  }
  {
    float v[3] = {0.1f, -3.5f, 1e30f}, out[3];
    d = op_decl_dat(s3, 1, "float", v, "flt");
    op_fetch_data(d, out);
    for (i = 0; i < 3; i++) CHECK(out[i] == v[i]);
  }
  {
    int v[6] = {INT_MIN, -1, 0, 1, 42, INT_MAX}, out[6];
    d = op_decl_dat(s3, 2, "int", v, "int");
    op_fetch_data(d, out);
    for (i = 0; i < 6; i++) CHECK_INT(out[i], v[i]);
  }
  {
    unsigned v[3] = {0u, 7u, 4294967295u}, out[3];
    d = op_decl_dat(s3, 1, "uint", v, "uint");
    op_fetch_data(d, out);
    for (i = 0; i < 3; i++) CHECK_U64(out[i], v[i]);
  }
  {
    long long v[3] = {LLONG_MIN, -5000000000LL, LLONG_MAX}, out[3];
    d = op_decl_dat(s3, 1, "ll", v, "ll");
    op_fetch_data(d, out);
    for (i = 0; i < 3; i++) CHECK_INT(out[i], v[i]);
  }
  {
    unsigned long long v[3] = {0ULL, 10000000000ULL, ULLONG_MAX}, out[3];
    d = op_decl_dat(s3, 1, "ull", v, "ull");
    op_fetch_data(d, out);
    for (i = 0; i < 3; i++) CHECK_U64(out[i], v[i]);
  }
  {
    _Bool v[3] = {1, 0, 1}, out[3] = {0, 1, 0};
    d = op_decl_dat(s3, 1, "bool", v, "bool");
    op_fetch_data(d, out);
    for (i = 0; i < 3; i++) CHECK_INT(out[i], v[i]);
  }

  /* NULL data gives zeros, for every type. */
  {
    double zd[6];
    float zf[6];
    int zi[6];
    unsigned zu[6];
    long long zl[6];
    unsigned long long zul[6];
    _Bool zb[6];
    memset(zd, 0xff, sizeof zd);
    memset(zf, 0xff, sizeof zf);
    memset(zi, 0xff, sizeof zi);
    memset(zu, 0xff, sizeof zu);
    memset(zl, 0xff, sizeof zl);
    memset(zul, 0xff, sizeof zul);
    memset(zb, 1, sizeof zb);
    op_fetch_data(op_decl_dat(s3, 2, "double", NULL, "zd"), zd);
    op_fetch_data(op_decl_dat(s3, 2, "float", NULL, "zf"), zf);
    op_fetch_data(op_decl_dat(s3, 2, "int", NULL, "zi"), zi);
    op_fetch_data(op_decl_dat(s3, 2, "uint", NULL, "zu"), zu);
    op_fetch_data(op_decl_dat(s3, 2, "ll", NULL, "zl"), zl);
    op_fetch_data(op_decl_dat(s3, 2, "ull", NULL, "zul"), zul);
    op_fetch_data(op_decl_dat(s3, 2, "bool", NULL, "zb"), zb);
    CHECK_OK();
    for (i = 0; i < 6; i++) {
      CHECK_DBL(zd[i], 0.0);
      CHECK_DBL(zf[i], 0.0);
      CHECK_INT(zi[i], 0);
      CHECK_U64(zu[i], 0);
      CHECK_INT(zl[i], 0);
      CHECK_U64(zul[i], 0);
      CHECK_INT(zb[i], 0);
    }
  }

  /* Dats on sets of size 0 and 1. */
  {
    double one = 3.75, out1 = 0.0, nothing = 0.0;
    d = op_decl_dat(s1, 1, "double", &one, "one");
    op_fetch_data(d, &out1);
    CHECK_DBL(out1, 3.75);
    d = op_decl_dat(s0, 4, "double", NULL, "none");
    CHECK(d != NULL);
    op_fetch_data(d, &nothing);
    CHECK_OK();
    d = op_decl_dat(s0, 1, "int", &one, "none_with_data");
    CHECK(d != NULL);
    CHECK_OK();
  }

  /* The _char forms: size is the element size in bytes. */
  {
    double v[6] = {1, 2, 3, 4, 5, 6}, out[6];
    int iv[3] = {-7, 8, 9}, iout[3];
    d = op_decl_dat_char(s3, 2, "double", (int)sizeof(double), (const char *)v, "dchar");
    CHECK(d != NULL);
    CHECK_OK();
    op_fetch_data(d, out);
    for (i = 0; i < 6; i++) CHECK_DBL(out[i], v[i]);
    d = op_decl_dat_char(s3, 1, "int", (int)sizeof(int), (const char *)iv, "ichar");
    op_fetch_data(d, iout);
    for (i = 0; i < 3; i++) CHECK_INT(iout[i], iv[i]);
    d = op_decl_dat_char(s3, 1, "ll", (int)sizeof(long long), NULL, "lchar");
    {
      long long lout[3] = {1, 1, 1};
      op_fetch_data(d, lout);
      for (i = 0; i < 3; i++) CHECK_INT(lout[i], 0);
    }
    CHECK_OK();
  }

  /* Constants and kernels declare without error. */
  {
    double g = 1.4;
    op_decl_const(1, "double", &g, "gam");
    CHECK_OK();
    op_decl_const_char(1, "double", (int)sizeof(double), (const char *)&g, "gam2");
    CHECK_OK();
    CHECK(op_decl_kernel("void k(double *x) { *x = 1.0; }\n", "k") != NULL);
    CHECK_OK();
  }

  op_exit();
  return 0;
}
