//! Per-loop timing and bandwidth accounting for `op_timing_output`.

use std::collections::HashMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// Statistics of one named loop.
#[derive(Debug, Clone, Default)]
pub struct LoopStats {
    pub name: String,
    pub calls: u64,
    /// Time in the compute phases (JIT and first-call preparation excluded).
    pub time: Duration,
    /// Time spent generating and compiling or loading code for this loop.
    pub jit_time: Duration,
    /// Bytes moved by all calls: direct data, indirect data once per distinct target, maps;
    /// data both read and written counts twice.
    pub bytes: u64,
    /// Which wrapper the loop's compiled code runs (`OP2_SIMD`), when it has been compiled.
    pub simd: Option<std::sync::Arc<crate::jit::simd_choice::SimdChooser>>,
    /// Under MPI: time in halo exchanges (begin and end), bytes and messages sent.
    pub halo_time: Duration,
    pub halo_bytes: u64,
    pub halo_messages: u64,
    /// A chain's row: its loops, tiles and levels (its loops keep rows of their own, with their
    /// calls and bytes; the time is the chain's).
    pub members: Option<String>,
}

/// Statistics of all loops, in order of first call.
#[derive(Debug, Default)]
pub struct Timings {
    loops: Vec<LoopStats>,
    index: HashMap<String, usize>,
}

impl Timings {
    pub fn entry(&mut self, name: &str) -> &mut LoopStats {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                self.loops.push(LoopStats { name: name.to_string(), ..Default::default() });
                self.index.insert(name.to_string(), self.loops.len() - 1);
                self.loops.len() - 1
            }
        };
        &mut self.loops[i]
    }

    pub fn loops(&self) -> &[LoopStats] {
        &self.loops
    }

    /// The table printed by `op_timing_output`. `stream_gbs` is the machine's measured
    /// stream bandwidth when known (`OP2_STREAM_GBS`).
    pub fn table(&self, backend: &str, stream_gbs: Option<f64>) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "op2 timing ({backend} backend)");
        let _ = write!(
            s,
            "  {:<24} {:>8} {:>12} {:>12} {:>10} {:>10}",
            "loop", "calls", "total (s)", "mean (ms)", "GB/s", "jit (s)"
        );
        if stream_gbs.is_some() {
            let _ = write!(s, " {:>8}", "%stream");
        }
        s.push('\n');
        let mut total = Duration::ZERO;
        for l in &self.loops {
            total += l.time;
            let secs = l.time.as_secs_f64();
            let mean_ms = if l.calls > 0 { 1e3 * secs / l.calls as f64 } else { 0.0 };
            let gbs = if secs > 0.0 { l.bytes as f64 / secs / 1e9 } else { 0.0 };
            let _ = write!(
                s,
                "  {:<24} {:>8} {:>12.6} {:>12.6} {:>10.3} {:>10.3}",
                l.name,
                l.calls,
                secs,
                mean_ms,
                gbs,
                l.jit_time.as_secs_f64()
            );
            if let Some(b) = stream_gbs {
                let _ = write!(s, " {:>7.1}%", 100.0 * gbs / b);
            }
            s.push('\n');
        }
        let _ = writeln!(s, "  {:<24} {:>8} {:>12.6}", "total", "", total.as_secs_f64());
        // Chains (lazy evaluation, op_loop_chain_begin/end) and what ran in them.
        if self.loops.iter().any(|l| l.members.is_some()) {
            let _ = writeln!(s, "op2 loop chains (time in the chain's row; its loops count calls and bytes)");
            for l in &self.loops {
                if let Some(m) = &l.members {
                    let _ = writeln!(s, "  {:<24} {m}", l.name);
                }
            }
        }
        // Which wrapper each loop runs (lines that the per-loop parsers of bench/ skip); host
        // backends only (device backends run their own code).
        let host = !matches!(backend, "opencl" | "cuda");
        if host && self.loops.iter().any(|l| l.simd.is_some()) {
            let _ = writeln!(s, "op2 vector wrappers (OP2_SIMD)");
            for l in &self.loops {
                if let Some(c) = &l.simd {
                    let _ = writeln!(s, "  simd: {}: {}", l.name, c.summary());
                }
            }
        }
        s
    }
}

/// OP2's profiling regions (`op_profile_start`, `_enter`, `_next`, `_exit`, `_end`): a tree
/// of named regions with their wall time. `start` opens a root region, `enter` a child of the
/// innermost open region (one node per name under a parent: entering it again adds a call),
/// `exit` closes the innermost one below the root, `next` is `exit` then `enter`, `end` closes
/// every open region. A call that does not fit (an `exit` with nothing entered, an `enter`
/// before `start`, ...) changes nothing and is answered with the reason, for the diagnostics.
#[derive(Debug, Default)]
pub struct Profile {
    regions: Vec<Region>,
    roots: Vec<usize>,
    /// The open regions, outermost first, with the instant each was entered.
    open: Vec<(usize, Instant)>,
}

