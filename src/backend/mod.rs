//! Backends behind one trait. A backend runs an already compiled loop over a range of the
//! iteration set; the driver (`exec`) owns the order of phases, halos and reductions.

pub mod cuda;
pub mod device;
pub mod host;
pub mod opencl;
pub mod reduce;

use crate::arg::{Access, ArgDesc};
use crate::config::BackendKind;
use crate::core::{DatId, ElemType, MapId};
use crate::error::Result;
use crate::jit::HostLibrary;
use crate::op2_bail;
use std::ffi::c_void;

/// A global reduction (INC/MIN/MAX global, or an `op_arg_info` payload) with its scratch
/// buffer, initialised from the caller's value. The caller's memory is written only when the
/// whole loop has succeeded.
#[derive(Debug, Clone)]
pub struct Reduction {
    /// Position of the argument in the loop.
    pub arg: usize,
    pub ty: ElemType,
    pub dim: usize,
    /// INC, MIN or MAX; an info payload has `Access::Read` and `follows` set.
    pub acc: Access,
    /// For an info payload: the index (in the reductions list) of the MIN/MAX it follows.
    pub follows: Option<usize>,
    /// Scratch, 8-byte aligned, `dim * ty.size()` bytes used.
    pub buf: Vec<u64>,
}

impl Reduction {
    pub fn bytes(&self) -> usize {
        self.dim * self.ty.size()
    }
}

/// An indirect argument as a plan sees it.
#[derive(Debug, Clone, Copy)]
pub struct IndirectArg<'a> {
    pub arg: usize,
    pub dat: DatId,
    pub map: MapId,
    pub map_values: &'a [i32],
    pub map_dim: usize,
    /// One column, or `None` for a vector argument (all columns).
    pub idx: Option<usize>,
    pub to_size: usize,
    pub elem_bytes: usize,
    pub needs_colouring: bool,
}

/// One loop call, ready to run: the compiled code and every pointer it needs.
pub struct LoopCall<'a> {
    /// The loop's signature (device backends generate their own code from it). For a fused
    /// unit: its name, every part's arguments in order and the parts' constants.
    pub sig: Option<crate::codegen::LoopSignature<'a>>,
    /// A fused device unit (`exec::chain`): each loop's own signature, in order (its arguments
    /// are `descs`, `bound` and `slots`, part after part); empty for one loop.
    pub parts: Vec<crate::codegen::LoopSignature<'a>>,
    /// Each used constant's value, in the order of `sig.consts`.
    pub const_values: Vec<&'a [u8]>,
    /// Identifies the loop shape for the session (device backends key their programs on it
    /// with `const_epoch`, instead of regenerating code per call).
    pub shape_key: usize,
    /// The epoch of the constants' values.
    pub const_epoch: u64,
    /// What each argument refers to.
    pub bound: &'a [crate::arg::BoundArg],
    /// Per argument: its map and values, when it has one and is enabled.
    pub maps: Vec<Option<(MapId, &'a [i32])>>,
    pub name: &'a str,
    pub set: crate::core::SetId,
    /// Elements the loop may run over: owned plus the exec halo under MPI (`exec_end`), so the
    /// rows of every map from the set; the set size on one process.
    pub set_size: usize,
    pub lib: &'a HostLibrary,
    pub descs: &'a [ArgDesc],
    /// Two per argument: data, map; then one for the scratch array (see `backend::host::codegen`).
    pub slots: Vec<*mut c_void>,
    /// Pointer entries of scratch each range needs (`backend::host::codegen::scratch_entries`).
    pub scratch_entries: usize,
    pub reductions: Vec<Reduction>,
    pub indirect: Vec<IndirectArg<'a>>,
    /// Per argument: the dat's name, or "" (for messages).
    pub dat_names: Vec<&'a str>,
}

