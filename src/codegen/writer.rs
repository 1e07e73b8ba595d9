//! A small indenting writer, so emitters produce readable code without string soup.

/// Text that is safe inside a C block comment on one line: no `*/`, no control characters.
pub fn comment_text(s: &str) -> String {
    s.replace("*/", "* /").chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

#[derive(Default)]
pub struct CodeWriter {
    out: String,
    indent: usize,
}

impl CodeWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// One line at the current indentation (an empty `s` gives an empty line).
    pub fn line(&mut self, s: impl AsRef<str>) -> &mut Self {
        let s = s.as_ref();
        if !s.is_empty() {
            for _ in 0..self.indent {
                self.out.push_str("  ");
            }
            self.out.push_str(s);
        }
        self.out.push('\n');
        self
    }

    /// Opens a block: writes `head {` and indents.
    pub fn open(&mut self, head: impl AsRef<str>) -> &mut Self {
        let h = head.as_ref();
        if h.is_empty() {
            self.line("{");
        } else {
            self.line(format!("{h} {{"));
        }
        self.indent += 1;
        self
    }

    /// Closes a block opened by `open`.
    pub fn close(&mut self) -> &mut Self {
        self.indent = self.indent.saturating_sub(1);
        self.line("}")
    }

    /// Raw text, verbatim (used for the user's kernel); a final newline is ensured.
    pub fn raw(&mut self, s: &str) -> &mut Self {
        self.out.push_str(s);
        if !s.ends_with('\n') {
            self.out.push('\n');
        }
        self
    }

    /// A call statement `name(args...);`, one argument per line.
    pub fn call(&mut self, name: &str, args: &[String]) -> &mut Self {
        if args.is_empty() {
            return self.line(format!("{name}();"));
        }
        self.line(format!("{name}("));
        let n = args.len();
        for (k, a) in args.iter().enumerate() {
            self.line(format!("    {a}{}", if k + 1 < n { "," } else { ");" }));
        }
        self
    }

    /// The number of the next line to be written (1-based), for `#line` directives.
    pub fn next_line_number(&self) -> usize {
        self.out.bytes().filter(|&b| b == b'\n').count() + 1
    }

    pub fn finish(self) -> String {
        self.out
    }
}

impl std::fmt::Write for CodeWriter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let _ = self.out.write_str(s);
        Ok(())
    }
}
