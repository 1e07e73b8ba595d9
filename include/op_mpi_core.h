/* op_mpi_core.h: as op2 provides it, op_lib_mpi.h (OP2's programs may include either). */
#include "op_lib_mpi.h"