impl<'a> LoopCall<'a> {
    /// The loop's indirect arguments as the plan builder takes them.
    pub fn plan_args(&self) -> Vec<crate::plan::IndirectArg<'a>> {
        use crate::plan::{IndirectDesc, MapIdx};
        self.indirect
            .iter()
            .map(|a| crate::plan::IndirectArg {
                desc: IndirectDesc {
                    dat: a.dat.0 as u64,
                    elem_bytes: a.elem_bytes,
                    map: a.map.0 as u64,
                    map_dim: a.map_dim,
                    idx: a.idx.map_or(MapIdx::All, |i| MapIdx::Col(i as u32)),
                    target_size: a.to_size,
                    colour: a.needs_colouring,
                },
                map_values: a.map_values,
            })
            .collect()
    }

    /// Whether any argument needs colouring (indirect INC).
    pub fn needs_colouring(&self) -> bool {
        self.indirect.iter().any(|a| a.needs_colouring)
    }

    /// Runs the compiled wrapper over `[start, end)` with `slots`, giving it the scratch array
    /// it needs (only loops with vector arguments over very wide maps need one); a scratch that
    /// cannot be allocated is `OP2_ERR_OUT_OF_MEMORY`, never an abort.
    ///
    /// # Safety
    /// `slots` must hold valid pointers for every argument (as built by the driver, including
    /// the scratch slot) and the range must lie inside the iteration set.
    pub unsafe fn run_range(&self, start: usize, end: usize, slots: &mut [*mut c_void]) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        let _scratch = self.scratch(slots)?; // lives until the call returns
        crate::jit::simd_choice::run(self.lib, start, end, slots.as_ptr());
        Ok(())
    }

    /// Runs the loop's iterations of a sparse tile in increasing order: `runs` (sorted,
    /// disjoint `[start, end)`), one call each; or, when the tiling listed them (`list`, for
    /// loops whose tiles hold many short runs: `plan::tiling::Tiling::lists`) and the library
    /// has list wrappers, one call over the list, so that the vectorised wrapper gets whole
    /// blocks. The elements run in the same order either way.
    ///
    /// # Safety
    /// As `run_range`, for every run; `list` holds exactly the runs' elements, in order.
    pub unsafe fn run_runs(&self, runs: &[(u32, u32)], list: Option<&[i32]>, slots: &mut [*mut c_void]) -> Result<()> {
        if let (Some(list), Some(scalar)) = (list.filter(|l| !l.is_empty()), self.lib.list_fn) {
            let _scratch = self.scratch(slots)?; // lives until the call returns
            crate::jit::simd_choice::run_list(self.lib, scalar, (0, list.len()), list.as_ptr(), slots.as_ptr());
            return Ok(());
        }
        for &(s, e) in runs {
            self.run_range(s as usize, e as usize, slots)?;
        }
        Ok(())
    }

    /// The scratch array of one call (empty when the loop needs none), its address in the last
    /// slot; it must live until the call returns.
    fn scratch(&self, slots: &mut [*mut c_void]) -> Result<Vec<*mut c_void>> {
        let mut scratch: Vec<*mut c_void> = Vec::new();
        if self.scratch_entries > 0 {
            if scratch.try_reserve_exact(self.scratch_entries).is_err() {
                op2_bail!(
                    OutOfMemory,
                    "op_par_loop '{}': cannot allocate {} pointers of scratch for its vector arguments",
                    self.name,
                    self.scratch_entries
                );
            }
            scratch.resize(self.scratch_entries, std::ptr::null_mut());
            if let Some(last) = slots.last_mut() {
                *last = scratch.as_mut_ptr() as *mut c_void;
            }
        }
        Ok(scratch)
    }
}

/// The row layout of a dat's host bytes: `dim` values of `elem` bytes per element (device
/// backends may store it otherwise, e.g. structure-of-arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatShape {
    pub dim: usize,
    pub elem: usize,
}

impl DatShape {
    pub fn of(d: &crate::core::Dat) -> DatShape {
        DatShape { dim: d.dim, elem: d.ty.size() }
    }
}

/// A backend: runs compiled loops on ranges of the iteration set.
pub trait Backend: Send {
    fn kind(&self) -> BackendKind;

    /// Whether dats live in device memory, moved by the driver's residency rule through
    /// `alloc`/`upload`/`download` (host backends: no, and those three do nothing).
    fn is_device(&self) -> bool {
        false
    }

    /// One line naming the backend and where it runs (diagnostics).
    fn describe(&self) -> String {
        self.kind().name().to_string()
    }

    /// How the session's work was spread over the backend's threads (`threads`: blocks run by
    /// each worker), for `op_timing_output`; None where there is nothing to say.
    fn work_report(&self) -> Option<String> {
        None
    }

    /// Makes room on the device for a dat of `bytes` (its contents need not be valid).
    fn alloc(&mut self, _dat: DatId, _shape: DatShape, _bytes: usize) -> Result<()> {
        Ok(())
    }

    /// Copies a dat's host bytes (rows of `shape.dim` values) to the device.
    fn upload(&mut self, _dat: DatId, _shape: DatShape, _host: &[u8]) -> Result<()> {
        Ok(())
    }

    /// Copies a dat's device bytes to the host (rows of `shape.dim` values).
    fn download(&mut self, _dat: DatId, _shape: DatShape, _host: &mut [u8]) -> Result<()> {
        Ok(())
    }

