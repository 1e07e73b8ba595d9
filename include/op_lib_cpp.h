/*
 * op_lib_cpp.h: OP2's C++ API header, as op2 provides it for programs written for OP2: OP2's
 * C++ forms of the declarations on top of op2.h's C API. See doc/porting.md.
 */
#ifndef OP2_OP_LIB_CPP_H
#define OP2_OP_LIB_CPP_H

#include "op_lib_c.h"

#ifdef __cplusplus

/* op_decl_const(dim, "double", &gam): declares the constant under the name of the program
 * variable at that address (op_decl_const_addr finds it in the program's symbol table), so
 * that kernels op2 compiles see `gam`. */
template <class T> inline void op_decl_const(int dim, char const *type, T *data) {
  op_decl_const_addr(dim, type, (int)sizeof(T), (const void *)data);
}

/* The form OP2's translator writes, with the name given. */
template <class T> inline void op_decl_const2(char const *name, int dim, char const *type, T *data) {
  op_decl_const_char(dim, type, (int)sizeof(T), (const char *)data, name);
}

/* A temporary dat: zeros, whatever `data` is (OP2 ignores it too); freed by op_free_dat_temp. */
template <class T> inline op_dat op_decl_dat_temp(op_set set, int dim, char const *type, T *data, char const *name) {
  (void)data;
  return op_decl_dat_temp_char(set, dim, type, (int)sizeof(T), name);
}

inline int op_free_dat_temp(op_dat dat) { return op_free_dat_temp_char(dat); }

/* OP2's global arguments take const data for OP_READ. */
template <class T> inline op_arg op_arg_gbl(const T *data, int dim, char const *type, op_access acc) {
  return op_arg_gbl((void *)data, dim, type, acc);
}

#endif /* __cplusplus */

#endif /* OP2_OP_LIB_CPP_H */
