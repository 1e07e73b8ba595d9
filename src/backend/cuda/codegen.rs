//! The CUDA C++ emitter (target `cuda`, compiled by NVRTC): one source per loop shape and
//! increment strategy. The staging wrapper is the one OpenCL uses (`backend::device::codegen`, whose ABI
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
//! later, which `--gpu-architecture` must name); `Blocks` runs the plan's blocks of one block
//! colour as thread blocks, applying increments one thread colour at a time; `Plain` is for
//! loops without indirect increments or launched colour by colour.

use crate::arg::{Access, ArgDesc};
pub use crate::backend::device::codegen::IncStrategy;
use crate::backend::device::codegen::{drop_std_includes, Dialect, StagePattern};
use crate::codegen::LoopSignature;
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
    block_reduce: true,
    title: "CUDA C++ (NVRTC, -default-device)",
    prelude: &[crate::backend::host::codegen::KERNEL_MACROS, PRELUDE],
    kernel_source: drop_std_includes,
    after_kernel: "\n",
    nan: "__builtin_nan(\"\")",
    inf: "__builtin_inf()",
};

/// The CUDA C++ type of an element in device buffers (and as the kernel sees it).
pub fn buffer_type(ty: ElemType) -> &'static str {
    match ty {
        ElemType::Bool => "bool",
        t => t.c_name(),
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
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
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

/// Generates the CUDA source for one loop (see `backend::device::codegen::generate`).
pub fn generate(sig: &LoopSignature, values: &[&[u8]], coloured: bool, inc: IncStrategy, soa: bool) -> String {
    crate::backend::device::codegen::generate(&DIALECT, sig, values, coloured, inc, soa)
}

/// The CUDA source of a fused unit: `parts` run as one launch (`device::generate_fused`).
pub fn generate_fused(
    parts: &[LoopSignature],
    consts: &[crate::codegen::ConstDecl],
    values: &[&[u8]],
    soa: bool,
) -> String {
    crate::backend::device::codegen::generate_fused(&DIALECT, parts, consts, values, soa)
}

/// The CUDA source of a loop run by plan blocks with their indirect data staged in shared
/// memory (`device::generate_staged`).
pub fn generate_staged(sig: &LoopSignature, values: &[&[u8]], soa: bool, pattern: StagePattern) -> String {
    crate::backend::device::codegen::generate_staged(&DIALECT, sig, values, soa, pattern)
}

/// One variant of a loop's CUDA code: its name, coloured, strategy, SoA, and the staging
/// pattern of a `stage` variant.
pub type Variant = (String, bool, IncStrategy, bool, Option<StagePattern>);

/// The variants of a loop's CUDA code that a run may need: for loops with indirect increments,
/// element colouring (`colour`), plan blocks with two-level colouring (`blocks`), the same with
/// the blocks' indirect data in shared memory where the loop can be staged (`stage`, each
/// indirect argument in its own area) and, where possible, `atomics`; each also in the
/// structure-of-arrays layout when some dat has dim > 1.
pub fn variants(args: &[ArgDesc]) -> Vec<Variant> {
    let inc = args.iter().any(ArgDesc::needs_colouring);
    let mut strategies = vec![("plain", false, IncStrategy::Plain, None)];
    if inc {
        strategies = vec![("colour", true, IncStrategy::Plain, None), ("blocks", false, IncStrategy::TwoLevel, None)];
        if let Some(p) = crate::backend::device::codegen::own_pairs(args) {
            strategies.push(("stage", false, IncStrategy::TwoLevel, Some(p)));
        }
        if atomics_possible(args) {
            strategies.push(("atomics", false, IncStrategy::Atomics, None));
        }
    }
    let soa = args.iter().any(|a| crate::backend::device::codegen::soa_arg(a, true));
    let mut out = Vec::new();
    for (name, coloured, s, p) in strategies {
        out.push((name.to_string(), coloured, s, false, p));
        if soa {
            out.push((format!("{name}-soa"), coloured, s, true, p));
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
        let consts = vec![ConstDecl { name: "gam".into(), ty: ElemType::Double, dim: 1, symbol: None }];
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
        // Reductions: row 0 the seed, then one row per block, each started from the seed unless
        // an earlier launch wrote it, into thread 0 only (for increments), combined in shared
        // memory.
        assert!(src.contains("unsigned long long *op2_row = op2_part + (size_t)(1 + (int)blockIdx.x) * 1;"), "{src}");
        assert!(src.contains("const unsigned long long *op2_from = (int)blockIdx.x < op2_done ? op2_row : op2_part;"));
        assert!(src.contains("op2_g2[op2_k] = threadIdx.x == 0 ? op2_f2[op2_k] : (double)0;"));
        assert!(src.contains("    int op2_done,\n"));
        assert!(src.contains("extern __shared__ unsigned long long op2_sh[];"));
        assert!(src.contains("((double *)(op2_mine + 0))[op2_k] += ((const double *)(op2_other + 0))[op2_k];"));
        assert!(!src.contains("#include"));
        assert!(!src.contains("__global "));
        let names: Vec<String> = variants(&args).into_iter().map(|v| v.0).collect();
        assert_eq!(names, ["colour", "colour-soa", "blocks", "blocks-soa", "atomics", "atomics-soa"]);
        let staged = generate(&sig, &[&v], false, IncStrategy::TwoLevel, false);
        assert!(staged.contains("const int op2_b = op2_blkmap[op2_start + op2_bi];"), "{staged}");
        assert!(staged.contains("if (op2_live && op2_thrcol[op2_e - op2_pstart] == op2_c) {"));
        let b = [ArgDesc::Dat {
            ty: ElemType::Bool,
            dim: 1,
            acc: Access::Inc,
            how: DatAccess::Indirect { map_dim: 2, idx: 0 },
            optional: false,
        }];
        assert!(!atomics_possible(&b));
        let names: Vec<String> = variants(&b).into_iter().map(|v| v.0).collect();
        assert_eq!(names, ["colour", "blocks", "stage"]);
        assert_eq!(variants(&args[..1]).len(), 2);
    }

    /// OP2_INC=stage: a res_calc-like loop whose two READ arguments share a (dat, map) pair and
    /// whose two INC arguments share another; each block reads its targets into shared memory,
    /// the elements work there, and the block adds its increments once at its end.
    #[test]
    fn staged_wrapper() {
        use crate::backend::device::codegen::{own_pairs, stage_pattern, NO_PAIR};
        let dat = |dim, acc, how| ArgDesc::Dat { ty: ElemType::Double, dim, acc, how, optional: false };
        let args = vec![
            dat(4, Access::Read, DatAccess::Direct),
            dat(2, Access::Read, DatAccess::Indirect { map_dim: 2, idx: 0 }),
            dat(2, Access::Read, DatAccess::Indirect { map_dim: 2, idx: 1 }),
            dat(4, Access::Inc, DatAccess::Indirect { map_dim: 2, idx: 0 }),
            dat(4, Access::Inc, DatAccess::Indirect { map_dim: 2, idx: 1 }),
        ];
        let pattern = stage_pattern(&args, &[None, Some(0), Some(0), Some(1), Some(1)]).expect("stageable");
        assert_eq!(pattern.npairs, 2);
        assert_eq!(&pattern.pair[..6], &[NO_PAIR, 0, 0, 1, 1, NO_PAIR]);
        // A pair's arguments must agree (a READ and an INC in one area cannot be staged), and
        // every indirect argument needs a pair.
        assert!(stage_pattern(&args, &[None, Some(0), Some(0), Some(0), Some(1)]).is_none());
        assert!(stage_pattern(&args, &[None, Some(0), None, Some(1), Some(1)]).is_none());
        assert_eq!(own_pairs(&args).map(|p| p.npairs), Some(4));
        let sig = LoopSignature {
            loop_name: "res",
            kernel_name: "res",
            kernel_source: "void res(const double *q, const double *x0, const double *x1, double *r0, double *r1) {}",
            kernel_origin: "\"res.c\"",
            args: &args,
            consts: &[],
        };
        let src = generate_staged(&sig, &[], false, pattern);
        assert!(src.contains("indirect data staged in shared memory"), "{src}");
        assert!(src.contains("const int *op2_blkmap = op2_elems + 4,"), "{src}");
        assert!(src.contains("double *op2_sh0 = (double *)(op2_stage + op2_so);"), "{src}");
        assert!(src.contains("op2_sh0[op2_r] = op2_d1[(size_t)op2_gr * 2 + op2_k];"), "{src}");
        assert!(src.contains("op2_sh1[op2_r] = (double)0;"), "{src}");
        assert!(src.contains("(size_t)op2_lm[(size_t)op2_al[2] * op2_ntot + (op2_e - op2_pstart)]"), "{src}");
        assert!(src.contains("op2_sh1[(size_t)op2_lm[(size_t)op2_al[4] * op2_ntot + (op2_e - op2_pstart)] * 4 + op2_k] += op2_p4[op2_k];"), "{src}");
        assert!(src.contains("op2_d3[(size_t)op2_gr * 4 + op2_k] += op2_sh1[op2_r];"), "{src}");
        // Only the first argument of a pair writes its area back.
        assert!(!src.contains("op2_d4[(size_t)op2_gr"), "{src}");
        // The structure-of-arrays layout reads and writes the dats by component.
        let soa = generate_staged(&sig, &[], true, pattern);
        assert!(soa.contains("op2_sh0[op2_r] = op2_d1[(size_t)op2_k * op2_s1 + op2_gr];"), "{soa}");
    }
}
