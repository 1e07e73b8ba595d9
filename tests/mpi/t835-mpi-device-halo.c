/* Device halo exchanges move only halo rows: a chain of N nodes and N-1 edges (edge e joins
 * nodes e and e+1), partitioned BLOCK (each process keeps its declared block, the last one edge
 * short), so every process exports one node row to each neighbour and imports one from it, and
 * the exec halo of edges is the edge before the block (from the process before). Each
 * iteration writes u (nodes, dim 2) and w (edges) on the device; reading u through the map
 * exchanges it (one row of 16 bytes down per neighbour, one up), and an indirect increment
 * reading w directly exchanges w through the exec halo (8 bytes down to the next process, 8 up
 * from the previous one). On a device, op_dat_transfers must count exactly those rows (not the
 * whole dats), in both device layouts (AoS, then OP_AUTO_SOA=1); results equal the
 * hand-computed chain on every backend. Under MPI, op_diagnostic_output says whether the MPI
 * library is CUDA-aware (MPIX_Query_cuda_support, probed at run time) and how device halos go.
 * OP2_MPI_CUDA_AWARE: a value it does not take is OP2_ERR_BAD_CONFIG at op_init; with 1, opencl
 * still stages through host memory (same counts: its buffers cannot go to MPI); cuda under an
 * MPI that says it is not CUDA-aware refuses it at op_init, and where the exchange goes device
 * to device, nothing of u or w passes through host memory (counts 0).
 * mpi-n: 1 2 3 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

static const char *k_u = "void uset(const double *x, const double *s, double *u) { u[0] = *s * *x; u[1] = *s * *x * *x; }\n";
static const char *k_w = "void wset(const double *a, const double *b, double *w) { *w = a[0] - 2.0 * b[0] + 0.25 * a[1] - b[1]; }\n";
static const char *k_r = "void racc(const double *w, double *r0, double *r1) { *r0 += *w; *r1 -= 0.5 * *w; }\n";

#define N 24
#define ITERS 3

static void run(const char *backend, int rank, int p, int soa, const char *aware)
{
  int i, it, e;
  int lo = block_lo(N, rank, p), nn = block_n(N, rank, p);
  int ne = rank == p - 1 ? nn - 1 : nn; /* edges [lo, lo + ne) */
  int *map = (int *)malloc(sizeof(int) * 2 * (size_t)(ne + 1));
  double *x = (double *)malloc(sizeof(double) * (size_t)(nn + 1));
  double want[N] = {0}, got[N];
  int device = !strcmp(backend, "opencl") || !strcmp(backend, "cuda");
  int nbrs = (rank > 0) + (rank < p - 1);
  for (e = 0; e < ne; e++) {
    map[2 * e] = lo + e;
    map[2 * e + 1] = lo + e + 1;
  }
  for (i = 0; i < nn; i++) x[i] = (double)(lo + i) + 0.5;
  op_set nodes = op_decl_set(nn, "nodes");
  op_set edges = op_decl_set(ne, "edges");
  op_map en = op_decl_map(edges, nodes, 2, map, "en");
  op_dat xd = op_decl_dat(nodes, 1, "double", x, "x");
  op_dat u = op_decl_dat(nodes, 2, "double", NULL, "u");
  op_dat w = op_decl_dat(edges, 1, "double", NULL, "w");
  op_dat r = op_decl_dat(nodes, 1, "double", NULL, "r");
  op_partition("BLOCK", NULL, edges, en, NULL);
  op_kernel ku = op_decl_kernel(k_u, "uset"), kw = op_decl_kernel(k_w, "wset"), kr = op_decl_kernel(k_r, "racc");
  for (it = 0; it < ITERS; it++) {
    double s = (double)(it + 1);
    PAR_LOOP(ku, "uset", nodes, op_arg_dat(xd, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_READ),
             op_arg_dat(u, -1, OP_ID, 2, "double", OP_WRITE));
    PAR_LOOP(kw, "wset", edges, op_arg_dat(u, 0, en, 2, "double", OP_READ), op_arg_dat(u, 1, en, 2, "double", OP_READ),
             op_arg_dat(w, -1, OP_ID, 1, "double", OP_WRITE));
    PAR_LOOP(kr, "racc", edges, op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ), op_arg_dat(r, 0, en, 1, "double", OP_INC),
             op_arg_dat(r, 1, en, 1, "double", OP_INC));
    for (e = 0; e < N - 1; e++) {
      double xa = (double)e + 0.5, xb = (double)(e + 1) + 0.5;
      double we = s * xa - 2.0 * s * xb + 0.25 * s * xa * xa - s * xb * xb;
      want[e] += we;
      want[e + 1] -= 0.5 * we;
    }
  }
  long long up, down;
  /* diagnostics report the MPI library's CUDA-awareness (probed at run time) under MPI, and
   * how device halos go */
  char *diag = test_stdout_of(op_diagnostic_output);
  int direct = strstr(diag, "device halo exchanges: packed on the device and given to MPI in device memory") != NULL;
  if (p > 1 && !strstr(diag, "CUDA-aware MPI: ")) test_fail_(__FILE__, __LINE__, "diagnostics without 'CUDA-aware MPI: ': %s", diag);
  if (p > 1 && device && !direct && !strstr(diag, "device halo exchanges: export and import rows staged through host memory ("))
    test_fail_(__FILE__, __LINE__, "diagnostics without the device halo exchange line: %s", diag);
  if (p > 1 && !strcmp(backend, "opencl") && !strstr(diag, "(opencl buffers cannot go to MPI)"))
    test_fail_(__FILE__, __LINE__, "OP2_MPI_CUDA_AWARE=%s on opencl: diagnostics without the reason: %s", aware, diag);
  if (direct && strcmp(backend, "cuda")) test_fail_(__FILE__, __LINE__, "%s: device buffers to MPI: %s", backend, diag);
  free(diag);
  if (direct) { /* device to device: nothing of u or w through host memory */
    op_dat_transfers(u, &up, &down);
    if (up || down) test_fail_(__FILE__, __LINE__, "device-direct halos: u moved %lld up, %lld down", up, down);
    op_dat_transfers(w, &up, &down);
    if (up || down) test_fail_(__FILE__, __LINE__, "device-direct halos: w moved %lld up, %lld down", up, down);
    device = 0;
  }
  /* u: written on the device every iteration (never uploaded); each read through the map
   * exchanges one row per neighbour each way. */
  op_dat_transfers(u, &up, &down);
  if (device) {
    if (up != (long long)ITERS * nbrs * 16 || down != (long long)ITERS * nbrs * 16)
      test_fail_(__FILE__, __LINE__, "soa=%d rank %d of %d: u moved %lld up, %lld down; want %d each (%d rows of 16 bytes)",
                 soa, rank, p, up, down, ITERS * nbrs * 16, ITERS * nbrs);
  } else if (!direct) {
    CHECK(up == 0 && down == 0);
  }
  /* w: its exec-halo row comes from the process before (up) and goes to the next one (down). */
  op_dat_transfers(w, &up, &down);
  if (device) {
    long long wup = (long long)ITERS * 8 * (rank > 0), wdown = (long long)ITERS * 8 * (rank < p - 1);
    if (up != wup || down != wdown)
      test_fail_(__FILE__, __LINE__, "soa=%d rank %d of %d: w moved %lld up, %lld down; want %lld, %lld", soa, rank, p,
                 up, down, wup, wdown);
  }
  op_fetch_data_idx(r, got, 0, N - 1);
  for (i = 0; i < N; i++) CHECK_NEAR(got[i], want[i], 1e-12 * (fabs(want[i]) + 1.0));
  /* u on the host after the partial downloads: the last iteration's values everywhere */
  double ug[2 * N];
  op_fetch_data_idx(u, ug, 0, N - 1);
  for (i = 0; i < N; i++) {
    CHECK_DBL(ug[2 * i], ITERS * ((double)i + 0.5));
    CHECK_DBL(ug[2 * i + 1], ITERS * ((double)i + 0.5) * ((double)i + 0.5));
  }
  free(map);
  free(x);
}

