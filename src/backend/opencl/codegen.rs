//! The OpenCL C emitter (target `opencl`): one program per loop shape and increment strategy,
//! with the user's kernel inlined unchanged.
//!
//! OpenCL 1.2 devices (PoCL on CPUs among them) have no generic address space: a user kernel's
//! unqualified pointer parameters point to `__private` memory, so every argument is staged in
//! private memory by the shared wrapper of `backend::device::codegen` (its ABI note describes the
//! generated `__kernel void op2_kernel(...)`). User kernels stay plain C.

use crate::backend::device::codegen::{drop_std_includes, Dialect, Options};
pub use crate::backend::device::codegen::{expand_includes, include_dirs, partial_words, soa_arg, IncStrategy};
use crate::codegen::LoopSignature;
use crate::core::ElemType;

/// OpenCL C as the shared wrapper writes it.
pub const DIALECT: Dialect = Dialect {
    global: "__global ",
    constant: "__constant",
    const_prefix: "",
    u64_type: "ulong",
    buffer_type,
    private_type,
    atomic_add,
    vector_arg: |e| e.to_string(),
    entry: "__kernel void op2_kernel",
    ids: "const int op2_w = (int)get_global_id(0), op2_nw = (int)get_global_size(0);",
    block_reduce: false,
    title: "OpenCL C",
    // The pragmas first; then MIN/MAX/OP2_STRIDE as every target has them (OpenCL C defines
    // the M_* constants itself, so the guarded copies there are skipped).
    prelude: &[PRELUDE, crate::backend::host::codegen::KERNEL_MACROS, PRELUDE_TYPES],
    kernel_source: opencl_source,
    after_kernel: "#undef inline\n\n",
    nan: "NAN",
    inf: "INFINITY",
};

/// The OpenCL C type of an element in device buffers.
pub fn buffer_type(ty: ElemType) -> &'static str {
    match ty {
        ElemType::Double => "double",
        ElemType::Float => "float",
        ElemType::Int => "int",
        ElemType::Uint => "uint",
        ElemType::Ll => "long",
        ElemType::Ull => "ulong",
        ElemType::Bool => "uchar",
    }
}

/// The OpenCL C type the kernel sees for an element.
fn private_type(ty: ElemType) -> &'static str {
    match ty {
        ElemType::Bool => "bool",
        t => buffer_type(t),
    }
}

/// An atomic add of `val` to `*addr` (a `__global` element of `ty`).
fn atomic_add(ty: ElemType, addr: &str, val: &str) -> String {
    match ty {
        ElemType::Double => format!("op2_atomic_add_double({addr}, {val});"),
        ElemType::Float => format!("op2_atomic_add_float({addr}, {val});"),
        ElemType::Int => format!("atomic_add({addr}, {val});"),
        ElemType::Uint => format!("atomic_add({addr}, {val});"),
        ElemType::Ll => format!("atom_add({addr}, {val});"),
        ElemType::Ull => format!("atom_add({addr}, {val});"),
        ElemType::Bool => format!("*({addr}) = (uchar)(*({addr}) + {val});"),
    }
}

/// The user's kernel as OpenCL C reads it: C's `long long` is OpenCL's `long` (64 bits), the
/// standard includes are dropped; everything else, line breaks included, unchanged.
pub fn opencl_source(src: &str) -> String {
    use crate::core::clex::{tokens, TokKind};
    let toks = tokens(src);
    let offset = |t: &str| t.as_ptr() as usize - src.as_ptr() as usize;
    let mut out = String::with_capacity(src.len());
    let mut from = 0;
    for pair in toks.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if a.kind == TokKind::Ident && a.text == "long" && b.kind == TokKind::Ident && b.text == "long" {
            let (s, e) = (offset(a.text), offset(b.text));
            out.push_str(&src[from..s]);
            // Drop the first `long`, keep any line breaks between the two.
            out.extend(src[s..e].chars().filter(|&c| c == '\n'));
            from = e;
        }
    }
    out.push_str(&src[from..]);
    drop_std_includes(&out)
}

const PRELUDE: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL FP_CONTRACT OFF

";

