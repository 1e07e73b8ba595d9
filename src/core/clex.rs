//! A small C lexer for the kernel sources op2 is given: enough to find identifiers, the
//! kernel's definition and its parameter list, never a full C parser. Comments are skipped,
//! string and character literals are single tokens, preprocessor lines are tokenized like code
//! (a `#define` may name a constant). Every token carries its 1-based line in the kernel's own
//! source, which is how compiler diagnostics count lines (`#line 1 "kernel:NAME"`).

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    Ident,
    Number,
    /// A string or character literal.
    Literal,
    /// One punctuation character (`(`, `*`, `{`, ...); multi-character operators come as
    /// several tokens, which is all the kernel-signature reader needs.
    Punct,
}

/// One token: a slice of the source and the line it starts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tok<'a> {
    pub kind: TokKind,
    pub text: &'a str,
    pub line: usize,
}

/// The tokens of `src`.
pub fn tokens(src: &str) -> Vec<Tok<'_>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    line += 1;
                }
                i += 1;
            }
            i = (i + 2).min(b.len());
        } else if c == b'"' || c == b'\'' {
            let (s, l) = (i, line);
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push(Tok { kind: TokKind::Literal, text: slice(src, s, i), line: l });
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok { kind: TokKind::Ident, text: &src[s..i], line });
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            // Numeric literals whole, so suffixes and exponents (1e5f, 0x1p-3) are not identifiers.
            let s = i;
            while i < b.len() {
                let d = b[i];
                let exponent_sign = (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Tok { kind: TokKind::Number, text: &src[s..i], line });
        } else if c.is_ascii_whitespace() || !c.is_ascii() {
            // Non-ASCII bytes outside literals and comments are the compiler's to diagnose.
            i += 1;
            while i < b.len() && !b[i].is_ascii() {
                i += 1;
            }
        } else {
            out.push(Tok { kind: TokKind::Punct, text: &src[i..i + 1], line });
            i += 1;
        }
    }
    out
}

/// `src[s..e]`, widened to character boundaries (literals may hold any UTF-8).
fn slice(src: &str, s: usize, mut e: usize) -> &str {
    while e < src.len() && !src.is_char_boundary(e) {
        e += 1;
    }
    &src[s..e]
}

/// The source text of a kernel given as bytes in any encoding, as UTF-8 that compiles to the
/// same program: valid UTF-8 is kept; a byte that is not valid UTF-8 becomes an octal escape
/// (`\351`) inside a string or character literal (the same byte in the compiled program), and
/// `?` inside a comment. Elsewhere such a byte cannot be part of a C program: the error names
/// its line.
pub fn source_from_bytes(bytes: &[u8]) -> Result<String, String> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Ok(s.to_string());
    }
    #[derive(PartialEq, Clone, Copy)]
    enum St {
        Code,
        LineComment,
        BlockComment,
        Lit(u8),
    }
    let mut out = String::with_capacity(bytes.len() + 16);
    let mut st = St::Code;
    let mut i = 0;
    let mut line = 1;
    while i < bytes.len() {
        // The longest valid UTF-8 run from here is copied as it is.
        let valid = match std::str::from_utf8(&bytes[i..]) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        if valid == 0 {
            let b = bytes[i];
            match st {
                St::Lit(_) => out.push_str(&format!("\\{b:03o}")),
                St::LineComment | St::BlockComment => out.push('?'),
                St::Code => {
                    return Err(format!(
                        "byte 0x{b:02x} on line {line} is not UTF-8 and is outside a comment or literal"
                    ))
                }
            }
            i += 1;
            continue;
        }
        // Track the lexical state over the valid run (all state changes are ASCII).
        let run = &bytes[i..i + valid];
        let mut j = 0;
        while j < run.len() {
            let c = run[j];
            if c == b'\n' {
                line += 1;
            }
            st = match st {
                St::Code if c == b'/' && run.get(j + 1) == Some(&b'/') => St::LineComment,
                St::Code if c == b'/' && run.get(j + 1) == Some(&b'*') => {
                    j += 1;
                    St::BlockComment
                }
                St::Code if c == b'"' || c == b'\'' => St::Lit(c),
                St::LineComment if c == b'\n' => St::Code,
                St::BlockComment if c == b'*' && run.get(j + 1) == Some(&b'/') => {
                    j += 1;
                    St::Code
                }
                St::Lit(q) if c == b'\\' => {
                    j += 1;
                    St::Lit(q)
                }
                St::Lit(q) if c == q || c == b'\n' => St::Code,
                s => s,
            };
            j += 1;
        }
        // SAFETY of the slice: `valid` bytes from i are UTF-8 (checked above).
        out.push_str(std::str::from_utf8(run).unwrap_or_default());
        i += valid;
    }
    Ok(out)
}

