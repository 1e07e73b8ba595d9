//! The host C emitter (targets `seq` and `threads`): one translation unit holding the
//! constants, the user's kernel and a wrapper over an element range `[start, end)` that gathers
//! pointers through maps and calls the kernel, so the C compiler inlines it (the "Sequential
//! backend" of PyOP2's backend notes).
//!
//! ABI of the generated library (its symbol names and the rule of which globals are copied into
//! wrapper locals are in `backend::host::codegen::abi`, shared with the vectorised wrapper of `backend::host::codegen::simd`):
//! - `void op2_loop(int op2_start, int op2_end, void *const *op2_slots)`: `op2_slots[2*i]` is
//!   argument `i`'s data (dat base, global or info buffer; NULL for a disabled optional dat) and
//!   `op2_slots[2*i+1]` its map (`const int *`, row-major) or NULL; `op2_slots[2*nargs]` is a
//!   private scratch array of `scratch_entries(args)` pointers when that is non-zero.
//! - `void op2_set_constants(void *const *op2_src)`: copies each used constant, in name order,
//!   from `op2_src[k]`. Present only when the kernel uses constants.
//! - `void op2_loop_list(int op2_start, int op2_end, const int *op2_list, void *const *op2_slots)`:
//!   as `op2_loop`, for the elements `op2_list[op2_start]` to `op2_list[op2_end - 1]` in that
//!   order (a sparse tile's iterations of a loop scattered over its set: one call instead of one
//!   per run). Present only in loops with an argument reached through a map (`has_list`).
//!
//! Every identifier the generated code introduces starts with `op2_` (the prefix is reserved for
//! it), so any other name (`n`, `src`, `gamma`, `index`, ...) is free for the user's constants,
//! kernels and helpers; the code is ISO C (compiled with `-std=c11`).

pub mod abi;
pub mod fptr;
pub mod rewrite;
pub mod simd;

use crate::arg::{ArgDesc, DatAccess};
use crate::backend::host::codegen::abi::{gbl_is_local, CONSTS_SYMBOL, LIST_SYMBOL, LOOP_SYMBOL};
use crate::codegen::writer::{comment_text, CodeWriter};
use crate::codegen::LoopSignature;

/// Vector arguments over maps of up to this arity fill their pointer array with one statement
/// per entry; larger arities use a loop.
pub const VEC_UNROLL_MAX: usize = 8;
/// Vector arguments over maps of up to this arity keep their pointer array on the stack;
/// larger ones use the scratch array the driver passes in the last slot (see `scratch_entries`).
pub const VEC_STACK_MAX: usize = 256;

/// MIN/MAX and the math constants of the kernel environment that strict ISO C's `<math.h>`
/// leaves out (also in the CUDA prelude, `KERNEL_MACROS`).
macro_rules! kernel_macros {
    () => {
        "#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
/* OP2's accessor for dats that generated code may store structure-of-arrays: a kernel always
   sees its arguments' components contiguously, so it is plain indexing here. */
#ifndef OP2_STRIDE
#define OP2_STRIDE(arr, idx) (arr)[idx]
#endif
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
"
    };
}
pub const KERNEL_MACROS: &str = kernel_macros!();
/// The prelude every kernel sees (the contract's "Kernel environment"): ISO C headers, OP2's
/// MIN/MAX and the common math constants that strict ISO C's `<math.h>` leaves out.
const PRELUDE: &str = concat!(
    "#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

",
    kernel_macros!(),
    "
#define OP2_EXPORT __attribute__((visibility(\"default\")))
"
);

/// Pointer entries of the scratch array a loop's wrapper expects in `slots[2 * nargs]`: the
/// sum of the arities of vector arguments too large for the stack (0: no scratch slot used).
pub fn scratch_entries(args: &[ArgDesc]) -> usize {
    args.iter()
        .map(|a| match *a {
            ArgDesc::Dat { how: DatAccess::Vector { map_dim }, .. } if map_dim > VEC_STACK_MAX => map_dim,
            _ => 0,
        })
        .sum()
}

/// Generates the translation unit for one loop.
pub fn generate(sig: &LoopSignature) -> String {
    generate_with(sig, None)
}

