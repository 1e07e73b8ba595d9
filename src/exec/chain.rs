//! Runs a queue of loops (lazy evaluation, or a loop chain) as one chain. On the host backends
//! (`seq`, `threads`), a chain of two or more loops is sparse-tiled (`plan::tiling`): the first
//! loop's elements are cut into tiles of `OP2_TILE_SIZE`, each later loop's elements join the
//! first tile after which everything they depend on is done, and each tile runs its share of
//! every loop in turn, so the data a tile touches stays in cache from one loop to the next. On
//! one process `seq` runs tiles in order (every dat bit for bit as eager); `threads` runs the
//! tiles of a level at once (two tiles of a level touch no common element where either writes).
//! The inspection is done once per chain shape (and partition) and reused.
//!
//! Under MPI (`run_tiled` with `run_deferred`), the tiles run first, with no communication, and
//! leave out (`mpi_pins`, `plan::tiling::inspect_pinned`) every element that touches a halo row
//! (an exchange may refresh it before its loop), that modifies a row a neighbour imports of a dat
//! the chain exchanges (the exchange must send the row as of its loop), a loop's exec-halo
//! elements, and everything that must follow those (reads what they wrote, or writes what they
//! touched, in a later loop). Then each loop in chain order runs as eager would, on its deferred
//! elements only: halo exchange (the tiles changed no halo row and no dirty flag), owned elements,
//! reduction partials, exec halo, reductions across processes, hand-back. The result is eager's
//! at every process count (within rounding: iterations of one loop may change order, as on
//! `threads`; the schedule is `Parallel` on `seq` too). Device backends are not tiled: they run
//! direct loops fused into fewer launches (`exec::device`). Everywhere else (`OP2_VALIDATE=1`,
//! the check backend, matrices), loops run one after another with the driver's phases (`exec`).
//!
//! Reductions in a queue hand their results over as eagerly, in loop order: a queued loop's
//! reduction target holds a placeholder until the queue runs (`Pending`), so that a value the
//! program stores in between is seen; a later loop that reads the target, or reduces into it
//! without such a store, runs the queue first (`follows_pending`), so it starts from the earlier
//! loop's result; a store after the last loop is put back after the run (`settle`).

use crate::arg::RawArg;
use crate::arg::{Access, BoundArg};
use crate::backend::host::codegen as host;
use crate::backend::LoopCall;
use crate::config::BackendKind;
use crate::context::Context;
use crate::core::{KernelId, SetId};
use crate::error::{Op2Error, Result};
use crate::exec;
use crate::exec::par_loop::{ChainKey, Fused, ParLoop, Pending};
use crate::plan::tiling::{self, ChainArg, ChainLoop, Schedule};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most loops a queue holds: the next one runs them (a chain longer than this runs in parts
/// of this many loops).
pub const MAX_QUEUE: usize = 64;

/// On `threads`, a tiling with more levels than this is redone with tiles twice as wide.
const PARALLEL_LEVELS: u32 = 2;

/// Seed-loop elements per tile when `OP2_TILE_SIZE` is not set (measured on Airfoil's 720K mesh:
/// doc/lazy.md).
pub const DEFAULT_TILE_SIZE: usize = 4096;

/// Runs one parallel loop, or queues it (`OP2_LAZY=1`, or inside a loop chain): through
/// `checkpoint::par_loop` when checkpointing is on (which may replay, restore or save first, and
/// runs every loop at once, after whatever was queued).
pub fn par_loop(ctx: &mut Context, kernel: KernelId, name: &str, set: SetId, raw: &[RawArg]) -> Result<()> {
    if ctx.checkpoint.is_some() {
        flush(ctx, "op_par_loop")?;
        return crate::checkpoint::par_loop(ctx, kernel, name, set, raw);
    }
    // OP2_VALIDATE=1 and the check backend report what they find as the loop's own error: they
    // run every loop at its call.
    let checked = ctx.config.validate || ctx.backend.kind() == crate::config::BackendKind::Check;
    if !ctx.lazy.queues(ctx.config.lazy) || checked {
        flush(ctx, "op_par_loop")?;
        return exec::run_loop(ctx, kernel, name, set, raw);
    }
    // Bound, checked and compiled now: every argument and compile error is this call's own.
    let mut l = ParLoop::bind(ctx, kernel, name, set, raw)?;
    if l.compiled.is_none() {
        let (c, t) = exec::compiled(ctx, &l.shape, name)?;
        l.compiled = Some(c);
        l.jit_time = t;
    }
    if let Some(c) = &l.compiled {
        exec::check_inc_reads(ctx, kernel, name, &l.bound, c.inc_read.as_ref())?;
    }
    // A global that a queued loop reduces into is read or reduced into again: where the program
    // has not stored a value of its own there since, eagerly this loop would see the queued
    // loop's result, so the queue runs first.
    if follows_pending(ctx, &l)? {
        flush(ctx, "op_par_loop")?;
    }
    l.hold_globals()?;
    // A loop whose results the caller reads when the call returns, or that assembles a matrix,
    // runs now with everything before it (inside a chain, reductions wait for its end).
    // So does a device's first loop of a shape (device code is compiled then: its errors are
    // this call's own).
    let first_on_device = ctx.backend.is_device()
        && !l.compiled.as_ref().is_some_and(|c| c.ran.load(std::sync::atomic::Ordering::Relaxed));
    // And a queue that reached its bound runs (a program that never flushes holds no more).
    let now = (l.reduces() && ctx.lazy.chain.is_none())
        || l.has_mat()
        || first_on_device
        || ctx.lazy.queue.len() + 1 >= MAX_QUEUE;
    let targets: Vec<(*mut u8, usize, usize)> =
        l.globals().filter(|g| g.3).map(|(ptr, bytes, elem, _)| (ptr, bytes, elem)).collect();
    ctx.lazy.queue.push(l);
    if now {
        flush(ctx, "op_par_loop")?;
    } else {
        mark_pending(ctx, &targets, name)?;
    }
    Ok(())
}

/// op2's placeholder for one value of `elem` bytes in a queued loop's reduction target
/// (`Pending`): a signalling NaN with a payload for 8- and 4-byte reals (arithmetic never makes
/// one), the same bits for integers of those sizes (9.2e18 and 2.1e9, values a program is
/// unlikely to store in a reduction variable), and an invalid `_Bool`.
pub fn placeholder(elem: usize) -> &'static [u8] {
    const P8: [u8; 8] = 0x7FF4_C3A5_0B2D_1E69u64.to_ne_bytes();
    const P4: [u8; 4] = 0x7FB4_C3A5u32.to_ne_bytes();
    const P1: [u8; 1] = [0xA5];
    match elem {
        8 => &P8,
        4 => &P4,
        2 => &P4[..2],
        _ => &P1,
    }
}

