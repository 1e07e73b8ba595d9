//! The `op_par_loop` driver: the only code that knows the order of phases.
//!
//! For every loop, whatever the backend: bind and check the arguments; find (or generate and
//! compile) the loop's code; then, as in `mpi-halos.txt`: halo exchange begin, compute the core
//! section, halo exchange end, compute the owned section, reductions begin, compute the exec
//! halo (only if some indirect dat is written), reductions end, mark written dats' halos dirty
//! (matrix arguments are assembled element by element, in the loop), and finally hand global results to the caller. A loop that
//! fails before the end leaves the caller's globals untouched.

pub mod chain;
pub mod device;
pub mod generate;
pub mod loop_cache;
pub mod par_loop;
pub mod validate;

use crate::arg::{self, Access, ArgDesc, BoundArg, DatAccess, RawArg};
use crate::backend::host::codegen as host;
use crate::backend::{Backend, IndirectArg, LoopCall, Reduction};
use crate::codegen::{ConstDecl, LoopSignature};
use crate::context::Context;
use crate::core::residency;
use crate::core::{Dat, DatId, KernelId, MapId, SetId};
use crate::error::{ErrorCode, Op2Error, Result};
use crate::exec::validate::IncRead;
use crate::jit::HostLibrary;
use crate::op2_bail;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::exec::loop_cache::{CompiledLoop, LoopCache, LoopShape};

/// A shape's signature as code generation takes it, with each used constant's current value
/// (device code compiles them in) and whether the loop is coloured.
fn signature<'c>(
    ctx: &'c Context,
    kernel: KernelId,
    name: &'c str,
    descs: &'c [ArgDesc],
    origin: &'c str,
    consts: &'c [ConstDecl],
) -> (LoopSignature<'c>, Vec<&'c [u8]>, bool) {
    let k = &ctx.kernels[kernel.0 as usize];
    let sig = LoopSignature {
        loop_name: name,
        kernel_name: &k.name,
        kernel_source: &k.source,
        kernel_origin: origin,
        args: descs,
        consts,
    };
    let values = consts.iter().map(|c| ctx.consts[&c.name].data.as_slice()).collect();
    (sig, values, descs.iter().any(|d| d.needs_colouring()))
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
    let (sig, _, _) = signature(ctx, kernel, name, descs, origin, consts);
    let simd = match ctx.config.simd {
        crate::config::SimdMode::Off => None,
        mode => Some((mode, ctx.config.simd_len.unwrap_or_else(|| host::simd::default_lanes(descs)))),
    };
    host::generate_with(&sig, simd)
}

/// Whether loops run also on the seq reference (`OP2_VALIDATE=1`, on any backend): the kernel
/// then runs twice per element (the reference, then the backend), and its side effects
/// (`printf`) happen twice. Otherwise every backend, `check` included, runs it once per
/// element.
fn validates(ctx: &Context) -> bool {
    ctx.config.validate
}

/// `OP2_VALIDATE=1` and the check backend: a kernel whose source reads an indirect OP_INC
/// argument (`validate::inc_read`) is refused before it runs, naming the loop, kernel, argument
/// and line (`OP2_ERR_VALIDATE`, or `OP2_ERR_CHECK` on check without `OP2_VALIDATE=1`).
/// The source is read once per loop shape (`CompiledLoop::inc_read`), not per call.
pub(crate) fn check_inc_reads(
    ctx: &Context,
    kernel: KernelId,
    name: &str,
    bound: &[BoundArg],
    found: Option<&IncRead>,
) -> Result<()> {
    let on_check = ctx.backend.kind() == crate::config::BackendKind::Check;
    if !ctx.config.validate && !on_check {
        return Ok(());
    }
    let k = &ctx.kernels[kernel.0 as usize];
    let Some(r) = found else {
        return Ok(());
    };
    let dat = match bound.get(r.arg) {
        Some(BoundArg::Dat { dat, .. }) => ctx.dats[dat.0 as usize].name.as_str(),
        _ => "",
    };
    let code = if ctx.config.validate { ErrorCode::Validate } else { ErrorCode::Check };
    Err(Op2Error::new(
        code,
        format!(
            "op_par_loop '{name}', arg {} (dat '{dat}'): kernel '{}' reads its indirect OP_INC parameter '{}' (line {} of its source); OP2 leaves its value undefined (devices pass a zero-staged copy, seq and threads the target's running sum), so results differ between backends: only add to it (+= or -=), or declare the argument OP_RW ({})",
            r.arg,
            k.name,
            r.param,
            r.line,
            if ctx.config.validate { "OP2_VALIDATE=1" } else { "check backend" }
        ),
    ))
}