const PRELUDE_TYPES: &str = "/* What kernels get from <stdint.h> and <string.h> on the host (private memory). */
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;
static void *memset(void *op2_d, int op2_c, size_t op2_n)
{
  for (size_t op2_i = 0; op2_i < op2_n; op2_i++) ((uchar *)op2_d)[op2_i] = (uchar)op2_c;
  return op2_d;
}
static void *memcpy(void *op2_d, const void *op2_s, size_t op2_n)
{
  for (size_t op2_i = 0; op2_i < op2_n; op2_i++) ((uchar *)op2_d)[op2_i] = ((const uchar *)op2_s)[op2_i];
  return op2_d;
}
/* C99 `inline` without `static` would leave no definition to call in OpenCL C. */
#define inline

/* Atomic floating-point adds as compare-and-swap loops on the bit pattern. */
static void op2_atomic_add_double(volatile __global double *op2_p, double op2_v)
{
  union { ulong op2_u; double op2_d; } op2_old, op2_new;
  do {
    op2_old.op2_d = *op2_p;
    op2_new.op2_d = op2_old.op2_d + op2_v;
  } while (atom_cmpxchg((volatile __global ulong *)op2_p, op2_old.op2_u, op2_new.op2_u) != op2_old.op2_u);
}
static void op2_atomic_add_float(volatile __global float *op2_p, float op2_v)
{
  union { uint op2_u; float op2_f; } op2_old, op2_new;
  do {
    op2_old.op2_f = *op2_p;
    op2_new.op2_f = op2_old.op2_f + op2_v;
  } while (atomic_cmpxchg((volatile __global uint *)op2_p, op2_old.op2_u, op2_new.op2_u) != op2_old.op2_u);
}
";

/// Generates the OpenCL program for one loop (see `backend::device::codegen::generate`).
pub fn generate(sig: &LoopSignature, values: &[&[u8]], coloured: bool, inc: IncStrategy, soa: bool) -> String {
    generate_scratch(sig, values, coloured, inc, soa, false).unwrap_or_else(|_| {
        crate::backend::device::codegen::generate_with(&DIALECT, sig, values, coloured, inc, soa, Default::default())
    })
}

/// `generate`, with the arguments that stage more than `MAX_PRIVATE_VALUES` values per element
/// (`device::in_scratch`) staged in global-memory scratch (`device::generate_with`): the
/// kernel's parameters for them are rewritten to point to `__global` memory (OpenCL 1.2 has no
/// generic address space), so such a kernel must use them only as arrays (a helper function
/// taking one, or a plain pointer assigned from one, does not build). An error when the
/// kernel's definition is not found to rewrite. `contiguous`: see `device::generate_with` (for
/// CPU devices).
pub fn generate_scratch(
    sig: &LoopSignature,
    values: &[&[u8]],
    coloured: bool,
    inc: IncStrategy,
    soa: bool,
    contiguous: bool,
) -> Result<String, String> {
    let big: Vec<usize> =
        (0..sig.args.len()).filter(|&i| crate::backend::device::codegen::in_scratch(&sig.args[i])).collect();
    if big.is_empty() {
        return Ok(crate::backend::device::codegen::generate_with(
            &DIALECT,
            sig,
            values,
            coloured,
            inc,
            soa,
            Options { scratch: false, contiguous, stage: None },
        ));
    }
    let Some(src) =
        crate::backend::device::codegen::global_params(sig.kernel_source, sig.kernel_name, &big, "__global")
    else {
        return Err(format!(
            "arg {} stages more than {} values per element, which the opencl backend keeps in global memory, but the definition of kernel '{}' and its parameters were not found to declare them __global",
            big[0],
            crate::backend::device::codegen::MAX_PRIVATE_VALUES,
            sig.kernel_name
        ));
    };
    let sig = LoopSignature { kernel_source: &src, ..sig.clone() };
    Ok(crate::backend::device::codegen::generate_with(
        &DIALECT,
        &sig,
        values,
        coloured,
        inc,
        soa,
        Options { scratch: true, contiguous, stage: None },
    ))
}