/// The caller's variable of a pending target, as bytes.
fn pending_bytes(p: &Pending) -> &[u8] {
    // SAFETY: `p.ptr` is the caller's reduction target of `p.bytes` bytes, valid until the
    // queue has run (op_arg_gbl's contract for a queued loop).
    unsafe { std::slice::from_raw_parts(p.ptr as *const u8, p.bytes) }
}

/// Whether some value of a pending target still holds the placeholder (the program has not
/// stored a value of its own there since the queued loop's call).
fn holds_placeholder(p: &Pending) -> bool {
    let ph = placeholder(p.elem);
    pending_bytes(p).chunks(p.elem.max(1)).any(|c| c == ph)
}

/// Whether the queue must run before the loop `l` is queued: one of its globals overlaps a
/// queued loop's reduction target that still holds the placeholder somewhere (eagerly `l`
/// would read, or start its own reduction from, the queued loop's result), or `l` reduces into
/// part of one, or into a larger variable around one. A target the program has stored a whole
/// value of its own into since needs nothing: `l` reads or starts from that value, as eagerly.
/// Under MPI the processes agree (a run is collective): the queue runs where any process needs it.
fn follows_pending(ctx: &Context, l: &ParLoop) -> Result<bool> {
    if ctx.lazy.pending.is_empty() {
        return Ok(false);
    }
    let (mut touches, mut must) = (false, false);
    for (ptr, bytes, elem, reduces) in l.globals() {
        let (a, b) = (ptr as usize, ptr as usize + bytes);
        for p in &ctx.lazy.pending {
            let (c, d) = (p.ptr as usize, p.ptr as usize + p.bytes);
            if a >= d || c >= b {
                continue;
            }
            touches = true;
            let same = p.ptr == ptr && p.bytes == bytes && p.elem == elem;
            if (reduces && !same) || holds_placeholder(p) {
                must = true;
            }
        }
    }
    if touches && ctx.comm.distributed() {
        let all = ctx.comm.all_gather(&[must as u8])?;
        must = all.iter().any(|v| v.first() == Some(&1));
    }
    Ok(must)
}

/// Records the reduction targets of the loop just queued as pending (their value at the call
/// kept for a failure, the first time) and puts the placeholder in them.
fn mark_pending(ctx: &mut Context, targets: &[(*mut u8, usize, usize)], name: &str) -> Result<()> {
    for &(ptr, bytes, elem) in targets {
        if !ctx.lazy.pending.iter().any(|p| p.ptr == ptr && p.bytes == bytes) {
            let mut first = crate::core::alloc::zeroed::<u8>(bytes, &format!("op_par_loop '{name}'"))?;
            // SAFETY: ptr is the caller's global of `bytes` bytes (op_arg_gbl's contract).
            unsafe { std::ptr::copy_nonoverlapping(ptr as *const u8, first.as_mut_ptr(), bytes) };
            ctx.lazy.pending.push(Pending { ptr, bytes, elem, first: first.into_boxed_slice() });
        }
        let ph = placeholder(elem);
        for k in 0..bytes / elem.max(1) {
            // SAFETY: as above; value k lies inside the variable.
            unsafe { std::ptr::copy_nonoverlapping(ph.as_ptr(), ptr.add(k * elem), ph.len().min(elem)) };
        }
    }
    Ok(())
}

/// After a queue ran: each pending target's values that the program stored after the last
/// queued loop reducing into it (`stored`, read before the run) are put back, as eagerly its
/// store would come after that loop's result; after a failure, values the failed or dropped
/// loops left as the placeholder get their value at the first call again.
fn settle(pending: &[Pending], stored: &[Vec<u8>], failed: bool) {
    for (p, st) in pending.iter().zip(stored) {
        let ph = placeholder(p.elem);
        let e = p.elem.max(1);
        for (k, v) in st.chunks(e).enumerate() {
            let now = &pending_bytes(p)[k * e..(k * e + v.len()).min(p.bytes)];
            let put: Option<&[u8]> = if v != ph {
                Some(v)
            } else if failed && now == ph {
                p.first.get(k * e..k * e + v.len())
            } else {
                None
            };
            if let Some(put) = put {
                // SAFETY: as in `pending_bytes`; value k lies inside the variable.
                unsafe { std::ptr::copy_nonoverlapping(put.as_ptr(), p.ptr.add(k * e), put.len()) };
            }
        }
    }
}

