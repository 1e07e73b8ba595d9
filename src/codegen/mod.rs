//! Code generation: loop signature in, source text out. Pure: no compilers, no data, no
//! backends. What every target's emitter shares is here (the loop signature, constants, the
//! writer); each emitter lives with its backend: `backend::host::codegen` (C for `seq`,
//! `threads`, `check`), `backend::device::codegen` (what OpenCL C and CUDA C++ share),
//! `backend::opencl::codegen`, `backend::cuda::codegen`.

pub mod writer;

use crate::arg::ArgDesc;
use crate::core::ElemType;
use sha2::{Digest, Sha256};

/// A constant as generated code sees it (its value is loaded at run time, not baked in, so a
/// new value never forces a recompile).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConstDecl {
    pub name: String,
    pub ty: ElemType,
    pub dim: usize,
    /// A Fortran kernel's module variable of the constant's name (its assembler name): host
    /// code copies the value there instead of into a C copy of its own.
    pub symbol: Option<String>,
}

/// Everything that determines the generated code of one loop.
#[derive(Debug, Clone)]
pub struct LoopSignature<'a> {
    /// The name given to `op_par_loop` (for comments only: it does not change the code).
    pub loop_name: &'a str,
    pub kernel_name: &'a str,
    pub kernel_source: &'a str,
    /// The file name `#line` gives the kernel, as a C string literal with its quotes:
    /// `"kernel:NAME"`, or the file `op_decl_kernel_file` read it from, so compiler messages
    /// point into the user's own source.
    pub kernel_origin: &'a str,
    pub args: &'a [ArgDesc],
    /// The constants the kernel uses, sorted by name.
    pub consts: &'a [ConstDecl],
}

impl LoopSignature<'_> {
    /// A short stable hash of what shapes the code (not the loop name), for the header comment.
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.kernel_name.as_bytes());
        h.update([0]);
        h.update(self.kernel_source.as_bytes());
        h.update([0]);
        h.update(format!("{:?}", self.args).as_bytes());
        h.update(format!("{:?}", self.consts).as_bytes());
        hex(&h.finalize()[..8])
    }
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The C element type a kernel parameter's type words name, as (class, bytes, signed):
/// `double` is ('f', 8, true), `unsigned int` ('i', 4, false). None for types op2 cannot
/// interpret (typedefs of the user's, structs, `void`), which are not checked.
fn param_type(words: &[String]) -> Option<(char, usize, bool)> {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    Some(match w.as_slice() {
        ["double"] => ('f', 8, true),
        ["float"] => ('f', 4, true),
        ["long", "double"] => ('f', 16, true),
        ["_Bool"] | ["bool"] => ('b', 1, false),
        ["int8_t"] => ('i', 1, true),
        ["uint8_t"] => ('i', 1, false),
        ["int16_t"] => ('i', 2, true),
        ["uint16_t"] => ('i', 2, false),
        ["int32_t"] => ('i', 4, true),
        ["uint32_t"] => ('i', 4, false),
        ["int64_t"] | ["ptrdiff_t"] | ["intptr_t"] => ('i', 8, true),
        ["uint64_t"] | ["size_t"] | ["uintptr_t"] => ('i', 8, false),
        _ => {
            let ints = ["signed", "unsigned", "int", "long", "short", "char"];
            if w.is_empty() || !w.iter().all(|x| ints.contains(x)) {
                return None;
            }
            let longs = w.iter().filter(|x| **x == "long").count();
            let size = if w.contains(&"char") {
                1
            } else if w.contains(&"short") {
                2
            } else if longs > 0 {
                8
            } else {
                4
            };
            ('i', size, !w.contains(&"unsigned"))
        }
    })
}

fn elem_type(ty: ElemType) -> (char, usize, bool) {
    match ty {
        ElemType::Double => ('f', 8, true),
        ElemType::Float => ('f', 4, true),
        ElemType::Int => ('i', 4, true),
        ElemType::Uint => ('i', 4, false),
        ElemType::Ll => ('i', 8, true),
        ElemType::Ull => ('i', 8, false),
        ElemType::Bool => ('b', 1, false),
    }
}

/// The first words of every Fortran kernel's C stand-in (`jit::fortran` writes them): the C
/// function that calls the compiled subroutine, which link-time optimisation inlines.
pub const FORTRAN_STAND_IN_MARK: &str = "/* op2: calls the Fortran subroutine '";

/// Whether a kernel's source is a Fortran kernel's stand-in.
pub fn is_fortran_stand_in(source: &str) -> bool {
    source.starts_with(FORTRAN_STAND_IN_MARK)
}

/// A kernel parameter that disagrees with its loop argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamMismatch {
    /// The argument (0-based); equal to the argument count when the counts differ.
    pub arg: usize,
    /// What is wrong, naming the parameter as written and its kernel line.
    pub message: String,
}

