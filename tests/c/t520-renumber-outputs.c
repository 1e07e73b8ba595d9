/* Every writer gives the same file with and without op_renumber, byte for byte: one session
 * (a child process) writes every output of a randomly numbered quad mesh as declared, another
 * renumbers it first (op_renumber reorders the storage of nodes, edges and cells); the files
 * are compared whole: op_fetch_data / op_fetch_data_idx (written out by the test),
 * op_print_dat_to_txtfile / binfile, op_fetch_data_hdf5_file, op_dump_to_hdf5 (maps in the
 * declared numbering of their target set, rows in declared order of their from-set) and
 * op_write_vtk in all five modes (.vtu binary / ASCII / base64, .vtk binary / ASCII). HDF5 files
 * compare byte for byte too: op2 creates datasets without modification times (HDF5's
 * obj_track_times off), so the same objects written the same way give the same bytes. The values
 * come from a loop run after op_renumber (on the renumbered storage), so the test also covers
 * what a loop writes. */
#include "test.h"

#include <sys/wait.h>
#include <unistd.h>

#define NX 7
#define NY 5
#define NN ((NX + 1) * (NY + 1))
#define NC (NX * NY)
#define NE (NX * (NY + 1) + (NX + 1) * NY)

static unsigned long long rng = 987654321;
static int rnd(int n)
{
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((rng >> 33) % (unsigned long long)n);
}

/* perm[old] = new, a random permutation of 0..n-1 */
static void shuffle(int *perm, int n)
{
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = rnd(i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

static const char *outputs[] = {"fetch.bin", "fetch_idx.bin", "x.txt",    "q.txt",    "flag.bin",
                                "fetch.h5",  "dump.h5",       "bin.vtu",  "ascii.vtu", "b64.vtu",
                                "bin.vtk",   "ascii.vtk"};

static const char *avg_src = "void cellavg(const double **x, float *q, long long *id) {\n"
                             "  q[0] = (float)(0.25 * (x[0][0] + x[1][0] + x[2][0] + x[3][0]));\n"
                             "  q[1] = (float)(x[2][1] - x[0][1]);\n"
                             "  q[2] = (float)(*id % 1000) + q[0];\n"
                             "}\n";

/* One session writing every output into `dir`; `renumber`: op_renumber first. */
static int writer(const char *backend, int renumber, const char *dir)
{
  static int pn[NN], pc[NC], pe[NE], cell2node[4 * NC], edge2node[2 * NE], flag[NN];
  static double x[2 * NN], got_x[2 * NN];
  static float got_q[3 * NC], got_idx[3 * 9];
  static long long id[NC];
  char path[512], bk[300], *args[2];
  int e = 0;
  rng = 987654321;
  shuffle(pn, NN);
  shuffle(pc, NC);
  shuffle(pe, NE);
  for (int j = 0; j <= NY; j++)
    for (int i = 0; i <= NX; i++) {
      int n = pn[j * (NX + 1) + i];
      x[2 * n] = i * 0.5 + 0.01 * j;
      x[2 * n + 1] = j * 0.25 - 0.003 * i;
      flag[n] = (i == 0 || i == NX || j == 0 || j == NY) ? 1 + i + 100 * j : 0;
    }
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++) {
      int c = pc[j * NX + i], n0 = j * (NX + 1) + i;
      cell2node[4 * c] = pn[n0];
      cell2node[4 * c + 1] = pn[n0 + 1];
      cell2node[4 * c + 2] = pn[n0 + NX + 2];
      cell2node[4 * c + 3] = pn[n0 + NX + 1];
      id[c] = 1000000007LL * (j * NX + i);
    }
  for (int j = 0; j <= NY; j++)
    for (int i = 0; i <= NX; i++) {
      int n0 = j * (NX + 1) + i;
      if (i < NX) edge2node[2 * pe[e]] = pn[n0], edge2node[2 * pe[e] + 1] = pn[n0 + 1], e++;
      if (j < NY) edge2node[2 * pe[e]] = pn[n0], edge2node[2 * pe[e] + 1] = pn[n0 + NX + 1], e++;
    }
  CHECK_INT(e, NE);

  snprintf(bk, sizeof bk, "OP2_BACKEND=%s", backend);
  args[0] = (char *)"t520";
  args[1] = bk;
  op_init(2, args, 0);
  op_set nodes = op_decl_set(NN, "nodes");
  op_set edges = op_decl_set(NE, "edges");
  op_set cells = op_decl_set(NC, "cells");
  op_map pcell = op_decl_map(cells, nodes, 4, cell2node, "pcell");
  op_map pedge = op_decl_map(edges, nodes, 2, edge2node, "pedge");
  op_dat dx = op_decl_dat(nodes, 2, "double", x, "p_x");
  op_dat dflag = op_decl_dat(nodes, 1, "int", flag, "p_flag");
  op_dat dq = op_decl_dat(cells, 3, "float", NULL, "p_q");
  op_dat did = op_decl_dat(cells, 1, "long long", id, "p_id");
  (void)pedge;
  if (renumber) op_renumber(pcell);
  op_kernel k = op_decl_kernel(avg_src, "cellavg");
  PAR_LOOP(k, "cellavg", cells, op_arg_dat(dx, -4, pcell, 2, "double", OP_READ),
           op_arg_dat(dq, -1, OP_ID, 3, "float", OP_WRITE), op_arg_dat(did, -1, OP_ID, 1, "long long", OP_READ));

  /* fetch and fetch_idx, written out here */
  op_fetch_data(dx, got_x);
  op_fetch_data(dq, got_q);
  op_fetch_data_idx(dq, got_idx, 11, 19);
  snprintf(path, sizeof path, "%s/fetch.bin", dir);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK(fwrite(got_x, sizeof got_x, 1, f) == 1 && fwrite(got_q, sizeof got_q, 1, f) == 1);
  fclose(f);
  snprintf(path, sizeof path, "%s/fetch_idx.bin", dir);
  f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK(fwrite(got_idx, sizeof got_idx, 1, f) == 1);
  fclose(f);
  /* op2's writers */
  snprintf(path, sizeof path, "%s/x.txt", dir);
  op_print_dat_to_txtfile(dx, path);
  snprintf(path, sizeof path, "%s/q.txt", dir);
  op_print_dat_to_txtfile(dq, path);
  snprintf(path, sizeof path, "%s/flag.bin", dir);
  op_print_dat_to_binfile(dflag, path);
  snprintf(path, sizeof path, "%s/fetch.h5", dir);
  op_fetch_data_hdf5_file(dq, path);
  op_fetch_data_hdf5_file(dx, path);
  op_fetch_data_hdf5_file(dq, path); /* again: overwritten in place */
  snprintf(path, sizeof path, "%s/dump.h5", dir);
  op_dump_to_hdf5(path);
  op_dat vdats[] = {dflag, dq, did};
  const char *vtk[] = {"bin.vtu", "ascii.vtu", "b64.vtu", "bin.vtk", "ascii.vtk"};
  const int flags[] = {OP_VTK_BINARY, OP_VTK_ASCII, OP_VTK_BASE64, OP_VTK_BINARY, OP_VTK_ASCII};
  for (int i = 0; i < 5; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, vtk[i]);
    op_write_vtk(path, pcell, dx, 3, vdats, flags[i]);
  }
  op_exit();
  return 0;
}

