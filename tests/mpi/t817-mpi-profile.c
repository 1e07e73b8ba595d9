/* op_profile_output under MPI (collective): process 0 prints the region tree of every process
 * merged by path, "the maximum over P processes", with a region only the last process entered
 * in its place; the other processes print nothing. Each process sleeps (10 ms times its rank
 * plus one) in region "work": the printed total is the largest, the last process's. Then the
 * loop report follows on process 0. The region one process alone enters comes after an
 * indirect loop, which under OP2_LAZY=1 (make test-mpi-c-lazy) is still queued there (under MPI
 * profiling calls leave the queue alone: running it is collective); its values are right
 * after.
 * mpi-n: 1 2 3 */
#include "test.h"
#include <time.h>
#include <unistd.h>

static char text[65536];
static int rank, p;

static void nap(int ms)
{
  struct timespec t = {0, ms * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

int main(int argc, char **argv)
{
  char path[] = "/tmp/op2-t817-XXXXXX", want[64];
  int fd, saved;
  ssize_t n;
  double v[8] = {0};
  test_init(argc, argv);
  p = op_num_ranks();
  op_rank(&rank);
  int e2c[2 * 8], i;
  double got[8 * 16];
  for (i = 0; i < 8; i++) {
    e2c[2 * i] = 8 * rank + i;
    e2c[2 * i + 1] = (8 * rank + i + 1) % (8 * p);
  }
  op_set s = op_decl_set(8, "cells"), e = op_decl_set(8, "edges");
  op_map m = op_decl_map(e, s, 2, e2c, "ring");
  op_dat d = op_decl_dat(s, 1, "double", v, "d");
  op_kernel k = op_decl_kernel("void inc(double *x) { x[0] += 1.0; }\n", "inc");
  op_kernel k2 = op_decl_kernel("void inc2(double *a, double *b) { a[0] += 1.0; b[0] += 1.0; }\n", "inc2");
  op_profile_start("app");
  op_profile_enter("work");
  nap(10 * (rank + 1));
  PAR_LOOP(k, "inc", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
  /* an indirect loop (halo exchange), queued under OP2_LAZY=1, then a region one process
   * alone enters */
  PAR_LOOP(k2, "inc2", e, op_arg_dat(d, 0, m, 1, "double", OP_INC), op_arg_dat(d, 1, m, 1, "double", OP_INC));
  if (rank == p - 1) {
    op_profile_enter("last_only");
    op_profile_exit();
  }
  op_profile_exit();
  op_profile_end();
  CHECK_OK();
  op_fetch_data_idx(d, got, 0, 8 * p - 1);
  for (i = 0; i < 8 * p; i++) CHECK_DBL(got[i], 3.0);

  fd = mkstemp(path);
  CHECK(fd >= 0);
  fflush(stdout);
  saved = dup(1);
  CHECK(saved >= 0 && dup2(fd, 1) == 1);
  op_profile_output();
  fflush(stdout);
  CHECK(dup2(saved, 1) == 1);
  close(saved);
  CHECK_OK();
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
  n = read(fd, text, sizeof text - 1);
  CHECK(n >= 0);
  text[n] = '\0';
  close(fd);
  unlink(path);

  if (rank != 0) {
    CHECK_STR(text, "");
  } else {
    char *w, *a, *l, *t;
    long calls;
    double total;
    if (p > 1) {
      snprintf(want, sizeof want, "; the maximum over %d processes)", p);
      CHECK(strstr(text, want) != NULL);
    }
    a = strstr(text, "\n  app ");
    w = strstr(text, "\n    work ");
    l = strstr(text, "\n      last_only ");
    t = strstr(text, "op2 timing");
    if (!(a && w && l && t && a < w && w < l && l < t))
      test_fail_(__FILE__, __LINE__, "tree app > work > last_only, then the loop report, in:\n%s", text);
    CHECK(sscanf(w + strlen("\n    work "), "%ld %lf", &calls, &total) == 2);
    CHECK_INT(calls, 1);
    CHECK(total >= 0.001 * 10 * p); /* the last process's nap, the longest */
  }
  op_exit();
  return 0;
}
