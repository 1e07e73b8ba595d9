//! What the device emitters (OpenCL C and CUDA C++) share: the staging wrapper around the
//! user's kernel, constants compiled in, reduction partials, include expansion. Each target
//! supplies a `Dialect` (types, address spaces, atomics, entry point, thread ids).
//!
//! Every argument is staged: the wrapper gathers each element's data into private arrays,
//! calls the kernel on them, and scatters what it may write (WRITE/RW and direct INC stored,
//! indirect INC added, plainly or atomically, from zero-staged values). User kernels stay
//! plain C.
//!
//! ABI of the generated entry point `op2_kernel(...)`, in order:
//! - `int op2_start, int op2_count`: the work is elements `op2_start + i` (or, for a coloured
//!   launch, `op2_elems[op2_start + i]`), `i` in `[0, op2_count)`, spread over the work-items
//!   (threads) by a grid-stride loop;
//! - `const int *op2_elems`: the element list of a coloured launch (unused otherwise); for
//!   `IncStrategy::TwoLevel` the packed plan instead: `nb` (blocks), the plan's first element,
//!   then `blkmap`, `offset`, `nelems`, `nthrcol` (`nb` each, OP2's names and meanings) and
//!   `thrcol` (one per element), with `op2_start`/`op2_count` the colour's range of `blkmap`;
//! - `int op2_done`: partials rows below `1 + op2_done` hold what earlier launches of the same
//!   loop left there (a coloured loop's launches carry their rows on); the others start from
//!   the seed row;
//! - `u64 *op2_part`: reduction partials, rows of `partial_words(args)` words: row 0 the seed
//!   (INC: zero; MIN/MAX and info payloads: the caller's values), written by the host only when
//!   it changed (a write waits for every launch queued before it), then one row per work-item
//!   (per thread block on `cuda`), combined by the host in order;
//! - per argument, in order: a dat's buffer (then `int op2_s{i}`, its rows, in the
//!   structure-of-arrays layout, then its map, when indirect, then `int op2_on{i}` when
//!   optional); a READ global's buffer; an index argument's map (when it has one); a matrix's
//!   values and its element-to-CSR-slot table (`op_arg_mat`: the kernel fills a private local
//!   block, added through the table, plainly on launches coloured on the row map, else
//!   atomically); nothing for reductions and info payloads (they live in `op2_part`).
//!
//! Constants are compiled in as constant-memory values (17 significant digits for double, 9
//! for float: exact), so a new value means a new program (cached by content).

use crate::arg::{Access, ArgDesc, DatAccess};
use crate::codegen::writer::CodeWriter;
use crate::codegen::{ConstDecl, LoopSignature};
use crate::core::ElemType;

/// How indirect increments avoid races.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IncStrategy {
    /// No argument needs it (no indirect INC), or elements are run colour by colour.
    Plain,
    /// Indirect increments are atomic adds.
    Atomics,
    /// The plan's blocks, block-coloured: each work-item runs whole blocks, their elements in
    /// order (`op2_elems` holds (first element, count) pairs), one launch per block colour.
    Blocks,
    /// Two-level colouring (CUDA): the plan's blocks of one block colour are thread blocks of
    /// one launch; inside a block, increments are applied one thread colour at a time.
    TwoLevel,
}

/// What a device language calls things.
pub struct Dialect {
    /// Address-space qualifier of pointers into device buffers, with a trailing space (or "").
    pub global: &'static str,
    /// Qualifier of compiled-in constants.
    pub constant: &'static str,
    /// Prefix of the constants' names in the generated code, with a `#define` of each user
    /// name to it (or "": the user's names), so a constant may share a name with a builtin
    /// function of the language (CUDA has `j0`, `y1`, ...).
    pub const_prefix: &'static str,
    /// The unsigned 64-bit integer type.
    pub u64_type: &'static str,
    /// The type of an element in device buffers.
    pub buffer_type: fn(ElemType) -> &'static str,
    /// The type the kernel sees for an element.
    pub private_type: fn(ElemType) -> &'static str,
    /// An atomic add statement of `val` to `*addr` (a device-buffer element of the type).
    pub atomic_add: fn(ElemType, &str, &str) -> String,
    /// A vector argument's pointer array as the kernel's parameter receives it.
    pub vector_arg: fn(&str) -> String,
    /// The entry point's head, before its parameter list.
    pub entry: &'static str,
    /// The statement defining `op2_w` (this work-item) and `op2_nw` (how many there are).
    pub ids: &'static str,
    /// Reductions combined per block in shared memory (one partials row per block, each
    /// launch's block `b` adding to row `b`), instead of one row per work-item.
    pub block_reduce: bool,
    /// The target's name in the header comment.
    pub title: &'static str,
    /// What precedes the constants and the kernel.
    pub prelude: &'static [&'static str],
    /// The user's kernel source as the language reads it.
    pub kernel_source: fn(&str) -> String,
    /// Lines after the kernel, before the wrapper.
    pub after_kernel: &'static str,
    /// A NaN and a positive infinity, as constant expressions.
    pub nan: &'static str,
    pub inf: &'static str,
}

/// Widest vector argument (`-map_dim`) whose rows are staged one statement per map column;
/// wider ones are staged by a loop (a 300-column argument unrolled kept NVIDIA's OpenCL
/// compiler busy for over 100 s on the first GPU run).
pub const UNROLL_VECTOR_MAX: usize = 16;

/// Largest number of values an argument may stage in private memory per element.
pub const MAX_PRIVATE_VALUES: usize = 4096;

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

/// Why a loop cannot run on a device backend with private staging, if it cannot.
pub fn unsupported(args: &[ArgDesc], backend: &str) -> Option<String> {
    unsupported_with(args, backend, false)
}

/// Whether argument `a` is staged in global-memory scratch rather than private memory (with
/// `scratch` on): a dat argument of more than `MAX_PRIVATE_VALUES` values per element, or a READ
/// global of more (passed as its device buffer). Not `bool` data (its buffer type is not the
/// kernel's).
pub fn in_scratch(a: &ArgDesc) -> bool {
    match *a {
        ArgDesc::Dat { ty, dim, how: DatAccess::Vector { map_dim }, .. } => {
            ty != ElemType::Bool && dim.saturating_mul(map_dim) > MAX_PRIVATE_VALUES
        }
        ArgDesc::Dat { ty, dim, .. } | ArgDesc::Gbl { ty, dim, acc: Access::Read } => {
            ty != ElemType::Bool && dim > MAX_PRIVATE_VALUES
        }
        _ => false,
    }
}

