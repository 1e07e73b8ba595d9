//! The CUDA C++ emitter (target `cuda`, compiled by NVRTC): one source per loop shape and
//! increment strategy. The staging wrapper is the one OpenCL uses (`codegen::device`, whose ABI
//! note describes the generated `extern "C" __global__ void op2_kernel(...)`); only the dialect
//! and the prelude differ.
//!
//! The user's kernel is compiled with NVRTC's `-default-device`, so it and any helper functions
//! in its source are `__device__` functions, inlined into the entry point. Generated code
//! includes no toolkit header (NVRTC from the pip wheel has none): what kernels get from the C
//! headers of the kernel environment is in the prelude or built into NVRTC (math functions,
//! `memcpy`, `memset`, `printf`).
//!
//! Increments: `IncStrategy::Atomics` uses `atomicAdd` (on double: compute capability 6.0 and
//! later, which `--gpu-architecture` must name); `Plain` is for loops without indirect
//! increments or launched colour by colour.

pub use super::device::IncStrategy;
use super::device::{drop_std_includes, emit_constants, emit_wrapper, Dialect};
use super::writer::CodeWriter;
use super::LoopSignature;
use crate::arg::{Access, ArgDesc};
use crate::core::ElemType;

/// CUDA C++ as the shared wrapper writes it.
pub const DIALECT: Dialect = Dialect {
    global: "",
    constant: "__constant__",
    const_prefix: "op2_const_",
    u64_type: "unsigned long long",
    buffer_type,
    private_type: buffer_type,
    atomic_add,
    vector_arg: |e| format!("op2_any({e})"),
    entry: "extern \"C\" __global__ void op2_kernel",
    ids: "const int op2_w = (int)(blockIdx.x * blockDim.x + threadIdx.x), op2_nw = (int)(gridDim.x * blockDim.x);",
    nan: "__builtin_nan(\"\")",
    inf: "__builtin_inf()",
};

/// The CUDA C++ type of an element in device buffers (and as the kernel sees it).
pub fn buffer_type(ty: ElemType) -> &'static str {
    match ty {
        ElemType::Double => "double",
        ElemType::Float => "float",
        ElemType::Int => "int",
        ElemType::Uint => "unsigned int",
        ElemType::Ll => "long long",
        ElemType::Ull => "unsigned long long",
        ElemType::Bool => "bool",
    }
}

/// An atomic add of `val` to `*addr`. Bool has no atomic add: loops that increment a bool dat
/// indirectly are coloured instead (`atomics_possible`).
fn atomic_add(ty: ElemType, addr: &str, val: &str) -> String {
    match ty {
        ElemType::Ll => format!("atomicAdd((unsigned long long *)({addr}), (unsigned long long)({val}));"),
        ElemType::Bool => format!("*({addr}) = (bool)(*({addr}) + {val});"),
        _ => format!("atomicAdd({addr}, {val});"),
    }
}

/// Whether every indirect increment of the loop has an atomic add on CUDA.
pub fn atomics_possible(args: &[ArgDesc]) -> bool {
    !args.iter().any(|a| matches!(a, ArgDesc::Dat { ty: ElemType::Bool, acc: Access::Inc, .. }) && a.needs_colouring())
}

const PRELUDE: &str = "/* No toolkit headers: NVRTC has what a kernel needs built in, and this. */
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
/* OP2's accessor for dats stored structure-of-arrays: the kernel sees staged, contiguous
   components, so it is plain indexing. */
#ifndef OP2_STRIDE
#define OP2_STRIDE(arr, idx) (arr)[idx]
#endif
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
/* <math.h>'s constants (glibc's values). */
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
/* C99 spellings in C++. */
#define restrict __restrict__
#define _Bool bool
/* Any pointer, converting to the pointer type the kernel's parameter has (C converts
   `double **` to `const double **`; C++ does not). */
struct op2_any {
  void *op2_p;
  template <class T> __device__ op2_any(T *op2_q) : op2_p((void *)op2_q) {}
  template <class T> __device__ operator T *() const { return (T *)op2_p; }
};
";

