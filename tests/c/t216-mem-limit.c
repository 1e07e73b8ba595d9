/* Allocation sized by input is never an abort (issue 21, point 1). Under an address-space limit
 * (setrlimit(RLIMIT_AS) to what the process uses plus 768 MiB, set again before each step), on
 * the host backends:
 * - op_decl_dat of a plausible size the allocator refuses (2 GiB) is OP2_ERR_OUT_OF_MEMORY
 *   (was OP2_ERR_BAD_SIZE), an impossible one (2^63 bytes) OP2_ERR_BAD_SIZE;
 * - op_decl_map copying 1 GiB of entries is OP2_ERR_OUT_OF_MEMORY (was an abort in to_vec);
 * - OP2_LOOP_PACK naming a sparse 1 TiB file is OP2_ERR_OUT_OF_MEMORY from op_init (was an
 *   abort: the buffer's capacity came from st_size);
 * - an indirect OP_INC loop into a 512 MiB dat whose colouring scratch (1 GiB) cannot be had:
 *   OP2_ERR_OUT_OF_MEMORY on threads (was an abort) and under OP2_VALIDATE=1 (the reference
 *   copy); seq and check (one run, no copy of an INC dat) need neither and run it;
 * - op_renumber of a 2^25-node mesh whose scratch cannot be had: OP2_ERR_OUT_OF_MEMORY (was an
 *   abort; all copies are now made before anything is reordered);
 * - HDF5: a file op2 wrote reads back; a dataset declaring INT_MAX x 16 doubles that the file
 *   never stores is OP2_ERR_FILE_FORMAT before anything is allocated (was an abort in vec!);
 * and after all that a normal loop and a CG solve give the right values. Under AddressSanitizer
 * (no RLIMIT_AS with its shadow memory) and on opencl (a device backend) there is no limit:
 * only the HDF5, loop and solve checks run, which need none. The crafted HDF5 file is written
 * through the HDF5 library libop2 links, found with dlsym (skipped if libop2 has no HDF5). */
#define _GNU_SOURCE
#include "test.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define HEADROOM (768ull << 20)
#define BIGMAP_FROM (1 << 25) /* x dim 8 ints = 1 GiB */
#define LOOP_TARGETS (128 << 20) /* ints: a 512 MiB dat, 1 GiB of colouring words */
#define LOOP_ELEMS 20000

static const char *src_inc = "void inc(int *t) { *t += 1; }\n";
static const char *src_scale = "void scale(const double *a, double *b) { b[0] = 2.0 * a[0] + a[1]; }\n";
static const char *src_edge = "void edge(const double *x0, const double *x1, double *s0, double *s1)\n"
                              "{ *s0 += x1[0]; *s1 += x0[0]; }\n";
static const char *src_asm = "void assemble(double *A) { A[0] = 1.5; A[1] = -1.0; A[2] = -1.0; A[3] = 1.5; }\n";

#define NN 40

/* Limits this process's address space to what it uses now plus HEADROOM (set again before each
 * step, so that what op_init or earlier steps mapped, thread stacks and malloc arenas included,
 * does not eat into the step's room). */
static void limit_from_here(void)
{
  CHECK(test_vm_bytes() > 0);
  CHECK(test_limit_address_space(HEADROOM, NULL) == 0);
}

/* A small mesh: NN nodes on a line, NN-1 edges; x, a direct and an indirect loop, a matrix. */
typedef struct {
  op_set nodes, edges;
  op_map pedge;
  op_dat x, y, s;
} mesh_t;

static int edge_nodes[2 * (NN - 1)];

static mesh_t small_mesh(void)
{
  mesh_t m;
  double x[2 * NN];
  int i;
  for (i = 0; i < NN - 1; i++) edge_nodes[2 * i] = i, edge_nodes[2 * i + 1] = i + 1;
  for (i = 0; i < NN; i++) x[2 * i] = i, x[2 * i + 1] = 0.5;
  m.nodes = op_decl_set(NN, "nodes");
  m.edges = op_decl_set(NN - 1, "edges");
  m.pedge = op_decl_map(m.edges, m.nodes, 2, edge_nodes, "pedge");
  m.x = op_decl_dat(m.nodes, 2, "double", x, "p_x");
  m.y = op_decl_dat(m.nodes, 1, "double", NULL, "p_y");
  m.s = op_decl_dat(m.nodes, 1, "double", NULL, "p_s");
  return m;
}

