/*
 * op_profile.h: OP2's profiling calls, as op2 provides them (op_profile_start, _enter, _exit,
 * _next, _end, _output: declared in op2.h). See doc/porting.md.
 */
#ifndef OP2_OP_PROFILE_H
#define OP2_OP_PROFILE_H

#include "op2.h"

#endif /* OP2_OP_PROFILE_H */
