//! What the device backends (opencl, cuda) share around a launch: the checks a loop must pass,
//! the element colouring of a range as element lists, and the list of kernel arguments the
//! generated code takes (`backend::device::codegen`'s ABI), which each backend maps to its buffers.

pub mod codegen;

use super::LoopCall;
use crate::arg::{Access, ArgDesc, BoundArg, DatAccess};
use crate::codegen::LoopSignature;
use crate::core::{DatId, MapId};
use crate::error::{ErrorCode, Op2Error, Result};
use crate::op2_bail;
use crate::plan::{PlanCache, PlanRequest};

/// The loop's signature, if the loop can run on the device backend `backend`.
pub fn check_loop<'c, 'a>(call: &'c LoopCall<'a>, backend: &str) -> Result<&'c LoopSignature<'a>> {
    check_loop_with(call, backend, false, false)
}

/// `check_loop`, for a backend that takes `op_arg_idx` on a set reordered by `op_renumber`
/// (`idx_tables`: it translates indices through `idx_table`) or not, and stages large
/// arguments in global memory (`scratch`: `backend::device::codegen::in_scratch`) or not.
pub fn check_loop_with<'c, 'a>(
    call: &'c LoopCall<'a>,
    backend: &str,
    idx_tables: bool,
    scratch: bool,
) -> Result<&'c LoopSignature<'a>> {
    let Some(sig) = call.sig.as_ref() else {
        op2_bail!(Internal, "op_par_loop '{}': no loop signature for the {backend} backend", call.name);
    };
    for (i, d) in call.descs.iter().enumerate() {
        if !idx_tables && matches!(d, ArgDesc::Idx { .. }) && !call.slots[2 * i].is_null() {
            op2_bail!(
                BadLoop,
                "op_par_loop '{}', arg {i}: op_arg_idx on a set reordered by op_renumber is not supported by the {backend} backend",
                call.name
            );
        }
    }
    if let Some(why) = crate::backend::device::codegen::unsupported_with(call.descs, backend, scratch) {
        op2_bail!(BadLoop, "op_par_loop '{}': {why}", call.name);
    }
    Ok(sig)
}

/// The kernel sources of a fused unit's parts with their quoted includes expanded
/// (`backend::device::codegen::expand_includes`), in order.
pub fn expand_parts(call: &LoopCall, dirs: &[std::path::PathBuf]) -> Result<Vec<String>> {
    call.parts
        .iter()
        .map(|p| {
            crate::backend::device::codegen::expand_includes(p.kernel_source, dirs, p.kernel_origin)
                .map_err(|e| Op2Error::new(ErrorCode::Compile, format!("op_par_loop '{}': {e}", p.loop_name)))
        })
        .collect()
}

/// After fork() the child has no runtime threads of the device's driver: any call could hang.
pub fn check_process(generation: u64, call: &str, backend: &str) -> Result<()> {
    if super::host::threads::fork_generation() != generation {
        op2_bail!(
            Device,
            "{call}: {backend}: this process was forked after op_init, and the device runtime does not survive fork(); call op_exit() and op_init() in the child, or fork before op_init"
        );
    }
    Ok(())
}

fn plan_request<'a>(
    call: &LoopCall<'a>,
    args: &'a [crate::plan::IndirectArg<'a>],
    start: usize,
    end: usize,
    part_size: usize,
) -> PlanRequest<'a> {
    PlanRequest { set: call.set.0 as u64, set_size: call.set_size, start, end, part_size, staging: false, args }
}

/// The key of the colouring of `[start, end)` by the loop's indirect increments, in blocks of
/// `part_size` elements (1: an element colouring).
pub fn colouring_key(call: &LoopCall, start: usize, end: usize, part_size: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    let args = call.plan_args();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    plan_request(call, &args, start, end, part_size).key().hash(&mut h);
    h.finish()
}

/// The plan of `[start, end)` in blocks of `part_size` (built once, then from `plans`).
fn plan_of(
    plans: &mut PlanCache,
    call: &LoopCall,
    start: usize,
    end: usize,
    part_size: usize,
) -> Result<std::sync::Arc<crate::plan::Plan>> {
    let args = call.plan_args();
    let req = plan_request(call, &args, start, end, part_size);
    plans.get_or_build(&req).map_err(|e| {
        let code = if e.is_out_of_memory() { ErrorCode::OutOfMemory } else { ErrorCode::Internal };
        Op2Error::new(code, format!("op_par_loop '{}': colouring: {e}", call.name))
    })
}

/// A plan packed for a launch with its blocks' indirect data staged in shared memory
/// (`codegen::generate_staged`): `nb`, `start`, the plan's length `ntot`, its `loc_map` columns,
/// `blkmap`, `offset`, `nelems`, `nthrcol`, `thrcol`, then per (block, pair) the start and length
/// of the block's targets in `ind_map`, per loop argument its `loc_map` column (-1: not staged),
/// `loc_map` and `ind_map`; the (first entry of `blkmap`, blocks) of each block colour; the
/// pattern of pairs the code is generated for; and the largest block's staging bytes.
pub struct StagedPlan {
    pub packed: Vec<i32>,
    pub ranges: Vec<(usize, usize)>,
    pub pattern: crate::backend::device::codegen::StagePattern,
    pub bytes: usize,
}