/// Checks the kernel's parameters against the loop's arguments: their number, and for every
/// parameter whose type op2 can read, the element type and the level of indirection (`T*` for
/// a dat, global or index argument, `T**` for a vector argument over a whole map), then every
/// declared extent (`double x[4]`; a Fortran kernel's explicit-shape dummy) against the
/// argument's dim. `const` and other qualifiers do not matter; parameters of the user's own
/// types are not checked.
pub fn check_params(def: &crate::core::clex::Definition, kernel: &str, args: &[ArgDesc]) -> Result<(), ParamMismatch> {
    if def.params.len() != args.len() {
        return Err(ParamMismatch {
            arg: args.len(),
            message: format!(
                "kernel '{kernel}' (kernel line {}) takes {} parameter(s) but the loop passes {} argument(s)",
                def.line,
                def.params.len(),
                args.len()
            ),
        });
    }
    for (i, (p, a)) in def.params.iter().zip(args).enumerate() {
        let (ty, depth) = match *a {
            ArgDesc::Dat { ty, how: crate::arg::DatAccess::Vector { .. }, .. } => (ty, 2),
            ArgDesc::Dat { ty, .. } | ArgDesc::Gbl { ty, .. } | ArgDesc::Info { ty, .. } | ArgDesc::Mat { ty, .. } => {
                (ty, 1)
            }
            ArgDesc::Idx { .. } => (ElemType::Int, 1),
        };
        let Some(found) = param_type(&p.base) else { continue };
        let stars = |n: usize| "*".repeat(n);
        if found != elem_type(ty) || p.depth != depth {
            let what = if depth == 2 { "a vector argument (idx -N) needs" } else { "the argument needs" };
            return Err(ParamMismatch {
                arg: i,
                message: format!(
                    "kernel '{kernel}' parameter {} '{}' (kernel line {}) is {}{}, but {what} {}{}",
                    i + 1,
                    p.text,
                    p.line,
                    p.base.join(" "),
                    stars(p.depth),
                    ty.c_name(),
                    stars(depth)
                ),
            });
        }
    }
    // Declared extents, once every type agrees.
    for (i, (p, a)) in def.params.iter().zip(args).enumerate() {
        // A declared extent (`double x[4]`, or a Fortran dummy's explicit shape) must be the
        // argument's dim: the kernel reads or writes that many values.
        let dim = match *a {
            ArgDesc::Dat { dim, how, .. } if !matches!(how, crate::arg::DatAccess::Vector { .. }) => Some(dim),
            ArgDesc::Gbl { dim, .. } | ArgDesc::Info { dim, .. } => Some(dim),
            _ => None,
        };
        if let (Some(n), Some(dim)) = (p.extent, dim) {
            if n != dim {
                return Err(ParamMismatch {
                    arg: i,
                    message: format!(
                        "kernel '{kernel}' parameter {} '{}' (kernel line {}) holds {n} value(s), but the argument has dim {dim}",
                        i + 1,
                        p.text,
                        p.line
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod param_tests {
    use super::*;
    use crate::arg::{Access, DatAccess};
    use crate::core::clex::find_definition;

    fn dat(ty: ElemType, how: DatAccess) -> ArgDesc {
        ArgDesc::Dat { ty, dim: 1, acc: Access::Read, how, optional: false }
    }

    #[test]
    fn kernel_parameters_are_checked_against_arguments() {
        let args = [
            dat(ElemType::Double, DatAccess::Direct),
            dat(ElemType::Float, DatAccess::Vector { map_dim: 2 }),
            ArgDesc::Gbl { ty: ElemType::Uint, dim: 1, acc: Access::Inc },
            ArgDesc::Idx { map_dim: None, idx: 0 },
        ];
        let ok = "void k(const double *restrict a, float **b, unsigned *c, const int *i) {}";
        assert_eq!(check_params(&find_definition(ok, "k").unwrap(), "k", &args), Ok(()));
        // const differences and user types are fine
        let ok2 = "void k(double *a, const float **b, real *c, int i[1]) {}";
        assert_eq!(check_params(&find_definition(ok2, "k").unwrap(), "k", &args), Ok(()));
        let bad = "void k(const double *a,\n  float *b, unsigned *c, int *i) {}";
        let e = check_params(&find_definition(bad, "k").unwrap(), "k", &args).unwrap_err();
        assert_eq!(e.arg, 1);
        assert_eq!(
            e.message,
            "kernel 'k' parameter 2 'float *b' (kernel line 2) is float*, but a vector argument (idx -N) needs float**"
        );
        let bad = "void k(float *a, float **b, unsigned *c, int *i) {}";
        let e = check_params(&find_definition(bad, "k").unwrap(), "k", &args).unwrap_err();
        assert_eq!((e.arg, e.message.contains("is float*, but the argument needs double*")), (0, true));
        let bad = "void k(double *a, float **b, int *c, int *i) {}";
        assert_eq!(check_params(&find_definition(bad, "k").unwrap(), "k", &args).unwrap_err().arg, 2);
        let e = check_params(&find_definition("void k(double *a) {}", "k").unwrap(), "k", &args).unwrap_err();
        assert_eq!(e.arg, 4);
        assert!(e.message.contains("takes 1 parameter(s) but the loop passes 4"), "{}", e.message);
    }
}
