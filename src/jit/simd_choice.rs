//! Which wrapper of a loop runs, scalar or vectorised (`OP2_SIMD`): `on` forces the
//! vectorised one; `auto` times both on the first calls of the loop's compiled code
//! (alternating, `TRIALS_EACH` calls each over ranges of at least `MIN_TRIAL_ELEMS` elements)
//! and keeps the faster per element for the rest of the run. The state lives with the loaded
//! library, so every loop call (and every thread's block) of one shape shares it; the timer is
//! the caller's (`record`), so the choice is a pure function of the times given to it.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Timed calls of each wrapper before `auto` decides.
pub const TRIALS_EACH: u32 = 3;
/// Ranges shorter than this are not timed (too short to measure; they run scalar until the
/// choice is made).
pub const MIN_TRIAL_ELEMS: usize = 256;

/// A wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Scalar = 0,
    Simd = 1,
}

/// What to run for one range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Run this wrapper.
    Run(Variant),
    /// Run this wrapper, time it and `record` the time.
    Time(Variant),
}

const UNDECIDED: u8 = 0;

/// The choice for one compiled loop.
#[derive(Debug)]
pub struct SimdChooser {
    /// Why the kernel has no vectorised wrapper (then everything runs scalar).
    pub refused: Option<String>,
    available: bool,
    forced: bool,
    trials: AtomicU32,
    /// Best time per element of each variant in picoseconds (u64::MAX: none yet).
    best: [AtomicU64; 2],
    /// UNDECIDED, or 1 + the variant.
    verdict: AtomicU8,
    /// Whether the verdict came from the disk cache (a run before this one measured it).
    from_cache: std::sync::atomic::AtomicBool,
    /// Called once with the verdict when `auto` makes it (to keep it with the compiled code).
    sink: std::sync::Mutex<Sink>,
}

/// Where a verdict goes once made.
pub type VerdictSink = Box<dyn FnOnce(Variant) + Send>;

/// A verdict sink slot (opaque in `Debug`).
#[derive(Default)]
struct Sink(Option<VerdictSink>);

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Sink(set)" } else { "Sink(none)" })
    }
}

impl SimdChooser {
    /// `available`: the library has a vectorised wrapper; `forced`: `OP2_SIMD=on`.
    pub fn new(available: bool, forced: bool, refused: Option<String>) -> SimdChooser {
        SimdChooser {
            refused,
            available,
            forced,
            trials: AtomicU32::new(0),
            best: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
            verdict: AtomicU8::new(UNDECIDED),
            from_cache: std::sync::atomic::AtomicBool::new(false),
            sink: std::sync::Mutex::new(Sink::default()),
        }
    }

    /// Whether `auto` decides for this loop (a vector wrapper exists and is not forced).
    pub fn is_auto(&self) -> bool {
        self.available && !self.forced
    }

    /// Takes the verdict an earlier run measured (kept with the compiled code).
    pub fn remember(&self, v: Variant) {
        if self.is_auto()
            && self.verdict.compare_exchange(UNDECIDED, 1 + v as u8, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            self.from_cache.store(true, Ordering::Relaxed);
        }
    }

    /// Sets what is done with the verdict once `auto` makes it.
    pub fn on_decided(&self, sink: VerdictSink) {
        self.sink.lock().unwrap_or_else(|p| p.into_inner()).0 = Some(sink);
    }

    /// The wrapper to run for a range of `n` elements.
    pub fn pick(&self, n: usize) -> Pick {
        if !self.available {
            return Pick::Run(Variant::Scalar);
        }
        if self.forced {
            return Pick::Run(Variant::Simd);
        }
        if let Some(v) = self.verdict() {
            return Pick::Run(v);
        }
        if n < MIN_TRIAL_ELEMS {
            return Pick::Run(Variant::Scalar);
        }
        let t = self.trials.fetch_add(1, Ordering::Relaxed);
        if t < 2 * TRIALS_EACH {
            return Pick::Time(if t % 2 == 0 { Variant::Scalar } else { Variant::Simd });
        }
        Pick::Run(self.decide())
    }

    /// Records a timed run of `v` over `n` elements that took `ns` nanoseconds.
    pub fn record(&self, v: Variant, n: usize, ns: u64) {
        let per = ns.saturating_mul(1000) / (n.max(1) as u64);
        self.best[v as usize].fetch_min(per, Ordering::Relaxed);
    }

    /// Makes the choice from the times recorded so far (the faster per element; scalar on a
    /// tie or when a variant has no time) and returns it.
    fn decide(&self) -> Variant {
        let s = self.best[0].load(Ordering::Relaxed);
        let v = self.best[1].load(Ordering::Relaxed);
        let pick = if v < s { Variant::Simd } else { Variant::Scalar };
        if self.verdict.compare_exchange(UNDECIDED, 1 + pick as u8, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            if let Some(sink) = self.sink.lock().unwrap_or_else(|p| p.into_inner()).0.take() {
                sink(pick);
            }
        }
        self.verdict().unwrap_or(pick)
    }

    /// The choice, once made.
    pub fn verdict(&self) -> Option<Variant> {
        match self.verdict.load(Ordering::Relaxed) {
            1 => Some(Variant::Scalar),
            2 => Some(Variant::Simd),
            _ => None,
        }
    }