/// Runs every queued loop, in order (as one chain: `exec::chain`), before `call` goes on. A loop
/// that fails is this call's error, naming the loop; the loops before it have run, the loops
/// after it are dropped (the message counts them), and the failed loop leaves what an eager
/// failure of it leaves.
pub fn flush(ctx: &mut Context, call: &str) -> Result<()> {
    if ctx.lazy.queue.is_empty() {
        return Ok(());
    }
    let queue = std::mem::take(&mut ctx.lazy.queue);
    run(ctx, queue, call)
}

/// Runs `queue` in order on behalf of `call` (the call that flushed it). A failing loop is the
/// error, with its name (and the number of loops after it that were dropped) in the message.
/// The queued loops' reduction targets then hold eager's values (`settle`).
pub fn run(ctx: &mut Context, queue: Vec<ParLoop>, call: &str) -> Result<()> {
    let pending = std::mem::take(&mut ctx.lazy.pending);
    let stored: Vec<Vec<u8>> = pending.iter().map(|p| pending_bytes(p).to_vec()).collect();
    let r = run_queue(ctx, queue, call);
    settle(&pending, &stored, r.is_err());
    r
}

fn run_queue(ctx: &mut Context, queue: Vec<ParLoop>, call: &str) -> Result<()> {
    if let Some(schedule) = tiles(ctx, &queue) {
        return run_tiled(ctx, &queue, schedule, call);
    }
    if crate::exec::device::fuses(ctx, &queue) {
        let groups = crate::exec::device::groups(ctx, &queue, &chain_loops(ctx, &queue));
        let name = chain_name(ctx, &queue);
        return crate::exec::device::run(ctx, queue, groups, &name, call)
            .map_err(|f| queued_failure(f.error, &f.name, call, f.dropped));
    }
    let total = queue.len();
    for (i, l) in queue.into_iter().enumerate() {
        let name = l.name.clone();
        if let Err(e) = l.compute(ctx) {
            return Err(queued_failure(e, &name, call, total - i - 1));
        }
    }
    Ok(())
}

/// Whether the chain is tiled, and how: two or more loops, on seq or threads, without
/// validation or matrices, with a tile size that is not 0. Under MPI
/// (partitioned sets), the schedule is `Parallel` on seq too: iterations of one loop may change
/// order between the tiles and the deferred part (`run_deferred`), which on `Sequential` would
/// defer every later iteration that increments what a deferred one did (most of the mesh).
fn tiles(ctx: &Context, queue: &[ParLoop]) -> Option<Schedule> {
    let distributed = ctx.comm.distributed();
    let schedule = match ctx.backend.kind() {
        BackendKind::Seq if !distributed => Schedule::Sequential,
        BackendKind::Seq | BackendKind::Threads => Schedule::Parallel,
        _ => return None,
    };
    let size = ctx.config.tile_size.unwrap_or(DEFAULT_TILE_SIZE);
    // `op_arg_idx` on a host backend under MPI reads the layout's table of original indices
    // (read-only, nothing to order); on a device it needs a synthesised map (`synth`).
    let plain = |l: &ParLoop| l.compiled.is_some() && !l.has_mat() && l.synth.is_empty();
    (queue.len() >= 2
        && size > 0
        && (!distributed || ctx.comm.partitioned)
        && !ctx.config.validate
        && queue.iter().all(plain))
    .then_some(schedule)
}

/// The chain's description for the inspector: per loop, its size and each enabled dat argument.
fn chain_loops<'c>(ctx: &'c Context, queue: &[ParLoop]) -> Vec<ChainLoop<'c>> {
    queue
        .iter()
        .map(|l| {
            let args = l
                .dat_args()
                .map(|(dat, map, col, acc)| ChainArg {
                    data: dat.0,
                    data_size: ctx.sets[ctx.dats[dat.0 as usize].set.0 as usize].total,
                    map: map.map(|m| {
                        let mp = &ctx.maps[m.0 as usize];
                        (mp.values.as_slice(), mp.dim, col)
                    }),
                    reads: acc.reads(),
                    writes: acc.writes(),
                    inc: acc == Access::Inc,
                })
                .collect();
            ChainLoop { size: ctx.sets[l.set.0 as usize].size, args }
        })
        .collect()
}

fn chain_key(queue: &[ParLoop], tile_size: usize, schedule: Schedule) -> ChainKey {
    let loops = queue.iter().map(|l| (l.set, l.dat_args().collect())).collect();
    ChainKey { loops, tile_size, schedule, groups: Vec::new(), layout: 0 }
}

/// The name a chain goes by in timings and diagnostics: the open chain's, else its first and
/// last loops'.
fn chain_name(ctx: &Context, queue: &[ParLoop]) -> String {
    match &ctx.lazy.chain {
        Some(n) => format!("chain:{n}"),
        None => match (queue.first(), queue.last()) {
            (Some(a), Some(b)) => format!("chain:{}..{}", a.name, b.name),
            _ => "chain".to_string(),
        },
    }
}

/// A run of consecutive queued loops that runs as one generated loop (`fused`), or one loop.
struct Group {
    loops: std::ops::Range<usize>,
    fused: Option<Arc<Fused>>,
}

