//! The kernel rewriter behind the vectorised wrapper (`backend::host::codegen::simd`): a lane-major copy of
//! the user's kernel, as OP2's v1 vectorising translator makes (`p[k]` becomes
//! `p[k][op2_lane]`), so that GCC can vectorise a loop over the lanes of a block.
//!
//! It is a token rewriter (`core::clex`), not a C parser, so it accepts only kernels it can
//! rewrite safely and refuses everything else with a reason:
//! - every dat (and `op_arg_idx`) parameter is `T *p` or `T p[N]` and is used only as `p[expr]`
//!   or `*p`: never passed on, compared, address-taken, used in pointer arithmetic, declared
//!   again in the body, or named by a preprocessor macro (which could hide an index);
//! - a vector argument (`T **p`, all of a map's columns) is used only as `p[i][k]`
//!   (`p[i][k][op2_lane]` in the copy);
//! - an `OP_INC` dat is only incremented, each component once on any path through the kernel's
//!   if/else arms and by a constant index (`p[2] += e;`, `p[0] -= e;`, `*p += e;`, `p[1][2] +=
//!   e;`), outside any loop: its lanes start at -0.0 and are added to the dat after the block,
//!   which gives exactly the scalar result; INC arguments that may share rows (one type and
//!   dim) go back in the kernel's order (`Rewritten::inc_order`);
//! - no indirect `OP_WRITE`/`OP_RW` (two lanes may share a target), global reductions or
//!   `op_arg_info` (lanes would sum in another order than `seq`), and no `static` variables in
//!   the kernel. An optional dat is accepted under the same rules (its
//!   pointer is never compared, so the kernel cannot tell an absent one from a present one and
//!   must not touch it: the wrapper gives it lanes that are neither read from nor written back
//!   to a dat that is absent).
//!
//! Global `OP_READ` arguments are the same for every lane and keep their pointer form. The copy
//! carries `#line` directives, so diagnostics in it name the user's kernel lines.

use crate::arg::{Access, ArgDesc, DatAccess};
use crate::core::clex::{self, Tok, TokKind};

/// Bytes of lane arrays one block of the vectorised wrapper may keep on the stack.
pub const LANE_BYTES_MAX: usize = 32 * 1024;

/// The name of the lane-major copy of kernel `kernel`.
pub fn simd_kernel_name(kernel: &str) -> String {
    format!("op2_simd_{kernel}")
}

/// Whether argument `a` is staged in lane arrays (dats and element indices) rather than passed
/// as the same pointer to every lane (global reads). Err: the argument cannot be vectorised.
pub fn lane_arg(i: usize, a: &ArgDesc) -> Result<bool, String> {
    match *a {
        ArgDesc::Dat { acc: Access::Write | Access::Rw, how: DatAccess::Vector { .. }, .. } => Err(format!(
            "arg {i} is a vector argument (T**) with {} (two lanes may share a target)",
            if matches!(a, ArgDesc::Dat { acc: Access::Write, .. }) { "OP_WRITE" } else { "OP_RW" }
        )),
        ArgDesc::Dat { acc: Access::Write | Access::Rw, how: DatAccess::Indirect { .. }, .. } => Err(format!(
            "arg {i} is an indirect {} (two lanes may share a target)",
            if matches!(a, ArgDesc::Dat { acc: Access::Write, .. }) { "OP_WRITE" } else { "OP_RW" }
        )),
        ArgDesc::Dat { acc: Access::Min | Access::Max, .. } => Err(format!("arg {i} is a dat with OP_MIN/OP_MAX")),
        ArgDesc::Dat { .. } | ArgDesc::Idx { .. } => Ok(true),
        ArgDesc::Gbl { acc: Access::Read, .. } => Ok(false),
        ArgDesc::Gbl { .. } => {
            Err(format!("arg {i} is a global reduction (per-lane partial results would round differently from seq)"))
        }
        ArgDesc::Info { .. } => Err(format!("arg {i} is an op_arg_info payload")),
        ArgDesc::Mat { .. } => Err(format!("arg {i} is a matrix (op_arg_mat)")),
    }
}

/// Rows an argument gives each element: the map's arity for a vector argument (`T**`), else 1.
pub fn columns(how: DatAccess) -> usize {
    match how {
        DatAccess::Vector { map_dim } => map_dim,
        _ => 1,
    }
}

/// Bytes of lane arrays the wrapper needs for `args` with `lanes` lanes.
pub fn lane_bytes(args: &[ArgDesc], lanes: usize) -> usize {
    args.iter()
        .map(|a| match *a {
            ArgDesc::Dat { ty, dim, how, .. } => {
                dim.saturating_mul(columns(how)).saturating_mul(ty.size()).saturating_mul(lanes)
            }
            ArgDesc::Idx { .. } => 4 * lanes,
            _ => 0,
        })
        .fold(0usize, usize::saturating_add)
}

const KEYWORDS_BEFORE_EXPR: &[&str] = &["return", "else", "case", "sizeof", "do"];
const QUALIFIERS: &[&str] = &["const", "volatile", "restrict", "__restrict", "__restrict__", "register"];