/// The shape's compiled loop: from the session's cache, or generated, compiled (host code, when
/// the session needs it) and written out for `OP2_GENERATE`.
pub(crate) fn compiled(ctx: &mut Context, shape: &LoopShape, name: &str) -> Result<(Arc<CompiledLoop>, Duration)> {
    if let Some(c) = ctx.loops.get(shape) {
        return Ok((c.clone(), Duration::ZERO));
    }
    let t = Instant::now();
    let kernel = shape.kernel;
    let descs = &shape.args;
    let jit_before = (ctx.jit.stats.compiles, ctx.jit.stats.disk_hits, ctx.jit.stats.pack_loads);
    let origin = ctx.kernels[kernel.0 as usize].line_origin();
    let consts = ctx.consts_used_by(kernel);
    let source = generate(ctx, kernel, name, descs, &origin, &consts);
    let kname = &ctx.kernels[kernel.0 as usize].name;
    let what = format!("op_par_loop '{name}' (kernel '{kname}')");
    let lib = ctx.jit.host_library(&source, &what, name)?;
    // Static generation writes the code of loops that compile.
    if let Some(dir) = &ctx.config.generate_dir {
        let (sig, values, coloured) = signature(ctx, kernel, name, descs, &origin, &consts);
        // A loop whose kernel is compiled host code (a Fortran kernel, a function given by
        // address) has no device code: device backends refuse it.
        let k = &ctx.kernels[kernel.0 as usize];
        let host_only = crate::jit::fortran::is_stand_in(&k.source)
            || crate::backend::host::codegen::fptr::is_stand_in(&k.name, &k.source);
        let targets: Vec<crate::exec::generate::Target> = ctx
            .config
            .generate_targets
            .iter()
            .copied()
            .filter(|t| !host_only || *t == crate::exec::generate::Target::Host)
            .collect();
        crate::exec::generate::write(dir, &targets, &sig, &values, coloured, &ctx.config.cflags, &source)?;
    }
    // Matrix arguments too: under MPI a process assembles its owned rows from its owned and
    // exec-halo elements (redundantly, with no communication at assembly).
    let needs_exec_halo = descs.iter().any(|d| {
        (d.is_indirect() && matches!(d, ArgDesc::Dat { acc, .. } if acc.writes())) || matches!(d, ArgDesc::Mat { .. })
    });
    let k = &ctx.kernels[kernel.0 as usize];
    let inc_read = crate::exec::validate::inc_read(&k.source, &k.name, descs);
    let c = Arc::new(CompiledLoop { lib, consts, origin, needs_exec_halo, inc_read, ran: Default::default() });
    ctx.loops.insert(shape.clone(), c.clone());
    ctx.diags_loop_shape(name, kernel, jit_before, t.elapsed(), c.lib.simd.refused.as_deref());
    Ok((c, t.elapsed()))
}

/// Runs one parallel loop now, whatever checkpointing says.
pub fn run_loop(ctx: &mut Context, kernel: KernelId, name: &str, set: SetId, raw: &[RawArg]) -> Result<()> {
    ParLoop::bind(ctx, kernel, name, set, raw)?.compute(ctx)
}

/// One generated source of a loop for a target: the variant (cuda's `colour`, `blocks`,
/// `atomics`, each maybe `-soa`; `None` for a target with one form) and its text.
pub use crate::exec::generate::Generated;
pub use crate::exec::generate::Target;
pub use crate::exec::par_loop::{IdxMap, ParLoop};

