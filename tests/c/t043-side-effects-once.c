/* Issue 21, point 6: a kernel's side effects happen once per element on every backend, check
 * included (check used to run each kernel twice: the validation reference, then the checked
 * run, so OP2-Common's jac1 printed 420 kernel lines against OP2's 210). Kernels that printf
 * each element (a direct loop, an indirect-increment loop, a reduction): stdout, captured,
 * holds every element's line exactly once. With OP2_VALIDATE=1, asked for explicitly, each
 * loop also runs on the seq reference, so exactly twice (as the README says). */
#include "test.h"

#define N 40
#define E (N - 1)

static op_set nodes, edges;
static op_map pe;
static op_dat nid, eid, acc;
static op_kernel kd, ki, kr;
static double sum;

static void loops(void)
{
  double out[N];
  PAR_LOOP(kd, "direct", nodes, op_arg_dat(nid, -1, OP_ID, 1, "int", OP_READ));
  PAR_LOOP(ki, "indirect", edges, op_arg_dat(eid, -1, OP_ID, 1, "int", OP_READ),
           op_arg_dat(acc, 0, pe, 1, "double", OP_INC), op_arg_dat(acc, 1, pe, 1, "double", OP_INC));
  PAR_LOOP(kr, "reduce", nodes, op_arg_dat(nid, -1, OP_ID, 1, "int", OP_READ), op_arg_gbl(&sum, 1, "double", OP_INC));
  op_fetch_data(acc, out); /* device work done, its output flushed */
}

static void run(const char *backend, const char *validate, int times)
{
  static int nv[N], ev[E], e2n[2 * E];
  int seen[3][N], lines = 0, i, k;
  char token[64], *out, *line;
  for (i = 0; i < N; i++) nv[i] = i;
  for (i = 0; i < E; i++) ev[i] = i, e2n[2 * i] = i, e2n[2 * i + 1] = i + 1;
  memset(seen, 0, sizeof seen);
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens("t043", token, validate, (const char *)NULL);
  nodes = op_decl_set(N, "nodes");
  edges = op_decl_set(E, "edges");
  pe = op_decl_map(edges, nodes, 2, e2n, "pe");
  nid = op_decl_dat(nodes, 1, "int", nv, "nid");
  eid = op_decl_dat(edges, 1, "int", ev, "eid");
  acc = op_decl_dat(nodes, 1, "double", NULL, "acc");
  kd = op_decl_kernel("#include <stdio.h>\nvoid pd(const int *i) { printf(\"d %d\\n\", *i); }\n", "pd");
  ki = op_decl_kernel("#include <stdio.h>\n"
                      "void pi(const int *e, double *a, double *b) { printf(\"i %d\\n\", *e); *a += 1.0; *b += 1.0; }\n",
                      "pi");
  kr = op_decl_kernel("#include <stdio.h>\nvoid pr(const int *i, double *s) { printf(\"r %d\\n\", *i); *s += *i; }\n",
                      "pr");
  sum = 0;
  out = test_stdout_of(loops);
  CHECK_OK();
  CHECK_DBL(sum, N * (N - 1) / 2.0);
  for (line = strtok(out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    char kind;
    int id;
    if (sscanf(line, "%c %d", &kind, &id) != 2 || id < 0 || id >= N) continue;
    k = kind == 'd' ? 0 : kind == 'i' ? 1 : kind == 'r' ? 2 : -1;
    if (k < 0) continue;
    seen[k][id]++;
    lines++;
  }
  free(out);
  for (i = 0; i < N; i++) {
    CHECK_INT(seen[0][i], times);
    CHECK_INT(seen[1][i], i < E ? times : 0);
    CHECK_INT(seen[2][i], times);
  }
  CHECK_INT(lines, times * (N + E + N));
  op_exit();
}

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  run(argv[1], "OP2_VALIDATE=0", 1);
  run(argv[1], "OP2_VALIDATE=1", 2);
  return 0;
}
