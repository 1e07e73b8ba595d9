//! Runs a queue of loops (lazy evaluation, a loop chain) on a device backend (`opencl`, `cuda`)
//! with fewer launches: consecutive loops over one set whose dependencies are all direct
//! (`plan::tiling::fusable`) and that have nothing to colour, reduce or assemble
//! (`backend::device::codegen::fusable_part`: no write through a map, no global reduction, no matrix) run
//! as one generated kernel launch, each element running every loop's kernel in turn
//! (`backend::device::codegen::generate_fused`). A loop with a global reduction is never fused (its
//! partials belong to its own launch): it ends a group and runs alone. Sparse tiling stays on the
//! host backends: a device runs each group, or loop, over the whole set.
//!
//! Each group's unit is generated once per shape of its loops and cached here (`Lazy::device_fused`)
//! and by the backend (programs by source, binaries in the disk cache); `OP2_DUMP_SOURCE`
//! writes it. A unit that does not compile (two kernels or helpers of one name) runs its loops
//! unfused, as on the host. Everything else is the driver's per loop: checks, residency moves (in
//! loop order, so a dat an earlier loop of the group overwrites is not uploaded for a later one),
//! hand-back, timing records (each loop counts its call and bytes; the fused launches' time is
//! the chain's row in `op_timing_output`).

use crate::arg::{ArgDesc, BoundArg};
use crate::backend::LoopCall;
use crate::codegen::{ConstDecl, LoopSignature};
use crate::context::Context;
use crate::error::{ErrorCode, Op2Error, Result};
use crate::exec;
use crate::exec::par_loop::{DeviceFused, ParLoop};
use crate::plan::tiling::{self, ChainLoop};
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A failure while running a queue: the error, the loop (or fused loops, joined by `+`) it
/// belongs to, and how many queued loops after it were dropped.
pub struct Failed {
    pub error: Op2Error,
    pub name: String,
    pub dropped: usize,
}

/// Whether `queue` runs here: a device backend with fusion on (`OP2_FUSE`, on by default for
/// devices), two or more loops, one process, no validation.
pub fn fuses(ctx: &Context, queue: &[ParLoop]) -> bool {
    ctx.backend.is_device()
        && ctx.config.fuse_device
        && queue.len() >= 2
        && !ctx.comm.distributed()
        && !ctx.comm.partitioned
        && !ctx.config.validate
}

/// Whether loop `l` may be part of a fused unit: compiled, no matrix or synthetic index map,
/// `fusable_part` arguments, and no `op_arg_idx` on a set `op_renumber` reordered (the device
/// backends translate those through per-loop tables).
fn part_ok(ctx: &Context, l: &ParLoop) -> bool {
    let renumbered = |a: (&ArgDesc, &BoundArg)| match a {
        (ArgDesc::Idx { .. }, BoundArg::Idx { map }) => {
            let target = map.map_or(l.set, |m| ctx.maps[m.0 as usize].to);
            ctx.sets[target.0 as usize].order.is_some()
        }
        _ => false,
    };
    l.compiled.is_some()
        && l.synth.is_empty()
        && l.mat_slots.is_empty()
        && crate::backend::device::codegen::fusable_part(&l.shape.args)
        && !l.shape.args.iter().zip(&l.bound).any(renumbered)
}

/// The queue's groups, in order: maximal runs of consecutive loops over one set, each `part_ok`,
/// each `fusable` with every earlier member (two or more loops: one launch), and single loops.
/// `loops` describes the queue's loops (`exec::chain`'s chain description).
pub fn groups(ctx: &Context, queue: &[ParLoop], loops: &[ChainLoop]) -> Vec<Range<usize>> {
    let ok: Vec<bool> = queue.iter().map(|l| part_ok(ctx, l)).collect();
    let mut out = Vec::new();
    let mut start = 0;
    for j in 1..queue.len() {
        let joins = ok[start]
            && ok[j]
            && queue[j].set == queue[start].set
            && (start..j).all(|k| tiling::fusable(&loops[k], &loops[j]));
        if !joins {
            out.push(start..j);
            start = j;
        }
    }
    if !queue.is_empty() {
        out.push(start..queue.len());
    }
    out
}