/// The staged form of the plan of `[start, end)` in blocks of `part_size`, or None when the
/// loop cannot be staged (`codegen::stageable`, or arguments of one (dat, map) pair that differ).
pub fn staged_plan(
    plans: &mut PlanCache,
    call: &LoopCall,
    start: usize,
    end: usize,
    part_size: usize,
) -> Result<Option<StagedPlan>> {
    if !crate::backend::device::codegen::stageable(call.descs) {
        return Ok(None);
    }
    let indirect_args =
        call.descs.iter().filter(|a| matches!(a, ArgDesc::Dat { how: DatAccess::Indirect { .. }, .. })).count();
    if call.indirect.len() != indirect_args {
        return Ok(None);
    }
    let args = call.plan_args();
    let req = PlanRequest { staging: true, ..plan_request(call, &args, start, end, part_size) };
    let plan = plans.get_or_build(&req).map_err(|e| {
        let code = if e.is_out_of_memory() { ErrorCode::OutOfMemory } else { ErrorCode::Internal };
        Op2Error::new(code, format!("op_par_loop '{}': staging plan: {e}", call.name))
    })?;
    let loop_arg_of: Vec<usize> = call.indirect.iter().map(|a| a.arg).collect();
    Ok(pack_staged(&plan, call.descs, &loop_arg_of, start))
}

/// `staged_plan`'s packing of a plan built with staging for a loop of arguments `descs`, whose
/// plan argument `a` (indirect argument) is loop argument `loop_arg_of[a]`; None when the loop
/// cannot be staged.
pub fn pack_staged(
    plan: &crate::plan::Plan,
    descs: &[ArgDesc],
    loop_arg_of: &[usize],
    start: usize,
) -> Option<StagedPlan> {
    if !plan.staged || loop_arg_of.len() != plan.pair_of_arg.len() {
        return None;
    }
    let mut pairs = vec![None; descs.len()];
    let mut loc = vec![-1i32; descs.len()];
    for (a, &arg) in loop_arg_of.iter().enumerate() {
        *pairs.get_mut(arg)? = Some(plan.pair_of_arg[a]);
        loc[arg] = plan.loc_col[plan.arg_col_start[a]] as i32;
    }
    let pattern = crate::backend::device::codegen::stage_pattern(descs, &pairs)?;
    let nb = plan.nelems.len();
    let mut packed: Vec<i32> = Vec::new();
    packed.extend([nb as i32, start as i32, plan.thrcol.len() as i32, plan.nloc_cols as i32]);
    for a in [&plan.blkmap, &plan.offset, &plan.nelems, &plan.nthrcol, &plan.thrcol, &plan.ind_offs, &plan.ind_sizes] {
        packed.extend_from_slice(a);
    }
    packed.extend_from_slice(&loc);
    packed.extend_from_slice(&plan.loc_map);
    packed.extend_from_slice(&plan.ind_map);
    let ranges = (0..plan.ncolours).map(|c| (plan.colour_offsets[c], plan.ncolblk[c] as usize)).collect();
    Some(StagedPlan { packed, ranges, pattern, bytes: plan.max_staging_bytes })
}

/// A colouring's launch list and its (offset, count) per colour.
pub type LaunchLists = (Vec<i32>, Vec<(usize, usize)>);

/// The plan of `[start, end)` in blocks of `part_size`, packed as a two-level colouring kernel
/// takes it (`backend::device::codegen`'s ABI: `nb`, `start`, `blkmap`, `offset`, `nelems`, `nthrcol`,
/// `thrcol`), with (first entry of `blkmap`, number of blocks) per block colour. Its key is
/// `colouring_key` with the same `part_size`.
pub fn packed_plan(
    plans: &mut PlanCache,
    call: &LoopCall,
    start: usize,
    end: usize,
    part_size: usize,
) -> Result<LaunchLists> {
    let plan = plan_of(plans, call, start, end, part_size)?;
    let nb = plan.nelems.len();
    let mut packed: Vec<i32> = Vec::with_capacity(2 + 4 * nb + plan.thrcol.len());
    packed.push(nb as i32);
    packed.push(start as i32);
    for a in [&plan.blkmap, &plan.offset, &plan.nelems, &plan.nthrcol, &plan.thrcol] {
        packed.extend_from_slice(a);
    }
    let ranges = (0..plan.ncolours).map(|c| (plan.colour_offsets[c], plan.ncolblk[c] as usize)).collect();
    Ok((packed, ranges))
}

