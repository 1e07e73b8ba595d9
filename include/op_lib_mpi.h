/*
 * op_lib_mpi.h: OP2's MPI header, as op2 provides it. op2's calls are the same with and
 * without MPI (op_init starts MPI under a launcher; op_partition distributes); this header
 * gives OP2's MPI programs what they take from OP2's: <mpi.h>, and MPI_ROOT as OP2 defines
 * it, the rank (0) that reads the mesh (MPI's own MPI_ROOT, -4 in OpenMPI, is for
 * intercommunicators). See doc/mpi.md and doc/porting.md.
 */
#ifndef OP2_OP_LIB_MPI_H
#define OP2_OP_LIB_MPI_H

#include <mpi.h>
#include "op_lib_core.h"

#ifdef MPI_ROOT
#undef MPI_ROOT
#endif
#define MPI_ROOT 0

#endif /* OP2_OP_LIB_MPI_H */
