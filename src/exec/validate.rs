//! `OP2_VALIDATE=1`: every loop also runs on the `seq` reference from the same inputs, and the
//! outputs are compared. The reference runs first, on copies of the loop's dats (so the backend
//! under test sees untouched inputs), with every dat the loop only writes (OP_WRITE) poisoned
//! (all bytes 0xFF: NaN for floating point), so a kernel that reads a WRITE-only argument gives
//! a different answer and is caught (only dats the loop overwrites whole: direct OP_WRITE). Bitwise comparison where the order of operations is fixed;
//! within `OP2_VALIDATE_RTOL` (default 1e-12 for double, 1e-5 for float) for dats with indirect
//! increments and for reductions, whose order depends on the backend.

use crate::arg::{Access, ArgDesc, BoundArg, DatAccess};
use crate::backend::reduce::as_bytes;
use crate::backend::{Backend, LoopCall, Reduction};
use crate::core::{Dat, DatId, ElemType};
use crate::error::Result;
use crate::op2_bail;
use std::ffi::c_void;

/// The reference run's results.
pub struct Reference {
    /// Per dat the loop uses: its bytes after the reference run.
    dats: Vec<(DatId, Vec<u8>)>,
    reductions: Vec<Reduction>,
    /// Per matrix argument: its position and the matrix's values after the reference run.
    mats: Vec<(usize, Vec<u8>)>,
}

/// Runs the reference over `[0, end)` with the call's compiled host code on copies of the data.
pub fn reference(call: &LoopCall, dats: &[Dat], end: usize) -> Result<Reference> {
    let mut copies: Vec<(DatId, Vec<u8>)> = Vec::new();
    let mut slots = call.slots.clone();
    for (i, (d, b)) in call.descs.iter().zip(call.bound).enumerate() {
        let (ArgDesc::Dat { dim, ty, .. }, BoundArg::Dat { dat, enabled: true, .. }) = (d, b) else { continue };
        let at = match copies.iter().position(|(q, _)| q == dat) {
            Some(p) => p,
            None => {
                // Poisoned only when the loop writes every element without reading any (direct,
                // non-optional OP_WRITE only): elements an indirect write does not reach keep
                // their values.
                let write_only = call.descs.iter().zip(call.bound).all(|(d2, b2)| match (d2, b2) {
                    (ArgDesc::Dat { acc, how, optional, .. }, BoundArg::Dat { dat: q, .. }) if q == dat => {
                        *acc == Access::Write && *how == DatAccess::Direct && !optional
                    }
                    _ => true,
                });
                let host = dats[dat.0 as usize].data.as_slice();
                let mut copy = Vec::new();
                if copy.try_reserve_exact(host.len()).is_err() {
                    op2_bail!(OutOfMemory, "op_par_loop '{}': cannot copy dat for validation", call.name);
                }
                copy.extend_from_slice(host);
                if write_only {
                    // Only the rows the loop runs over (under MPI the halo rows beyond keep
                    // their values, as in the real run).
                    let n = (end * dim * ty.size()).min(copy.len());
                    copy[..n].fill(0xFF);
                }
                copies.push((*dat, copy));
                copies.len() - 1
            }
        };
        slots[2 * i] = copies[at].1.as_mut_ptr() as *mut c_void;
    }
    // Matrices: the reference adds into a copy of the values (of the first argument on each).
    let mut mats: Vec<(usize, Vec<u8>)> = Vec::new();
    for (i, b) in call.bound.iter().enumerate() {
        let BoundArg::Mat { values_bytes, .. } = *b else { continue };
        let src = call.slots[2 * i] as *const u8;
        if let Some(p) = mats.iter().position(|(a, _)| call.slots[2 * *a] as *const u8 == src) {
            slots[2 * i] = mats[p].1.as_mut_ptr() as *mut c_void;
            continue;
        }
        let mut copy = Vec::new();
        if copy.try_reserve_exact(values_bytes).is_err() {
            op2_bail!(OutOfMemory, "op_par_loop '{}': cannot copy a matrix for validation", call.name);
        }
        // SAFETY: the slot points at the matrix's values, `values_bytes` long.
        copy.extend_from_slice(unsafe { std::slice::from_raw_parts(src, values_bytes) });
        mats.push((i, copy));
        let last = mats.len() - 1;
        slots[2 * i] = mats[last].1.as_mut_ptr() as *mut c_void;
    }
    let mut reductions = call.reductions.clone();
    for r in reductions.iter_mut() {
        slots[2 * r.arg] = r.buf.as_mut_ptr() as *mut c_void;
    }
    // Scratch only for a range with elements: an empty set's loop over a map of arity INT_MAX
    // (t344) wrote 2^31 null pointers (16 GiB of pages touched, 25 s of system time) for nothing.
    let mut scratch: Vec<*mut c_void> = Vec::new();
    if call.scratch_entries > 0 && end > 0 {
        if scratch.try_reserve_exact(call.scratch_entries).is_err() {
            op2_bail!(OutOfMemory, "op_par_loop '{}': cannot allocate scratch for validation", call.name);
        }
        scratch.resize(call.scratch_entries, std::ptr::null_mut());
        if let Some(last) = slots.last_mut() {
            *last = scratch.as_mut_ptr() as *mut c_void;
        }
    }
    if end > 0 {
        // SAFETY: the slots are the call's, with dat and reduction pointers moved to private
        // copies of the same sizes.
        unsafe { (call.lib.loop_fn)(0, end as i32, slots.as_ptr()) };
    }
    Ok(Reference { dats: copies, reductions, mats })
}

