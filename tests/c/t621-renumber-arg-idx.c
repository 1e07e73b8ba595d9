/* op_renumber and op_arg_idx: kernels see declared indices, not storage positions. A path of
 * nodes declared in a scrambled order is renumbered; op_arg_idx(-1, OP_ID) gives each element
 * its declared index and op_arg_idx(k, map) the declared target index map[e][k], in direct loops
 * and in a loop with indirect increments (coloured or blocked on devices). On opencl the indices
 * reach the device as maps of declared indices; the cuda backend does not carry the renumbering
 * to the device yet: there it is a named error. */
#include "test.h"

#define N 40

int main(int argc, char **argv)
{
  static int perm[N], e2n[2 * (N - 1)], id[N], got[2 * (N - 1)], self[N - 1], sums[N], want[N];
  unsigned long long s = 99;
  test_init(argc, argv);
  for (int i = 0; i < N; i++) perm[i] = i;
  for (int i = N - 1; i > 0; i--) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    int j = (int)((s >> 33) % (unsigned long long)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  /* edge e joins the nodes declared as perm[e] and perm[e + 1]: a path numbered at random */
  for (int e = 0; e < N - 1; e++) e2n[2 * e] = perm[e], e2n[2 * e + 1] = perm[e + 1];

  op_set nodes = op_decl_set(N, "nodes");
  op_set edges = op_decl_set(N - 1, "edges");
  op_map pedge = op_decl_map(edges, nodes, 2, e2n, "pedge");
  op_dat nid = op_decl_dat(nodes, 1, "int", NULL, "nid");
  op_dat eto = op_decl_dat(edges, 2, "int", NULL, "eto");
  op_dat eid = op_decl_dat(edges, 1, "int", NULL, "eid");
  op_dat nsum = op_decl_dat(nodes, 1, "int", NULL, "nsum");
  op_renumber(pedge);
  CHECK_OK();

  op_kernel k1 = op_decl_kernel("void who(const int *i, int *o) { *o = *i; }\n", "who");
  op_kernel k2 = op_decl_kernel("void ends(const int *e, const int *a, const int *b, int *t, int *s)\n"
                                "{ t[0] = *a; t[1] = *b; *s = *e; }\n", "ends");
  op_kernel k3 = op_decl_kernel("void addid(const int *e, const int *a, int *x, int *y)\n"
                                "{ *x += *e + 1000 * *a; *y += *e; }\n", "addid");
  if (strcmp(argv[1], "cuda") == 0) {
    op_set_error_handler(OP_ERRORS_RETURN);
    PAR_LOOP(k1, "who", nodes, op_arg_idx(-1, OP_ID), op_arg_dat(nid, -1, OP_ID, 1, "int", OP_WRITE));
    CHECK_ERR(OP2_ERR_BAD_LOOP, "op_par_loop 'who', arg 0", "op_renumber");
    op_exit();
    return 0;
  }
  PAR_LOOP(k1, "who", nodes, op_arg_idx(-1, OP_ID), op_arg_dat(nid, -1, OP_ID, 1, "int", OP_WRITE));
  PAR_LOOP(k2, "ends", edges, op_arg_idx(-1, OP_ID), op_arg_idx(0, pedge), op_arg_idx(1, pedge),
           op_arg_dat(eto, -1, OP_ID, 2, "int", OP_WRITE),
           op_arg_dat(eid, -1, OP_ID, 1, "int", OP_WRITE));
  op_fetch_data(nid, id);
  for (int i = 0; i < N; i++) CHECK_INT(id[i], i);
  op_fetch_data(eto, got);
  for (int k = 0; k < 2 * (N - 1); k++) CHECK_INT(got[k], e2n[k]);
  op_fetch_data(eid, self);
  for (int e = 0; e < N - 1; e++) CHECK_INT(self[e], e);
  /* each edge e adds e + 1000 * (its first node) to its first node and e to its second */
  PAR_LOOP(k3, "addid", edges, op_arg_idx(-1, OP_ID), op_arg_idx(0, pedge),
           op_arg_dat(nsum, 0, pedge, 1, "int", OP_INC), op_arg_dat(nsum, 1, pedge, 1, "int", OP_INC));
  for (int e = 0; e < N - 1; e++) {
    want[e2n[2 * e]] += e + 1000 * e2n[2 * e];
    want[e2n[2 * e + 1]] += e;
  }
  op_fetch_data(nsum, sums);
  for (int i = 0; i < N; i++) CHECK_INT(sums[i], want[i]);
  op_exit();
  return 0;
}
