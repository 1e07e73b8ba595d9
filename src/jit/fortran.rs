//! Fortran kernel files (`op_decl_kernel_file` with a `.f90`, `.F90`, `.f` or `.F` file): the
//! subroutine is compiled by the Fortran compiler (`OP2_FC`, default `gfortran`, with
//! `OP2_FFLAGS`) into link-time-optimisation objects, kept in the cache directory under a hash
//! of every file's content, the compiler's identity and its flags; the loop's library links
//! them with the generated C (`-flto` on both sides, one GCC), so the kernel inlines into the
//! loop. The kernel op2 compiles is a small C function of the kernel's name that calls the
//! subroutine's gfortran symbol (`name_`, or `__module_MOD_name` for a module procedure) with
//! one pointer per argument, as gfortran passes explicit-shape and scalar dummies: no
//! `bind(C)` wrapper module is needed, and the C side's parameter types come from the
//! dummies' declarations (`real(8)` is `double *`, `integer` is `int *`, ...), so the loop's
//! arguments are checked against them as a C kernel's are. What `real`, `integer`, ... are
//! depends on the flags (`-fdefault-real-8` makes `real` a `double`): a probe compiled and run
//! once per compiler identity and flags says (`Kinds`, cached as `fortran/kinds-HASH`).
//!
//! Modules the kernel file `use`s are found in the kernel's directory and then in
//! `OP2_FORTRAN_PATH` (a file named after the module, or any Fortran file there defining it),
//! compiled first, and linked too.

use crate::core::ElemType;
use crate::error::Result;
use crate::op2_bail;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The first words of every Fortran kernel's C stand-in (kept in `codegen`, which generates the
/// loops around it).
pub use crate::codegen::FORTRAN_STAND_IN_MARK as STAND_IN_MARK;

/// Whether a kernel's source is a Fortran kernel's stand-in.
pub fn is_stand_in(source: &str) -> bool {
    crate::codegen::is_fortran_stand_in(source)
}

/// `NAME' of 'PATH` for a Fortran kernel's stand-in: which subroutine of which file it calls.
pub fn stand_in_origin(source: &str) -> Option<&str> {
    let rest = source.strip_prefix(STAND_IN_MARK)?;
    rest.find("' (Fortran files ").map(|i| &rest[..i])
}

/// A kernel check's message about a Fortran kernel's stand-in, put in the Fortran program's
/// terms: the stand-in's own line numbers are dropped and the subroutine and file named (the
/// parameter's text names the dummy with its C type and, where declared, its extent).
pub fn explain_mismatch(source: &str, message: &str) -> Option<String> {
    let origin = stand_in_origin(source)?;
    let mut m = message.to_string();
    while let Some(i) = m.find(" (kernel line ") {
        match m[i + 1..].find(')') {
            Some(j) => m.replace_range(i..i + 1 + j + 1, ""),
            None => break,
        }
    }
    let kinds = source
        .lines()
        .find_map(|l| l.strip_prefix(KINDS_MARK).and_then(|r| r.strip_suffix(" */")))
        .map(|k| format!("; {k}"))
        .unwrap_or_default();
    Some(format!("{m} (Fortran subroutine '{origin}'{kinds})"))
}

/// A kernel around a Fortran kernel's stand-in `name` (source `stand_in`) for a loop whose
/// arguments at `idx` are `op_arg_idx`: it takes the same parameters and gives the subroutine
/// each index plus `base` (OP2's Fortran indices are 1-based), as the call-per-element tier
/// does. Returns (kernel name, source), or None when the stand-in's definition is not found.
pub fn index_adapter(stand_in: &str, name: &str, idx: &[usize], base: i32) -> Option<(String, String)> {
    let def = crate::core::clex::find_definition(stand_in, name)?;
    // Each parameter's name: the last identifier before any `[`.
    let names: Vec<String> = def
        .params
        .iter()
        .map(|p| {
            let head = p.text.split('[').next().unwrap_or("");
            head.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("").to_string()
        })
        .collect();
    if names.iter().any(|n| !crate::core::is_c_identifier(n)) || idx.iter().any(|&i| i >= names.len()) {
        return None;
    }
    let positions: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
    let adapter = format!(
        "{name}_op2idx_{}_{}",
        positions.join("_"),
        if base < 0 { format!("m{}", -base) } else { base.to_string() }
    );
    let mut src = String::with_capacity(stand_in.len() + 300);
    src.push_str(stand_in);
    let params: Vec<&str> = def.params.iter().map(|p| p.text.as_str()).collect();
    src.push_str(&format!(
        "static inline void {adapter}({})
{{
",
        params.join(", ")
    ));
    for &i in idx {
        src.push_str(&format!(
            "  int op2_i{i} = {}[0] + ({base});
",
            names[i]
        ));
    }
    let args: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| if idx.contains(&i) { format!("&op2_i{i}") } else { n.clone() })
        .collect();
    src.push_str(&format!(
        "  {name}({});
}}
",
        args.join(", ")
    ));
    Some((adapter, src))
}

/// Whether `path` names a Fortran source file (by its extension).
pub fn is_fortran_file(path: &str) -> bool {
    matches!(Path::new(path).extension().and_then(|e| e.to_str()), Some("f90" | "F90" | "f" | "F"))
}

/// The marker line of the C stand-in that says which types the compiler's flags change (read by
/// `explain_mismatch`).
const KINDS_MARK: &str = "/* op2-fortran-kinds: ";

/// The marker line of the C stand-in that names one object to link (read by `objects_in`).
const OBJECT_MARK: &str = "/* op2-fortran-object: ";

