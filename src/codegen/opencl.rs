//! The OpenCL C emitter (target `opencl`): one program per loop shape and increment strategy,
//! with the user's kernel inlined unchanged.
//!
//! OpenCL 1.2 devices (PoCL on CPUs among them) have no generic address space: a user kernel's
//! unqualified pointer parameters point to `__private` memory. So every argument is staged: the
//! wrapper gathers each element's data into private arrays, calls the kernel on them, and
//! scatters what it may write (WRITE/RW stored, INC added, plainly or atomically). User kernels
//! stay plain C.
//!
//! ABI of the generated `__kernel void op2_kernel(...)`, in order:
//! - `int op2_start, int op2_count`: the work is elements `op2_start + i` (or, for a coloured
//!   launch, `op2_elems[op2_start + i]`), `i` in `[0, op2_count)`, spread over the work-items by a
//!   grid-stride loop;
//! - `__global const int *op2_elems`: the element list of a coloured launch (unused otherwise);
//! - `__global ulong *op2_part`: reduction partials, one row of `partial_words(args)` words per
//!   work-item, seeded by the host (INC: zero; MIN/MAX and info payloads: the caller's values),
//!   combined by the host in work-item order;
//! - per argument, in order: a dat's buffer (then its map, when indirect, then `int op2_on{i}`
//!   when optional); a READ global's buffer; an index argument's map (when it has one); a
//!   matrix's values and its element-to-CSR-slot table (`op_arg_mat`: the kernel fills a private
//!   local block, added through the table, plainly on a launch coloured on the row map, else
//!   atomically); nothing for reductions and info payloads (they live in `op2_part`).
//!
//! Constants are compiled in as `__constant` values (17 significant digits for double, 9 for
//! float: exact), so a new value means a new program (cached by content).

use super::writer::CodeWriter;
use super::{ConstDecl, LoopSignature};
use crate::arg::{Access, ArgDesc, DatAccess};
use crate::core::ElemType;

/// Largest number of values an argument may stage in private memory per element.
pub const MAX_PRIVATE_VALUES: usize = 4096;

/// How indirect increments avoid races.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IncStrategy {
    /// No argument needs it (no indirect INC), or elements are run colour by colour.
    Plain,
    /// Indirect increments are atomic adds (compare-and-swap loops for floating point).
    Atomics,
    /// The plan's blocks, block-coloured: each work-item runs whole blocks, their elements in
    /// order (`op2_elems` holds (first element, count) pairs), one launch per block colour.
    Blocks,
}

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

/// u64 words of one work-item's partials row: every reduction and info payload, in order.
pub fn partial_words(args: &[ArgDesc]) -> usize {
    args.iter()
        .map(|a| match *a {
            ArgDesc::Gbl { ty, dim, acc } if acc.is_reduction() => (dim * ty.size()).div_ceil(8).max(1),
            ArgDesc::Info { ty, dim, .. } => (dim * ty.size()).div_ceil(8).max(1),
            _ => 0,
        })
        .sum()
}

/// Why a loop cannot run on OpenCL with private staging, if it cannot.
pub fn unsupported(args: &[ArgDesc]) -> Option<String> {
    for (i, a) in args.iter().enumerate() {
        let values = match *a {
            ArgDesc::Dat { dim, how: DatAccess::Vector { map_dim }, .. } => dim.saturating_mul(map_dim),
            ArgDesc::Dat { dim, .. } | ArgDesc::Gbl { dim, .. } | ArgDesc::Info { dim, .. } => dim,
            ArgDesc::Idx { .. } => 1,
            ArgDesc::Mat { rows, cols, .. } => rows.saturating_mul(cols),
        };
        if values > MAX_PRIVATE_VALUES {
            return Some(format!(
                "arg {i} stages {values} values per element in private memory (the opencl backend allows {MAX_PRIVATE_VALUES})"
            ));
        }
    }
    None
}