impl ParLoop {
    /// Binds a loop: checks every argument against the loop and each other (`arg::bind`), the
    /// kernel's parameters against the descriptors (once per shape), and the promises of
    /// `OP2_DIAGNOSTICS` >= 3; prepares what the arguments need beyond their handles (matrix
    /// slot tables, original indices under MPI). Under MPI, collective, and the first loop of a
    /// program that never called `op_partition` partitions its declared blocks.
    pub fn bind(ctx: &mut Context, kernel: KernelId, name: &str, set: SetId, raw: &[RawArg]) -> Result<ParLoop> {
        if ctx.comm.distributed() && !ctx.comm.partitioned {
            // An MPI program that never called op_partition runs on its declared blocks (a
            // collective call of its own, entered as such).
            ctx.comm.enter(&format!("op_par_loop '{name}' (its implicit op_partition BLOCK)"), Ok(()))?;
            crate::mpi::dist::partition(ctx, None, "BLOCK", None, None, None, None)?;
        }
        let bound = arg::bind(ctx, name, set, raw)
            .and_then(|(descs, bound)| ctx.diags_check_loop(name, set, &descs, &bound).map(|_| (descs, bound)));
        // OP2_MPI_CHECK=1: the loop is entered like every collective call, after its own
        // argument checks, so an argument refused on one process is an error on all.
        let (mut descs, bound) =
            if ctx.comm.check { ctx.comm.enter(&format!("op_par_loop '{name}'"), bound)? } else { bound? };
        // op_arg_idx under MPI on a device: the original global indices come from a map holding
        // them (the element's own, or map[e][*] translated), which device code reads like any map.
        let mut synth: Vec<IdxMap> = Vec::new();
        if ctx.backend.is_device() && ctx.comm.partitioned {
            for (i, b) in bound.iter().enumerate() {
                if let (ArgDesc::Idx { map_dim, idx }, BoundArg::Idx { map }) = (descs[i], *b) {
                    let k = crate::mpi::dist::global_index_map(ctx, set, map)?;
                    synth.resize(descs.len(), None);
                    synth[i] = Some((k, ctx.comm.idx_maps[k].2.clone()));
                    descs[i] =
                        ArgDesc::Idx { map_dim: Some(map_dim.unwrap_or(1)), idx: if map.is_some() { idx } else { 0 } };
                }
            }
        }
        let mat_slots = if descs.iter().any(|d| matches!(d, ArgDesc::Mat { .. })) {
            crate::mat::loops::slot_tables(ctx, name, &descs, &bound)?
        } else {
            Vec::new()
        };
        let shape = LoopShape { kernel, args: descs, const_shape: ctx.const_shape_epoch };
        // The shape's code if this session has it; otherwise the kernel's parameters are
        // checked first.
        let cached = ctx.loops.get(&shape).cloned();
        if cached.is_none() {
            check_kernel_params(ctx, &shape, name, &bound)?;
        }
        let mut l = ParLoop::new(name, set, shape, bound);
        l.synth = synth;
        l.mat_slots = mat_slots;
        l.compiled = cached;
        Ok(l)
    }

    /// The loop's shape (the key of its code).
    pub fn shape(&self) -> &LoopShape {
        &self.shape
    }

    /// The code this loop runs as on `target`, without compiling or running anything: host C
    /// exactly as the JIT compiles it in this configuration (vector wrapper included), OpenCL C,
    /// or CUDA (one source per variant the cuda backend may pick). Device code has the kernel's
    /// quoted includes expanded and the constants' current values compiled in. A loop a device
    /// cannot run (too much data staged per element) is OP2_ERR_BACKEND_UNAVAILABLE, naming why.
    pub fn generate(&self, ctx: &Context, target: Target) -> Result<Vec<Generated>> {
        let kernel = self.shape.kernel;
        let descs = &self.shape.args;
        let name = self.name.as_str();
        if target != Target::Host {
            if let Some(why) = crate::backend::device::codegen::unsupported(descs, target.name()) {
                op2_bail!(BackendUnavailable, "op_par_loop '{name}': no {} code: {why}", target.name());
            }
        }
        let origin = ctx.kernels[kernel.0 as usize].line_origin();
        let consts = ctx.consts_used_by(kernel);
        let host_source = generate(ctx, kernel, name, descs, &origin, &consts);
        let (sig, values, coloured) = signature(ctx, kernel, name, descs, &origin, &consts);
        crate::exec::generate::sources(target, &sig, &values, coloured, &ctx.config.cflags, &host_source)
    }

    /// Runs the loop now on the session's backend, in the driver's phase order (see the
    /// module's documentation), and hands global results to the caller's memory.
    pub fn compute(self, ctx: &mut Context) -> Result<()> {
        let halo_before = (ctx.comm.halo_time, ctx.comm.halo_bytes, ctx.comm.messages);
        let (compiled, jit_time) = match &self.compiled {
            Some(c) => (c.clone(), self.jit_time),
            None => compiled(ctx, &self.shape, &self.name)?,
        };
        self.restore_seeds();
        let ParLoop { name, set, shape, bound, synth, mat_slots, .. } = &self;
        run(ctx, shape.kernel, name, *set, &shape.args, bound, synth, mat_slots, &compiled, jit_time, halo_before)
    }
}