/// Returns the lane-major copy of kernel `kernel` (defined in `src`) for a block of `lanes`
/// elements: `static inline void op2_simd_<kernel>(<params>, int op2_lane)`, preceded by the
/// `#line` directives that keep the user's line numbers. Err: why the kernel is not rewritten.
pub fn rewrite(src: &str, kernel: &str, args: &[ArgDesc], lanes: usize) -> Result<Rewritten, String> {
    if args.is_empty() {
        return Err("it has no arguments".to_string());
    }
    let mut lane = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        lane.push(lane_arg(i, a)?);
    }
    let bytes = lane_bytes(args, lanes);
    if bytes > LANE_BYTES_MAX {
        return Err(format!("its lane arrays would take {bytes} bytes per block (at most {LANE_BYTES_MAX})"));
    }
    let toks = clex::tokens(src);
    let Some((name_at, close, open, end)) = clex::definition_span(&toks, kernel) else {
        return Err(format!("no definition of '{kernel}' found"));
    };
    let groups = split_params(&toks[name_at + 2..close]);
    if groups.len() != args.len() {
        return Err(format!("the kernel takes {} parameter(s) for {} argument(s)", groups.len(), args.len()));
    }
    // Parameters: names, new declarations, INC components seen.
    let mut names: Vec<Option<&str>> = Vec::new();
    let mut decls: Vec<String> = Vec::new();
    for (i, (g, &is_lane)) in groups.iter().zip(&lane).enumerate() {
        let text = {
            let (a, b) = (g[0], g[g.len() - 1]);
            src[clex::offset(src, &a)..clex::offset(src, &b) + b.text.len()].to_string()
        };
        if !is_lane {
            names.push(None);
            decls.push(text);
            continue;
        }
        let depth = g.iter().filter(|t| t.kind == TokKind::Punct && (t.text == "*" || t.text == "[")).count();
        let words: Vec<&str> =
            g.iter().filter(|t| t.kind == TokKind::Ident && !QUALIFIERS.contains(&t.text)).map(|t| t.text).collect();
        let vector = matches!(args[i], ArgDesc::Dat { how: DatAccess::Vector { .. }, .. });
        let want = if vector { 2 } else { 1 };
        if depth != want || words.len() < 2 || g.iter().any(|t| t.text == "(") {
            let form = if vector { "T **p" } else { "T *p" };
            return Err(format!("parameter {} '{text}' is not of the form {form}", i + 1));
        }
        let name = words[words.len() - 1];
        let konst = if g.iter().any(|t| t.text == "const") { "const " } else { "" };
        let inner = match args[i] {
            ArgDesc::Dat { dim, how: DatAccess::Vector { .. }, .. } => format!("[{dim}]"),
            _ => String::new(),
        };
        decls.push(format!("{konst}{} {name}[]{inner}[{lanes}]", words[..words.len() - 1].join(" ")));
        names.push(Some(name));
    }
    // A macro that names a parameter may hide how it is used.
    for line in preprocessor_lines(src) {
        for t in clex::tokens(&line) {
            if t.kind == TokKind::Ident && names.contains(&Some(t.text)) {
                return Err(format!("a preprocessor line names parameter '{}': {}", t.text, line.trim()));
            }
        }
    }
    let body = &toks[open + 1..end];
    let has_inc = args.iter().any(|a| matches!(a, ArgDesc::Dat { acc: Access::Inc, .. }));
    for t in body {
        match (t.kind, t.text) {
            (TokKind::Ident, "static") => {
                return Err(format!("it declares a static variable (kernel line {})", t.line));
            }
            (TokKind::Punct, "#") => {
                return Err(format!("it has a preprocessor line in its body (kernel line {})", t.line))
            }
            (TokKind::Ident, "for" | "while" | "do" | "goto") if has_inc => {
                return Err(format!(
                    "it has an OP_INC argument and a loop or goto (kernel line {}): increments must happen once per component",
                    t.line
                ));
            }
            _ => {}
        }
    }
    let adjacent = |a: &Tok, b: &Tok| clex::offset(src, a) + a.text.len() == clex::offset(src, b);
    let is_compound = |k: usize| -> bool {
        match (toks.get(k), toks.get(k + 1)) {
            (Some(a), Some(b)) => (a.text == "+" || a.text == "-") && b.text == "=" && adjacent(a, b),
            _ => false,
        }
    };
    // Edits: (start byte, end byte, replacement), in order.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut inc_seen: Vec<Vec<(usize, Arms)>> = vec![Vec::new(); args.len()];
    // Where each increment is: (argument, component, token, arms).
    let mut inc_at: Vec<(usize, usize, usize, Arms)> = Vec::new();
    let arms = if has_inc { arms_of(&toks, open + 1, end) } else { Vec::new() };
    let arms_at = |j: usize| arms.get(j - (open + 1)).cloned().unwrap_or_default();
    let mut j = open + 1;
    while j < end {
        let t = toks[j];
        let Some(p) = (if t.kind == TokKind::Ident { names.iter().position(|n| *n == Some(t.text)) } else { None })
        else {
            j += 1;
            continue;
        };
        let prev = toks[j - 1];
        let prev2 = toks.get(j.wrapping_sub(2)).copied();
        if prev.text == "." || (prev.text == ">" && prev2.is_some_and(|q| q.text == "-" && adjacent(&q, &prev))) {
            j += 1;
            continue; // a struct member of the same name
        }
        let what = format!("parameter '{}' (kernel line {})", t.text, t.line);
        if prev.kind == TokKind::Ident && !KEYWORDS_BEFORE_EXPR.contains(&prev.text) {
            return Err(format!("{what} is declared again in the body"));
        }
        // `&` after an operand is a binary and (`x & p[0]`), after another `&` a logical and;
        // anything else (also `(T)&p[0]`, conservatively) takes an address.
        let addr_of = prev.text == "&"
            && !prev2.is_some_and(|q| {
                matches!(q.kind, TokKind::Ident | TokKind::Number)
                    || q.text == "]"
                    || (q.text == "&" && adjacent(&q, &prev))
            });
        let dim = match args[p] {
            ArgDesc::Dat { dim, .. } => dim,
            _ => 1,
        };
        let inc = matches!(args[p], ArgDesc::Dat { acc: Access::Inc, .. });
        let vector_cols = match args[p] {
            ArgDesc::Dat { how: DatAccess::Vector { map_dim }, .. } => Some(map_dim),
            _ => None,
        };
        let next = toks.get(j + 1).copied();
        if next.is_some_and(|n| n.kind == TokKind::Punct && n.text == "[") {
            let Some(mut rb) = clex::matching(&toks, j + 1) else {
                return Err(format!("{what}: unbalanced brackets"));
            };
            if addr_of {
                return Err(format!("{what} has its address taken"));
            }
            let constant = |at: usize, end: usize| {
                if end == at + 2 && toks[at + 1].kind == TokKind::Number {
                    toks[at + 1].text.parse::<usize>().ok()
                } else {
                    None
                }
            };
            // A vector argument: p[column][component].
            if let Some(cols) = vector_cols {
                let column = constant(j + 1, rb).filter(|&c| c < cols);
                let Some(rb2) = toks.get(rb + 1).filter(|t| t.text == "[").and_then(|_| clex::matching(&toks, rb + 1))
                else {
                    return Err(format!("{what} is a vector argument (T**) used other than as {}[i][k]", t.text));
                };
                let comp = constant(rb + 1, rb2);
                if inc {
                    if column.is_none() {
                        return Err(format!(
                            "{what} is OP_INC but its column is not a constant below the map's arity {cols}"
                        ));
                    }
                    let Some(k) = comp.filter(|&k| k < dim) else {
                        return Err(format!("{what} is OP_INC but not indexed by a constant below its dim {dim}"));
                    };
                    // The vector argument's components, numbered column after column.
                    let flat = column.map(|c| c * dim + k);
                    check_inc(&what, flat, dim * cols, is_compound(rb2 + 1), arms_at(j), &mut inc_seen[p])?;
                    inc_at.push((p, flat.unwrap_or(0), j, arms_at(j)));
                }
                rb = rb2;
            } else if inc {
                let comp = constant(j + 1, rb);
                check_inc(&what, comp, dim, is_compound(rb + 1), arms_at(j), &mut inc_seen[p])?;
                inc_at.push((p, comp.unwrap_or(0), j, arms_at(j)));
            }
            let at = clex::offset(src, &toks[rb]) + 1;
            edits.push((at, at, "[op2_lane]".to_string()));
            j += 1; // the index itself may use parameters
            continue;
        }
        if vector_cols.is_some() {
            return Err(format!("{what} is a vector argument (T**) used other than as {}[i][k]", t.text));
        }
        // A `*` before a pointer is always a dereference (a pointer cannot be multiplied).
        if prev.text != "*" {
            return Err(format!(
                "{what} is used other than as {0}[i] or *{0} (passed on, compared or in pointer arithmetic)",
                t.text
            ));
        }
        if let (Some(a), Some(b)) = (next, toks.get(j + 2)) {
            if (a.text == "+" && b.text == "+" || a.text == "-" && b.text == "-") && adjacent(&a, b) {
                return Err(format!("{what} is dereferenced and moved (*{}++)", t.text));
            }
        }
        if inc {
            check_inc(&what, Some(0), dim, is_compound(j + 1), arms_at(j), &mut inc_seen[p])?;
            inc_at.push((p, 0, j, arms_at(j)));
        }
        let s = clex::offset(src, &prev);
        let e = clex::offset(src, &t) + t.text.len();
        edits.push((s, e, format!("{}[0][op2_lane]", t.text)));
        j += 1;
    }
    let body_start = clex::offset(src, &toks[open]);
    let body_end = clex::offset(src, &toks[end]) + 1;
    let mut out = String::new();
    out.push_str(&format!("#line {} \"kernel:{kernel}\"\n", toks[name_at].line));
    out.push_str(&format!(
        "static inline void {}({}, int op2_lane)\n",
        simd_kernel_name(kernel),
        decls.iter().map(|d| d.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join(", ")
    ));
    out.push_str(&format!("#line {} \"kernel:{kernel}\"\n", toks[open].line));
    edits.sort_by_key(|e| e.0);
    let mut at = body_start;
    for (s, e, r) in edits {
        out.push_str(&src[at..s]);
        out.push_str(&r);
        at = e;
    }
    out.push_str(&src[at..body_end]);
    out.push('\n');
    let inc_order = increment_order(args, &inc_at)?;
    Ok(Rewritten { text: out, inc_order })
}