/// Generates the translation unit for one loop, with the vectorised wrapper of `backend::host::codegen::simd`
/// when `simd` gives its mode and lanes and the kernel rewriter accepts the kernel (else the
/// unit says why not).
pub fn generate_with(sig: &LoopSignature, simd: Option<(crate::config::SimdMode, usize)>) -> String {
    let simd_kernel = simd.map(|(_, lanes)| crate::backend::host::codegen::simd::rewritten_kernel(sig, lanes));
    let mut w = CodeWriter::new();
    w.line(format!(
        "/* op2 loop '{}' (kernel '{}'), target host C (seq, threads), signature {} */",
        comment_text(sig.loop_name),
        sig.kernel_name,
        sig.hash()
    ));
    for (i, a) in sig.args.iter().enumerate() {
        w.line(format!("/*   arg {i}: {} */", describe(a)));
    }
    w.raw(PRELUDE);
    w.line("");
    emit_const_decls(&mut w, sig.consts, "the kernel uses");
    // Diagnostics inside the kernel are reported with the user's own line numbers.
    w.line(format!("#line 1 {}", sig.kernel_origin));
    w.raw(sig.kernel_source);
    if let Some(Ok(r)) = &simd_kernel {
        w.raw(&r.text);
    }
    let next = w.next_line_number();
    w.line(format!("#line {} \"op2-wrapper:{}\"", next + 1, sig.kernel_name));
    w.line("");
    emit_consts_loader(&mut w, sig.consts);
    emit_range_wrapper(&mut w, sig);
    if has_list(sig.args) {
        w.line("");
        emit_range_wrapper_as(&mut w, sig, &format!("OP2_EXPORT void {LIST_SYMBOL}"), true);
    }
    match (simd, &simd_kernel) {
        (Some((mode, lanes)), Some(Ok(r))) => {
            w.line("");
            crate::backend::host::codegen::simd::emit_wrapper(&mut w, sig, mode, lanes, &r.inc_order);
            if has_list(sig.args) {
                w.line("");
                crate::backend::host::codegen::simd::emit_list_wrapper(&mut w, sig, lanes, &r.inc_order);
            }
        }
        (_, Some(Err(reason))) => {
            w.line("");
            crate::backend::host::codegen::simd::emit_refused(&mut w, reason);
        }
        _ => {}
    }
    w.finish()
}

/// Elements each fused loop runs before the next one takes the same elements (`generate_fused`):
/// a block's data is still in the first-level cache when the next kernel reads it.
pub const FUSED_BLOCK: usize = 128;

/// Generates one translation unit running several loops over the same set as one loop (soft
/// fusion of a chain's loops whose dependencies are all direct): each loop's range wrapper as
/// a static function `op2_loop_<k>`, and `op2_loop` running blocks of `FUSED_BLOCK` elements
/// through each in turn (for a direct dependency, element i of a later loop needs only element
/// i of the earlier ones, so any blocking gives the unfused results bit for bit). Slots: each
/// loop's two per argument, back to back, then one (unused) scratch slot; loops whose vector
/// arguments need scratch are not fused. `consts` is the union of the loops' constants, sorted
/// by name, in the order `op2_set_constants` loads them. A kernel (name and source) used by two
/// of the loops appears once; two different kernels or helpers of the same name do not compile,
/// and the caller runs the loops unfused.
pub fn generate_fused(sigs: &[LoopSignature], consts: &[crate::codegen::ConstDecl]) -> String {
    let mut w = CodeWriter::new();
    let names: Vec<String> = sigs.iter().map(|s| comment_text(s.loop_name)).collect();
    w.line(format!("/* op2 fused loops '{}', target host C (seq, threads) */", names.join("' + '")));
    for (k, sig) in sigs.iter().enumerate() {
        w.line(format!("/* loop {k}: '{}' (kernel '{}'), signature {} */", names[k], sig.kernel_name, sig.hash()));
        for (i, a) in sig.args.iter().enumerate() {
            w.line(format!("/*   arg {i}: {} */", describe(a)));
        }
    }
    w.raw(PRELUDE);
    w.line("");
    emit_const_decls(&mut w, consts, "the kernels use");
    let mut emitted: Vec<(&str, &str)> = Vec::new();
    for sig in sigs {
        if emitted.contains(&(sig.kernel_name, sig.kernel_source)) {
            continue;
        }
        emitted.push((sig.kernel_name, sig.kernel_source));
        w.line(format!("#line 1 {}", sig.kernel_origin));
        w.raw(sig.kernel_source);
    }
    let next = w.next_line_number();
    w.line(format!("#line {} \"op2-wrapper:fused\"", next + 1));
    w.line("");
    emit_consts_loader(&mut w, consts);
    for (k, sig) in sigs.iter().enumerate() {
        emit_range_wrapper_as(&mut w, sig, &format!("static void {LOOP_SYMBOL}_{k}"), false);
        w.line("");
    }
    w.line(format!("/* Blocks of {FUSED_BLOCK} elements through each loop in turn. */"));
    w.open(format!("OP2_EXPORT void {LOOP_SYMBOL}(int op2_start, int op2_end, void *const *op2_slots)"));
    w.open(format!("for (long long op2_b = op2_start; op2_b < op2_end; op2_b += {FUSED_BLOCK})"));
    w.line(format!("int op2_e = op2_end - op2_b > {FUSED_BLOCK} ? (int)op2_b + {FUSED_BLOCK} : op2_end;"));
    let mut at = 0;
    for (k, sig) in sigs.iter().enumerate() {
        w.line(format!("{LOOP_SYMBOL}_{k}((int)op2_b, op2_e, op2_slots + {at});"));
        at += 2 * sig.args.len();
    }
    w.close();
    w.close();
    w.finish()
}