/// The Fortran objects a generated source links (the stand-ins' marker lines), each once.
pub fn objects_in(source: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in source.lines() {
        if let Some(rest) = line.strip_prefix(OBJECT_MARK).and_then(|r| r.strip_suffix(" */")) {
            if !out.iter().any(|o| o == rest) {
                out.push(rest.to_string());
            }
        }
    }
    out
}

/// Flags every Fortran kernel compile needs (part of the objects' hash): position-independent
/// link-time-optimisation objects whose procedures may be inlined across the library.
const REQUIRED_FFLAGS: &[&str] = &["-fPIC", "-flto", "-fno-semantic-interposition", "-c"];

/// Default optimisation flags of the Fortran compiler: those of the C side (no FP contraction,
/// so results match C kernels' bit for bit).
#[cfg(target_arch = "x86_64")]
pub const DEFAULT_FFLAGS: &[&str] =
    &["-O3", "-march=native", "-ffp-contract=off", "-mno-fma", "-mno-avx512f", "-fno-math-errno"];
#[cfg(not(target_arch = "x86_64"))]
pub const DEFAULT_FFLAGS: &[&str] = &["-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno"];

pub use crate::core::ModuleVar;

/// One Fortran subroutine found in a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Subroutine {
    /// The module it is in (lower case), None at file level.
    pub module: Option<String>,
    /// Its dummy arguments in order, lower case.
    pub dummies: Vec<String>,
    /// The type each dummy is declared with, where op2 reads it (None: not declared, or a type
    /// op2 does not read); what it is in C depends on the compiler's flags (`Kinds`).
    pub types: Vec<Option<Spelling>>,
    /// Values each dummy holds, where its declaration says with constant extents (`q(4)`,
    /// `dimension(2)`, `x(1:3)`; a scalar holds 1); None for assumed size or shape, extents
    /// named by parameters, or no declaration.
    pub extents: Vec<Option<usize>>,
    /// Line (1-based) of the `subroutine` statement.
    pub line: usize,
    /// `bind(C)` given.
    pub bind_c: bool,
}

impl Subroutine {
    /// Its gfortran assembler name.
    pub fn symbol(&self, name: &str) -> String {
        match &self.module {
            Some(m) => format!("__{m}_MOD_{name}"),
            None => format!("{name}_"),
        }
    }
}

/// Statements of free- or fixed-form source: comments dropped, continuations joined, lower
/// case, each with the line it starts on.
fn statements(source: &str, fixed: bool) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in source.lines().enumerate() {
        let line_no = i + 1;
        if fixed {
            let first = raw.chars().next().unwrap_or(' ');
            if matches!(first, 'c' | 'C' | '*' | '!') {
                continue;
            }
            let body: String = raw.chars().skip(6).collect();
            let cont = raw.chars().nth(5).is_some_and(|c| c != ' ' && c != '0');
            let text = strip_comment(&body).to_lowercase();
            if cont {
                if let Some((_, s)) = pending.as_mut() {
                    s.push(' ');
                    s.push_str(text.trim());
                    continue;
                }
            }
            if let Some(p) = pending.take() {
                out.push(p);
            }
            if !text.trim().is_empty() {
                pending = Some((line_no, text.trim().to_string()));
            }
            continue;
        }
        let text = strip_comment(raw).to_lowercase();
        let mut t = text.trim().to_string();
        if t.is_empty() {
            continue;
        }
        let continues_from = pending.is_some();
        if continues_from {
            if let Some(rest) = t.strip_prefix('&') {
                t = rest.trim().to_string();
            }
        }
        let more = t.ends_with('&');
        if more {
            t.pop();
        }
        match pending.as_mut() {
            Some((_, s)) => {
                s.push(' ');
                s.push_str(t.trim());
            }
            None => pending = Some((line_no, t.trim().to_string())),
        }
        if !more {
            if let Some(p) = pending.take() {
                for part in split_semicolons(&p.1) {
                    out.push((p.0, part));
                }
            }
        }
    }
    if let Some(p) = pending {
        out.push(p);
    }
    out
}

fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '!' => return &line[..i],
            None => {}
        }
    }
    line
}

