//! The host-threaded backend (OP2's "openmp"), on a rayon pool.
//!
//! The range is cut into blocks of `part_size` elements. Loops without arguments that need
//! colouring run all blocks in parallel; coloured loops (indirect INC) run colour after colour
//! from an execution plan, the blocks of one colour in parallel. Each block runs through the
//! same compiled range wrapper as `seq`. Reductions go to per-block partials combined in block
//! order, and increments to a target happen colour by colour in a fixed order, so results do
//! not depend on the number of threads.

use crate::backend::reduce::Partials;
use crate::backend::{Backend, LoopCall};
use crate::config::BackendKind;
use crate::error::{ErrorCode, Op2Error, Result};
use crate::op2_err;
use crate::plan::{PlanCache, PlanRequest};
use rayon::prelude::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// Default block size for a set of `n` elements: about `n / 64` (a power of two, so there are
/// 64 to 128 blocks: enough to balance 16 threads across a few colours), between 256 and 8192.
/// Large blocks matter for coloured loops: neighbouring blocks get different colours and run in
/// different passes, so the indirect data on their common boundary is fetched once per pass;
/// on Airfoil's 720K mesh res_calc with 2 threads takes 10.9 ms at 1024 and 9.6 ms at 8192
/// (seq: 16.7 ms). It depends on the set size only, never on the thread count, so results
/// stay independent of the number of threads.
pub fn default_part_size(n: usize) -> usize {
    let target = (n / 64).max(1);
    let pow2 = 1usize << (usize::BITS - 1 - target.leading_zeros());
    pow2.clamp(256, 8192)
}

/// Worker threads are named `op2-worker-N` (the C layer recognises kernels calling op2 by it).
pub const WORKER_PREFIX: &str = "op2-worker-";

/// Counts `fork()`s of this process (a `pthread_atfork` child handler bumps it): a pool made
/// before the current count has no threads in this process.
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

extern "C" fn after_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The number of `fork()`s so far in this process's history (0 in the original process);
/// starts counting on first use.
pub(crate) fn fork_generation() -> u64 {
    static ATFORK: std::sync::Once = std::sync::Once::new();
    // SAFETY: registers a handler that only touches an atomic (async-signal-safe).
    ATFORK.call_once(|| unsafe {
        libc::pthread_atfork(None, None, Some(after_fork_in_child));
    });
    FORK_GENERATION.load(Ordering::Relaxed)
}

fn build_pool(num_threads: usize) -> Result<rayon::ThreadPool> {
    fork_generation();
    rayon::ThreadPoolBuilder::new()
        .num_threads(num_threads)
        .thread_name(|i| format!("{WORKER_PREFIX}{i}"))
        .build()
        .map_err(|e| op2_err!(BackendUnavailable, "cannot start {num_threads} threads for the threads backend: {e}"))
}

/// Blocks (or tiles) one thread ran, on a cache line of its own (each worker bumps only its
/// own, once a block: no line bounces between workers).
#[repr(align(64))]
#[derive(Default)]
struct WorkCount(AtomicU64);

/// Where the work of a session went: per pool worker, and last the calling thread (one-block
/// loops run there without waking the pool). Reported by `op_timing_output`, so a run (under
/// MPI, each process) shows that its threads really ran blocks.
struct WorkCounts(Vec<WorkCount>);

impl WorkCounts {
    fn new(num_threads: usize) -> WorkCounts {
        WorkCounts((0..=num_threads).map(|_| WorkCount::default()).collect())
    }

    /// One more block for the current thread: its index among `pool`'s workers, else (not one
    /// of them) the calling slot.
    fn bump(&self, pool: &rayon::ThreadPool) {
        let last = self.0.len() - 1;
        let i = pool.current_thread_index().filter(|&i| i < last).unwrap_or(last);
        self.0[i].0.fetch_add(1, Ordering::Relaxed);
    }

    fn get(&self) -> Vec<u64> {
        self.0.iter().map(|c| c.0.load(Ordering::Relaxed)).collect()
    }
}

pub struct Threads {
    pool: rayon::ThreadPool,
    work: WorkCounts,
    /// `FORK_GENERATION` when the pool was made.
    pool_generation: u64,
    /// `OP_PART_SIZE`, or None for `default_part_size`.
    part_size: Option<usize>,
    plans: PlanCache,
}

/// Pointers shared by the tasks of one parallel phase.
struct Shared<'a> {
    call: &'a LoopCall<'a>,
    pool: &'a rayon::ThreadPool,
    work: &'a WorkCounts,
    partials: &'a Partials,
    /// The first error of a block (the others still run: blocks are independent).
    error: &'a std::sync::Mutex<Option<crate::error::Op2Error>>,
}
// SAFETY: tasks only read `call` (its slot pointers are copied per task) and write disjoint
// regions of the partials and of the dats (the plan guarantees no two blocks of one colour
// write the same target; direct writes touch only the block's own elements).
unsafe impl Sync for Shared<'_> {}

