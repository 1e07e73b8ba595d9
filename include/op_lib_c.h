/*
 * op_lib_c.h: OP2's C API header, as op2 provides it for programs written for OP2. OP2's C
 * functions are op2.h's (same names, arguments and meanings); this header adds the handle
 * fields and helpers of op_lib_core.h. See doc/porting.md.
 */
#ifndef OP2_OP_LIB_C_H
#define OP2_OP_LIB_C_H

#include "op_lib_core.h"

#endif /* OP2_OP_LIB_C_H */