/// One region of the tree and its accumulated times.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Region {
    pub name: String,
    pub children: Vec<usize>,
    pub calls: u64,
    pub total: Duration,
    pub min: Duration,
    pub max: Duration,
}

/// A region as reported: its depth in the tree (0 for a root), its times (a region still open
/// counts the time it has been open as one more call) and whether it is still open.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRow {
    pub depth: usize,
    pub name: String,
    pub calls: u64,
    pub total: Duration,
    pub min: Duration,
    pub max: Duration,
    pub open: bool,
}

impl Region {
    fn submit(&mut self, d: Duration) {
        self.min = if self.calls == 0 { d } else { self.min.min(d) };
        self.max = self.max.max(d);
        self.calls += 1;
        self.total += d;
    }
}

impl Profile {
    /// The child of `parent` (a root when None) called `name`, created when missing.
    fn child(&mut self, parent: Option<usize>, name: &str) -> usize {
        let list = match parent {
            Some(p) => &self.regions[p].children,
            None => &self.roots,
        };
        if let Some(&i) = list.iter().find(|&&i| self.regions[i].name == name) {
            return i;
        }
        self.regions.push(Region { name: name.to_string(), ..Default::default() });
        let i = self.regions.len() - 1;
        match parent {
            Some(p) => self.regions[p].children.push(i),
            None => self.roots.push(i),
        }
        i
    }

    fn name_of_open(&self, k: usize) -> &str {
        &self.regions[self.open[k].0].name
    }

    /// `op_profile_start`: opens the root region `name`.
    pub fn start(&mut self, name: &str, now: Instant) -> std::result::Result<(), String> {
        if let Some(&(r, _)) = self.open.first() {
            return Err(format!(
                "op_profile_start '{name}' while '{}' is open (call op_profile_end first): ignored",
                self.regions[r].name
            ));
        }
        let r = self.child(None, name);
        self.open.push((r, now));
        Ok(())
    }

    /// `op_profile_enter`: opens `name` inside the innermost open region.
    pub fn enter(&mut self, name: &str, now: Instant) -> std::result::Result<(), String> {
        let Some(&(parent, _)) = self.open.last() else {
            return Err(format!(
                "op_profile_enter '{name}' with no region open (call op_profile_start first): ignored"
            ));
        };
        let r = self.child(Some(parent), name);
        self.open.push((r, now));
        Ok(())
    }

    /// `op_profile_exit`: closes the innermost open region below the root.
    pub fn exit(&mut self, now: Instant) -> std::result::Result<(), String> {
        if self.open.len() < 2 {
            return Err(match self.open.first() {
                Some(_) => format!(
                    "op_profile_exit with no op_profile_enter open below '{}' (op_profile_end closes it): ignored",
                    self.name_of_open(0)
                ),
                None => "op_profile_exit with no region open: ignored".to_string(),
            });
        }
        if let Some((r, t)) = self.open.pop() {
            self.regions[r].submit(now.saturating_duration_since(t));
        }
        Ok(())
    }