fn split_semicolons(s: &str) -> Vec<String> {
    s.split(';').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

fn word_after<'a>(s: &'a str, kw: &str) -> Option<&'a str> {
    let rest = s.strip_prefix(kw)?;
    if !rest.starts_with([' ', '(']) && !rest.is_empty() {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// What a file defines and uses.
#[derive(Debug, Default)]
pub struct FileScan {
    pub modules: Vec<String>,
    pub uses: Vec<String>,
    pub subroutines: Vec<(String, Subroutine)>,
    /// Module variables (not parameters) of types op2 reads: (module, name, type, dim).
    pub vars: Vec<(String, String, Spelling, usize)>,
}

/// Scans a Fortran file: its modules, the modules it uses, its subroutines with their dummies
/// and the types declared for them.
pub fn scan(source: &str, fixed: bool) -> FileScan {
    let mut f = FileScan::default();
    let mut module: Option<String> = None;
    // The subroutine being read: (name, subroutine).
    let mut current: Option<(String, Subroutine)> = None;
    for (line, st) in statements(source, fixed) {
        if let Some(m) = word_after(&st, "module") {
            if !matches!(m, "procedure" | "subroutine" | "function" | "") {
                module = Some(m.to_string());
                f.modules.push(m.to_string());
                continue;
            }
        }
        if let Some(u) = word_after(&st, "use").or_else(|| {
            st.strip_prefix("use,").and_then(|r| r.split("::").nth(1)).map(|r| {
                let r = r.trim_start();
                &r[..r.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(r.len())]
            })
        }) {
            let u = u.strip_prefix("::").unwrap_or(u).trim();
            if !u.is_empty() && !f.uses.iter().any(|x| x == u) {
                f.uses.push(u.to_string());
            }
            continue;
        }
        let compact: String = st.split_whitespace().collect::<Vec<_>>().join(" ");
        if compact == "end module" || compact.starts_with("end module ") || compact == "endmodule" {
            module = None;
            continue;
        }
        if compact == "end"
            || compact == "end subroutine"
            || compact.starts_with("end subroutine ")
            || compact.starts_with("endsubroutine")
        {
            if let Some(c) = current.take() {
                f.subroutines.push(c);
            }
            continue;
        }
        // `[pure|elemental|recursive|impure|module] subroutine NAME (args) [bind(c...)]`
        let mut head = compact.as_str();
        loop {
            let before = head;
            for p in ["pure ", "elemental ", "recursive ", "impure ", "module "] {
                if let Some(r) = head.strip_prefix(p) {
                    head = r;
                }
            }
            if before == head {
                break;
            }
        }
        if let Some(name) = word_after(head, "subroutine") {
            if current.is_some() {
                // an internal subroutine: not a kernel op2 can call
                continue;
            }
            let after = &head["subroutine".len()..].trim_start()[name.len()..];
            let dummies: Vec<String> = match (after.find('('), after.find(')')) {
                (Some(a), Some(b)) if a < b => {
                    after[a + 1..b].split(',').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect()
                }
                _ => Vec::new(),
            };
            let bind_c = after.replace(' ', "").contains("bind(c");
            let types = vec![None; dummies.len()];
            let extents = vec![None; dummies.len()];
            current =
                Some((name.to_string(), Subroutine { module: module.clone(), dummies, types, extents, line, bind_c }));
            continue;
        }
        if let Some((_, sub)) = current.as_mut() {
            declare(sub, &compact);
        } else if let Some(m) = &module {
            module_vars(m, &compact, &mut f.vars);
        }
    }
    if let Some(c) = current {
        f.subroutines.push(c);
    }
    f
}

/// The type spellings op2 reads in declarations, as the compiler's flags may size them: each
/// is probed (see `Kinds`). Other spellings of these (`real*8`, `real(kind=8)`, `real(c_double)`,
/// `integer(c_int)`, ...) are the same type to gfortran, whatever the flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `real`
    Real,
    /// `real(4)`, `real*4`, `real(c_float)`
    Real4,
    /// `real(8)`, `real*8`, `real(c_double)`
    Real8,
    /// `double precision`
    DoublePrecision,
    /// `integer`
    Integer,
    /// `integer(4)`, `integer*4`, `integer(c_int)`
    Integer4,
    /// `integer(8)`, `integer*8`, `integer(c_long_long)`, `integer(c_int64_t)`
    Integer8,
}

impl Spelling {
    pub const ALL: [Spelling; 7] = [
        Spelling::Real,
        Spelling::Real4,
        Spelling::Real8,
        Spelling::DoublePrecision,
        Spelling::Integer,
        Spelling::Integer4,
        Spelling::Integer8,
    ];

    /// As the probe declares it (and as messages name it).
    pub fn text(self) -> &'static str {
        match self {
            Spelling::Real => "real",
            Spelling::Real4 => "real(4)",
            Spelling::Real8 => "real(8)",
            Spelling::DoublePrecision => "double precision",
            Spelling::Integer => "integer",
            Spelling::Integer4 => "integer(4)",
            Spelling::Integer8 => "integer(8)",
        }
    }

    fn is_real(self) -> bool {
        matches!(self, Spelling::Real | Spelling::Real4 | Spelling::Real8 | Spelling::DoublePrecision)
    }
}

/// The spelling of a declaration's type spec (`real(8)`, `real(kind=8)`, `real*8`, `double
/// precision`, `integer`, `real(c_double)`, ...), if op2 reads it.
fn type_of(spec: &str) -> Option<Spelling> {
    let s: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let (base, kind) = match (s.find('('), s.find('*')) {
        (Some(i), _) => (&s[..i], Some(s[i + 1..].trim_end_matches(')').trim_start_matches("kind=").to_string())),
        (None, Some(i)) => (&s[..i], Some(s[i + 1..].to_string())),
        (None, None) => (s.as_str(), None),
    };
    match (base, kind.as_deref()) {
        ("doubleprecision", None) => Some(Spelling::DoublePrecision),
        ("real", None) => Some(Spelling::Real),
        ("real", Some("4") | Some("c_float")) => Some(Spelling::Real4),
        ("real", Some("8") | Some("c_double")) => Some(Spelling::Real8),
        ("integer", None) => Some(Spelling::Integer),
        ("integer", Some("4") | Some("c_int") | Some("c_int32_t")) => Some(Spelling::Integer4),
        ("integer", Some("8") | Some("c_long_long") | Some("c_int64_t")) => Some(Spelling::Integer8),
        _ => None,
    }
}

/// What the Fortran compiler makes of each `Spelling` with the flags in use: the `digits` of
/// each (binary digits of a real's significand, or an integer's value bits), as a probe program
/// compiled with those flags prints them. `-fdefault-real-8` makes `real` 53 (a C `double`) and
/// `double precision` 113 (a 16-byte real no C type of op2's matches), `-fdefault-integer-8`
/// makes `integer` 63 (`long long`), `-freal-4-real-8` makes `real` and `real(4)` 53, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds {
    pub digits: [u32; 7],
}

impl Kinds {
    /// Without flags that change them (and what `scan` assumes when no compiler is asked).
    pub const PLAIN: Kinds = Kinds { digits: [24, 24, 53, 53, 31, 31, 63] };

    fn digits_of(&self, s: Spelling) -> u32 {
        self.digits[s as usize]
    }

