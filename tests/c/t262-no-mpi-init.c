/* A program that never uses MPI (built with plain cc: MPI is not among its own DT_NEEDED, only
 * libop2's) is never made to pay for MPI_Init (issue 21, point 5): op_init's diagnostics line
 * says "MPI not initialised", and where op2 was built with MPI (its MPI_Initialized is then
 * loaded) MPI really is not initialised, during the session and after it. */
#define _GNU_SOURCE
#include "test.h"
#include <dlfcn.h>

static const char *backend;

static void start(void)
{
  char token[128];
  char *args[2];
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  args[0] = (char *)"t262";
  args[1] = token;
  op_init(2, args, 1);
}

static int mpi_initialized(void)
{
  int (*initialized)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "MPI_Initialized");
  int flag = 0;
  if (initialized == NULL) return 0; /* op2 built without MPI */
  CHECK_INT(initialized(&flag), 0);
  return flag;
}

int main(int argc, char **argv)
{
  char *out;
  if (argc < 2) return 2;
  backend = argv[1];
  out = test_stdout_of(start);
  CHECK_OK();
  if (strstr(out, "MPI not initialised") == NULL) test_fail_(__FILE__, __LINE__, "diagnostics: \"%s\"", out);
  free(out);
  CHECK_INT(op_num_ranks(), 1);
  CHECK_INT(mpi_initialized(), 0);
  op_exit();
  CHECK_INT(mpi_initialized(), 0);
  return 0;
}