/// A constant's value as an exact OpenCL C literal.
fn literal(ty: ElemType, b: &[u8]) -> String {
    fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&b[..N]);
        a
    }
    let float = |v: f64, digits: usize, suffix: &str| {
        if v.is_nan() {
            "NAN".to_string()
        } else if v.is_infinite() {
            if v > 0.0 { "INFINITY" } else { "(-INFINITY)" }.to_string()
        } else {
            format!("{v:.digits$e}{suffix}")
        }
    };
    match ty {
        ElemType::Double => float(f64::from_ne_bytes(arr(b)), 16, ""),
        ElemType::Float => float(f32::from_ne_bytes(arr(b)) as f64, 8, "f"),
        ElemType::Int => format!("({})", i32::from_ne_bytes(arr(b))),
        ElemType::Uint => format!("{}u", u32::from_ne_bytes(arr(b))),
        ElemType::Ll => format!("({}L)", i64::from_ne_bytes(arr(b))),
        ElemType::Ull => format!("{}UL", u64::from_ne_bytes(arr(b))),
        ElemType::Bool => (if b[0] != 0 { "true" } else { "false" }).to_string(),
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

/// The user's kernel as OpenCL C reads it: C's `long long` is OpenCL's `long` (64 bits);
/// everything else, line breaks included, unchanged.
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
    // The C headers of the kernel environment: what OpenCL C lacks of them is in the prelude.
    let std_headers = ["math.h", "stdint.h", "stdio.h", "stdbool.h", "string.h", "stddef.h", "stdlib.h"];
    out.split_inclusive('\n')
        .map(|l| {
            let t = l.trim_start();
            let is_std = t.starts_with('#')
                && t[1..].trim_start().starts_with("include")
                && std_headers.iter().any(|h| t.contains(&format!("<{h}>")));
            if is_std {
                if l.ends_with('\n') {
                    "\n"
                } else {
                    ""
                }
            } else {
                l
            }
        })
        .collect()
}

/// The kernel source with its quoted includes (`#include "file.h"`) replaced by the files'
/// contents, found in the current directory or the `-I` directories of `OP2_CFLAGS`, so the
/// device compiler needs no include path and the program's source text (what program caches key
/// on) changes when a header does. `#line` directives keep the user's file names and lines.
/// Angle-bracket includes are left alone (the standard ones are dropped by `opencl_source`).
pub fn expand_includes(src: &str, dirs: &[std::path::PathBuf], origin: &str) -> Result<String, String> {
    fn go(src: &str, dirs: &[std::path::PathBuf], origin: &str, depth: usize, out: &mut String) -> Result<(), String> {
        if depth > 16 {
            return Err(format!("includes nested more than 16 deep at {origin}"));
        }
        for (n, line) in src.split_inclusive('\n').enumerate() {
            let t = line.trim_start();
            let rest = t.strip_prefix('#').map(str::trim_start).and_then(|r| r.strip_prefix("include"));
            let name = rest.map(str::trim).and_then(|r| r.strip_prefix('"')).and_then(|r| r.split('"').next());
            match name {
                Some(name) => {
                    let found = std::iter::once(std::path::PathBuf::from("."))
                        .chain(dirs.iter().cloned())
                        .map(|d| d.join(name))
                        .find(|p| p.is_file());
                    let Some(path) = found else {
                        return Err(format!(
                            "{origin}:{}: cannot find the included file \"{name}\" (add -I<dir> to OP2_CFLAGS)",
                            n + 1
                        ));
                    };
                    let text = std::fs::read(&path)
                        .map_err(|e| format!("{origin}:{}: cannot read {}: {e}", n + 1, path.display()))?;
                    let text = crate::core::clex::source_from_bytes(&text)?;
                    let shown = path.display().to_string().replace('\\', "\\\\").replace('"', "\\\"");
                    out.push_str(&format!("#line 1 \"{shown}\"\n"));
                    go(&text, dirs, &shown, depth + 1, out)?;
                    if !out.ends_with('\n') {
                        out.push('\n');
                    }
                    out.push_str(&format!("#line {} \"{}\"\n", n + 2, origin.trim_matches('"')));
                }
                None => out.push_str(line),
            }
        }
        Ok(())
    }
    let mut out = String::with_capacity(src.len());
    go(src, dirs, origin, 0, &mut out)?;
    Ok(out)
}

/// The `-I` directories of a flags string (`-Idir` and `-I dir`).
pub fn include_dirs(flags: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut it = flags.split_whitespace();
    while let Some(f) = it.next() {
        if f == "-I" {
            if let Some(d) = it.next() {
                out.push(d.into());
            }
        } else if let Some(d) = f.strip_prefix("-I") {
            out.push(d.into());
        }
    }
    out
}

const PRELUDE: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL FP_CONTRACT OFF

#ifndef MIN
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
/* What kernels get from <stdint.h> and <string.h> on the host (private memory). */
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