/// A kernel's lane-major copy, and the order its `OP_INC` arguments' lanes go back to their dats.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewritten {
    /// `static inline void op2_simd_<kernel>(...)` with its `#line` directives.
    pub text: String,
    /// Every `OP_INC` dat argument once, in the order the kernel increments them.
    pub inc_order: Vec<usize>,
}

/// The order to add `OP_INC` lanes to their dats in, per element: two INC arguments of one type
/// and dim may be one dat and, for an element, one row (an edge with both ends on one cell), and
/// then `seq` adds their values to a component in the order the kernel's statements do.
/// Arguments that may share rows go in the order the kernel increments them (Airfoil's
/// res_calc: `res1` then `res2`), the others in argument order. Err: two such arguments
/// increment their components in different orders (`r1[0]` before `r2[0]` but `r2[1]` before
/// `r1[1]`), which no order of whole rows reproduces.
fn increment_order(args: &[ArgDesc], inc_at: &[(usize, usize, usize, Arms)]) -> Result<Vec<usize>, String> {
    let shape = |i: usize| match args[i] {
        ArgDesc::Dat { ty, dim, acc: Access::Inc, .. } => Some((ty, dim)),
        _ => None,
    };
    let incs: Vec<usize> = (0..args.len()).filter(|&i| shape(i).is_some()).collect();
    // A vector argument's columns may be one row (an element whose map repeats an entry): they go
    // back column after column, so the kernel must increment each component in column order,
    // and no other INC argument of its type and dim may share its rows.
    for &v in &incs {
        let ArgDesc::Dat { dim, how: DatAccess::Vector { .. }, .. } = args[v] else { continue };
        let dim = dim.max(1);
        for a in inc_at.iter().filter(|o| o.0 == v) {
            for b in inc_at.iter().filter(|o| o.0 == v && o.1 % dim == a.1 % dim && o.1 / dim > a.1 / dim) {
                if b.2 < a.2 && !exclusive(&a.3, &b.3) {
                    return Err(format!(
                        "arg {v} (a vector argument, T**) increments column {} before column {} (component {}): its columns go back in column order",
                        b.1 / dim,
                        a.1 / dim,
                        a.1 % dim
                    ));
                }
            }
        }
        if let Some(&o) = incs.iter().find(|&&o| o != v && shape(o) == shape(v)) {
            return Err(format!(
                "args {} and {} (OP_INC of one type and dim: possibly one dat) include a vector argument (T**)",
                v.min(o),
                v.max(o)
            ));
        }
    }
    // after[a]: the arguments whose increments come after a's.
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); args.len()];
    for (x, &p) in incs.iter().enumerate() {
        for &q in &incs[x + 1..] {
            if shape(p) != shape(q) {
                continue;
            }
            let mut rel: Option<bool> = None;
            for (_, ka, ja, aa) in inc_at.iter().filter(|o| o.0 == p) {
                for (_, _, jb, ab) in inc_at.iter().filter(|o| o.0 == q && o.1 == *ka) {
                    if exclusive(aa, ab) {
                        continue;
                    }
                    let p_first = ja < jb;
                    if rel.is_some_and(|r| r != p_first) {
                        return Err(format!(
                            "args {p} and {q} (OP_INC of one type and dim: possibly one dat) increment their components in different orders"
                        ));
                    }
                    rel = Some(p_first);
                }
            }
            if rel == Some(false) {
                after[q].push(p);
            } else {
                after[p].push(q);
            }
        }
    }
    // The arguments in an order that keeps every `after`, the lowest ready one first.
    let mut indegree = vec![0usize; args.len()];
    for &i in &incs {
        for &j in &after[i] {
            indegree[j] += 1;
        }
    }
    let mut order = Vec::with_capacity(incs.len());
    let mut done = vec![false; args.len()];
    while order.len() < incs.len() {
        let Some(&next) = incs.iter().find(|&&i| !done[i] && indegree[i] == 0) else {
            return Err("its OP_INC arguments of one type and dim increment in an order no argument order reproduces"
                .to_string());
        };
        done[next] = true;
        order.push(next);
        for &j in &after[next] {
            indegree[j] -= 1;
        }
    }
    Ok(order)
}

