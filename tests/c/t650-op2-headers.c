/* OP2's headers: a C program written for OP2 (op_seq.h, op_par_loop with kernel functions,
 * the three-argument op_decl_const, handle fields, temporary dats) builds and runs unchanged.
 * Kernel headers are found on OP2_KERNEL_PATH (tests/c/op2-style) and compiled by op2 (the
 * JIT tier, on every backend); a kernel without a header, or with one op2 cannot compile,
 * runs through its address (host backends; devices refuse it, naming why). */
#include "test.h"

#include "op_seq.h"

double t650_factor = 2.5;
int t650_offsets[3] = {10, 20, 30};
double t650_undeclared = 0.5;

#include "op2-style/t650_scale.h"
#include "op2-style/t650_spread.h"
#include "op2-style/t650_stray.h"

/* No header of this name anywhere: called through its address. */
static inline void t650_no_header(const double *x, double *z) { z[0] = x[0] * x[0]; }

#define N 7
#define NE 7

int main(int argc, char **argv)
{
  setenv("OP2_KERNEL_PATH", "tests/c/op2-style", 1);
  const char *backend = test_init(argc, argv);
  int device = strcmp(backend, "opencl") == 0 || strcmp(backend, "cuda") == 0;

  /* ---- handle fields (OP2's op_set_core / op_map_core / op_dat_core) ---- */
  op_set nodes = op_decl_set(N, "nodes");
  op_set edges = op_decl_set(NE, "edges");
  CHECK_INT(nodes->size, N);
  CHECK_STR(nodes->name, "nodes");
  CHECK_INT(nodes->index, 0);
  CHECK_INT(edges->index, 1);
  CHECK_INT(edges->size, NE);
  int ring[2 * NE];
  for (int e = 0; e < NE; e++) {
    ring[2 * e] = e;
    ring[2 * e + 1] = (e + 1) % N;
  }
  op_map pedge = op_decl_map(edges, nodes, 2, ring, "pedge");
  CHECK(pedge->from == edges);
  CHECK(pedge->to == nodes);
  CHECK_INT(pedge->dim, 2);
  CHECK_STR(pedge->name, "pedge");
  CHECK(pedge->map == NULL);
  double xs[N], ws[NE];
  for (int i = 0; i < N; i++) xs[i] = i + 1;
  for (int e = 0; e < NE; e++) ws[e] = 0.25 * (e + 1);
  op_dat x = op_decl_dat(nodes, 1, "double", xs, "x");
  op_dat y = op_decl_dat(nodes, 2, "double", NULL, "y");
  op_dat w = op_decl_dat(edges, 1, "double", ws, "w");
  CHECK(x->set == nodes);
  CHECK_INT(y->dim, 2);
  CHECK_INT(y->size, 2 * (int)sizeof(double));
  CHECK_STR(y->name, "y");
  CHECK_STR(y->type, "double");
  CHECK(y->data == NULL);

  /* ---- OP2's three-argument op_decl_const: named after the variable at the address ---- */
  op_decl_const(1, "double", &t650_factor);
  op_decl_const(3, "int", t650_offsets);
  CHECK_OK();

  /* ---- JIT tier: direct loop with a constant, op_arg_idx and MAX ---- */
  op_par_loop(t650_scale, "t650_scale", nodes,
              op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
              op_arg_dat(y, -1, OP_ID, 2, "double", OP_WRITE),
              op_arg_idx(-1, OP_ID));
  double got[2 * N];
  op_fetch_data(y, got);
  for (int i = 0; i < N; i++) {
    CHECK_DBL(got[2 * i], 2.5 * (i + 1) + t650_offsets[i % 3]);
    CHECK_DBL(got[2 * i + 1], (i + 1) > 2 ? (double)(i + 1) : 2.0);
  }

  /* ---- JIT tier: indirect OP_INC and a global reduction ---- */
  op_dat a = op_decl_dat(nodes, 1, "double", NULL, "a");
  int count = 0;
  op_par_loop(t650_spread, "t650_spread", edges,
              op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ),
              op_arg_dat(a, 0, pedge, 1, "double", OP_INC),
              op_arg_dat(a, 1, pedge, 1, "double", OP_INC),
              op_arg_gbl(&count, 1, "int", OP_INC));
  CHECK_INT(count, NE);
  double as[N];
  op_fetch_data(a, as);
  for (int n = 0; n < N; n++) {
    /* node n is the first node of edge n and the second of edge n-1 (mod N) */
    double want = ws[n] + ws[(n + NE - 1) % NE];
    CHECK_DBL(as[n], want);
  }

  /* ---- a temporary dat, and op2's own loop form still at hand ---- */
  op_dat z = op_decl_dat_temp(nodes, 1, "double", (double *)NULL, "z");
  CHECK(z != NULL);
  CHECK_STR(z->name, "z");

  /* ---- call-per-element tier: no header; a header op2 cannot compile ---- */
  op_set_error_handler(OP_ERRORS_RETURN);
  op_par_loop(t650_no_header, "t650_no_header", nodes,
              op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
              op_arg_dat(z, -1, OP_ID, 1, "double", OP_WRITE));
  if (device) {
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop 't650_no_header'", "no header 't650_no_header.h'");
  } else {
    CHECK_OK();
    double zs[N];
    op_fetch_data(z, zs);
    for (int i = 0; i < N; i++) CHECK_DBL(zs[i], (double)((i + 1) * (i + 1)));
  }
  op_par_loop(t650_stray, "t650_stray", nodes, op_arg_dat(z, -1, OP_ID, 1, "double", OP_RW));
  if (device) {
    CHECK(op_last_error_code() == OP2_ERR_COMPILE);
  } else {
    CHECK_OK();
    double zs[N];
    op_fetch_data(z, zs);
    for (int i = 0; i < N; i++) CHECK_DBL(zs[i], (double)((i + 1) * (i + 1)) + 0.5);
  }
  op_set_error_handler(OP_ERRORS_ABORT);
  CHECK_INT(op_free_dat_temp(z), 1);

  /* ---- op_malloc: aligned, released by op_free or free ---- */
  double *m = (double *)op_malloc(100 * sizeof(double));
  CHECK(m != NULL);
  CHECK(((size_t)m % 64) == 0);
  m[99] = 1.0;
  op_free(m);
  free(op_malloc(0));

  op_exit();
  return 0;
}