/// Bytes of global-memory scratch one work-item needs (dat arguments `in_scratch`, each
/// rounded up to 8 bytes), and each such argument's byte offset in it.
pub fn scratch_layout(args: &[ArgDesc]) -> (usize, Vec<Option<usize>>) {
    let mut off = 0usize;
    let offs = args
        .iter()
        .map(|a| match *a {
            ArgDesc::Dat { ty, dim, how, .. } if in_scratch(a) => {
                let n = match how {
                    DatAccess::Vector { map_dim } => dim * map_dim,
                    _ => dim,
                };
                let at = off;
                off += (n * ty.size()).div_ceil(8) * 8;
                Some(at)
            }
            _ => None,
        })
        .collect();
    (off, offs)
}

/// `unsupported`; with `scratch`, arguments `in_scratch` are allowed (staged in global memory).
pub fn unsupported_with(args: &[ArgDesc], backend: &str, scratch: bool) -> Option<String> {
    for (i, a) in args.iter().enumerate() {
        if scratch && in_scratch(a) {
            continue;
        }
        let values = match *a {
            ArgDesc::Dat { dim, how: DatAccess::Vector { map_dim }, .. } => dim.saturating_mul(map_dim),
            ArgDesc::Dat { dim, .. } | ArgDesc::Gbl { dim, .. } | ArgDesc::Info { dim, .. } => dim,
            ArgDesc::Idx { .. } => 1,
            ArgDesc::Mat { rows, cols, .. } => rows.saturating_mul(cols),
        };
        if values > MAX_PRIVATE_VALUES {
            return Some(format!(
                "arg {i} stages {values} values per element in private memory (the {backend} backend allows {MAX_PRIVATE_VALUES})"
            ));
        }
    }
    None
}

/// Whether a loop of these arguments may be a part of a fused device unit (`generate_fused`):
/// nothing it writes goes through a map (no colouring, no races between elements), no global
/// reduction or info payload (their partials belong to a loop's own launch), no matrix, and
/// every argument staged in private memory.
pub fn fusable_part(args: &[ArgDesc]) -> bool {
    unsupported(args, "").is_none()
        && args.iter().all(|a| match *a {
            ArgDesc::Dat { acc, how, .. } => how == DatAccess::Direct || !acc.writes(),
            ArgDesc::Gbl { acc, .. } => acc == Access::Read,
            ArgDesc::Idx { .. } => true,
            ArgDesc::Info { .. } | ArgDesc::Mat { .. } => false,
        })
}

/// Generates one program that runs the loops `parts` (over one set, each `fusable_part`, every
/// dependency between them direct) as one launch: per element, each loop's kernel in turn, its
/// arguments gathered before and written back after it, so a later loop reads what an earlier
/// one wrote to the same element. The entry point takes every part's arguments, in order, as if
/// they were one loop's (the ABI note; argument `j` of part `p` is the unit's argument `j` plus
/// the parts' arguments before it). `consts` are the constants of all the parts (sorted by
/// name), `values` their bytes in that order. Kernels of one name and source are included once;
/// two kernels of one name with different sources make a program that does not compile (the
/// caller then runs the loops unfused).
pub fn generate_fused(
    d: &Dialect,
    parts: &[LoopSignature],
    consts: &[ConstDecl],
    values: &[&[u8]],
    soa: bool,
) -> String {
    let mut w = CodeWriter::new();
    let names: Vec<String> =
        parts.iter().map(|p| format!("'{}'", crate::codegen::writer::comment_text(p.loop_name))).collect();
    let kernels: Vec<String> = parts.iter().map(|p| format!("'{}'", p.kernel_name)).collect();
    let hashes: Vec<String> = parts.iter().map(|p| p.hash()).collect();
    w.line(format!(
        "/* op2 fused loops {} (kernels {}), target {}, signatures {}, one launch, each loop's kernel per element in turn, uncoloured{} */",
        names.join(" + "),
        kernels.join(", "),
        d.title,
        hashes.join("+"),
        if soa { ", structure-of-arrays dats" } else { "" }
    ));
    let mut base = 0;
    for p in parts {
        for (j, a) in p.args.iter().enumerate() {
            w.line(format!(
                "/*   arg {}: loop '{}' arg {j}: {} */",
                base + j,
                crate::codegen::writer::comment_text(p.loop_name),
                crate::backend::host::codegen::describe(a)
            ));
        }
        base += p.args.len();
    }
    for p in d.prelude {
        w.raw(p);
    }
    w.line("");
    emit_constants(d, &mut w, consts, values);
    let mut included: Vec<(&str, &str)> = Vec::new();
    for p in parts {
        if included.contains(&(p.kernel_name, p.kernel_source)) {
            continue;
        }
        included.push((p.kernel_name, p.kernel_source));
        w.line(format!("#line 1 {}", p.kernel_origin));
        w.raw(&(d.kernel_source)(p.kernel_source));
        if !p.kernel_source.ends_with('\n') {
            w.raw("\n");
        }
    }
    let next = w.next_line_number();
    w.line(format!("#line {} \"op2-wrapper:fused\"", next + 1));
    w.raw(d.after_kernel);
    let args: Vec<ArgDesc> = parts.iter().flat_map(|p| p.args.iter().copied()).collect();
    let params = entry_params(d, &args, soa, 0);
    w.line("/* Runs each loop's kernel in turn for the elements of one launch; see the ABI note in op2's codegen/device.rs. */");
    w.line(format!("{}(", d.entry));
    let n = params.len();
    for (k, p) in params.iter().enumerate() {
        w.line(format!("    {p}{}", if k + 1 < n { "," } else { ")" }));
    }
    w.open("");
    w.line(d.ids);
    w.line("(void)op2_part;");
    w.line("(void)op2_done;");
    w.line("(void)op2_elems;");
    for (i, a) in args.iter().enumerate() {
        if let ArgDesc::Gbl { ty, dim, acc: Access::Read } = *a {
            w.line(format!("{} op2_g{i}[{dim}];", (d.private_type)(ty)));
            w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_g{i}[op2_k] = op2_d{i}[op2_k];"));
        }
    }
    w.open("for (int op2_i = op2_w; op2_i < op2_count; op2_i += op2_nw)");
    w.line("const int op2_e = op2_start + op2_i;");
    let staging = Staging { scratch: None, inc: IncStrategy::Plain, soa, shared: None };
    let mut base = 0;
    for p in parts {
        w.line(format!(
            "/* loop '{}' (kernel '{}') */",
            crate::codegen::writer::comment_text(p.loop_name),
            p.kernel_name
        ));
        w.open("");
        let (call, scatter) = stage_args(d, &mut w, p.args, base, &staging);
        w.call(p.kernel_name, &call);
        for s in scatter {
            w.line(s);
        }
        w.close();
        base += p.args.len();
    }
    w.close();
    w.close();
    w.finish()
}