/// Compares the backend's results with the reference: the dats the loop writes (their current
/// bytes, downloaded from a device without changing residency) and the reductions. Returns the
/// bytes downloaded per dat, for `op_dat_transfers`. `rows(dat)` is how many of a dat's rows the
/// loop's results define (under MPI: the rows it ran over for dats on its set, the owned rows
/// for others; the halo rows beyond are refreshed by an exchange before anything reads them, and
/// a device's copy of rows no loop has written is undefined).
pub fn compare(
    r: &Reference,
    call: &LoopCall,
    backend: &mut dyn Backend,
    dats: &[Dat],
    rtol: Option<f64>,
    rows: &dyn Fn(DatId) -> usize,
) -> Result<Vec<(DatId, u64)>> {
    let mut downloaded = Vec::new();
    let device_math =
        if backend.is_device() { call.sig.as_ref().and_then(|s| inexact_math(s.kernel_source)) } else { None };
    for (dat, want) in &r.dats {
        let mut writes = false;
        let mut increments = false;
        let mut first_arg = 0;
        for (i, (d, b)) in call.descs.iter().zip(call.bound).enumerate() {
            if let (ArgDesc::Dat { acc, how, .. }, BoundArg::Dat { dat: q, enabled: true, .. }) = (d, b) {
                if q == dat && acc.writes() {
                    if !writes {
                        first_arg = i;
                    }
                    writes = true;
                    increments |= *acc == Access::Inc && *how != DatAccess::Direct;
                }
            }
        }
        if !writes {
            continue;
        }
        let dv = &dats[dat.0 as usize];
        let got: Vec<u8> = if backend.is_device() {
            let mut v =
                crate::core::alloc::zeroed::<u8>(want.len(), &format!("op_par_loop '{}': validation", call.name))?;
            backend.download(*dat, crate::backend::DatShape::of(dv), &mut v)?;
            downloaded.push((*dat, v.len() as u64));
            v
        } else {
            crate::core::alloc::copy_of(dv.data.as_slice(), &format!("op_par_loop '{}': validation", call.name))?
        };
        // Increments: within the tolerance, relative to the larger of the two values and of the
        // largest magnitude of the component over the set (values where contributions cancel to
        // almost nothing carry the rounding of the contributions). A device running a kernel that
        // calls a math function with no correctly rounded result (pow, exp, ...): within the
        // tolerance, relative to each value. Otherwise bitwise.
        let (tol, normwise) = if increments {
            (tolerance(dv.ty, rtol), true)
        } else if device_math.is_some() {
            (tolerance(dv.ty, rtol), false)
        } else {
            (0.0, false)
        };
        let n = (rows(*dat) * dv.elem_bytes()).min(got.len()).min(want.len());
        if let Some((e, c, g, w, n)) = differs(dv.ty, dv.dim, &got[..n], &want[..n], tol, normwise) {
            let how = match (tol > 0.0, normwise, device_math) {
                (false, _, _) => " bitwise".to_string(),
                (true, true, _) => format!(" by more than {tol:e} relative to the component's largest value"),
                (true, false, Some(f)) => format!(
                    " by more than {tol:e} relative; the kernel calls {f}, which device math libraries need not round as the host's"
                ),
                (true, false, None) => format!(" by more than {tol:e} relative"),
            };
            op2_bail!(
                Validate,
                "op_par_loop '{}', arg {first_arg} (dat '{}'): element {e} component {c}: {} gives {g}, seq gives {w} ({n} value(s) differ{how})",
                call.name,
                dv.name,
                backend.kind().name(),
            );
        }
    }
    for (arg, want) in &r.mats {
        let (ArgDesc::Mat { ty, acc, .. }, BoundArg::Mat { values_bytes, .. }) = (call.descs[*arg], call.bound[*arg])
        else {
            continue;
        };
        // SAFETY: the slot points at the matrix's values, `values_bytes` long.
        let got = unsafe { std::slice::from_raw_parts(call.slots[2 * *arg] as *const u8, values_bytes) };
        let tol = if acc == Access::Inc || device_math.is_some() { tolerance(ty, rtol) } else { 0.0 };
        if let Some((e, _, g, w, n)) = differs(ty, 1, got, want, tol, acc == Access::Inc) {
            op2_bail!(
                Validate,
                "op_par_loop '{}', arg {arg} (matrix): stored value {e}: {} gives {g}, seq gives {w} ({n} value(s) differ)",
                call.name,
                backend.kind().name()
            );
        }
    }
    for (got, want) in call.reductions.iter().zip(&r.reductions) {
        let tol = if got.acc == Access::Inc || device_math.is_some() { tolerance(got.ty, rtol) } else { 0.0 };
        let bytes = got.bytes();
        let (gb, wb) = (as_bytes(&got.buf), as_bytes(&want.buf));
        if let Some((_, c, g, w, _)) = differs(got.ty, got.dim, &gb[..bytes], &wb[..bytes], tol, false) {
            op2_bail!(
                Validate,
                "op_par_loop '{}', arg {} (global {}): component {c}: {} gives {g}, seq gives {w}",
                call.name,
                got.arg,
                got.acc.c_name(),
                backend.kind().name()
            );
        }
    }
    Ok(downloaded)
}