/// Checks one use of an OP_INC parameter: `p[k] +=` or `-=` with a constant `k < dim` not
/// incremented before on a path that can also reach this one (`arms`: the if/else arms it lies
/// in). Two increments of one component in the two arms of an `if` (Airfoil's `bres_calc`) run
/// at most once per element, so the lane still starts at -0.0 and receives one addition.
fn check_inc(
    what: &str,
    comp: Option<usize>,
    dim: usize,
    compound: bool,
    arms: Arms,
    seen: &mut Vec<(usize, Arms)>,
) -> Result<(), String> {
    let Some(k) = comp.filter(|&k| k < dim) else {
        return Err(format!("{what} is OP_INC but not indexed by a constant below its dim {dim}"));
    };
    if !compound {
        return Err(format!("{what} is OP_INC but used other than as += or -="));
    }
    if seen.iter().any(|(c, a)| *c == k && !exclusive(a, &arms)) {
        return Err(format!("{what} is OP_INC and component {k} is incremented more than once"));
    }
    seen.push((k, arms));
    Ok(())
}

/// The if/else arms a token lies in, outermost first: (the `if` token's index, 0 for the
/// `then` arm, 1 for `else`).
type Arms = Vec<(usize, u8)>;

/// Whether code in arms `a` and code in arms `b` never both run: they lie in different arms of
/// one `if`.
fn exclusive(a: &Arms, b: &Arms) -> bool {
    a.iter().any(|&(i, x)| b.iter().any(|&(j, y)| i == j && x != y))
}