/// Runs `queue` (the chain `name`) in order on behalf of `call`, in `groups`: each group of two
/// or more loops as one launch (unfused if its unit does not compile), every other loop as the
/// driver runs it. A failing loop or unit is the error, with its name and the loops dropped
/// after it.
pub fn run(
    ctx: &mut Context,
    queue: Vec<ParLoop>,
    groups: Vec<Range<usize>>,
    name: &str,
    call: &str,
) -> std::result::Result<(), Failed> {
    let total = queue.len();
    let described: Vec<String> =
        groups.iter().map(|g| queue[g.clone()].iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join("+")).collect();
    let mut fused_time: Option<(Duration, u64)> = None;
    let mut launches_fused = 0usize;
    let mut it = queue.into_iter();
    for g in groups {
        let loops: Vec<ParLoop> = it.by_ref().take(g.len()).collect();
        let dropped = total - g.end;
        if loops.len() >= 2 {
            if let Some(unit) = unit(ctx, &loops, name) {
                match run_fused(ctx, &loops, &unit, name, call) {
                    Ok(Some((t, bytes))) => {
                        let f = fused_time.get_or_insert((Duration::ZERO, 0));
                        f.0 += t;
                        f.1 += bytes;
                        launches_fused += 1;
                        continue;
                    }
                    Ok(None) => {}
                    Err(error) => {
                        let gname = loops.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join("+");
                        return Err(Failed { error, name: gname, dropped });
                    }
                }
            }
        }
        let n = loops.len();
        for (k, l) in loops.into_iter().enumerate() {
            let lname = l.name.clone();
            if let Err(error) = l.compute(ctx) {
                return Err(Failed { error, name: lname, dropped: dropped + n - k - 1 });
            }
        }
    }
    if let Some((time, bytes)) = fused_time {
        let row = ctx.timings.entry(name);
        row.calls += 1;
        row.time += time;
        row.bytes += bytes;
        if row.members.is_none() {
            row.members = Some(format!(
                "{} (on {}: {launches_fused} fused launch{} of the groups joined by '+', the rest one launch a loop; the row's time is the fused launches')",
                described.join(" "),
                ctx.backend.kind().name(),
                if launches_fused == 1 { "" } else { "es" }
            ));
        }
    }
    Ok(())
}

/// The fused unit of `loops` (cached per their shapes; `None` once it did not compile).
fn unit(ctx: &mut Context, loops: &[ParLoop], chain: &str) -> Option<Arc<DeviceFused>> {
    let shapes: Vec<crate::exec::loop_cache::LoopShape> = loops.iter().map(|l| l.shape.clone()).collect();
    if let Some(u) = ctx.lazy.device_fused.get(&shapes) {
        return u.clone();
    }
    let mut consts: Vec<ConstDecl> =
        loops.iter().filter_map(|l| l.compiled.as_ref()).flat_map(|c| c.consts.iter().cloned()).collect();
    consts.sort_by(|a, b| a.name.cmp(&b.name));
    consts.dedup_by(|a, b| a.name == b.name);
    let u = Arc::new(DeviceFused { consts });
    if ctx.config.diags >= 2 {
        let names: Vec<&str> = loops.iter().map(|l| l.name.as_str()).collect();
        crate::core::output::print_after_c_stdio(&format!(
            "op2: {chain}: on {}, loops '{}' run fused as one launch\n",
            ctx.backend.kind().name(),
            names.join("' + '")
        ));
    }
    ctx.lazy.device_fused.insert(shapes, Some(u.clone()));
    Some(u)
}