/// A read of an indirect OP_INC parameter that the kernel's source shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncRead {
    /// The loop argument.
    pub arg: usize,
    /// The kernel's parameter name.
    pub param: String,
    /// Line of the read in the kernel's source.
    pub line: usize,
}

/// The first read of an indirect OP_INC parameter in kernel `kernel` (defined in `src`), if
/// the source shows one. Reading such an argument is undefined in OP2's model: devices pass a
/// zero-staged copy (the increments are added afterwards), `seq` and `threads` the target's
/// accumulated value, so the results depend on the backend.
///
/// Found in the source (`core::clex` tokens), not by running the kernel again: a second run
/// from other staged values would repeat the kernel's side effects (`printf`) and could only
/// see reads that change an output. Only definite reads are reported, so a correct kernel is
/// never refused: an element of the parameter (`p[e]`, `*p`, `p[j][k]` for a vector argument,
/// in parentheses or not) used other than as the target of `=`, `+=` or `-=` (`p[0] *= 2`,
/// `p[0]++`, `x = p[0]`, `p[0] = p[0] + x`, `f(p[0])`). Not seen: reads through another pointer
/// (`double *q = p;`), a helper function given the pointer, or a macro that names it; the
/// parameter declared again in the body, or named by a preprocessor line, is not examined.
pub fn inc_read(src: &str, kernel: &str, args: &[ArgDesc]) -> Option<IncRead> {
    use crate::core::clex::{self, TokKind};
    let levels = |a: &ArgDesc| match *a {
        ArgDesc::Dat { acc: Access::Inc, how: DatAccess::Indirect { .. }, .. } => Some(1usize),
        ArgDesc::Dat { acc: Access::Inc, how: DatAccess::Vector { .. }, .. } => Some(2),
        _ => None,
    };
    if !args.iter().any(|a| levels(a).is_some()) {
        return None;
    }
    let toks = clex::tokens(src);
    let (name_at, close, open, end) = clex::definition_span(&toks, kernel)?;
    let groups = crate::backend::host::codegen::rewrite::split_params(&toks[name_at + 2..close]);
    if groups.len() != args.len() {
        return None;
    }
    let macros = crate::backend::host::codegen::rewrite::preprocessor_lines(src);
    let adjacent = |a: usize, b: usize| clex::offset(src, &toks[a]) + toks[a].text.len() == clex::offset(src, &toks[b]);
    let text = |k: usize| toks.get(k).map_or("", |t| t.text);
    let mut first: Option<IncRead> = None;
    for (i, g) in groups.iter().enumerate() {
        let Some(levels) = levels(&args[i]) else { continue };
        if g.iter().any(|t| t.text == "(") {
            continue;
        }
        // The name: the last identifier before any `[`.
        let Some(name) =
            g.iter().take_while(|t| t.text != "[").filter(|t| t.kind == TokKind::Ident).map(|t| t.text).last()
        else {
            continue;
        };
        if macros.iter().any(|l| clex::tokens(l).iter().any(|t| t.kind == TokKind::Ident && t.text == name)) {
            continue;
        }
        let mut found = None;
        for j in open + 1..end {
            let t = toks[j];
            if t.kind != TokKind::Ident || t.text != name {
                continue;
            }
            let prev = text(j - 1);
            if prev == "." || (prev == ">" && text(j - 2) == "-" && adjacent(j - 2, j - 1)) {
                continue; // a struct member of the same name
            }
            if toks[j - 1].kind == TokKind::Ident && !["return", "else", "case", "sizeof", "do"].contains(&prev) {
                found = None; // declared again in the body: not examined
                break;
            }
            // Subscripts after the name, dereferences before it.
            let mut k = j + 1;
            let mut subs = 0;
            while text(k) == "[" {
                let Some(rb) = clex::matching(&toks, k) else { break };
                k = rb + 1;
                subs += 1;
            }
            let mut b = j - 1;
            let mut stars = 0;
            while subs + stars < levels && text(b) == "*" && b > open {
                stars += 1;
                b -= 1;
            }
            if subs + stars < levels
                || (stars > 0 && subs == 0 && matches!(text(k), "+" | "-") && text(k) == text(k + 1))
            {
                continue; // the pointer itself (passed on, compared, moved): not an element
            }
            // Parentheses around the element.
            while text(b) == "(" && text(k) == ")" && b > open {
                b -= 1;
                k += 1;
            }
            let before = text(b);
            if before == "sizeof"
                || (before == "&"
                    && !matches!(toks[b - 1].kind, TokKind::Ident | TokKind::Number)
                    && !matches!(text(b - 1), "]" | ")"))
            {
                continue; // its size, or its address: not a read here
            }
            let prefix_step = matches!(before, "+" | "-") && text(b - 1) == before && adjacent(b - 1, b);
            let stored = match (text(k), text(k + 1)) {
                ("=", next) => !(next == "=" && adjacent(k, k + 1)),
                ("+" | "-", "=") => adjacent(k, k + 1),
                _ => false,
            };
            if prefix_step || !stored {
                found = Some(t.line);
                break;
            }
        }
        if let Some(line) = found {
            if first.as_ref().is_none_or(|f| line < f.line) {
                first = Some(IncRead { arg: i, param: name.to_string(), line });
            }
        }
    }
    first
}

