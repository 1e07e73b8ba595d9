//! The host C emitter (targets `seq` and `threads`): one translation unit holding the
//! constants, the user's kernel and a wrapper over an element range `[start, end)` that gathers
//! pointers through maps and calls the kernel, so the C compiler inlines it (the "Sequential
//! backend" of PyOP2's backend notes).
//!
//! ABI of the generated library:
//! - `void op2_loop(int start, int end, void *const *slots)`: `slots[2*i]` is argument `i`'s
//!   data (dat base, global or info buffer; NULL for a disabled optional dat) and
//!   `slots[2*i+1]` its map (`const int *`, row-major) or NULL.
//! - `void op2_set_constants(void *const *src)`: copies each used constant, in name order, from
//!   `src[k]`. Present only when the kernel uses constants.

use super::writer::CodeWriter;
use super::LoopSignature;
use crate::arg::{ArgDesc, DatAccess};

/// Name of the range wrapper symbol.
pub const LOOP_SYMBOL: &str = "op2_loop";
/// Name of the constant loader symbol.
pub const CONSTS_SYMBOL: &str = "op2_set_constants";

/// Generates the translation unit for one loop.
pub fn generate(sig: &LoopSignature) -> String {
    let mut w = CodeWriter::new();
    w.line(format!(
        "/* op2 loop '{}' (kernel '{}'), target host C (seq, threads), signature {} */",
        sig.loop_name,
        sig.kernel_name,
        sig.hash()
    ));
    for (i, a) in sig.args.iter().enumerate() {
        w.line(format!("/*   arg {i}: {} */", describe(a)));
    }
    w.line("#include <math.h>");
    w.line("#include <stdbool.h>");
    w.line("#include <stddef.h>");
    w.line("#include <string.h>");
    w.line("");
    w.line("#define OP2_EXPORT __attribute__((visibility(\"default\")))");
    w.line("");
    if !sig.consts.is_empty() {
        w.line("/* Constants the kernel uses; values are loaded by op2_set_constants. */");
        for c in sig.consts {
            if c.dim == 1 {
                w.line(format!("static {} {};", c.ty.c_name(), c.name));
            } else {
                w.line(format!("static {} {}[{}];", c.ty.c_name(), c.name, c.dim));
            }
        }
        w.line("");
    }
    // Diagnostics inside the kernel are reported with the user's own line numbers.
    w.line(format!("#line 1 \"kernel:{}\"", sig.kernel_name));
    w.raw(sig.kernel_source);
    let next = w.next_line_number();
    w.line(format!("#line {} \"op2-wrapper:{}\"", next + 1, sig.kernel_name));
    w.line("");
    if !sig.consts.is_empty() {
        w.open(format!("OP2_EXPORT void {CONSTS_SYMBOL}(void *const *src)"));
        for (k, c) in sig.consts.iter().enumerate() {
            if c.dim == 1 {
                w.line(format!("memcpy(&{0}, src[{k}], sizeof({0}));", c.name));
            } else {
                w.line(format!("memcpy({0}, src[{k}], sizeof({0}));", c.name));
            }
        }
        w.close();
        w.line("");
    }
    emit_range_wrapper(&mut w, sig);
    w.finish()
}

fn describe(a: &ArgDesc) -> String {
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
    }
}