/// The chain's groups: maximal runs of loops over one set whose dependencies are all direct
/// (`plan::tiling::fusion_groups`), without vector arguments that need scratch, whose fused unit
/// compiles (a unit that does not, two kernels or helpers of one name, runs its loops unfused).
fn groups(ctx: &mut Context, queue: &[ParLoop]) -> Vec<Group> {
    let ranges = {
        let loops = chain_loops(ctx, queue);
        tiling::fusion_groups(&loops)
    };
    let mut out = Vec::new();
    for r in ranges {
        // Split where the set changes or a loop needs scratch (fused units pass none).
        let mut start = r.start;
        for i in r.start..=r.end {
            let cut = i == r.end
                || i == start
                || queue[i].set != queue[start].set
                || host::scratch_entries(&queue[i].shape.args) > 0
                || host::scratch_entries(&queue[start].shape.args) > 0;
            if i == start || !cut {
                continue;
            }
            // The longest run from `a` that compiles as one unit (a clash of names between two
            // kernels ends it), then on from its end.
            let mut a = start;
            while a < i {
                let mut found = None;
                for b in (a + 2..=i).rev() {
                    if let Some(f) = fused_lib(ctx, &queue[a..b]) {
                        found = Some((b, f));
                        break;
                    }
                }
                match found {
                    Some((b, f)) => {
                        out.push(Group { loops: a..b, fused: Some(f) });
                        a = b;
                    }
                    None => {
                        out.push(Group { loops: a..a + 1, fused: None });
                        a += 1;
                    }
                }
            }
            start = i;
        }
    }
    out
}

/// The fused library of `loops` (cached per shapes; `None` when the unit does not compile).
fn fused_lib(ctx: &mut Context, loops: &[ParLoop]) -> Option<Arc<Fused>> {
    let shapes: Vec<crate::exec::loop_cache::LoopShape> = loops.iter().map(|l| l.shape.clone()).collect();
    if let Some(f) = ctx.lazy.fused.get(&shapes) {
        return f.clone();
    }
    let origins: Vec<String> = loops.iter().map(|l| ctx.kernels[l.shape.kernel.0 as usize].line_origin()).collect();
    let consts: Vec<Vec<crate::codegen::ConstDecl>> =
        loops.iter().map(|l| ctx.consts_used_by(l.shape.kernel)).collect();
    let mut union: Vec<crate::codegen::ConstDecl> = consts.iter().flatten().cloned().collect();
    union.sort_by(|a, b| a.name.cmp(&b.name));
    union.dedup_by(|a, b| a.name == b.name);
    let source = {
        let sigs: Vec<crate::codegen::LoopSignature> = loops
            .iter()
            .zip(&origins)
            .zip(&consts)
            .map(|((l, origin), c)| {
                let k = &ctx.kernels[l.shape.kernel.0 as usize];
                crate::codegen::LoopSignature {
                    loop_name: &l.name,
                    kernel_name: &k.name,
                    kernel_source: &k.source,
                    kernel_origin: origin,
                    args: &l.shape.args,
                    consts: c,
                }
            })
            .collect();
        host::generate_fused(&sigs, &union)
    };
    let names: Vec<&str> = loops.iter().map(|l| l.name.as_str()).collect();
    let what = format!("fused loops '{}'", names.join("' + '"));
    let fused = match ctx.jit.host_library(&source, &what, &names.join("+")) {
        Ok(lib) => {
            // Static generation writes the units that compile, as it writes loops.
            if let Some(dir) = &ctx.config.generate_dir {
                let kernels: Vec<&str> =
                    loops.iter().map(|l| ctx.kernels[l.shape.kernel.0 as usize].name.as_str()).collect();
                let args: Vec<String> = loops.iter().flat_map(|l| l.shape.args.iter().map(host::describe)).collect();
                if let Err(e) =
                    crate::exec::generate::write_fused(dir, &names.join("+"), &kernels.join("+"), &args, &source)
                {
                    crate::core::output::print_after_c_stdio(&format!("op2: {what}: {}\n", e.message));
                }
            }
            Some(Arc::new(Fused { lib, consts: union }))
        }
        Err(e) => {
            if ctx.config.diags >= 2 {
                crate::core::output::print_after_c_stdio(&format!("op2: {what}: not fused: {}\n", e.message));
            }
            None
        }
    };
    ctx.lazy.fused.insert(shapes, fused.clone());
    fused
}

