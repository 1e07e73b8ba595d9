/* Indirect WRITE / RW through maps with no conflicts (the user's promise), direct INC, vector INC
 * of a dim-2 dat, and a map from a set to itself (reading neighbours while writing directly). */
#include "test.h"

#define N 600

static const char *src_wr =
    "void wr(const int *e, double *t, int *u) { t[0] = 2.0 * *e; t[1] = -1.0; *u = *e + 1; }\n";

static const char *src_rw = "void rw(double *t, const double *s) { t[0] += *s; t[1] *= *s; }\n";

static const char *src_dinc = "void dinc(const double *s, double *acc, int *cnt) { acc[0] += *s; acc[1] += 1.0; *cnt += 3; }\n";

static const char *src_vinc =
    "void vinc(double **v, const int *e)\n"
    "{\n"
    "  v[0][0] += 1.0; v[0][1] += *e;\n"
    "  v[1][0] += 2.0; v[1][1] -= *e;\n"
    "}\n";

static const char *src_nb =
    "void nb(const double *left, const double *right, const double *me, double *out)\n"
    "{ *out = *left - 2.0 * *me + *right; }\n";

int main(int argc, char **argv)
{
  static int perm[N], inv[N], uout[N], cnt[N], pairs[2 * N], nbr[2 * N];
  static double t[2 * N], s[N], acc[2 * N], v[2 * N], xv[N], lap[N];
  int i;
  op_set src, dst, ring;
  op_map pperm, ppair, pnbr;
  op_dat dt, du, ds, dacc, dcnt, dv, dx, dlap;

  test_init(argc, argv);
  /* perm: a permutation of 0..N-1 (i -> 7i + 3 mod N, gcd(7, N) = 1). */
  for (i = 0; i < N; i++) {
    perm[i] = (7 * i + 3) % N;
    inv[perm[i]] = i;
    s[i] = 0.5 * (i % 10) + 1.0;
  }
  src = op_decl_set(N, "src");
  dst = op_decl_set(N, "dst");
  pperm = op_decl_map(src, dst, 1, perm, "pperm");
  dt = op_decl_dat(dst, 2, "double", NULL, "t");
  du = op_decl_dat(dst, 1, "int", NULL, "u");
  ds = op_decl_dat(src, 1, "double", s, "s");

  /* WRITE through the permutation: t[perm[e]] = (2e, -1), u[perm[e]] = e + 1. */
  PAR_LOOP(op_decl_kernel(src_wr, "wr"), "wr", src, op_arg_idx(-1, OP_ID),
           op_arg_dat(dt, 0, pperm, 2, "double", OP_WRITE), op_arg_dat(du, 0, pperm, 1, "int", OP_WRITE));
  CHECK_OK();
  op_fetch_data(dt, t);
  op_fetch_data(du, uout);
  for (i = 0; i < N; i++) {
    CHECK_DBL(t[2 * i], 2.0 * inv[i]);
    CHECK_DBL(t[2 * i + 1], -1.0);
    CHECK_INT(uout[i], inv[i] + 1);
  }

  /* RW through the permutation. */
  PAR_LOOP(op_decl_kernel(src_rw, "rw"), "rw", src, op_arg_dat(dt, 0, pperm, 2, "double", OP_RW),
           op_arg_dat(ds, -1, OP_ID, 1, "double", OP_READ));
  op_fetch_data(dt, t);
  for (i = 0; i < N; i++) {
    CHECK_DBL(t[2 * i], 2.0 * inv[i] + s[inv[i]]);
    CHECK_DBL(t[2 * i + 1], -s[inv[i]]);
  }

  /* Direct INC adds onto the existing values. */
  for (i = 0; i < N; i++) {
    acc[2 * i] = i;
    acc[2 * i + 1] = -i;
    cnt[i] = i;
  }
  dacc = op_decl_dat(src, 2, "double", acc, "acc");
  dcnt = op_decl_dat(src, 1, "int", cnt, "cnt");
  PAR_LOOP(op_decl_kernel(src_dinc, "dinc"), "dinc", src, op_arg_dat(ds, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(dacc, -1, OP_ID, 2, "double", OP_INC), op_arg_dat(dcnt, -1, OP_ID, 1, "int", OP_INC));
  CHECK_OK();
  op_fetch_data(dacc, acc);
  op_fetch_data(dcnt, cnt);
  for (i = 0; i < N; i++) {
    CHECK_DBL(acc[2 * i], i + s[i]);
    CHECK_DBL(acc[2 * i + 1], -i + 1.0);
    CHECK_INT(cnt[i], i + 3);
  }

  /* Vector INC of a dim-2 dat over pairs (e, e+1 mod N) of dst: each dst element is entry 0 of
   * one pair and entry 1 of another. */
  for (i = 0; i < N; i++) {
    pairs[2 * i] = i;
    pairs[2 * i + 1] = (i + 1) % N;
  }
  ppair = op_decl_map(src, dst, 2, pairs, "ppair");
  dv = op_decl_dat(dst, 2, "double", NULL, "v");
  PAR_LOOP(op_decl_kernel(src_vinc, "vinc"), "vinc", src, op_arg_dat(dv, -2, ppair, 2, "double", OP_INC),
           op_arg_idx(-1, OP_ID));
  CHECK_OK();
  op_fetch_data(dv, v);
  for (i = 0; i < N; i++) {
    int prev = (i + N - 1) % N;
    CHECK_DBL(v[2 * i], 3.0);
    CHECK_DBL(v[2 * i + 1], i - prev);
  }

  /* A map from a set to itself: a discrete Laplacian on a ring. */
  for (i = 0; i < N; i++) {
    nbr[2 * i] = (i + N - 1) % N;
    nbr[2 * i + 1] = (i + 1) % N;
    xv[i] = (double)(i * i % 97);
  }
  ring = op_decl_set(N, "ring");
  pnbr = op_decl_map(ring, ring, 2, nbr, "pnbr");
  dx = op_decl_dat(ring, 1, "double", xv, "xr");
  dlap = op_decl_dat(ring, 1, "double", NULL, "lap");
  PAR_LOOP(op_decl_kernel(src_nb, "nb"), "nb", ring, op_arg_dat(dx, 0, pnbr, 1, "double", OP_READ),
           op_arg_dat(dx, 1, pnbr, 1, "double", OP_READ), op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(dlap, -1, OP_ID, 1, "double", OP_WRITE));
  op_fetch_data(dlap, lap);
  for (i = 0; i < N; i++) CHECK_DBL(lap[i], xv[nbr[2 * i]] - 2.0 * xv[i] + xv[nbr[2 * i + 1]]);

  op_exit();
  return 0;
}