    /// The element type op2 has for a spelling, if any.
    pub fn elem(&self, s: Spelling) -> Option<ElemType> {
        match (s.is_real(), self.digits_of(s)) {
            (true, 24) => Some(ElemType::Float),
            (true, 53) => Some(ElemType::Double),
            (false, 31) => Some(ElemType::Int),
            (false, 63) => Some(ElemType::Ll),
            _ => None,
        }
    }

    /// The C type a dummy of this spelling is passed as: op2's element type, else a C type no
    /// argument matches where the size is known (an extended or quadruple real is `long double`,
    /// a 1- or 2-byte integer `int8_t`/`int16_t`), so the loop's check refuses it; None where
    /// nothing is known (not checked).
    pub fn c_type(&self, s: Spelling) -> Option<&'static str> {
        if let Some(t) = self.elem(s) {
            return Some(t.c_name());
        }
        match (s.is_real(), self.digits_of(s)) {
            (true, _) => Some("long double"),
            (false, 7) => Some("int8_t"),
            (false, 15) => Some("int16_t"),
            _ => None,
        }
    }

    /// What differs from `PLAIN`, for messages: "real is double, double precision is long double".
    pub fn differences(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        for s in Spelling::ALL {
            if self.digits_of(s) != Kinds::PLAIN.digits_of(s) {
                let c = self.c_type(s).map(str::to_string).unwrap_or_else(|| format!("{} digits", self.digits_of(s)));
                out.push(format!("{} is {c}", s.text()));
            }
        }
        out.join(", ")
    }

    /// Reads the probe's output: the 7 numbers, in `Spelling::ALL`'s order.
    fn parse(text: &str) -> Option<Kinds> {
        let v: Vec<u32> = text.split_whitespace().map(|w| w.parse().ok()).collect::<Option<Vec<u32>>>()?;
        let digits: [u32; 7] = v.try_into().ok()?;
        Some(Kinds { digits })
    }
}

/// The probe program: one variable per `Spelling` (in order), its `digits` printed. Fortran 95
/// and valid in fixed and free form alike, so flags such as `-std=f95` or `-ffixed-form` compile it.
const KINDS_PROBE: &str = "      program op2kinds
      implicit none
      real a1
      real(4) a2
      real(8) a3
      double precision a4
      integer a5
      integer(4) a6
      integer(8) a7
      print *, digits(a1), digits(a2), digits(a3), digits(a4)
      print *, digits(a5), digits(a6), digits(a7)
      end program op2kinds
";

/// Records the variables a module-level declaration (`TYPE[, attrs] :: names`) declares.
fn module_vars(module: &str, st: &str, vars: &mut Vec<(String, String, Spelling, usize)>) {
    let Some((head, names)) = st.split_once("::") else { return };
    let head_c: String = head.chars().filter(|c| !c.is_whitespace()).collect();
    if head_c.contains("parameter") {
        return;
    }
    let spec = split_top(&head_c, ',');
    let Some(ty) = spec.first().and_then(|s| type_of(s)) else { return };
    let mut dim = Some(1usize);
    for a in &spec[1..] {
        if let Some(d) = a.strip_prefix("dimension(").and_then(|d| d.strip_suffix(')')) {
            dim = d.parse().ok();
        }
    }
    for n in split_top(names, ',') {
        let n = n.split('=').next().unwrap_or("").trim();
        let (name, d) = match n.split_once('(') {
            Some((a, b)) => (a.trim(), b.trim_end_matches(')').trim().parse().ok()),
            None => (n, dim),
        };
        if let Some(d) = d {
            if !name.is_empty() {
                vars.push((module.to_string(), name.to_string(), ty, d));
            }
        }
    }
}

/// `s` split at `sep` outside parentheses.
fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut all = Vec::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c == sep && depth == 0 {
            all.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    all.push(cur);
    all
}

/// Values an array spec holds (`4`, `2,3`, `1:3`), if every extent is a constant.
fn extent_of(spec: &str) -> Option<usize> {
    let mut n = 1usize;
    for d in split_top(spec, ',') {
        let d = d.trim();
        let len = match d.split_once(':') {
            Some((lo, hi)) => {
                let (lo, hi) = (lo.trim().parse::<i64>().ok()?, hi.trim().parse::<i64>().ok()?);
                usize::try_from(hi - lo + 1).ok()?
            }
            None => d.parse::<usize>().ok()?,
        };
        n = n.checked_mul(len)?;
    }
    Some(n)
}