/// The launch lists of a colouring of `[start, end)`, colour by colour, and (offset, count) per
/// colour in that list: with `part_size` 1 (the plan with one element per block) the elements;
/// otherwise (first element, count) pairs of the blocks (offsets and counts in pairs).
pub fn element_lists(
    plans: &mut PlanCache,
    call: &LoopCall,
    start: usize,
    end: usize,
    part_size: usize,
) -> Result<LaunchLists> {
    let plan = plan_of(plans, call, start, end, part_size)?;
    let mut elems: Vec<i32> = Vec::with_capacity(if part_size == 1 { end - start } else { 2 * plan.nblocks });
    let mut ranges = Vec::with_capacity(plan.ncolours);
    for c in 0..plan.ncolours {
        if part_size == 1 {
            let from = elems.len();
            elems.extend(plan.colour_blocks(c).iter().map(|&b| (start + b as usize) as i32));
            ranges.push((from, elems.len() - from));
        } else {
            let from = elems.len() / 2;
            for &b in plan.colour_blocks(c) {
                elems.push(plan.offset[b as usize]);
                elems.push(plan.nelems[b as usize]);
            }
            ranges.push((from, elems.len() / 2 - from));
        }
    }
    Ok((elems, ranges))
}

/// One kernel argument after the fixed ones (start, count, element list, partials).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelArg {
    /// A dat's device buffer (None: a disabled optional argument; any buffer will do).
    Dat(Option<DatId>),
    /// The rows of a dat in the structure-of-arrays layout (an `int`).
    Rows(Option<DatId>),
    /// A map's device buffer (None: none; any buffer will do).
    Map(Option<MapId>),
    /// A map's transposed device copy (`codegen::soa_map`), then its rows (an `int`), for a
    /// map of `dim` columns (None: none; any buffer will do, and 0 rows).
    MapT(Option<MapId>, usize),
    MapRows(Option<MapId>, usize),
    /// An `int` flag (an optional argument's `op2_on`).
    Flag(i32),
    /// The device copy of READ global argument `i`.
    Global(usize),
    /// The values of the matrix of argument `i` (`op_arg_mat`), then its slot table.
    MatValues(usize),
    MatSlots(usize),
}

/// The kernel arguments after the fixed ones, in the generated code's order.
pub fn kernel_args(call: &LoopCall, soa: bool) -> Result<Vec<KernelArg>> {
    Ok(kernel_arg_owners(call, soa)?.into_iter().map(|(_, a)| a).collect())
}