/// A constant's value as an exact literal of the dialect.
pub fn literal(d: &Dialect, ty: ElemType, b: &[u8]) -> String {
    fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&b[..N]);
        a
    }
    let float = |v: f64, digits: usize, suffix: &str| {
        if v.is_nan() {
            d.nan.to_string()
        } else if v.is_infinite() {
            if v > 0.0 {
                d.inf.to_string()
            } else {
                format!("(-{})", d.inf)
            }
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
                    let text = crate::core::file::read_regular_io(&path)
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

/// The kernel source without its includes of the C headers of the kernel environment
/// (`<math.h>`, `<stdint.h>`, ...: what device languages lack of them is in each prelude);
/// everything else, line breaks included, unchanged.
pub fn drop_std_includes(src: &str) -> String {
    let std_headers = ["math.h", "stdint.h", "stdio.h", "stdbool.h", "string.h", "stddef.h", "stdlib.h"];
    src.split_inclusive('\n')
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

/// Generates the program for one loop in dialect `d`. `values` holds each constant's bytes, in
/// the order of `sig.consts`; `coloured` selects the element-list form of the iteration.
pub fn generate(
    d: &Dialect,
    sig: &LoopSignature,
    values: &[&[u8]],
    coloured: bool,
    inc: IncStrategy,
    soa: bool,
) -> String {
    generate_with(d, sig, values, coloured, inc, soa, Options::default())
}

/// `generate` for `IncStrategy::TwoLevel` with each plan block's indirect data staged in shared
/// memory by `pattern` (CUDA): the block's threads read its targets of each (dat, map) pair once
/// (or zero them, for OP_INC), the elements work on them there, increments added one thread
/// colour at a time, and the block adds (OP_INC) or stores (OP_RW) each target once at its end.
/// The launch's dynamic shared memory is the reductions' rows (threads x `partial_words` words)
/// then the plan's largest `staging_bytes`; `op2_elems` is the packed plan with its staging
/// arrays (`backend::device::staged_plan`).
pub fn generate_staged(d: &Dialect, sig: &LoopSignature, values: &[&[u8]], soa: bool, pattern: StagePattern) -> String {
    generate_with(
        d,
        sig,
        values,
        false,
        IncStrategy::TwoLevel,
        soa,
        Options { stage: Some(pattern), ..Default::default() },
    )
}

/// What `generate_with` adds to `generate` (see there).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub scratch: bool,
    pub contiguous: bool,
    /// `IncStrategy::TwoLevel` only (CUDA): the indirect data of each plan block staged in
    /// shared memory, by this pattern (`stage_pattern`).
    pub stage: Option<StagePattern>,
}

/// Most arguments a loop staged in shared memory may have.
pub const STAGE_MAX_ARGS: usize = 32;

/// Which staging area (the plan's (dat, map) pair) each argument of a loop staged in shared
/// memory uses: `pair[i]` for indirect dat argument `i`, `NO_PAIR` for the others. A loop's
/// pattern comes from its call (which arguments share a dat and map), so the generated code and
/// the plan's arrays agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StagePattern {
    pub pair: [u8; STAGE_MAX_ARGS],
    pub npairs: u8,
}

impl Default for StagePattern {
    fn default() -> Self {
        StagePattern { pair: [NO_PAIR; STAGE_MAX_ARGS], npairs: 0 }
    }
}

/// `StagePattern::pair` of an argument that is not staged.
pub const NO_PAIR: u8 = u8::MAX;

/// Whether a loop's arguments can be staged in shared memory: every indirect dat argument reads
/// one map column (no vector argument), is not optional, and is OP_READ, OP_RW or OP_INC; at
/// most `STAGE_MAX_ARGS` arguments.
pub fn stageable(args: &[ArgDesc]) -> bool {
    args.len() <= STAGE_MAX_ARGS
        && args.iter().any(|a| matches!(a, ArgDesc::Dat { how: DatAccess::Indirect { .. }, .. }))
        && args.iter().all(|a| match *a {
            ArgDesc::Dat { how: DatAccess::Direct, .. } => true,
            ArgDesc::Dat { how: DatAccess::Vector { .. }, .. } => false,
            ArgDesc::Dat { optional: true, .. } => false,
            ArgDesc::Dat { acc, .. } => matches!(acc, Access::Read | Access::Rw | Access::Inc),
            ArgDesc::Mat { .. } => false,
            _ => true,
        })
}

/// The pattern of `pairs` (each argument's pair, None for arguments not staged), if the
/// arguments of each pair agree in type, dim and access and the loop is `stageable`.
pub fn stage_pattern(args: &[ArgDesc], pairs: &[Option<usize>]) -> Option<StagePattern> {
    if !stageable(args) || pairs.len() != args.len() {
        return None;
    }
    let mut p = StagePattern::default();
    let mut first: Vec<Option<usize>> = Vec::new();
    for (i, (a, pair)) in args.iter().zip(pairs).enumerate() {
        let indirect = matches!(a, ArgDesc::Dat { how: DatAccess::Indirect { .. }, .. });
        match (indirect, *pair) {
            (false, None) => {}
            (true, Some(q)) if q < NO_PAIR as usize => {
                if first.len() <= q {
                    first.resize(q + 1, None);
                }
                match first[q] {
                    None => first[q] = Some(i),
                    Some(f) => {
                        let same = match (args[f], *a) {
                            (
                                ArgDesc::Dat { ty: t1, dim: d1, acc: a1, .. },
                                ArgDesc::Dat { ty: t2, dim: d2, acc: a2, .. },
                            ) => t1 == t2 && d1 == d2 && a1 == a2,
                            _ => false,
                        };
                        if !same {
                            return None;
                        }
                    }
                }
                p.pair[i] = q as u8;
            }
            _ => return None,
        }
    }
    if first.iter().any(Option::is_none) {
        return None;
    }
    p.npairs = first.len() as u8;
    Some(p)
}

/// A pattern with each indirect argument in its own pair (what `OP2_GENERATE` writes for the
/// `stage` variant: a call whose arguments share a dat and map gets its own).
pub fn own_pairs(args: &[ArgDesc]) -> Option<StagePattern> {
    let mut n = 0;
    let pairs: Vec<Option<usize>> = args
        .iter()
        .map(|a| {
            matches!(a, ArgDesc::Dat { how: DatAccess::Indirect { .. }, .. }).then(|| {
                n += 1;
                n - 1
            })
        })
        .collect();
    stage_pattern(args, &pairs)
}

/// `generate`; with `opts.contiguous`, each work-item of a launch with reductions runs a contiguous
/// range of the launch's elements (work-item w the w-th of `op2_nw` near-equal ranges) instead
/// of every `op2_nw`-th element: on CPU runtimes, which run a work-group's work-items one after
/// the other, memory is then read in order (a grid stride makes each work-item jump through
/// the arrays, too many streams for the prefetchers). With `opts.scratch`, arguments `in_scratch` are staged in global memory: the entry
/// point takes one more parameter when a dat argument is, `uchar *op2_scr` (`scratch_layout(args).0`
/// bytes per work-item), dat arguments are gathered into and scattered from the work-item's part of it,
/// large READ globals are passed as their device buffer, and the kernel must take those
/// parameters as pointers to global memory (the caller rewrites its definition:
/// `global_params`).
pub fn generate_with(
    d: &Dialect,
    sig: &LoopSignature,
    values: &[&[u8]],
    coloured: bool,
    inc: IncStrategy,
    soa: bool,
    opts: Options,
) -> String {
    let mut w = CodeWriter::new();
    w.line(format!(
        "/* op2 loop '{}' (kernel '{}'), target {}, signature {}, {}{}{} */",
        crate::codegen::writer::comment_text(sig.loop_name),
        sig.kernel_name,
        d.title,
        sig.hash(),
        if inc == IncStrategy::Blocks {
            "block-coloured"
        } else if coloured {
            "coloured"
        } else {
            "uncoloured"
        },
        match inc {
            IncStrategy::Atomics => ", atomic increments",
            IncStrategy::TwoLevel if opts.stage.is_some() => {
                ", plan blocks with two-level colouring, indirect data staged in shared memory"
            }
            IncStrategy::TwoLevel => ", plan blocks with two-level colouring",
            IncStrategy::Plain | IncStrategy::Blocks => "",
        },
        if soa { ", structure-of-arrays dats" } else { "" }
    ));
    for (i, a) in sig.args.iter().enumerate() {
        w.line(format!("/*   arg {i}: {} */", crate::backend::host::codegen::describe(a)));
    }
    for p in d.prelude {
        w.raw(p);
    }
    w.line("");
    emit_constants(d, &mut w, sig.consts, values);
    w.line(format!("#line 1 {}", sig.kernel_origin));
    w.raw(&(d.kernel_source)(sig.kernel_source));
    let next = w.next_line_number();
    w.line(format!("#line {} \"op2-wrapper:{}\"", next + 1, sig.kernel_name));
    w.raw(d.after_kernel);
    emit_wrapper(d, &mut w, sig, coloured, inc, soa, opts);
    w.finish()
}

fn emit_constants(d: &Dialect, w: &mut CodeWriter, consts: &[ConstDecl], values: &[&[u8]]) {
    if consts.is_empty() {
        return;
    }
    w.line("/* Constants the kernel uses, compiled in. */");
    for (c, v) in consts.iter().zip(values) {
        let ts = c.ty.size();
        let lits: Vec<String> = (0..c.dim).map(|k| literal(d, c.ty, &v[k * ts..(k + 1) * ts])).collect();
        let name = format!("{}{}", d.const_prefix, c.name);
        if c.dim == 1 {
            w.line(format!("{} {} {name} = {};", d.constant, (d.private_type)(c.ty), lits[0]));
        } else {
            w.line(format!("{} {} {name}[{}] = {{{}}};", d.constant, (d.private_type)(c.ty), c.dim, lits.join(", ")));
        }
        if !d.const_prefix.is_empty() {
            w.line(format!("#define {} {name}", c.name));
        }
    }
    w.line("");
}

/// Whether a dat argument has a row-count parameter `int op2_s{i}` (structure-of-arrays layout:
/// dats of dim > 1 when `OP_AUTO_SOA=1`).
pub fn soa_arg(a: &ArgDesc, soa: bool) -> bool {
    soa && matches!(a, ArgDesc::Dat { dim, .. } if *dim > 1)
}

/// Whether a dat argument's map is passed transposed (column after column, `op2_mr{i}` rows
/// each: consecutive elements read consecutive words of a column) in the structure-of-arrays
/// layout: maps of more than one column through which a dat is accessed.
pub fn soa_map(a: &ArgDesc, soa: bool) -> bool {
    soa && matches!(
        a,
        ArgDesc::Dat { how: DatAccess::Indirect { map_dim, .. } | DatAccess::Vector { map_dim }, .. } if *map_dim > 1
    )
}

/// The entry point's parameters for `args` (the ABI note): the fixed ones, then each argument's;
/// `scr_bytes` > 0 adds the global-memory scratch.
fn entry_params(d: &Dialect, args: &[ArgDesc], soa: bool, scr_bytes: usize) -> Vec<String> {
    let g = d.global;
    let mut params = vec![
        "int op2_start".to_string(),
        "int op2_count".to_string(),
        "int op2_done".to_string(),
        format!("{g}const int *op2_elems"),
        format!("{g}{u} *op2_part", u = d.u64_type),
    ];
    for (i, a) in args.iter().enumerate() {
        match *a {
            ArgDesc::Dat { ty, how, optional, .. } => {
                params.push(format!("{g}{} *op2_d{i}", (d.buffer_type)(ty)));
                if soa_arg(a, soa) {
                    params.push(format!("int op2_s{i}"));
                }
                if how != DatAccess::Direct {
                    params.push(format!("{g}const int *op2_m{i}"));
                }
                if soa_map(a, soa) {
                    params.push(format!("int op2_mr{i}"));
                }
                if optional {
                    params.push(format!("int op2_on{i}"));
                }
            }
            ArgDesc::Gbl { ty, acc: Access::Read, .. } => {
                params.push(format!("{g}const {} *op2_d{i}", (d.buffer_type)(ty)))
            }
            ArgDesc::Idx { map_dim: Some(_), .. } => params.push(format!("{g}const int *op2_m{i}")),
            ArgDesc::Mat { ty, .. } => {
                // The matrix's values and the element-to-CSR-slot table.
                params.push(format!("{g}{} *op2_d{i}", (d.buffer_type)(ty)));
                params.push(format!("{g}const int *op2_m{i}"));
            }
            _ => {}
        }
    }
    if scr_bytes > 0 {
        params.push(format!("{g}uchar *op2_scr"));
    }
    params
}

fn emit_wrapper(
    d: &Dialect,
    w: &mut CodeWriter,
    sig: &LoopSignature,
    coloured: bool,
    inc: IncStrategy,
    soa: bool,
    opts: Options,
) {
    let Options { scratch, contiguous, stage } = opts;
    let stage = stage.filter(|_| inc == IncStrategy::TwoLevel && d.block_reduce);
    let g = d.global;
    let big = |a: &ArgDesc| scratch && in_scratch(a);
    let (scr_bytes, scr_off) = if scratch { scratch_layout(sig.args) } else { (0, vec![None; sig.args.len()]) };
    let stride = partial_words(sig.args);
    let params = entry_params(d, sig.args, soa, scr_bytes);
    w.line("/* Runs the kernel for the elements of one launch; see the ABI note in op2's codegen/device.rs. */");
    w.line(format!("{}(", d.entry));
    let n = params.len();
    for (k, p) in params.iter().enumerate() {
        w.line(format!("    {p}{}", if k + 1 < n { "," } else { ")" }));
    }
    w.open("");
    w.line(d.ids);
    if stride > 0 {
        // Row 0 is the seed; this work-item's (block's) row is 1 + its index, and starts from the
        // seed unless an earlier launch of the loop left a value in it.
        let row = if d.block_reduce { "(int)blockIdx.x" } else { "op2_w" };
        let u = d.u64_type;
        w.line(format!("{g}{u} *op2_row = op2_part + (size_t)(1 + {row}) * {stride};"));
        w.line(format!("{g}const {u} *op2_from = {row} < op2_done ? op2_row : op2_part;"));
    } else {
        w.line("(void)op2_part;");
        w.line("(void)op2_done;");
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
            ArgDesc::Gbl { ty, acc: Access::Read, .. } if big(a) => {
                w.line(format!("{g}const {} *op2_g{i} = op2_d{i};", (d.buffer_type)(ty)));
            }
            ArgDesc::Gbl { ty, dim, acc: Access::Read } => {
                w.line(format!("{} op2_g{i}[{dim}];", (d.private_type)(ty)));
                w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_g{i}[op2_k] = op2_d{i}[op2_k];"));
            }
            ArgDesc::Gbl { ty, dim, .. } | ArgDesc::Info { ty, dim, .. } => {
                let words = (dim * ty.size()).div_ceil(8).max(1);
                let bt = (d.buffer_type)(ty);
                if !d.block_reduce {
                    w.line(format!("{g}{bt} *op2_r{i} = ({g}{bt} *)(op2_row + {off});"));
                }
                w.line(format!("{g}const {bt} *op2_f{i} = ({g}const {bt} *)(op2_from + {off});"));
                w.line(format!("{} op2_g{i}[{dim}];", (d.private_type)(ty)));
                // A block's row is shared by its threads: one of them starts increments from it.
                let from = if d.block_reduce && matches!(a, ArgDesc::Gbl { acc: Access::Inc, .. }) {
                    format!("threadIdx.x == 0 ? op2_f{i}[op2_k] : ({})0", (d.private_type)(ty))
                } else {
                    format!("op2_f{i}[op2_k]")
                };
                w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_g{i}[op2_k] = {from};"));
                off += words;
            }
            _ => {}
        }
    }
    let two_level = inc == IncStrategy::TwoLevel;
    // Staged pairs: (pair, first argument, element type, dim, access).
    let pairs: Vec<(usize, usize, ElemType, usize, Access)> = match stage {
        Some(p) => (0..p.npairs as usize)
            .filter_map(|q| {
                let i = (0..sig.args.len()).find(|&i| p.pair[i] as usize == q)?;
                match sig.args[i] {
                    ArgDesc::Dat { ty, dim, acc, .. } => Some((q, i, ty, dim, acc)),
                    _ => None,
                }
            })
            .collect(),
        None => Vec::new(),
    };
    if two_level {
        // op2_elems is the packed plan (the ABI note above); op2_start/op2_count select the
        // colour's blocks in blkmap. Control flow is uniform in a thread block (barriers).
        let h = if stage.is_some() { 4 } else { 2 };
        w.line("const int op2_nb = op2_elems[0], op2_pstart = op2_elems[1];");
        w.line(format!("const int *op2_blkmap = op2_elems + {h}, *op2_offset = op2_blkmap + op2_nb;"));
        w.line("const int *op2_nelems = op2_offset + op2_nb, *op2_nthrcol = op2_nelems + op2_nb;");
        w.line("const int *op2_thrcol = op2_nthrcol + op2_nb;");
        if stage.is_some() {
            // The staging arrays follow (`backend::device::staged_plan`): per (block, pair) the
            // start and length of its targets in ind_map; per argument its loc_map column; then
            // loc_map (a column of ntot entries per column) and ind_map.
            let (np, na) = (pairs.len(), sig.args.len());
            w.line("const int op2_ntot = op2_elems[2], op2_ncols = op2_elems[3];");
            w.line(format!("const int *op2_ioffs = op2_thrcol + op2_ntot, *op2_isizes = op2_ioffs + op2_nb * {np};"));
            w.line(format!(
                "const int *op2_al = op2_isizes + op2_nb * {np}, *op2_lm = op2_al + {na}, *op2_im = op2_lm + (size_t)op2_ncols * op2_ntot;"
            ));
            w.line(format!("extern __shared__ {} op2_shm[];", d.u64_type));
        }
        w.line("(void)op2_nw;");
        w.open("for (int op2_bi = (int)blockIdx.x; op2_bi < op2_count; op2_bi += (int)gridDim.x)");
        w.line("const int op2_b = op2_blkmap[op2_start + op2_bi];");
        w.line("const int op2_n = op2_nelems[op2_b], op2_nc = op2_nthrcol[op2_b];");
        if stage.is_some() {
            // This block's targets of each pair, in shared memory after the reductions' rows:
            // read (OP_READ, OP_RW) or zeroed (OP_INC) by all threads together.
            let np = pairs.len();
            w.line(format!("unsigned char *op2_stage = (unsigned char *)(op2_shm + (size_t)blockDim.x * {stride});"));
            w.line("size_t op2_so = 0;");
            for &(q, i, ty, dim, acc) in &pairs {
                let bt = (d.buffer_type)(ty);
                let bytes = dim * ty.size();
                w.line(format!(
                    "const int op2_io{q} = op2_ioffs[op2_b * {np} + {q}], op2_is{q} = op2_isizes[op2_b * {np} + {q}];"
                ));
                w.line(format!("{bt} *op2_sh{q} = ({bt} *)(op2_stage + op2_so);"));
                w.line(format!("op2_so += ((size_t)op2_is{q} * {bytes} + 15) / 16 * 16;"));
                let load = match acc {
                    Access::Inc => format!("op2_sh{q}[op2_r] = ({bt})0;"),
                    _ => format!("op2_sh{q}[op2_r] = op2_d{i}[{}];", stage_global(sig.args, i, dim, soa)),
                };
                w.open(format!(
                    "for (int op2_r = (int)threadIdx.x; op2_r < op2_is{q} * {dim}; op2_r += (int)blockDim.x)"
                ));
                w.line(format!("const int op2_gr = op2_im[op2_io{q} + op2_r / {dim}], op2_k = op2_r % {dim};"));
                w.line("(void)op2_gr;");
                w.line("(void)op2_k;");
                w.line(load);
                w.close();
            }
            w.line("__syncthreads();");
        }
        w.open("for (int op2_j0 = 0; op2_j0 < op2_n; op2_j0 += (int)blockDim.x)");
        w.line("const int op2_j = op2_j0 + (int)threadIdx.x;");
        w.line("const bool op2_live = op2_j < op2_n;");
        w.line("const int op2_e = op2_offset[op2_b] + (op2_live ? op2_j : 0);");
    } else if blocks {
        // Whole blocks per work-item, their elements in order (no two blocks of a launch share
        // an increment target).
        w.open("for (int op2_b = op2_w; op2_b < op2_count; op2_b += op2_nw)");
        w.line("const int op2_e0 = op2_elems[2 * (op2_start + op2_b)];");
        w.line("const int op2_e1 = op2_e0 + op2_elems[2 * (op2_start + op2_b) + 1];");
        w.open("for (int op2_e = op2_e0; op2_e < op2_e1; op2_e++)");
    } else {
        if contiguous && stride > 0 {
            w.line("const int op2_per = op2_count / op2_nw, op2_more = op2_count % op2_nw;");
            w.line("const int op2_i0 = op2_w * op2_per + (op2_w < op2_more ? op2_w : op2_more);");
            w.line("const int op2_i1 = op2_i0 + op2_per + (op2_w < op2_more ? 1 : 0);");
            w.open("for (int op2_i = op2_i0; op2_i < op2_i1; op2_i++)");
        } else {
            w.open("for (int op2_i = op2_w; op2_i < op2_count; op2_i += op2_nw)");
        }
        if coloured {
            w.line("const int op2_e = op2_elems[op2_start + op2_i];");
        } else {
            w.line("const int op2_e = op2_start + op2_i;");
        }
    }
    let staging = Staging { scratch: scratch.then_some((scr_bytes, scr_off.as_slice())), inc, soa, shared: stage };
    let (call, scatter) = stage_args(d, w, sig.args, 0, &staging);
    if two_level {
        // Every thread gathers (in bounds: a dead thread reads its block's first element); live
        // ones run the kernel and write back in their thread colour's turn.
        w.open("if (op2_live)");
        w.call(sig.kernel_name, &call);
        w.close();
        w.open("for (int op2_c = 0; op2_c < op2_nc; op2_c++)");
        w.open("if (op2_live && op2_thrcol[op2_e - op2_pstart] == op2_c)");
        for s in scatter {
            w.line(s);
        }
        w.close();
        w.line("__syncthreads();");
        w.close();
        w.close();
        if stage.is_some() {
            // The block's increments (OP_INC) added and its OP_RW rows stored, each target once:
            // no other block of this colour has them.
            w.line("__syncthreads();");
            for &(q, i, _, dim, acc) in &pairs {
                let store = match acc {
                    Access::Inc => "+=",
                    Access::Rw => "=",
                    _ => continue,
                };
                w.open(format!(
                    "for (int op2_r = (int)threadIdx.x; op2_r < op2_is{q} * {dim}; op2_r += (int)blockDim.x)"
                ));
                w.line(format!("const int op2_gr = op2_im[op2_io{q} + op2_r / {dim}], op2_k = op2_r % {dim};"));
                w.line(format!("op2_d{i}[{}] {store} op2_sh{q}[op2_r];", stage_global(sig.args, i, dim, soa)));
                w.close();
            }
            w.line("__syncthreads();");
        }
    } else {
        w.call(sig.kernel_name, &call);
        for s in scatter {
            w.line(s);
        }
    }
    w.close();
    if blocks {
        w.close();
    }
    if d.block_reduce && stride > 0 {
        emit_block_reduce(d, w, sig.args, stride);
    } else {
        for (i, a) in sig.args.iter().enumerate() {
            let dim = match *a {
                ArgDesc::Gbl { dim, acc, .. } if acc.is_reduction() => dim,
                ArgDesc::Info { dim, .. } => dim,
                _ => continue,
            };
            w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) op2_r{i}[op2_k] = op2_g{i}[op2_k];"));
        }
    }
    w.close();
}