    /// `op_profile_next`: `exit`, then `enter(name)` (also when there was nothing to exit, so
    /// that the program is in region `name` afterwards whenever a root is open).
    pub fn next(&mut self, name: &str, now: Instant) -> std::result::Result<(), String> {
        let closed = self.exit(now);
        let entered = self.enter(name, now);
        match (closed, entered) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Ok(())) => Err(format!("op_profile_next '{name}': {e}; '{name}' entered")),
            (_, Err(e)) => Err(format!("op_profile_next '{name}': {e}")),
        }
    }

    /// `op_profile_end`: closes every open region (innermost first, all at `now`).
    pub fn end(&mut self, now: Instant) -> std::result::Result<(), String> {
        if self.open.is_empty() {
            return Err("op_profile_end with no region open: ignored".to_string());
        }
        while let Some((r, t)) = self.open.pop() {
            self.regions[r].submit(now.saturating_duration_since(t));
        }
        Ok(())
    }

    /// Whether any region was ever opened.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The regions depth first (roots and children in the order first entered), with depths.
    fn walk(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::with_capacity(self.regions.len());
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((i, depth)) = stack.pop() {
            stack.extend(self.regions[i].children.iter().rev().map(|&c| (c, depth + 1)));
            out.push((i, depth));
        }
        out
    }

    /// The tree as rows, depth first; a region still open counts its time so far as a call.
    pub fn rows(&self, now: Instant) -> Vec<ProfileRow> {
        self.walk()
            .into_iter()
            .map(|(i, depth)| {
                let mut reg = self.regions[i].clone();
                let open = self.open.iter().find(|(r, _)| *r == i).map(|&(_, t)| now.saturating_duration_since(t));
                if let Some(d) = open {
                    reg.submit(d);
                }
                ProfileRow {
                    depth,
                    name: reg.name,
                    calls: reg.calls,
                    total: reg.total,
                    min: reg.min,
                    max: reg.max,
                    open: open.is_some(),
                }
            })
            .collect()
    }

    /// Rows from several processes (each in `rows` order) as one tree: regions matched by
    /// their path of names; calls, total and max the maximum over the processes, min the
    /// minimum; a region open on any process is open. Order: the first process's, then what
    /// only later ones have, each under its parent.
    pub fn merge(all: &[Vec<ProfileRow>]) -> Vec<ProfileRow> {
        let mut p = Profile::default();
        let mut merged: Vec<ProfileRow> = Vec::new();
        for rows in all {
            let mut path: Vec<usize> = Vec::new();
            for row in rows {
                path.truncate(row.depth);
                let i = p.child(path.last().copied(), &row.name);
                if i == merged.len() {
                    merged.push(ProfileRow { calls: 0, total: Duration::ZERO, max: Duration::ZERO, ..row.clone() });
                }
                let m = &mut merged[i];
                m.calls = m.calls.max(row.calls);
                m.total = m.total.max(row.total);
                m.min = m.min.min(row.min);
                m.max = m.max.max(row.max);
                m.open |= row.open;
                path.push(i);
            }
        }
        p.walk().into_iter().map(|(i, depth)| ProfileRow { depth, ..merged[i].clone() }).collect()
    }

    /// Rows as bytes, for the processes to send to process 0.
    pub fn encode(rows: &[ProfileRow]) -> Vec<u8> {
        let mut b = Vec::new();
        for r in rows {
            b.extend_from_slice(&(r.depth as u64).to_le_bytes());
            b.extend_from_slice(&(r.name.len() as u64).to_le_bytes());
            b.extend_from_slice(r.name.as_bytes());
            for v in [r.calls, r.total.as_nanos() as u64, r.min.as_nanos() as u64, r.max.as_nanos() as u64] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.push(r.open as u8);
        }
        b
    }

    /// The rows `encode` wrote (what is truncated or malformed is dropped).
    pub fn decode(mut b: &[u8]) -> Vec<ProfileRow> {
        fn u64_at(b: &mut &[u8]) -> Option<u64> {
            let (head, rest) = b.split_first_chunk::<8>()?;
            *b = rest;
            Some(u64::from_le_bytes(*head))
        }
        let mut out = Vec::new();
        let one = |b: &mut &[u8]| -> Option<ProfileRow> {
            let depth = u64_at(b)? as usize;
            let len = usize::try_from(u64_at(b)?).ok().filter(|&l| l <= b.len())?;
            let (name, rest) = b.split_at(len);
            *b = rest;
            let name = String::from_utf8_lossy(name).into_owned();
            let calls = u64_at(b)?;
            let [total, min, max] = [u64_at(b)?, u64_at(b)?, u64_at(b)?].map(Duration::from_nanos);
            let (&open, rest) = b.split_first()?;
            *b = rest;
            Some(ProfileRow { depth, name, calls, total, min, max, open: open != 0 })
        };
        while !b.is_empty() {
            match one(&mut b) {
                Some(r) => out.push(r),
                None => break,
            }
        }
        out
    }

    /// The tree as `op_profile_output` prints it: one line per region, indented by depth,
    /// with its calls, total, mean, min and max (seconds) and its share of its parent's total.
    pub fn table(rows: &[ProfileRow], processes: i32) -> String {
        let mut s = String::new();
        let over = if processes > 1 { format!("; the maximum over {processes} processes") } else { String::new() };
        let _ = writeln!(s, "op2 profile (wall time in seconds{over})");
        let label =
            |r: &ProfileRow| format!("{}{}{}", "  ".repeat(r.depth), r.name, if r.open { " (open)" } else { "" });
        let width = rows.iter().map(|r| label(r).chars().count()).max().unwrap_or(0).max(24);
        let _ = writeln!(
            s,
            "  {:<width$} {:>8} {:>12} {:>12} {:>12} {:>12} {:>8}",
            "region", "calls", "total", "mean", "min", "max", "%parent"
        );
        let mut parents: Vec<Duration> = Vec::new();
        for r in rows {
            parents.truncate(r.depth);
            let share = match parents.last() {
                Some(p) if !p.is_zero() => format!("{:.1}", 100.0 * r.total.as_secs_f64() / p.as_secs_f64()),
                _ => "-".to_string(),
            };
            let mean = if r.calls > 0 { r.total.as_secs_f64() / r.calls as f64 } else { 0.0 };
            let _ = writeln!(
                s,
                "  {:<width$} {:>8} {:>12.6} {:>12.6} {:>12.6} {:>12.6} {:>8}",
                label(r),
                r.calls,
                r.total.as_secs_f64(),
                mean,
                r.min.as_secs_f64(),
                r.max.as_secs_f64(),
                share
            );
            parents.push(r.total);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nesting, sibling order, repeated entries, next, the root closed by end, and every
    /// unbalanced call refused without changing anything.
    #[test]
    fn profile_tree() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut p = Profile::default();
        assert!(p.enter("early", at(0)).is_err());
        assert!(p.exit(at(0)).is_err());
        assert!(p.end(at(0)).is_err());
        p.start("app", at(0)).unwrap();
        assert!(p.start("again", at(1)).unwrap_err().contains("while 'app' is open"));
        assert!(p.exit(at(1)).unwrap_err().contains("below 'app'"));
        p.enter("setup", at(1)).unwrap();
        p.exit(at(3)).unwrap();
        for i in 0..3 {
            p.enter("step", at(10 + 10 * i)).unwrap();
            p.enter("inner", at(11 + 10 * i)).unwrap();
            p.next("other", at(12 + 10 * i + i)).unwrap();
            p.exit(at(15 + 10 * i)).unwrap();
            p.exit(at(16 + 10 * i)).unwrap();
        }
        p.enter("left_open", at(50)).unwrap();
        let rows = p.rows(at(60));
        let names: Vec<(usize, &str, bool)> = rows.iter().map(|r| (r.depth, r.name.as_str(), r.open)).collect();
        assert_eq!(
            names,
            [
                (0, "app", true),
                (1, "setup", false),
                (1, "step", false),
                (2, "inner", false),
                (2, "other", false),
                (1, "left_open", true)
            ]
        );
        let inner = &rows[3];
        assert_eq!((inner.calls, inner.total), (3, Duration::from_millis(1 + 2 + 3)));
        assert_eq!((inner.min, inner.max), (Duration::from_millis(1), Duration::from_millis(3)));
        assert_eq!(rows[2].total, Duration::from_millis(18));
        p.end(at(70)).unwrap();
        let rows = p.rows(at(80));
        assert!(rows.iter().all(|r| !r.open));
        assert_eq!(rows[0].total, Duration::from_millis(70));
        assert_eq!(rows[5].total, Duration::from_millis(20));
        // a second start after end: the same root gets a second call
        p.start("app", at(100)).unwrap();
        p.end(at(101)).unwrap();
        assert_eq!(p.rows(at(102))[0].calls, 2);
        assert_eq!(Profile::decode(&Profile::encode(&rows)), rows);
        let table = Profile::table(&rows, 1);
        let a = table.find("\n  app ").unwrap();
        let s = table.find("\n      inner ").unwrap();
        assert!(a < s, "{table}");
    }

    /// Processes' trees merged by path: the maximum time, the union of regions.
    #[test]
    fn profile_merge() {
        let row = |depth, name: &str, ms| ProfileRow {
            depth,
            name: name.into(),
            calls: 1,
            total: Duration::from_millis(ms),
            min: Duration::from_millis(ms),
            max: Duration::from_millis(ms),
            open: false,
        };
        let p0 = vec![row(0, "app", 10), row(1, "a", 4)];
        let p1 = vec![row(0, "app", 12), row(1, "b", 5), row(1, "a", 3)];
        let m = Profile::merge(&[p0, p1]);
        let got: Vec<(usize, &str, u128)> = m.iter().map(|r| (r.depth, r.name.as_str(), r.total.as_millis())).collect();
        assert_eq!(got, [(0, "app", 12), (1, "a", 4), (1, "b", 5)]);
        assert_eq!(m[1].min, Duration::from_millis(3));
    }

    #[test]
    fn table_lists_loops_in_first_call_order() {
        let mut t = Timings::default();
        let e = t.entry("b");
        e.calls = 2;
        e.time = Duration::from_millis(500);
        e.bytes = 1_000_000_000;
        t.entry("a").calls = 1;
        let s = t.table("seq", Some(4.0));
        let b = s.find("  b ").unwrap();
        let a = s.find("  a ").unwrap();
        assert!(b < a);
        // 1 GB in 0.5 s = 2 GB/s = 50% of 4 GB/s.
        assert!(s.contains("2.000"), "{s}");
        assert!(s.contains("50.0%"), "{s}");
    }
}