/// `kernel_args`, each with the position of the loop argument it belongs to.
pub fn kernel_arg_owners(call: &LoopCall, soa: bool) -> Result<Vec<(usize, KernelArg)>> {
    let mut out = Vec::new();
    let map_of = |i: usize| call.maps[i].as_ref().map(|(m, _)| *m);
    for (i, d) in call.descs.iter().enumerate() {
        match *d {
            ArgDesc::Dat { how, optional, .. } => {
                let BoundArg::Dat { dat, enabled, .. } = call.bound[i] else {
                    op2_bail!(Internal, "op_par_loop '{}': arg {i} is not bound to a dat", call.name);
                };
                let dat = enabled.then_some(dat);
                out.push((i, KernelArg::Dat(dat)));
                if crate::backend::device::codegen::soa_arg(d, soa) {
                    out.push((i, KernelArg::Rows(dat)));
                }
                if crate::backend::device::codegen::soa_map(d, soa) {
                    let dim = match how {
                        DatAccess::Indirect { map_dim, .. } | DatAccess::Vector { map_dim } => map_dim,
                        DatAccess::Direct => 1,
                    };
                    out.push((i, KernelArg::MapT(map_of(i), dim)));
                    out.push((i, KernelArg::MapRows(map_of(i), dim)));
                } else if how != DatAccess::Direct {
                    out.push((i, KernelArg::Map(map_of(i))));
                }
                if optional {
                    out.push((i, KernelArg::Flag(enabled as i32)));
                }
            }
            ArgDesc::Gbl { acc: Access::Read, .. } => out.push((i, KernelArg::Global(i))),
            ArgDesc::Idx { map_dim: Some(_), .. } => match map_of(i) {
                Some(m) => out.push((i, KernelArg::Map(Some(m)))),
                None => op2_bail!(Internal, "op_par_loop '{}': arg {i}: no map", call.name),
            },
            ArgDesc::Mat { .. } => {
                out.push((i, KernelArg::MatValues(i)));
                out.push((i, KernelArg::MatSlots(i)));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The storage-to-declared index table of an `op_arg_idx` argument after `op_renumber` (the
/// target set's order, as the host backends get it), or None.
pub fn idx_table(call: &LoopCall, arg: usize) -> Option<*const i32> {
    match call.descs.get(arg) {
        Some(ArgDesc::Idx { .. }) if !call.slots[2 * arg].is_null() => Some(call.slots[2 * arg] as *const i32),
        _ => None,
    }
}

/// The READ globals of a call, as (argument position, the caller's bytes).
pub fn read_globals<'c>(call: &'c LoopCall) -> Vec<(usize, &'c [u8])> {
    call.descs
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match *d {
            ArgDesc::Gbl { ty, dim, acc: Access::Read } => {
                // SAFETY: the slot holds the caller's global of `dim` values (op_arg_gbl).
                let host = unsafe { std::slice::from_raw_parts(call.slots[2 * i] as *const u8, dim * ty.size()) };
                Some((i, host))
            }
            _ => None,
        })
        .collect()
}

/// A small device buffer that `SmallWrites` tracks: a READ global by argument position, or the
/// reduction partials' seed row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmallBuf {
    Global(usize),
    Seed,
}

/// What was last written to each small device buffer. A write from host memory waits for every
/// launch queued before it (loops without results return once launched), so a loop whose READ
/// globals and reduction seeds are what the buffers already hold writes nothing: Airfoil's
/// `update` then launches behind `res_calc` without waiting for it.
#[derive(Default)]
pub struct SmallWrites {
    last: std::collections::HashMap<SmallBuf, Vec<u8>>,
    /// Writes made so far (`Backend::small_writes`); the ones left out are not counted.
    pub count: u64,
}

impl SmallWrites {
    /// Whether the buffer already holds `bytes`; `fresh`: it was just (re)allocated.
    pub fn holds(&self, buf: SmallBuf, bytes: &[u8], fresh: bool) -> bool {
        !fresh && self.last.get(&buf).is_some_and(|b| b.as_slice() == bytes)
    }

    /// Records a write of `bytes` that succeeded.
    pub fn wrote(&mut self, buf: SmallBuf, bytes: &[u8]) {
        let last = self.last.entry(buf).or_default();
        last.clear();
        last.extend_from_slice(bytes);
        self.count += 1;
    }

    /// Forgets a buffer whose write failed or that was freed.
    pub fn forget(&mut self, buf: SmallBuf) {
        self.last.remove(&buf);
    }
}

/// `OP2_DEVICE_PROFILE=1`: per loop, the kernels' time by the device's own clock against the
/// loop's whole time in the backend (staging, launches, waiting, reading results back), so a
/// slow loop shows whether its kernels or everything around them take the time.
#[derive(Default)]
pub struct DeviceProfile {
    rows: Vec<ProfileRow>,
    index: std::collections::HashMap<String, usize>,
}

struct ProfileRow {
    name: String,
    calls: u64,
    launches: u64,
    kernel_ns: u64,
    backend: std::time::Duration,
}

impl DeviceProfile {
    /// Adds one call of loop `name`: its launches, their kernels' summed time, its time in the backend.
    pub fn record(&mut self, name: &str, launches: u64, kernel_ns: u64, backend: std::time::Duration) {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                self.rows.push(ProfileRow {
                    name: name.to_string(),
                    calls: 0,
                    launches: 0,
                    kernel_ns: 0,
                    backend: std::time::Duration::ZERO,
                });
                self.index.insert(name.to_string(), self.rows.len() - 1);
                self.rows.len() - 1
            }
        };
        let r = &mut self.rows[i];
        r.calls += 1;
        r.launches += launches;
        r.kernel_ns += kernel_ns;
        r.backend += backend;
    }

    /// The table `op_timing_output` prints after its own (through `Backend::work_report`).
    pub fn report(&self) -> String {
        use std::fmt::Write;
        let mut s = String::from("device profile (OP2_DEVICE_PROFILE=1; kernels timed by the device's clock)\n");
        let _ = writeln!(
            s,
            "  {:<24} {:>8} {:>9} {:>12} {:>12} {:>9}",
            "loop", "calls", "launches", "kernels (ms)", "backend (ms)", "kernels %"
        );
        for r in &self.rows {
            let (k, b) = (r.kernel_ns as f64 / 1e6, r.backend.as_secs_f64() * 1e3);
            let pct = if b > 0.0 { 100.0 * k / b } else { 0.0 };
            let _ =
                writeln!(s, "  {:<24} {:>8} {:>9} {:>12.4} {:>12.4} {:>8.1}%", r.name, r.calls, r.launches, k, b, pct);
        }
        s.pop();
        s
    }
}

/// Calls per strategy a loop makes while `OP2_INC=measure` measures it; the last one's time
/// counts (the first may build the strategy's code, or the runtime may compile it at launch).
pub const INC_TRIAL_CALLS: u32 = 2;

/// `OP2_INC=measure`: the increment strategy of each loop chosen by measure. A loop's first
/// calls try each strategy that can run it, `INC_TRIAL_CALLS` calls each, timed from launch to
/// completion; then the fastest is kept for its later calls, and in the JIT cache as a note
/// keyed by the device, the loop's code and arguments and its size (rounded up to a power of
/// two), so a later run on the same device takes it without measuring again. Every strategy
/// gives the loop's results (to rounding: the order of increments differs), so the trial calls
/// are the program's own calls. Loops are told apart by shape and range: under MPI a loop's
/// core and the rest of its elements are measured apart.
#[derive(Default)]
pub struct IncTuner {
    loops: std::collections::HashMap<(usize, usize, usize), Tuning>,
}

