//! The vectorised host wrapper (`OP2_SIMD`), emitted beside the scalar one when the kernel
//! rewriter (`backend::host::codegen::rewrite`) accepts the kernel. As in OP2's v1 vectorising translator:
//!
//! - per block of `lanes` elements, an index-form gather (`op2_l0[k][j] = a0[m0[n*2+1]*2+k]`, the
//!   form GCC 12 vectorises; pointer forms are not) into lane-major arrays `T op2_lI[dim][lanes]`:
//!   READ, RW and WRITE data (WRITE too, so components the kernel leaves alone keep their
//!   value), INC lanes start at -0.0 (`-0.0 + x == x` for every x, so the increment added after
//!   the block is exactly the kernel's);
//! - an `omp simd` loop over the lanes calling the lane-major copy of the kernel;
//! - a serial scatter, lane after lane: stores for WRITE/RW, `+=` for INC (two lanes with one
//!   target add in element order, as `seq` does, so no colouring is needed inside a block);
//! - the scalar `op2_loop` for the elements after the last whole block.
//!
//! ABI additions to `backend::host::codegen`'s:
//! - `void op2_loop_simd(int start, int end, void *const *slots)`: same slots as `op2_loop`;
//! - `const int op2_simd_mode`: 1 when `OP2_SIMD=on` forces it, 2 for `auto` (time both);
//! - `const char op2_simd_refused[]`: instead of the two above, why the kernel was not
//!   rewritten (for `op_timing_output` and diagnostics).

use crate::arg::{Access, ArgDesc, DatAccess};
use crate::backend::host::codegen::abi::{gbl_is_local, LOOP_SYMBOL};
use crate::backend::host::codegen::rewrite;
use crate::codegen::writer::{comment_text, CodeWriter};
use crate::codegen::LoopSignature;
use crate::config::SimdMode;

/// Name of the vectorised range wrapper symbol.
pub const SIMD_SYMBOL: &str = "op2_loop_simd";
/// Name of the mode constant (1: on, 2: auto).
pub const MODE_SYMBOL: &str = "op2_simd_mode";
/// Name of the refusal reason string.
pub const REFUSED_SYMBOL: &str = "op2_simd_refused";
/// Components up to this many are gathered and scattered one statement each.
const UNROLL_MAX: usize = 8;

/// A C string literal holding `s` (printable ASCII kept, everything else escaped in octal).
pub fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            b'?' => out.push_str("\\?"), // no trigraphs
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// The lane-major copy of the kernel, or why there is none.
pub fn rewritten_kernel(sig: &LoopSignature, lanes: usize) -> Result<String, String> {
    if crate::backend::host::codegen::fptr::is_stand_in(sig.kernel_name, sig.kernel_source) {
        return Err("the kernel is a compiled function, called once per element".to_string());
    }
    rewrite::rewrite(sig.kernel_source, sig.kernel_name, sig.args, lanes)
}

