/* A checkpoint present at restart is used or refused on every process, never ignored by some
 * (issue 37, point 9). Under MPI op_checkpointing_init agrees on what every process sees at
 * the path: each process works in a directory of its own (as on nodes without a shared file
 * system) and names the checkpoint "run.ck" relative to it.
 *  - process 1 (only) has a file there: OP2_ERR_CHECKPOINT on every process naming both
 *    processes' views (before, process 0 alone looked, saw nothing, and every process started
 *    afresh, silently);
 *  - process 0 (only) has it: the same refusal (before, the collective open failed with an
 *    HDF5 message that did not say why);
 *  - processes naming different files: OP2_ERR_BAD_CONFIG naming both;
 *  - all in one directory: checkpointing is on, on every process.
 * mpi-backends: seq
 * mpi-n: 2 */
#include "test.h"
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

static int init_in(const char *backend, const char *path)
{
  char prog[] = "t846", tok[64];
  int on;
  snprintf(tok, sizeof tok, "OP2_BACKEND=%s", backend);
  test_init_tokens(prog, tok, (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
  on = op_checkpointing_init(path, 1e9, 0);
  return on;
}

static void touch(const char *path)
{
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs("a checkpoint seen by one process only\n", f);
  fclose(f);
}

int main(int argc, char **argv)
{
  char own[64], other[64], top[4096];
  int rank, p;
  if (argc < 2) return 2;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  CHECK(getcwd(top, sizeof top) != NULL);
  snprintf(own, sizeof own, "t846-r%d", rank);
  mkdir(own, 0700);
  CHECK(chdir(own) == 0);
  unlink("run.ck");
  MPI_Barrier(MPI_COMM_WORLD);

  /* process 1 sees a file, process 0 does not */
  if (rank == 1) touch("run.ck");
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_INT(init_in(argv[1], "run.ck"), 0);
  CHECK_ERR(OP2_ERR_CHECKPOINT, "op_checkpointing_init", "'run.ck'", "process 0 sees nothing there",
            "process 1 sees a file there", "every process must see the same file");
  op_exit();
  if (rank == 1) CHECK(unlink("run.ck") == 0);

  /* process 0 sees a file, process 1 does not */
  if (rank == 0) touch("run.ck");
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_INT(init_in(argv[1], "run.ck"), 0);
  CHECK_ERR(OP2_ERR_CHECKPOINT, "op_checkpointing_init", "process 0 sees a file there", "process 1 sees nothing there");
  op_exit();
  if (rank == 0) CHECK(unlink("run.ck") == 0);

  /* different names */
  snprintf(other, sizeof other, "run-%d.ck", rank);
  CHECK_INT(init_in(argv[1], other), 0);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_checkpointing_init", "process 1 names the checkpoint 'run-1.ck', process 0 'run-0.ck'");
  op_exit();

  /* one directory for all: on everywhere */
  CHECK(chdir(top) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_INT(init_in(argv[1], "t846-shared.ck"), 1);
  CHECK_OK();
  op_exit();

  MPI_Barrier(MPI_COMM_WORLD);
  rmdir(own);
  (void)p;
  MPI_Finalize();
  return 0;
}