/// Runs `loops` as one launch of `unit`: each loop's checks and residency moves in order, the
/// launch, then each loop's hand-back and record. Returns the launch's time and the loops' bytes,
/// or `None` when the unit does not compile (recorded: its loops then run unfused, now and
/// later; the dats' residency is as before).
fn run_fused(
    ctx: &mut Context,
    loops: &[ParLoop],
    unit: &Arc<DeviceFused>,
    chain: &str,
    call: &str,
) -> Result<Option<(Duration, u64)>> {
    let halo_before = (ctx.comm.halo_time, ctx.comm.halo_bytes, ctx.comm.messages);
    let mut compiled = Vec::with_capacity(loops.len());
    for l in loops {
        let Some(c) = l.compiled.clone() else {
            crate::op2_bail!(Internal, "{call}: op_par_loop '{}' was queued without its code", l.name);
        };
        exec::check(ctx, l.shape.kernel, &l.name, &l.bound, &c)?;
        compiled.push(c);
    }
    let bytes: Vec<u64> = loops.iter().map(|l| exec::bytes_moved(ctx, &l.shape.args, &l.bound, l.set)).collect();
    let const_epoch = ctx.const_epoch;
    let gname = loops.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join("+");
    let Context { sets, maps, dats, backend, comm, timings, kernels, consts, mats, .. } = ctx;
    // Residency in loop order: each loop's moves see the state the loops before it leave.
    let mut before: Vec<(crate::core::DatId, crate::core::residency::Residency)> = Vec::new();
    for l in loops {
        for (d, _, _, _) in l.dat_args() {
            if !before.iter().any(|b| b.0 == d) {
                before.push((d, dats[d.0 as usize].residency));
            }
        }
    }
    for l in loops {
        exec::move_to_device(&l.name, backend.as_mut(), dats, &l.shape.args, &l.bound)?;
        for (d, _, _, acc) in l.dat_args() {
            let dv = &mut dats[d.0 as usize];
            dv.residency = crate::core::residency::after_loop(dv.residency, acc.writes());
        }
    }
    let set = loops[0].set;
    let mut descs: Vec<ArgDesc> = Vec::new();
    let mut bound: Vec<BoundArg> = Vec::new();
    let mut slots = Vec::new();
    let mut indirect = Vec::new();
    for l in loops {
        l.restore_seeds();
        let p = exec::bind_pointers(&l.name, set, &l.shape.args, &l.bound, &[], &[], sets, maps, dats, mats, comm)?;
        let off = descs.len();
        slots.extend_from_slice(&p.slots[..2 * l.shape.args.len()]);
        indirect.extend(p.indirect.into_iter().map(|mut a| {
            a.arg += off;
            a
        }));
        descs.extend_from_slice(&l.shape.args);
        bound.extend_from_slice(&l.bound);
    }
    slots.push(std::ptr::null_mut());
    let parts: Vec<LoopSignature> = loops
        .iter()
        .zip(&compiled)
        .map(|(l, c)| {
            let k = &kernels[l.shape.kernel.0 as usize];
            LoopSignature {
                loop_name: &l.name,
                kernel_name: &k.name,
                kernel_source: &k.source,
                kernel_origin: &c.origin,
                args: &l.shape.args,
                consts: &c.consts,
            }
        })
        .collect();
    let knames = parts.iter().map(|p| p.kernel_name).collect::<Vec<_>>().join("+");
    let sig = LoopSignature {
        loop_name: &gname,
        kernel_name: &knames,
        kernel_source: "",
        kernel_origin: "",
        args: &descs,
        consts: &unit.consts,
    };
    let const_values: Vec<&[u8]> = unit.consts.iter().map(|c| consts[&c.name].data.as_slice()).collect();
    let size = sets[set.0 as usize].size;
    let mut lc = LoopCall {
        sig: Some(sig),
        parts,
        const_values,
        shape_key: Arc::as_ptr(unit) as usize,
        const_epoch,
        bound: &bound,
        maps: exec::arg_maps(&bound, &[], maps),
        name: &gname,
        set,
        set_size: size,
        lib: &compiled[0].lib,
        descs: &descs,
        slots,
        scratch_entries: 0,
        reductions: Vec::new(),
        indirect,
        dat_names: exec::dat_names(&bound, dats),
    };
    let started = Instant::now();
    let r = backend.compute(&mut lc, 0, size);
    let elapsed = started.elapsed();
    drop(lc);
    match r {
        Ok(()) => {}
        Err(e) if e.code == ErrorCode::Compile => {
            for (d, r) in before {
                dats[d.0 as usize].residency = r;
            }
            if ctx.config.diags >= 2 {
                crate::core::output::print_after_c_stdio(&format!(
                    "op2: {chain}: fused loops '{}': not fused: {}\n",
                    gname.replace('+', "' + '"),
                    e.message
                ));
            }
            let shapes: Vec<crate::exec::loop_cache::LoopShape> = loops.iter().map(|l| l.shape.clone()).collect();
            ctx.lazy.device_fused.insert(shapes, None);
            return Ok(None);
        }
        Err(e) => {
            return Err(Op2Error::new(e.code, format!("{}; the fused loops' dats are partly updated", e.message)))
        }
    }
    let halo = halo_before;
    for ((l, c), b) in loops.iter().zip(&compiled).zip(&bytes) {
        exec::hand_back(dats, &l.shape.args, &l.bound, true, Vec::new(), Vec::new(), &[]);
        exec::record(timings, comm, &l.name, &c.lib, Duration::ZERO, l.jit_time, *b, halo);
        c.ran.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(Some((elapsed, bytes.iter().sum())))
}