/// Runs the chain tiled: its loops in fusion groups, each loop's checks and pointers (the
/// driver's phases), then every tile (`Backend::compute_tiled`, a group's loops element block by
/// element block in one generated loop), then each loop's hand-back and timing record; the
/// chain's time is its own row in `op_timing_output` (its loops count their calls and bytes).
fn run_tiled(ctx: &mut Context, queue: &[ParLoop], schedule: Schedule, call: &str) -> Result<()> {
    let tile_size = ctx.config.tile_size.unwrap_or(DEFAULT_TILE_SIZE);
    let t0 = Instant::now();
    // Under MPI each loop runs its deferred part with its own exchange: no fusion.
    let distributed = ctx.comm.distributed();
    let threads = ctx.backend.kind() == BackendKind::Threads;
    let groups = if ctx.config.fuse && !distributed {
        groups(ctx, queue)
    } else {
        (0..queue.len()).map(|k| Group { loops: k..k + 1, fused: None }).collect()
    };
    let mut key = chain_key(queue, tile_size, schedule);
    key.groups = groups.iter().map(|g| g.loops.len()).collect();
    key.layout = if distributed { ctx.comm.partition_epoch } else { 0 };
    let name = chain_name(ctx, queue);
    let tiling = match ctx.lazy.tilings.get(&key) {
        Some(t) => t.clone(),
        None => {
            let per_loop = chain_loops(ctx, queue);
            let mut loops: Vec<ChainLoop> = Vec::with_capacity(groups.len());
            for g in &groups {
                let mut args = Vec::new();
                for l in g.loops.clone() {
                    args.extend(per_loop[l].args.iter().copied());
                }
                loops.push(ChainLoop { size: per_loop[g.loops.start].size, args });
            }
            // Under MPI: each loop over the elements eager runs (its exec halo too when it writes
            // indirectly), and what depends on halos deferred (`mpi_pins`).
            let pins = if distributed {
                for (cl, l) in loops.iter_mut().zip(queue) {
                    cl.size = eager_size(ctx, l);
                }
                Some(mpi_pins(ctx, queue, &loops)?)
            } else {
                None
            };
            let inspect = |size: usize| {
                match &pins {
                    Some(p) => tiling::inspect_pinned(&loops, size, schedule, p),
                    None => tiling::inspect(&loops, size, schedule),
                }
                .map_err(|e| Op2Error::new(e.code, format!("{call}: {name}: tiling: {}", e.message)))
            };
            let mut t = inspect(tile_size)?;
            // In parallel, tiles narrower than the chain's reach grow into each other and the
            // levels cascade (a chain of levels runs one tile at a time): wider tiles, while
            // the seed still gives every thread several.
            let mut size = tile_size;
            while threads && t.nlevels > PARALLEL_LEVELS && t.tiles >= 8 * PARALLEL_LEVELS as usize {
                size *= 2;
                t = inspect(size)?;
            }
            if ctx.config.debug_tiling {
                match &pins {
                    Some(p) => tiling::verify_pinned(&loops, &t, p),
                    None => tiling::verify(&loops, &t),
                }
                .map_err(|m| {
                    crate::op2_err!(Internal, "{call}: {name}: the tiling of {} loops is wrong: {m}", queue.len())
                })?;
            }
            let total: usize = loops.iter().map(|l| l.size).sum();
            drop(loops);
            let t = Arc::new(t);
            ctx.lazy.tilings.insert(key, t.clone());
            let group_names = group_names(queue, &groups);
            ctx.diags_chain(&name, group_names.iter().map(String::as_str), &t);
            if distributed && ctx.config.diags >= 2 {
                let deferred: usize = (0..queue.len()).map(|l| t.deferred_len(l)).sum();
                crate::core::output::print_after_c_stdio(&format!(
                    "op2: {name}: MPI rank {}: {} elements tiled, {deferred} deferred (after the tiles, loop by loop with the halo exchanges)\n",
                    ctx.comm.rank(),
                    total - deferred
                ));
            }
            t
        }
    };
    let inspect_time = t0.elapsed();
    let mut checked = Vec::with_capacity(queue.len());
    for l in queue {
        let Some(c) = l.compiled.clone() else {
            crate::op2_bail!(Internal, "{call}: op_par_loop '{}' was queued without its code", l.name);
        };
        crate::exec::check(ctx, l.shape.kernel, &l.name, &l.bound, &c)
            .map_err(|e| queued_failure(e, &l.name, call, 0))?;
        checked.push(c);
    }
    // A fused unit loads the constants of all its kernels.
    for f in groups.iter().filter_map(|g| g.fused.as_ref()) {
        if f.lib.consts_fn.is_some() {
            let ptrs: Vec<*const std::ffi::c_void> =
                f.consts.iter().map(|c| ctx.consts[&c.name].data.as_ptr() as *const std::ffi::c_void).collect();
            f.lib.ensure_constants(ctx.const_epoch, &ptrs);
        }
    }
    let bytes: Vec<u64> = queue.iter().map(|l| crate::exec::bytes_moved(ctx, &l.shape.args, &l.bound, l.set)).collect();
    // Dat names for messages, owned: the deferred part exchanges halos (dats mutable) while the
    // calls live.
    let names: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            queue[g.loops.clone()]
                .iter()
                .flat_map(|l| crate::exec::dat_names(&l.bound, &ctx.dats))
                .map(str::to_string)
                .collect()
        })
        .collect();

    let Context { sets, maps, dats, backend, comm, timings, kernels: _, consts: _, mats, .. } = ctx;
    let mut pointers = Vec::with_capacity(queue.len());
    for l in queue {
        // Each reduction starts from its variable's value at its call (binding copies it).
        l.restore_seeds();
        let p = crate::exec::bind_pointers(
            &l.name,
            l.set,
            &l.shape.args,
            &l.bound,
            &l.synth,
            &l.mat_slots,
            sets,
            maps,
            dats,
            mats,
            comm,
        )
        .map_err(|e| queued_failure(e, &l.name, call, 0))?;
        pointers.push(p);
    }
    // Each group's arguments back to back (a fused unit's slots are its loops', in order).
    let merged: Vec<(Vec<crate::arg::ArgDesc>, Vec<BoundArg>, String)> = groups
        .iter()
        .map(|g| {
            let ls = &queue[g.loops.clone()];
            (
                ls.iter().flat_map(|l| l.shape.args.iter().copied()).collect(),
                ls.iter().flat_map(|l| l.bound.iter().copied()).collect(),
                ls.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join("+"),
            )
        })
        .collect();
    let mut pointers = pointers.into_iter();
    let mut calls: Vec<LoopCall> = Vec::with_capacity(groups.len());
    for ((g, (descs, bound, gname)), names) in groups.iter().zip(&merged).zip(&names) {
        let first = &queue[g.loops.start];
        let (mut slots, mut reductions, mut indirect) = (Vec::new(), Vec::new(), Vec::new());
        let mut off = 0;
        for l in &queue[g.loops.clone()] {
            let Some(p) = pointers.next() else { crate::op2_bail!(Internal, "{call}: {name}: lost a loop's pointers") };
            let n = l.shape.args.len();
            let base = reductions.len();
            slots.extend_from_slice(&p.slots[..2 * n]);
            reductions.extend(p.reductions.into_iter().map(|mut r| {
                r.arg += off;
                r.follows = r.follows.map(|f| f + base);
                r
            }));
            indirect.extend(p.indirect.into_iter().map(|mut a| {
                a.arg += off;
                a
            }));
            off += n;
        }
        // The scratch slot: a single loop's own, none for a fused unit.
        slots.push(std::ptr::null_mut());
        let (lib, shape_key) = match &g.fused {
            Some(f) => (&*f.lib, Arc::as_ptr(f) as usize),
            None => (&*checked[g.loops.start].lib, Arc::as_ptr(&checked[g.loops.start]) as usize),
        };
        calls.push(LoopCall {
            sig: None,
            parts: Vec::new(),
            const_values: Vec::new(),
            shape_key,
            const_epoch: 0,
            bound,
            maps: crate::exec::arg_maps(bound, &[], maps),
            name: if g.fused.is_some() { gname } else { &first.name },
            set: first.set,
            set_size: if distributed { sets[first.set.0 as usize].exec_end } else { sets[first.set.0 as usize].size },
            lib,
            descs,
            slots,
            scratch_entries: if g.fused.is_some() { 0 } else { host::scratch_entries(descs) },
            reductions,
            indirect,
            dat_names: names.iter().map(String::as_str).collect(),
        });
    }
    let started = Instant::now();
    let r = backend.compute_tiled(&mut calls, &tiling);
    let mut elapsed = started.elapsed();
    if distributed {
        if let Err(e) = r {
            return Err(Op2Error::new(
                e.code,
                format!("{name} (queued, run by {call}): {}; the chain's dats are partly updated", e.message),
            ));
        }
        let deferred = Deferred { queue, tiling: &tiling, checked: &checked, bytes: &bytes, call };
        elapsed += run_deferred(&deferred, &mut calls, sets, dats, comm, timings)?;
        drop(calls);
        chain_row(timings, &name, elapsed + inspect_time, &bytes, || {
            let deferred: usize = (0..queue.len()).map(|l| tiling.deferred_len(l)).sum();
            format!("{}; MPI: {deferred} elements deferred", tiles_line(queue, &groups, &tiling))
        });
        return Ok(());
    }
    // Each loop's reductions back, with its own argument positions.
    let mut reductions: Vec<Vec<crate::backend::Reduction>> = Vec::with_capacity(queue.len());
    for (g, c) in groups.iter().zip(calls.iter_mut()) {
        let all = std::mem::take(&mut c.reductions);
        let mut off = 0;
        for l in &queue[g.loops.clone()] {
            let n = l.shape.args.len();
            reductions.push(
                all.iter()
                    .filter(|r| (off..off + n).contains(&r.arg))
                    .map(|r| {
                        let mut r = r.clone();
                        r.arg -= off;
                        r
                    })
                    .collect(),
            );
            off += n;
        }
    }
    drop(calls);
    if let Err(e) = r {
        return Err(Op2Error::new(
            e.code,
            format!(
                "{name} (queued, run by {call}): {}; the chain's dats are partly updated, its reduction variables hold their values at the calls",
                e.message
            ),
        ));
    }
    let halo = (comm.halo_time, comm.halo_bytes, comm.messages);
    for ((l, red), (c, b)) in queue.iter().zip(&reductions).zip(checked.iter().zip(&bytes)) {
        crate::exec::hand_back(dats, &l.shape.args, &l.bound, false, Vec::new(), Vec::new(), red);
        crate::exec::record(timings, comm, &l.name, &c.lib, Duration::ZERO, l.jit_time, *b, halo);
        c.ran.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    chain_row(timings, &name, elapsed + inspect_time, &bytes, || {
        format!(
            "{}; traffic model {:.1} MB a run, eager {:.1} MB",
            tiles_line(queue, &groups, &tiling),
            traffic(queue, sets, maps, dats) as f64 / 1e6,
            bytes.iter().sum::<u64>() as f64 / 1e6
        )
    });
    Ok(())
}