/// The arms of every token in `[start, end)` (indexed from `start`). An arm is a braced block,
/// a nested `if` or one simple statement; an arm of another form (a loop or `switch` statement
/// without braces) is not followed, and its tokens keep the enclosing arms, as if it were
/// outside the `if` (so increments in it count as on a common path: the safe side).
fn arms_of(toks: &[Tok], start: usize, end: usize) -> Vec<Arms> {
    let mut out = vec![Arms::new(); end.saturating_sub(start)];
    mark_arms(toks, start, end, &Arms::new(), start, &mut out);
    out
}

fn mark_arms(toks: &[Tok], from: usize, to: usize, path: &Arms, base: usize, out: &mut [Arms]) {
    let mut i = from;
    while i < to {
        let is_if = toks[i].kind == TokKind::Ident && toks[i].text == "if";
        let cond =
            if is_if && toks.get(i + 1).is_some_and(|t| t.text == "(") { clex::matching(toks, i + 1) } else { None };
        let Some(cond) = cond.filter(|&c| c < to) else {
            out[i - base] = path.clone();
            i += 1;
            continue;
        };
        for k in i..=cond {
            out[k - base] = path.clone();
        }
        let Some(then_end) = statement_end(toks, cond + 1, to) else {
            i = cond + 1;
            continue;
        };
        let arm = |n: u8| {
            let mut a = path.clone();
            a.push((i, n));
            a
        };
        mark_arms(toks, cond + 1, then_end, &arm(0), base, out);
        let has_else = then_end < to && toks[then_end].kind == TokKind::Ident && toks[then_end].text == "else";
        if !has_else {
            i = then_end;
            continue;
        }
        out[then_end - base] = path.clone();
        let Some(else_end) = statement_end(toks, then_end + 1, to) else {
            i = then_end + 1;
            continue;
        };
        mark_arms(toks, then_end + 1, else_end, &arm(1), base, out);
        i = else_end;
    }
}

/// The end (exclusive) of the statement starting at token `k`, if it is a braced block, an
/// `if` (with its `else`) or a simple statement ending in `;`; None for anything else.
fn statement_end(toks: &[Tok], k: usize, to: usize) -> Option<usize> {
    let t = toks.get(k).filter(|_| k < to)?;
    if t.text == "{" {
        return clex::matching(toks, k).map(|c| c + 1).filter(|&e| e <= to);
    }
    if t.kind == TokKind::Ident {
        match t.text {
            "if" => {
                let cond = clex::matching(toks, k + 1).filter(|_| toks.get(k + 1).is_some_and(|u| u.text == "("))?;
                let then_end = statement_end(toks, cond + 1, to)?;
                if then_end < to && toks[then_end].text == "else" {
                    return statement_end(toks, then_end + 1, to);
                }
                return Some(then_end);
            }
            "for" | "while" | "do" | "switch" | "else" | "case" | "default" => return None,
            _ => {}
        }
    }
    let mut d = 0i32;
    for (j, u) in toks.iter().enumerate().take(to).skip(k) {
        if u.kind != TokKind::Punct {
            continue;
        }
        match u.text {
            "(" | "[" | "{" => d += 1,
            ")" | "]" | "}" => {
                d -= 1;
                if d < 0 {
                    return None;
                }
            }
            ";" if d == 0 => return Some(j + 1),
            _ => {}
        }
    }
    None
}

