/* op_decl_map_long (OP2's, with idx_g_t = long long entries): a map declared from 64-bit
 * entries gives the same loop results as the same map through op_decl_map (a gather and an
 * indirect increment); an entry outside the target set is OP2_ERR_MAP_OUT_OF_RANGE with the
 * message op_decl_map gives (map, entry, element, position, value), also one beyond what a
 * 32-bit entry holds (never wrapped into range); NULL entries, dim 0 and handles are checked. */
#include "test.h"

#define NN 6
#define NE 5

static const char *k_gather =
    "void gather(const double *a, const double *b, double *s) { s[0] = a[0] + 10.0 * b[0]; }\n";
static const char *k_count = "void count(double *a, double *b) { a[0] += 1.0; b[0] += 2.0; }\n";

int main(int argc, char **argv)
{
  long long lmap[2 * NE];
  int imap[2 * NE], i;
  double x[NN], s[NE], c[NN], want[NN];
  for (i = 0; i < NN; i++) x[i] = 1.5 * i - 2.0;
  for (i = 0; i < NE; i++) {
    imap[2 * i] = i;
    imap[2 * i + 1] = (3 * i + 1) % NN;
    lmap[2 * i] = imap[2 * i];
    lmap[2 * i + 1] = imap[2 * i + 1];
  }
  test_init(argc, argv);
  op_set nodes = op_decl_set(NN, "nodes");
  op_set edges = op_decl_set(NE, "edges");
  op_map pl = op_decl_map_long(edges, nodes, 2, lmap, "pedge_long");
  op_map pi = op_decl_map(edges, nodes, 2, imap, "pedge");
  CHECK_OK();
  CHECK(pl != NULL && pi != NULL);
  op_dat px = op_decl_dat(nodes, 1, "double", x, "x");
  op_dat ps = op_decl_dat(edges, 1, "double", NULL, "s");
  op_dat pc = op_decl_dat(nodes, 1, "double", NULL, "c");
  op_kernel kg = op_decl_kernel(k_gather, "gather");
  op_kernel kc = op_decl_kernel(k_count, "count");

  PAR_LOOP(kg, "gather", edges, op_arg_dat(px, 0, pl, 1, "double", OP_READ),
           op_arg_dat(px, 1, pl, 1, "double", OP_READ), op_arg_dat(ps, -1, OP_ID, 1, "double", OP_WRITE));
  op_fetch_data(ps, s);
  for (i = 0; i < NE; i++) CHECK_DBL(s[i], x[imap[2 * i]] + 10.0 * x[imap[2 * i + 1]]);
  PAR_LOOP(kc, "count", edges, op_arg_dat(pc, 0, pl, 1, "double", OP_INC),
           op_arg_dat(pc, 1, pl, 1, "double", OP_INC));
  PAR_LOOP(kc, "count", edges, op_arg_dat(pc, 0, pi, 1, "double", OP_INC),
           op_arg_dat(pc, 1, pi, 1, "double", OP_INC));
  op_fetch_data(pc, c);
  for (i = 0; i < NN; i++) want[i] = 0.0;
  for (i = 0; i < NE; i++) {
    want[imap[2 * i]] += 2.0; /* once through each map */
    want[imap[2 * i + 1]] += 4.0;
  }
  for (i = 0; i < NN; i++) CHECK_DBL(c[i], want[i]);

  op_set_error_handler(OP_ERRORS_RETURN);
  lmap[7] = NN; /* element 3, position 1: one past the last node */
  CHECK(op_decl_map_long(edges, nodes, 2, lmap, "bad1") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map_long", "'bad1'", "entry 7 (element 3, position 1) is 6",
            "outside [0, 6) of set 'nodes'");
  imap[7] = NN; /* op_decl_map gives the same message */
  CHECK(op_decl_map(edges, nodes, 2, imap, "bad1") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map", "'bad1'", "entry 7 (element 3, position 1) is 6",
            "outside [0, 6) of set 'nodes'");
  lmap[7] = 4294967296LL + 1; /* 2^32 + 1: 1 if it were cut to 32 bits */
  CHECK(op_decl_map_long(edges, nodes, 2, lmap, "bad2") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map_long", "'bad2'", "is 4294967297", "outside [0, 6)");
  lmap[7] = 1;
  lmap[0] = -5000000000LL;
  CHECK(op_decl_map_long(edges, nodes, 2, lmap, "bad3") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map_long", "'bad3'", "entry 0 (element 0, position 0)",
            "is -5000000000");
  lmap[0] = 0;
  CHECK(op_decl_map_long(edges, nodes, 2, NULL, "nul") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_map_long", "'nul'", "imap is NULL");
  CHECK(op_decl_map_long(edges, nodes, 0, lmap, "dim0") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_map_long", "'dim0'", "dim 0");
  CHECK(op_decl_map_long(NULL, nodes, 2, lmap, "noset") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_map_long", "'noset'");
  op_set empty = op_decl_set(0, "empty");
  CHECK(op_decl_map_long(empty, nodes, 2, NULL, "pempty") != NULL); /* nothing to read */
  CHECK_OK();
  op_exit();
  return 0;
}