/// The elements eager runs of a loop: the owned ones, and under MPI its exec halo too when it
/// writes indirectly.
fn eager_size(ctx: &Context, l: &ParLoop) -> usize {
    let s = &ctx.sets[l.set.0 as usize];
    match &l.compiled {
        Some(c) if c.needs_exec_halo && ctx.comm.distributed() => s.exec_end,
        _ => s.size,
    }
}

/// What a chain's tiles must leave to the deferred part under MPI (`run_deferred`), as pins for
/// the inspector: every loop's exec-halo iterations (eager runs them after the owned ones,
/// outside the reductions); every halo row of every dat (an exchange before some loop may
/// refresh it; tiles run before every exchange), pinned against any access; and every row a
/// neighbour imports of a dat some loop of the chain reads through its halo, pinned against
/// modification (an exchange in the deferred part must send its value as of its loop in eager
/// order, so only deferred iterations, which run in loop order, may modify it). The inspector
/// defers everything that must follow those; all else (mostly the core) is tiled.
fn mpi_pins(ctx: &Context, queue: &[ParLoop], loops: &[ChainLoop]) -> Result<tiling::Pins> {
    use crate::core::alloc;
    let mut exchanged: Vec<crate::core::DatId> = Vec::new();
    for l in queue {
        let needs = l.compiled.as_ref().is_some_and(|c| c.needs_exec_halo);
        for d in crate::exec::halo_read_dats(&l.shape.args, &l.bound, needs) {
            if !exchanged.contains(&d) {
                exchanged.push(d);
            }
        }
    }
    let mut pins = tiling::Pins::default();
    for (l, cl) in queue.iter().zip(loops) {
        let owned = ctx.sets[l.set.0 as usize].size;
        if cl.size > owned {
            let mut flags = alloc::filled(cl.size, false, "loop chain under MPI: exec-halo iterations")?;
            flags[owned..].fill(true);
            pins.iterations.push(flags);
        } else {
            pins.iterations.push(Vec::new());
        }
    }
    let mut seen: Vec<u32> = Vec::new();
    for a in loops.iter().flat_map(|l| l.args.iter()) {
        if seen.contains(&a.data) {
            continue;
        }
        seen.push(a.data);
        let dat = &ctx.dats[a.data as usize];
        let set = &ctx.sets[dat.set.0 as usize];
        let mut rows = alloc::zeroed::<u8>(a.data_size, "loop chain under MPI: pinned rows")?;
        if let Some(r) = rows.get_mut(set.size..) {
            r.fill(tiling::PIN_TOUCH);
        }
        if exchanged.contains(&crate::core::DatId(a.data)) {
            if let Some(layout) = ctx.comm.layout(dat.set) {
                for (_, list) in &layout.exports {
                    for &x in list {
                        if let Some(r) = rows.get_mut(x as usize) {
                            *r |= tiling::PIN_MODIFY;
                        }
                    }
                }
            }
        }
        if rows.iter().any(|&r| r != 0) {
            pins.rows.push((a.data, rows));
        }
    }
    Ok(pins)
}