/// Splits a parameter list's tokens at top-level commas (a lone `void` is no parameter).
pub(crate) fn split_params<'a>(toks: &[Tok<'a>]) -> Vec<Vec<Tok<'a>>> {
    let mut groups = Vec::new();
    let mut cur = Vec::new();
    let mut d = 0;
    for t in toks {
        match t.text {
            "(" | "[" => d += 1,
            ")" | "]" => d -= 1,
            "," if d == 0 && t.kind == TokKind::Punct => {
                groups.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(*t);
    }
    if !cur.is_empty() {
        groups.push(cur);
    }
    if groups.len() == 1 && groups[0].len() == 1 && groups[0][0].text == "void" {
        groups.clear();
    }
    groups
}

/// The preprocessor lines of `src` (continuations joined). Also used by `validate::inc_read`.
pub(crate) fn preprocessor_lines(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in src.lines() {
        if let Some(c) = cur.as_mut() {
            c.push(' ');
            c.push_str(line.trim_end_matches('\\'));
        } else if line.trim_start().starts_with('#') {
            cur = Some(line.trim_end_matches('\\').to_string());
        }
        if !line.ends_with('\\') {
            if let Some(c) = cur.take() {
                out.push(c);
            }
        }
    }
    if let Some(c) = cur {
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ElemType;

    fn dat(dim: usize, acc: Access, how: DatAccess) -> ArgDesc {
        ArgDesc::Dat { ty: ElemType::Double, dim, acc, how, optional: false }
    }
    fn ind(dim: usize, acc: Access) -> ArgDesc {
        dat(dim, acc, DatAccess::Indirect { map_dim: 2, idx: 0 })
    }
    fn dir(dim: usize, acc: Access) -> ArgDesc {
        dat(dim, acc, DatAccess::Direct)
    }

    const RES_CALC: &str = include_str!("../../../../examples-c/airfoil/kernels/res_calc.c");
    const ADT_CALC: &str = include_str!("../../../../examples-c/airfoil/kernels/adt_calc.c");
    const SAVE_SOLN: &str = include_str!("../../../../examples-c/airfoil/kernels/save_soln.c");
    const BRES_CALC: &str = include_str!("../../../../examples-c/airfoil/kernels/bres_calc.c");
    const UPDATE: &str = include_str!("../../../../examples-c/airfoil/kernels/update.c");

    #[test]
    fn airfoil_kernels() {
        use Access::*;
        let adt = [ind(2, Read), ind(2, Read), ind(2, Read), ind(2, Read), dir(4, Read), dir(1, Write)];
        let got = rewrite(ADT_CALC, "adt_calc", &adt, 8).unwrap().text;
        assert!(got.starts_with("#line 3 \"kernel:adt_calc\"\nstatic inline void op2_simd_adt_calc(const double x1[][8], const double x2[][8], const double x3[][8], const double x4[][8], const double q[][8], double adt[][8], int op2_lane)\n#line 4 \"kernel:adt_calc\"\n{"), "{got}");
        assert!(got.contains("ri = 1.0 / q[0][op2_lane];"));
        assert!(got.contains("  adt[0][op2_lane] = fabs(u * dy - v * dx) + c * sqrt(dx * dx + dy * dy);"));
        assert!(got.contains("  adt[0][op2_lane] = (adt[0][op2_lane]) / cfl;"));
        // Lines are kept: the body has as many lines as the original.
        assert_eq!(got.lines().count() - 3, ADT_CALC.lines().count() - 3);
        let res = [
            ind(2, Read),
            ind(2, Read),
            ind(4, Read),
            ind(4, Read),
            ind(1, Read),
            ind(1, Read),
            ind(4, Inc),
            ind(4, Inc),
        ];
        let got = rewrite(RES_CALC, "res_calc", &res, 4).unwrap().text;
        assert!(got.contains("res2[3][op2_lane] -= f;"));
        assert!(got.contains("mu = 0.5 * ((adt1[0][op2_lane]) + (adt2[0][op2_lane])) * eps;"));
        let got = rewrite(SAVE_SOLN, "save_soln", &[dir(4, Read), dir(4, Write)], 8).unwrap().text;
        assert!(got.contains("qold[n][op2_lane] = q[n][op2_lane];"), "{got}");
        // bres_calc increments res1[1] and res1[2] in both arms of an if: once per element.
        let bres = [ind(2, Read), ind(2, Read), ind(4, Read), ind(1, Read), ind(4, Inc), dir(1, Read)];
        let got = rewrite(BRES_CALC, "bres_calc", &bres, 8).unwrap().text;
        assert!(got.contains("res1[1][op2_lane] += +p1 * dy;"), "{got}");
        assert!(got.contains("res1[1][op2_lane] += f;"), "{got}");
        let upd = [
            dir(4, Read),
            dir(4, Write),
            dir(4, Rw),
            dir(1, Read),
            ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Inc },
            ArgDesc::Gbl { ty: ElemType::Double, dim: 1, acc: Max },
            ArgDesc::Info { ty: ElemType::Int, dim: 1, reference: 5 },
            ArgDesc::Idx { map_dim: None, idx: 0 },
        ];
        let e = rewrite(UPDATE, "update", &upd, 8).unwrap_err();
        assert!(e.contains("arg 4 is a global reduction"), "{e}");
    }

    #[test]
    fn accepted_forms() {
        use Access::*;
        let src = "static double h(double v) { return v; }\n\
                   void k(const double *a, double b[2], const float *g, const int *i) {\n\
                   \x20 b[2*(*i)+1 - 1] = h(a[2 * 0 + 1]) * *a + a[0] * g[0] + (*i & 1) + sizeof *a + (double)(a[1] > 0 ? 1 : 0);\n\
                   \x20 *b = -*a;\n}\n";
        let args = [
            dir(2, Read),
            dir(2, Rw),
            ArgDesc::Gbl { ty: ElemType::Float, dim: 1, acc: Read },
            ArgDesc::Idx { map_dim: None, idx: 0 },
        ];
        let got = rewrite(src, "k", &args, 8).unwrap().text;
        assert!(
            got.contains(
                "void op2_simd_k(const double a[][8], double b[][8], const float *g, const int i[][8], int op2_lane)"
            ),
            "{got}"
        );
        assert!(got.contains("b[2*(i[0][op2_lane])+1 - 1][op2_lane] = h(a[2 * 0 + 1][op2_lane]) * a[0][op2_lane] + a[0][op2_lane] * g[0] + (i[0][op2_lane] & 1) + sizeof a[0][op2_lane]"), "{got}");
        assert!(got.contains("  b[0][op2_lane] = -a[0][op2_lane];"), "{got}");
        assert!(got.starts_with("#line 2 \"kernel:k\"\n"));
        // INC by constant components, += and -=, *p.
        let src = "void k(const double *x, double *r) { r[1] += x[0]; *r -= x[1]; if (x[0] > 0) r[2] += 1.0; }";
        let got = rewrite(src, "k", &[ind(2, Read), ind(3, Inc)], 4).unwrap().text;
        assert!(got.contains("r[1][op2_lane] += x[0][op2_lane]; r[0][op2_lane] -= x[1][op2_lane];"), "{got}");
    }

    #[test]
    fn refused_forms() {
        use Access::*;
        let one = |src: &str, args: &[ArgDesc]| rewrite(src, "k", args, 8).unwrap_err();
        let r = [dir(2, Read), dir(2, Write)];
        let e = one("void h(const double *p);\nvoid k(const double *a, double *b) {\n  h(a);\n}", &r);
        assert!(e.contains("parameter 'a' (kernel line 3) is used other than as a[i] or *a"), "{e}");
        let e = one("void k(const double *a, double *b) { b[0] = *(a + 1); }", &r);
        assert!(e.contains("parameter 'a'") && e.contains("pointer arithmetic"), "{e}");
        let e = one("void k(const double *a, double *b) { const double *c = &a[1]; b[0] = *c; }", &r);
        assert!(e.contains("address taken"), "{e}");
        let e = one("void k(const double *a, double *b) { b[0] = ((const double *)a)[0]; }", &r);
        assert!(e.contains("used other than"), "{e}");
        let e = one("#define A(i) a[i]\nvoid k(const double *a, double *b) { b[0] = A(0); }", &r);
        assert!(e.contains("a preprocessor line names parameter 'a'"), "{e}");
        let e = one("void k(const double *a, double *b) { b[0] = *a++; }", &r);
        assert!(e.contains("dereferenced and moved"), "{e}");
        let e = one("void k(const double *a, double *b) { static int n; b[0] = a[n++]; }", &r);
        assert!(e.contains("static variable"), "{e}");
        let e = one("void k(const double *a, double *b) { if (a) b[0] = 1; }", &r);
        assert!(e.contains("used other than"), "{e}");
        let e = one("void k(const double *a, double *b) { { double a = 1; b[0] = a; } }", &r);
        assert!(e.contains("declared again"), "{e}");
        // Vector arguments (T**): read as a[i][k]; any other use, an OP_WRITE one, or increments
        // out of column order are refused.
        let v = [dat(1, Read, DatAccess::Vector { map_dim: 2 }), dir(1, Write)];
        let got =
            rewrite("void k(const double **a, double *b) { b[0] = a[0][0] + a[1][0]; }", "k", &v, 8).unwrap().text;
        assert!(
            got.contains("static inline void op2_simd_k(const double a[][1][8], double b[][8], int op2_lane)"),
            "{got}"
        );
        assert!(got.contains("b[0][op2_lane] = a[0][0][op2_lane] + a[1][0][op2_lane];"), "{got}");
        assert!(one("void k(const double **a, double *b) { b[0] = *a[0]; }", &v).contains("T**"));
        assert!(one("void k(const double *a, double *b) { b[0] = a[0]; }", &v).contains("not of the form T **p"));
        let vw = [dat(1, Write, DatAccess::Vector { map_dim: 2 }), dir(1, Read)];
        assert!(one("void k(double **a, const double *b) { a[0][0] = b[0]; }", &vw).contains("with OP_WRITE"));
        let vi = [dat(2, Inc, DatAccess::Vector { map_dim: 3 }), dir(1, Read)];
        let got = rewrite("void k(double **r, const double *b) { r[0][1] += b[0]; r[2][1] -= 1.0; }", "k", &vi, 4);
        assert_eq!(got.map(|r| r.inc_order), Ok(vec![0]));
        let e = one("void k(double **r, const double *b) { r[2][1] += b[0]; r[0][1] -= 1.0; }", &vi);
        assert!(e.contains("arg 0 (a vector argument, T**) increments column 2 before column 0 (component 1)"), "{e}");
        let e = one("void k(double **r, const double *b) { r[0][1] += b[0]; r[0][1] -= 1.0; }", &vi);
        assert!(e.contains("component 1 is incremented more than once"), "{e}");
        let e = one("void k(double **r, const double *b) { r[3][0] += b[0]; }", &vi);
        assert!(e.contains("column is not a constant below the map's arity 3"), "{e}");
        let o = [
            dir(1, Read),
            ArgDesc::Dat { ty: ElemType::Double, dim: 1, acc: Write, how: DatAccess::Direct, optional: true },
        ];
        // An optional dat is rewritten as any, but its pointer may not be compared (to NULL).
        assert!(rewrite("void k(const double *a, double *b) { b[0] = a[0]; }", "k", &o, 8).is_ok());
        assert!(one("void k(const double *a, double *b) { if (b) b[0] = a[0]; }", &o).contains("compared"));
        let w = [ind(1, Read), ind(1, Write)];
        assert!(one("void k(const double *a, double *b) { }", &w).contains("indirect OP_WRITE"));
        // INC misuse: read, assigned, variable index, twice, in a loop.
        let i = [dir(2, Read), ind(2, Inc)];
        assert!(one("void k(const double *a, double *b) { b[0] = a[0]; }", &i).contains("used other than as += or -="));
        assert!(one("void k(const double *a, double *b) { b[0] += b[1]; }", &i).contains("used other than as += or -="));
        assert!(one("void k(const double *a, double *b) { int j = 1; b[j] += a[0]; }", &i)
            .contains("constant below its dim"));
        assert!(one("void k(const double *a, double *b) { b[2] += a[0]; }", &i).contains("constant below its dim"));
        assert!(
            one("void k(const double *a, double *b) { b[0] += a[0]; b[0] += a[1]; }", &i).contains("more than once")
        );
        // Twice on one path: in an arm and after its if, in nested arms of one arm, in an
        // else-if chain and a later if.
        for body in [
            "if (a[0] > 0) b[0] += a[0]; b[0] += a[1];",
            "if (a[0] > 0) { b[0] += a[0]; } else { b[1] += 1.0; } b[0] -= a[1];",
            "if (a[0] > 0) { if (a[1] > 0) b[0] += a[0]; b[0] += a[1]; }",
            "if (a[0] > 0) b[0] += a[0]; else if (a[1] > 0) b[1] += 1.0; if (a[1] < 0) b[0] += 2.0;",
        ] {
            let src = format!("void k(const double *a, double *b) {{ {body} }}");
            assert!(one(&src, &i).contains("component 0 is incremented more than once"), "{body}");
        }
        // Exclusive arms: if/else, else-if chains, nested ifs in different arms.
        for body in [
            "if (a[0] > 0) b[0] += a[0]; else b[0] -= a[1];",
            "if (a[0] > 0) { b[0] += a[0]; b[1] += 1.0; } else if (a[1] > 0) { b[0] += 2.0; } else b[0] -= a[1];",
            "if (a[0] > 0) { if (a[1] > 0) b[0] += a[0]; else b[0] += a[1]; } else { b[0] -= 1.0; }",
        ] {
            let src = format!("void k(const double *a, double *b) {{ {body} }}");
            assert!(rewrite(&src, "k", &i, 4).is_ok(), "{body}: {:?}", rewrite(&src, "k", &i, 4));
        }
        // Two INC arguments that may be one dat: their lanes go back in the kernel's order, which
        // must be the same for every component; others keep argument order.
        let two = [ind(2, Read), ind(2, Inc), ind(2, Inc), ind(3, Inc)];
        let order = |body: &str| {
            rewrite(&format!("void k(const double *a, double *p, double *q, double *r) {{ {body} }}"), "k", &two, 4)
                .map(|r| r.inc_order)
        };
        assert_eq!(order("p[0] += a[0]; q[0] += a[1]; r[0] += 1.0;"), Ok(vec![1, 2, 3]));
        assert_eq!(order("r[0] += 1.0; q[0] += a[1]; p[0] += a[0]; q[1] -= a[0]; p[1] -= 2.0;"), Ok(vec![2, 1, 3]));
        assert_eq!(order("if (a[0] > 0) { q[0] += 1.0; p[0] += 1.0; } else { p[1] += 2.0; }"), Ok(vec![2, 1, 3]));
        let e = order("p[0] += a[0]; q[0] += a[1]; q[1] += 1.0; p[1] += 1.0;").unwrap_err();
        assert!(e.contains("args 1 and 2 (OP_INC of one type and dim: possibly one dat) increment"), "{e}");
        assert!(one("void k(const double *a, double *b) { for (int n = 0; n < 2; n++) b[n] += a[n]; }", &i)
            .contains("loop"));
        let big = [dir(4096, Read), dir(1, Write)];
        assert!(one("void k(const double *a, double *b) { }", &big).contains("lane arrays would take 262208 bytes"));
        assert!(rewrite("void h(double *a) {}", "k", &r, 8).unwrap_err().contains("no definition of 'k'"));
        assert_eq!(rewrite("void k(void) {}", "k", &[], 8).unwrap_err(), "it has no arguments");
        let e = one("void k(const double *a, double (*b)(void)) { }", &r);
        assert!(e.contains("parameter 2 'double (*b)(void)' is not of the form T *p"), "{e}");
    }
}
