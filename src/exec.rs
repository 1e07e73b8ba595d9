//! The `op_par_loop` driver: the only code that knows the order of phases.
//!
//! For every loop, whatever the backend: bind and check the arguments; find (or generate and
//! compile) the loop's code; then, as in `mpi-halos.txt`: halo exchange begin, compute the core
//! section, halo exchange end, compute the owned section, reductions begin, compute the exec
//! halo (only if some indirect dat is written), reductions end, mark written dats' halos dirty
//! (matrix arguments are assembled element by element, in the loop), and finally hand global results to the caller. A loop that
//! fails before the end leaves the caller's globals untouched.

use crate::arg::{self, Access, ArgDesc, BoundArg, DatAccess, RawArg};
use crate::backend::{Backend, IndirectArg, LoopCall, Reduction};
use crate::codegen::{host, ConstDecl, LoopSignature};
use crate::context::Context;
use crate::core::residency;
use crate::core::{Dat, DatId, KernelId, MapId, SetId};
use crate::error::Result;
use crate::jit::HostLibrary;
use crate::op2_bail;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A compiled loop, the constants it loads, and what the driver needs to know about its shape.
pub struct CompiledLoop {
    pub lib: Arc<HostLibrary>,
    /// The constants the kernel uses, in the order the library loads them.
    pub consts: Vec<ConstDecl>,
    /// The kernel's `#line` origin (device backends generate their own code with it).
    pub origin: String,
    /// Whether some indirect dat is written, so the exec halo must be computed (MPI).
    pub needs_exec_halo: bool,
}

/// One compiled shape of a kernel: descriptors, constant-shape epoch, code.
type LoopEntry = (Vec<ArgDesc>, u64, Arc<CompiledLoop>);

/// Compiled loops by shape. What selects one: the kernel, the argument descriptors and the
/// shape of the constant table; never data, sizes or addresses. Looked up per kernel by
/// comparing descriptor slices, so a call allocates nothing to find its code.
#[derive(Default)]
pub struct LoopCache {
    map: HashMap<KernelId, Vec<LoopEntry>>,
}

impl LoopCache {
    pub fn len(&self) -> usize {
        self.map.values().map(Vec::len).sum()
    }