/// The file-scope copies of `consts` (none: nothing), under a comment saying whose they are.
fn emit_const_decls(w: &mut CodeWriter, consts: &[crate::codegen::ConstDecl], whose: &str) {
    if consts.is_empty() {
        return;
    }
    w.line(format!("/* Constants {whose}; values are loaded by op2_set_constants. */"));
    for c in consts {
        if let Some(sym) = &c.symbol {
            // A Fortran module variable, defined by the kernel's Fortran objects.
            let dims = if c.dim == 1 { String::new() } else { format!("[{}]", c.dim) };
            w.line(format!("extern {} {sym}{dims}; /* the Fortran variable of '{}' */", c.ty.c_name(), c.name));
        } else if c.dim == 1 {
            w.line(format!("static {} {};", c.ty.c_name(), c.name));
        } else {
            w.line(format!("static {} {}[{}];", c.ty.c_name(), c.name, c.dim));
        }
    }
    w.line("");
}

/// `op2_set_constants`, copying each of `consts` in order from `op2_src[k]` (none: nothing).
fn emit_consts_loader(w: &mut CodeWriter, consts: &[crate::codegen::ConstDecl]) {
    if consts.is_empty() {
        return;
    }
    w.open(format!("OP2_EXPORT void {CONSTS_SYMBOL}(void *const *op2_src)"));
    for (k, c) in consts.iter().enumerate() {
        let target = c.symbol.as_deref().unwrap_or(&c.name);
        if c.dim == 1 {
            w.line(format!("memcpy(&{0}, op2_src[{k}], sizeof({0}));", target));
        } else {
            w.line(format!("memcpy({0}, op2_src[{k}], sizeof({0}));", target));
        }
    }
    w.close();
    w.line("");
}

/// One line describing an argument descriptor (`dat double[4] OP_READ direct`).
pub fn describe(a: &ArgDesc) -> String {
    match *a {
        ArgDesc::Dat { ty, dim, acc, how, optional } => {
            let via = match how {
                DatAccess::Direct => "direct".to_string(),
                DatAccess::Indirect { map_dim, idx } => format!("map[{map_dim}] idx {idx}"),
                DatAccess::Vector { map_dim } => format!("map[{map_dim}] all (vector)"),
            };
            let opt = if optional { ", optional" } else { "" };
            format!("dat {}[{dim}] {} {via}{opt}", ty.api_name(), acc.c_name())
        }
        ArgDesc::Gbl { ty, dim, acc } => format!("global {}[{dim}] {}", ty.api_name(), acc.c_name()),
        ArgDesc::Idx { map_dim: None, .. } => "element index".to_string(),
        ArgDesc::Idx { map_dim: Some(d), idx } => format!("map[{d}] entry {idx}"),
        ArgDesc::Info { ty, dim, reference } => {
            format!("info {}[{dim}] following arg {reference}", ty.api_name())
        }
        ArgDesc::Mat { ty, rows, cols, acc } => format!("mat {}[{rows}x{cols}] {}", ty.api_name(), acc.c_name()),
    }
}

fn emit_range_wrapper(w: &mut CodeWriter, sig: &LoopSignature) {
    emit_range_wrapper_as(w, sig, &format!("OP2_EXPORT void {LOOP_SYMBOL}"), false);
}