/// Records the types and extents a declaration statement gives the subroutine's dummies.
fn declare(sub: &mut Subroutine, st: &str) {
    // `dimension q(4), r(2)`: extents without a type.
    if let Some(rest) = st.strip_prefix("dimension ").filter(|_| !st.contains("::")) {
        for item in split_top(rest, ',') {
            let item = item.trim();
            if let Some((n, spec)) = item.split_once('(') {
                if let Some(i) = sub.dummies.iter().position(|d| d == n.trim()) {
                    sub.extents[i] = extent_of(spec.trim_end().trim_end_matches(')'));
                }
            }
        }
        return;
    }
    // A `dimension(...)` attribute gives every name its extents.
    let attr_extent: Option<Option<usize>> = st.split_once("::").and_then(|(a, _)| {
        split_top(a, ',').iter().skip(1).find_map(|attr| {
            let c: String = attr.chars().filter(|c| !c.is_whitespace()).collect();
            c.strip_prefix("dimension(").map(|r| extent_of(r.trim_end_matches(')')))
        })
    });
    let (spec, names) = match st.split_once("::") {
        Some((a, b)) => (a.split(',').next().unwrap_or("").to_string(), b.to_string()),
        None => {
            // `real(8) a, b` / `double precision a` / `integer a(4)`
            let mut spec_end = 0;
            let mut depth = 0;
            let bytes: Vec<char> = st.chars().collect();
            let word_end = st.find([' ', '(', '*']).unwrap_or(st.len());
            let word = &st[..word_end];
            if !matches!(word, "real" | "integer" | "double") {
                return;
            }
            for (i, c) in bytes.iter().enumerate() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ' ' if depth == 0 && i >= word_end && !(word == "double" && st[..i].trim() == "double") => {
                        spec_end = i;
                        break;
                    }
                    _ => {}
                }
            }
            if spec_end == 0 {
                return;
            }
            (st[..spec_end].to_string(), st[spec_end..].to_string())
        }
    };
    let Some(ty) = type_of(&spec) else { return };
    // names, at depth 0 of parentheses, each with its array spec (inside its parentheses)
    let mut depth = 0;
    let (mut cur, mut arr) = (String::new(), None::<String>);
    let mut all = Vec::new();
    for c in names.chars() {
        match c {
            '(' => {
                if depth == 0 {
                    arr = Some(String::new());
                } else if let Some(a) = arr.as_mut() {
                    a.push(c);
                }
                depth += 1;
            }
            ')' => {
                depth -= 1;
                if depth > 0 {
                    if let Some(a) = arr.as_mut() {
                        a.push(c);
                    }
                }
            }
            ',' if depth == 0 => all.push((std::mem::take(&mut cur), arr.take())),
            _ if depth == 0 => cur.push(c),
            _ => {
                if let Some(a) = arr.as_mut() {
                    a.push(c);
                }
            }
        }
    }
    all.push((cur, arr));
    for (n, arr) in all {
        let n = n.split('=').next().unwrap_or("").trim();
        if let Some(i) = sub.dummies.iter().position(|d| d == n) {
            sub.types[i] = Some(ty);
            sub.extents[i] = match (arr, attr_extent) {
                (Some(a), _) => extent_of(&a),
                (None, Some(e)) => e,
                (None, None) => Some(1),
            };
        }
    }
}

/// Modules every Fortran compiler provides.
fn intrinsic_module(m: &str) -> bool {
    matches!(m, "iso_c_binding" | "iso_fortran_env" | "omp_lib" | "omp_lib_kinds" | "mpi" | "mpi_f08")
        || m.starts_with("ieee_")
}

/// The Fortran compiler and the settings a kernel file is compiled with.
pub struct Settings<'a> {
    pub fc: &'a str,
    pub fflags: &'a str,
    /// `OP2_FORTRAN_PATH`'s directories.
    pub path: &'a [PathBuf],
    pub cache_dir: &'a Path,
}

fn read_text(path: &Path, what: &str) -> Result<String> {
    let shown = path.display().to_string();
    let bytes = crate::core::file::read_regular(&shown, what)?;
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(_) => op2_bail!(BadKernel, "{what}: Fortran file '{shown}' is not valid UTF-8 text"),
    }
}

fn is_fixed(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("f" | "F"))
}

/// The file defining module `m`, in `dirs` in order: `m.F90`, `m.f90`, `m.F`, `m.f` (any case
/// of the name), else any Fortran file of the directory that defines it.
pub fn find_module(m: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(d) else { continue };
        let mut files: Vec<PathBuf> =
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| is_fortran_file(&p.to_string_lossy())).collect();
        files.sort();
        if let Some(p) =
            files.iter().find(|p| p.file_stem().and_then(|s| s.to_str()).is_some_and(|s| s.eq_ignore_ascii_case(m)))
        {
            return Some(p.clone());
        }
        for p in &files {
            let bytes = crate::core::file::read_regular(&p.display().to_string(), "op2: looking for Fortran modules");
            if let Some(t) = bytes.ok().and_then(|b| String::from_utf8(b).ok()) {
                if scan(&t, is_fixed(p)).modules.iter().any(|x| x == m) {
                    return Some(p.clone());
                }
            }
        }
    }
    None
}

/// The Fortran compiler's identity (its `--version` first line).
fn identity(fc: &str, what: &str) -> Result<String> {
    match super::child::output(Command::new(fc).arg("--version")) {
        Ok(o) if o.status.success() => {
            Ok(String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string())
        }
        Ok(o) => op2_bail!(Compile, "{what}: the Fortran compiler '{fc}' (OP2_FC) failed: {}", o.status),
        Err(e) => op2_bail!(Compile, "{what}: cannot run the Fortran compiler '{fc}' (OP2_FC): {e}"),
    }
}