    /// Copies rows of a dat's device copy into the same rows of `host` (the dat's whole host
    /// bytes, rows of `shape.dim` values): `runs` are (first row, rows) ranges. Returns the
    /// bytes moved (a halo exchange's export rows; host backends: nothing, 0).
    fn download_rows(
        &mut self,
        _dat: DatId,
        _shape: DatShape,
        _host: &mut [u8],
        _runs: &[(usize, usize)],
    ) -> Result<u64> {
        Ok(0)
    }

    /// Copies rows of `host` (the dat's whole host bytes) into the same rows of its device copy
    /// (`runs` as in `download_rows`); returns the bytes moved (a halo exchange's import rows).
    fn upload_rows(&mut self, _dat: DatId, _shape: DatShape, _host: &[u8], _runs: &[(usize, usize)]) -> Result<u64> {
        Ok(0)
    }

    /// Whether `mpi_staging` gives device areas (cuda): halo exchanges can then hand device
    /// memory to a CUDA-aware MPI.
    fn can_stage_for_mpi(&self) -> bool {
        false
    }

    /// Device staging areas that an MPI library can read and write itself (a CUDA-aware MPI):
    /// makes sure the send area holds `send` bytes and the receive area `recv`, and returns
    /// their device addresses; None where the backend's memory cannot go to MPI (host backends
    /// stage in host memory themselves; OpenCL buffers have no address MPI could use).
    fn mpi_staging(&mut self, _send: usize, _recv: usize) -> Result<Option<(usize, usize)>> {
        Ok(None)
    }

    /// Packs rows `rows` of a dat's device copy, in host layout (rows of `shape.dim` values),
    /// into the send staging area at byte `at`; returns the bytes packed. Only after
    /// `mpi_staging` gave areas.
    fn pack_staged(&mut self, _dat: DatId, _shape: DatShape, _rows: &[u32], _at: usize) -> Result<u64> {
        op2_bail!(Internal, "halo exchange: this backend has no device staging for MPI")
    }

    /// Writes the receive staging area's bytes from `at` (rows in host layout) into rows
    /// `rows` of a dat's device copy; returns the bytes written.
    fn unpack_staged(&mut self, _dat: DatId, _shape: DatShape, _rows: &[u32], _at: usize) -> Result<u64> {
        op2_bail!(Internal, "halo exchange: this backend has no device staging for MPI")
    }

    /// Waits until the packs and unpacks so far are complete (before MPI reads the send area,
    /// and before a loop reads unpacked rows on another stream).
    fn staged_sync(&mut self) -> Result<()> {
        Ok(())
    }

    /// Releases a dat's device copy (the dat was freed: `op_free_dat_temp_char`); nothing
    /// on host backends, or where there is none.
    fn free(&mut self, _dat: DatId) {}

    /// Runs the loop over elements `[start, end)`, leaving reduction results combined into
    /// `call.reductions[..].buf`.
    fn compute(&mut self, call: &mut LoopCall, start: usize, end: usize) -> Result<()>;

    /// Kernel launches made so far (device backends: every launch of every loop, fused units
    /// counting one per launch; 0 on host backends), for tests and diagnostics.
    fn launches(&self) -> u64 {
        0
    }

    /// Writes of READ globals and reduction seed rows made so far (device backends); a loop
    /// whose values the device's buffers already hold writes nothing.
    fn small_writes(&self) -> u64 {
        0
    }

    /// Runs a sparse-tiled chain (`exec::chain`, host backends): for each tile in index order
    /// (a valid order for every schedule), each loop's runs in that tile, in chain order, with
    /// reductions accumulated into each call's scratch. Backends that can run the tiles of a
    /// level at once override it.
    fn compute_tiled(&mut self, calls: &mut [LoopCall], tiling: &crate::plan::tiling::Tiling) -> Result<()> {
        for t in 0..tiling.tiles {
            for (l, call) in calls.iter_mut().enumerate() {
                let mut slots = std::mem::take(&mut call.slots);
                let list = tiling.list(l, t);
                // SAFETY: the driver built `slots` for this loop; the runs (and the tiling's list
                // of them) lie in its set.
                let r = unsafe { call.run_runs(&tiling.runs[l][t], list, &mut slots) };
                call.slots = slots;
                r?;
            }
        }
        Ok(())
    }
}

/// One backend as the registry lists it.
pub struct BackendInfo {
    pub kind: BackendKind,
    /// The name `OP2_BACKEND` takes.
    pub name: &'static str,
    /// What it is, in a few words.
    pub summary: &'static str,
    /// Whether it can run in this build on this machine: where it runs, or what is missing.
    pub probe: fn() -> std::result::Result<String, String>,
}