/* Direct and indirect loops on the mesh, with their values checked. */
static void loops(mesh_t *m)
{
  double y[NN], s[NN];
  int i;
  op_kernel ks = op_decl_kernel(src_scale, "scale"), ke = op_decl_kernel(src_edge, "edge");
  PAR_LOOP(ks, "scale", m->nodes, op_arg_dat(m->x, -1, OP_ID, 2, "double", OP_READ),
           op_arg_dat(m->y, -1, OP_ID, 1, "double", OP_WRITE));
  PAR_LOOP(ke, "edge", m->edges, op_arg_dat(m->x, 0, m->pedge, 2, "double", OP_READ),
           op_arg_dat(m->x, 1, m->pedge, 2, "double", OP_READ), op_arg_dat(m->s, 0, m->pedge, 1, "double", OP_INC),
           op_arg_dat(m->s, 1, m->pedge, 1, "double", OP_INC));
  CHECK_OK();
  op_fetch_data(m->y, y);
  op_fetch_data(m->s, s);
  for (i = 0; i < NN; i++) {
    CHECK_DBL(y[i], 2.0 * i + 0.5);
    /* node i gets its neighbours' x: (i-1) + (i+1), or one of them at the ends */
    CHECK_DBL(s[i], (i > 0 ? i - 1 : 0) + (i < NN - 1 ? i + 1 : 0));
  }
}

/* Element matrices [[1.5, -1], [-1, 1.5]] on the edges (SPD); b = A x*, CG gives x* back. */
static void solve(mesh_t *m)
{
  double xs[NN], got[NN];
  int i, its;
  op_sparsity sp = op_decl_sparsity(m->pedge, m->pedge, "sp");
  op_mat A = op_decl_mat(sp, 1, 1, "double", "A");
  op_dat dxs, db, dx;
  op_kernel ka = op_decl_kernel(src_asm, "assemble");
  for (i = 0; i < NN; i++) xs[i] = sin(0.3 * i) + 0.5;
  dxs = op_decl_dat(m->nodes, 1, "double", xs, "xs");
  db = op_decl_dat(m->nodes, 1, "double", NULL, "b");
  dx = op_decl_dat(m->nodes, 1, "double", NULL, "xsol");
  PAR_LOOP(ka, "assemble", m->edges, op_arg_mat(A, -2, m->pedge, -2, m->pedge, "double", OP_INC));
  op_mat_mult(A, dxs, db);
  its = op_solve(A, db, dx, "-ksp_type cg -pc_type jacobi -ksp_rtol 1e-12");
  CHECK_OK();
  CHECK(its > 0 && its <= NN + 5);
  op_fetch_data(dx, got);
  for (i = 0; i < NN; i++) CHECK_NEAR(got[i], xs[i], 1e-9);
}

/* The HDF5 library's C API, borrowed from the libhdf5 that libop2 links (1.10+: hid_t is 64-bit). */
typedef int64_t hid;
typedef unsigned long long hsz;

static int craft_huge_h5(const char *path)
{
  int (*h5open)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "H5open");
  hid (*fcreate)(const char *, unsigned, hid, hid) = (hid(*)(const char *, unsigned, hid, hid))dlsym(RTLD_DEFAULT, "H5Fcreate");
  hid (*screate)(int, const hsz *, const hsz *) = (hid(*)(int, const hsz *, const hsz *))dlsym(RTLD_DEFAULT, "H5Screate_simple");
  hid (*dcreate)(hid, const char *, hid, hid, hid, hid, hid) =
      (hid(*)(hid, const char *, hid, hid, hid, hid, hid))dlsym(RTLD_DEFAULT, "H5Dcreate2");
  int (*dwrite)(hid, hid, hid, hid, hid, const void *) = (int (*)(hid, hid, hid, hid, hid, const void *))dlsym(RTLD_DEFAULT, "H5Dwrite");
  int (*dclose)(hid) = (int (*)(hid))dlsym(RTLD_DEFAULT, "H5Dclose");
  int (*sclose)(hid) = (int (*)(hid))dlsym(RTLD_DEFAULT, "H5Sclose");
  int (*fclose_)(hid) = (int (*)(hid))dlsym(RTLD_DEFAULT, "H5Fclose");
  hid *native_int = (hid *)dlsym(RTLD_DEFAULT, "H5T_NATIVE_INT_g");
  hid *native_double = (hid *)dlsym(RTLD_DEFAULT, "H5T_NATIVE_DOUBLE_g");
  hsz one = 1, big[2] = {2147483647ull, 16};
  int n = 2147483647;
  hid f, s, d;
  if (!h5open || !fcreate || !screate || !dcreate || !dwrite || !dclose || !sclose || !fclose_ || !native_int ||
      !native_double)
    return 0;
  CHECK(h5open() >= 0);
  f = fcreate(path, 2u /* H5F_ACC_TRUNC */, 0, 0);
  CHECK(f >= 0);
  s = screate(1, &one, NULL);
  d = dcreate(f, "huge", *native_int, s, 0, 0, 0);
  CHECK(d >= 0 && dwrite(d, *native_int, 0, 0, 0, &n) >= 0);
  dclose(d);
  sclose(s);
  /* [INT_MAX][16] doubles, never written: the file stays a few KiB */
  s = screate(2, big, NULL);
  d = dcreate(f, "p_huge", *native_double, s, 0, 0, 0);
  CHECK(d >= 0);
  dclose(d);
  sclose(s);
  CHECK(fclose_(f) >= 0);
  return 1;
}