/// Generates the OpenCL program for one loop. `values` holds each constant's bytes, in the
/// order of `sig.consts`; `coloured` selects the element-list form of the iteration.
pub fn generate(sig: &LoopSignature, values: &[&[u8]], coloured: bool, inc: IncStrategy, soa: bool) -> String {
    let mut w = CodeWriter::new();
    w.line(format!(
        "/* op2 loop '{}' (kernel '{}'), target OpenCL C, signature {}, {}{}{} */",
        super::host::comment_text(sig.loop_name),
        sig.kernel_name,
        sig.hash(),
        if inc == IncStrategy::Blocks {
            "block-coloured"
        } else if coloured {
            "coloured"
        } else {
            "uncoloured"
        },
        if inc == IncStrategy::Atomics { ", atomic increments" } else { "" },
        if soa { ", structure-of-arrays dats" } else { "" }
    ));
    for (i, a) in sig.args.iter().enumerate() {
        w.line(format!("/*   arg {i}: {} */", super::host::describe(a)));
    }
    w.raw(PRELUDE);
    w.line("");
    emit_constants(&mut w, sig.consts, values);
    w.line(format!("#line 1 {}", sig.kernel_origin));
    w.raw(&opencl_source(sig.kernel_source));
    let next = w.next_line_number();
    w.line(format!("#line {} \"op2-wrapper:{}\"", next + 1, sig.kernel_name));
    w.line("#undef inline");
    w.line("");
    emit_wrapper(&mut w, sig, coloured, inc, soa);
    w.finish()
}

fn emit_constants(w: &mut CodeWriter, consts: &[ConstDecl], values: &[&[u8]]) {
    if consts.is_empty() {
        return;
    }
    w.line("/* Constants the kernel uses, compiled in. */");
    for (c, v) in consts.iter().zip(values) {
        let ts = c.ty.size();
        let lits: Vec<String> = (0..c.dim).map(|k| literal(c.ty, &v[k * ts..(k + 1) * ts])).collect();
        if c.dim == 1 {
            w.line(format!("__constant {} {} = {};", private_type(c.ty), c.name, lits[0]));
        } else {
            w.line(format!("__constant {} {}[{}] = {{{}}};", private_type(c.ty), c.name, c.dim, lits.join(", ")));
        }
    }
    w.line("");
}

/// Whether a dat argument has a row-count parameter `int op2_s{i}` (structure-of-arrays layout:
/// dats of dim > 1 when `OP_AUTO_SOA=1`).
pub fn soa_arg(a: &ArgDesc, soa: bool) -> bool {
    soa && matches!(a, ArgDesc::Dat { dim, .. } if *dim > 1)
}

