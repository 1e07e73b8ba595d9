/*
 * op_seq.h: the header OP2's programs include, as op2 provides it. It gives OP2's
 * op_par_loop(kernel, "name", set, arg0, arg1, ...) with the kernel as a C or C++ function
 * (OP2's convention: `inline void name(...)` defined in name.h, included by the program).
 *
 * The loop goes to op_par_loop_fn with the kernel's address, its name and the calling source
 * file: op2 compiles the kernel from name.h (found beside that source, or on OP2_KERNEL_PATH)
 * into its generated loop, on every backend; without the header it calls the function once
 * per element (host backends). OP2_DIAGNOSTICS=1 says which, per kernel. op2's own form,
 * op_par_loop(op_kernel, name, set, nargs, args), still works in C++ (and as (op_par_loop)(...)
 * or OP_PAR_LOOP in C). See doc/porting.md.
 */
#ifndef OP2_OP_SEQ_H
#define OP2_OP_SEQ_H

#include "op_lib_cpp.h"

#ifdef __cplusplus
#include <utility>

namespace op2_compat {

template <class... P, class... A>
inline void par_loop(char const *file, char const *kernel, void (*fn)(P...), char const *name, op_set set,
                     A... args) {
  static_assert(sizeof...(P) == sizeof...(A),
                "op_par_loop: the kernel's parameters and the op_arg arguments differ in number");
  const op_arg list[sizeof...(A) > 0 ? sizeof...(A) : 1] = {args...};
  op_par_loop_fn(reinterpret_cast<void (*)(void)>(fn), kernel, file, name, set, (int)sizeof...(A), list);
}

/* op2's own loop (a kernel handle), as OP_PAR_LOOP calls it. */
inline void par_loop(char const *, char const *, op_kernel kernel, char const *name, op_set set, int nargs,
                     const op_arg *args) {
  (op_par_loop)(kernel, name, set, nargs, args);
}

}  // namespace op2_compat

#define op_par_loop(kernel, ...) op2_compat::par_loop(__FILE__, #kernel, kernel, __VA_ARGS__)

#else /* C */

#define op_par_loop(kernel, name, set, ...)                                                        \
  op_par_loop_fn((void (*)(void))(kernel), #kernel, __FILE__, (name), (set),                       \
                 (int)(sizeof((op_arg[]){__VA_ARGS__}) / sizeof(op_arg)), (op_arg[]){__VA_ARGS__})

/* OP2's three-argument op_decl_const(dim, type, &variable) beside op2's four-argument one. */
#define OP2_PICK_4_(a, b, c, d, which, ...) which
#define op_decl_const(...) OP2_PICK_4_(__VA_ARGS__, (op_decl_const), op2_decl_const3_, ~, ~)(__VA_ARGS__)
#define op2_decl_const3_(dim, type, data) op_decl_const_addr((dim), (type), (int)sizeof(*(data)), (data))

/* OP2's temporary dats (C++ templates in OP2); `data` is ignored: the dat starts at zero. */
#define op_decl_dat_temp(set, dim, type, data, name) \
  op_decl_dat_temp_char((set), (dim), (type), (int)sizeof(*(data)), (name))
#define op_free_dat_temp(dat) op_free_dat_temp_char(dat)

#endif /* __cplusplus */

#endif /* OP2_OP_SEQ_H */
