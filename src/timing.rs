//! Per-loop timing and bandwidth accounting for `op_timing_output`.

use std::collections::HashMap;
use std::fmt::Write;
use std::time::Duration;

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

/// Prints `text` to stdout after flushing C's stdio buffers, so it lands after what the C
/// program printed before (diagnostics interleave with the program's own output as it expects).
pub fn print_after_c_stdio(text: &str) {
    use std::io::Write;
    // SAFETY: fflush(NULL) flushes all C output streams; no preconditions.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

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