fn emit_wrapper(w: &mut CodeWriter, sig: &LoopSignature, coloured: bool, inc: IncStrategy, soa: bool) {
    let stride = partial_words(sig.args);
    let mut params = vec![
        "int op2_start".to_string(),
        "int op2_count".to_string(),
        "__global const int *op2_elems".to_string(),
        "__global ulong *op2_part".to_string(),
    ];
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, how, optional, .. } => {
                params.push(format!("__global {} *op2_d{i}", buffer_type(ty)));
                if soa_arg(a, soa) {
                    params.push(format!("int op2_s{i}"));
                }
                if how != DatAccess::Direct {
                    params.push(format!("__global const int *op2_m{i}"));
                }
                if optional {
                    params.push(format!("int op2_on{i}"));
                }
            }
            ArgDesc::Gbl { ty, acc: Access::Read, .. } => {
                params.push(format!("__global const {} *op2_d{i}", buffer_type(ty)))
            }
            ArgDesc::Idx { map_dim: Some(_), .. } => params.push(format!("__global const int *op2_m{i}")),
            ArgDesc::Mat { ty, .. } => {
                // The matrix's values and the element-to-CSR-slot table.
                params.push(format!("__global {} *op2_d{i}", buffer_type(ty)));
                params.push(format!("__global const int *op2_m{i}"));
            }
            _ => {}
        }
    }
    w.line("/* Runs the kernel for the elements of one launch; see the ABI note in op2's codegen/opencl.rs. */");
    w.line("__kernel void op2_kernel(");
    let n = params.len();
    for (k, p) in params.iter().enumerate() {
        w.line(format!("    {p}{}", if k + 1 < n { "," } else { ")" }));
    }
    w.open("");
    w.line("const int op2_w = (int)get_global_id(0), op2_nw = (int)get_global_size(0);");
    if stride > 0 {
        w.line(format!("__global ulong *op2_row = op2_part + (size_t)op2_w * {stride};"));
    } else {
        w.line("(void)op2_part;");
    }
    let blocks = inc == IncStrategy::Blocks;
    if !coloured && !blocks {
        w.line("(void)op2_elems;");
    }
    // Globals: READ ones copied to private once; reductions accumulate in private copies of this
    // work-item's partials row.
    let mut off = 0usize;
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Gbl { ty, dim, acc: Access::Read } => {
                w.line(format!("{} op2_g{i}[{dim}];", private_type(ty)));
                w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_g{i}[op2_k] = op2_d{i}[op2_k];"));
            }
            ArgDesc::Gbl { ty, dim, .. } | ArgDesc::Info { ty, dim, .. } => {
                let words = (dim * ty.size()).div_ceil(8).max(1);
                w.line(format!("__global {0} *op2_r{i} = (__global {0} *)(op2_row + {off});", buffer_type(ty)));
                w.line(format!("{} op2_g{i}[{dim}];", private_type(ty)));
                w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_g{i}[op2_k] = op2_r{i}[op2_k];"));
                off += words;
            }
            _ => {}
        }
    }
    if blocks {
        // Whole blocks per work-item, their elements in order (no two blocks of a launch share
        // an increment target).
        w.open("for (int op2_b = op2_w; op2_b < op2_count; op2_b += op2_nw)");
        w.line("const int op2_e0 = op2_elems[2 * (op2_start + op2_b)];");
        w.line("const int op2_e1 = op2_e0 + op2_elems[2 * (op2_start + op2_b) + 1];");
        w.open("for (int op2_e = op2_e0; op2_e < op2_e1; op2_e++)");
    } else {
        w.open("for (int op2_i = op2_w; op2_i < op2_count; op2_i += op2_nw)");
        if coloured {
            w.line("const int op2_e = op2_elems[op2_start + op2_i];");
        } else {
            w.line("const int op2_e = op2_start + op2_i;");
        }
    }
    let mut call = Vec::new();
    let mut scatter: Vec<String> = Vec::new();
    for (i, a) in sig.args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, dim, acc, how, optional } => {
                let pt = private_type(ty);
                // (private array, element row) per staged element.
                let rows: Vec<(String, String)> = match how {
                    DatAccess::Direct => vec![(format!("op2_p{i}"), "(size_t)op2_e".to_string())],
                    DatAccess::Indirect { map_dim, idx } => {
                        vec![(format!("op2_p{i}"), format!("(size_t)op2_m{i}[(size_t)op2_e * {map_dim} + {idx}]"))]
                    }
                    DatAccess::Vector { map_dim } => (0..map_dim)
                        .map(|j| {
                            (format!("op2_p{i}[{j}]"), format!("(size_t)op2_m{i}[(size_t)op2_e * {map_dim} + {j}]"))
                        })
                        .collect(),
                };
                // Where component op2_k of a row lives: rows of dim values, or one array per
                // component (op2_s rows long) in the structure-of-arrays layout.
                let at = |row: &str| {
                    if soa_arg(a, soa) {
                        format!("(size_t)op2_k * op2_s{i} + {row}")
                    } else {
                        format!("{row} * {dim} + op2_k")
                    }
                };
                let cols: Vec<(String, String)> = rows.iter().map(|(p, r)| (p.clone(), at(r))).collect();
                let vector = matches!(how, DatAccess::Vector { .. });
                if let DatAccess::Vector { map_dim } = how {
                    w.line(format!("{pt} op2_p{i}[{map_dim}][{dim}];"));
                    w.line(format!("{pt} *op2_v{i}[{map_dim}];"));
                    w.line(format!(
                        "for (int op2_j = 0; op2_j < {map_dim}; op2_j++) op2_v{i}[op2_j] = op2_p{i}[op2_j];"
                    ));
                } else {
                    w.line(format!("{pt} op2_p{i}[{dim}];"));
                }
                let guard = if optional { format!("if (op2_on{i}) ") } else { String::new() };
                for (priv_, base) in &cols {
                    match acc {
                        Access::Read | Access::Rw => {
                            w.line(format!(
                                "{guard}for (int op2_k = 0; op2_k < {dim}; op2_k++) {priv_}[op2_k] = ({pt})op2_d{i}[{base}];"
                            ));
                        }
                        Access::Inc => {
                            w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) {priv_}[op2_k] = 0;"));
                        }
                        _ => {}
                    }
                    let store = match acc {
                        Access::Write | Access::Rw => {
                            format!("op2_d{i}[{base}] = ({}){priv_}[op2_k];", buffer_type(ty))
                        }
                        Access::Inc if inc == IncStrategy::Atomics && how != DatAccess::Direct => {
                            atomic_add(ty, &format!("&op2_d{i}[{base}]"), &format!("{priv_}[op2_k]"))
                        }
                        Access::Inc => format!("op2_d{i}[{base}] += {priv_}[op2_k];"),
                        _ => continue,
                    };
                    scatter.push(format!("{guard}for (int op2_k = 0; op2_k < {dim}; op2_k++) {store}"));
                }
                let expr = if vector { format!("op2_v{i}") } else { format!("op2_p{i}") };
                call.push(if optional { format!("op2_on{i} ? {expr} : 0") } else { expr });
            }
            ArgDesc::Gbl { .. } | ArgDesc::Info { .. } => call.push(format!("op2_g{i}")),
            ArgDesc::Idx { map_dim: None, .. } => {
                w.line(format!("int op2_x{i} = op2_e;"));
                call.push(format!("&op2_x{i}"));
            }
            ArgDesc::Idx { map_dim: Some(d), idx } => {
                w.line(format!("int op2_x{i} = op2_m{i}[(size_t)op2_e * {d} + {idx}];"));
                call.push(format!("&op2_x{i}"));
            }
            ArgDesc::Mat { ty, rows, cols, acc } => {
                // A zeroed private local block, added (stored) through the slot table after the
                // kernel: plainly when the loop is coloured on the row map, else atomically.
                let (pt, n) = (private_type(ty), rows * cols);
                w.line(format!("{pt} op2_p{i}[{n}];"));
                w.line(format!("for (int op2_k = 0; op2_k < {n}; op2_k++) op2_p{i}[op2_k] = 0;"));
                let at = format!("op2_m{i}[(size_t)op2_e * {n} + op2_k]");
                let store = match acc {
                    Access::Write => format!("op2_d{i}[{at}] = op2_p{i}[op2_k];"),
                    _ if inc == IncStrategy::Atomics => {
                        atomic_add(ty, &format!("&op2_d{i}[{at}]"), &format!("op2_p{i}[op2_k]"))
                    }
                    _ => format!("op2_d{i}[{at}] += op2_p{i}[op2_k];"),
                };
                scatter.push(format!("for (int op2_k = 0; op2_k < {n}; op2_k++) {store}"));
                call.push(format!("op2_p{i}"));
            }
        }
    }
    w.call(sig.kernel_name, &call);
    for s in scatter {
        w.line(s);
    }
    w.close();
    if blocks {
        w.close();
    }
    for (i, a) in sig.args.iter().enumerate() {
        let dim = match *a {
            ArgDesc::Gbl { dim, acc, .. } if acc.is_reduction() => dim,
            ArgDesc::Info { dim, .. } => dim,
            _ => continue,
        };
        w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_r{i}[op2_k] = op2_g{i}[op2_k];"));
    }
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn literals_are_exact() {
        let d = 0.1f64 + 0.2;
        let s = literal(ElemType::Double, &d.to_ne_bytes());
        assert_eq!(s.parse::<f64>().unwrap(), d);
        let f = 1.1f32;
        let s = literal(ElemType::Float, &f.to_ne_bytes());
        assert_eq!(s.trim_end_matches('f').parse::<f32>().unwrap(), f);
        assert_eq!(literal(ElemType::Int, &(-3i32).to_ne_bytes()), "(-3)");
        assert_eq!(literal(ElemType::Double, &f64::INFINITY.to_ne_bytes()), "INFINITY");
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
        let consts = vec![ConstDecl { name: "gam".into(), ty: ElemType::Double, dim: 1 }];
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
        assert_eq!(partial_words(&args), 1);
        let plain = generate(&sig, &[&v], false, IncStrategy::Plain, false);
        assert!(plain.contains("op2_d1[(size_t)op2_m1[(size_t)op2_e * 2 + 1] * 4 + op2_k] += op2_p1[op2_k];"));
        assert_eq!(generate(&sig, &[&v], false, IncStrategy::Plain, false), plain);
        assert!(unsupported(&args).is_none());
        let blk = generate(&sig, &[&v], true, IncStrategy::Blocks, false);
        assert!(blk.contains("for (int op2_e = op2_e0; op2_e < op2_e1; op2_e++)"), "{blk}");
        assert!(blk.contains("op2_d1[(size_t)op2_m1[(size_t)op2_e * 2 + 1] * 4 + op2_k] += op2_p1[op2_k];"));
        assert!(!blk.contains("atomic_add_double(&"));
        let soa = generate(&sig, &[&v], false, IncStrategy::Plain, true);
        assert!(soa.contains("__global double *op2_d0,\n    int op2_s0,"), "{soa}");
        assert!(soa.contains("op2_p0[op2_k] = (double)op2_d0[(size_t)op2_k * op2_s0 + (size_t)op2_e];"));
        assert!(
            soa.contains("op2_d1[(size_t)op2_k * op2_s1 + (size_t)op2_m1[(size_t)op2_e * 2 + 1]] += op2_p1[op2_k];")
        );
    }
}
