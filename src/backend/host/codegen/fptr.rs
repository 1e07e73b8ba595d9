//! The C kernel that stands in for a compiled kernel given by address (`op_par_loop_fptr`, the
//! per-element tier of OP2's Fortran `op_par_loop_N`): it calls the function whose address
//! arrives in a hidden last argument (an OP_READ global of one `unsigned long long`) with the
//! address of each argument's data, as a Fortran subroutine with explicit-shape or scalar
//! dummies expects them. The text depends only on the arguments' kinds and types and on the
//! index base, never on the address, so one compiled loop serves every kernel of that shape
//! and the cache stays valid between runs.

use crate::core::ElemType;

/// What the kernel receives for one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FptrParam {
    /// `T*`: a dat (direct or one map entry), a global, an info payload.
    Data(ElemType),
    /// `T**`: a vector dat argument (idx -N), one pointer per map entry.
    Vector(ElemType),
    /// `int*`: op_arg_idx's element index, shifted by the index base before the call.
    Idx,
}

/// The prefix of the stand-in kernels' names, `op2f_call_<hash of the shape>`: one name per
/// shape, so that loops of different shapes fused into one unit define different functions.
pub const FPTR_PREFIX: &str = "op2f_call_";

/// The first line of every stand-in kernel's source.
const MARK: &str = "/* op2: calls a compiled kernel given by address, one pointer per argument */";

/// Whether a kernel is a stand-in (its name and its source's first line).
pub fn is_stand_in(name: &str, source: &str) -> bool {
    name.starts_with(FPTR_PREFIX) && source.starts_with(MARK)
}

/// The stand-in kernel for `params` (the loop's own arguments, in order), as (name, C source):
/// a function with one parameter per argument plus `op2f_fn` (the address of the compiled
/// kernel). Idx arguments reach the compiled kernel as `index + index_base` (1-based for
/// Fortran), through a private copy.
pub fn kernel(params: &[FptrParam], index_base: i32) -> (String, String) {
    use sha2::{Digest, Sha256};
    let shape = format!("{params:?} {index_base}");
    let name = format!("{FPTR_PREFIX}{}", crate::codegen::hex(&Sha256::digest(shape.as_bytes())[..6]));
    let source = kernel_source(&name, params, index_base);
    (name, source)
}

fn kernel_source(name: &str, params: &[FptrParam], index_base: i32) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(200 + 60 * params.len());
    let _ = writeln!(s, "{MARK}");
    let mut decl = Vec::with_capacity(params.len() + 1);
    for (i, p) in params.iter().enumerate() {
        decl.push(match p {
            FptrParam::Data(t) => format!("{} *a{i}", t.c_name()),
            FptrParam::Vector(t) => format!("{} **a{i}", t.c_name()),
            FptrParam::Idx => format!("int *a{i}"),
        });
    }
    decl.push("unsigned long long *op2f_fn".to_string());
    let _ = writeln!(s, "void {name}({})\n{{", decl.join(", "));
    for (i, p) in params.iter().enumerate() {
        if *p == FptrParam::Idx {
            let _ = writeln!(s, "  int i{i} = *a{i} + ({index_base});");
        }
    }
    let types = if params.is_empty() { "void".to_string() } else { vec!["void *"; params.len()].join(", ") };
    let _ = writeln!(s, "  void (*f)({types}) = (void (*)({types}))(*op2f_fn);");
    let call: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            FptrParam::Idx => format!("(void *)&i{i}"),
            _ => format!("(void *)a{i}"),
        })
        .collect();
    let _ = writeln!(s, "  f({});\n}}", call.join(", "));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_calls_through_the_address_with_every_argument() {
        let p = [FptrParam::Data(ElemType::Double), FptrParam::Idx, FptrParam::Vector(ElemType::Int)];
        let (name, s) = kernel(&p, 1);
        assert!(name.starts_with(FPTR_PREFIX) && name.len() == FPTR_PREFIX.len() + 12, "{name}");
        assert!(is_stand_in(&name, &s));
        assert_eq!(
            s.replace(&name, "NAME"),
            "/* op2: calls a compiled kernel given by address, one pointer per argument */\n\
             void NAME(double *a0, int *a1, int **a2, unsigned long long *op2f_fn)\n{\n\
             \x20 int i1 = *a1 + (1);\n\
             \x20 void (*f)(void *, void *, void *) = (void (*)(void *, void *, void *))(*op2f_fn);\n\
             \x20 f((void *)a0, (void *)&i1, (void *)a2);\n}\n"
        );
        // the kernel's definition is found, with the hidden parameter last
        let def = crate::core::clex::find_definition(&s, &name).unwrap();
        assert_eq!(def.params.len(), 4);
        // one name per shape: another index base or other types are another function
        assert_eq!(kernel(&p, 1).0, name);
        assert_ne!(kernel(&p, 0).0, name);
        assert_ne!(kernel(&p[..2], 1).0, name);
        assert!(!is_stand_in("op2f_call_x", "void op2f_call_x(void) {}"));
        // no arguments: a call with none
        assert!(kernel(&[], 0).1.contains("void (*f)(void) = (void (*)(void))(*op2f_fn);\n  f();"));
    }

    #[test]
    fn the_stand_in_is_never_vectorised_and_says_why() {
        use crate::arg::{Access, ArgDesc, DatAccess};
        let args = [
            ArgDesc::Dat { ty: ElemType::Double, dim: 1, acc: Access::Rw, how: DatAccess::Direct, optional: false },
            ArgDesc::Gbl { ty: ElemType::Ull, dim: 1, acc: Access::Read },
        ];
        let (name, src) = kernel(&[FptrParam::Data(ElemType::Double)], 1);
        let sig = crate::codegen::LoopSignature {
            loop_name: "k",
            kernel_name: &name,
            kernel_source: &src,
            kernel_origin: "\"kernel:k\"",
            args: &args,
            consts: &[],
        };
        assert_eq!(
            crate::backend::host::codegen::simd::rewritten_kernel(&sig, 4),
            Err("the kernel is a compiled function, called once per element".to_string())
        );
    }
}