/// The kernel's parameters against the descriptors (checked once per shape, before compiling).
fn check_kernel_params(ctx: &Context, shape: &LoopShape, name: &str, bound: &[BoundArg]) -> Result<()> {
    let descs = &shape.args;
    let k = &ctx.kernels[shape.kernel.0 as usize];
    if let Err(m) = crate::codegen::check_params(&k.definition, &k.name, descs) {
        let arg = match (descs.get(m.arg), bound.get(m.arg)) {
            (Some(d), Some(BoundArg::Dat { dat, .. })) => {
                format!(", arg {} (dat '{}', {})", m.arg, ctx.dats[dat.0 as usize].name, host::describe(d))
            }
            (Some(d), _) => format!(", arg {} ({})", m.arg, host::describe(d)),
            _ => String::new(),
        };
        let message = crate::jit::fortran::explain_mismatch(&k.source, &m.message).unwrap_or(m.message);
        op2_bail!(Compile, "op_par_loop '{name}'{arg}: {message}");
    }
    // A Fortran kernel's module variable takes the value of the constant of its name only when
    // their types and sizes agree: otherwise the kernel would silently see the variable unset.
    for (var, ty, dim, _) in &k.fortran_vars {
        if let Some(c) = ctx.consts.values().find(|c| c.name.to_lowercase() == *var) {
            if c.ty != *ty || c.dim != *dim {
                let origin = crate::jit::fortran::stand_in_origin(&k.source).unwrap_or("?");
                op2_bail!(
                    Compile,
                    "op_par_loop '{name}': constant '{}' is declared by op_decl_const as {} value(s) of type {}, but the module variable '{var}' of the Fortran kernel's files (subroutine '{origin}') holds {dim} of type {}: its value cannot be given to the kernel",
                    c.name,
                    c.dim,
                    c.ty.c_name(),
                    ty.c_name()
                );
            }
        }
    }
    Ok(())
}

/// The loop's run, once bound and compiled: the driver's phases in order (each a function below,
/// so that an executor of several loops can run them per tile): check, exchange (halos the loop
/// reads), bind pointers, compute sections (with the halo exchange overlapping the core), reduce
/// (across processes), hand back (dat states and the caller's globals), record (timings).
#[allow(clippy::too_many_arguments)]
fn run(
    ctx: &mut Context,
    kernel: KernelId,
    name: &str,
    set: SetId,
    descs: &[ArgDesc],
    bound: &[BoundArg],
    synth: &[IdxMap],
    mat_slots: &[Option<Arc<Vec<i32>>>],
    compiled: &Arc<CompiledLoop>,
    jit_time: Duration,
    halo_before: (Duration, u64, u64),
) -> Result<()> {
    let lib: &HostLibrary = &compiled.lib;
    let validate = check(ctx, kernel, name, bound, compiled)?;
    let rtol = ctx.config.validate_rtol;
    let bytes = bytes_moved(ctx, descs, bound, set);
    let device = ctx.backend.is_device();
    let const_epoch = ctx.const_epoch;
    let (halo_reads, refreshed, direct) = exchange(ctx, descs, bound, compiled, validate)?;

    let Context { sets, maps, dats, backend, comm, timings, kernels, consts, mats, .. } = ctx;
    let s = &sets[set.0 as usize];
    if device {
        move_to_device(name, backend.as_mut(), dats, descs, bound)?;
    }
    let sections = Sections { core_end: s.core_end, owned_end: s.size, exec_end: s.exec_end };
    let overlapped = comm.halo_exchange_begin(dats, halo_reads, if direct { Some(backend.as_mut()) } else { None })?;
    let Pointers { slots, reductions, indirect } =
        bind_pointers(name, set, descs, bound, synth, mat_slots, sets, maps, dats, mats, comm)?;
    let dat_names = dat_names(bound, dats);
    let scratch_entries = host::scratch_entries(descs);
    let k = &kernels[kernel.0 as usize];
    // Device backends generate their own code from the signature, with the constants' values
    // (all worked out once per loop shape, in `compiled`).
    let sig = device.then(|| LoopSignature {
        loop_name: name,
        kernel_name: &k.name,
        kernel_source: &k.source,
        kernel_origin: &compiled.origin,
        args: descs,
        consts: &compiled.consts,
    });
    let const_values: Vec<&[u8]> =
        if device { compiled.consts.iter().map(|c| consts[&c.name].data.as_slice()).collect() } else { Vec::new() };
    let arg_maps = arg_maps(bound, synth, maps);
    let mut call = LoopCall {
        sig,
        parts: Vec::new(),
        const_values,
        shape_key: Arc::as_ptr(compiled) as usize,
        const_epoch,
        bound,
        maps: arg_maps,
        name,
        set,
        set_size: s.exec_end,
        lib,
        descs,
        slots,
        scratch_entries,
        reductions,
        indirect,
        dat_names,
    };

    let computed = compute_sections(
        &mut call,
        backend.as_mut(),
        comm,
        dats,
        overlapped,
        sections,
        compiled.needs_exec_halo,
        validate,
        rtol,
    )?;
    let mut refreshed = refreshed;
    refreshed.extend(computed.refreshed);
    reduce(comm, bound, &mut call, computed.partial)?;
    let elapsed = computed.started.elapsed();
    let reductions = std::mem::take(&mut call.reductions);
    drop(call);
    for (d, n) in computed.uploaded {
        dats[d.0 as usize].to_device += n;
    }
    hand_back(dats, descs, bound, device, computed.downloaded, refreshed, &reductions);
    record(timings, comm, name, lib, elapsed, jit_time, bytes, halo_before);
    compiled.ran.store(true, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// Per argument: the dat's name, or "" (for messages).
pub(crate) fn dat_names<'d>(bound: &[BoundArg], dats: &'d [Dat]) -> Vec<&'d str> {
    bound
        .iter()
        .map(|b| match b {
            BoundArg::Dat { dat, .. } => dats[dat.0 as usize].name.as_str(),
            _ => "",
        })
        .collect()
}