struct Tuning {
    name: String,
    note: String,
    candidates: Vec<crate::config::IncChoice>,
    calls: Vec<u32>,
    last: Vec<Option<std::time::Duration>>,
    chosen: Option<crate::config::IncChoice>,
    /// The choice came from the cache.
    kept: bool,
}

impl IncTuner {
    /// The strategy for a call of loop `name` over `[start, end)` (shape `shape`), from
    /// `candidates` (in trial order), and whether the call is a trial to `record`. `note` makes
    /// the cache note's key (the first call of the loop only).
    pub fn pick(
        &mut self,
        (shape, start, end): (usize, usize, usize),
        name: &str,
        candidates: &[crate::config::IncChoice],
        note: impl FnOnce() -> String,
        cache: &crate::jit::cache::DiskCache,
    ) -> (crate::config::IncChoice, bool) {
        let t = self.loops.entry((shape, start, end)).or_insert_with(|| {
            let note = note();
            let kept = cache
                .read_note(&note, "inc")
                .and_then(|s| crate::config::IncChoice::parse(&s))
                .filter(|c| candidates.contains(c));
            Tuning {
                name: name.to_string(),
                note,
                candidates: candidates.to_vec(),
                calls: vec![0; candidates.len()],
                last: vec![None; candidates.len()],
                chosen: kept,
                kept: kept.is_some(),
            }
        });
        if let Some(c) = t.chosen {
            return (c, false);
        }
        match t.calls.iter().position(|&n| n < INC_TRIAL_CALLS) {
            Some(i) => (t.candidates[i], true),
            None => (t.candidates[0], false),
        }
    }

    /// `pick` for a call of `call`'s loop over `[start, end)`: the candidates are atomics (where
    /// they can run the loop), colour and blocks; `device` names the device for the cache note
    /// (made only at the loop's first call). Returns the strategy and whether to `record` it.
    pub fn choose(
        &mut self,
        call: &LoopCall,
        sig: &LoopSignature,
        (start, end): (usize, usize),
        device: impl FnOnce() -> String,
        cache: &crate::jit::cache::DiskCache,
    ) -> (crate::config::IncChoice, bool) {
        use crate::config::IncChoice;
        const ALL: [IncChoice; 3] = [IncChoice::Atomics, IncChoice::Colour, IncChoice::Blocks];
        let candidates = if crate::backend::cuda::codegen::atomics_possible(call.descs) { &ALL[..] } else { &ALL[1..] };
        let note = || inc_note_key(&device(), sig, end - start);
        self.pick((call.shape_key, start, end), call.name, candidates, note, cache)
    }

    /// Records a trial call's time; after the last trial the fastest strategy is kept, here
    /// and in the cache.
    pub fn record(
        &mut self,
        key: (usize, usize, usize),
        choice: crate::config::IncChoice,
        time: std::time::Duration,
        cache: &crate::jit::cache::DiskCache,
    ) {
        let Some(t) = self.loops.get_mut(&key) else { return };
        let Some(i) = t.candidates.iter().position(|&c| c == choice) else { return };
        if t.chosen.is_some() {
            return;
        }
        t.calls[i] += 1;
        t.last[i] = Some(time);
        if t.calls.iter().all(|&n| n >= INC_TRIAL_CALLS) {
            let best =
                (0..t.candidates.len()).min_by_key(|&j| t.last[j].unwrap_or(std::time::Duration::MAX)).unwrap_or(0);
            let c = t.candidates[best];
            t.chosen = Some(c);
            // A cache that cannot be written only means measuring again next run.
            let _ = cache.write_note(&t.note, "inc", c.name());
        }
    }

    /// Per loop, what was chosen and why, for `op_timing_output` (None before any loop).
    pub fn report(&self) -> Option<String> {
        use std::fmt::Write;
        if self.loops.is_empty() {
            return None;
        }
        let mut rows: Vec<(&(usize, usize, usize), &Tuning)> = self.loops.iter().collect();
        rows.sort_by(|a, b| (&a.1.name, a.0 .1, a.0 .2).cmp(&(&b.1.name, b.0 .1, b.0 .2)));
        let mut s = String::from("increment strategy by measure (OP2_INC=measure)");
        for ((_, start, end), t) in rows {
            let _ = write!(s, "\n  inc: {} [{start}, {end}): ", t.name);
            match t.chosen {
                Some(c) if t.kept => {
                    let _ = write!(s, "{} (kept from an earlier run)", c.name());
                }
                Some(c) => {
                    let _ = write!(s, "{} (measured:", c.name());
                    for (j, cand) in t.candidates.iter().enumerate() {
                        let ms = t.last[j].map_or(0.0, |d| d.as_secs_f64() * 1e3);
                        let _ = write!(s, " {} {ms:.4} ms", cand.name());
                    }
                    s.push(')');
                }
                None => s.push_str("measuring"),
            }
        }
        Some(s)
    }
}