/// How `stage_args` stages: the global-memory scratch (bytes per work-item, each argument's
/// offset in it) when large arguments go there, the increment strategy, the dats' layout, and
/// the shared-memory staging of a plan block's indirect data (`op2_sh{pair}`, rows of dim values
/// at the element's `loc_map` position).
#[derive(Clone, Copy)]
struct Staging<'s> {
    scratch: Option<(usize, &'s [Option<usize>])>,
    inc: IncStrategy,
    soa: bool,
    shared: Option<StagePattern>,
}

/// Where component `op2_k` of global row `op2_gr` of argument `i`'s dat lives.
fn stage_global(args: &[ArgDesc], i: usize, dim: usize, soa: bool) -> String {
    if soa_arg(&args[i], soa) {
        format!("(size_t)op2_k * op2_s{i} + op2_gr")
    } else {
        format!("(size_t)op2_gr * {dim} + op2_k")
    }
}

/// Emits the staging of one element's arguments `args` (named from `base` on: argument `j` of
/// `args` is `op2_*{base + j}` in the generated code) and returns the kernel call's arguments
/// and the statements that write back after the call.
fn stage_args(
    d: &Dialect,
    w: &mut CodeWriter,
    args: &[ArgDesc],
    base: usize,
    st: &Staging,
) -> (Vec<String>, Vec<String>) {
    let g = d.global;
    let Staging { scratch, inc, soa, shared } = *st;
    let big = |a: &ArgDesc| scratch.is_some() && in_scratch(a);
    let mut call = Vec::new();
    let mut scatter: Vec<String> = Vec::new();
    for (j, a) in args.iter().enumerate() {
        let i = base + j;
        match *a {
            ArgDesc::Dat { ty, dim, acc, how, optional } => {
                let pt = (d.private_type)(ty);
                // Staged in shared memory: the pair's area, rows of dim values at the element's
                // position in its block's list of targets.
                let pair =
                    shared.map(|p| p.pair[i]).filter(|&q| q != NO_PAIR && matches!(how, DatAccess::Indirect { .. }));
                let arr = match pair {
                    Some(q) => format!("op2_sh{q}"),
                    None => format!("op2_d{i}"),
                };
                // Entry `col` of this element's map row: rows of map_dim entries, or transposed.
                let entry = |map_dim: usize, col: &str| {
                    if soa_map(a, soa) {
                        format!("(size_t)op2_m{i}[(size_t){col} * op2_mr{i} + op2_e]")
                    } else {
                        format!("(size_t)op2_m{i}[(size_t)op2_e * {map_dim} + {col}]")
                    }
                };
                // (private array, element row) per staged element.
                let rows: Vec<(String, String)> = match how {
                    DatAccess::Direct => vec![(format!("op2_p{i}"), "(size_t)op2_e".to_string())],
                    DatAccess::Indirect { .. } if pair.is_some() => vec![(
                        format!("op2_p{i}"),
                        format!("(size_t)op2_lm[(size_t)op2_al[{i}] * op2_ntot + (op2_e - op2_pstart)]"),
                    )],
                    DatAccess::Indirect { map_dim, idx } => {
                        vec![(format!("op2_p{i}"), entry(map_dim, &idx.to_string()))]
                    }
                    DatAccess::Vector { map_dim } if map_dim > UNROLL_VECTOR_MAX => {
                        vec![(format!("op2_p{i}[op2_vj]"), entry(map_dim, "op2_vj"))]
                    }
                    DatAccess::Vector { map_dim } => {
                        (0..map_dim).map(|j| (format!("op2_p{i}[{j}]"), entry(map_dim, &j.to_string()))).collect()
                    }
                };
                // A wide vector argument's rows are staged by a loop over the map's columns
                // (`op2_vj`), not one statement per column.
                let roll = match how {
                    DatAccess::Vector { map_dim } if map_dim > UNROLL_VECTOR_MAX => {
                        format!("for (int op2_vj = 0; op2_vj < {map_dim}; op2_vj++) ")
                    }
                    _ => String::new(),
                };
                // Where component op2_k of a row lives: rows of dim values, or one array per
                // component (op2_s rows long) in the structure-of-arrays layout.
                let at = |row: &str| {
                    if soa_arg(a, soa) && pair.is_none() {
                        format!("(size_t)op2_k * op2_s{i} + {row}")
                    } else {
                        format!("{row} * {dim} + op2_k")
                    }
                };
                let cols: Vec<(String, String)> = rows.iter().map(|(p, r)| (p.clone(), at(r))).collect();
                let vector = matches!(how, DatAccess::Vector { .. });
                // The staged rows: this work-item's part of the global-memory scratch, or private
                // memory; `elem` is their element type as the kernel's pointers see it.
                let elem = if let (Some((scr_bytes, scr_off)), true) = (scratch, big(a)) {
                    let at = scr_off[j].unwrap_or(0);
                    let elem = format!("{g}{}", (d.buffer_type)(ty));
                    let base = format!("op2_scr + (size_t)op2_w * {scr_bytes} + {at}");
                    if vector {
                        w.line(format!("{elem} (*op2_p{i})[{dim}] = ({elem} (*)[{dim}])({base});"));
                    } else {
                        w.line(format!("{elem} *op2_p{i} = ({elem} *)({base});"));
                    }
                    elem
                } else {
                    let rows = match how {
                        DatAccess::Vector { map_dim } => format!("[{map_dim}][{dim}]"),
                        _ => format!("[{dim}]"),
                    };
                    w.line(format!("{pt} op2_p{i}{rows};"));
                    pt.to_string()
                };
                if let DatAccess::Vector { map_dim } = how {
                    // The kernel's `T**`: one pointer per map column.
                    w.line(format!("{elem} *op2_v{i}[{map_dim}];"));
                    w.line(format!(
                        "for (int op2_j = 0; op2_j < {map_dim}; op2_j++) op2_v{i}[op2_j] = op2_p{i}[op2_j];"
                    ));
                }
                let guard = if optional { format!("if (op2_on{i}) {roll}") } else { roll.clone() };
                // A direct OP_INC belongs to one element (one work-item): staged with its value
                // and stored back, as RW, so a kernel that reads it sees what seq and OP2's own
                // backends pass. Indirect OP_INC starts from zero and is added (its targets are
                // shared; reading one is undefined in OP2's model, `OP2_VALIDATE=1` names it).
                let direct_inc = acc == Access::Inc && how == DatAccess::Direct;
                for (priv_, base) in &cols {
                    match acc {
                        Access::Read | Access::Rw => {
                            w.line(format!(
                                "{guard}for (int op2_k = 0; op2_k < {dim}; op2_k++) {priv_}[op2_k] = ({pt}){arr}[{base}];"
                            ));
                        }
                        Access::Inc if direct_inc => {
                            w.line(format!(
                                "{guard}for (int op2_k = 0; op2_k < {dim}; op2_k++) {priv_}[op2_k] = ({pt}){arr}[{base}];"
                            ));
                        }
                        Access::Inc => {
                            w.line(format!("{roll}for (int op2_k = 0; op2_k < {dim}; op2_k++) {priv_}[op2_k] = 0;"));
                        }
                        _ => {}
                    }
                    let store = match acc {
                        Access::Write | Access::Rw => {
                            format!("{arr}[{base}] = ({}){priv_}[op2_k];", (d.buffer_type)(ty))
                        }
                        Access::Inc if direct_inc => {
                            format!("{arr}[{base}] = ({}){priv_}[op2_k];", (d.buffer_type)(ty))
                        }
                        Access::Inc if inc == IncStrategy::Atomics => {
                            (d.atomic_add)(ty, &format!("&{arr}[{base}]"), &format!("{priv_}[op2_k]"))
                        }
                        Access::Inc => format!("{arr}[{base}] += {priv_}[op2_k];"),
                        _ => continue,
                    };
                    scatter.push(format!("{guard}for (int op2_k = 0; op2_k < {dim}; op2_k++) {store}"));
                }
                let expr = if vector { format!("op2_v{i}") } else { format!("op2_p{i}") };
                let expr = if optional { format!("op2_on{i} ? {expr} : 0") } else { expr };
                call.push(if vector { (d.vector_arg)(&expr) } else { expr });
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
                // kernel: plainly when the launch is coloured on the row map, else atomically.
                let (pt, n) = ((d.private_type)(ty), rows * cols);
                w.line(format!("{pt} op2_p{i}[{n}];"));
                w.line(format!("for (int op2_k = 0; op2_k < {n}; op2_k++) op2_p{i}[op2_k] = 0;"));
                let at = format!("op2_m{i}[(size_t)op2_e * {n} + op2_k]");
                let store = match acc {
                    Access::Write => format!("op2_d{i}[{at}] = op2_p{i}[op2_k];"),
                    _ if inc == IncStrategy::Atomics => {
                        (d.atomic_add)(ty, &format!("&op2_d{i}[{at}]"), &format!("op2_p{i}[op2_k]"))
                    }
                    _ => format!("op2_d{i}[{at}] += op2_p{i}[op2_k];"),
                };
                scatter.push(format!("for (int op2_k = 0; op2_k < {n}; op2_k++) {store}"));
                call.push(format!("op2_p{i}"));
            }
        }
    }
    (call, scatter)
}