fn host_probe() -> std::result::Result<String, String> {
    Ok("host CPU".to_string())
}

fn opencl_probe() -> std::result::Result<String, String> {
    opencl::probe(std::env::var("OP2_OPENCL_DEVICE").ok().as_deref()).map(|d| d.name().unwrap_or_default())
}

fn cuda_probe() -> std::result::Result<String, String> {
    let ordinal = std::env::var("OP2_CUDA_DEVICE").ok().and_then(|v| v.trim().parse().ok());
    cuda::probe(ordinal).map(|d| format!("{} (sm_{}{})", d.name, d.cc.0, d.cc.1))
}

/// Every backend of this build, in the order messages list them. Device backends are always
/// built (their runtimes are loaded when probed), so a probe's answer says what this machine
/// lacks: no OpenCL ICD or device, no fp64, no CUDA driver, no NVRTC.
pub const REGISTRY: &[BackendInfo] = &[
    BackendInfo { kind: BackendKind::Seq, name: "seq", summary: "one host thread, the reference", probe: host_probe },
    BackendInfo {
        kind: BackendKind::Threads,
        name: "threads",
        summary: "host threads over coloured mini-partitions (OP2's openmp)",
        probe: host_probe,
    },
    BackendInfo {
        kind: BackendKind::OpenCl,
        name: "opencl",
        summary: "OpenCL devices (GPUs, or CPUs through PoCL)",
        probe: opencl_probe,
    },
    BackendInfo { kind: BackendKind::Cuda, name: "cuda", summary: "NVIDIA GPUs (NVRTC)", probe: cuda_probe },
    BackendInfo {
        kind: BackendKind::Check,
        name: "check",
        summary: "seq plus promise checks, every loop validated",
        probe: host_probe,
    },
];

/// The registry's entry for a name or alias (case and surrounding blanks ignored).
pub fn lookup(name: &str) -> Option<&'static BackendInfo> {
    BackendKind::parse(name).map(info)
}

/// The registry's entry for a kind.
pub fn info(kind: BackendKind) -> &'static BackendInfo {
    // Every kind has exactly one entry (checked by a unit test).
    REGISTRY.iter().find(|b| b.kind == kind).unwrap_or(&REGISTRY[0])
}

/// Every accepted name, for messages: "seq (sequential), threads (openmp, omp), ...".
pub fn names() -> String {
    BackendKind::names()
}

/// Whether a backend can run in this build on this machine.
pub fn available(kind: BackendKind) -> bool {
    (info(kind).probe)().is_ok()
}

/// Creates the backend selected by the configuration.
pub fn create(config: &crate::config::Config) -> Result<Box<dyn Backend>> {
    match config.backend {
        BackendKind::Seq => Ok(Box::new(host::seq::Seq)),
        BackendKind::Threads => Ok(Box::new(host::threads::Threads::new(config.num_threads, config.part_size)?)),
        BackendKind::Check => Ok(Box::new(host::check::Check)),
        BackendKind::OpenCl => Ok(Box::new(opencl::OpenCl::new(config)?)),
        BackendKind::Cuda => Ok(Box::new(cuda::Cuda::new(config)?)),
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn every_kind_once_and_names_unique() {
        for k in [BackendKind::Seq, BackendKind::Threads, BackendKind::OpenCl, BackendKind::Cuda, BackendKind::Check] {
            assert_eq!(REGISTRY.iter().filter(|b| b.kind == k).count(), 1, "{k:?}");
            assert_eq!(info(k).kind, k);
            assert_eq!(info(k).name, k.name());
        }
        let all: Vec<&str> =
            REGISTRY.iter().flat_map(|b| std::iter::once(b.name).chain(b.kind.aliases().iter().copied())).collect();
        for n in &all {
            assert_eq!(all.iter().filter(|m| m == &n).count(), 1, "{n} listed twice");
            assert_eq!(lookup(&n.to_ascii_uppercase()).map(|b| b.name), lookup(n).map(|b| b.name));
        }
        assert_eq!(lookup(" OpenMP ").map(|b| b.kind), Some(BackendKind::Threads));
        assert!(lookup("hip").is_none());
        assert_eq!(names(), "seq (sequential), threads (openmp, omp), opencl, cuda, check");
        // Host backends are always there; their probe says where they run.
        assert_eq!((info(BackendKind::Seq).probe)().as_deref(), Ok("host CPU"));
    }
}