/// The cache note key of a loop's measured strategy: the device, the loop's kernel and
/// arguments, and its size rounded up to a power of two.
pub fn inc_note_key(device: &str, sig: &LoopSignature, count: usize) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(device.as_bytes());
    h.update([0]);
    h.update(sig.kernel_name.as_bytes());
    h.update([0]);
    h.update(sig.kernel_source.as_bytes());
    h.update([0]);
    h.update(format!("{:?}", sig.args).as_bytes());
    h.update(count.next_power_of_two().to_le_bytes());
    format!("inc-{}", &crate::codegen::hex(&h.finalize())[..32])
}

/// A map's values column after column (`dim` columns, `transpose` of 4-byte elements): what
/// `KernelArg::MapT` points to.
pub fn transpose_map(values: &[i32], dim: usize) -> Vec<u8> {
    transpose(super::reduce::as_bytes(values), super::DatShape { dim: dim.max(1), elem: 4 }, true)
}

/// Rows of dim values (array of structures) to one array per component (structure of
/// arrays, `to_soa`), or back.
pub fn transpose(src: &[u8], shape: super::DatShape, to_soa: bool) -> Vec<u8> {
    let (dim, es) = (shape.dim, shape.elem);
    let rows = src.len() / (dim * es).max(1);
    let mut out = vec![0u8; src.len()];
    for r in 0..rows {
        for k in 0..dim {
            let aos = (r * dim + k) * es;
            let soa = (k * rows + r) * es;
            let (from, to) = if to_soa { (aos, soa) } else { (soa, aos) };
            out[to..to + es].copy_from_slice(&src[from..from + es]);
        }
    }
    out
}

/// A matrix argument's host memory, as a device backend copies it around a launch (matrices
/// stay in host memory): argument position, values, slot table.
pub struct MatHost<'c> {
    pub arg: usize,
    pub values: &'c [u8],
    pub slots: &'c [i32],
}

/// The matrix arguments of a call, with their values and slot tables in host memory.
pub fn mat_args<'c>(call: &'c LoopCall) -> Vec<MatHost<'c>> {
    let mut out = Vec::new();
    for (i, d) in call.descs.iter().enumerate() {
        if let (ArgDesc::Mat { rows, cols, .. }, BoundArg::Mat { values_bytes, .. }) = (*d, call.bound[i]) {
            // SAFETY: the driver put the matrix's values (`values_bytes` long) and its slot table
            // (set size x local block entries) in the argument's two slots.
            let (values, slots) = unsafe {
                (
                    std::slice::from_raw_parts(call.slots[2 * i] as *const u8, values_bytes),
                    std::slice::from_raw_parts(call.slots[2 * i + 1] as *const i32, call.set_size * rows * cols),
                )
            };
            out.push(MatHost { arg: i, values, slots });
        }
    }
    out
}

/// Where the values of matrix argument `arg` go back to after a launch: the host values'
/// address and length in bytes (null and 0 for another kind of argument).
pub fn mat_values_ptr(call: &LoopCall, arg: usize) -> (*mut u8, usize) {
    match call.bound[arg] {
        BoundArg::Mat { values_bytes, .. } => (call.slots[2 * arg] as *mut u8, values_bytes),
        _ => (std::ptr::null_mut(), 0),
    }
}

/// A dat's bytes as the device stores them: rows of dim values, or one array per component
/// (structure-of-arrays, `soa`, for dim > 1).
pub fn device_layout(soa: bool, shape: super::DatShape, host: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if soa && shape.dim > 1 {
        std::borrow::Cow::Owned(transpose(host, shape, true))
    } else {
        std::borrow::Cow::Borrowed(host)
    }
}

/// Export rows in more ranges than this are gathered on the device (`GATHER_OPENCL`,
/// `GATHER_CUDA`: one launch and one read); one range is read as it is.
pub const GATHER_MIN_RUNS: usize = 1;

/// Byte `b` of row `row` of a dat's device copy, in the halo kernels below (one expression, so
/// that the gather OpenCL runs in the tests and the CUDA kernels index alike).
macro_rules! device_byte {
    () => {
        "soa_rows ? ((b / es) * (size_t)soa_rows + row) * es + b % es : row * eb + b"
    };
}

/// The head of the CUDA halo kernels (NVRTC): three pointers and four unsigned ints, one thread
/// per byte of `n` rows of `eb` bytes.
macro_rules! cuda_rows_head {
    () => {
        "extern \"C\" __global__ void op2_kernel(const unsigned char *src, unsigned char *dst, const unsigned int *rows,
                                      unsigned int n, unsigned int eb, unsigned int es, unsigned int soa_rows)
{
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (size_t)n * eb) return;
  size_t r = i / eb, b = i % eb, row = rows[r];
"
    };
}