/// Generates the CUDA source for one loop. `values` holds each constant's bytes, in the order
/// of `sig.consts`; `coloured` selects the element-list form of the iteration.
pub fn generate(sig: &LoopSignature, values: &[&[u8]], coloured: bool, inc: IncStrategy, soa: bool) -> String {
    let mut w = CodeWriter::new();
    w.line(format!(
        "/* op2 loop '{}' (kernel '{}'), target CUDA C++ (NVRTC, -default-device), signature {}, {}{}{} */",
        super::host::comment_text(sig.loop_name),
        sig.kernel_name,
        sig.hash(),
        if coloured { "coloured" } else { "uncoloured" },
        if inc == IncStrategy::Atomics { ", atomic increments" } else { "" },
        if soa { ", structure-of-arrays dats" } else { "" }
    ));
    for (i, a) in sig.args.iter().enumerate() {
        w.line(format!("/*   arg {i}: {} */", super::host::describe(a)));
    }
    w.raw(PRELUDE);
    w.line("");
    emit_constants(&DIALECT, &mut w, sig.consts, values);
    w.line(format!("#line 1 {}", sig.kernel_origin));
    w.raw(&drop_std_includes(sig.kernel_source));
    let next = w.next_line_number();
    w.line(format!("#line {} \"op2-wrapper:{}\"", next + 1, sig.kernel_name));
    w.line("");
    emit_wrapper(&DIALECT, &mut w, sig, coloured, inc, soa);
    w.finish()
}

/// The variants of a loop's CUDA code that a run may need, as (name, coloured, strategy, SoA):
/// for loops with indirect increments, colouring (`colour`, also what `stage` runs) and, where
/// possible, `atomics`; each also in the structure-of-arrays layout when some dat has dim > 1.
pub fn variants(args: &[ArgDesc]) -> Vec<(String, bool, IncStrategy, bool)> {
    let inc = args.iter().any(ArgDesc::needs_colouring);
    let mut strategies = vec![("plain", false, IncStrategy::Plain)];
    if inc {
        strategies = vec![("colour", true, IncStrategy::Plain)];
        if atomics_possible(args) {
            strategies.push(("atomics", false, IncStrategy::Atomics));
        }
    }
    let soa = args.iter().any(|a| super::device::soa_arg(a, true));
    let mut out = Vec::new();
    for (name, coloured, s) in strategies {
        out.push((name.to_string(), coloured, s, false));
        if soa {
            out.push((format!("{name}-soa"), coloured, s, true));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arg::DatAccess;
    use crate::codegen::ConstDecl;

    #[test]
    fn cuda_wrapper() {
        let args = vec![
            ArgDesc::Dat { ty: ElemType::Double, dim: 2, acc: Access::Read, how: DatAccess::Direct, optional: false },
            ArgDesc::Dat {
                ty: ElemType::Double,
                dim: 4,
                acc: Access::Inc,
                how: DatAccess::Vector { map_dim: 2 },
                optional: true,
            },
            ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Access::Inc },
        ];
        let consts = vec![ConstDecl { name: "gam".into(), ty: ElemType::Double, dim: 1 }];
        let v = 1.4f64.to_ne_bytes();
        let sig = LoopSignature {
            loop_name: "l",
            kernel_name: "k",
            kernel_source:
                "#include <math.h>\nvoid k(const double *a, double **b, double *g) { b[0][0] += a[0] * gam; *g += 1; }",
            kernel_origin: "\"kernel:k\"",
            args: &args,
            consts: &consts,
        };
        let src = generate(&sig, &[&v], false, IncStrategy::Atomics, false);
        assert!(
            src.contains("__constant__ double op2_const_gam = 1.3999999999999999e0;\n#define gam op2_const_gam"),
            "{src}"
        );
        assert!(src.contains("extern \"C\" __global__ void op2_kernel("));
        assert!(
            src.contains("atomicAdd(&op2_d1[(size_t)op2_m1[(size_t)op2_e * 2 + 0] * 4 + op2_k], op2_p1[0][op2_k]);")
        );
        assert!(src.contains("op2_any(op2_on1 ? op2_v1 : 0)"), "{src}");
        assert!(src.contains("unsigned long long *op2_row = op2_part + (size_t)op2_w * 1;"));
        assert!(!src.contains("#include"));
        assert!(!src.contains("__global "));
        let names: Vec<String> = variants(&args).into_iter().map(|v| v.0).collect();
        assert_eq!(names, ["colour", "colour-soa", "atomics", "atomics-soa"]);
        let b = [ArgDesc::Dat {
            ty: ElemType::Bool,
            dim: 1,
            acc: Access::Inc,
            how: DatAccess::Indirect { map_dim: 2, idx: 0 },
            optional: false,
        }];
        assert!(!atomics_possible(&b));
        assert_eq!(variants(&b).len(), 1);
        assert_eq!(variants(&args[..1]).len(), 2);
    }
}