int main(int argc, char **argv)
{
  const char *backend;
  char dir[] = "/tmp/op2-t216-XXXXXX", h5[256], huge_h5[256], pack[256], tok_pack[300], tok_backend[64];
  const char *v = getenv("OP2_VALIDATE");
  int validating = v != NULL && strcmp(v, "1") == 0, limited, crafted, fd;
  int *zeros = NULL;
  mesh_t m;

  backend = test_init(argc, argv);
  limited = !UNDER_ASAN && strcmp(backend, "opencl") != 0;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(h5, sizeof h5, "%s/mesh.h5", dir);
  snprintf(huge_h5, sizeof huge_h5, "%s/huge.h5", dir);
  snprintf(pack, sizeof pack, "%s/sparse.pack", dir);

  /* Before the limit: the mesh, its loops (compiled into the disk cache), a solve, a file. */
  m = small_mesh();
  loops(&m);
  solve(&m);
  op_dump_to_hdf5(h5);
  {
    op_set one = op_decl_set(LOOP_ELEMS, "one"), few = op_decl_set(LOOP_ELEMS * 2, "few");
    static int to[LOOP_ELEMS];
    int i;
    for (i = 0; i < LOOP_ELEMS; i++) to[i] = 2 * i;
    op_map p = op_decl_map(one, few, 1, to, "pone");
    op_dat t = op_decl_dat(few, 1, "int", NULL, "t");
    PAR_LOOP(op_decl_kernel(src_inc, "inc"), "inc_big", one, op_arg_dat(t, 0, p, 1, "int", OP_INC));
  }
  CHECK_OK();
  op_exit();
  crafted = craft_huge_h5(huge_h5);

  if (limited) {
    fd = open(pack, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, (off_t)1 << 40) == 0); /* 1 TiB, sparse */
    close(fd);
    /* a caller's 1 GiB of map entries (zero pages, never touched) */
    zeros = mmap(NULL, (size_t)BIGMAP_FROM * 8 * sizeof(int), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(zeros != MAP_FAILED);
    limit_from_here();

    /* A loop pack op2 would have to hold in memory: op_init refuses it, by name. */
    snprintf(tok_pack, sizeof tok_pack, "OP2_LOOP_PACK=%s", pack);
    snprintf(tok_backend, sizeof tok_backend, "OP2_BACKEND=%s", backend);
    test_init_tokens(argv[0], tok_backend, "OP2_ERROR_HANDLER=return", tok_pack, (const char *)NULL);
    CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "OP2_LOOP_PACK", pack, "cannot allocate 1099511627776 bytes");
  }

  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  CHECK_OK();

  /* Declarations. */
  {
    op_set huge = op_decl_set(1 << 30, "huge");
    CHECK(op_decl_dat(huge, 1 << 30, "double", NULL, "qhuge") == NULL);
    CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat", "'qhuge'");
    if (limited) {
      limit_from_here();
      op_set big = op_decl_set(1 << 26, "big"), from = op_decl_set(BIGMAP_FROM, "from");
      CHECK(op_decl_dat(big, 4, "double", NULL, "qbig") == NULL); /* 2 GiB */
      CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "op_decl_dat", "'qbig'", "cannot allocate 2147483648 bytes");
      CHECK(op_decl_map(from, big, 8, zeros, "bigmap") == NULL); /* 1 GiB */
      CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "op_decl_map", "'bigmap'", "cannot allocate 1073741824 bytes");
    }
  }

  /* HDF5: the file op2 wrote reads back; a dataset the file does not store is refused. */
  {
    op_set nodes = op_decl_set_hdf5(h5, "nodes"), edges = op_decl_set_hdf5(h5, "edges");
    op_map pe = op_decl_map_hdf5(edges, nodes, 2, h5, "pedge");
    op_dat x = op_decl_dat_hdf5(nodes, 2, "double", h5, "p_x");
    double xv[2 * NN];
    CHECK_OK();
    CHECK(pe != NULL);
    op_fetch_data(x, xv);
    CHECK_DBL(xv[2 * (NN - 1)], NN - 1);
    CHECK_DBL(xv[2 * (NN - 1) + 1], 0.5);
    if (crafted) {
      op_set huge = op_decl_set_hdf5(huge_h5, "huge");
      CHECK_OK();
      CHECK_INT(op_get_size(huge), 2147483647);
      CHECK(op_decl_dat_hdf5(huge, 16, "double", huge_h5, "p_huge") == NULL);
      CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "'p_huge'", "the file stores 0 bytes of it");
    }
  }

  /* A loop whose colouring scratch cannot be allocated (threads), or whose validation copy
   * cannot (OP2_VALIDATE=1); seq and check run it. */
  if (limited) {
    op_set one = op_decl_set(LOOP_ELEMS, "one"), targets = op_decl_set(LOOP_TARGETS, "targets");
    static int to[LOOP_ELEMS];
    int i, out[8];
    op_map p;
    op_dat t;
    for (i = 0; i < LOOP_ELEMS; i++) to[i] = (int)(((long long)i * 601) % LOOP_TARGETS);
    p = op_decl_map(one, targets, 1, to, "pone");
    limit_from_here();
    t = op_decl_dat_temp_char(targets, 1, "int", 4, "tbig"); /* 512 MiB */
    CHECK_OK();
    PAR_LOOP(op_decl_kernel(src_inc, "inc"), "inc_big", one, op_arg_dat(t, 0, p, 1, "int", OP_INC));
    /* Under OP2_LAZY=1 the loop runs (and fails) here; its error names it. */
    if (getenv("OP2_LAZY") != NULL) op_flush();
    if ((strcmp(backend, "seq") == 0 || strcmp(backend, "check") == 0) && !validating) {
      /* check runs the kernel once, from the data itself: no copy of the 512 MiB dat */
      CHECK_OK();
      op_fetch_data_idx(t, out, 0, 7);
      CHECK_INT(out[0], 1);
      CHECK_INT(out[1], 0);
      op_fetch_data_idx(t, out, 601, 601);
      CHECK_INT(out[0], 1);
    } else if (strcmp(backend, "threads") == 0 && !validating) {
      CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "op_par_loop", "'inc_big'", "cannot allocate 1073741824 bytes",
                "colouring scratch");
    } else {
      CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "op_par_loop", "'inc_big'", "validation");
    }
    CHECK_INT(op_free_dat_temp_char(t), 1);
    CHECK_OK();
  }

  /* op2 keeps working: loops and a solve with the right values, under the limit. */
  op_set_error_handler(OP_ERRORS_ABORT);
  m = small_mesh();
  loops(&m);
  solve(&m);
  op_exit();

  /* op_renumber of a 2^25-node graph (a 256 MiB map: its scratch is more than 512 MiB) is
   * refused and the session goes on (its dat reads back). A session of its own (the map's copy
   * takes 256 MiB). */
  if (limited) {
    op_set rn, re;
    op_map pr;
    op_dat dr;
    int got[2];
    test_init(argc, argv);
    op_set_error_handler(OP_ERRORS_RETURN);
    limit_from_here();
    rn = op_decl_set(1 << 25, "rnodes");
    re = op_decl_set(1 << 25, "redges");
    pr = op_decl_map(re, rn, 2, zeros, "predge");
    dr = op_decl_dat(re, 1, "int", NULL, "dredge");
    CHECK_OK();
    op_renumber(pr);
    CHECK_ERR(OP2_ERR_OUT_OF_MEMORY, "op_renumber", "cannot allocate");
    op_fetch_data_idx(dr, got, 5, 6);
    CHECK_OK();
    CHECK_INT(got[0] + got[1], 0);
    op_exit();
  }

  if (zeros) munmap(zeros, (size_t)BIGMAP_FROM * 8 * sizeof(int));
  unlink(h5);
  unlink(huge_h5);
  unlink(pack);
  rmdir(dir);
  return 0;
}