/// The gather kernel of halo exchanges (OpenCL C): copies rows `rows[0..n]` of a dat's device
/// copy (rows of `eb` bytes, components of `es` bytes; structure-of-arrays with `soa_rows` rows
/// per component when non-zero) into `dst`, packed in host layout, one work-item per byte (the
/// export rows of a mesh are scattered and few: one launch and one read instead of a read per
/// range of consecutive rows). Arguments: src, dst, rows, n, eb, es, soa_rows.
pub const GATHER_OPENCL: &str = concat!(
    "__kernel void op2_kernel(__global const uchar *src, __global uchar *dst, __global const uint *rows,
                         const uint n, const uint eb, const uint es, const uint soa_rows)
{
  size_t i = get_global_id(0);
  if (i >= (size_t)n * eb) return;
  size_t r = i / eb, b = i % eb, row = rows[r];
  dst[i] = src[",
    device_byte!(),
    "];
}
"
);

/// `GATHER_OPENCL` in CUDA C++ (NVRTC), same arguments, one thread per byte.
pub const GATHER_CUDA: &str = concat!(cuda_rows_head!(), "  dst[i] = src[", device_byte!(), "];\n}\n");

/// The gather's inverse in CUDA C++, same arguments: packed host-layout rows `src` (what a
/// CUDA-aware MPI received into device memory) into rows `rows[0..n]` of a dat's device copy
/// `dst`, one thread per byte.
pub const SCATTER_CUDA: &str = concat!(cuda_rows_head!(), "  dst[", device_byte!(), "] = src[i];\n}\n");

/// The rows of ranges `runs` of a dat of `rows` rows, in order (what a gather copies); a range
/// past the end is an internal error.
pub fn gather_list(runs: &[(usize, usize)], rows: usize) -> Result<Vec<u32>> {
    let mut list: Vec<u32> = Vec::new();
    for &(first, n) in runs {
        if first.checked_add(n).is_none_or(|end| end > rows) {
            op2_bail!(
                Internal,
                "halo rows download: rows {first}..{} of a dat of {rows} rows",
                first.saturating_add(n)
            );
        }
        list.extend((first..first + n).map(|r| r as u32));
    }
    Ok(list)
}

/// What a backend's gather of a dat's halo rows needs: the row list (empty: nothing to move)
/// and the bytes per row, after checking that `host` holds the dat's `total` rows.
pub fn gather_plan(
    total: usize,
    shape: super::DatShape,
    host: &[u8],
    runs: &[(usize, usize)],
) -> Result<(Vec<u32>, usize)> {
    let eb = shape.dim * shape.elem;
    if host.len() < total * eb {
        op2_bail!(Internal, "halo rows download: {} host bytes for {total} rows of {eb}", host.len());
    }
    Ok((gather_list(runs, total)?, eb))
}

/// Puts gathered rows (`packed`, rows of `eb` bytes in `list`'s order) into their rows of `host`.
pub fn scatter_gathered(list: &[u32], packed: &[u8], eb: usize, host: &mut [u8]) {
    for (r, row) in list.iter().zip(packed.chunks_exact(eb)) {
        let at = *r as usize * eb;
        host[at..at + eb].copy_from_slice(row);
    }
}

/// A byte segment of a dat's device copy: (device offset, first row, rows, component: `None`
/// for whole rows).
type Segment = (usize, usize, usize, Option<usize>);

/// The byte segments of row ranges `runs` ((first row, rows)) of a dat of `rows` rows in its
/// device layout: (device offset, first row, rows, component) with component `None` for whole
/// rows (AoS or dim 1), else one segment per component of a structure-of-arrays copy.
fn row_segments(
    soa: bool,
    shape: super::DatShape,
    rows: usize,
    runs: &[(usize, usize)],
    what: &str,
) -> Result<Vec<Segment>> {
    let (dim, es) = (shape.dim, shape.elem);
    let mut out = Vec::with_capacity(runs.len() * if soa { dim } else { 1 });
    for &(first, n) in runs {
        if first.checked_add(n).is_none_or(|end| end > rows) {
            op2_bail!(Internal, "{what}: rows {first}..{} of a dat of {rows} rows", first.saturating_add(n));
        }
        if n == 0 {
            continue;
        }
        if soa && dim > 1 {
            for k in 0..dim {
                out.push(((k * rows + first) * es, first, n, Some(k)));
            }
        } else {
            out.push((first * dim * es, first, n, None));
        }
    }
    Ok(out)
}

/// Reads row ranges `runs` of a dat's device copy (`rows` rows on the device) into the same rows
/// of `host` (host layout) by `read_at(device offset, out)`; returns the bytes moved.
pub fn read_rows(
    soa: bool,
    shape: super::DatShape,
    rows: usize,
    host: &mut [u8],
    runs: &[(usize, usize)],
    mut read_at: impl FnMut(usize, &mut [u8]) -> Result<()>,
) -> Result<u64> {
    let (dim, es) = (shape.dim, shape.elem);
    let eb = dim * es;
    if host.len() < rows * eb {
        op2_bail!(Internal, "halo rows download: {} host bytes for {rows} rows of {eb}", host.len());
    }
    let mut moved = 0u64;
    for (off, first, n, comp) in row_segments(soa, shape, rows, runs, "halo rows download")? {
        match comp {
            None => read_at(off, &mut host[first * eb..(first + n) * eb])?,
            Some(k) => {
                let mut t = vec![0u8; n * es];
                read_at(off, &mut t)?;
                for (i, v) in t.chunks_exact(es).enumerate() {
                    let at = (first + i) * eb + k * es;
                    host[at..at + es].copy_from_slice(v);
                }
            }
        }
        moved += (n * es * if comp.is_some() { 1 } else { dim }) as u64;
    }
    Ok(moved)
}

