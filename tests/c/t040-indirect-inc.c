/* Indirect INC: many elements hitting the same target (a star of 1000 edges into node 0 plus a
 * ring), two INC args into the same dat, INC onto non-zero values, a random mesh; integers are
 * exact and the doubles are exactly representable, so every backend must match exactly. */
#include "test.h"

#define NSPOKE 1000
#define NRING 10

static const char *src_star =
    "void star(const int *w, const double *wd, int *hub, int *rim, double *hubd, double *rimd)\n"
    "{\n"
    "  *hub += *w;\n"
    "  *rim += 1;\n"
    "  hubd[0] += *wd;\n"
    "  hubd[1] -= 0.25;\n"
    "  *rimd += 0.5;\n"
    "}\n";

static const char *src_ring =
    "void ring(int *a, int *b) { *a += 1; *b += 10; }\n";

static const char *src_rand =
    "void rnd(const int *w, long long *a, long long *b, double *ad)\n"
    "{\n"
    "  *a += *w;\n"
    "  *b += 1000000LL * *w;\n"
    "  *ad += 0.125 * *w;\n"
    "}\n";

int main(int argc, char **argv)
{
  /* Nodes: 0 is the hub, 1..NRING the rim. Spoke e goes hub -> 1 + e % NRING. */
  static int spoke2node[2 * NSPOKE];
  int ring2node[2 * NRING], w[NSPOKE], cnt[NRING + 1], i;
  double wd[NSPOKE], dd[2 * (NRING + 1)], rd[NRING + 1];
  op_set nodes, spokes, rings;
  op_map pspoke, pring;
  op_dat dw, dwd, dcnt, ddd, drd;
  op_kernel kstar, kring;

  test_init(argc, argv);
  for (i = 0; i < NSPOKE; i++) {
    spoke2node[2 * i] = 0;
    spoke2node[2 * i + 1] = 1 + i % NRING;
    w[i] = i;
    wd[i] = 0.5 * i;
  }
  for (i = 0; i < NRING; i++) {
    ring2node[2 * i] = 1 + i;
    ring2node[2 * i + 1] = 1 + (i + 1) % NRING;
  }
  nodes = op_decl_set(NRING + 1, "nodes");
  spokes = op_decl_set(NSPOKE, "spokes");
  rings = op_decl_set(NRING, "rings");
  pspoke = op_decl_map(spokes, nodes, 2, spoke2node, "pspoke");
  pring = op_decl_map(rings, nodes, 2, ring2node, "pring");
  dw = op_decl_dat(spokes, 1, "int", w, "w");
  dwd = op_decl_dat(spokes, 1, "double", wd, "wd");
  dcnt = op_decl_dat(nodes, 1, "int", NULL, "cnt");
  ddd = op_decl_dat(nodes, 2, "double", NULL, "dd");
  drd = op_decl_dat(nodes, 1, "double", NULL, "rd");
  kstar = op_decl_kernel(src_star, "star");
  kring = op_decl_kernel(src_ring, "ring");

  /* The hub (idx 0 of every spoke) gets the sum of w; each rim node is idx 1 of 100 spokes. */
  PAR_LOOP(kstar, "star", spokes, op_arg_dat(dw, -1, OP_ID, 1, "int", OP_READ),
           op_arg_dat(dwd, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(dcnt, 0, pspoke, 1, "int", OP_INC),
           op_arg_dat(dcnt, 1, pspoke, 1, "int", OP_INC),
           op_arg_dat(ddd, 0, pspoke, 2, "double", OP_INC),
           op_arg_dat(drd, 1, pspoke, 1, "double", OP_INC));
  CHECK_OK();
  op_fetch_data(dcnt, cnt);
  op_fetch_data(ddd, dd);
  op_fetch_data(drd, rd);
  CHECK_INT(cnt[0], NSPOKE * (NSPOKE - 1) / 2); /* 499500 */
  CHECK_DBL(dd[0], 0.5 * NSPOKE * (NSPOKE - 1) / 2); /* 249750 */
  CHECK_DBL(dd[1], -0.25 * NSPOKE);
  CHECK_DBL(rd[0], 0.0);
  for (i = 1; i <= NRING; i++) {
    CHECK_INT(cnt[i], NSPOKE / NRING);
    CHECK_DBL(dd[2 * i], 0.0);
    CHECK_DBL(dd[2 * i + 1], 0.0);
    CHECK_DBL(rd[i], 0.5 * NSPOKE / NRING);
  }

  /* Ring: each rim node is idx 0 of one edge (+1) and idx 1 of another (+10); INC adds onto the
   * existing values. */
  PAR_LOOP(kring, "ring", rings, op_arg_dat(dcnt, 0, pring, 1, "int", OP_INC),
           op_arg_dat(dcnt, 1, pring, 1, "int", OP_INC));
  op_fetch_data(dcnt, cnt);
  CHECK_INT(cnt[0], 499500);
  for (i = 1; i <= NRING; i++) CHECK_INT(cnt[i], NSPOKE / NRING + 11);

  /* Star again: everything doubles / accumulates. */
  PAR_LOOP(kstar, "star", spokes, op_arg_dat(dw, -1, OP_ID, 1, "int", OP_READ),
           op_arg_dat(dwd, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(dcnt, 0, pspoke, 1, "int", OP_INC),
           op_arg_dat(dcnt, 1, pspoke, 1, "int", OP_INC),
           op_arg_dat(ddd, 0, pspoke, 2, "double", OP_INC),
           op_arg_dat(drd, 1, pspoke, 1, "double", OP_INC));
  op_fetch_data(dcnt, cnt);
  op_fetch_data(ddd, dd);
  CHECK_INT(cnt[0], 2 * 499500);
  CHECK_DBL(dd[0], 2 * 249750.0);
  CHECK_DBL(dd[1], -500.0);
  for (i = 1; i <= NRING; i++) CHECK_INT(cnt[i], 2 * (NSPOKE / NRING) + 11);

  /* A random mesh: 20000 edges over 500 nodes, self-loops allowed, checked against plain C. */
  {
    enum { NN = 500, NE = 20000 };
    static int emap[2 * NE], wr[NE];
    static long long wa[NN], wb[NN], ga[NN], gb[NN];
    static double wad[NN], gad[NN];
    op_set n2 = op_decl_set(NN, "rnodes"), e2 = op_decl_set(NE, "redges");
    op_map m2;
    op_dat dwr, da, db, dad;
    op_kernel kr = op_decl_kernel(src_rand, "rnd");
    unsigned seed = 2024u;
    for (i = 0; i < NN; i++) {
      wa[i] = i;
      wb[i] = -i;
      wad[i] = 0.25 * i;
    }
    for (i = 0; i < 2 * NE; i++) {
      seed = seed * 1664525u + 1013904223u;
      emap[i] = (int)((seed >> 10) % NN);
    }
    for (i = 0; i < NE; i++) wr[i] = (i * 37) % 101 - 50;
    m2 = op_decl_map(e2, n2, 2, emap, "remap");
    dwr = op_decl_dat(e2, 1, "int", wr, "wr");
    da = op_decl_dat(n2, 1, "ll", wa, "ra");
    db = op_decl_dat(n2, 1, "ll", wb, "rb");
    dad = op_decl_dat(n2, 1, "double", wad, "rad");
    PAR_LOOP(kr, "rnd", e2, op_arg_dat(dwr, -1, OP_ID, 1, "int", OP_READ),
             op_arg_dat(da, 0, m2, 1, "ll", OP_INC), op_arg_dat(db, 1, m2, 1, "ll", OP_INC),
             op_arg_dat(dad, 1, m2, 1, "double", OP_INC));
    for (i = 0; i < NE; i++) {
      wa[emap[2 * i]] += wr[i];
      wb[emap[2 * i + 1]] += 1000000LL * wr[i];
      wad[emap[2 * i + 1]] += 0.125 * wr[i];
    }
    op_fetch_data(da, ga);
    op_fetch_data(db, gb);
    op_fetch_data(dad, gad);
    for (i = 0; i < NN; i++) {
      CHECK_INT(ga[i], wa[i]);
      CHECK_INT(gb[i], wb[i]);
      CHECK_DBL(gad[i], wad[i]);
    }
  }

  op_exit();
  return 0;
}