/// A parameter of the kernel's definition as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The type words without qualifiers (`const`, `volatile`, `restrict`, `register`), in
    /// order: `["double"]`, `["unsigned", "int"]`, `["real_t"]`.
    pub base: Vec<String>,
    /// Levels of indirection: `*` and `[]` each count one.
    pub depth: usize,
    /// The parameter's text as written (for messages).
    pub text: String,
    /// Line of the parameter in the kernel's source.
    pub line: usize,
    /// Values the parameter declares, for an array parameter with one integer extent and no
    /// `*` (`double x[4]`: 4); None otherwise.
    pub extent: Option<usize>,
}

/// The kernel's definition: its parameters and the line of its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub params: Vec<Param>,
    pub line: usize,
}

const QUALIFIERS: &[&str] = &["const", "volatile", "restrict", "__restrict", "__restrict__", "register"];

/// Finds the definition of function `name` at file scope: the identifier, a parenthesised
/// parameter list, then `{`. None when there is none (or it hides behind macros).
pub fn find_definition(src: &str, name: &str) -> Option<Definition> {
    let toks = tokens(src);
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "{" if t.kind == TokKind::Punct => depth += 1,
            "}" if t.kind == TokKind::Punct => depth -= 1,
            _ => {}
        }
        if depth != 0 || t.kind != TokKind::Ident || t.text != name {
            continue;
        }
        if toks.get(i + 1).map(|t| t.text) != Some("(") {
            continue;
        }
        // Matching ')' of the parameter list.
        let mut d = 0;
        let mut close = None;
        for (j, u) in toks.iter().enumerate().skip(i + 1) {
            if u.kind != TokKind::Punct {
                continue;
            }
            match u.text {
                "(" => d += 1,
                ")" => {
                    d -= 1;
                    if d == 0 {
                        close = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close?;
        if toks.get(close + 1).map(|t| t.text) != Some("{") {
            continue;
        }
        return Some(Definition { params: params(&toks[i + 2..close], src), line: t.line });
    }
    None
}

/// Token positions of the file-scope definition of function `name` in `toks`: the name, the
/// `)` closing its parameter list, and the `{` and `}` of its body. None when there is none.
pub fn definition_span(toks: &[Tok], name: &str) -> Option<(usize, usize, usize, usize)> {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        match (t.kind, t.text) {
            (TokKind::Punct, "{") => depth += 1,
            (TokKind::Punct, "}") => depth -= 1,
            _ => {}
        }
        if depth != 0 || t.kind != TokKind::Ident || t.text != name || toks.get(i + 1).map(|t| t.text) != Some("(") {
            continue;
        }
        let close = matching(toks, i + 1)?;
        if toks.get(close + 1).map(|t| (t.kind, t.text)) != Some((TokKind::Punct, "{")) {
            continue;
        }
        let end = matching(toks, close + 1)?;
        return Some((i, close, close + 1, end));
    }
    None
}

/// The position of the bracket that closes the one at `open` (`(`, `[` or `{`), counting
/// only brackets of the same kind.
pub fn matching(toks: &[Tok], open: usize) -> Option<usize> {
    let (o, c) = match toks.get(open)?.text {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        "{" => ("{", "}"),
        _ => return None,
    };
    let mut d = 0i32;
    for (j, u) in toks.iter().enumerate().skip(open) {
        if u.kind != TokKind::Punct {
            continue;
        }
        if u.text == o {
            d += 1;
        } else if u.text == c {
            d -= 1;
            if d == 0 {
                return Some(j);
            }
        }
    }
    None
}

/// Byte offset of token `t` in `src` (tokens are slices of it).
pub fn offset(src: &str, t: &Tok) -> usize {
    t.text.as_ptr() as usize - src.as_ptr() as usize
}

/// Splits a parameter list's tokens at top-level commas and reads each parameter.
fn params(toks: &[Tok], src: &str) -> Vec<Param> {
    let mut groups: Vec<&[Tok]> = Vec::new();
    let (mut d, mut start) = (0, 0);
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "(" | "[" => d += 1,
            ")" | "]" => d -= 1,
            "," if d == 0 => {
                groups.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() {
        groups.push(&toks[start..]);
    }
    if groups.len() == 1 && groups[0].len() == 1 && groups[0][0].text == "void" {
        return Vec::new();
    }
    groups
        .into_iter()
        .map(|g| {
            let mut words: Vec<String> = Vec::new();
            let mut depth = 0;
            let (mut stars, mut brackets) = (0, 0);
            for t in g {
                match (t.kind, t.text) {
                    (TokKind::Punct, "*") => {
                        depth += 1;
                        stars += 1;
                    }
                    (TokKind::Punct, "[") => {
                        depth += 1;
                        brackets += 1;
                    }
                    (TokKind::Ident, w) if !QUALIFIERS.contains(&w) => words.push(w.to_string()),
                    _ => {}
                }
            }
            // The last word is the parameter's name when there is a type before it.
            if words.len() > 1 {
                words.pop();
            }
            let text = match (g.first(), g.last()) {
                (Some(a), Some(b)) => {
                    let s = a.text.as_ptr() as usize - src.as_ptr() as usize;
                    let e = b.text.as_ptr() as usize - src.as_ptr() as usize + b.text.len();
                    src[s..e].split_whitespace().collect::<Vec<_>>().join(" ")
                }
                _ => String::new(),
            };
            // `[ N ]` with N an integer literal, the only level of indirection.
            let extent = if stars == 0 && brackets == 1 {
                g.iter().position(|t| t.text == "[").and_then(|i| match (g.get(i + 1), g.get(i + 2)) {
                    (Some(n), Some(close)) if close.text == "]" => n.text.parse::<usize>().ok(),
                    _ => None,
                })
            } else {
                None
            };
            Param { base: words, depth, text, line: g.first().map_or(0, |t| t.line), extent }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_skip_comments_and_count_lines() {
        let t = tokens("a /* x\n y */ b // c\n\"s\\\"t\" 1e-5f .5 'q'");
        let v: Vec<(&str, usize)> = t.iter().map(|t| (t.text, t.line)).collect();
        assert_eq!(v, vec![("a", 1), ("b", 2), ("\"s\\\"t\"", 3), ("1e-5f", 3), (".5", 3), ("'q'", 3)]);
        assert_eq!(t[3].kind, TokKind::Number);
    }

    #[test]
    fn definition_and_parameters() {
        let src = "static double h(double x) { return x; }\n\
                   inline void k(const double *restrict a,\n   double **b, int c[4], real_t *r, void *v) {\n  a = 0;\n}";
        let d = find_definition(src, "k").unwrap();
        assert_eq!(d.line, 2);
        let p: Vec<(Vec<String>, usize, usize)> = d.params.iter().map(|p| (p.base.clone(), p.depth, p.line)).collect();
        assert_eq!(
            p,
            vec![
                (vec!["double".to_string()], 1, 2),
                (vec!["double".to_string()], 2, 3),
                (vec!["int".to_string()], 1, 3),
                (vec!["real_t".to_string()], 1, 3),
                (vec!["void".to_string()], 1, 3),
            ]
        );
        assert_eq!(d.params[0].text, "const double *restrict a");
        assert_eq!(find_definition("void k(void) {}", "k").unwrap().params, vec![]);
        let d = find_definition(
            "void k(double x[4], const int y[ 2 ], double *z, double w[], double v[N], double u[2][3]) {}",
            "k",
        )
        .unwrap();
        let e: Vec<Option<usize>> = d.params.iter().map(|p| p.extent).collect();
        assert_eq!(e, vec![Some(4), Some(2), None, None, None, None]);
        // Calls and declarations are not definitions; nested occurrences are not at file scope.
        assert_eq!(find_definition("void k(int *a); void m(int *a) { k(a); }", "k"), None);
        let d = find_definition("void k(unsigned long long *a) {}", "k").unwrap();
        assert_eq!(d.params[0].base, vec!["unsigned", "long", "long"]);
    }

    #[test]
    fn non_utf8_bytes_become_escapes_or_question_marks() {
        let src = b"/* caf\xe9 */ void k(int *y) { y[0] = (unsigned char)\"\xe9\"[0]; } // \xff\n";
        let s = source_from_bytes(src).unwrap();
        assert_eq!(s, "/* caf? */ void k(int *y) { y[0] = (unsigned char)\"\\351\"[0]; } // ?\n");
        let e = source_from_bytes(b"void k(int *y) {\n y[0] = 1;\xe9 }").unwrap_err();
        assert!(e.contains("0xe9 on line 2"), "{e}");
        assert_eq!(source_from_bytes("é".as_bytes()).unwrap(), "é");
    }
}
