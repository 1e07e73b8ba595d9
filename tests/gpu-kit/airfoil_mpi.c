/* The GPU kit's Airfoil for its MPI step (tests/gpu-kit/step-mpi.sh): examples-c/airfoil/airfoil.c
 * as it is, compiled with two of its op2 calls wrapped, to report what a device run under MPI
 * moves between host and device. op_decl_dat records each dat; after op_timing_output (still in
 * the session) every process prints one line
 *   airfoil-transfers: process R of P: NAME up U down D; ...; total up U down D
 * with op_dat_transfers' bytes for each dat (host to device: up; device to host: down), and the
 * root process prints op_diagnostic_output (whose mpi line says whether the MPI library is
 * CUDA-aware and how device halos go). Built by tests/gpu-kit/build-mpi.sh with the same
 * generated kernel header as the kit's airfoil. */
#include "op2.h"
#include <stdio.h>

static op_dat kit_decl_dat(op_set set, int dim, const char *type, const void *data, const char *name);
static void kit_timing_output(void);
#define op_decl_dat kit_decl_dat
#define op_timing_output kit_timing_output
#include "airfoil.c"
#undef op_decl_dat
#undef op_timing_output

#define KIT_MAX_DATS 16
static op_dat kit_dats[KIT_MAX_DATS];
static const char *kit_names[KIT_MAX_DATS];
static int kit_ndats;

static op_dat kit_decl_dat(op_set set, int dim, const char *type, const void *data, const char *name)
{
  op_dat d = op_decl_dat(set, dim, type, data, name);
  if (kit_ndats < KIT_MAX_DATS) {
    kit_dats[kit_ndats] = d;
    kit_names[kit_ndats++] = name;
  }
  return d;
}

static void kit_timing_output(void)
{
  char line[1024];
  size_t n;
  long long up, down, tup = 0, tdown = 0;
  int rank = 0, i;
  op_timing_output();
  fflush(stdout);
  op_rank(&rank);
  n = (size_t)snprintf(line, sizeof line, "airfoil-transfers: process %d of %d:", rank, op_num_ranks());
  for (i = 0; i < kit_ndats && n < sizeof line; i++) {
    op_dat_transfers(kit_dats[i], &up, &down);
    tup += up;
    tdown += down;
    n += (size_t)snprintf(line + n, sizeof line - n, " %s up %lld down %lld;", kit_names[i], up, down);
  }
  if (n < sizeof line) snprintf(line + n, sizeof line - n, " total up %lld down %lld", tup, tdown);
  printf("%s\n", line);
  fflush(stdout);
  if (rank == 0) {
    op_diagnostic_output();
    fflush(stdout);
  }
}