/// Emits `op2_loop_simd` and `op2_simd_mode` (the kernel's lane-major copy must precede it).
pub fn emit_wrapper(w: &mut CodeWriter, sig: &LoopSignature, mode: SimdMode, lanes: usize) {
    let l = lanes;
    w.line(format!(
        "/* Vectorised: blocks of {l} elements of [op2_start, op2_end) through {}, the rest through op2_loop. */",
        rewrite::simd_kernel_name(sig.kernel_name)
    ));
    w.open(format!("OP2_EXPORT void {SIMD_SYMBOL}(int op2_start, int op2_end, void *const *op2_slots)"));
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, how, .. } => {
                w.line(format!("{0} *op2_a{i} = ({0} *)op2_slots[{1}];", ty.c_name(), 2 * i));
                if how != DatAccess::Direct {
                    w.line(format!("const int *op2_m{i} = (const int *)op2_slots[{}];", 2 * i + 1));
                }
            }
            ArgDesc::Gbl { ty, dim, .. } => {
                w.line(format!("{0} *op2_a{i} = ({0} *)op2_slots[{1}];", ty.c_name(), 2 * i));
                if gbl_is_local(ty, dim) {
                    w.line(format!("{} op2_g{i}[{dim}];", ty.c_name()));
                    w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_g{i}[op2_k] = op2_a{i}[op2_k];"));
                }
            }
            ArgDesc::Idx { map_dim, .. } => {
                // Declared numbering after op_renumber (see backend::host::codegen).
                w.line(format!("const int *op2_o{i} = (const int *)op2_slots[{}];", 2 * i));
                if map_dim.is_some() {
                    w.line(format!("const int *op2_m{i} = (const int *)op2_slots[{}];", 2 * i + 1));
                }
            }
            // Loops with these are refused by the rewriter (`rewrite::lane_arg`).
            ArgDesc::Info { .. } | ArgDesc::Mat { .. } => {}
        }
    }
    w.line("ptrdiff_t op2_b = op2_start;");
    w.open(format!("for (; op2_b + {l} <= op2_end; op2_b += {l})"));
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, dim, .. } => w.line(format!("_Alignas(64) {} op2_l{i}[{dim}][{l}];", ty.c_name())),
            ArgDesc::Idx { .. } => w.line(format!("_Alignas(64) int op2_l{i}[1][{l}];")),
            _ => continue,
        };
    }
    // Gather.
    w.line("#pragma omp simd");
    w.open(format!("for (int op2_j = 0; op2_j < {l}; op2_j++)"));
    w.line("ptrdiff_t op2_n = op2_b + op2_j;");
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, dim, acc, how, .. } => {
                let base = element_base(w, i, dim, how);
                if acc == Access::Inc {
                    components(w, dim, |k| format!("op2_l{i}[{k}][op2_j] = ({})-0.0;", ty.c_name()));
                } else {
                    components(w, dim, |k| format!("op2_l{i}[{k}][op2_j] = op2_a{i}[{base} + {k}];"));
                }
            }
            ArgDesc::Idx { map_dim: None, .. } => {
                w.line(format!("op2_l{i}[0][op2_j] = op2_o{i} ? op2_o{i}[op2_n] : (int)op2_n;"));
            }
            ArgDesc::Idx { map_dim: Some(d), idx } => {
                w.line(format!(
                    "op2_l{i}[0][op2_j] = op2_o{i} ? op2_o{i}[op2_m{i}[op2_n * {d} + {idx}]] : op2_m{i}[op2_n * {d} + {idx}];"
                ));
            }
            _ => {}
        }
    }
    w.close();
    // Compute.
    let call: Vec<String> = sig
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| match *a {
            ArgDesc::Gbl { ty, dim, .. } if gbl_is_local(ty, dim) => {
                format!("(void *)op2_g{i}")
            }
            ArgDesc::Gbl { .. } => format!("(void *)op2_a{i}"),
            _ => format!("(void *)op2_l{i}"),
        })
        .collect();
    w.line("#pragma omp simd");
    w.line(format!("for (int op2_j = 0; op2_j < {l}; op2_j++)"));
    let mut args = call.join(", ");
    if !args.is_empty() {
        args.push_str(", ");
    }
    w.line(format!("  {}({args}op2_j);", rewrite::simd_kernel_name(sig.kernel_name)));
    // Scatter, lane after lane.
    let written: Vec<usize> = sig
        .args
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a, ArgDesc::Dat { acc, .. } if acc.writes()))
        .map(|(i, _)| i)
        .collect();
    if !written.is_empty() {
        w.open(format!("for (int op2_j = 0; op2_j < {l}; op2_j++)"));
        w.line("ptrdiff_t op2_n = op2_b + op2_j;");
        for i in written {
            if let ArgDesc::Dat { dim, acc, how, .. } = sig.args[i] {
                let base = element_base(w, i, dim, how);
                let op = if acc == Access::Inc { "+=" } else { "=" };
                components(w, dim, |k| format!("op2_a{i}[{base} + {k}] {op} op2_l{i}[{k}][op2_j];"));
            }
        }
        w.close();
    }
    w.close();
    w.line(format!("if (op2_b < op2_end) {LOOP_SYMBOL}((int)op2_b, op2_end, op2_slots);"));
    w.close();
    let m = if mode == SimdMode::On { 1 } else { 2 };
    w.line(format!("OP2_EXPORT const int {MODE_SYMBOL} = {m};"));
}