/// Per argument: its map and values when it has one and is enabled (`op_arg_idx` under MPI on
/// a device: the map of original indices in `synth`).
pub(crate) fn arg_maps<'m>(
    bound: &[BoundArg],
    synth: &'m [IdxMap],
    maps: &'m [crate::core::Map],
) -> Vec<Option<(MapId, &'m [i32])>> {
    bound
        .iter()
        .enumerate()
        .map(|(i, b)| match (*b, synth.get(i).and_then(Option::as_ref)) {
            (BoundArg::Idx { .. }, Some((k, v))) => Some((crate::mpi::dist::idx_map_id(*k), v.as_slice())),
            (BoundArg::Dat { map: Some(m), enabled: true, .. } | BoundArg::Idx { map: Some(m) }, _) => {
                Some((m, maps[m.0 as usize].values.as_slice()))
            }
            _ => None,
        })
        .collect()
}

/// Phase "check": the loop's checks that need the session as it is now (indirect OP_INC reads
/// under validation or the check backend), host copies made current for the validation
/// reference, and the library's constants loaded if they changed. Returns whether the loop is
/// validated.
pub(crate) fn check(
    ctx: &mut Context,
    kernel: KernelId,
    name: &str,
    bound: &[BoundArg],
    compiled: &CompiledLoop,
) -> Result<bool> {
    let lib: &HostLibrary = &compiled.lib;
    check_inc_reads(ctx, kernel, name, bound, compiled.inc_read.as_ref())?;
    let validate = validates(ctx);
    if validate {
        // The reference reads host bytes: make them current before the loop moves anything.
        for b in bound {
            if let BoundArg::Dat { dat, enabled: true, .. } = *b {
                ctx.sync_to_host(dat)?;
            }
        }
    }
    if lib.consts_fn.is_some() && lib.consts_epoch.load(std::sync::atomic::Ordering::Acquire) != ctx.const_epoch {
        let ptrs: Vec<*const c_void> =
            compiled.consts.iter().map(|c| ctx.consts[&c.name].data.as_ptr() as *const c_void).collect();
        lib.ensure_constants(ctx.const_epoch, &ptrs);
    }
    Ok(validate)
}