fn tolerance(ty: ElemType, rtol: Option<f64>) -> f64 {
    match ty {
        ElemType::Double => rtol.unwrap_or(1e-12),
        ElemType::Float => rtol.unwrap_or(1e-5),
        _ => 0.0,
    }
}

/// Math functions whose results IEEE 754 does not require to be correctly rounded (the `f`
/// forms too): a device's math library may give other last bits than the host's. (`sqrt`,
/// `fabs`, `fma`, `floor`, `fmin`, ... are exact or correctly rounded everywhere.)
const INEXACT_MATH: &[&str] = &[
    "pow", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "hypot", "erf", "erfc", "tgamma",
    "lgamma",
];

/// The first such function the kernel calls, if any.
fn inexact_math(src: &str) -> Option<&'static str> {
    let toks = crate::core::clex::tokens(src);
    toks.windows(2).find_map(|w| {
        if w[0].kind != crate::core::clex::TokKind::Ident || w[1].text != "(" {
            return None;
        }
        let t = w[0].text;
        INEXACT_MATH.iter().copied().find(|f| *f == t || t.strip_suffix('f') == Some(f))
    })
}

fn float_at(ty: ElemType, b: &[u8]) -> f64 {
    match ty {
        ElemType::Double => f64::from_ne_bytes(b.try_into().unwrap_or([0; 8])),
        _ => f32::from_ne_bytes(b.try_into().unwrap_or([0; 4])) as f64,
    }
}