/// Compiles the subroutine `name` of the Fortran file `path` (and the modules it uses) and
/// returns the C kernel that calls it, to be declared under `name`, with the module variables
/// of the files compiled: (lower-case name, type, dim, assembler name).
pub fn kernel_source(path: &str, name: &str, s: &Settings, what: &str) -> Result<(String, Vec<ModuleVar>)> {
    use sha2::{Digest, Sha256};
    let main = PathBuf::from(path);
    let text = read_text(&main, what)?;
    let lname = name.to_lowercase();
    let scanned = scan(&text, is_fixed(&main));
    let Some((_, sub)) = scanned.subroutines.iter().find(|(n, _)| *n == lname) else {
        op2_bail!(BadKernel, "{what}: no subroutine named '{name}' in the Fortran file '{path}'");
    };
    if sub.bind_c {
        op2_bail!(
            BadKernel,
            "{what}: subroutine '{name}' of '{path}' (line {}) is bind(C): give op2 the subroutine without bind(C), or call it through op_par_loop_fptr",
            sub.line
        );
    }
    // The files to compile, modules used first.
    let mut dirs: Vec<PathBuf> = Vec::with_capacity(1 + s.path.len());
    dirs.push(
        main.parent()
            .map(|p| if p.as_os_str().is_empty() { PathBuf::from(".") } else { p.to_path_buf() })
            .unwrap_or_else(|| PathBuf::from(".")),
    );
    dirs.extend(s.path.iter().cloned());
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut visiting: Vec<PathBuf> = Vec::new();
    add_with_deps(&main, text, &dirs, &mut files, &mut visiting, what)?;
    let fc_id = identity(s.fc, what)?;
    let mut flags: Vec<String> = DEFAULT_FFLAGS.iter().map(|f| f.to_string()).collect();
    flags.extend(s.fflags.split_whitespace().map(str::to_string));
    let mut h = Sha256::new();
    for part in [s.fc, fc_id.as_str(), &flags.join(" "), &REQUIRED_FFLAGS.join(" ")] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for (p, t) in &files {
        h.update(p.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(t.as_bytes());
        h.update([0]);
    }
    let hash = crate::codegen::hex(&h.finalize()[..12]);
    // What `real`, `integer`, ... are with these flags: the dummies' C types follow them.
    let kinds = probe_kinds(s.fc, &fc_id, &flags, s.cache_dir, what)?;
    let dir = s.cache_dir.join("fortran").join(&hash);
    let objects: Vec<PathBuf> = (0..files.len()).map(|i| dir.join(format!("{i}.o"))).collect();
    if !objects.iter().all(|o| o.is_file()) {
        compile_all(&files, &flags, s.fc, &dir, what)?;
    }
    // The C kernel calling the subroutine.
    let sym = sub.symbol(&lname);
    let mut src = String::with_capacity(400);
    src.push_str(&format!("{STAND_IN_MARK}{name}' of '{path}' (Fortran files {hash}) */\n"));
    let differences = kinds.differences();
    if !differences.is_empty() {
        // Read by `explain_mismatch`: why a dummy's C type is not the usual one.
        let shown = s.fflags.split_whitespace().collect::<Vec<_>>().join(" ").replace("*/", "* /");
        src.push_str(&format!("{KINDS_MARK}with the flags '{shown}' (OP2_FFLAGS), {differences} */\n"));
    }
    for o in &objects {
        src.push_str(&format!("{OBJECT_MARK}{} */\n", o.display()));
    }
    // Parameters are named after the dummies (messages about the arguments name them), where
    // the name is a usable C identifier.
    let names: Vec<String> = sub
        .dummies
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if crate::core::is_c_identifier(d) && !d.starts_with("op2") && *d != sym {
                d.clone()
            } else {
                format!("a{i}")
            }
        })
        .collect();
    // A dummy of known type and constant extents is declared with them (`double q[4]`), so the
    // loop's check names a dim that differs, as for a C kernel that declares its extents.
    let params: Vec<String> = sub
        .types
        .iter()
        .zip(&sub.extents)
        .zip(&names)
        .map(|((t, e), n)| match (t.and_then(|t| kinds.c_type(t)), e) {
            (Some(t), Some(e)) => format!("{t} {n}[{e}]"),
            (Some(t), None) => format!("{t} *{n}"),
            (None, _) => format!("void *{n}"),
        })
        .collect();
    let ptypes = if params.is_empty() { "void".to_string() } else { vec!["void *"; params.len()].join(", ") };
    src.push_str(&format!("void {sym}({ptypes});\n"));
    let args: Vec<String> = names.iter().map(|n| format!("(void *){n}")).collect();
    let plist = if params.is_empty() { "void".to_string() } else { params.join(", ") };
    src.push_str(&format!("static inline void {name}({plist})\n{{\n  {sym}({});\n}}\n", args.join(", ")));
    let mut vars = Vec::new();
    for (p, t) in &files {
        for (m, v, ty, dim) in scan(t, is_fixed(p)).vars {
            // A variable of a kind op2 has no type for takes no constant (as one of a type op2
            // does not read).
            if let Some(ty) = kinds.elem(ty) {
                vars.push((v.clone(), ty, dim, format!("__{m}_MOD_{v}")));
            }
        }
    }
    Ok((src, vars))
}

