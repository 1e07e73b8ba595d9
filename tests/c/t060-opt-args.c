/* Optional arguments: op_opt_arg_dat with opt = 0 (the kernel must not touch it; the pointer it
 * gets may be NULL) and opt = 1 (a normal argument), direct and indirect. */
#include "test.h"

static const char *src_opt =
    "void opt(const int *flag, double *o, int *hit, const double *src, int *nnull)\n"
    "{\n"
    "  if (*flag) { *o += *src; *hit += 1; }\n"
    "  if (o == 0) *nnull += 1; /* allowed for an absent argument */\n"
    "}\n";

static const char *src_optinc =
    "void optinc(const int *flag, int *n0, int *n1)\n"
    "{\n"
    "  if (*flag) { *n0 += 1; *n1 += 2; }\n"
    "}\n";

int main(int argc, char **argv)
{
  double ov[4] = {1, 2, 3, 4}, sv[4] = {10, 20, 30, 40}, out[4];
  int hits[4], cnt[3], flag, nnull, i;
  int e2n[8] = {0, 1, 1, 2, 2, 0, 0, 2};
  op_set s, nodes;
  op_map pe;
  op_dat o, h, src, c;
  op_kernel k, ki;

  test_init(argc, argv);
  s = op_decl_set(4, "edges");
  nodes = op_decl_set(3, "nodes");
  pe = op_decl_map(s, nodes, 2, e2n, "pe");
  o = op_decl_dat(s, 1, "double", ov, "o");
  h = op_decl_dat(s, 1, "int", NULL, "hit");
  src = op_decl_dat(s, 1, "double", sv, "src");
  c = op_decl_dat(nodes, 1, "int", NULL, "cnt");
  k = op_decl_kernel(src_opt, "opt");
  ki = op_decl_kernel(src_optinc, "optinc");

  /* opt = 0: absent; the kernel is told so by flag = 0 and leaves it alone. */
  flag = 0;
  nnull = 0;
  PAR_LOOP(k, "opt0", s, op_arg_gbl(&flag, 1, "int", OP_READ),
           op_opt_arg_dat(0, o, -1, OP_ID, 1, "double", OP_RW),
           op_arg_dat(h, -1, OP_ID, 1, "int", OP_RW),
           op_arg_dat(src, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&nnull, 1, "int", OP_INC));
  CHECK_OK();
  CHECK(nnull == 0 || nnull == 4); /* NULL for every element or for none */
  op_fetch_data(o, out);
  op_fetch_data(h, hits);
  for (i = 0; i < 4; i++) {
    CHECK_DBL(out[i], ov[i]);
    CHECK_INT(hits[i], 0);
  }

  /* opt = 1: present. */
  flag = 1;
  nnull = 0;
  PAR_LOOP(k, "opt1", s, op_arg_gbl(&flag, 1, "int", OP_READ),
           op_opt_arg_dat(1, o, -1, OP_ID, 1, "double", OP_RW),
           op_arg_dat(h, -1, OP_ID, 1, "int", OP_RW),
           op_arg_dat(src, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&nnull, 1, "int", OP_INC));
  CHECK_OK();
  CHECK_INT(nnull, 0);
  op_fetch_data(o, out);
  op_fetch_data(h, hits);
  for (i = 0; i < 4; i++) {
    CHECK_DBL(out[i], ov[i] + sv[i]);
    CHECK_INT(hits[i], 1);
  }

  /* Indirect INC: absent, then present, then one present and one absent. */
  flag = 0;
  PAR_LOOP(ki, "optinc00", s, op_arg_gbl(&flag, 1, "int", OP_READ),
           op_opt_arg_dat(0, c, 0, pe, 1, "int", OP_INC), op_opt_arg_dat(0, c, 1, pe, 1, "int", OP_INC));
  CHECK_OK();
  op_fetch_data(c, cnt);
  for (i = 0; i < 3; i++) CHECK_INT(cnt[i], 0);
  flag = 1;
  PAR_LOOP(ki, "optinc11", s, op_arg_gbl(&flag, 1, "int", OP_READ),
           op_opt_arg_dat(1, c, 0, pe, 1, "int", OP_INC), op_opt_arg_dat(1, c, 1, pe, 1, "int", OP_INC));
  op_fetch_data(c, cnt);
  CHECK_INT(cnt[0], 1 + 1 + 2);     /* idx0 of edges 0, 3; idx1 of edge 2 */
  CHECK_INT(cnt[1], 1 + 2);         /* idx0 of edge 1; idx1 of edge 0 */
  CHECK_INT(cnt[2], 1 + 2 + 2);     /* idx0 of edge 2; idx1 of edges 1, 3 */

  op_exit();
  return 0;
}
