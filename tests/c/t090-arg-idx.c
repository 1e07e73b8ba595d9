/* op_arg_idx: with OP_ID the kernel gets the element's index; with a map, map[e][idx]. The map
 * was declared from an array the caller freed. */
#include "test.h"

#define NE 500
#define NN 97

static const char *src_ids =
    "void ids(const int *e, const int *n0, const int *n2, int *out)\n"
    "{\n"
    "  out[0] = *e; out[1] = *n0; out[2] = *n2;\n"
    "}\n";

/* idx next to an indirect INC through the same map: the numbers seen must be the user's. */
static const char *src_inc =
    "void incid(const int *n1, const int *e, long long *acc)\n"
    "{\n"
    "  *acc += 1000LL * *n1 + *e;\n"
    "}\n";

int main(int argc, char **argv)
{
  int *m = (int *)malloc(3 * NE * sizeof(int)), i;
  static int keep[3 * NE], out[3 * NE];
  static long long acc[NN], want[NN];
  op_set edges, nodes;
  op_map pm;
  op_dat o, a;
  op_kernel kid, kinc;

  test_init(argc, argv);
  for (i = 0; i < 3 * NE; i++) keep[i] = m[i] = (i * 31 + 7) % NN;
  edges = op_decl_set(NE, "edges");
  nodes = op_decl_set(NN, "nodes");
  pm = op_decl_map(edges, nodes, 3, m, "pm");
  for (i = 0; i < 3 * NE; i++) m[i] = -1;
  free(m);
  o = op_decl_dat(edges, 3, "int", NULL, "o");
  a = op_decl_dat(nodes, 1, "ll", NULL, "acc");
  kid = op_decl_kernel(src_ids, "ids");
  kinc = op_decl_kernel(src_inc, "incid");

  PAR_LOOP(kid, "ids", edges, op_arg_idx(-1, OP_ID), op_arg_idx(0, pm), op_arg_idx(2, pm),
           op_arg_dat(o, -1, OP_ID, 3, "int", OP_WRITE));
  CHECK_OK();
  op_fetch_data(o, out);
  for (i = 0; i < NE; i++) {
    CHECK_INT(out[3 * i], i);
    CHECK_INT(out[3 * i + 1], keep[3 * i]);
    CHECK_INT(out[3 * i + 2], keep[3 * i + 2]);
  }

  PAR_LOOP(kinc, "incid", edges, op_arg_idx(1, pm), op_arg_idx(-1, OP_ID),
           op_arg_dat(a, 0, pm, 1, "ll", OP_INC));
  CHECK_OK();
  for (i = 0; i < NE; i++) want[keep[3 * i]] += 1000LL * keep[3 * i + 1] + i;
  op_fetch_data(a, acc);
  for (i = 0; i < NN; i++) CHECK_INT(acc[i], want[i]);

  op_exit();
  return 0;
}
