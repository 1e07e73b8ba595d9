/* Results must not depend on the number of threads: an indirect INC of inexact doubles on a
 * random mesh with many conflicts, a global sum and a MAX with its location, run with 1, 2 and
 * 3 threads (and a small block size, so there are many blocks and colours), must agree bit for
 * bit. On backends without threads this still checks that repeated sessions agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op2.h"

#define NNODES 3000
#define NEDGES 20000

static const char *src =
    "void scatter(const double *w, double *a, double *b, double *sum, double *mx, int *at, const int *e) {\n"
    "  a[0] += w[0] * 0.1;  b[0] -= w[0] / 3.0;  a[1] += w[0] * w[0];\n"
    "  *sum += w[0] / 7.0;\n"
    "  if (w[0] > *mx) { *mx = w[0]; *at = *e; }\n"
    "}\n";

struct result {
  double node[2 * NNODES];
  double sum, mx;
  int at;
};

static void run(const char *backend, int threads, const int *emap, const double *w, struct result *r) {
  char b[64], t[64], p[32];
  snprintf(b, sizeof b, "OP2_BACKEND=%s", backend);
  snprintf(t, sizeof t, "OP2_NUM_THREADS=%d", threads);
  snprintf(p, sizeof p, "OP_PART_SIZE=%d", 64);
  /* cuda's default increments (atomicAdd) land in an order that varies from launch to launch,
     so there the bit-for-bit promise is OP2_INC=colour's. */
  char inc[] = "OP2_INC=colour";
  char *argv[] = {"t150", b, t, p, inc, NULL};
  op_init(strcmp(backend, "cuda") == 0 ? 5 : 4, argv, 0);
  op_set nodes = op_decl_set(NNODES, "nodes");
  op_set edges = op_decl_set(NEDGES, "edges");
  op_map pedge = op_decl_map(edges, nodes, 2, emap, "pedge");
  op_dat dw = op_decl_dat(edges, 1, "double", w, "w");
  op_dat dn = op_decl_dat(nodes, 2, "double", NULL, "n");
  op_kernel k = op_decl_kernel(src, "scatter");
  r->sum = 0.25;
  r->mx = -1.0;
  r->at = -7;
  for (int rep = 0; rep < 3; rep++)
    OP_PAR_LOOP(k, "scatter", edges, op_arg_dat(dw, -1, OP_ID, 1, "double", OP_READ),
                op_arg_dat(dn, 0, pedge, 2, "double", OP_INC), op_arg_dat(dn, 1, pedge, 2, "double", OP_INC),
                op_arg_gbl(&r->sum, 1, "double", OP_INC), op_arg_gbl(&r->mx, 1, "double", OP_MAX),
                op_arg_info(&r->at, 1, "int", 4), op_arg_idx(-1, OP_ID));
  op_fetch_data(dn, r->node);
  op_exit();
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  static int emap[2 * NEDGES];
  static double w[NEDGES];
  unsigned s = 12345;
  for (int e = 0; e < NEDGES; e++) {
    s = s * 1103515245u + 12345u;
    int a = (s >> 8) % NNODES;
    s = s * 1103515245u + 12345u;
    /* Half the edges hit a few hub nodes: many conflicts, many colours. */
    int b = (e % 2) ? (int)((s >> 8) % 8) : (int)((s >> 8) % NNODES);
    emap[2 * e] = a;
    emap[2 * e + 1] = b;
    s = s * 1103515245u + 12345u;
    w[e] = ((s >> 8) % 100000) / 997.0;
  }
  static struct result r1, r2, r3;
  run(argv[1], 1, emap, w, &r1);
  run(argv[1], 2, emap, w, &r2);
  run(argv[1], 3, emap, w, &r3);
  if (memcmp(&r1, &r2, sizeof r1) != 0 || memcmp(&r1, &r3, sizeof r1) != 0) {
    fprintf(stderr, "t150: results differ between 1, 2 and 3 threads (sum %.17g %.17g %.17g)\n", r1.sum, r2.sum, r3.sum);
    return 1;
  }
  /* And they are right: compare with a plain sequential evaluation (to rounding). */
  double node[2 * NNODES] = {0}, sum = 0.25, mx = -1.0;
  int at = -7;
  for (int rep = 0; rep < 3; rep++)
    for (int e = 0; e < NEDGES; e++) {
      node[2 * emap[2 * e]] += w[e] * 0.1;
      node[2 * emap[2 * e + 1]] -= w[e] / 3.0;
      node[2 * emap[2 * e] + 1] += w[e] * w[e];
      sum += w[e] / 7.0;
      if (w[e] > mx) { mx = w[e]; at = e; }
    }
  for (int i = 0; i < 2 * NNODES; i++) {
    double d = node[i] - r1.node[i];
    if (d < 0) d = -d;
    if (d > 1e-9 * (1 + (node[i] < 0 ? -node[i] : node[i]))) {
      fprintf(stderr, "t150: node value %d is %.17g, want %.17g\n", i, r1.node[i], node[i]);
      return 1;
    }
  }
  if (r1.mx != mx || r1.at != at || (r1.sum - sum) > 1e-9 * sum || (sum - r1.sum) > 1e-9 * sum) {
    fprintf(stderr, "t150: sum %.17g max %g at %d, want %.17g %g at %d\n", r1.sum, r1.mx, r1.at, sum, mx, at);
    return 1;
  }
  return 0;
}