/// The kernel source with `qualifier` (e.g. `__global`) put before the parameters at
/// positions `which` of the definition of `name` (line breaks unchanged, so kernel line numbers
/// stay right); None when the definition or a parameter is not found.
pub fn global_params(src: &str, name: &str, which: &[usize], qualifier: &str) -> Option<String> {
    use crate::core::clex::{definition_span, offset, tokens, TokKind};
    let toks = tokens(src);
    let (at, close, _, _) = definition_span(&toks, name)?;
    // Start of each parameter: the token after `(` and after each top-level comma.
    let mut starts = vec![at + 2];
    let mut depth = 0i32;
    for (j, t) in toks.iter().enumerate().take(close).skip(at + 2) {
        if t.kind != TokKind::Punct {
            continue;
        }
        match t.text {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            "," if depth == 0 => starts.push(j + 1),
            _ => {}
        }
    }
    let mut cuts: Vec<usize> = Vec::new();
    for &p in which {
        let t = *starts.get(p)?;
        if t >= close {
            return None;
        }
        cuts.push(offset(src, &toks[t]));
    }
    cuts.sort_unstable();
    let mut out = String::with_capacity(src.len() + cuts.len() * (qualifier.len() + 1));
    let mut from = 0;
    for c in cuts {
        out.push_str(&src[from..c]);
        out.push_str(qualifier);
        out.push(' ');
        from = c;
    }
    out.push_str(&src[from..]);
    Some(out)
}