/// The dats a loop reads through its halo (read through a map, or read directly when the exec
/// halo runs), each once: an exchange refreshes those whose halos are out of date.
pub(crate) fn halo_read_dats(descs: &[ArgDesc], bound: &[BoundArg], needs_exec_halo: bool) -> Vec<DatId> {
    let mut out: Vec<DatId> = Vec::new();
    for (d, b) in descs.iter().zip(bound) {
        if let (ArgDesc::Dat { acc, how, .. }, BoundArg::Dat { dat, enabled: true, .. }) = (d, b) {
            let through_halo = *how != DatAccess::Direct || needs_exec_halo;
            // OP_INC never reads the halo copies (their increments are discarded).
            let reads = matches!(acc, Access::Read | Access::Rw);
            if reads && through_halo && !out.contains(dat) {
                out.push(*dat);
            }
        }
    }
    out
}

/// Phase "exchange": the halos the loop reads and that are out of date (dats read through a map,
/// or read directly when the exec halo runs). One exchange per loop, one message per neighbour.
/// When validating, the exchange is done here, through host memory and without overlap
/// (returned as the second list: the dats refreshed); otherwise the first list is what
/// `compute_sections` exchanges while the core runs. On a device, only the rows the neighbours
/// need come down here (of dats whose device copy alone is current): the export rows, in
/// ranges of consecutive rows (`SetLayout::export_runs`), into the same rows of the host copy,
/// which the exchange packs from; `compute_sections` uploads the received halo rows. Where the
/// MPI takes device buffers (`Comm::device_direct`) and every dat's device copy alone is
/// current, nothing comes down: the exchange packs and unpacks on the device (the third value).
fn exchange(
    ctx: &mut Context,
    descs: &[ArgDesc],
    bound: &[BoundArg],
    compiled: &CompiledLoop,
    validate: bool,
) -> Result<(Vec<DatId>, Vec<DatId>, bool)> {
    let device = ctx.backend.is_device();
    let mut halo_reads = halo_read_dats(descs, bound, compiled.needs_exec_halo);
    halo_reads.retain(|d| ctx.dats[d.0 as usize].halo_dirty);
    let mut refreshed: Vec<DatId> = Vec::new();
    // Device to device only when no host copy is current: the received rows then land only in
    // the device copies, which the residency (Device) already says are the only current ones.
    let direct = device
        && !validate
        && ctx.comm.partitioned
        && ctx.comm.device_direct
        && !halo_reads.is_empty()
        && halo_reads.iter().all(|d| ctx.dats[d.0 as usize].residency == residency::Residency::Device);
    if direct {
        return Ok((halo_reads, refreshed, true));
    }
    if device && !validate && ctx.comm.partitioned {
        let Context { dats, backend, comm, .. } = ctx;
        for &d in &halo_reads {
            let dv = &mut dats[d.0 as usize];
            if dv.residency != residency::Residency::Device {
                continue; // the host copy is current (its export rows with it)
            }
            let Some(l) = comm.layout(dv.set) else { continue };
            let runs = l.export_runs();
            let moved = backend
                .download_rows(d, crate::backend::DatShape::of(dv), dv.data.as_mut_slice(), &runs)
                .map_err(|e| {
                    Op2Error::new(e.code, format!("op_par_loop, halo exchange of dat '{}': {}", dv.name, e.message))
                })?;
            dv.to_host += moved;
        }
    } else if validate && ctx.comm.partitioned && !halo_reads.is_empty() {
        // Validation: the reference must see the same halos as the loop (exchanged through
        // host memory before the loop, without overlap).
        for &d in &halo_reads {
            ctx.host_data(d, true)?;
        }
        let ex = ctx.comm.halo_exchange_begin(&mut ctx.dats, std::mem::take(&mut halo_reads), None)?;
        refreshed = ctx.comm.halo_exchange_end(ex, None)?;
    }
    Ok((halo_reads, refreshed, false))
}

/// The pointers a loop call runs with (`backend::host::codegen`'s ABI): two slots per argument, then the
/// scratch slot the backend fills; the reductions' scratch buffers; the indirect arguments as
/// plans see them.
pub(crate) struct Pointers<'d> {
    pub slots: Vec<*mut c_void>,
    pub reductions: Vec<Reduction>,
    pub indirect: Vec<IndirectArg<'d>>,
}