/// What `run_deferred` needs of the chain besides the session's parts.
struct Deferred<'q> {
    queue: &'q [ParLoop],
    tiling: &'q tiling::Tiling,
    checked: &'q [Arc<crate::exec::loop_cache::CompiledLoop>],
    bytes: &'q [u64],
    call: &'q str,
}

/// Under MPI, after the tiles: each loop in chain order as eager runs it, on its deferred
/// iterations only: its halo exchange (the dats it reads through its halo that are out of date:
/// the tiles marked nothing, so the dirty flags are eager's at this loop), its deferred owned
/// iterations, its reductions' partials (owned elements only), its deferred exec-halo
/// iterations, the reductions across processes, the hand-back (halos refreshed and dirtied, the
/// caller's globals) and its timing record. One loop per call (no fusion). Returns the time
/// spent running.
fn run_deferred(
    d: &Deferred,
    calls: &mut [LoopCall],
    sets: &[crate::core::Set],
    dats: &mut [crate::core::Dat],
    comm: &mut crate::mpi::Comm,
    timings: &mut crate::context::timing::Timings,
) -> Result<Duration> {
    let mut elapsed = Duration::ZERO;
    let n = d.queue.len();
    for (k, (l, c)) in d.queue.iter().zip(calls.iter_mut()).enumerate() {
        let fail = |e: Op2Error| queued_failure(e, &l.name, d.call, n - k - 1);
        let halo_before = (comm.halo_time, comm.halo_bytes, comm.messages);
        let compiled = &d.checked[k];
        let mut list = crate::exec::halo_read_dats(&l.shape.args, &l.bound, compiled.needs_exec_halo);
        list.retain(|x| dats[x.0 as usize].halo_dirty);
        let ex = comm.halo_exchange_begin(dats, list, None).map_err(fail)?;
        let refreshed = comm.halo_exchange_end(ex, None).map_err(fail)?;
        let owned = sets[l.set.0 as usize].size as u32;
        let started = Instant::now();
        let runs = d.tiling.deferred.get(k).map_or(&[][..], Vec::as_slice);
        let run = |c: &mut LoopCall, s: u32, e: u32| -> Result<()> {
            let mut slots = std::mem::take(&mut c.slots);
            // SAFETY: the driver built `slots` for this loop; the runs lie in its elements.
            let r = unsafe { c.run_range(s as usize, e as usize, &mut slots) };
            c.slots = slots;
            r
        };
        for &(s, e) in runs {
            if s < e.min(owned) {
                run(c, s, e.min(owned)).map_err(fail)?;
            }
        }
        // Reductions cover owned elements only: their partials before the exec halo runs.
        let partial = (!c.reductions.is_empty()).then(|| c.reductions.clone());
        for &(s, e) in runs {
            if s.max(owned) < e {
                run(c, s.max(owned), e).map_err(fail)?;
            }
        }
        // The reduction starts from its variable's value at its call (an earlier loop of the
        // chain may have handed a result to the same variable).
        l.restore_seeds();
        crate::exec::reduce(comm, &l.bound, c, partial).map_err(fail)?;
        elapsed += started.elapsed();
        let reductions = std::mem::take(&mut c.reductions);
        crate::exec::hand_back(dats, &l.shape.args, &l.bound, false, Vec::new(), refreshed, &reductions);
        crate::exec::record(timings, comm, &l.name, &compiled.lib, Duration::ZERO, l.jit_time, d.bytes[k], halo_before);
        compiled.ran.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(elapsed)
}

/// A tiled chain's row in the timing table: one more run, its time and bytes, and (the first
/// time) its description, `detail` followed by `)`.
fn chain_row(
    timings: &mut crate::context::timing::Timings,
    name: &str,
    time: Duration,
    bytes: &[u64],
    detail: impl FnOnce() -> String,
) {
    let row = timings.entry(name);
    row.calls += 1;
    row.time += time;
    row.bytes += bytes.iter().sum::<u64>();
    if row.members.is_none() {
        row.members = Some(format!("{})", detail()));
    }
}

/// The start of a tiled chain's description: its groups, tiles and levels.
/// Groups whose tiles hold many short runs (`Tiling::lists`) are named as listed: each of
/// their tiles runs in one call of the list wrappers.
fn tiles_line(queue: &[ParLoop], groups: &[Group], tiling: &tiling::Tiling) -> String {
    let names = group_names(queue, groups);
    let listed: Vec<&str> =
        names.iter().enumerate().filter(|&(g, _)| tiling.is_listed(g)).map(|(_, n)| n.as_str()).collect();
    format!(
        "{} ({} tiles, {} level{}{}",
        names.join(" "),
        tiling.tiles,
        tiling.nlevels,
        if tiling.nlevels == 1 { "" } else { "s" },
        if listed.is_empty() { String::new() } else { format!("; listed: {}", listed.join(" ")) }
    )
}
/// Each group's name: its loop's, or its fused loops' joined by `+`.
fn group_names(queue: &[ParLoop], groups: &[Group]) -> Vec<String> {
    groups
        .iter()
        .map(|g| queue[g.loops.clone()].iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join("+"))
        .collect()
}

/// The bytes a tiled chain must move if every tile's data stays in cache between its loops:
/// each dat once (twice if the chain both reads and writes it), each map once (the model
/// `op_timing_output` prints beside the eager loops' own counts).
fn traffic(queue: &[ParLoop], sets: &[crate::core::Set], maps: &[crate::core::Map], dats: &[crate::core::Dat]) -> u64 {
    let mut seen: Vec<(u32, bool, bool)> = Vec::new();
    let mut seen_maps: Vec<u32> = Vec::new();
    for l in queue {
        for (dat, map, _, acc) in l.dat_args() {
            match seen.iter_mut().find(|s| s.0 == dat.0) {
                Some(s) => {
                    s.1 |= acc.reads();
                    s.2 |= acc.writes();
                }
                None => seen.push((dat.0, acc.reads(), acc.writes())),
            }
            if let Some(m) = map {
                if !seen_maps.contains(&m.0) {
                    seen_maps.push(m.0);
                }
            }
        }
    }
    let dat_bytes: u64 = seen
        .iter()
        .map(|&(d, r, w)| {
            let dv = &dats[d as usize];
            (sets[dv.set.0 as usize].size * dv.dim * dv.ty.size()) as u64 * (r as u64 + w as u64)
        })
        .sum();
    let map_bytes: u64 = seen_maps
        .iter()
        .map(|&m| {
            let mp = &maps[m as usize];
            (sets[mp.from.0 as usize].size * mp.dim * 4) as u64
        })
        .sum();
    dat_bytes + map_bytes
}

/// A queued loop's failure as the error of `call`, naming the loop.
fn queued_failure(e: Op2Error, name: &str, call: &str, dropped: usize) -> Op2Error {
    let head = format!("op_par_loop '{name}'");
    let body = if e.message.starts_with(&head) { e.message.clone() } else { format!("{head}: {}", e.message) };
    let after = match dropped {
        0 => String::new(),
        1 => "; the 1 queued loop after it was not run".to_string(),
        n => format!("; the {n} queued loops after it were not run"),
    };
    Op2Error::new(e.code, format!("{body} (queued, run by {call}{after})"))
}

#[cfg(test)]
mod tests {
    use super::queued_failure;
    use crate::error::{ErrorCode, Op2Error};

    #[test]
    fn a_queued_failure_names_its_loop_the_caller_and_what_was_dropped() {
        let e = Op2Error::new(ErrorCode::OutOfMemory, "op_par_loop 'res': cannot allocate 8 bytes");
        let got = queued_failure(e, "res", "op_fetch_data", 2);
        assert_eq!(got.code, ErrorCode::OutOfMemory);
        assert_eq!(
            got.message,
            "op_par_loop 'res': cannot allocate 8 bytes (queued, run by op_fetch_data; the 2 queued loops after it were not run)"
        );
        let e = Op2Error::new(ErrorCode::Device, "opencl: clEnqueueNDRangeKernel failed");
        let got = queued_failure(e, "adt", "op_exit", 0);
        assert_eq!(got.message, "op_par_loop 'adt': opencl: clEnqueueNDRangeKernel failed (queued, run by op_exit)");
    }

    #[test]
    fn pending_targets_keep_what_the_program_stored() {
        use super::{holds_placeholder, placeholder, settle, Pending};
        let ph = f64::from_ne_bytes(placeholder(8).try_into().unwrap());
        assert!(ph.is_nan());
        assert!(f32::from_ne_bytes(placeholder(4).try_into().unwrap()).is_nan());
        // A dim-2 double target, its first value 1, 2 at the first call; the variable is only
        // touched through the pointer from here on.
        let mut v = Box::new([ph, ph]);
        let first: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let ptr = v.as_mut_ptr();
        let p = Pending { ptr: ptr as *mut u8, bytes: 16, elem: 8, first: first.into_boxed_slice() };
        // SAFETY: `ptr` points at the two values of `v`, which outlives these uses.
        let set = |a: f64, b: f64| unsafe {
            ptr.write(a);
            ptr.add(1).write(b)
        };
        let get = || unsafe { [ptr.read(), ptr.add(1).read()] };
        assert!(holds_placeholder(&p));
        // The program stored 5 in value 0 after the last loop; the run left 7, 8.
        let stored: Vec<u8> = [5.0f64, ph].iter().flat_map(|x| x.to_ne_bytes()).collect();
        set(7.0, 8.0);
        settle(std::slice::from_ref(&p), std::slice::from_ref(&stored), false);
        assert_eq!(get(), [5.0, 8.0]);
        assert!(!holds_placeholder(&p));
        // A failure that left the placeholder in value 1: its value at the first call again.
        set(7.0, ph);
        settle(std::slice::from_ref(&p), std::slice::from_ref(&stored), true);
        assert_eq!(get(), [5.0, 2.0]);
    }
}
