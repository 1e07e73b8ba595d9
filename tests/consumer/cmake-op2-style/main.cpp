// OP2's C++ style, unchanged from what builds against OP2: op_seq.h, a kernel function from
// ring_flux.h, a constant declared by address, handle fields, op_printf. Takes the backend as
// argv[1]; silent on success, exit 1 with a message otherwise.
#include <cmath>
#include <cstdio>
#include <cstring>

// static: its symbol is C++'s mangled _ZL4gain, which op2 must still name 'gain'.
static double gain;

#include "op_seq.h"
#include "ring_flux.h"

static int fail(const char *what) {
  std::fprintf(stderr, "consumer_op2-style: %s\n", what);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) return fail("usage: consumer_op2-style BACKEND");
  char token[64];
  std::snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  char *args[2] = {argv[0], token};
  op_init(2, args, 0);

  const int n = 12;
  int *ring = (int *)op_malloc(2 * n * sizeof(int));
  double *v = (double *)op_malloc(n * sizeof(double));
  for (int e = 0; e < n; e++) {
    ring[2 * e] = e;
    ring[2 * e + 1] = (e + 1) % n;
    v[e] = (double)(e * e);
  }
  op_set nodes = op_decl_set(n, "nodes");
  op_set edges = op_decl_set(n, "edges");
  op_map pedge = op_decl_map(edges, nodes, 2, ring, "pedge");
  op_dat p_v = op_decl_dat(nodes, 1, "double", v, "p_v");
  op_dat p_f = op_decl_dat(nodes, 1, "double", (double *)NULL, "p_f");
  gain = 0.5;
  op_decl_const(1, "double", &gain);
  if (nodes->size != n || std::strcmp(p_v->name, "p_v") != 0 || pedge->dim != 2) return fail("handle fields");

  double total = 0.0;
  op_par_loop(ring_flux, "ring_flux", edges,
              op_arg_dat(p_v, 0, pedge, 1, "double", OP_READ),
              op_arg_dat(p_v, 1, pedge, 1, "double", OP_READ),
              op_arg_dat(p_f, 0, pedge, 1, "double", OP_INC),
              op_arg_dat(p_f, 1, pedge, 1, "double", OP_INC),
              op_arg_gbl(&total, 1, "double", OP_INC));

  double f[n], want_total = 0.0;
  op_fetch_data(p_f, f);
  for (int i = 0; i < n; i++) {
    int next = (i + 1) % n, prev = (i + n - 1) % n;
    double out = 0.5 * (v[next] - v[i]), in = 0.5 * (v[i] - v[prev]);
    want_total += std::fabs(out);
    if (std::fabs(f[i] - (out - in)) > 1e-12) return fail("flux values");
  }
  if (std::fabs(total - want_total) > 1e-12) return fail("global sum");
  op_free(ring);
  op_free(v);
  op_exit();
  return 0;
}
