/* op_fetch_data of a process's own block allocates no more than a small part of that block
 * (issue 36, point 3): the rows come from their owners in rounds of at most 4 MiB sent per
 * process and land straight in the caller's array. A set of 2^20 elements with a dat of 16
 * doubles each (128 bytes a row), partitioned RANDOM so most rows live on another process, is
 * fetched (a second time: the first makes the set's plan) into an array the test has already
 * touched; with the heap's free memory returned (malloc_trim), the process's peak resident
 * memory (VmHWM, reset just before through /proc/self/clear_refs) may grow by at most a quarter of the
 * block (it grew by about four blocks when every row was copied through op2's own buffers).
 * Every value is checked.
 * mpi-n: 2 3 */
#include "test.h"
#include <mpi.h>
#include <malloc.h>

#define N (1 << 20)
#define DIM 16

/* A kB field of /proc/self/status. */
static long status_kib(const char *field)
{
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':') {
      v = atol(line + n + 1);
      break;
    }
  fclose(f);
  return v;
}

int main(int argc, char **argv)
{
  int rank, p;
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  p = op_num_ranks();
  op_rank(&rank);
  int lo = (int)((long)N * rank / p), n = (int)((long)N * (rank + 1) / p) - lo;
  double *init = malloc(sizeof(double) * DIM * (size_t)n);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < DIM; k++) init[(size_t)i * DIM + k] = (double)(lo + i) * 100.0 + k;
  op_set nodes = op_decl_set(n, "nodes");
  op_dat v = op_decl_dat(nodes, DIM, "double", init, "v");
  CHECK_OK();
  free(init);
  op_partition("RANDOM", NULL, nodes, OP_ID, NULL);
  CHECK_OK();

  double *buf = malloc(sizeof(double) * DIM * (size_t)n);
  memset(buf, 0, sizeof(double) * DIM * (size_t)n);
  /* the first fetch makes the set's plan (where each owned row goes), kept for later fetches */
  op_fetch_data(v, buf);
  CHECK_OK();
  memset(buf, 0, sizeof(double) * DIM * (size_t)n);
  /* memory freed so far goes back to the system, so what the fetch allocates shows */
  malloc_trim(0);
  FILE *cr = fopen("/proc/self/clear_refs", "w");
  int reset = cr && fputs("5", cr) >= 0;
  if (cr) fclose(cr);
  long before = status_kib("VmHWM");
  op_fetch_data(v, buf);
  CHECK_OK();
  long after = status_kib("VmHWM");
  long block_kib = (long)n * DIM * (long)sizeof(double) / 1024;
  if (reset && before > 0 && after > 0 && after - before > block_kib / 4)
    test_fail_(__FILE__, __LINE__, "op_fetch_data grew the peak by %ld KiB (the block is %ld KiB)", after - before,
               block_kib);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < DIM; k++) CHECK_DBL(buf[(size_t)i * DIM + k], (double)(lo + i) * 100.0 + k);
  free(buf);
  op_exit();
  return 0;
}