/// The end of a block-reducing wrapper: each thread puts its partials in its row of dynamic
/// shared memory (`stride` words a thread), a fixed tree combines the rows (for h = 1, 2, 4, ...
/// thread t, a multiple of 2h, takes in t + h; MIN/MAX ties keep t's value, and payloads follow
/// a win of the first component, as in the host's combine), and thread 0 writes the block's
/// row. Thread t then always holds threads t..t+2h, in order, so a tie between elements of one
/// round of a launch (thread k runs element k of the round) goes to the earlier one, as on
/// `seq`: the first GPU run found Airfoil's `update` giving its largest change's cell one
/// later than `seq` (cells 149 and 150 tie) under the halving tree this replaced. A tie
/// between elements of different rounds (a thread runs every `op2_nw`-th element) may still go
/// to the later one: the payload is then another tied element's (`OP2_VALIDATE=1` reports
/// it). Any block size works; the result depends only on the block size.
fn emit_block_reduce(d: &Dialect, w: &mut CodeWriter, args: &[ArgDesc], stride: usize) {
    // (arg, type, dim, access, word offset) of each reduction and payload.
    let mut parts = Vec::new();
    let mut off = 0usize;
    for (i, a) in args.iter().enumerate() {
        let (ty, dim, acc) = match *a {
            ArgDesc::Gbl { ty, dim, acc } if acc.is_reduction() => (ty, dim, acc),
            ArgDesc::Info { ty, dim, .. } => (ty, dim, Access::Read),
            _ => continue,
        };
        parts.push((i, ty, dim, acc, off));
        off += (dim * ty.size()).div_ceil(8).max(1);
    }
    let u = d.u64_type;
    w.line(format!("extern __shared__ {u} op2_sh[];"));
    w.line(format!("{u} *op2_mine = op2_sh + (size_t)threadIdx.x * {stride};"));
    for &(i, ty, dim, _, off) in &parts {
        let t = (d.private_type)(ty);
        w.line(format!(
            "for (int op2_k = 0; op2_k < {dim}; op2_k++) (({t} *)(op2_mine + {off}))[op2_k] = op2_g{i}[op2_k];"
        ));
    }
    w.line("__syncthreads();");
    w.open("for (unsigned int op2_half = 1; op2_half < blockDim.x; op2_half <<= 1)");
    w.open("if (threadIdx.x % (2 * op2_half) == 0 && threadIdx.x + op2_half < blockDim.x)");
    w.line(format!("const {u} *op2_other = op2_mine + (size_t)op2_half * {stride};"));
    for &(i, ty, dim, acc, off) in &parts {
        // Sums wrap for integers (unsigned arithmetic), as the host's combine does.
        let t = match (acc, ty) {
            (Access::Inc, ElemType::Int | ElemType::Uint | ElemType::Bool) => match ty {
                ElemType::Bool => "unsigned char",
                _ => "unsigned int",
            },
            (Access::Inc, ElemType::Ll | ElemType::Ull) => "unsigned long long",
            _ => (d.private_type)(ty),
        };
        let (mine, other) = (format!("(({t} *)(op2_mine + {off}))"), format!("((const {t} *)(op2_other + {off}))"));
        match acc {
            Access::Inc => {
                w.line(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++) {mine}[op2_k] += {other}[op2_k];"));
            }
            Access::Min | Access::Max => {
                let cmp = if acc == Access::Min { "<" } else { ">" };
                w.open("");
                w.line("bool op2_first = false;");
                w.open(format!("for (int op2_k = 0; op2_k < {dim}; op2_k++)"));
                w.open(format!("if ({other}[op2_k] {cmp} {mine}[op2_k])"));
                w.line(format!("{mine}[op2_k] = {other}[op2_k];"));
                w.line("if (op2_k == 0) op2_first = true;");
                w.close();
                w.close();
                for &(j, pty, pdim, _, poff) in &parts {
                    if matches!(args[j], ArgDesc::Info { reference, .. } if reference == i) {
                        let words = (pdim * pty.size()).div_ceil(8).max(1);
                        w.line(format!(
                            "if (op2_first) for (int op2_k = 0; op2_k < {words}; op2_k++) op2_mine[{poff} + op2_k] = op2_other[{poff} + op2_k];"
                        ));
                    }
                }
                w.close();
            }
            _ => {}
        }
    }
    w.close();
    w.line("__syncthreads();");
    w.close();
    w.line(format!(
        "if (threadIdx.x == 0) for (int op2_k = 0; op2_k < {stride}; op2_k++) op2_row[op2_k] = op2_sh[op2_k];"
    ));
}
