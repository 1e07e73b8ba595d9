/*
 * airfoil.c: the Airfoil benchmark (2D inviscid Euler on an unstructured quad mesh around a
 * NACA0012 aerofoil) written against op2's C API.
 *
 * usage: airfoil [--mesh FILE] [--iters N] [--rms-log FILE] [--vtk FILE [--vtk-every N]]
 *                [--renumber] [--kernel-dir D] [--save FILE] [--dump FILE.h5]
 *                [--partition LIB[:ROUTINE]] [--mem]
 *                [OP2 tokens such as OP2_BACKEND=threads]
 *   --mesh FILE     mesh in new_grid.dat format, or OP2's HDF5 layout when FILE ends in .h5
 *                   (new_grid.h5 as OP2's convert_mesh writes it; op2-h5convert makes one)
 *                   (default: new_grid.dat in the current directory)
 *   --iters N       number of iterations (default 1000)
 *   --rms-log FILE  write "iter rms" for every iteration, rms with %.17e
 *   --vtk FILE      write the solution (p_q as cell data on the mesh) for ParaView at the end:
 *                   FILE ending in .vtu (XML, appended raw) or .vtk (legacy binary)
 *   --vtk-every N   also every N iterations, as <stem>_<iteration>.vtu next to FILE
 *   --renumber      op_renumber(pedge) before the first loop (locality for badly numbered meshes)
 *   --chain         each iteration is one loop chain (op_loop_chain_begin/end): its nine loops
 *                   run together at the chain's end, sparse-tiled on seq and threads
 *   --kernel-dir D  read the kernels from D/<name>.c with op_decl_kernel_file, as a ported OP2
 *                   app keeps them (default: the copies compiled into this program)
 *   --save FILE     write the final solution q (cells x 4) with op_print_dat_to_txtfile when
 *                   FILE ends in .txt, else op_print_dat_to_binfile
 *   --dump FILE.h5  write every set, map and dat at the end with op_dump_to_hdf5 (timed)
 *   --partition P   under MPI (mpiexec -n N airfoil ...): how op_partition distributes the mesh:
 *                   METIS:KWAY (default; cells by the graph of pecell, gathered), PARMETIS:KWAY
 *                   or PTSCOTCH:KWAY (the same graph, distributed), PARMETIS:GEOMKWAY (nodes by
 *                   the graph of pedge with p_x), RCB (nodes by p_x, the other sets follow),
 *                   BLOCK (the declared blocks), RANDOM
 *   --mem           each process prints its peak resident memory (Linux /proc/self/status
 *                   VmHWM) at the end, and the peak of each phase above the resident size at
 *                   the phase's start (the high-water mark is reset through
 *                   /proc/self/clear_refs before each phase): read (mesh read, op_init and the
 *                   declarations), partition (op_partition), run (everything after it: the
 *                   iterations and any output), one line per process:
 *                   "airfoil: memory process R/P: read +A KiB, partition +B KiB, run +C KiB,
 *                   VmHWM D KiB". Measure with an HDF5 mesh: the text reader reads the whole
 *                   mesh on every process.
 *   NAME=VALUE      passed to op_init (OP2_BACKEND=seq|threads|..., OP2_NUM_THREADS=4, ...)
 *
 * As an OP2 MPI program: every process reads the text mesh and declares its contiguous block of
 * every set (map values stay global indices), or, from HDF5, op_decl_*_hdf5 read just that
 * block; then op_partition. One process is the same program. Output (rms log, messages) comes
 * from the root process; --vtk under MPI writes one piece per process plus <stem>.pvtu (give a
 * .vtu name).
 *
 * The kernels live in kernels/<name>.c, one function per file; the build turns them into C
 * strings (build/gen/airfoil_kernels.h) so this program is self-contained.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "op2.h"

#include "airfoil_kernels.h"
#include "airfoil_mesh.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The solution for ParaView: p_q as cell data. iter >= 0 inserts _<iter> before the
 * extension; -1 writes `path` itself. */
static void write_vtk(const char *path, long iter, op_map pcell, op_dat p_x, op_dat p_q) {
  char name[4096];
  const char *dot = strrchr(path, '.');
  if (iter >= 0 && dot)
    snprintf(name, sizeof name, "%.*s_%06ld%s", (int)(dot - path), path, iter, dot);
  else
    snprintf(name, sizeof name, "%s", path);
  double t = now_s();
  op_write_vtk(name, pcell, p_x, 1, &p_q, OP_VTK_BINARY);
  if (op_is_root()) printf("airfoil: wrote %s in %.3f s\n", name, now_s() - t);
}