static int run_child(const char *backend, int renumber, const char *dir)
{
  int status;
  pid_t pid;
  fflush(NULL);
  pid = fork();
  if (pid < 0) test_fail_(__FILE__, __LINE__, "fork failed");
  if (pid == 0) _exit(writer(backend, renumber, dir));
  if (waitpid(pid, &status, 0) != pid) test_fail_(__FILE__, __LINE__, "waitpid failed");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *read_all(const char *path, long *len)
{
  FILE *f = fopen(path, "rb");
  char *buf;
  if (f == NULL) test_fail_(__FILE__, __LINE__, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = (char *)malloc((size_t)*len + 1);
  CHECK(buf != NULL);
  CHECK(fread(buf, 1, (size_t)*len, f) == (size_t)*len);
  fclose(f);
  return buf;
}

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t520-XXXXXX", plain[64], renum[64], a[128], b[128], cmd[200];
  int bad = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  if (mkdtemp(dir) == NULL) test_fail_(__FILE__, __LINE__, "mkdtemp failed");
  snprintf(plain, sizeof plain, "%s/plain", dir);
  snprintf(renum, sizeof renum, "%s/renumbered", dir);
  snprintf(cmd, sizeof cmd, "mkdir '%s' '%s'", plain, renum);
  CHECK(system(cmd) == 0);
  CHECK_INT(run_child(argv[1], 0, plain), 0);
  CHECK_INT(run_child(argv[1], 1, renum), 0);
  for (int i = 0; i < COUNT_OF(outputs); i++) {
    long la, lb, at = -1;
    snprintf(a, sizeof a, "%s/%s", plain, outputs[i]);
    snprintf(b, sizeof b, "%s/%s", renum, outputs[i]);
    char *x = read_all(a, &la), *y = read_all(b, &lb);
    for (long j = 0; j < (la < lb ? la : lb) && at < 0; j++)
      if (x[j] != y[j]) at = j;
    if (la != lb || at >= 0) {
      fprintf(stderr, "t520: %s differs after op_renumber (%ld vs %ld bytes, first difference at byte %ld)\n",
              outputs[i], la, lb, at);
      bad++;
    }
    CHECK(la > 0);
    free(x);
    free(y);
  }
  if (bad) {
    fprintf(stderr, "t520: %d of %d files differ; kept in %s\n", bad, COUNT_OF(outputs), dir);
    return 1;
  }
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
  return 0;
}