/// The first difference beyond `tol` (relative, for floating point; exact otherwise): element,
/// component, both values as text, and how many values differ. `normwise`: relative to the
/// larger of the two values and of the component's largest magnitude in `want`.
fn differs(
    ty: ElemType,
    dim: usize,
    got: &[u8],
    want: &[u8],
    tol: f64,
    normwise: bool,
) -> Option<(usize, usize, String, String, usize)> {
    let ts = ty.size();
    let dim = dim.max(1);
    let mut first = None;
    let mut n = 0;
    let mut scale = vec![0.0f64; if normwise && tol > 0.0 { dim } else { 0 }];
    if !scale.is_empty() {
        for (k, w) in want.chunks_exact(ts).enumerate() {
            let v = float_at(ty, w).abs();
            if v.is_finite() && v > scale[k % dim] {
                scale[k % dim] = v;
            }
        }
    }
    for (k, (g, w)) in got.chunks_exact(ts).zip(want.chunks_exact(ts)).enumerate() {
        let same = if g == w {
            true
        } else if tol > 0.0 {
            let (a, b) = (float_at(ty, g), float_at(ty, w));
            let s = scale.get(k % dim).copied().unwrap_or(0.0);
            (a - b).abs() <= tol * a.abs().max(b.abs()).max(s)
        } else {
            false
        };
        if !same {
            n += 1;
            if first.is_none() {
                first = Some((k / dim, k % dim, ty.format_value(g), ty.format_value(w)));
            }
        }
    }
    first.map(|(e, c, g, w)| (e, c, g, w, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_bitwise_and_relative() {
        let a: Vec<u8> = [1.0f64, 2.0, 3.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let b: Vec<u8> = [1.0f64, 2.0 + 1e-15, 4.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let d = differs(ElemType::Double, 1, &a, &b, 0.0, false).unwrap();
        assert_eq!((d.0, d.1, d.4), (1, 0, 2));
        let d = differs(ElemType::Double, 1, &a, &b, 1e-12, false).unwrap();
        assert_eq!((d.0, d.4), (2, 1));
        assert!(differs(ElemType::Double, 3, &a, &a, 0.0, false).is_none());
    }

    #[test]
    fn normwise_for_cancelled_increments() {
        // Component 0 of element 1 cancelled to ~1e-19 while the component reaches 2.0: a
        // difference of 1e-18 is rounding of the contributions, not a bug.
        let f = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
        let want = f(&[2.0, 10.0, 1e-19, 10.0]);
        let got = f(&[2.0, 10.0, 1.1e-18, 10.0]);
        assert!(differs(ElemType::Double, 2, &got, &want, 1e-12, false).is_some());
        assert!(differs(ElemType::Double, 2, &got, &want, 1e-12, true).is_none());
        // Relative to component 0's scale (2.0), not component 1's (10.0).
        let got = f(&[2.0, 10.0, 1e-11, 10.0]);
        let d = differs(ElemType::Double, 2, &got, &want, 1e-12, true).unwrap();
        assert_eq!((d.0, d.1), (1, 0));
    }

    #[test]
    fn indirect_inc_reads() {
        use crate::core::ElemType::Double;
        let dat = |acc, how| ArgDesc::Dat { ty: Double, dim: 2, acc, how, optional: false };
        let ind = DatAccess::Indirect { map_dim: 2, idx: 0 };
        let vec2 = DatAccess::Vector { map_dim: 2 };
        let args = [dat(Access::Read, ind), dat(Access::Inc, ind)];
        let read = |src: &str| inc_read(src, "k", &args).map(|r| (r.arg, r.param, r.line));
        // Increments, stores, the pointer itself, its size, its address: no read.
        for ok in [
            "void k(const double *a, double *b) { b[0] += a[0]; b[1] -= 2.0 * a[1]; }",
            "void k(const double *a, double *b) { *b += *a; (*b) += 1.0; (b[1]) -= a[0] * a[1]; }",
            "void k(const double *a, double b[2]) { b[0] = a[0]; if (b) { double s = sizeof(*b); b[1] += s; } }",
            "void k(const double *a, double *b) { add(b, a[0]); double *q = &b[1]; *q += 1; }",
            "void k(const double *a, double *restrict b) { struct { double b; } s; s.b = a[0]; b[0] += s.b; }",
            "void k(const double *a, double *b) { b[0] += sizeof b[0] * a[0]; }",
        ] {
            assert_eq!(read(ok), None, "{ok}");
        }
        // Reads: as a value, read-modify-write other than +=/-=, ++, a comparison.
        for (bad, line) in [
            ("void k(const double *a, double *b) {\n  b[0] += a[0];\n  b[1] += b[0];\n}", 3),
            ("void k(const double *a, double *b) { b[0] = b[0] + a[0]; }", 1),
            ("void k(const double *a, double *b) { b[0] *= 2.0; }", 1),
            ("void k(const double *a, double *b) { b[1]++; }", 1),
            ("void k(const double *a, double *b) { ++(*b); }", 1),
            ("void k(const double *a, double *b) { if (*b == 0.0) b[0] += a[0]; }", 1),
            ("void k(const double *a, double *b) { printf(\"%g\\n\", b[1]); }", 1),
        ] {
            assert_eq!(read(bad), Some((1, "b".to_string(), line)), "{bad}");
        }
        // Direct OP_INC may be read (it is the element's own); a vector INC argument `T**`.
        let direct = [dat(Access::Read, ind), dat(Access::Inc, DatAccess::Direct)];
        assert_eq!(inc_read("void k(const double *a, double *b) { *b += b[1]; }", "k", &direct), None);
        let vargs = [dat(Access::Inc, vec2)];
        assert_eq!(inc_read("void k(double **v) { v[0][0] += 1; v[1][1] -= 2; }", "k", &vargs), None);
        assert_eq!(inc_read("void k(double **v) { double *p = v[1]; p[0] += 1; }", "k", &vargs), None);
        assert_eq!(
            inc_read("void k(double **v) { v[0][0] += *v[1]; }", "k", &vargs).map(|r| r.param),
            Some("v".into())
        );
        // The example applications' increments (airfoil's res_calc and bres_calc, jacobi's res).
        let d = |dim, acc, how| ArgDesc::Dat { ty: Double, dim, acc, how, optional: false };
        let (r, inc) = (Access::Read, Access::Inc);
        let i = |idx| DatAccess::Indirect { map_dim: 2, idx };
        let res = [
            d(2, r, i(0)),
            d(2, r, i(1)),
            d(4, r, i(0)),
            d(4, r, i(1)),
            d(1, r, i(0)),
            d(1, r, i(1)),
            d(4, inc, i(0)),
            d(4, inc, i(1)),
        ];
        assert_eq!(inc_read(include_str!("../../examples-c/airfoil/kernels/res_calc.c"), "res_calc", &res), None);
        let bres =
            [d(2, r, i(0)), d(2, r, i(1)), d(4, r, i(0)), d(1, r, i(0)), d(4, inc, i(0)), d(1, r, DatAccess::Direct)];
        assert_eq!(inc_read(include_str!("../../examples-c/airfoil/kernels/bres_calc.c"), "bres_calc", &bres), None);
        let jres =
            [d(1, r, DatAccess::Direct), d(1, r, i(1)), d(1, inc, i(0)), ArgDesc::Gbl { ty: Double, dim: 1, acc: r }];
        assert_eq!(inc_read(include_str!("../../examples-c/jacobi/res.h"), "res", &jres), None);
        // Declared again in the body, or named by a macro: not examined.
        assert_eq!(read("void k(const double *a, double *b) { { double b = 1; a = &b; } }"), None);
        assert_eq!(read("#define B b[0]\nvoid k(const double *a, double *b) { b[1] += b[0]; }"), None);
    }

    #[test]
    fn inexact_math_calls() {
        assert_eq!(inexact_math("void k(double *x) { *x = pow(*x, 1.4); }"), Some("pow"));
        assert_eq!(inexact_math("void k(float *x) { *x = expf(*x); }"), Some("exp"));
        assert_eq!(inexact_math("void k(double *x) { *x = erf(*x); }"), Some("erf"));
        assert_eq!(inexact_math("void k(double *x) { *x = sqrt(fabs(*x)); /* pow(x) */ }"), None);
        assert_eq!(inexact_math("void k(double *power) { double exp = *power; *power = exp; }"), None);
    }
}