/// Declares `op2_eI`, the first value of argument `i`'s element for lane `op2_n`, and returns
/// the expression to index with.
fn element_base(w: &mut CodeWriter, i: usize, dim: usize, how: DatAccess) -> String {
    match how {
        DatAccess::Indirect { map_dim, idx } => {
            w.line(format!("ptrdiff_t op2_e{i} = (ptrdiff_t)op2_m{i}[op2_n * {map_dim} + {idx}] * {dim};"));
            format!("op2_e{i}")
        }
        _ => format!("op2_n * {dim}"),
    }
}

/// One statement per component, or a loop over `op2_k` for many.
fn components(w: &mut CodeWriter, dim: usize, stmt: impl Fn(&str) -> String) {
    if dim <= UNROLL_MAX {
        for k in 0..dim {
            w.line(stmt(&k.to_string()));
        }
    } else {
        w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) {}", stmt("op2_k")));
    }
}

/// Emits the refusal reason.
pub fn emit_refused(w: &mut CodeWriter, reason: &str) {
    w.line(format!("/* Not vectorised: {} */", comment_text(reason)));
    w.line(format!("OP2_EXPORT const char {REFUSED_SYMBOL}[] = {};", c_string(reason)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::codegen as host;
    use crate::core::ElemType;

    #[test]
    fn c_strings_are_escaped() {
        assert_eq!(c_string("a \"b\" \\ ?? é\n"), "\"a \\\"b\\\" \\\\ \\?\\? \\303\\251\\012\"");
    }

    /// Snapshot of a whole vectorised wrapper: indirect read, direct INC, direct write, a small
    /// global read and the element index.
    #[test]
    fn snapshot() {
        let args = vec![
            ArgDesc::Dat {
                ty: ElemType::Double,
                dim: 2,
                acc: Access::Read,
                how: DatAccess::Indirect { map_dim: 2, idx: 1 },
                optional: false,
            },
            ArgDesc::Dat { ty: ElemType::Double, dim: 1, acc: Access::Inc, how: DatAccess::Direct, optional: false },
            ArgDesc::Dat { ty: ElemType::Float, dim: 1, acc: Access::Write, how: DatAccess::Direct, optional: false },
            ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Access::Read },
            ArgDesc::Idx { map_dim: None, idx: 0 },
        ];
        let src = "void k(const double *x, double *r, float *o, const double *g, const int *i) {\n  *r += x[1] * *g;\n  o[0] = (float)*i;\n}\n";
        let sig = LoopSignature {
            loop_name: "demo",
            kernel_name: "k",
            kernel_source: src,
            kernel_origin: "\"kernel:k\"",
            args: &args,
            consts: &[],
        };
        let got = host::generate_with(&sig, Some((SimdMode::Auto, 4)));
        let tail = &got[got.find("#line 1 \"kernel:k\"").unwrap()..];
        let expected = r#"#line 1 "kernel:k"
void k(const double *x, double *r, float *o, const double *g, const int *i) {
  *r += x[1] * *g;
  o[0] = (float)*i;
}
#line 1 "kernel:k"
static inline void op2_simd_k(const double x[][4], double r[][4], float o[][4], const double *g, const int i[][4], int op2_lane)
#line 1 "kernel:k"
{
  r[0][op2_lane] += x[1][op2_lane] * *g;
  o[0][op2_lane] = (float)i[0][op2_lane];
}
#line 53 "op2-wrapper:k"
"#;
        assert!(tail.starts_with(expected), "{tail}");
        let lines: Vec<&str> = got.lines().collect();
        let pos = lines.iter().position(|l| l.starts_with("#line") && l.contains("op2-wrapper")).unwrap();
        assert_eq!(lines[pos], format!("#line {} \"op2-wrapper:k\"", pos + 2));
        let wrapper = &got[got.find("/* Vectorised").unwrap()..];
        let expected = r#"/* Vectorised: blocks of 4 elements of [op2_start, op2_end) through op2_simd_k, the rest through op2_loop. */
OP2_EXPORT void op2_loop_simd(int op2_start, int op2_end, void *const *op2_slots) {
  double *op2_a0 = (double *)op2_slots[0];
  const int *op2_m0 = (const int *)op2_slots[1];
  double *op2_a1 = (double *)op2_slots[2];
  float *op2_a2 = (float *)op2_slots[4];
  double *op2_a3 = (double *)op2_slots[6];
  double op2_g3[1];
  for (int op2_k = 0; op2_k < 1; op2_k++) op2_g3[op2_k] = op2_a3[op2_k];
  const int *op2_o4 = (const int *)op2_slots[8];
  ptrdiff_t op2_b = op2_start;
  for (; op2_b + 4 <= op2_end; op2_b += 4) {
    _Alignas(64) double op2_l0[2][4];
    _Alignas(64) double op2_l1[1][4];
    _Alignas(64) float op2_l2[1][4];
    _Alignas(64) int op2_l4[1][4];
    #pragma omp simd
    for (int op2_j = 0; op2_j < 4; op2_j++) {
      ptrdiff_t op2_n = op2_b + op2_j;
      ptrdiff_t op2_e0 = (ptrdiff_t)op2_m0[op2_n * 2 + 1] * 2;
      op2_l0[0][op2_j] = op2_a0[op2_e0 + 0];
      op2_l0[1][op2_j] = op2_a0[op2_e0 + 1];
      op2_l1[0][op2_j] = (double)-0.0;
      op2_l2[0][op2_j] = op2_a2[op2_n * 1 + 0];
      op2_l4[0][op2_j] = op2_o4 ? op2_o4[op2_n] : (int)op2_n;
    }
    #pragma omp simd
    for (int op2_j = 0; op2_j < 4; op2_j++)
      op2_simd_k((void *)op2_l0, (void *)op2_l1, (void *)op2_l2, (void *)op2_g3, (void *)op2_l4, op2_j);
    for (int op2_j = 0; op2_j < 4; op2_j++) {
      ptrdiff_t op2_n = op2_b + op2_j;
      op2_a1[op2_n * 1 + 0] += op2_l1[0][op2_j];
      op2_a2[op2_n * 1 + 0] = op2_l2[0][op2_j];
    }
  }
  if (op2_b < op2_end) op2_loop((int)op2_b, op2_end, op2_slots);
}
OP2_EXPORT const int op2_simd_mode = 2;
"#;
        assert_eq!(wrapper, expected);
        // Without SIMD the text is today's; a refused kernel says why, in the library too.
        assert_eq!(host::generate_with(&sig, None), host::generate(&sig));
        let mut bad = args.clone();
        bad[3] = ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Access::Inc };
        let sig = LoopSignature { args: &bad, ..sig };
        let got = host::generate_with(&sig, Some((SimdMode::On, 8)));
        assert!(!got.contains("op2_loop_simd"));
        assert!(got.ends_with(
            "/* Not vectorised: arg 3 is a global reduction (per-lane partial results would round differently from seq) */\nOP2_EXPORT const char op2_simd_refused[] = \"arg 3 is a global reduction (per-lane partial results would round differently from seq)\";\n"
        ), "{got}");
    }
}