/* --mem: the process's peak resident memory by phase (Linux). mem_phase() ends the phase in
 * progress (its peak: VmHWM now minus VmRSS at its start), resets the high-water mark
 * (/proc/self/clear_refs "5") and starts the next one; mem.hwm keeps the largest VmHWM seen, the
 * process's peak since it started. */
static struct {
  long start_rss, hwm;
  int reset_ok;
} mem;

static long mem_status_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(key);
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, n) && line[n] == ':') {
      v = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

/* Ends the current phase (returns its peak above its start, in KiB) and starts a new one. */
static long mem_phase(void) {
  long hwm = mem_status_kib("VmHWM");
  long peak = hwm - mem.start_rss;
  if (hwm > mem.hwm) mem.hwm = hwm;
  FILE *f = fopen("/proc/self/clear_refs", "w");
  mem.reset_ok = f && fputs("5", f) >= 0;
  if (f && fclose(f) != 0) mem.reset_ok = 0;
  mem.start_rss = mem_status_kib("VmRSS");
  return peak;
}

static void usage(FILE *f, const char *prog) {
  fprintf(f,
          "usage: %s [--mesh FILE] [--iters N] [--rms-log FILE] [--vtk FILE [--vtk-every N]]\n"
          "          [--renumber] [--chain] [--kernel-dir D] [--save FILE] [--checkpoint FILE [--every S]]\n"
          "          [OP2_BACKEND=name ...]\n"
          "  --mesh FILE     mesh in new_grid.dat format, or OP2's HDF5 layout if FILE ends in .h5\n"
          "                  (default new_grid.dat)\n"
          "  --iters N       iterations (default 1000)\n"
          "  --rms-log FILE  write 'iter rms' for every iteration\n"
          "  --vtk FILE      write the solution for ParaView at the end (.vtu or .vtk)\n"
          "  --vtk-every N   also every N iterations, as <stem>_<iteration>.<ext>\n"
          "  --renumber      op_renumber(pedge) before the first loop\n"
          "  --chain         each iteration is one loop chain (op_loop_chain_begin/end)\n"
          "  --kernel-dir D  read the kernels from D/<name>.c (op_decl_kernel_file)\n"
          "  --save FILE     write the final q: text (OP2's format) if FILE ends in .txt, else binary\n"
          "  --dump FILE.h5  write every set, map and dat at the end (op_dump_to_hdf5)\n"
          "  --partition P   MPI partitioner: METIS:KWAY (default), RCB, BLOCK or RANDOM\n"
          "  --mem           print each process's peak memory (VmHWM) and each phase's peak\n"
          "  --checkpoint F  checkpoint to F (op_checkpointing_init); a run started again with F\n"
          "                  present resumes from it, with the same results\n"
          "  --every S       seconds between checkpoints (default 10; 0: every loop)\n"
          "  NAME=VALUE      op2 configuration tokens, passed to op_init\n",
          prog);
}

int main(int argc, char **argv) {
  const char *mesh_path = "new_grid.dat";
  const char *log_path = NULL;
  const char *save_path = NULL;
  const char *dump_path = NULL;
  int renumber = 0;
  int chain = 0;
  const char *kernel_dir = NULL;
  const char *partition = "METIS:KWAY";
  long niter = 1000;
  const char *vtk_path = NULL;
  long vtk_every = 0;
  const char *ckpt_path = NULL;
  double ckpt_every = 10.0;
  int memory = 0;
  long mem_read = 0, mem_part = 0, mem_run = 0;

  /* our options are consumed here; NAME=VALUE tokens go to op_init */
  char **op_argv = calloc((size_t)argc + 1, sizeof(char *));
  int op_argc = 0;
  if (!op_argv) return 1;
  op_argv[op_argc++] = argv[0];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mesh") && i + 1 < argc) {
      mesh_path = argv[++i];
    } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
      char *e;
      niter = strtol(argv[++i], &e, 10);
      if (*e || e == argv[i] || niter < 0 || niter > 1000000000L) {
        fprintf(stderr, "airfoil: --iters needs a non-negative integer, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--rms-log") && i + 1 < argc) {
      log_path = argv[++i];
    } else if (!strcmp(argv[i], "--vtk") && i + 1 < argc) {
      vtk_path = argv[++i];
    } else if (!strcmp(argv[i], "--vtk-every") && i + 1 < argc) {
      char *e;
      vtk_every = strtol(argv[++i], &e, 10);
      if (*e || e == argv[i] || vtk_every < 1 || vtk_every > 1000000000L) {
        fprintf(stderr, "airfoil: --vtk-every needs a positive integer, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--save") && i + 1 < argc) {
      save_path = argv[++i];
    } else if (!strcmp(argv[i], "--dump") && i + 1 < argc) {
      dump_path = argv[++i];
    } else if (!strcmp(argv[i], "--partition") && i + 1 < argc) {
      partition = argv[++i];
    } else if (!strcmp(argv[i], "--checkpoint") && i + 1 < argc) {
      ckpt_path = argv[++i];
    } else if (!strcmp(argv[i], "--every") && i + 1 < argc) {
      char *e;
      ckpt_every = strtod(argv[++i], &e);
      if (*e || e == argv[i] || !(ckpt_every >= 0.0)) {
        fprintf(stderr, "airfoil: --every needs a non-negative number of seconds, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--mem")) {
      memory = 1;
    } else if (!strcmp(argv[i], "--renumber")) {
      renumber = 1;
    } else if (!strcmp(argv[i], "--chain")) {
      chain = 1;
    } else if (!strcmp(argv[i], "--kernel-dir") && i + 1 < argc) {
      kernel_dir = argv[++i];
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout, argv[0]);
      return 0;
    } else if (argv[i][0] != '-' && strchr(argv[i], '=')) {
      op_argv[op_argc++] = argv[i];
    } else {
      fprintf(stderr, "airfoil: unknown or incomplete argument '%s'\n", argv[i]);
      usage(stderr, argv[0]);
      return 2;
    }
  }
  op_argv[op_argc] = NULL;
  if (vtk_every && !vtk_path) {
    fprintf(stderr, "airfoil: --vtk-every needs --vtk FILE\n");
    return 2;
  }
  size_t mlen = strlen(mesh_path);
  int from_h5 = mlen > 3 && !strcmp(mesh_path + mlen - 3, ".h5");

  if (memory) mem_phase(); /* the read phase starts */
  /* read and validate a text mesh before touching op2 (op2 checks an HDF5 one itself) */
  airfoil_mesh m;
  memset(&m, 0, sizeof m);
  char err[1024];
  double t_read = now_s();
  if (!from_h5 && airfoil_mesh_read(mesh_path, &m, err, sizeof err)) {
    fprintf(stderr, "airfoil: %s\n", err);
    return 1;
  }
  t_read = now_s() - t_read;
  op_init(op_argc, op_argv, 1);
  int nranks = op_num_ranks(), rank = 0;
  op_rank(&rank);
  int root = op_is_root();
  FILE *log = NULL;
  if (root && log_path && !(log = fopen(log_path, "w"))) {
    fprintf(stderr, "airfoil: cannot write rms log '%s'\n", log_path);
    return 1;
  }

  /* flow constants: single-precision literals widened to double */
  double gam = 1.4f;
  double gm1 = gam - 1.0;
  double cfl = 0.9f;
  double eps = 0.05f;
  double mach = 0.4f;
  double p = 1.0, r = 1.0;
  double u = sqrt(gam * p / r) * mach;
  double e = p / (r * gm1) + 0.5 * u * u;
  double qinf[4] = {r, r * u, 0.0, r * e};

  if (from_h5) {
    /* OP2's airfoil_hdf5 reads the constants from the mesh file */
    op_get_const_hdf5("gam", 1, "double", (char *)&gam, mesh_path);
    op_get_const_hdf5("gm1", 1, "double", (char *)&gm1, mesh_path);
    op_get_const_hdf5("cfl", 1, "double", (char *)&cfl, mesh_path);
    op_get_const_hdf5("eps", 1, "double", (char *)&eps, mesh_path);
    op_get_const_hdf5("qinf", 4, "double", (char *)qinf, mesh_path);
  }
  op_decl_const(1, "double", &gam, "gam");
  op_decl_const(1, "double", &gm1, "gm1");
  op_decl_const(1, "double", &cfl, "cfl");
  op_decl_const(1, "double", &eps, "eps");
  op_decl_const(4, "double", qinf, "qinf");

  op_set nodes, edges, bedges, cells;
  op_map pedge, pecell, pbedge, pbecell, pcell;
  op_dat p_bound, p_x, p_q;
  if (from_h5) {
    double t_h5 = now_s();
    nodes = op_decl_set_hdf5(mesh_path, "nodes");
    edges = op_decl_set_hdf5(mesh_path, "edges");
    bedges = op_decl_set_hdf5(mesh_path, "bedges");
    cells = op_decl_set_hdf5(mesh_path, "cells");
    pedge = op_decl_map_hdf5(edges, nodes, 2, mesh_path, "pedge");
    pecell = op_decl_map_hdf5(edges, cells, 2, mesh_path, "pecell");
    pbedge = op_decl_map_hdf5(bedges, nodes, 2, mesh_path, "pbedge");
    pbecell = op_decl_map_hdf5(bedges, cells, 1, mesh_path, "pbecell");
    pcell = op_decl_map_hdf5(cells, nodes, 4, mesh_path, "pcell");
    p_bound = op_decl_dat_hdf5(bedges, 1, "int", mesh_path, "p_bound");
    p_x = op_decl_dat_hdf5(nodes, 2, "double", mesh_path, "p_x");
    p_q = op_decl_dat_hdf5(cells, 4, "double", mesh_path, "p_q");
    t_read = now_s() - t_h5;
    m.nnode = (int)op_get_size(nodes);
    m.ncell = (int)op_get_size(cells);
    m.nedge = (int)op_get_size(edges);
    m.nbedge = (int)op_get_size(bedges);
  } else {
    /* initial state: q = qinf everywhere */
    double *q = malloc(sizeof(double) * 4 * (size_t)m.ncell);
    if (!q) {
      fprintf(stderr, "airfoil: out of memory\n");
      return 1;
    }
    for (int c = 0; c < m.ncell; c++)
      for (int n = 0; n < 4; n++) q[4 * c + n] = qinf[n];

    /* this process's block of every set: [n*rank/nranks, n*(rank+1)/nranks) */
#define LO(n) ((int)((long long)(n) * rank / nranks))
#define CNT(n) ((int)((long long)(n) * (rank + 1) / nranks) - LO(n))
    nodes = op_decl_set(CNT(m.nnode), "nodes");
    edges = op_decl_set(CNT(m.nedge), "edges");
    bedges = op_decl_set(CNT(m.nbedge), "bedges");
    cells = op_decl_set(CNT(m.ncell), "cells");

    pedge = op_decl_map(edges, nodes, 2, m.edge + 2 * LO(m.nedge), "pedge");
    pecell = op_decl_map(edges, cells, 2, m.ecell + 2 * LO(m.nedge), "pecell");
    pbedge = op_decl_map(bedges, nodes, 2, m.bedge + 2 * LO(m.nbedge), "pbedge");
    pbecell = op_decl_map(bedges, cells, 1, m.becell + LO(m.nbedge), "pbecell");
    pcell = op_decl_map(cells, nodes, 4, m.cell + 4 * LO(m.ncell), "pcell");

    p_bound = op_decl_dat(bedges, 1, "int", m.bound + LO(m.nbedge), "p_bound");
    p_x = op_decl_dat(nodes, 2, "double", m.x + 2 * LO(m.nnode), "p_x");
    p_q = op_decl_dat(cells, 4, "double", q + 4 * (size_t)LO(m.ncell), "p_q");
#undef LO
#undef CNT
    /* op2 copied everything: the host arrays can go */
    free(q);
  }
  if (root) {
    printf("airfoil: mesh '%s': %d nodes, %d cells, %d edges, %d boundary edges; backend %s",
           mesh_path, m.nnode, m.ncell, m.nedge, m.nbedge, op_backend_name());
    if (nranks > 1) printf(", %d MPI processes (%s)", nranks, partition);
    printf("\n");
    printf("airfoil: mesh read in %.3f s (%s)\n", t_read, from_h5 ? "HDF5" : "text");
  }
  op_dat p_qold = op_decl_dat(cells, 4, "double", NULL, "p_qold");
  op_dat p_adt = op_decl_dat(cells, 1, "double", NULL, "p_adt");
  op_dat p_res = op_decl_dat(cells, 4, "double", NULL, "p_res");

  if (memory) mem_read = mem_phase();
  {
    /* LIB or LIB:ROUTINE */
    char lib[64], *colon;
    snprintf(lib, sizeof lib, "%s", partition);
    colon = strchr(lib, ':');
    if (colon) *colon = '\0';
    /* GEOMKWAY partitions the graph of a map whose to-set holds the coordinates (as OP2
     * requires): the nodes, through pedge; the other routines partition the cells. */
    if (colon && !strcmp(colon + 1, "GEOMKWAY"))
      op_partition(lib, colon + 1, nodes, pedge, p_x);
    else
      op_partition(lib, colon ? colon + 1 : NULL, cells, pecell, p_x);
  }
  if (memory) mem_part = mem_phase();
  if (renumber) op_renumber(pedge);
  int ncell = m.ncell;
  if (!from_h5) am_free(&m);

  op_kernel k_save_soln, k_adt_calc, k_res_calc, k_bres_calc, k_update;
  if (kernel_dir) {
    char path[4096];
#define AIRFOIL_KERNEL_FILE(k, name)                                                   \
  (snprintf(path, sizeof path, "%s/%s.c", kernel_dir, name), k = op_decl_kernel_file(path, name))
    AIRFOIL_KERNEL_FILE(k_save_soln, "save_soln");
    AIRFOIL_KERNEL_FILE(k_adt_calc, "adt_calc");
    AIRFOIL_KERNEL_FILE(k_res_calc, "res_calc");
    AIRFOIL_KERNEL_FILE(k_bres_calc, "bres_calc");
    AIRFOIL_KERNEL_FILE(k_update, "update");
#undef AIRFOIL_KERNEL_FILE
  } else {
    k_save_soln = op_decl_kernel(airfoil_src_save_soln, "save_soln");
    k_adt_calc = op_decl_kernel(airfoil_src_adt_calc, "adt_calc");
    k_res_calc = op_decl_kernel(airfoil_src_res_calc, "res_calc");
    k_bres_calc = op_decl_kernel(airfoil_src_bres_calc, "bres_calc");
    k_update = op_decl_kernel(airfoil_src_update, "update");
  }

  double rms = 0.0, maxerr = 0.0;
  int errloc = 0;
  /* checkpoint and restart: a checkpoint already at ckpt_path is replayed (loops skipped,
     their rms results given back) up to where it was taken, then the run goes on from there */
  if (ckpt_path) op_checkpointing_init(ckpt_path, ckpt_every, 0);

  double t0 = now_s(), t1 = t0;
  for (long iter = 1; iter <= niter; iter++) {
    /* --chain: the iteration's loops run together at op_loop_chain_end, where rms, maxerr and
       errloc (reset before each update, as each reduction starts from its value at its call)
       land, in loop order */
    if (chain) op_loop_chain_begin("iteration");
    OP_PAR_LOOP(k_save_soln, "save_soln", cells,
                op_arg_dat(p_q, -1, OP_ID, 4, "double", OP_READ),
                op_arg_dat(p_qold, -1, OP_ID, 4, "double", OP_WRITE));

    for (int k = 0; k < 2; k++) {
      OP_PAR_LOOP(k_adt_calc, "adt_calc", cells,
                  op_arg_dat(p_x, 0, pcell, 2, "double", OP_READ),
                  op_arg_dat(p_x, 1, pcell, 2, "double", OP_READ),
                  op_arg_dat(p_x, 2, pcell, 2, "double", OP_READ),
                  op_arg_dat(p_x, 3, pcell, 2, "double", OP_READ),
                  op_arg_dat(p_q, -1, OP_ID, 4, "double", OP_READ),
                  op_arg_dat(p_adt, -1, OP_ID, 1, "double", OP_WRITE));

      OP_PAR_LOOP(k_res_calc, "res_calc", edges,
                  op_arg_dat(p_x, 0, pedge, 2, "double", OP_READ),
                  op_arg_dat(p_x, 1, pedge, 2, "double", OP_READ),
                  op_arg_dat(p_q, 0, pecell, 4, "double", OP_READ),
                  op_arg_dat(p_q, 1, pecell, 4, "double", OP_READ),
                  op_arg_dat(p_adt, 0, pecell, 1, "double", OP_READ),
                  op_arg_dat(p_adt, 1, pecell, 1, "double", OP_READ),
                  op_arg_dat(p_res, 0, pecell, 4, "double", OP_INC),
                  op_arg_dat(p_res, 1, pecell, 4, "double", OP_INC));

      OP_PAR_LOOP(k_bres_calc, "bres_calc", bedges,
                  op_arg_dat(p_x, 0, pbedge, 2, "double", OP_READ),
                  op_arg_dat(p_x, 1, pbedge, 2, "double", OP_READ),
                  op_arg_dat(p_q, 0, pbecell, 4, "double", OP_READ),
                  op_arg_dat(p_adt, 0, pbecell, 1, "double", OP_READ),
                  op_arg_dat(p_res, 0, pbecell, 4, "double", OP_INC),
                  op_arg_dat(p_bound, -1, OP_ID, 1, "int", OP_READ));

      rms = 0.0;
      maxerr = 0.0;
      errloc = 0;
      OP_PAR_LOOP(k_update, "update", cells,
                  op_arg_dat(p_qold, -1, OP_ID, 4, "double", OP_READ),
                  op_arg_dat(p_q, -1, OP_ID, 4, "double", OP_WRITE),
                  op_arg_dat(p_res, -1, OP_ID, 4, "double", OP_RW),
                  op_arg_dat(p_adt, -1, OP_ID, 1, "double", OP_READ),
                  op_arg_gbl(&rms, 1, "double", OP_INC),
                  op_arg_gbl(&maxerr, 1, "double", OP_MAX),
                  op_arg_info(&errloc, 1, "int", 5),
                  op_arg_idx(-1, OP_ID));
    }
    if (chain) op_loop_chain_end();

    rms = sqrt(rms / (double)ncell);
    if (log) fprintf(log, "%ld %.17e\n", iter, rms);
    if (root && iter % 100 == 0) printf(" %ld  %10.5e\n", iter, rms);
    if (iter == 1) t1 = now_s();
    if (vtk_every && iter % vtk_every == 0) write_vtk(vtk_path, iter, pcell, p_x, p_q);
  }
  double t = now_s() - t0;
  if (log) fclose(log);

  if (root && niter > 0)
    printf("airfoil: last stage: largest squared change %.6e, in cell %d\n", maxerr, errloc);
  if (root && niter > 1)
    printf("airfoil: first iteration %.3f s (includes any JIT compilation), then %.3f ms/iter\n",
           t1 - t0, 1e3 * (t0 + t - t1) / (double)(niter - 1));
  fflush(stdout);
  op_timing_output();
  fflush(stdout);
  if (vtk_path) write_vtk(vtk_path, -1, pcell, p_x, p_q);
  if (root)
    printf("airfoil: %ld iterations, %.3f s, %.3f ms/iter\n", niter, t,
           niter ? 1e3 * t / (double)niter : 0.0);

  if (save_path) {
    size_t n = strlen(save_path);
    int text = n >= 4 && !strcmp(save_path + n - 4, ".txt");
    if (text)
      op_print_dat_to_txtfile(p_q, save_path);
    else
      op_print_dat_to_binfile(p_q, save_path);
    if (root)
      printf("airfoil: final solution q written to %s (%s)\n", save_path,
           text ? "text, OP2's op_print_dat_to_txtfile format"
                : "binary: int ncell, int 4, then ncell x 4 doubles");
  }

  if (dump_path) {
    double t = now_s();
    op_dump_to_hdf5(dump_path);
    if (root) printf("airfoil: dumped every set, map and dat to %s in %.3f s\n", dump_path, now_s() - t);
  }

  if (memory) {
    int ok = mem.reset_ok;
    mem_run = mem_phase();
    if (ok)
      printf("airfoil: memory process %d/%d: read +%ld KiB, partition +%ld KiB, run +%ld KiB, VmHWM %ld KiB\n",
             rank, nranks, mem_read, mem_part, mem_run, mem.hwm);
    else
      printf("airfoil: memory process %d/%d: VmHWM %ld KiB (no phase peaks: /proc/self/clear_refs "
             "cannot reset the high-water mark here)\n", rank, nranks, mem.hwm);
    fflush(stdout);
  }

  op_exit();
  free(op_argv);
  return 0;
}