/// The compiler's `Kinds` with `flags`: the probe program compiled and run once per compiler
/// identity and flags, its answer kept in `OP2_CACHE_DIR/fortran/kinds-HASH`.
fn probe_kinds(fc: &str, fc_id: &str, flags: &[String], cache_dir: &Path, what: &str) -> Result<Kinds> {
    use sha2::{Digest, Sha256};
    // The probe is linked and run: not `-c` (nor `-o`, which op2 gives).
    let flags: Vec<&String> = flags.iter().filter(|f| f.as_str() != "-c").collect();
    let mut h = Sha256::new();
    for part in [fc, fc_id, KINDS_PROBE] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for f in &flags {
        h.update(f.as_bytes());
        h.update([0]);
    }
    let hash = crate::codegen::hex(&h.finalize()[..12]);
    let parent = cache_dir.join("fortran");
    let file = parent.join(format!("kinds-{hash}"));
    if let Some(k) = std::fs::read_to_string(&file).ok().and_then(|t| Kinds::parse(&t)) {
        return Ok(k);
    }
    if let Err(e) = std::fs::create_dir_all(&parent) {
        op2_bail!(Io, "{what}: cannot create the cache directory '{}': {e}", parent.display());
    }
    let scratch = parent.join(format!(".tmp-kinds-{}-{hash}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    if let Err(e) = std::fs::create_dir_all(&scratch) {
        op2_bail!(Io, "{what}: cannot create '{}': {e}", scratch.display());
    }
    let result = (|| {
        let src = scratch.join("op2kinds.f90");
        if let Err(e) = std::fs::write(&src, KINDS_PROBE) {
            op2_bail!(Io, "{what}: cannot write '{}': {e}", src.display());
        }
        let exe = scratch.join("op2kinds");
        let how = format!("{what}: the Fortran compiler '{fc}' (OP2_FC) with the flags '{}'", join_flags(&flags));
        let why =
            "op2 compiles and runs it to learn what `real`, `double precision` and `integer` are with these flags";
        match super::child::output(Command::new(fc).args(&flags).arg(&src).arg("-o").arg(&exe).current_dir(&scratch)) {
            Ok(o) if o.status.success() => {}
            Ok(o) => op2_bail!(
                Compile,
                "{how} does not build op2's type probe ({why}): {}:\n{}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim_end()
            ),
            Err(e) => op2_bail!(Compile, "{what}: cannot run the Fortran compiler '{fc}' (OP2_FC): {e}"),
        }
        let out = match super::child::output(Command::new(&exe).current_dir(&scratch)) {
            Ok(o) if o.status.success() => o,
            Ok(o) => op2_bail!(Compile, "{how}: op2's type probe ({why}) failed: {}", o.status),
            Err(e) => op2_bail!(Compile, "{how}: cannot run op2's type probe ({why}): {e}"),
        };
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let Some(k) = Kinds::parse(&text) else {
            op2_bail!(Compile, "{how}: op2's type probe ({why}) printed '{}', not 7 numbers", text.trim());
        };
        // Into place through a rename: a concurrent process reads the whole answer or none.
        let tmp = scratch.join("kinds");
        if std::fs::write(&tmp, &text).is_ok() {
            let _ = std::fs::rename(&tmp, &file);
        }
        Ok(k)
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn join_flags(flags: &[&String]) -> String {
    flags.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(" ")
}

fn add_with_deps(
    file: &Path,
    text: String,
    dirs: &[PathBuf],
    files: &mut Vec<(PathBuf, String)>,
    visiting: &mut Vec<PathBuf>,
    what: &str,
) -> Result<()> {
    if files.iter().any(|(p, _)| p == file) || visiting.iter().any(|p| p == file) {
        return Ok(());
    }
    visiting.push(file.to_path_buf());
    let sc = scan(&text, is_fixed(file));
    for u in &sc.uses {
        if intrinsic_module(u) || sc.modules.contains(u) {
            continue;
        }
        // Not found: left to the compiler (a module of its own, or an error naming the line).
        if let Some(p) = find_module(u, dirs) {
            if p != file {
                let t = read_text(&p, what)?;
                add_with_deps(&p, t, dirs, files, visiting, what)?;
            }
        }
    }
    visiting.pop();
    files.push((file.to_path_buf(), text));
    Ok(())
}

/// Compiles `files` in order into `dir` (`0.o`, `1.o`, ...), through a scratch directory
/// renamed into place, so concurrent processes never see half a set.
fn compile_all(files: &[(PathBuf, String)], flags: &[String], fc: &str, dir: &Path, what: &str) -> Result<()> {
    let parent = dir.parent().unwrap_or(dir);
    if let Err(e) = std::fs::create_dir_all(parent) {
        op2_bail!(Io, "{what}: cannot create the cache directory '{}': {e}", parent.display());
    }
    let scratch =
        parent.join(format!(".tmp-{}-{}", std::process::id(), dir.file_name().and_then(|n| n.to_str()).unwrap_or("x")));
    let _ = std::fs::remove_dir_all(&scratch);
    if let Err(e) = std::fs::create_dir_all(&scratch) {
        op2_bail!(Io, "{what}: cannot create '{}': {e}", scratch.display());
    }
    for (i, (p, _)) in files.iter().enumerate() {
        let out = super::child::output(
            Command::new(fc)
                .args(flags)
                .args(REQUIRED_FFLAGS)
                .arg("-J")
                .arg(&scratch)
                .arg(p)
                .arg("-o")
                .arg(scratch.join(format!("{i}.o"))),
        );
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                let _ = std::fs::remove_dir_all(&scratch);
                op2_bail!(
                    Compile,
                    "{what}: Fortran file '{}' does not compile ({fc} exited with {}):\n{}",
                    p.display(),
                    o.status,
                    String::from_utf8_lossy(&o.stderr).trim_end()
                );
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&scratch);
                op2_bail!(Compile, "{what}: cannot run the Fortran compiler '{fc}' (OP2_FC): {e}");
            }
        }
    }
    if std::fs::rename(&scratch, dir).is_err() {
        // Another process got there first (its objects are the same), or the rename failed.
        let _ = std::fs::remove_dir_all(&scratch);
        if !dir.is_dir() {
            op2_bail!(Io, "{what}: cannot move compiled Fortran objects into '{}'", dir.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_modules_uses_and_typed_dummies() {
        let src = "module k_mod ! kernels\n  use consts, only: gam\n  use, intrinsic :: iso_c_binding\ncontains\n\
                   subroutine save_soln(q, &\n      qold, n)\n    real(8), dimension(4) :: q\n    real(kind=8) :: qold(4)\n    integer n\n    qold = q\n  end subroutine\nend module k_mod\n\
                   subroutine top(x)\n  double precision x\nend\n";
        let f = scan(src, false);
        assert_eq!(f.modules, vec!["k_mod"]);
        assert_eq!(f.uses, vec!["consts", "iso_c_binding"]);
        assert_eq!(f.subroutines.len(), 2);
        let (n, s) = &f.subroutines[0];
        assert_eq!(n, "save_soln");
        assert_eq!(s.dummies, vec!["q", "qold", "n"]);
        assert_eq!(s.types, vec![Some(Spelling::Real8), Some(Spelling::Real8), Some(Spelling::Integer)]);
        assert_eq!(s.symbol(n), "__k_mod_MOD_save_soln");
        assert_eq!(s.line, 5);
        let (n, s) = &f.subroutines[1];
        assert_eq!(s.symbol(n), "top_");
        assert_eq!(s.types, vec![Some(Spelling::DoublePrecision)]);
        assert_eq!(
            objects_in("/* op2-fortran-object: /a/0.o */\nx\n/* op2-fortran-object: /a/0.o */\n"),
            vec!["/a/0.o"]
        );
        assert!(is_fortran_file("k.F90") && is_fortran_file("a/k.f") && !is_fortran_file("k.h"));
    }

    #[test]
    fn spellings_and_kinds() {
        let src = "subroutine k(a, b, c, d, e, f, g, h, i, j)\n  real :: a\n  real*8 b\n  real(c_float) :: c\n\
                   double precision :: d\n  integer*8 e\n  integer(kind=4), intent(in) :: f\n  real(dp) :: g\n\
                   integer(c_int64_t) h\n  real*4 :: i(3)\n  integer j(2)\nend\n";
        let f = scan(src, false);
        let (_, s) = &f.subroutines[0];
        use Spelling::*;
        assert_eq!(
            s.types,
            vec![
                Some(Real),
                Some(Real8),
                Some(Real4),
                Some(DoublePrecision),
                Some(Integer8),
                Some(Integer4),
                None,
                Some(Integer8),
                Some(Real4),
                Some(Integer)
            ]
        );
        assert_eq!(s.extents[8], Some(3));
        assert_eq!(s.extents[9], Some(2));
        let plain = Kinds::PLAIN;
        assert_eq!(plain.elem(Real), Some(ElemType::Float));
        assert_eq!(plain.elem(DoublePrecision), Some(ElemType::Double));
        assert_eq!(plain.elem(Integer), Some(ElemType::Int));
        assert_eq!(plain.differences(), "");
        // gfortran 12 with -fdefault-real-8 -fdefault-integer-8
        let k = Kinds::parse("  53  24  53  113\n  63  31  63\n").unwrap();
        assert_eq!(k.elem(Real), Some(ElemType::Double));
        assert_eq!(k.elem(Real4), Some(ElemType::Float));
        assert_eq!(k.elem(DoublePrecision), None);
        assert_eq!(k.c_type(DoublePrecision), Some("long double"));
        assert_eq!(k.elem(Integer), Some(ElemType::Ll));
        assert_eq!(k.differences(), "real is double, double precision is long double, integer is long long");
        let k = Kinds::parse("24 24 53 53 15 31 63").unwrap();
        assert_eq!(k.c_type(Integer), Some("int16_t"));
        assert!(Kinds::parse("24 24 53").is_none() && Kinds::parse("a b c d e f g").is_none());
        let stand_in = format!(
            "{STAND_IN_MARK}k' of 'k.f90' (Fortran files 0a) */\n{KINDS_MARK}with the flags '-fdefault-real-8' (OP2_FFLAGS), real is double */\n"
        );
        assert_eq!(
            explain_mismatch(&stand_in, "m").as_deref(),
            Some(
                "m (Fortran subroutine 'k' of 'k.f90'; with the flags '-fdefault-real-8' (OP2_FFLAGS), real is double)"
            )
        );
    }

    #[test]
    fn dummy_extents() {
        let src = "subroutine k(a, b, c, d, e, f, g, h)
  real(8), dimension(4) :: a
  real(8) :: b(2,3), c
                   real(8), intent(in) :: d(0:2), e(*)
  integer(4) f(n)
  real(8) g
  dimension g(5)
                   real(8), intent(inout) :: h(:)
end
";
        let f = scan(src, false);
        let (_, s) = &f.subroutines[0];
        assert_eq!(s.extents, vec![Some(4), Some(6), Some(1), Some(3), None, None, Some(5), None]);
        assert_eq!(extent_of("1:4, 2"), Some(8));
        assert_eq!(extent_of("n"), None);
        let stand_in = format!("{STAND_IN_MARK}k' of '/d/k.f90' (Fortran files 0a) */\nvoid k(double x[2]) {{}}\n");
        assert_eq!(stand_in_origin(&stand_in), Some("k' of '/d/k.f90"));
        assert_eq!(
            explain_mismatch(&stand_in, "kernel 'k' parameter 1 'double x[2]' (kernel line 3) holds 2 value(s)")
                .as_deref(),
            Some("kernel 'k' parameter 1 'double x[2]' holds 2 value(s) (Fortran subroutine 'k' of '/d/k.f90')")
        );
        assert_eq!(explain_mismatch("void k(double *x) {}", "m"), None);
        // op_arg_idx in the JIT tier: an adapter adds the index base.
        let stand_in = format!("{STAND_IN_MARK}u' of 'k.f90' (Fortran files 0a) */\nvoid __k_MOD_u(void *, void *);\nstatic inline void u(double q[4], int idx[1])\n{{\n  __k_MOD_u((void *)q, (void *)idx);\n}}\n");
        let (n, src) = index_adapter(&stand_in, "u", &[1], 1).unwrap();
        assert_eq!(n, "u_op2idx_1_1");
        assert!(src.starts_with(&stand_in));
        assert!(src.ends_with("static inline void u_op2idx_1_1(double q[4], int idx[1])\n{\n  int op2_i1 = idx[0] + (1);\n  u(q, &op2_i1);\n}\n"), "{src}");
        assert!(index_adapter(&stand_in, "nothere", &[0], 1).is_none());
    }
}