/// Phase "bind pointers": every argument's data and map pointers. Reductions get scratch buffers
/// seeded with the caller's values (zero for a distributed OP_INC: the caller's value is added
/// once, after the processes' sums are combined).
#[allow(clippy::too_many_arguments)]
pub(crate) fn bind_pointers<'d>(
    name: &str,
    set: SetId,
    descs: &[ArgDesc],
    bound: &[BoundArg],
    synth: &[IdxMap],
    mat_slots: &[Option<Arc<Vec<i32>>>],
    sets: &'d [crate::core::Set],
    maps: &'d [crate::core::Map],
    dats: &mut [Dat],
    mats: &mut crate::mat::Mats,
    comm: &crate::mpi::Comm,
) -> Result<Pointers<'d>> {
    let distributed = comm.distributed();
    let mut slots: Vec<*mut c_void> = vec![std::ptr::null_mut(); 2 * descs.len() + 1];
    let mut reductions: Vec<Reduction> = Vec::new();
    let mut reduction_of_arg: Vec<Option<usize>> = vec![None; descs.len()];
    let mut indirect: Vec<IndirectArg> = Vec::new();
    for (i, (d, b)) in descs.iter().zip(bound).enumerate() {
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
            (ArgDesc::Idx { .. }, BoundArg::Idx { .. }) if synth.get(i).is_some_and(Option::is_some) => {
                if let Some(Some((_, v))) = synth.get(i) {
                    slots[2 * i + 1] = v.as_ptr() as *mut c_void;
                }
            }
            (ArgDesc::Mat { ty, .. }, BoundArg::Mat { mat, rowmap, ridx, .. }) => {
                let m = &mut mats.mats[mat.0 as usize];
                slots[2 * i] = m.values.as_mut_ptr() as *mut c_void;
                if let Some(Some(t)) = mat_slots.get(i) {
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
                    slots[2 * i] = l.gids.as_slice().as_ptr() as *mut c_void;
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
    Ok(Pointers { slots, reductions, indirect })
}

/// A set's sections, as element ranges: core `0..core_end`, owned `core_end..owned_end`, exec
/// halo `owned_end..exec_end`.
#[derive(Clone, Copy)]
struct Sections {
    core_end: usize,
    owned_end: usize,
    exec_end: usize,
}

/// What `compute_sections` leaves for the phases after it.
struct Computed {
    /// When the backend started (the loop's time runs to the end of `reduce`).
    started: Instant,
    /// Dats whose halos the overlapped exchange refreshed.
    refreshed: Vec<DatId>,
    /// The reductions' partials over core and owned (distributed loops with reductions only).
    partial: Option<Vec<Reduction>>,
    /// Bytes validation downloaded per dat (to count in `to_host`).
    downloaded: Vec<(DatId, u64)>,
    /// Halo bytes uploaded per dat after the exchange (devices; to count in `to_device`).
    uploaded: Vec<(DatId, u64)>,
}

/// Phase "compute sections": the validation reference (if any), then core, halo exchange end,
/// owned, (reductions' partials taken), exec halo (only when some indirect dat is written), then
/// the comparison with the reference.
#[allow(clippy::too_many_arguments)]
fn compute_sections(
    call: &mut LoopCall,
    backend: &mut dyn Backend,
    comm: &mut crate::mpi::Comm,
    dats: &[Dat],
    overlapped: crate::mpi::Exchange,
    sections: Sections,
    exec_halo: bool,
    validate: bool,
    rtol: Option<f64>,
) -> Result<Computed> {
    let Sections { core_end, owned_end, exec_end } = sections;
    // The reference runs the sections the loop runs (the exec halo only when it is needed).
    let run_end = if exec_halo { exec_end } else { owned_end };
    let reference = if validate { Some(crate::exec::validate::reference(call, dats, run_end)?) } else { None };
    let started = Instant::now();
    backend.compute(call, 0, core_end)?;
    let direct = overlapped.is_direct();
    let refreshed = comm.halo_exchange_end(overlapped, Some(&mut *backend))?;
    // Devices: the received halo rows go up (each neighbour's share is one range per halo
    // kind), into a device copy that move_to_device made current everywhere else (unless the
    // exchange went device to device).
    let mut uploaded = Vec::new();
    if backend.is_device() && !direct {
        for &d in &refreshed {
            let dv = &dats[d.0 as usize];
            let Some(l) = comm.layout(dv.set) else { continue };
            let runs = l.import_runs();
            let n =
                backend.upload_rows(d, crate::backend::DatShape::of(dv), dv.data.as_slice(), &runs).map_err(|e| {
                    Op2Error::new(
                        e.code,
                        format!("op_par_loop '{}', halo exchange of dat '{}': {}", call.name, dv.name, e.message),
                    )
                })?;
            uploaded.push((d, n));
        }
    }
    backend.compute(call, core_end, owned_end)?;
    // Reductions cover core and owned only: their partials are taken before the exec halo runs.
    let partial = if comm.distributed() && !call.reductions.is_empty() { Some(call.reductions.clone()) } else { None };
    if exec_halo {
        backend.compute(call, owned_end, exec_end)?;
    }
    let downloaded = match &reference {
        Some(r) => {
            let rows = |d: crate::core::DatId| {
                let dv = &dats[d.0 as usize];
                match comm.layout(dv.set) {
                    Some(_) if dv.set == call.set => run_end,
                    Some(l) => l.owned,
                    None => usize::MAX,
                }
            };
            crate::exec::validate::compare(r, call, backend, dats, rtol, &rows)?
        }
        None => Vec::new(),
    };
    Ok(Computed { started, refreshed, partial, downloaded, uploaded })
}

/// Phase "reduce": combines the processes' partials (each process's scratch is reseeded with
/// the caller's value first, which the combination adds once).
pub(crate) fn reduce(
    comm: &crate::mpi::Comm,
    bound: &[BoundArg],
    call: &mut LoopCall,
    partial: Option<Vec<Reduction>>,
) -> Result<()> {
    if let Some(partial) = partial {
        for r in call.reductions.iter_mut() {
            if let BoundArg::Gbl { ptr, bytes } = bound[r.arg] {
                // SAFETY: as in `seeded`: the caller's global holds `bytes` bytes.
                unsafe { std::ptr::copy_nonoverlapping(ptr as *const u8, r.buf.as_mut_ptr() as *mut u8, bytes) };
            }
        }
        comm.reduce(&partial, &mut call.reductions)?;
    }
    Ok(())
}

/// Phase "hand back": the dats' states after the loop (bytes validation downloaded, halos the
/// loop refreshed, device residency, written dats' halos out of date: the MPI layer exchanges
/// them on next read) and the global results, copied to the caller's memory. Matrices were
/// assembled element by element, in the loop.
pub(crate) fn hand_back(
    dats: &mut [Dat],
    descs: &[ArgDesc],
    bound: &[BoundArg],
    device: bool,
    downloaded: Vec<(DatId, u64)>,
    refreshed: Vec<DatId>,
    reductions: &[Reduction],
) {
    for (d, n) in downloaded {
        dats[d.0 as usize].to_host += n;
    }
    for d in refreshed {
        dats[d.0 as usize].halo_dirty = false;
    }
    if device {
        for (d, b) in descs.iter().zip(bound) {
            if let (ArgDesc::Dat { acc, .. }, BoundArg::Dat { dat, enabled: true, .. }) = (d, b) {
                let dv = &mut dats[dat.0 as usize];
                dv.residency = residency::after_loop(dv.residency, acc.writes());
            }
        }
    }
    for (d, b) in descs.iter().zip(bound) {
        if let (ArgDesc::Dat { acc, .. }, BoundArg::Dat { dat, enabled: true, .. }) = (d, b) {
            if acc.writes() {
                dats[dat.0 as usize].halo_dirty = true;
            }
        }
    }
    for r in reductions {
        if let BoundArg::Gbl { ptr, bytes } = bound[r.arg] {
            // SAFETY: ptr is the caller's global of `bytes` bytes (op_arg_gbl's contract) and
            // the scratch holds at least as many.
            unsafe { std::ptr::copy_nonoverlapping(r.buf.as_ptr() as *const u8, ptr, bytes) };
        }
    }
}

/// Phase "record": the loop's line in the timing table (calls, time, JIT time, bytes moved,
/// and the halo time, bytes and messages since the loop began).
#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    timings: &mut crate::context::timing::Timings,
    comm: &crate::mpi::Comm,
    name: &str,
    lib: &HostLibrary,
    elapsed: Duration,
    jit_time: Duration,
    bytes: u64,
    halo_before: (Duration, u64, u64),
) {
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
}

/// Before a loop on a device backend: every dat it uses gets a current device copy, uploaded
/// unless the loop overwrites it whole (only direct OP_WRITE arguments on it; one process, so
/// every section of the set is run).
pub(crate) fn move_to_device(
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
pub(crate) fn bytes_moved(ctx: &Context, descs: &[ArgDesc], bound: &[BoundArg], set: SetId) -> u64 {
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