    fn get(&self, kernel: KernelId, args: &[ArgDesc], epoch: u64) -> Option<&Arc<CompiledLoop>> {
        self.map.get(&kernel)?.iter().find(|(a, e, _)| *e == epoch && a.as_slice() == args).map(|(_, _, c)| c)
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Generates the host source for a loop, given the kernel's `#line` origin and the constants
/// it uses (also used by `generate`-only callers, e.g. source dumps).
pub fn generate(
    ctx: &Context,
    kernel: KernelId,
    name: &str,
    descs: &[ArgDesc],
    origin: &str,
    consts: &[ConstDecl],
) -> String {
    let k = &ctx.kernels[kernel.0 as usize];
    let sig = LoopSignature {
        loop_name: name,
        kernel_name: &k.name,
        kernel_source: &k.source,
        kernel_origin: origin,
        args: descs,
        consts,
    };
    let simd = match ctx.config.simd {
        crate::config::SimdMode::Off => None,
        mode => Some((mode, ctx.config.simd_len)),
    };
    host::generate_with(&sig, simd)
}

fn compiled(
    ctx: &mut Context,
    kernel: KernelId,
    name: &str,
    descs: &[ArgDesc],
    bound: &[BoundArg],
) -> Result<(Arc<CompiledLoop>, Duration)> {
    if let Some(c) = ctx.loops.get(kernel, descs, ctx.const_shape_epoch) {
        return Ok((c.clone(), Duration::ZERO));
    }
    let t = Instant::now();
    let k = &ctx.kernels[kernel.0 as usize];
    if let Err(m) = crate::codegen::check_params(&k.definition, &k.name, descs) {
        let arg = match (descs.get(m.arg), bound.get(m.arg)) {
            (Some(d), Some(BoundArg::Dat { dat, .. })) => {
                format!(", arg {} (dat '{}', {})", m.arg, ctx.dats[dat.0 as usize].name, host::describe(d))
            }
            (Some(d), _) => format!(", arg {} ({})", m.arg, host::describe(d)),
            _ => String::new(),
        };
        op2_bail!(Compile, "op_par_loop '{name}'{arg}: {}", m.message);
    }
    let jit_before = (ctx.jit.stats.compiles, ctx.jit.stats.disk_hits, ctx.jit.stats.pack_loads);
    let origin = ctx.kernels[kernel.0 as usize].line_origin();
    let consts = ctx.consts_used_by(kernel);
    let source = generate(ctx, kernel, name, descs, &origin, &consts);
    let kname = &ctx.kernels[kernel.0 as usize].name;
    let what = format!("op_par_loop '{name}' (kernel '{kname}')");
    let lib = ctx.jit.host_library(&source, &what, name)?;
    // Static generation writes the code of loops that compile.
    if let Some(dir) = &ctx.config.generate_dir {
        let k = &ctx.kernels[kernel.0 as usize];
        let values: Vec<&[u8]> = consts.iter().map(|c| ctx.consts[&c.name].data.as_slice()).collect();
        let sig = LoopSignature {
            loop_name: name,
            kernel_name: &k.name,
            kernel_source: &k.source,
            kernel_origin: &origin,
            args: descs,
            consts: &consts,
        };
        let coloured = descs.iter().any(|d| d.needs_colouring());
        crate::generate::write(
            dir,
            &ctx.config.generate_targets,
            &sig,
            &values,
            coloured,
            &ctx.config.cflags,
            &source,
        )?;
    }
    // Matrix arguments too: under MPI a process assembles its owned rows from its owned and
    // exec-halo elements (redundantly, with no communication at assembly).
    let needs_exec_halo = descs.iter().any(|d| {
        (d.is_indirect() && matches!(d, ArgDesc::Dat { acc, .. } if acc.writes())) || matches!(d, ArgDesc::Mat { .. })
    });
    let c = Arc::new(CompiledLoop { lib, consts, origin, needs_exec_halo });
    ctx.loops.map.entry(kernel).or_default().push((descs.to_vec(), ctx.const_shape_epoch, c.clone()));
    ctx.diags_loop_shape(name, kernel, jit_before, t.elapsed(), c.lib.simd.refused.as_deref());
    Ok((c, t.elapsed()))
}

/// Runs one parallel loop.
pub fn par_loop(ctx: &mut Context, kernel: KernelId, name: &str, set: SetId, raw: &[RawArg]) -> Result<()> {
    if ctx.comm.check {
        ctx.comm.check_call(&format!("op_par_loop '{name}'"))?;
    }
    if ctx.comm.distributed() && !ctx.comm.partitioned {
        // An MPI program that never called op_partition runs on its declared blocks.
        crate::mpi::dist::partition(ctx, "BLOCK", None, None, None, None)?;
    }
    let halo_before = (ctx.comm.halo_time, ctx.comm.halo_bytes, ctx.comm.messages);
    let (mut descs, bound) = arg::bind(ctx, name, set, raw)?;
    let mut synth: Vec<Option<(usize, Arc<Vec<i32>>)>> = vec![None; descs.len()];
    ctx.diags_check_loop(name, set, &descs, &bound)?;
    // op_arg_idx under MPI on a device: the original global indices come from a map holding
    // them (the element's own, or map[e][*] translated), which device code reads like any map.
    if ctx.backend.is_device() && ctx.comm.partitioned {
        for (i, b) in bound.iter().enumerate() {
            if let (ArgDesc::Idx { map_dim, idx }, BoundArg::Idx { map }) = (descs[i], *b) {
                let k = crate::mpi::dist::global_index_map(ctx, set, map)?;
                synth[i] = Some((k, ctx.comm.idx_maps[k].2.clone()));
                descs[i] =
                    ArgDesc::Idx { map_dim: Some(map_dim.unwrap_or(1)), idx: if map.is_some() { idx } else { 0 } };
            }
        }
    }
    let mat_slots = crate::mat::loops::slot_tables(ctx, name, &descs, &bound)?;
    let (compiled, jit_time) = compiled(ctx, kernel, name, &descs, &bound)?;
    let lib: &HostLibrary = &compiled.lib;
    // `check` is the promise checks over the validation wrapper: it always validates, so a
    // kernel that reads an OP_WRITE-only argument is caught there too.
    let validate = ctx.config.validate || ctx.backend.kind() == crate::config::BackendKind::Check;
    if validate {
        // The reference reads host bytes: make them current before the loop moves anything.
        for b in &bound {
            if let BoundArg::Dat { dat, enabled: true, .. } = *b {
                ctx.sync_to_host(dat)?;
            }
        }
    }
    let rtol = ctx.config.validate_rtol;
    if lib.consts_fn.is_some() && lib.consts_epoch.load(std::sync::atomic::Ordering::Acquire) != ctx.const_epoch {
        let ptrs: Vec<*const c_void> =
            compiled.consts.iter().map(|c| ctx.consts[&c.name].data.as_ptr() as *const c_void).collect();
        lib.ensure_constants(ctx.const_epoch, &ptrs);
    }
    let bytes = bytes_moved(ctx, &descs, &bound, set);
    let device = ctx.backend.is_device();
    let const_epoch = ctx.const_epoch;
    let distributed = ctx.comm.distributed();
    // Halos to refresh: dats read through a map (or read directly when the exec halo runs)
    // whose halo copies are out of date. One exchange per loop, one message per neighbour.
    let mut halo_reads: Vec<DatId> = Vec::new();
    for (d, b) in descs.iter().zip(&bound) {
        if let (ArgDesc::Dat { acc, how, .. }, BoundArg::Dat { dat, enabled: true, .. }) = (d, b) {
            let through_halo = *how != DatAccess::Direct || compiled.needs_exec_halo;
            // OP_INC never reads the halo copies (their increments are discarded).
            let reads = matches!(acc, Access::Read | Access::Rw);
            if reads && through_halo && ctx.dats[dat.0 as usize].halo_dirty && !halo_reads.contains(dat) {
                halo_reads.push(*dat);
            }
        }
    }
    let mut refreshed: Vec<DatId> = Vec::new();
    if (device || validate) && ctx.comm.partitioned && !halo_reads.is_empty() {
        // Devices: the exchange goes through host memory before the loop (the owned rows come
        // down, the halo rows go up with the upload below), without overlap. Validation: the
        // reference must see the same halos as the loop.
        for &d in &halo_reads {
            ctx.host_data(d, true)?;
        }
        let ex = ctx.comm.halo_exchange_begin(&mut ctx.dats, std::mem::take(&mut halo_reads))?;
        refreshed = ctx.comm.halo_exchange_end(ex)?;
    }

    let Context { sets, maps, dats, backend, comm, timings, kernels, consts, mats, .. } = ctx;
    let s = &sets[set.0 as usize];
    if device {
        move_to_device(name, backend.as_mut(), dats, &descs, &bound)?;
    }
    let (core_end, owned_end, exec_end) = (s.core_end, s.size, s.exec_end);
    let exchange = comm.halo_exchange_begin(dats, halo_reads)?;

    // Bind pointers. Reductions get scratch buffers seeded with the caller's values.
    // Two slots per argument, then the scratch slot the backend fills (codegen::host's ABI).
    let mut slots: Vec<*mut c_void> = vec![std::ptr::null_mut(); 2 * descs.len() + 1];
    let mut reductions: Vec<Reduction> = Vec::new();
    let mut reduction_of_arg: Vec<Option<usize>> = vec![None; descs.len()];
    let mut indirect: Vec<IndirectArg> = Vec::new();
    for (i, (d, b)) in descs.iter().zip(&bound).enumerate() {
        match (*d, *b) {
            (ArgDesc::Dat { dim, ty, how, .. }, BoundArg::Dat { dat, map, enabled }) => {
                if !enabled {
                    continue;
                }
                slots[2 * i] = dats[dat.0 as usize].data.as_mut_ptr() as *mut c_void;
                if let Some(m) = map {
                    let mp = &maps[m.0 as usize];
                    slots[2 * i + 1] = mp.values.as_ptr() as *mut c_void;
                    indirect.push(IndirectArg {
                        arg: i,
                        dat,
                        map: m,
                        map_values: &mp.values,
                        map_dim: mp.dim,
                        idx: match how {
                            DatAccess::Indirect { idx, .. } => Some(idx),
                            _ => None,
                        },
                        to_size: sets[mp.to.0 as usize].total,
                        elem_bytes: dim * ty.size(),
                        needs_colouring: d.needs_colouring(),
                    });
                }
            }
            (ArgDesc::Gbl { acc: Access::Read, .. }, BoundArg::Gbl { ptr, .. }) => slots[2 * i] = ptr as *mut c_void,
            (ArgDesc::Gbl { ty, dim, acc }, BoundArg::Gbl { ptr, bytes }) => {
                reduction_of_arg[i] = Some(reductions.len());
                let mut r = seeded(name, i, ty, dim, acc, None, ptr, bytes)?;
                if distributed && acc == Access::Inc {
                    // Each process sums its own part from zero; the caller's value is added
                    // once, after the processes' sums are combined.
                    r.buf.iter_mut().for_each(|w| *w = 0);
                }
                reductions.push(r);
            }
            (ArgDesc::Info { ty, dim, reference }, BoundArg::Gbl { ptr, bytes }) => {
                reduction_of_arg[i] = Some(reductions.len());
                reductions.push(seeded(name, i, ty, dim, Access::Read, Some(reference), ptr, bytes)?);
            }
            (ArgDesc::Idx { .. }, BoundArg::Idx { .. }) if synth[i].is_some() => {
                if let Some((_, v)) = &synth[i] {
                    slots[2 * i + 1] = v.as_ptr() as *mut c_void;
                }
            }
            (ArgDesc::Mat { ty, .. }, BoundArg::Mat { mat, rowmap, ridx, .. }) => {
                let m = &mut mats.mats[mat.0 as usize];
                slots[2 * i] = m.values.as_mut_ptr() as *mut c_void;
                if let Some(t) = &mat_slots[i] {
                    slots[2 * i + 1] = t.as_ptr() as *mut c_void;
                }
                // Colouring on the row map: elements sharing a row never run at once.
                let mp = &maps[rowmap.0 as usize];
                indirect.push(IndirectArg {
                    arg: i,
                    dat: crate::mat::loops::pseudo_dat(mat),
                    map: rowmap,
                    map_values: &mp.values,
                    map_dim: mp.dim,
                    idx: ridx,
                    to_size: sets[mp.to.0 as usize].total,
                    elem_bytes: m.rdim * ty.size(),
                    needs_colouring: true,
                });
            }
            (ArgDesc::Idx { .. }, BoundArg::Idx { map }) => {
                // op_arg_idx gives declared indices: after op_renumber, the target set's
                // storage-to-declared table (old_of_new) in the even slot, else NULL.
                let target = map.map_or(set, |m| maps[m.0 as usize].to);
                if let Some(l) = comm.layout(target) {
                    // Under MPI: local index -> original global index.
                    slots[2 * i] = l.gids.as_ptr() as *mut c_void;
                } else if let Some(o) = &sets[target.0 as usize].order {
                    slots[2 * i] = o.old_of_new.as_ptr() as *mut c_void;
                }
                if let Some(m) = map {
                    slots[2 * i + 1] = maps[m.0 as usize].values.as_ptr() as *mut c_void;
                }
            }
            _ => {}
        }
    }
    // An info payload follows its reference's reduction: translate arg positions to indices.
    for r in reductions.iter_mut() {
        if let Some(refarg) = r.follows {
            r.follows = reduction_of_arg[refarg];
        }
    }
    for r in reductions.iter_mut() {
        slots[2 * r.arg] = r.buf.as_mut_ptr() as *mut c_void;
    }
    let dat_names: Vec<&str> = bound
        .iter()
        .map(|b| match b {
            BoundArg::Dat { dat, .. } => dats[dat.0 as usize].name.as_str(),
            _ => "",
        })
        .collect();
    let scratch_entries = host::scratch_entries(&descs);
    let k = &kernels[kernel.0 as usize];
    // Device backends generate their own code from the signature, with the constants' values
    // (all worked out once per loop shape, in `compiled`).
    let sig = device.then(|| LoopSignature {
        loop_name: name,
        kernel_name: &k.name,
        kernel_source: &k.source,
        kernel_origin: &compiled.origin,
        args: &descs,
        consts: &compiled.consts,
    });
    let const_values: Vec<&[u8]> =
        if device { compiled.consts.iter().map(|c| consts[&c.name].data.as_slice()).collect() } else { Vec::new() };
    let arg_maps: Vec<Option<(MapId, &[i32])>> = bound
        .iter()
        .zip(&synth)
        .map(|(b, syn)| match (*b, syn) {
            (BoundArg::Idx { .. }, Some((k, v))) => Some((crate::mpi::dist::idx_map_id(*k), v.as_slice())),
            (BoundArg::Dat { map: Some(m), enabled: true, .. } | BoundArg::Idx { map: Some(m) }, _) => {
                Some((m, maps[m.0 as usize].values.as_slice()))
            }
            _ => None,
        })
        .collect();
    let mut call = LoopCall {
        sig,
        const_values,
        shape_key: Arc::as_ptr(&compiled) as usize,
        const_epoch,
        bound: &bound,
        maps: arg_maps,
        name,
        set,
        set_size: s.exec_end,
        lib,
        descs: &descs,
        slots,
        scratch_entries,
        reductions,
        indirect,
        dat_names,
    };

    // The reference runs the sections the loop runs (the exec halo only when it is needed).
    let run_end = if compiled.needs_exec_halo { exec_end } else { owned_end };
    let reference = if validate { Some(crate::validate::reference(&call, dats, run_end)?) } else { None };
    let t = Instant::now();
    backend.compute(&mut call, 0, core_end)?;
    refreshed.extend(comm.halo_exchange_end(exchange)?);
    backend.compute(&mut call, core_end, owned_end)?;
    // Reductions cover core and owned only: their partials are taken before the exec halo runs.
    let partial = if distributed && !call.reductions.is_empty() { Some(call.reductions.clone()) } else { None };
    if compiled.needs_exec_halo {
        backend.compute(&mut call, owned_end, exec_end)?;
    }
    let downloaded = match &reference {
        Some(r) => crate::validate::compare(r, &call, backend.as_mut(), dats, rtol)?,
        None => Vec::new(),
    };
    if let Some(partial) = partial {
        for r in call.reductions.iter_mut() {
            if let BoundArg::Gbl { ptr, bytes } = bound[r.arg] {
                // SAFETY: as in `seeded`: the caller's global holds `bytes` bytes.
                unsafe { std::ptr::copy_nonoverlapping(ptr as *const u8, r.buf.as_mut_ptr() as *mut u8, bytes) };
            }
        }
        comm.reduce(&partial, &mut call.reductions)?;
    }
    let elapsed = t.elapsed();
    let reductions = std::mem::take(&mut call.reductions);
    drop(call);
    for (d, n) in downloaded {
        dats[d.0 as usize].to_host += n;
    }

    for d in refreshed {
        dats[d.0 as usize].halo_dirty = false;
    }
    if device {
        for (d, b) in descs.iter().zip(&bound) {
            if let (ArgDesc::Dat { acc, .. }, BoundArg::Dat { dat, enabled: true, .. }) = (d, b) {
                let dv = &mut dats[dat.0 as usize];
                dv.residency = residency::after_loop(dv.residency, acc.writes());
            }
        }
    }
    // Halos of written dats are out of date now (the MPI layer exchanges them on next read).
    for (d, b) in descs.iter().zip(&bound) {
        if let (ArgDesc::Dat { acc, .. }, BoundArg::Dat { dat, enabled: true, .. }) = (d, b) {
            if acc.writes() {
                dats[dat.0 as usize].halo_dirty = true;
            }
        }
    }
    // Matrices were assembled element by element. Hand results to the caller.
    for r in &reductions {
        if let BoundArg::Gbl { ptr, bytes } = bound[r.arg] {
            // SAFETY: ptr is the caller's global of `bytes` bytes (op_arg_gbl's contract) and
            // the scratch holds at least as many.
            unsafe { std::ptr::copy_nonoverlapping(r.buf.as_ptr() as *const u8, ptr, bytes) };
        }
    }
    let st = timings.entry(name);
    if st.simd.is_none() {
        st.simd = Some(lib.simd.clone());
    }
    st.calls += 1;
    st.time += elapsed;
    st.jit_time += jit_time;
    st.bytes += bytes;
    st.halo_time += comm.halo_time.saturating_sub(halo_before.0);
    st.halo_bytes += comm.halo_bytes - halo_before.1;
    st.halo_messages += comm.messages - halo_before.2;
    Ok(())
}

/// Before a loop on a device backend: every dat it uses gets a current device copy, uploaded
/// unless the loop overwrites it whole (only direct OP_WRITE arguments on it; one process, so
/// every section of the set is run).
fn move_to_device(
    name: &str,
    backend: &mut dyn Backend,
    dats: &mut [Dat],
    descs: &[ArgDesc],
    bound: &[BoundArg],
) -> Result<()> {
    for (i, b) in bound.iter().enumerate() {
        let BoundArg::Dat { dat, enabled: true, .. } = *b else { continue };
        if bound[..i].iter().any(|p| matches!(p, BoundArg::Dat { dat: q, enabled: true, .. } if *q == dat)) {
            continue; // decided at its first argument
        }
        let overwrites_all = descs.iter().zip(bound).all(|(d, p)| match (d, p) {
            (ArgDesc::Dat { acc, how, optional, .. }, BoundArg::Dat { dat: q, .. }) if *q == dat => {
                *acc == Access::Write && *how == DatAccess::Direct && !optional
            }
            _ => true,
        });
        let dv = &mut dats[dat.0 as usize];
        let named = |e: crate::error::Op2Error| {
            crate::error::Op2Error::new(e.code, format!("op_par_loop '{name}', dat '{}': {}", dv.name, e.message))
        };
        match residency::before_loop(dv.residency, overwrites_all) {
            residency::Before::Nothing => {}
            residency::Before::Allocate => {
                backend.alloc(dat, crate::backend::DatShape::of(dv), dv.data.as_slice().len()).map_err(named)?
            }
            residency::Before::Upload => {
                backend.upload(dat, crate::backend::DatShape::of(dv), dv.data.as_slice()).map_err(named)?;
                dv.to_device += dv.data.as_slice().len() as u64;
            }
        }
    }
    Ok(())
}

/// A reduction's scratch, seeded with the caller's values; a scratch that cannot be allocated
/// is `OP2_ERR_OUT_OF_MEMORY`.
#[allow(clippy::too_many_arguments)]
fn seeded(
    name: &str,
    arg: usize,
    ty: crate::core::ElemType,
    dim: usize,
    acc: Access,
    follows: Option<usize>,
    ptr: *mut u8,
    bytes: usize,
) -> Result<Reduction> {
    let words = bytes.div_ceil(8).max(1);
    let mut buf: Vec<u64> = Vec::new();
    if buf.try_reserve_exact(words).is_err() {
        op2_bail!(
            OutOfMemory,
            "op_par_loop '{name}', arg {arg}: cannot allocate {bytes} bytes for the global's scratch"
        );
    }
    buf.resize(words, 0);
    // SAFETY: the caller's global holds `bytes` bytes (op_arg_gbl's contract); buf holds more.
    unsafe { std::ptr::copy_nonoverlapping(ptr as *const u8, buf.as_mut_ptr() as *mut u8, bytes) };
    Ok(Reduction { arg, ty, dim, acc, follows, buf })
}

/// Bytes a call moves: direct data per element; indirect data once per distinct target
/// (through the columns used of each (dat, map) pair); each map used once; data both read and
/// written counts twice. Globals are negligible.
fn bytes_moved(ctx: &Context, descs: &[ArgDesc], bound: &[BoundArg], set: SetId) -> u64 {
    let n = ctx.sets[set.0 as usize].size as u64;
    let mut total = 0u64;
    let mut pairs: Vec<(DatId, crate::core::MapId, Option<usize>, u64)> = Vec::new();
    let mut maps_seen: Vec<crate::core::MapId> = Vec::new();
    for (d, b) in descs.iter().zip(bound) {
        let (ArgDesc::Dat { ty, dim, acc, how, .. }, BoundArg::Dat { dat, map, enabled: true }) = (d, b) else {
            continue;
        };
        let factor = if acc.reads() && acc.writes() { 2 } else { 1 };
        let eb = (dim * ty.size()) as u64;
        match (how, map) {
            (DatAccess::Direct, _) | (_, None) => total += n * eb * factor,
            (_, Some(m)) => {
                if !maps_seen.contains(m) {
                    maps_seen.push(*m);
                    total += n * ctx.maps[m.0 as usize].dim as u64 * 4;
                }
                let col = match how {
                    DatAccess::Indirect { idx, .. } => Some(*idx),
                    _ => None,
                };
                match pairs.iter_mut().find(|p| p.0 == *dat && p.1 == *m) {
                    Some(p) => {
                        if p.2 != col {
                            p.2 = None;
                        }
                        p.3 = p.3.max(eb * factor);
                    }
                    None => pairs.push((*dat, *m, col, eb * factor)),
                }
            }
        }
    }
    for (_, m, col, eb) in pairs {
        let map = &ctx.maps[m.0 as usize];
        total += map.distinct_targets(col, ctx.sets[map.to.0 as usize].total) as u64 * eb;
    }
    total
}