int main(int argc, char **argv)
{
  int rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  test_init(argc, argv);
  run(argv[1], rank, p, 0, "auto");
  op_exit();
  setenv("OP_AUTO_SOA", "1", 1);
  test_init(argc, argv);
  run(argv[1], rank, p, 1, "auto");
  op_exit();
  unsetenv("OP_AUTO_SOA");

  char token[64];
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  op_set_error_handler(OP_ERRORS_RETURN);
  test_init_tokens(argv[0], token, "OP2_MPI_CUDA_AWARE=yes", (const char *)NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_init", "OP2_MPI_CUDA_AWARE='yes'", "auto");
  test_init_tokens(argv[0], token, "OP2_MPI_CUDA_AWARE=1", (const char *)NULL);
  if (op_last_error_code() == OP2_ERR_BAD_CONFIG) {
    /* only cuda, only where the MPI says it is not CUDA-aware */
    if (strcmp(argv[1], "cuda")) test_fail_(__FILE__, __LINE__, "OP2_MPI_CUDA_AWARE=1 refused on %s", argv[1]);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_init", "OP2_MPI_CUDA_AWARE=1", "not CUDA-aware");
  } else {
    CHECK_OK();
    run(argv[1], rank, p, 0, "1");
    op_exit();
  }
  MPI_Finalize();
  return 0;
}