impl Threads {
    pub fn new(num_threads: usize, part_size: Option<usize>) -> Result<Threads> {
        let pool_generation = fork_generation();
        let pool = build_pool(num_threads).map_err(|e| op2_err!(BackendUnavailable, "op_init: {}", e.message))?;
        let work = WorkCounts::new(pool.current_num_threads());
        Ok(Threads { pool, work, pool_generation, part_size, plans: PlanCache::new() })
    }

    /// After `fork()` the child has none of the pool's threads: a loop would wait for them for
    /// ever. Start a new pool of the same size; the old one is forgotten, not dropped (its
    /// threads and their locks exist only in the parent).
    fn ensure_pool_after_fork(&mut self, loop_name: &str) -> Result<()> {
        let now = FORK_GENERATION.load(Ordering::Relaxed);
        if now != self.pool_generation {
            let n = self.pool.current_num_threads();
            let pool = build_pool(n)
                .map_err(|e| op2_err!(BackendUnavailable, "op_par_loop '{loop_name}' after fork(): {}", e.message))?;
            std::mem::forget(std::mem::replace(&mut self.pool, pool));
            self.pool_generation = now;
        }
        Ok(())
    }

    pub fn num_threads(&self) -> usize {
        self.pool.current_num_threads()
    }
}

/// Runs block `b` = `[lo, hi)` with its own reduction slots.
fn run_block(sh: &Shared, b: usize, lo: usize, hi: usize) {
    sh.work.bump(sh.pool);
    let call = sh.call;
    let mut slots: Vec<*mut c_void> = call.slots.clone();
    for (r, red) in call.reductions.iter().enumerate() {
        slots[2 * red.arg] = sh.partials.ptr(b, r) as *mut c_void;
    }
    // SAFETY: slots are the driver's, with reductions redirected to this block's partials.
    if let Err(e) = unsafe { call.run_range(lo, hi, &mut slots) } {
        let mut first = sh.error.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(e);
    }
}

impl Backend for Threads {
    fn kind(&self) -> BackendKind {
        BackendKind::Threads
    }

    fn work_report(&self) -> Option<String> {
        let counts = self.work.get();
        let (caller, workers) = counts.split_last().unwrap_or((&0, &[]));
        let each: Vec<String> = workers.iter().map(|c| c.to_string()).collect();
        Some(format!(
            "{} thread{}, blocks run by each: {} (one-block loops on the calling thread: {caller})",
            workers.len(),
            if workers.len() == 1 { "" } else { "s" },
            each.join(" ")
        ))
    }

    fn compute(&mut self, call: &mut LoopCall, start: usize, end: usize) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        self.ensure_pool_after_fork(call.name)?;
        let ps = self.part_size.unwrap_or_else(|| default_part_size(call.set_size));
        let nblocks = (end - start).div_ceil(ps);
        let Some(partials) = Partials::new(&call.reductions, nblocks) else {
            return Err(op2_err!(
                OutOfMemory,
                "op_par_loop '{}': cannot allocate the reduction partials of {nblocks} blocks",
                call.name
            ));
        };
        let error = std::sync::Mutex::new(None);
        if nblocks == 1 {
            // One block: waking the pool (~10 µs) would cost more than the work; the result
            // is the same as on any thread.
            let sh = Shared { call, pool: &self.pool, work: &self.work, partials: &partials, error: &error };
            run_block(&sh, 0, start, end);
        } else if !call.needs_colouring() {
            let sh = Shared { call, pool: &self.pool, work: &self.work, partials: &partials, error: &error };
            self.pool.install(|| {
                (0..nblocks).into_par_iter().for_each(|b| {
                    let lo = start + b * ps;
                    run_block(&sh, b, lo, (lo + ps).min(end));
                })
            });
        } else {
            let args = call.plan_args();
            let req = PlanRequest {
                set: call.set.0 as u64,
                set_size: call.set_size,
                start,
                end,
                part_size: ps,
                staging: false,
                args: &args,
            };
            let plan = self.plans.get_or_build(&req).map_err(|e| {
                let code = if e.is_out_of_memory() { ErrorCode::OutOfMemory } else { ErrorCode::Internal };
                Op2Error::new(code, format!("op_par_loop '{}': execution plan: {e}", call.name))
            })?;
            let sh = Shared { call, pool: &self.pool, work: &self.work, partials: &partials, error: &error };
            self.pool.install(|| {
                for c in 0..plan.ncolours {
                    plan.colour_blocks(c).par_iter().for_each(|&b| {
                        let r = plan.block_range(b as usize);
                        // Plan blocks are numbered from `start` in steps of `ps`, like ours.
                        run_block(&sh, b as usize, r.start, r.end);
                    });
                }
            });
        }
        if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        partials.combine_into(&mut call.reductions, nblocks);
        Ok(())
    }

    fn compute_tiled(&mut self, calls: &mut [LoopCall], tiling: &crate::plan::tiling::Tiling) -> Result<()> {
        self.tiled(calls, tiling)
    }
}

