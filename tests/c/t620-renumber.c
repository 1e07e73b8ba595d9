/* op_renumber: a small quad mesh declared twice, once in natural order and once with nodes,
 * edges and cells numbered at random; the random one is renumbered. The same loops (indirect
 * increments, vector reads, direct updates, reductions) give the same results in the declared
 * numbering (1e-12 relative: increments may add in another order); fetch, fetch_idx and the text
 * and binary files are in the declared order; a dat and a map declared after op_renumber speak
 * the declared numbering; op_renumber after a loop is an error. */
#include "test.h"

#include <unistd.h>

#define NX 9
#define NY 7
#define NN ((NX + 1) * (NY + 1))
#define NC (NX * NY)
#define NE (NX * (NY + 1) + (NX + 1) * NY)

static char dir[] = "/tmp/op2-t620-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static unsigned long long rng = 12345;
static int rnd(int n)
{
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((rng >> 33) % (unsigned long long)n);
}

/* perm[old] = new, a random permutation of 0..n-1 */
static void shuffle(int *perm, int n)
{
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = rnd(i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

struct mesh {
  op_set nodes, edges, cells;
  op_map pedge, pcell;
  op_dat x, r, w, c;
};

static const char *flux_src =
    "void flux(const double *xa, const double *xb, double *ra, double *rb, const double *w) {\n"
    "  double f = (*xa - *xb) * *w; *ra -= f; *rb += f;\n}\n";
static const char *avg_src =
    "void cellavg(const double **x, double *c) {\n"
    "  *c = 0.25 * (x[0][0] + x[1][0] + x[2][0] + x[3][0]) + 0.001 * *c;\n}\n";
static const char *upd_src =
    "void upd(double *x, double *r, double *rms, double *mx) {\n"
    "  *x += 0.1 * *r; *rms += *r * *r; if (*r > *mx) *mx = *r; *r = 0.0;\n}\n";

static void run(struct mesh *m, op_kernel kf, op_kernel ka, op_kernel ku, double *rms, double *mx)
{
  for (int it = 0; it < 3; it++) {
    PAR_LOOP(kf, "flux", m->edges, op_arg_dat(m->x, 0, m->pedge, 1, "double", OP_READ),
             op_arg_dat(m->x, 1, m->pedge, 1, "double", OP_READ),
             op_arg_dat(m->r, 0, m->pedge, 1, "double", OP_INC),
             op_arg_dat(m->r, 1, m->pedge, 1, "double", OP_INC),
             op_arg_dat(m->w, -1, OP_ID, 1, "double", OP_READ));
    PAR_LOOP(ka, "cellavg", m->cells, op_arg_dat(m->x, -4, m->pcell, 1, "double", OP_READ),
             op_arg_dat(m->c, -1, OP_ID, 1, "double", OP_RW));
    *rms = 0;
    *mx = -1e300;
    PAR_LOOP(ku, "upd", m->nodes, op_arg_dat(m->x, -1, OP_ID, 1, "double", OP_RW),
             op_arg_dat(m->r, -1, OP_ID, 1, "double", OP_RW),
             op_arg_gbl(rms, 1, "double", OP_INC), op_arg_gbl(mx, 1, "double", OP_MAX));
  }
}

static void same(const double *got, const double *want, int n, const char *what)
{
  for (int i = 0; i < n; i++) {
    double tol = 1e-12 * fmax(1.0, fabs(want[i]));
    if (fabs(got[i] - want[i]) > tol)
      test_fail_(__FILE__, __LINE__, "%s[%d]: got %.17g, want %.17g", what, i, got[i], want[i]);
  }
}

int main(int argc, char **argv)
{
  static int e2n[2 * NE], c2n[4 * NC], pe2n[2 * NE], pc2n[4 * NC];
  static int pn[NN], pe[NE], pc[NC];
  static double x[NN], w[NE], px[NN], pw[NE];
  static double a[NN], b[NN], ca[NC], cb[NC], we[NE];
  struct mesh o, p;
  int ne = 0, nc = 0;
  double rms_o, mx_o, rms_p, mx_p;
  char path[300];

  test_init(argc, argv);
  CHECK(mkdtemp(dir) != NULL);
  atexit(cleanup);

  for (int j = 0; j <= NY; j++)
    for (int i = 0; i <= NX; i++) {
      int n = j * (NX + 1) + i;
      x[n] = sin(0.3 * i) + cos(0.7 * j) + 0.01 * n;
      if (i < NX) e2n[2 * ne] = n, e2n[2 * ne + 1] = n + 1, ne++;
      if (j < NY) e2n[2 * ne] = n, e2n[2 * ne + 1] = n + NX + 1, ne++;
      if (i < NX && j < NY) {
        c2n[4 * nc] = n, c2n[4 * nc + 1] = n + 1, c2n[4 * nc + 2] = n + NX + 2;
        c2n[4 * nc + 3] = n + NX + 1, nc++;
      }
    }
  CHECK_INT(ne, NE);
  CHECK_INT(nc, NC);
  for (int e = 0; e < NE; e++) w[e] = 1.0 + 0.1 * (e % 7);

  shuffle(pn, NN);
  shuffle(pe, NE);
  shuffle(pc, NC);
  for (int n = 0; n < NN; n++) px[pn[n]] = x[n];
  for (int e = 0; e < NE; e++) {
    pw[pe[e]] = w[e];
    for (int k = 0; k < 2; k++) pe2n[2 * pe[e] + k] = pn[e2n[2 * e + k]];
  }
  for (int c = 0; c < NC; c++)
    for (int k = 0; k < 4; k++) pc2n[4 * pc[c] + k] = pn[c2n[4 * c + k]];

  o.nodes = op_decl_set(NN, "nodes");
  o.edges = op_decl_set(NE, "edges");
  o.cells = op_decl_set(NC, "cells");
  o.pedge = op_decl_map(o.edges, o.nodes, 2, e2n, "pedge");
  o.pcell = op_decl_map(o.cells, o.nodes, 4, c2n, "pcell");
  o.x = op_decl_dat(o.nodes, 1, "double", x, "x");
  o.r = op_decl_dat(o.nodes, 1, "double", NULL, "r");
  o.w = op_decl_dat(o.edges, 1, "double", w, "w");
  o.c = op_decl_dat(o.cells, 1, "double", NULL, "c");

  p.nodes = op_decl_set(NN, "pnodes");
  p.edges = op_decl_set(NE, "pedges");
  p.cells = op_decl_set(NC, "pcells");
  p.pedge = op_decl_map(p.edges, p.nodes, 2, pe2n, "ppedge");
  p.pcell = op_decl_map(p.cells, p.nodes, 4, pc2n, "ppcell");
  p.x = op_decl_dat(p.nodes, 1, "double", px, "px");
  p.r = op_decl_dat(p.nodes, 1, "double", NULL, "pr");
  p.w = op_decl_dat(p.edges, 1, "double", pw, "pw");
  p.c = op_decl_dat(p.cells, 1, "double", NULL, "pc");

  op_renumber(p.pedge);
  CHECK_OK();

  /* Fetches right after renumbering: the declared values. */
  op_fetch_data(p.x, a);
  same(a, px, NN, "px after op_renumber");
  op_fetch_data(p.w, we);
  same(we, pw, NE, "pw after op_renumber");
  op_fetch_data_idx(p.x, a, 5, 9);
  same(a, px + 5, 5, "px[5..9] after op_renumber");

  /* A dat and a map declared after op_renumber, in the declared numbering. */
  {
    op_dat late = op_decl_dat(p.nodes, 1, "double", px, "late");
    op_map pe2 = op_decl_map(p.edges, p.nodes, 2, pe2n, "late_map");
    op_kernel kd = op_decl_kernel("void d(const double *a, const double *b, double *o) {\n"
                                  "  *o = *b - *a;\n}\n", "d");
    op_dat diff = op_decl_dat(p.edges, 1, "double", NULL, "diff");
    op_fetch_data(late, a);
    same(a, px, NN, "dat declared after op_renumber");
    PAR_LOOP(kd, "d", p.edges, op_arg_dat(late, 0, pe2, 1, "double", OP_READ),
             op_arg_dat(p.x, 1, p.pedge, 1, "double", OP_READ),
             op_arg_dat(diff, -1, OP_ID, 1, "double", OP_WRITE));
    op_fetch_data(diff, we);
    for (int e = 0; e < NE; e++) CHECK_DBL(we[e], px[pe2n[2 * e + 1]] - px[pe2n[2 * e]]);
  }

  {
    op_kernel kf = op_decl_kernel(flux_src, "flux");
    op_kernel ka = op_decl_kernel(avg_src, "cellavg");
    op_kernel ku = op_decl_kernel(upd_src, "upd");
    run(&o, kf, ka, ku, &rms_o, &mx_o);
    run(&p, kf, ka, ku, &rms_p, &mx_p);
  }
  same(&rms_p, &rms_o, 1, "rms");
  same(&mx_p, &mx_o, 1, "max"); /* a max of incremented values: to rounding, as they are */
  op_fetch_data(o.x, a);
  op_fetch_data(p.x, b);
  for (int n = 0; n < NN; n++) px[n] = b[pn[n]];
  same(px, a, NN, "x");
  op_fetch_data(o.c, ca);
  op_fetch_data(p.c, cb);
  for (int c = 0; c < NC; c++) pw[c] = cb[pc[c]];
  same(pw, ca, NC, "c");

  /* Text and binary files: the declared order, as a set that was never renumbered prints. */
  {
    op_set plain = op_decl_set(NN, "plain");
    op_dat ref = op_decl_dat(plain, 1, "double", b, "ref");
    char *t1, *t2;
    snprintf(path, sizeof path, "%s/p.txt", dir);
    op_print_dat_to_txtfile(p.x, path);
    t1 = test_read_file(path);
    snprintf(path, sizeof path, "%s/ref.txt", dir);
    op_print_dat_to_txtfile(ref, path);
    t2 = test_read_file(path);
    CHECK(t1 != NULL && t2 != NULL);
    CHECK_STR(t1, t2);
    free(t1);
    free(t2);
    snprintf(path, sizeof path, "%s/p.bin", dir);
    op_print_dat_to_binfile(p.x, path);
    {
      FILE *f = fopen(path, "rb");
      int hdr[2];
      CHECK(f != NULL);
      CHECK(fread(hdr, sizeof(int), 2, f) == 2);
      CHECK(fread(a, sizeof(double), NN, f) == NN);
      fclose(f);
      CHECK_INT(hdr[0], NN);
      for (int n = 0; n < NN; n++) CHECK_DBL(a[n], b[n]);
    }
  }

  /* After a loop: too late. */
  op_set_error_handler(OP_ERRORS_RETURN);
  op_renumber(o.pedge);
  CHECK_ERR(OP2_ERR_BAD_LOOP, "op_renumber", "'pedge'", "before the first op_par_loop");
  op_renumber(NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_renumber", "base map");
  op_set_error_handler(OP_ERRORS_ABORT);
  op_exit();
  return 0;
}