/// Writes row ranges `runs` of `host` (host layout) into the same rows of a dat's device copy
/// (`rows` rows) by `write_at(device offset, bytes)`; returns the bytes moved.
pub fn write_rows(
    soa: bool,
    shape: super::DatShape,
    rows: usize,
    host: &[u8],
    runs: &[(usize, usize)],
    mut write_at: impl FnMut(usize, &[u8]) -> Result<()>,
) -> Result<u64> {
    let (dim, es) = (shape.dim, shape.elem);
    let eb = dim * es;
    if host.len() < rows * eb {
        op2_bail!(Internal, "halo rows upload: {} host bytes for {rows} rows of {eb}", host.len());
    }
    let mut moved = 0u64;
    for (off, first, n, comp) in row_segments(soa, shape, rows, runs, "halo rows upload")? {
        match comp {
            None => write_at(off, &host[first * eb..(first + n) * eb])?,
            Some(k) => {
                let mut t = Vec::with_capacity(n * es);
                for r in first..first + n {
                    t.extend_from_slice(&host[r * eb + k * es..r * eb + (k + 1) * es]);
                }
                write_at(off, &t)?;
            }
        }
        moved += (n * es * if comp.is_some() { 1 } else { dim }) as u64;
    }
    Ok(moved)
}

/// Fills `host` (rows of dim values) by `read`, which copies the device's bytes of a dat into
/// the slice it is given (through a structure-of-arrays copy when `soa` and dim > 1).
pub fn read_host_layout(
    soa: bool,
    shape: super::DatShape,
    host: &mut [u8],
    read: impl FnOnce(&mut [u8]) -> Result<()>,
) -> Result<()> {
    if soa && shape.dim > 1 {
        let mut t = vec![0u8; host.len()];
        read(&mut t)?;
        host.copy_from_slice(&transpose(&t, shape, false));
        Ok(())
    } else {
        read(host)
    }
}

#[cfg(test)]
mod halo_rows_tests {
    use super::*;
    use crate::backend::DatShape;

    /// Row ranges copied between a device copy (a byte vector in AoS or SoA layout) and host
    /// rows: only those rows move, to the same rows, and the bytes moved are counted; a gather
    /// list and its unpacking agree with the ranges; a range past the end is refused.
    #[test]
    fn rows_move_in_both_layouts() {
        let shape = DatShape { dim: 2, elem: 4 };
        let rows = 5;
        let host: Vec<u8> = (0..rows * 8).map(|i| i as u8).collect();
        let runs = [(1usize, 2usize), (4, 1)];
        for soa in [false, true] {
            let dev = device_layout(soa, shape, &host).into_owned();
            let mut back = vec![0u8; host.len()];
            let n = read_rows(soa, shape, rows, &mut back, &runs, |off, out| {
                out.copy_from_slice(&dev[off..off + out.len()]);
                Ok(())
            })
            .unwrap();
            assert_eq!(n, 3 * 8);
            for r in 0..rows {
                let want: &[u8] = if matches!(r, 1 | 2 | 4) { &host[r * 8..r * 8 + 8] } else { &[0; 8] };
                assert_eq!(&back[r * 8..r * 8 + 8], want, "soa {soa} row {r}");
            }
            let mut dev2 = vec![0u8; dev.len()];
            let n = write_rows(soa, shape, rows, &host, &runs, |off, data| {
                dev2[off..off + data.len()].copy_from_slice(data);
                Ok(())
            })
            .unwrap();
            assert_eq!(n, 3 * 8);
            let mut host2 = vec![0u8; host.len()];
            read_host_layout(soa, shape, &mut host2, |h| {
                h.copy_from_slice(&dev2);
                Ok(())
            })
            .unwrap();
            assert_eq!(host2, back, "soa {soa}: written rows read back, others zero");
            assert!(read_rows(soa, shape, rows, &mut back, &[(4, 2)], |_, _| Ok(())).is_err());
        }
        let list = gather_list(&runs, rows).unwrap();
        assert_eq!(list, vec![1, 2, 4]);
        let packed: Vec<u8> = list.iter().flat_map(|&r| host[r as usize * 8..r as usize * 8 + 8].to_vec()).collect();
        let mut out = vec![0u8; host.len()];
        scatter_gathered(&list, &packed, 8, &mut out);
        assert_eq!(&out[8..24], &host[8..24]);
        assert_eq!(&out[32..40], &host[32..40]);
        assert!(gather_list(&[(5, 1)], rows).is_err());
    }
}