/// The OpenCL program of a fused unit: `parts` run as one launch (`device::generate_fused`).
pub fn generate_fused(
    parts: &[LoopSignature],
    consts: &[crate::codegen::ConstDecl],
    values: &[&[u8]],
    soa: bool,
) -> String {
    crate::backend::device::codegen::generate_fused(&DIALECT, parts, consts, values, soa)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arg::{Access, ArgDesc, DatAccess};
    use crate::backend::device::codegen::{literal, unsupported};
    use crate::codegen::ConstDecl;

    fn literal_of(ty: ElemType, b: &[u8]) -> String {
        literal(&DIALECT, ty, b)
    }

    #[test]
    fn long_long_becomes_long() {
        assert_eq!(
            opencl_source("long long *x; unsigned long\nlong y; /* long long */"),
            "long *x; unsigned \nlong y; /* long long */"
        );
        assert_eq!(
            opencl_source("#include <stdint.h>\n# include \"mine.h\"\nint x;"),
            "\n# include \"mine.h\"\nint x;"
        );
    }

    #[test]
    fn large_arguments_get_global_parameters() {
        use crate::backend::device::codegen::global_params;
        let src =
            "static int h(int (*f)(int, int)) { return 0; }\nvoid k(const double *a,\n  double **b, int c[3]) { }";
        assert_eq!(
            global_params(src, "k", &[1, 0], "__global").unwrap(),
            "static int h(int (*f)(int, int)) { return 0; }\nvoid k(__global const double *a,\n  __global double **b, int c[3]) { }"
        );
        assert!(global_params(src, "k", &[3], "__global").is_none());
        assert!(global_params(src, "nope", &[0], "__global").is_none());
        let args = vec![
            ArgDesc::Dat { ty: ElemType::Double, dim: 5000, acc: Access::Rw, how: DatAccess::Direct, optional: false },
            ArgDesc::Dat { ty: ElemType::Double, dim: 2, acc: Access::Read, how: DatAccess::Direct, optional: false },
            ArgDesc::Gbl { ty: ElemType::Double, dim: 9000, acc: Access::Read },
        ];
        let sig = LoopSignature {
            loop_name: "l",
            kernel_name: "k",
            kernel_source: "void k(double *a, const double *b, const double *g) { a[0] += b[0] * g[8999]; }",
            kernel_origin: "\"kernel:k\"",
            args: &args,
            consts: &[],
        };
        let out = generate(&sig, &[], false, IncStrategy::Plain, false);
        assert!(out.contains("void k(__global double *a, const double *b, __global const double *g)"), "{out}");
        assert!(out.contains("__global double *op2_p0 = (__global double *)(op2_scr + (size_t)op2_w * 40000 + 0);"));
        assert!(out.contains("__global const double *op2_g2 = op2_d2;"));
        assert!(out.contains("double op2_p1[2];"));
        // Reductions on CPU devices: a contiguous range of elements per work-item.
        let red = vec![
            ArgDesc::Dat { ty: ElemType::Double, dim: 1, acc: Access::Read, how: DatAccess::Direct, optional: false },
            ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Access::Inc },
        ];
        let sig =
            LoopSignature { kernel_source: "void k(const double *x, double *s) { *s += *x; }", args: &red, ..sig };
        let cpu = generate_scratch(&sig, &[], false, IncStrategy::Plain, false, true).unwrap();
        assert!(cpu.contains("for (int op2_i = op2_i0; op2_i < op2_i1; op2_i++)"), "{cpu}");
        let gpu = generate_scratch(&sig, &[], false, IncStrategy::Plain, false, false).unwrap();
        assert!(gpu.contains("for (int op2_i = op2_w; op2_i < op2_count; op2_i += op2_nw)"), "{gpu}");
    }

    #[test]
    fn literals_are_exact() {
        let d = 0.1f64 + 0.2;
        let s = literal_of(ElemType::Double, &d.to_ne_bytes());
        assert_eq!(s.parse::<f64>().unwrap(), d);
        let f = 1.1f32;
        let s = literal_of(ElemType::Float, &f.to_ne_bytes());
        assert_eq!(s.trim_end_matches('f').parse::<f32>().unwrap(), f);
        assert_eq!(literal_of(ElemType::Int, &(-3i32).to_ne_bytes()), "(-3)");
        assert_eq!(literal_of(ElemType::Double, &f64::INFINITY.to_ne_bytes()), "INFINITY");
    }

    #[test]
    fn wrapper_stages_every_argument() {
        let args = vec![
            ArgDesc::Dat { ty: ElemType::Double, dim: 2, acc: Access::Read, how: DatAccess::Direct, optional: false },
            ArgDesc::Dat {
                ty: ElemType::Double,
                dim: 4,
                acc: Access::Inc,
                how: DatAccess::Indirect { map_dim: 2, idx: 1 },
                optional: false,
            },
            ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Access::Inc },
        ];
        let consts = vec![ConstDecl { name: "gam".into(), ty: ElemType::Double, dim: 1, symbol: None }];
        let v = 1.4f64.to_ne_bytes();
        let sig = LoopSignature {
            loop_name: "l",
            kernel_name: "k",
            kernel_source: "void k(const double *a, double *b, double *g) { b[0] += a[0] * gam; *g += 1; }",
            kernel_origin: "\"kernel:k\"",
            args: &args,
            consts: &consts,
        };
        let src = generate(&sig, &[&v], true, IncStrategy::Atomics, false);
        assert!(src.contains("__constant double gam = 1.3999999999999999e0;"), "{src}");
        assert!(src.contains("const int op2_e = op2_elems[op2_start + op2_i];"));
        assert!(src.contains(
            "op2_atomic_add_double(&op2_d1[(size_t)op2_m1[(size_t)op2_e * 2 + 1] * 4 + op2_k], op2_p1[op2_k]);"
        ));
        assert!(src.contains("__global double *op2_r2 = (__global double *)(op2_row + 0);"));
        assert!(src.contains("__global ulong *op2_row = op2_part + (size_t)(1 + op2_w) * 1;"), "{src}");
        assert!(src.contains("__global const ulong *op2_from = op2_w < op2_done ? op2_row : op2_part;"));
        assert!(src.contains("op2_g2[op2_k] = op2_f2[op2_k];"));
        assert_eq!(partial_words(&args), 1);
        let plain = generate(&sig, &[&v], false, IncStrategy::Plain, false);
        assert!(plain.contains("op2_d1[(size_t)op2_m1[(size_t)op2_e * 2 + 1] * 4 + op2_k] += op2_p1[op2_k];"));
        assert_eq!(generate(&sig, &[&v], false, IncStrategy::Plain, false), plain);
        assert!(unsupported(&args, "opencl").is_none());
        let blk = generate(&sig, &[&v], true, IncStrategy::Blocks, false);
        assert!(blk.contains("for (int op2_e = op2_e0; op2_e < op2_e1; op2_e++)"), "{blk}");
        assert!(blk.contains("op2_d1[(size_t)op2_m1[(size_t)op2_e * 2 + 1] * 4 + op2_k] += op2_p1[op2_k];"));
        assert!(!blk.contains("atomic_add_double(&"));
        // A direct OP_INC is the element's own: staged with its value and stored back (a kernel
        // may read it, as on seq); an indirect one starts from zero and is added.
        let direct = vec![
            ArgDesc::Dat { ty: ElemType::Double, dim: 2, acc: Access::Inc, how: DatAccess::Direct, optional: false },
            args[1],
        ];
        let sig2 = LoopSignature { args: &direct, kernel_source: "void k(double *a, double *b) { }", ..sig.clone() };
        let dsrc = generate(&sig2, &[&v], false, IncStrategy::Atomics, false);
        assert!(dsrc.contains("op2_p0[op2_k] = (double)op2_d0[(size_t)op2_e * 2 + op2_k];"), "{dsrc}");
        assert!(dsrc.contains("op2_d0[(size_t)op2_e * 2 + op2_k] = (double)op2_p0[op2_k];"), "{dsrc}");
        assert!(!dsrc.contains("op2_p0[op2_k] = 0;"), "{dsrc}");
        assert!(dsrc.contains("op2_p1[op2_k] = 0;"), "{dsrc}");
        let soa = generate(&sig, &[&v], false, IncStrategy::Plain, true);
        assert!(soa.contains("__global double *op2_d0,\n    int op2_s0,"), "{soa}");
        assert!(soa.contains("op2_p0[op2_k] = (double)op2_d0[(size_t)op2_k * op2_s0 + (size_t)op2_e];"));
        // The map is passed transposed, with its rows: consecutive elements read consecutive words.
        assert!(soa.contains("__global const int *op2_m1,\n    int op2_mr1)"), "{soa}");
        assert!(soa.contains(
            "op2_d1[(size_t)op2_k * op2_s1 + (size_t)op2_m1[(size_t)1 * op2_mr1 + op2_e]] += op2_p1[op2_k];"
        ));
        assert!(!soa.contains("op2_e * 2"), "{soa}");
    }

    /// A fused unit (device fusion, issue 23 point 10): every part's arguments numbered on from
    /// the parts before it, each loop's staging, call and write-back in its own block in loop
    /// order (a later loop reads what an earlier one stored), a kernel shared by two parts
    /// included once, `#undef inline` after all kernels, constants of all parts; and which
    /// loops may be parts.
    #[test]
    fn fused_unit_runs_each_loop_in_turn() {
        use crate::backend::device::codegen::fusable_part;
        let d = |dim, acc, how| ArgDesc::Dat { ty: ElemType::Double, dim, acc, how, optional: false };
        let a1 = [d(2, Access::Read, DatAccess::Direct), d(1, Access::Write, DatAccess::Direct)];
        let a2 = [
            d(1, Access::Rw, DatAccess::Direct),
            d(2, Access::Read, DatAccess::Indirect { map_dim: 3, idx: 2 }),
            ArgDesc::Gbl { ty: ElemType::Int, dim: 1, acc: Access::Read },
        ];
        let consts = vec![ConstDecl { name: "gam".into(), ty: ElemType::Double, dim: 1, symbol: None }];
        let v = 1.5f64.to_ne_bytes();
        let k1 = "void k1(const double *a, double *b) { *b = a[0] + a[1]; }\n";
        let k2 = "inline void k2(double *b, const double *x, const int *g) { *b += x[1] * *g * gam; }\n";
        let part = |name, kernel, src, args| LoopSignature {
            loop_name: name,
            kernel_name: kernel,
            kernel_source: src,
            kernel_origin: "\"kernel:k\"",
            args,
            consts: &[],
        };
        let parts = [part("one", "k1", k1, &a1[..]), part("two", "k2", k2, &a2[..]), part("three", "k1", k1, &a1[..])];
        let src = generate_fused(&parts, &consts, &[&v], false);
        assert!(
            src.starts_with("/* op2 fused loops 'one' + 'two' + 'three' (kernels 'k1', 'k2', 'k1'), target OpenCL C"),
            "{src}"
        );
        assert!(src.contains("/*   arg 3: loop 'two' arg 1: dat double[2] OP_READ map[3] idx 2 */"), "{src}");
        assert!(src.contains("__constant double gam = 1.5000000000000000e0;"));
        assert_eq!(src.matches("void k1(const double *a, double *b)").count(), 1, "{src}");
        let undef = src.find("#undef inline").unwrap();
        assert!(undef > src.find("void k2(").unwrap() && src.matches("#undef inline").count() == 1);
        assert!(src.contains(
            "    __global double *op2_d3,\n    __global const int *op2_m3,\n    __global const int *op2_d4,\n"
        ));
        assert!(src.contains("int op2_g4[1];"));
        let (one, two, three) = (
            src.find("/* loop 'one'").unwrap(),
            src.find("/* loop 'two'").unwrap(),
            src.find("/* loop 'three'").unwrap(),
        );
        assert!(one < two && two < three);
        // 'one' stores b (arg 1) before 'two' gathers it (arg 2), in the same work-item.
        let store = src.find("op2_d1[(size_t)op2_e * 1 + op2_k] = (double)op2_p1[op2_k];").unwrap();
        let gather = src.find("op2_p2[op2_k] = (double)op2_d2[(size_t)op2_e * 1 + op2_k];").unwrap();
        assert!(one < store && store < two && two < gather && gather < three, "{src}");
        assert!(src.contains("op2_p3[op2_k] = (double)op2_d3[(size_t)op2_m3[(size_t)op2_e * 3 + 2] * 2 + op2_k];"));
        assert!(src.contains("k1(\n          op2_p5,\n          op2_p6);"), "{src}");
        assert!(!src.contains("op2_row") && !src.contains("op2_elems[op2_start"));
        assert_eq!(generate_fused(&parts, &consts, &[&v], false), src);
        let soa = generate_fused(&parts, &consts, &[&v], true);
        assert!(soa.contains("int op2_s0,") && soa.contains("structure-of-arrays dats"));
        // Parts: direct loops, reads through maps, READ globals, indices; not increments or
        // writes through a map, reductions, infos or matrices.
        assert!(fusable_part(&a1) && fusable_part(&a2));
        assert!(fusable_part(&[ArgDesc::Idx { map_dim: None, idx: 0 }]));
        assert!(fusable_part(&[d(1, Access::Inc, DatAccess::Direct)]));
        assert!(!fusable_part(&[d(1, Access::Inc, DatAccess::Indirect { map_dim: 2, idx: 0 })]));
        assert!(!fusable_part(&[d(1, Access::Write, DatAccess::Indirect { map_dim: 2, idx: 0 })]));
        assert!(!fusable_part(&[d(1, Access::Rw, DatAccess::Vector { map_dim: 2 })]));
        assert!(!fusable_part(&[ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Access::Inc }]));
        assert!(!fusable_part(&[ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Access::Max }]));
        assert!(!fusable_part(&[d(5000, Access::Rw, DatAccess::Direct)]));
    }
}