    /// One line for `op_timing_output`: what runs and why.
    pub fn summary(&self) -> String {
        let ns = |v: u64| if v == u64::MAX { "-".to_string() } else { format!("{:.3}", v as f64 / 1000.0) };
        if let Some(r) = &self.refused {
            return format!("scalar (not vectorised: {r})");
        }
        if !self.available {
            return "scalar (OP2_SIMD=off)".to_string();
        }
        if self.forced {
            return "simd (OP2_SIMD=on)".to_string();
        }
        let times = format!(
            "scalar {} ns/element, simd {} ns/element",
            ns(self.best[0].load(Ordering::Relaxed)),
            ns(self.best[1].load(Ordering::Relaxed))
        );
        if self.from_cache.load(Ordering::Relaxed) {
            let v = if self.verdict() == Some(Variant::Simd) { "simd" } else { "scalar" };
            return format!("{v} (auto, measured by an earlier run: kept with the compiled code)");
        }
        match self.verdict() {
            Some(Variant::Simd) => format!("simd (auto: {times})"),
            Some(Variant::Scalar) => format!("scalar (auto: {times})"),
            None => format!("scalar (auto, not decided yet: {times})"),
        }
    }
}

/// Runs `lib`'s wrapper over `[start, end)` as its chooser says (timing it during `auto`'s
/// trials).
///
/// # Safety
/// As `LoopCall::run_range`: `slots` holds valid pointers for every argument of the loop and
/// the range lies inside the iteration set.
pub unsafe fn run(lib: &super::HostLibrary, start: usize, end: usize, slots: *const *mut std::ffi::c_void) {
    let f = match lib.simd_fn {
        Some(simd) => [lib.loop_fn, simd],
        None => [lib.loop_fn; 2],
    };
    picked(lib, end - start, |v| f[v as usize](start as i32, end as i32, slots));
}

/// Runs `lib`'s list wrappers over the elements `list[start..end)` as its chooser says (as
/// `run`): `scalar` is its `op2_loop_list` (`HostLibrary::list_fn`, which the caller has
/// checked for), the vectorised one `HostLibrary::simd_list_fn` where it has one.
///
/// # Safety
/// As `run`, and every entry of `list[start..end)` is an element of the iteration set.
pub unsafe fn run_list(
    lib: &super::HostLibrary,
    scalar: super::ListFn,
    (start, end): (usize, usize),
    list: *const i32,
    slots: *const *mut std::ffi::c_void,
) {
    let f = [scalar, lib.simd_list_fn.unwrap_or(scalar)];
    picked(lib, end - start, |v| f[v as usize](start as i32, end as i32, list, slots));
}

/// Runs `call` with the variant `lib`'s chooser picks for `n` elements, timing it and
/// recording the time during `auto`'s trials.
fn picked(lib: &super::HostLibrary, n: usize, call: impl FnOnce(Variant)) {
    match lib.simd.pick(n) {
        Pick::Run(v) => call(v),
        Pick::Time(v) => {
            let t = std::time::Instant::now();
            call(v);
            lib.simd.record(v, n, t.elapsed().as_nanos() as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives the chooser with given times per call (ns per element for scalar, simd).
    fn run(c: &SimdChooser, n: usize, scalar_ns: u64, simd_ns: u64) -> Vec<Pick> {
        (0..10)
            .map(|_| {
                let p = c.pick(n);
                if let Pick::Time(v) = p {
                    let per = if v == Variant::Scalar { scalar_ns } else { simd_ns };
                    c.record(v, n, per * n as u64);
                }
                p
            })
            .collect()
    }

    #[test]
    fn auto_alternates_then_keeps_the_faster() {
        use Pick::*;
        use Variant::*;
        let c = SimdChooser::new(true, false, None);
        let picks = run(&c, 1000, 3, 2);
        assert_eq!(
            picks,
            vec![
                Time(Scalar),
                Time(Simd),
                Time(Scalar),
                Time(Simd),
                Time(Scalar),
                Time(Simd),
                Run(Simd),
                Run(Simd),
                Run(Simd),
                Run(Simd)
            ]
        );
        assert_eq!(c.verdict(), Some(Simd));
        assert_eq!(c.summary(), "simd (auto: scalar 3.000 ns/element, simd 2.000 ns/element)");
        let c = SimdChooser::new(true, false, None);
        assert_eq!(run(&c, 1000, 2, 3)[6..], [Run(Scalar); 4]);
        assert_eq!(c.summary(), "scalar (auto: scalar 2.000 ns/element, simd 3.000 ns/element)");
        // A tie keeps scalar; the best of the trials counts, not the first.
        let c = SimdChooser::new(true, false, None);
        run(&c, 1000, 2, 2);
        assert_eq!(c.verdict(), Some(Scalar));
        let c = SimdChooser::new(true, false, None);
        c.record(Simd, 100, 100_000);
        c.record(Simd, 100, 100);
        c.record(Scalar, 100, 200);
        for _ in 0..2 * TRIALS_EACH {
            c.pick(1000);
        }
        assert_eq!(c.pick(1000), Run(Simd));
    }

    #[test]
    fn small_ranges_forced_off_and_refused() {
        use Pick::*;
        use Variant::*;
        let c = SimdChooser::new(true, false, None);
        assert_eq!(run(&c, MIN_TRIAL_ELEMS - 1, 1, 1), vec![Run(Scalar); 10]);
        assert_eq!(c.verdict(), None);
        assert!(c.summary().starts_with("scalar (auto, not decided yet: scalar - ns/element"));
        let c = SimdChooser::new(true, true, None);
        assert_eq!(run(&c, 5, 1, 1), vec![Run(Simd); 10]);
        assert_eq!(c.summary(), "simd (OP2_SIMD=on)");
        let c = SimdChooser::new(false, false, Some("arg 1 is an optional dat".into()));
        assert_eq!(run(&c, 5000, 9, 1), vec![Run(Scalar); 10]);
        assert_eq!(c.summary(), "scalar (not vectorised: arg 1 is an optional dat)");
        assert_eq!(SimdChooser::new(false, false, None).summary(), "scalar (OP2_SIMD=off)");
    }
}
