/* op_init's diags level: 0 prints nothing; 1 one line naming the backend, its threads and the
 * cache; 2 also one line per new loop shape (compiled, or loaded from the disk cache, with its
 * time), none for repeated calls; 3 also checks every call's indirect OP_WRITE targets for
 * exclusivity on every backend (OP2_ERR_CHECK naming loop, dat and elements). */
#include "test.h"

#include <fcntl.h>
#include <unistd.h>

static char dir[] = "/tmp/op2-t630-XXXXXX";
static char out_path[300];
static int saved_fd = -1;

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static void capture(void)
{
  int fd;
  fflush(stdout);
  saved_fd = dup(1);
  fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK(saved_fd >= 0 && fd >= 0);
  CHECK(dup2(fd, 1) == 1);
  close(fd);
}

static char *release(void)
{
  char *got;
  fflush(stdout);
  CHECK(dup2(saved_fd, 1) == 1);
  close(saved_fd);
  got = test_read_file(out_path);
  CHECK(got != NULL);
  return got;
}

static int count(const char *hay, const char *needle)
{
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static void start(const char *backend, int diags)
{
  char tb[64], tc[360];
  char *args[3];
  snprintf(tb, sizeof tb, "OP2_BACKEND=%s", backend);
  snprintf(tc, sizeof tc, "OP2_CACHE_DIR=%s/cache", dir);
  args[0] = "t630";
  args[1] = tb;
  args[2] = tc;
  op_init(3, args, diags);
}

static void loops(void)
{
  int e2n[6] = {0, 1, 1, 2, 2, 3};
  op_set nodes = op_decl_set(4, "nodes");
  op_set edges = op_decl_set(3, "edges");
  op_map pedge = op_decl_map(edges, nodes, 2, e2n, "pedge");
  op_dat v = op_decl_dat(nodes, 1, "double", NULL, "v");
  op_kernel k = op_decl_kernel("void inc(double *a, double *b) { *a += 1; *b += 1; }\n", "inc");
  for (int i = 0; i < 3; i++)
    PAR_LOOP(k, "inc", edges, op_arg_dat(v, 0, pedge, 1, "double", OP_INC),
             op_arg_dat(v, 1, pedge, 1, "double", OP_INC));
}

int main(int argc, char **argv)
{
  const char *backend;
  char *got, want[300];
  if (argc < 2) return 2;
  backend = argv[1];
  CHECK(mkdtemp(dir) != NULL);
  atexit(cleanup);
  snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);

  /* 0: silent. */
  capture();
  start(backend, 0);
  loops();
  op_exit();
  got = release();
  CHECK_STR(got, "");
  free(got);

  /* 1: one line. */
  capture();
  start(backend, 1);
  loops();
  op_exit();
  got = release();
  snprintf(want, sizeof want, "op2: backend %s, ", backend);
  CHECK(strncmp(got, want, strlen(want)) == 0);
  CHECK_INT(count(got, "\n"), 1);
  CHECK(strstr(got, strcmp(backend, "threads") == 0  ? " threads, "
                    : strcmp(backend, "opencl") == 0 ? ", device opencl on "
                    : strcmp(backend, "cuda") == 0   ? ", device cuda on "
                                                     : "1 thread, ") != NULL);
  snprintf(want, sizeof want, "cache %s/cache", dir);
  CHECK(strstr(got, want) != NULL);
  free(got);

  /* 2: a line per new loop shape; the cache was filled above, so a disk cache hit. */
  capture();
  start(backend, 2);
  loops();
  op_exit();
  got = release();
  /* opencl also says where each program came from: its binary, from the disk cache too. */
  /* Under OP2_LAZY=1 a tiled chain adds its own lines (a header, then one per loop). */
  CHECK_INT(count(got, "\n") - count(got, "op2: chain:") - count(got, "op2:   loop "),
            strcmp(backend, "opencl") == 0 ? 3 : 2);
  if (strcmp(backend, "opencl") == 0)
    CHECK_INT(count(got, "op2: opencl program for loop 'inc' (kernel 'inc'): binary loaded from the disk cache, "), 1);
  CHECK_INT(count(got, "op2: loop 'inc' (kernel 'inc'): new loop shape (1 in this session), disk cache hit, "), 1);
  CHECK(strstr(got, " ms\n") != NULL || strstr(got, " ms; not vectorised (OP2_SIMD): ") != NULL);
  free(got);
  /* A fresh cache: compiled. */
  {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/cache'", dir);
    CHECK(system(cmd) == 0);
  }
  capture();
  start(backend, 2);
  loops();
  op_exit();
  got = release();
  CHECK_INT(count(got, "new loop shape (1 in this session), compiled, "), 1);
  free(got);

  /* 3: a broken OP_WRITE promise is caught on every backend. */
  capture();
  start(backend, 3);
  {
    int e2n[4] = {0, 1, 1, 2};
    op_set nodes = op_decl_set(3, "nodes");
    op_set edges = op_decl_set(2, "edges");
    op_map pedge = op_decl_map(edges, nodes, 2, e2n, "pedge");
    op_dat v = op_decl_dat(nodes, 1, "double", NULL, "v");
    op_kernel k = op_decl_kernel("void wr(double *a) { *a = 1; }\n", "wr");
    op_set_error_handler(OP_ERRORS_RETURN);
    PAR_LOOP(k, "wr0", edges, op_arg_dat(v, 0, pedge, 1, "double", OP_WRITE));
    CHECK_OK(); /* column 0 reaches 0 and 1: exclusive */
    PAR_LOOP(k, "wr_all", edges, op_arg_dat(v, -2, pedge, 1, "double", OP_WRITE));
    CHECK_ERR(OP2_ERR_CHECK, "op_par_loop 'wr_all'", "dat 'v'", "map 'pedge'",
              "elements 0 and 1 of set 'edges' both reach element 1", "diags 3");
    op_set_error_handler(OP_ERRORS_ABORT);
  }
  op_exit();
  got = release();
  free(got);
  return 0;
}