/// What every task of a tiled chain shares: the loops' calls, each loop's per-tile reduction
/// partials, the tiling, and the first error.
struct TiledShared<'s, 'c> {
    calls: &'s [LoopCall<'c>],
    pool: &'s rayon::ThreadPool,
    work: &'s WorkCounts,
    partials: &'s [Partials],
    tiling: &'s crate::plan::tiling::Tiling,
    error: &'s std::sync::Mutex<Option<Op2Error>>,
}

// SAFETY: tasks read the calls (their pointers address data that the tiles of one level touch
// without conflict: no element is written by one tile and touched by another of its level) and
// write only their own tile's partials.
unsafe impl Sync for TiledShared<'_, '_> {}

/// Runs tile `t`: each loop's runs in it, in chain order, reductions into the tile's partials.
fn run_tile(sh: &TiledShared, t: usize) {
    sh.work.bump(sh.pool);
    for (l, call) in sh.calls.iter().enumerate() {
        let runs = &sh.tiling.runs[l][t];
        if runs.is_empty() {
            continue;
        }
        let mut slots: Vec<*mut c_void> = call.slots.clone();
        for (r, red) in call.reductions.iter().enumerate() {
            slots[2 * red.arg] = sh.partials[l].ptr(t, r) as *mut c_void;
        }
        let list = sh.tiling.list(l, t);
        // SAFETY: the driver's slots with reductions redirected to this tile's partials; the
        // runs (and the tiling's list of them) lie in the loop's set.
        if let Err(e) = unsafe { call.run_runs(runs, list, &mut slots) } {
            let mut first = sh.error.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert(e);
            return;
        }
    }
}

impl Threads {
    /// A tiled chain by levels: the tiles of a level at once, levels in order; each loop's
    /// reductions combined over tiles in tile order (the result depends on the tiling only).
    fn tiled(&mut self, calls: &mut [LoopCall], tiling: &crate::plan::tiling::Tiling) -> Result<()> {
        let Some(first) = calls.first() else { return Ok(()) };
        self.ensure_pool_after_fork(first.name)?;
        let mut partials = Vec::with_capacity(calls.len());
        for c in calls.iter() {
            match Partials::new(&c.reductions, tiling.tiles) {
                Some(p) => partials.push(p),
                None => {
                    return Err(op2_err!(
                        OutOfMemory,
                        "op_par_loop '{}': cannot allocate the reduction partials of {} tiles",
                        c.name,
                        tiling.tiles
                    ))
                }
            }
        }
        let levels = tiling.levels()?;
        let error = std::sync::Mutex::new(None);
        {
            let sh =
                TiledShared { calls, pool: &self.pool, work: &self.work, partials: &partials, tiling, error: &error };
            self.pool.install(|| {
                for level in &levels {
                    if level.len() == 1 {
                        run_tile(&sh, level[0] as usize);
                    } else {
                        level.par_iter().for_each(|&t| run_tile(&sh, t as usize));
                    }
                }
            });
        }
        if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        for (c, p) in calls.iter_mut().zip(&partials) {
            p.combine_into(&mut c.reductions, tiling.tiles);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{default_part_size, WorkCounts};

    #[test]
    fn work_counts_go_to_the_worker_that_ran_or_to_the_caller() {
        let pool = super::build_pool(3).unwrap();
        let work = WorkCounts::new(pool.current_num_threads());
        // Every worker once, worker 1 twice more; the test thread (no pool) twice.
        pool.broadcast(|b| {
            work.bump(&pool);
            if b.index() == 1 {
                work.bump(&pool);
                work.bump(&pool);
            }
        });
        work.bump(&pool);
        work.bump(&pool);
        assert_eq!(work.get(), vec![1, 3, 1, 2]);
        // A worker of another pool is not one of ours: it counts as a caller.
        let other = super::build_pool(2).unwrap();
        other.broadcast(|_| work.bump(&pool));
        assert_eq!(work.get(), vec![1, 3, 1, 4]);
    }

    #[test]
    fn default_part_size_follows_the_set_not_the_threads() {
        assert_eq!(default_part_size(0), 256);
        assert_eq!(default_part_size(10_000), 256);
        assert_eq!(default_part_size(45_000), 512);
        assert_eq!(default_part_size(89_650), 1024);
        assert_eq!(default_part_size(720_000), 8192);
        assert_eq!(default_part_size(1_438_600), 8192);
    }
}