/// Whether a loop's library has the list wrappers (`op2_loop_list`, `op2_loop_simd_list`): some
/// argument is reached through a map, so a sparse tile may hold its iterations scattered over
/// the set (a loop without one has only its tiles' few long runs).
pub fn has_list(args: &[ArgDesc]) -> bool {
    args.iter().any(|a| match *a {
        ArgDesc::Dat { how, .. } => how != DatAccess::Direct,
        ArgDesc::Idx { map_dim, .. } => map_dim.is_some(),
        ArgDesc::Mat { .. } => true,
        ArgDesc::Gbl { .. } | ArgDesc::Info { .. } => false,
    })
}

/// Whether the elements of a loop over `args` may run in SIMD lanes at once, in any order: no
/// argument writes through a map (two elements may share a target), reduces into a global, or
/// follows a reduction.
fn lanes_independent(args: &[ArgDesc]) -> bool {
    args.iter().all(|a| match *a {
        ArgDesc::Dat { acc, how, .. } => how == DatAccess::Direct || acc == crate::arg::Access::Read,
        ArgDesc::Gbl { acc, .. } => acc == crate::arg::Access::Read,
        ArgDesc::Idx { .. } => true,
        ArgDesc::Info { .. } | ArgDesc::Mat { .. } => false,
    })
}

