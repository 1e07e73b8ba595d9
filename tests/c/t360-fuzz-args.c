/* Issue 9, point 16: a fuzz-style property test of declaration and argument validation. Random
 * set sizes (0 included), map arities and entries (some out of range), dat and argument dims,
 * idx values (in and out of range, -N, -1) and access modes (including invalid ones): every
 * trial ends in a named error that is one of the faults the trial contains, or in exactly the
 * result computed here independently; never a crash. Deterministic (fixed seed). */
#include "test.h"

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static int rnd(int n) /* uniform in [0, n) */
{
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (int)((rng >> 33) % (unsigned long long)n);
}

static int in_set(int code, const int *faults, int nf)
{
  int i;
  for (i = 0; i < nf; i++)
    if (faults[i] == code) return 1;
  return 0;
}

int main(int argc, char **argv)
{
  static const int from_sizes[] = {0, 1, 2, 5, 17}, to_sizes[] = {0, 1, 3, 8};
  static const int accs[] = {OP_READ, OP_WRITE, OP_RW, OP_INC, OP_MIN, 9, -1};
  int trial, ok = 0, failed = 0;
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  for (trial = 0; trial < 400; trial++) {
    int nfrom = from_sizes[rnd(5)], nto = to_sizes[rnd(4)], md = 1 + rnd(3), dd = 1 + rnd(2);
    int ad = rnd(10) == 0 ? dd + 1 : dd, acc = accs[rnd(7)];
    int idx_choice = rnd(6), idx, vector, faults[8], nf = 0, map_bad = 0, i, j, k;
    int *m = malloc(sizeof(int) * (size_t)(nfrom * md + 1));
    double *x0 = malloc(sizeof(double) * (size_t)(nto * dd + 1)), *x1 = malloc(sizeof(double) * (size_t)(nto * dd + 1));
    double *want = malloc(sizeof(double) * (size_t)(nto * dd + 1));
    double *out = malloc(sizeof(double) * (size_t)(nfrom + 1)), *wout = malloc(sizeof(double) * (size_t)(nfrom + 1));
    char name[32], src[512];
    op_set from, to;
    op_map map;
    op_dat x, o;
    op_arg a[2];
    CHECK(m && x0 && x1 && want && out && wout);
    for (i = 0; i < nfrom * md; i++) {
      m[i] = nto > 0 ? rnd(nto) : 0;
      if (rnd(12) == 0) m[i] = rnd(2) ? -1 - rnd(3) : nto + rnd(3);
      if (m[i] < 0 || m[i] >= nto) map_bad = 1;
    }
    for (i = 0; i < nto * dd; i++) x0[i] = (double)(rnd(100) - 50);
    idx = idx_choice == 0 ? -md : idx_choice == 1 ? -1 : idx_choice == 2 ? md : idx_choice == 3 ? -md - 1 : rnd(md);
    vector = idx == -md;

    from = op_decl_set(nfrom, "from");
    to = op_decl_set(nto, "to");
    CHECK_OK();
    map = op_decl_map(from, to, md, m, "map");
    if (map_bad) {
      CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map 'map'");
      CHECK(map == NULL);
      goto next;
    }
    CHECK_OK();
    x = op_decl_dat(to, dd, "double", x0, "x");
    o = op_decl_dat(from, 1, "double", NULL, "o");
    CHECK_OK();

    if (acc < 0 || acc > 5) faults[nf++] = OP2_ERR_ARG_ACCESS;
    if (ad != dd) faults[nf++] = OP2_ERR_ARG_MISMATCH;
    if (acc == OP_MIN) faults[nf++] = OP2_ERR_ARG_ACCESS;
    if (!(idx >= 0 && idx < md) && idx != -md) faults[nf++] = OP2_ERR_ARG_IDX;

    a[0] = op_arg_dat(x, idx, map, ad, "double", acc);
    if (nf > 0 && !in_set(op_last_error_code(), faults, nf))
      test_fail_(__FILE__, __LINE__, "trial %d: op_arg_dat gave %d (%s)", trial, op_last_error_code(),
                 op_last_error_message());
    a[1] = op_arg_dat(o, -1, OP_ID, 1, "double", OP_WRITE);
    /* The kernel: READ sums into o; WRITE stores 7; RW adds 0; INC adds 1 to each component. */
    snprintf(name, sizeof name, "f_%d_%d_%d_%d", acc >= 0 && acc <= 5 ? acc : 0, vector, dd, vector ? md : 0);
    {
      const char *body = acc == OP_READ ? "o[0] += X[j];" : acc == OP_WRITE ? "X[j] = 7.0;" : acc == OP_RW ? "X[j] += 0.0;" : "X[j] += 1.0;";
      const char *cq = acc == OP_READ ? "const " : "";
      if (vector)
        snprintf(src, sizeof src,
                 "void %s(%sdouble **v, double *o) { o[0] = 0; for (int k = 0; k < %d; k++) for (int j = 0; j < %d; j++) { %sdouble *X = v[k]; %s } }\n",
                 name, cq, md, dd, cq, body);
      else
        snprintf(src, sizeof src, "void %s(%sdouble *X, double *o) { o[0] = 0; for (int j = 0; j < %d; j++) { %s } }\n",
                 name, cq, dd, body);
    }
    op_par_loop(op_decl_kernel(src, name), name, from, 2, a);
    if (nf > 0) {
      if (!in_set(op_last_error_code(), faults, nf) || strncmp(op_last_error_message(), "op_par_loop", 11) != 0)
        test_fail_(__FILE__, __LINE__, "trial %d: loop gave %d (%s)", trial, op_last_error_code(),
                   op_last_error_message());
      failed++;
      goto next;
    }
    /* check reports indirect WRITE/RW targets reached twice: a broken promise, named. */
    if ((acc == OP_WRITE || acc == OP_RW) && op_last_error_code() == OP2_ERR_CHECK && strcmp(argv[1], "check") == 0) {
      failed++;
      goto next;
    }
    if (op_last_error_code() != 0)
      test_fail_(__FILE__, __LINE__, "trial %d: unexpected error %s", trial, op_last_error_message());
    /* Independent expectation. */
    memcpy(want, x0, sizeof(double) * (size_t)(nto * dd));
    for (i = 0; i < nfrom; i++) {
      wout[i] = 0;
      for (k = 0; k < md; k++) {
        int t;
        if (!vector && k != idx) continue;
        t = m[i * md + k];
        for (j = 0; j < dd; j++) {
          if (acc == OP_READ) wout[i] += x0[t * dd + j];
          else if (acc == OP_WRITE) want[t * dd + j] = 7.0;
          else if (acc == OP_INC) want[t * dd + j] += 1.0;
        }
      }
    }
    op_fetch_data(x, x1);
    op_fetch_data(o, out);
    CHECK_OK();
    for (i = 0; i < nto * dd; i++)
      if (x1[i] != want[i]) test_fail_(__FILE__, __LINE__, "trial %d: x[%d] = %g, want %g", trial, i, x1[i], want[i]);
    for (i = 0; i < nfrom; i++)
      if (out[i] != wout[i]) test_fail_(__FILE__, __LINE__, "trial %d: o[%d] = %g, want %g", trial, i, out[i], wout[i]);
    ok++;
  next:
    free(m);
    free(x0);
    free(x1);
    free(want);
    free(out);
    free(wout);
  }
  /* The generator must exercise both outcomes. */
  CHECK(ok > 50);
  CHECK(failed > 50);
  op_exit();
  return 0;
}