fn emit_range_wrapper(w: &mut CodeWriter, sig: &LoopSignature) {
    w.line("/* Runs the kernel for elements [start, end); see the ABI note in op2's codegen/host.rs. */");
    w.open(format!("OP2_EXPORT void {LOOP_SYMBOL}(int start, int end, void *const *slots)"));
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, how, .. } => {
                w.line(format!("{0} *a{i} = ({0} *)slots[{1}];", ty.c_name(), 2 * i));
                if how != DatAccess::Direct {
                    w.line(format!("const int *m{i} = (const int *)slots[{}];", 2 * i + 1));
                }
            }
            ArgDesc::Gbl { ty, dim, .. } | ArgDesc::Info { ty, dim, .. } => {
                // Globals live in a local copy for the whole range: the kernel, once inlined,
                // keeps them in registers instead of reloading them after every store through a
                // pointer that might alias them (what a hand-written loop over a local does).
                w.line(format!("{0} *a{i} = ({0} *)slots[{1}];", ty.c_name(), 2 * i));
                w.line(format!("{} g{i}[{dim}];", ty.c_name()));
                w.line(format!("for (int k = 0; k < {dim}; k++) g{i}[k] = a{i}[k];"));
            }
            ArgDesc::Idx { map_dim: Some(_), .. } => {
                w.line(format!("const int *m{i} = (const int *)slots[{}];", 2 * i + 1));
            }
            ArgDesc::Idx { map_dim: None, .. } => {}
        }
    }
    w.open("for (ptrdiff_t n = start; n < end; n++)");
    let mut call = Vec::with_capacity(sig.args.len());
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, dim, how, optional, .. } => {
                let expr = match how {
                    DatAccess::Direct => format!("a{i} + n * {dim}"),
                    DatAccess::Indirect { map_dim, idx } => {
                        format!("a{i} + (ptrdiff_t)m{i}[n * {map_dim} + {idx}] * {dim}")
                    }
                    DatAccess::Vector { map_dim } => {
                        w.line(format!("{} *v{i}[{map_dim}];", ty.c_name()));
                        let fill = |w: &mut CodeWriter| {
                            for j in 0..map_dim {
                                w.line(format!("v{i}[{j}] = a{i} + (ptrdiff_t)m{i}[n * {map_dim} + {j}] * {dim};"));
                            }
                        };
                        if optional {
                            w.open(format!("if (a{i})"));
                            fill(w);
                            w.close();
                        } else {
                            fill(w);
                        }
                        format!("v{i}")
                    }
                };
                if optional && !matches!(how, DatAccess::Vector { .. }) {
                    call.push(format!("a{i} ? (void *)({expr}) : NULL"));
                } else {
                    call.push(format!("(void *)({expr})"));
                }
            }
            ArgDesc::Gbl { .. } | ArgDesc::Info { .. } => call.push(format!("(void *)g{i}")),
            ArgDesc::Idx { map_dim: None, .. } => {
                w.line(format!("int x{i} = (int)n;"));
                call.push(format!("&x{i}"));
            }
            ArgDesc::Idx { map_dim: Some(d), idx } => {
                w.line(format!("int x{i} = m{i}[n * {d} + {idx}];"));
                call.push(format!("&x{i}"));
            }
        }
    }
    if call.is_empty() {
        w.line(format!("{}();", sig.kernel_name));
    } else {
        w.line(format!("{}(", sig.kernel_name));
        let n = call.len();
        for (k, c) in call.iter().enumerate() {
            w.line(format!("    {c}{}", if k + 1 < n { "," } else { ");" }));
        }
    }
    w.close();
    // Reduction results and info payloads go back to the (scratch) buffers op2 combines.
    for (i, a) in sig.args.iter().enumerate() {
        let dim = match *a {
            ArgDesc::Gbl { acc, dim, .. } if acc.is_reduction() => dim,
            ArgDesc::Info { dim, .. } => dim,
            _ => continue,
        };
        w.line(format!("for (int k = 0; k < {dim}; k++) a{i}[k] = g{i}[k];"));
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
            ConstDecl { name: "gam".into(), ty: ElemType::Double, dim: 1 },
            ConstDecl { name: "qinf".into(), ty: ElemType::Double, dim: 4 },
        ];
        (args, consts)
    }

    /// A snapshot of the whole translation unit: generated code is part of our interface (users
    /// read it with OP2_DUMP_SOURCE), so changes to it must be deliberate.
    #[test]
    fn snapshot() {
        let (args, consts) = sample();
        let src = "void k(const double *x, double **r, float *o, double *m, int *l, int *i) {\n  *m = gam;\n}\n";
        let sig =
            LoopSignature { loop_name: "demo", kernel_name: "k", kernel_source: src, args: &args, consts: &consts };
        let got = generate(&sig);
        let expected = format!(
            r#"/* op2 loop 'demo' (kernel 'k'), target host C (seq, threads), signature {} */
/*   arg 0: dat double[2] OP_READ map[2] idx 1 */
/*   arg 1: dat double[4] OP_INC map[2] all (vector) */
/*   arg 2: dat float[1] OP_WRITE direct, optional */
/*   arg 3: global double[1] OP_MAX */
/*   arg 4: info int[1] following arg 3 */
/*   arg 5: element index */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define OP2_EXPORT __attribute__((visibility("default")))

/* Constants the kernel uses; values are loaded by op2_set_constants. */
static double gam;
static double qinf[4];

#line 1 "kernel:k"
void k(const double *x, double **r, float *o, double *m, int *l, int *i) {{
  *m = gam;
}}
#line 24 "op2-wrapper:k"

OP2_EXPORT void op2_set_constants(void *const *src) {{
  memcpy(&gam, src[0], sizeof(gam));
  memcpy(qinf, src[1], sizeof(qinf));
}}

/* Runs the kernel for elements [start, end); see the ABI note in op2's codegen/host.rs. */
OP2_EXPORT void op2_loop(int start, int end, void *const *slots) {{
  double *a0 = (double *)slots[0];
  const int *m0 = (const int *)slots[1];
  double *a1 = (double *)slots[2];
  const int *m1 = (const int *)slots[3];
  float *a2 = (float *)slots[4];
  double *a3 = (double *)slots[6];
  double g3[1];
  for (int k = 0; k < 1; k++) g3[k] = a3[k];
  int *a4 = (int *)slots[8];
  int g4[1];
  for (int k = 0; k < 1; k++) g4[k] = a4[k];
  for (ptrdiff_t n = start; n < end; n++) {{
    double *v1[2];
    v1[0] = a1 + (ptrdiff_t)m1[n * 2 + 0] * 4;
    v1[1] = a1 + (ptrdiff_t)m1[n * 2 + 1] * 4;
    int x5 = (int)n;
    k(
        (void *)(a0 + (ptrdiff_t)m0[n * 2 + 1] * 2),
        (void *)(v1),
        a2 ? (void *)(a2 + n * 1) : NULL,
        (void *)g3,
        (void *)g4,
        &x5);
  }}
  for (int k = 0; k < 1; k++) a3[k] = g3[k];
  for (int k = 0; k < 1; k++) a4[k] = g4[k];
}}
"#,
            sig.hash()
        );
        assert_eq!(got, expected);
        // Deterministic: the same signature gives the same text, the loop name aside.
        assert_eq!(generate(&sig), got);
    }

    #[test]
    fn line_directive_points_after_kernel() {
        let (args, consts) = sample();
        let src = "void k(void) {}";
        let sig = LoopSignature {
            loop_name: "d",
            kernel_name: "k",
            kernel_source: src,
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
}