/// The range wrapper of `sig` as the function `head` (return type and name); with `list`, the
/// list wrapper (elements `op2_list[op2_start..op2_end]`).
fn emit_range_wrapper_as(w: &mut CodeWriter, sig: &LoopSignature, head: &str, list: bool) {
    let nargs = sig.args.len();
    if list {
        w.line("/* Runs the kernel for elements op2_list[op2_start] to op2_list[op2_end - 1], in that order. */");
    } else {
        w.line("/* Runs the kernel for elements [op2_start, op2_end); see the ABI note in op2's codegen/host.rs. */");
    }
    // A Fortran kernel is a compiled subroutine that link-time optimisation may inline: GCC
    // judges most too large to inline on its own (Airfoil's adt_calc stayed a call), so the
    // loop is `flatten`ed; where elements are independent the loop is also `omp simd`, which
    // GCC then vectorises with the subroutine inlined (the same arithmetic per lane: no fused
    // multiply-adds, no reassociation).
    let fortran = crate::codegen::is_fortran_stand_in(sig.kernel_source);
    let head = if fortran { head.replacen("void ", "__attribute__((flatten)) void ", 1) } else { head.to_string() };
    let list_param = if list { "const int *op2_list, " } else { "" };
    w.open(format!("{head}(int op2_start, int op2_end, {list_param}void *const *op2_slots)"));
    let mut scratch_at = 0usize;
    if scratch_entries(sig.args) > 0 {
        w.line(format!("void **op2_scratch = (void **)op2_slots[{}];", 2 * nargs));
    }
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, how, .. } => {
                w.line(format!("{0} *op2_a{i} = ({0} *)op2_slots[{1}];", ty.c_name(), 2 * i));
                if how != DatAccess::Direct {
                    w.line(format!("const int *op2_m{i} = (const int *)op2_slots[{}];", 2 * i + 1));
                }
                if let DatAccess::Vector { map_dim } = how {
                    if map_dim > VEC_STACK_MAX {
                        w.line(format!("{} **op2_v{i} = ({0} **)(op2_scratch + {scratch_at});", ty.c_name()));
                        scratch_at += map_dim;
                    }
                }
            }
            ArgDesc::Gbl { ty, dim, .. } | ArgDesc::Info { ty, dim, .. } => {
                w.line(format!("{0} *op2_a{i} = ({0} *)op2_slots[{1}];", ty.c_name(), 2 * i));
                if gbl_is_local(ty, dim) {
                    // Small globals live in a local copy for the whole range: the kernel, once
                    // inlined, keeps them in registers instead of reloading them after every
                    // store through a pointer that might alias them (what a hand-written loop
                    // over a local does).
                    w.line(format!("{} op2_g{i}[{dim}];", ty.c_name()));
                    w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_g{i}[op2_k] = op2_a{i}[op2_k];"));
                }
            }
            ArgDesc::Mat { ty, .. } => {
                // The matrix's values and the element-to-CSR-slot table of this argument.
                w.line(format!("{0} *op2_a{i} = ({0} *)op2_slots[{1}];", ty.c_name(), 2 * i));
                w.line(format!("const int *op2_m{i} = (const int *)op2_slots[{}];", 2 * i + 1));
            }
            ArgDesc::Idx { map_dim, .. } => {
                // Declared numbering after op_renumber: the target set's storage-to-declared
                // table, or NULL when the set keeps its declared order.
                w.line(format!("const int *op2_o{i} = (const int *)op2_slots[{}];", 2 * i));
                if map_dim.is_some() {
                    w.line(format!("const int *op2_m{i} = (const int *)op2_slots[{}];", 2 * i + 1));
                }
            }
        }
    }
    if fortran && lanes_independent(sig.args) {
        w.line("#pragma omp simd");
    }
    if list {
        w.open("for (ptrdiff_t op2_p = op2_start; op2_p < op2_end; op2_p++)");
        w.line("ptrdiff_t op2_n = op2_list[op2_p];");
    } else {
        w.open("for (ptrdiff_t op2_n = op2_start; op2_n < op2_end; op2_n++)");
    }
    let mut call = Vec::with_capacity(nargs);
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, dim, how, optional, .. } => {
                let expr = match how {
                    DatAccess::Direct => format!("op2_a{i} + op2_n * {dim}"),
                    DatAccess::Indirect { map_dim, idx } => {
                        format!("op2_a{i} + (ptrdiff_t)op2_m{i}[op2_n * {map_dim} + {idx}] * {dim}")
                    }
                    DatAccess::Vector { map_dim } => {
                        if map_dim <= VEC_STACK_MAX {
                            w.line(format!("{} *op2_v{i}[{map_dim}];", ty.c_name()));
                        }
                        let fill = |w: &mut CodeWriter| {
                            if map_dim <= VEC_UNROLL_MAX {
                                for j in 0..map_dim {
                                    w.line(format!(
                                        "op2_v{i}[{j}] = op2_a{i} + (ptrdiff_t)op2_m{i}[op2_n * {map_dim} + {j}] * {dim};"
                                    ));
                                }
                            } else {
                                w.line(format!(
                                    "for (ptrdiff_t op2_j = 0; op2_j < {map_dim}; op2_j++) op2_v{i}[op2_j] = op2_a{i} + (ptrdiff_t)op2_m{i}[op2_n * {map_dim} + op2_j] * {dim};"
                                ));
                            }
                        };
                        if optional {
                            w.open(format!("if (op2_a{i})"));
                            fill(w);
                            w.close();
                        } else {
                            fill(w);
                        }
                        format!("op2_v{i}")
                    }
                };
                if optional && !matches!(how, DatAccess::Vector { .. }) {
                    call.push(format!("op2_a{i} ? (void *)({expr}) : NULL"));
                } else {
                    call.push(format!("(void *)({expr})"));
                }
            }
            ArgDesc::Gbl { ty, dim, .. } | ArgDesc::Info { ty, dim, .. } => {
                if gbl_is_local(ty, dim) {
                    call.push(format!("(void *)op2_g{i}"))
                } else {
                    call.push(format!("(void *)op2_a{i}"))
                }
            }
            ArgDesc::Idx { map_dim: None, .. } => {
                w.line(format!("int op2_x{i} = op2_o{i} ? op2_o{i}[op2_n] : (int)op2_n;"));
                call.push(format!("&op2_x{i}"));
            }
            ArgDesc::Idx { map_dim: Some(d), idx } => {
                w.line(format!("int op2_x{i} = op2_m{i}[op2_n * {d} + {idx}];"));
                w.line(format!("if (op2_o{i}) op2_x{i} = op2_o{i}[op2_x{i}];"));
                call.push(format!("&op2_x{i}"));
            }
            ArgDesc::Mat { ty, rows, cols, .. } => {
                w.line(format!("{} op2_b{i}[{}];", ty.c_name(), rows * cols));
                w.line(format!("memset(op2_b{i}, 0, sizeof(op2_b{i}));"));
                call.push(format!("(void *)op2_b{i}"));
            }
        }
    }
    w.call(sig.kernel_name, &call);
    // Matrix arguments: the local block goes into the CSR values through the slot table.
    for (i, a) in sig.args.iter().enumerate() {
        if let ArgDesc::Mat { rows, cols, acc, .. } = *a {
            let n = rows * cols;
            let op = if acc == crate::arg::Access::Write { "=" } else { "+=" };
            w.line(format!("const int *op2_s{i} = op2_m{i} + op2_n * {n};"));
            w.line(format!(
                "for (int op2_k = 0; op2_k < {n}; op2_k++) op2_a{i}[op2_s{i}[op2_k]] {op} op2_b{i}[op2_k];"
            ));
        }
    }
    w.close();
    // Reduction results and info payloads go back to the (scratch) buffers op2 combines.
    for (i, a) in sig.args.iter().enumerate() {
        let (ty, dim) = match *a {
            ArgDesc::Gbl { ty, acc, dim } if acc.is_reduction() => (ty, dim),
            ArgDesc::Info { ty, dim, .. } => (ty, dim),
            _ => continue,
        };
        if gbl_is_local(ty, dim) {
            w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_a{i}[op2_k] = op2_g{i}[op2_k];"));
        }
    }
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arg::Access;
    use crate::codegen::ConstDecl;
    use crate::core::ElemType;

    fn sample() -> (Vec<ArgDesc>, Vec<ConstDecl>) {
        let args = vec![
            ArgDesc::Dat {
                ty: ElemType::Double,
                dim: 2,
                acc: Access::Read,
                how: DatAccess::Indirect { map_dim: 2, idx: 1 },
                optional: false,
            },
            ArgDesc::Dat {
                ty: ElemType::Double,
                dim: 4,
                acc: Access::Inc,
                how: DatAccess::Vector { map_dim: 2 },
                optional: false,
            },
            ArgDesc::Dat { ty: ElemType::Float, dim: 1, acc: Access::Write, how: DatAccess::Direct, optional: true },
            ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Access::Max },
            ArgDesc::Info { ty: ElemType::Int, dim: 1, reference: 3 },
            ArgDesc::Idx { map_dim: None, idx: 0 },
        ];
        let consts = vec![
            ConstDecl { name: "gam".into(), ty: ElemType::Double, dim: 1, symbol: None },
            ConstDecl { name: "qinf".into(), ty: ElemType::Double, dim: 4, symbol: None },
        ];
        (args, consts)
    }

    /// A snapshot of the whole translation unit: generated code is part of our interface (users
    /// read it with OP2_DUMP_SOURCE), so changes to it must be deliberate.
    #[test]
    fn snapshot() {
        let (args, consts) = sample();
        let src = "void k(const double *x, double **r, float *o, double *m, int *l, int *i) {\n  *m = gam;\n}\n";
        let sig = LoopSignature {
            loop_name: "demo",
            kernel_name: "k",
            kernel_source: src,
            kernel_origin: "\"kernel:k\"",
            args: &args,
            consts: &consts,
        };
        let got = generate(&sig);
        let expected = format!(
            r#"/* op2 loop 'demo' (kernel 'k'), target host C (seq, threads), signature {} */
/*   arg 0: dat double[2] OP_READ map[2] idx 1 */
/*   arg 1: dat double[4] OP_INC map[2] all (vector) */
/*   arg 2: dat float[1] OP_WRITE direct, optional */
/*   arg 3: global double[1] OP_MAX */
/*   arg 4: info int[1] following arg 3 */
/*   arg 5: element index */
{PRELUDE}
/* Constants the kernel uses; values are loaded by op2_set_constants. */
static double gam;
static double qinf[4];

#line 1 "kernel:k"
void k(const double *x, double **r, float *o, double *m, int *l, int *i) {{
  *m = gam;
}}
#line 50 "op2-wrapper:k"

OP2_EXPORT void op2_set_constants(void *const *op2_src) {{
  memcpy(&gam, op2_src[0], sizeof(gam));
  memcpy(qinf, op2_src[1], sizeof(qinf));
}}

/* Runs the kernel for elements [op2_start, op2_end); see the ABI note in op2's codegen/host.rs. */
OP2_EXPORT void op2_loop(int op2_start, int op2_end, void *const *op2_slots) {{
  double *op2_a0 = (double *)op2_slots[0];
  const int *op2_m0 = (const int *)op2_slots[1];
  double *op2_a1 = (double *)op2_slots[2];
  const int *op2_m1 = (const int *)op2_slots[3];
  float *op2_a2 = (float *)op2_slots[4];
  double *op2_a3 = (double *)op2_slots[6];
  double op2_g3[1];
  for (int op2_k = 0; op2_k < 1; op2_k++) op2_g3[op2_k] = op2_a3[op2_k];
  int *op2_a4 = (int *)op2_slots[8];
  int op2_g4[1];
  for (int op2_k = 0; op2_k < 1; op2_k++) op2_g4[op2_k] = op2_a4[op2_k];
  const int *op2_o5 = (const int *)op2_slots[10];
  for (ptrdiff_t op2_n = op2_start; op2_n < op2_end; op2_n++) {{
    double *op2_v1[2];
    op2_v1[0] = op2_a1 + (ptrdiff_t)op2_m1[op2_n * 2 + 0] * 4;
    op2_v1[1] = op2_a1 + (ptrdiff_t)op2_m1[op2_n * 2 + 1] * 4;
    int op2_x5 = op2_o5 ? op2_o5[op2_n] : (int)op2_n;
    k(
        (void *)(op2_a0 + (ptrdiff_t)op2_m0[op2_n * 2 + 1] * 2),
        (void *)(op2_v1),
        op2_a2 ? (void *)(op2_a2 + op2_n * 1) : NULL,
        (void *)op2_g3,
        (void *)op2_g4,
        &op2_x5);
  }}
  for (int op2_k = 0; op2_k < 1; op2_k++) op2_a3[op2_k] = op2_g3[op2_k];
  for (int op2_k = 0; op2_k < 1; op2_k++) op2_a4[op2_k] = op2_g4[op2_k];
}}
"#,
            sig.hash()
        );
        // The list wrapper follows (the loop has a map): the same body over op2_list's elements.
        let range = &expected[expected.find("/* Runs the kernel").unwrap()..];
        let list = range
            .replace(
                "/* Runs the kernel for elements [op2_start, op2_end); see the ABI note in op2's codegen/host.rs. */",
                "/* Runs the kernel for elements op2_list[op2_start] to op2_list[op2_end - 1], in that order. */",
            )
            .replace(
                "void op2_loop(int op2_start, int op2_end, void *const *op2_slots)",
                "void op2_loop_list(int op2_start, int op2_end, const int *op2_list, void *const *op2_slots)",
            )
            .replace(
                "  for (ptrdiff_t op2_n = op2_start; op2_n < op2_end; op2_n++) {\n",
                "  for (ptrdiff_t op2_p = op2_start; op2_p < op2_end; op2_p++) {\n    ptrdiff_t op2_n = op2_list[op2_p];\n",
            );
        assert!(list.contains("op2_list[op2_p]") && list.contains("op2_loop_list("));
        assert_eq!(got, format!("{expected}\n{list}"));
        // Deterministic: the same signature gives the same text, the loop name aside.
        assert_eq!(generate(&sig), got);
        // A loop without a map has no list wrapper.
        assert!(has_list(&args));
        let direct = [args[2], args[3]];
        assert!(!has_list(&direct));
        let sig = LoopSignature { args: &direct, kernel_source: "void k(float *o, double *m) {}\n", ..sig };
        assert!(!generate(&sig).contains("op2_loop_list"));
    }

    #[test]
    fn line_directive_points_after_kernel() {
        let (args, consts) = sample();
        let src = "void k(void) {}";
        let sig = LoopSignature {
            loop_name: "d",
            kernel_name: "k",
            kernel_source: src,
            kernel_origin: "\"kernel:k\"",
            args: &args[..0],
            consts: &consts[..0],
        };
        let got = generate(&sig);
        let lines: Vec<&str> = got.lines().collect();
        let pos = lines.iter().position(|l| l.starts_with("#line") && l.contains("op2-wrapper")).unwrap();
        // The directive names the number of the line that follows it.
        assert_eq!(lines[pos], format!("#line {} \"op2-wrapper:k\"", pos + 2));
        assert!(got.contains("  k();"));
    }

    /// A Fortran kernel's stand-in: the loop is flattened (the subroutine inlines), and `omp simd`
    /// only where elements are independent.
    #[test]
    fn fortran_kernels_are_flattened_and_simd_where_independent() {
        let (args, consts) = sample();
        let src = format!(
            "{}k' of 'k.f90' (Fortran files 0) */\nvoid k(double *a) {{}}\n",
            crate::codegen::FORTRAN_STAND_IN_MARK
        );
        let direct = [ArgDesc::Dat {
            ty: ElemType::Double,
            dim: 1,
            acc: Access::Write,
            how: DatAccess::Direct,
            optional: false,
        }];
        let mut sig = LoopSignature {
            loop_name: "d",
            kernel_name: "k",
            kernel_source: &src,
            kernel_origin: "\"kernel:k\"",
            args: &direct,
            consts: &consts[..0],
        };
        let got = generate(&sig);
        assert!(got.contains("OP2_EXPORT __attribute__((flatten)) void op2_loop("), "{got}");
        assert!(got.contains("#pragma omp simd\n  for (ptrdiff_t op2_n"), "{got}");
        // An indirect increment (two elements may share a target) or a reduction: no simd.
        sig.args = &args[1..2];
        assert!(!generate(&sig).contains("omp simd"));
        sig.args = &args[3..5];
        assert!(!generate(&sig).contains("omp simd"));
        sig.args = &args[..1];
        assert!(generate(&sig).contains("omp simd"), "an indirect read is independent");
        // A C kernel: neither.
        sig.kernel_source = "void k(double *a) {}";
        sig.args = &direct;
        let got = generate(&sig);
        assert!(!got.contains("flatten") && !got.contains("omp simd"));
    }

    /// Globals too large for the stack are used in place; vector arguments over wide maps fill
    /// their pointers in a loop, and the widest use the driver's scratch slot.
    #[test]
    fn large_globals_and_wide_maps() {
        let args = vec![
            ArgDesc::Gbl { ty: ElemType::Double, dim: 524_288, acc: Access::Inc },
            ArgDesc::Dat {
                ty: ElemType::Double,
                dim: 1,
                acc: Access::Read,
                how: DatAccess::Vector { map_dim: 12 },
                optional: false,
            },
            ArgDesc::Dat {
                ty: ElemType::Float,
                dim: 1,
                acc: Access::Read,
                how: DatAccess::Vector { map_dim: i32::MAX as usize },
                optional: false,
            },
        ];
        let sig = LoopSignature {
            loop_name: "evil */ name\n",
            kernel_name: "k",
            kernel_source: "void k(double *g, double **v, float **w) {}",
            kernel_origin: "\"kernel:k\"",
            args: &args,
            consts: &[],
        };
        let got = generate(&sig);
        assert!(got.starts_with("/* op2 loop 'evil * / name?' (kernel 'k')"), "{got}");
        assert!(!got.contains("op2_g0"), "a 4 MB global must not be copied to the stack");
        assert!(got.contains("        (void *)op2_a0,"));
        assert!(got
            .contains("    double *op2_v1[12];\n    for (ptrdiff_t op2_j = 0; op2_j < 12; op2_j++) op2_v1[op2_j] = "));
        assert!(got.contains("void **op2_scratch = (void **)op2_slots[6];"));
        assert!(got.contains("float **op2_v2 = (float **)(op2_scratch + 0);"));
        assert!(!got.contains("op2_v2[2147483647]"));
        assert_eq!(scratch_entries(&args), i32::MAX as usize);
        assert!(got.lines().count() < 120);
    }

    #[test]
    fn fused_unit_runs_each_loop_per_block_with_its_own_slots() {
        let (args, consts) = sample();
        let direct =
            [ArgDesc::Dat { ty: ElemType::Double, dim: 1, acc: Access::Rw, how: DatAccess::Direct, optional: false }];
        let a = LoopSignature {
            loop_name: "one",
            kernel_name: "k",
            kernel_source: "void k(double *x) { *x += gam; }\n",
            kernel_origin: "\"kernel:k\"",
            args: &direct,
            consts: &consts[..1],
        };
        let b = LoopSignature { loop_name: "two", args: &args[2..4], consts: &consts, ..a.clone() };
        let got = generate_fused(&[a.clone(), b, a], &consts);
        // The kernel shared by loops 0, 1 and 2 appears once; each constant once.
        assert_eq!(got.matches("void k(double *x)").count(), 1, "{got}");
        assert_eq!(got.matches("static double gam;").count(), 1);
        assert_eq!(got.matches("static double qinf[4];").count(), 1);
        assert!(
            got.contains("memcpy(&gam, op2_src[0], sizeof(gam));")
                && got.contains("memcpy(qinf, op2_src[1], sizeof(qinf));")
        );
        // One static range wrapper per loop, and the exported loop runs blocks through each with
        // its slots: loop 0 has 1 argument (slots 0-1), loop 1 has 2 (slots 2-5), loop 2 from 6.
        for k in 0..3 {
            assert!(
                got.contains(&format!("static void op2_loop_{k}(int op2_start, int op2_end, void *const *op2_slots)"))
            );
        }
        assert!(got.contains(&format!("for (long long op2_b = op2_start; op2_b < op2_end; op2_b += {FUSED_BLOCK})")));
        assert!(got.contains("op2_loop_0((int)op2_b, op2_e, op2_slots + 0);"));
        assert!(got.contains("op2_loop_1((int)op2_b, op2_e, op2_slots + 2);"));
        assert!(got.contains("op2_loop_2((int)op2_b, op2_e, op2_slots + 6);"));
        assert_eq!(got.matches("OP2_EXPORT void op2_loop(").count(), 1);
    }
}
