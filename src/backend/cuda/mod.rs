//! The `cuda` backend (cudarc's driver API and NVRTC, both loaded at run time): dats live in
//! device memory between loops, moved by the driver's residency rule through
//! `upload`/`download`; maps are uploaded once, element colourings once per range. Each loop
//! shape's CUDA C++ (`backend::cuda::codegen`) is compiled by NVRTC for the device's exact architecture
//! (`sm_XY`) into a CUBIN, kept in op2's disk cache keyed by source, NVRTC version and
//! architecture, and loaded as a module.
//!
//! Execution as on opencl: without reductions one thread per element, with reductions a
//! bounded grid-stride launch whose blocks combine their threads' partials in shared memory
//! (a fixed tree) into one row per block, combined on the host in block order: deterministic
//! for a given set size and block size. Indirect increments (`OP2_INC`): `atomics`
//! (`atomicAdd`, what `auto` picks: OP2's GPU default), `colour` (one launch per colour of an
//! element colouring) or `blocks` (also `stage`: the plan's blocks of `OP_BLOCK_SIZE` elements as thread
//! blocks, one launch per block colour, increments applied one thread colour at a time, with no
//! shared-memory staging of the data yet). Loops that increment a bool dat indirectly are
//! coloured under `auto` and `atomics` (no atomic add on bool).
//!
//! Nothing here has run on a GPU yet: without a driver the backend is unavailable, and the
//! generated code is proven by compiling it with NVRTC (`make test-cuda-nvrtc`).

pub mod codegen;

use super::device::SmallBuf;
use super::device::{
    check_loop, check_process, colouring_key, element_lists, kernel_arg_owners, packed_plan, read_globals, KernelArg,
};
use super::reduce::as_bytes;
use super::reduce::Partials;
use super::{Backend, DatShape, LoopCall};
use crate::backend::cuda::codegen::{self as emit, IncStrategy};
use crate::config::BackendKind;
use crate::config::IncChoice;
use crate::core::{DatId, MapId};
use crate::error::{ErrorCode, Op2Error, Result};
use crate::jit::cache::DiskCache;
use crate::op2_bail;
use crate::plan::PlanCache;
use cudarc::driver::{result as cu, sys};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};

/// Threads per block unless `OP_BLOCK_SIZE` says otherwise.
const BLOCK: usize = 256;
/// Most threads of a launch with reductions. Measured on an H200 (Airfoil 720K's update, with
/// OP2_DEVICE_SYNC=1): 65 536 threads of 8 elements, 0.138 ms an iteration; 2^19 threads of 4,
/// 0.180 ms.
const MAX_REDUCTION_THREADS: usize = 65536;
/// The device layout of dats of dim > 1 when `OP_AUTO_SOA` is not set: structure-of-arrays.
/// Measured on an H200 (GPU kit, 2026-11-27, Airfoil 720K, 200 iterations, atomics): 0.355 ms
/// an iteration with structure-of-arrays against 0.496 with array-of-structures; `res_calc`,
/// the loop furthest from its floor, went from 5.5x to 3.1x its floor. A warp's loads of one
/// component then read consecutive words.
const SOA_DEFAULT: bool = true;

/// Elements per thread of a launch with reductions (under the cap above).
const REDUCTION_ELEMS: usize = 8;
/// Dynamic shared memory a block may use for its threads' partials without opting in.
const SHARED_BYTES: usize = 48 * 1024;

/// The driver library names tried, in the order cudarc tries them (so the one probed is the
/// one it loads).
const DRIVER_NAMES: [&str; 3] = ["libcuda.so", "libcuda.so.12", "libcuda.so.1"];

/// The GPU op2 would run on.
#[derive(Debug, Clone)]
pub struct Device {
    pub ordinal: usize,
    pub dev: sys::CUdevice,
    pub name: String,
    /// Compute capability (major, minor).
    pub cc: (i32, i32),
    pub driver_version: i32,
}

fn drv(what: &str, e: cu::DriverError) -> Op2Error {
    if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        return Op2Error::new(ErrorCode::OutOfMemory, format!("cuda: {what}: out of device memory"));
    }
    use sys::CUresult as R;
    // A kernel's fault surfaces at the next call that waits, which may belong to a later loop.
    let hint = match e.0 {
        R::CUDA_ERROR_ILLEGAL_ADDRESS
        | R::CUDA_ERROR_LAUNCH_FAILED
        | R::CUDA_ERROR_ILLEGAL_INSTRUCTION
        | R::CUDA_ERROR_MISALIGNED_ADDRESS
        | R::CUDA_ERROR_HARDWARE_STACK_ERROR
        | R::CUDA_ERROR_ASSERT => {
            " (launches are asynchronous: the kernel at fault may be an earlier loop's; OP2_DEVICE_SYNC=1 makes each loop wait for its own)"
        }
        _ => "",
    };
    Op2Error::new(ErrorCode::Device, format!("cuda: {what} failed: {e}{hint}"))
}

/// The driver's version, loading the driver library by name (before any cudarc call: cudarc
/// panics when it cannot load the library or a symbol of CUDA 12.0).
fn driver_version() -> std::result::Result<i32, String> {
    let mut errors = Vec::new();
    for name in DRIVER_NAMES {
        // SAFETY: loading the driver runs no initialisers with preconditions of ours.
        let lib = match unsafe { libloading::Library::new(name) } {
            Ok(l) => l,
            Err(e) => {
                errors.push(e.to_string());
                continue;
            }
        };
        type Version = unsafe extern "C" fn(*mut c_int) -> c_int;
        // SAFETY: cuDriverGetVersion has this signature in every driver.
        let f = unsafe { lib.get::<Version>(b"cuDriverGetVersion\0") }
            .map_err(|e| format!("{name} has no cuDriverGetVersion ({e})"))?;
        let mut v = 0;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { f(&mut v) };
        if rc != 0 {
            return Err(format!("cuDriverGetVersion failed with code {rc}"));
        }
        if v < 12000 {
            return Err(format!(
                "the CUDA driver supports CUDA {}.{}; op2 needs 12.0 or newer",
                v / 1000,
                v % 1000 / 10
            ));
        }
        // Keep it loaded: cudarc opens the same library by name.
        std::mem::forget(lib);
        return Ok(v);
    }
    Err(format!("no CUDA driver ({}: {})", DRIVER_NAMES.join(", "), errors.join("; ")))
}

/// The GPU op2 runs on (`OP2_CUDA_DEVICE`: its index, default 0), or why there is none: no
/// driver, no NVRTC, no device, or one older than compute capability 6.0 (`atomicAdd` on
/// double).
pub fn probe(ordinal: Option<usize>) -> std::result::Result<Device, String> {
    let driver_version = driver_version()?;
    crate::jit::nvrtc::probe()?;
    cu::init().map_err(|e| format!("cuInit failed: {e}"))?;
    let count = cu::device::get_count().map_err(|e| format!("cuDeviceGetCount failed: {e}"))?;
    if count <= 0 {
        return Err("the CUDA driver lists no device".to_string());
    }
    let ordinal = ordinal.unwrap_or(0);
    if ordinal >= count as usize {
        return Err(format!("OP2_CUDA_DEVICE={ordinal}, but there are {count} CUDA devices (0 to {})", count - 1));
    }
    let dev = cu::device::get(ordinal as c_int).map_err(|e| format!("cuDeviceGet failed: {e}"))?;
    let name = cu::device::get_name(dev).unwrap_or_default();
    let attr = |a| unsafe { cu::device::get_attribute(dev, a) };
    let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        .map_err(|e| format!("cuDeviceGetAttribute failed: {e}"))?;
    let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        .map_err(|e| format!("cuDeviceGetAttribute failed: {e}"))?;
    if major < 6 {
        return Err(format!("the CUDA device '{name}' has compute capability {major}.{minor}; op2 needs 6.0 or newer"));
    }
    Ok(Device { ordinal, dev, name, cc: (major, minor), driver_version })
}

/// A device allocation.
/// What a halo row list on the device serves: the export rows a gather downloads, or the rows
/// packed into (unpacked from) a CUDA-aware MPI exchange's staging area at a byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum RowUse {
    Gather,
    Pack(usize),
    Unpack(usize),
}

struct DevBuf {
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

/// Device buffers of one call (matrix values and slot tables), freed when it ends, whatever
/// the path.
struct CallBufs(Vec<(usize, DevBuf, DevBuf)>);

impl Drop for CallBufs {
    fn drop(&mut self) {
        for (_, v, t) in self.0.drain(..) {
            // SAFETY: allocated by cuMemAlloc in the current context; every launch has finished
            // (compute synchronises) or none was made.
            unsafe {
                let _ = cu::free_sync(v.ptr);
                let _ = cu::free_sync(t.ptr);
            }
        }
    }
}

/// A loaded loop module and its entry point.
struct Module {
    module: sys::CUmodule,
    func: sys::CUfunction,
}

pub struct Cuda {
    device: Device,
    /// `OP2_DUMP_SOURCE`: each module's source is written there before it is compiled.
    dump_dir: Option<std::path::PathBuf>,
    ctx: sys::CUcontext,
    /// `threads::fork_generation()` when the context was made.
    generation: u64,
    arch: String,
    /// Threads per block (`OP_BLOCK_SIZE`, 1 to 1024).
    /// `OP2_DEVICE_SYNC=1`: wait for every loop's launches before it returns.
    sync_each: bool,
    block: usize,
    inc: IncChoice,
    soa: bool,
    include_dirs: Vec<std::path::PathBuf>,
    cache: DiskCache,
    /// Loop packs (`OP2_LOOP_PACK`): CUBINs made ahead of time by op2-pack, found by the hash
    /// of their exact source, before the disk cache and NVRTC.
    packs: Vec<crate::jit::pack::Pack>,
    /// `OP2_JIT=off`: a loop in no pack is an error, NVRTC is never run.
    jit_off: bool,
    modules: Vec<Module>,
    by_source: HashMap<String, usize>,
    /// Index in `modules` per (loop shape, constants epoch, coloured, increment strategy).
    by_shape: HashMap<(usize, u64, bool, IncStrategy, Option<crate::backend::device::codegen::StagePattern>), usize>,
    dats: HashMap<DatId, DevBuf>,
    /// Rows of each dat on the device (the component stride of the SoA layout).
    rows: HashMap<DatId, usize>,
    /// The halo kernels' row lists and their device copies, per dat and use (fixed after
    /// op_partition, so uploaded once: `row_list`).
    row_lists: HashMap<(DatId, RowUse), (Vec<u32>, DevBuf)>,
    /// The packed buffer gathers fill.
    gather_out: Option<DevBuf>,
    /// CUDA-aware MPI (`Backend::mpi_staging`): the send and receive staging areas.
    stage_send: Option<DevBuf>,
    stage_recv: Option<DevBuf>,
    maps: HashMap<MapId, DevBuf>,
    /// Maps transposed (`codegen::soa_map`), with their rows.
    maps_t: HashMap<MapId, (DevBuf, usize)>,
    /// `OP2_INC=measure`: each loop's strategy by measure.
    tuner: super::device::IncTuner,
    /// `OP2_INC=stage`: per staged plan key, the pattern and staging bytes (None: not staged).
    stage_info: HashMap<u64, Option<(crate::backend::device::codegen::StagePattern, usize)>>,
    colourings: PlanCache,
    colour_lists: HashMap<u64, (DevBuf, Vec<(usize, usize)>)>,
    /// READ globals by argument position, reused from call to call.
    globals: HashMap<usize, DevBuf>,
    /// Reduction partials: the seed row, then a row per thread block.
    partials: Option<DevBuf>,
    /// What the READ globals' buffers and the seed row hold (written only when that changes).
    small: super::device::SmallWrites,
    /// Kernel launches so far (`Backend::launches`).
    launches: u64,
}

// SAFETY: the context and device pointers are plain handles; op2 uses the backend from one
// thread at a time (under the API lock) and makes the context current on each entry.
unsafe impl Send for Cuda {}

impl Cuda {
    pub fn new(config: &crate::config::Config) -> Result<Cuda> {
        let device = probe(config.cuda_device)
            .map_err(|e| Op2Error::new(ErrorCode::BackendUnavailable, format!("op_init: backend 'cuda': {e}")))?;
        // SAFETY: a device from cuDeviceGet.
        let ctx = unsafe { cu::primary_ctx::retain(device.dev) }.map_err(|e| drv("cuDevicePrimaryCtxRetain", e))?;
        let block = config.block_size.unwrap_or(BLOCK);
        if block > 1024 {
            // SAFETY: retained just above, released once.
            let _ = unsafe { cu::primary_ctx::release(device.dev) };
            op2_bail!(BadConfig, "op_init: OP_BLOCK_SIZE={block}: CUDA blocks have at most 1024 threads");
        }
        let cache = match DiskCache::open(&config.cache_dir) {
            Ok(c) => c,
            Err(e) => {
                // SAFETY: as above.
                let _ = unsafe { cu::primary_ctx::release(device.dev) };
                return Err(e);
            }
        };
        let packs = config.loop_packs.iter().map(|p| crate::jit::pack::Pack::open(p)).collect::<Result<Vec<_>>>()?;
        Ok(Cuda {
            dump_dir: config.dump_source.clone(),
            packs,
            jit_off: !config.jit,
            sync_each: config.device_sync,
            block,
            arch: format!("sm_{}{}", device.cc.0, device.cc.1),
            device,
            ctx,
            generation: super::host::threads::fork_generation(),
            // Unset, increments are chosen by measure per loop (on the H200 at 720K, atomics,
            // the earlier default, was the fastest of the three, but not at every size).
            inc: if config.inc == IncChoice::Auto { IncChoice::Measure } else { config.inc },
            soa: config.auto_soa.unwrap_or(SOA_DEFAULT),
            include_dirs: crate::backend::device::codegen::include_dirs(&config.cflags),
            cache,
            modules: Vec::new(),
            by_source: HashMap::new(),
            by_shape: HashMap::new(),
            dats: HashMap::new(),
            rows: HashMap::new(),
            row_lists: HashMap::new(),
            gather_out: None,
            stage_send: None,
            stage_recv: None,
            maps: HashMap::new(),
            colourings: PlanCache::new(),
            colour_lists: HashMap::new(),
            globals: HashMap::new(),
            partials: None,
            maps_t: HashMap::new(),
            tuner: Default::default(),
            stage_info: HashMap::new(),
            small: Default::default(),
            launches: 0,
        })
    }

    /// Makes the context current on this thread (op2 may be called from any thread).
    fn enter(&self, call: &str) -> Result<()> {
        check_process(self.generation, call, "cuda")?;
        // SAFETY: the context is retained until drop.
        unsafe { cu::ctx::set_current(self.ctx) }.map_err(|e| drv("cuCtxSetCurrent", e))
    }

    fn alloc_buf(&self, bytes: usize, what: &str) -> Result<DevBuf> {
        // SAFETY: a plain allocation (at least one byte).
        let ptr = unsafe { cu::malloc_sync(bytes.max(1)) }
            .map_err(|e| drv(&format!("cuMemAlloc of {bytes} bytes for {what} on '{}'", self.device.name), e))?;
        Ok(DevBuf { ptr, bytes })
    }

    fn write<T>(&self, buf: &DevBuf, data: &[T], what: &str) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        if std::mem::size_of_val(data) > buf.bytes {
            op2_bail!(Internal, "cuda: {what}: {} bytes into a buffer of {}", std::mem::size_of_val(data), buf.bytes);
        }
        // SAFETY: the buffer holds at least `data`'s bytes.
        unsafe { cu::memcpy_htod_sync(buf.ptr, data) }.map_err(|e| drv(&format!("cuMemcpyHtoD ({what})"), e))
    }

    fn read<T>(&self, buf: &DevBuf, out: &mut [T], what: &str) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        if std::mem::size_of_val(out) > buf.bytes {
            op2_bail!(Internal, "cuda: {what}: {} bytes from a buffer of {}", std::mem::size_of_val(out), buf.bytes);
        }
        // SAFETY: the buffer holds at least `out`'s bytes.
        unsafe { cu::memcpy_dtoh_sync(out, buf.ptr) }.map_err(|e| drv(&format!("cuMemcpyDtoH ({what})"), e))
    }

    /// A buffer of at least `bytes` in `slot`, (re)allocated when too small.
    fn ensure(&self, slot: Option<DevBuf>, bytes: usize, what: &str) -> Result<DevBuf> {
        match slot {
            Some(b) if b.bytes >= bytes => Ok(b),
            old => {
                if let Some(b) = old {
                    // SAFETY: allocated by cuMemAlloc, no launch in flight (calls synchronise).
                    unsafe { cu::free_sync(b.ptr) }.map_err(|e| drv("cuMemFree", e))?;
                }
                self.alloc_buf(bytes, what)
            }
        }
    }

    /// The CUBIN of a source: from a loop pack, else from the disk cache or NVRTC
    /// (`nvrtc::compile_cached`); with `OP2_JIT=off`, only from a pack.
    fn cubin(&self, source: &str, what: &str, loop_name: &str) -> Result<Vec<u8>> {
        let target = format!("cuda-{}", self.arch);
        let hash = crate::jit::pack::source_hash(source.as_bytes());
        if let Some((p, e)) = self.packs.iter().find_map(|p| p.find(&target, &hash).map(|e| (p, e))) {
            return Ok(p.library(e).to_vec());
        }
        if self.jit_off {
            let why = crate::jit::pack::missing(&self.packs, &target, loop_name);
            op2_bail!(Compile, "{what}: not compiled: OP2_JIT=off and {why}");
        }
        let (cubin, _) =
            crate::jit::nvrtc::compile_cached(&self.cache, source, &self.arch, "op2_loop.cu").map_err(|e| {
                Op2Error::new(
                    e.code,
                    format!("{what}: {} (kernel lines are numbered as in the kernel's own source)", e.message),
                )
            })?;
        Ok(cubin)
    }

    /// `download_rows` by the gather kernel (`device::GATHER_CUDA`): the rows packed on the
    /// device, then one copy down.
    fn gather(&mut self, d: DatId, shape: DatShape, host: &mut [u8], runs: &[(usize, usize)]) -> Result<u64> {
        let Some(&total) = self.rows.get(&d) else { return Ok(0) };
        let (list, eb) = super::device::gather_plan(total, shape, host, runs)?;
        let n = list.len();
        if n == 0 {
            return Ok(0);
        }
        let module = self.module(super::device::GATHER_CUDA.to_string(), "halo exchange gather", "halo exchange")?;
        let idx = self.row_list((d, RowUse::Gather), &list)?;
        let Some(src) = self.dats.get(&d).map(|b| b.ptr) else { return Ok(0) };
        let out = self.gather_out.take();
        let out = self.ensure(out, n * eb, "a halo exchange's packed rows")?;
        let soa_rows = if self.soa && shape.dim > 1 { total as u32 } else { 0 };
        // SAFETY: rows < total (checked by gather_list), `out` holds n * eb bytes.
        let r = unsafe { self.launch_rows(module, "gather", (src, out.ptr, idx), n, shape, soa_rows) }
            .and_then(|()| cu::ctx::synchronize().map_err(|e| drv("halo exchange gather (cuCtxSynchronize)", e)))
            .and_then(|()| {
                let mut packed: Vec<u8> = crate::core::alloc::zeroed(n * eb, "a halo exchange's packed rows")?;
                self.read(&out, &mut packed, "a halo exchange's packed rows")?;
                super::device::scatter_gathered(&list, &packed, eb, host);
                Ok((n * eb) as u64)
            });
        self.gather_out = Some(out);
        r
    }

    /// The device copy of the row list `rows` kept for `key`, uploaded again only when the rows
    /// change (they are fixed after op_partition, so in practice once).
    fn row_list(&mut self, key: (DatId, RowUse), rows: &[u32]) -> Result<sys::CUdeviceptr> {
        if let Some((v, b)) = self.row_lists.get(&key) {
            if v.as_slice() == rows {
                return Ok(b.ptr);
            }
        }
        let b = self.alloc_buf(rows.len() * 4, "a halo exchange's row list")?;
        if let Err(e) = self.write(&b, rows, "a halo exchange's row list") {
            // SAFETY: allocated just above, never used.
            let _ = unsafe { cu::free_sync(b.ptr) };
            return Err(e);
        }
        let ptr = b.ptr;
        if let Some((_, old)) = self.row_lists.insert(key, (rows.to_vec(), b)) {
            // SAFETY: allocated by cuMemAlloc in this context; the launches that read it
            // finished (gathers synchronise, and staged_sync ends every exchange's packs and
            // unpacks).
            let _ = unsafe { cu::free_sync(old.ptr) };
        }
        Ok(ptr)
    }

    /// Launches a halo rows kernel (`device::GATHER_CUDA` or `SCATTER_CUDA`, loaded as
    /// `module`) over `n` rows of `shape` with pointers (src, dst, rows); does not wait.
    ///
    /// # Safety
    /// `rows` holds `n` row indices below the dat's device rows (`soa_rows` when non-zero), and
    /// the packed side (dst for a gather, src for a scatter) holds `n` rows of the dat's bytes.
    unsafe fn launch_rows(
        &self,
        module: usize,
        what: &str,
        ptrs: (sys::CUdeviceptr, sys::CUdeviceptr, sys::CUdeviceptr),
        n: usize,
        shape: DatShape,
        soa_rows: u32,
    ) -> Result<()> {
        let eb = shape.dim * shape.elem;
        let (mut p_src, mut p_dst, mut p_idx) = ptrs;
        let mut ints = [n as u32, eb as u32, shape.elem as u32, soa_rows];
        let mut params: Vec<*mut c_void> = vec![
            &mut p_src as *mut sys::CUdeviceptr as *mut c_void,
            &mut p_dst as *mut sys::CUdeviceptr as *mut c_void,
            &mut p_idx as *mut sys::CUdeviceptr as *mut c_void,
        ];
        params.extend(ints.iter_mut().map(|v| v as *mut u32 as *mut c_void));
        let block = 256usize;
        let grid = (n * eb).div_ceil(block) as u32;
        // SAFETY: the parameters match the halo kernels' (three device pointers, four unsigned
        // ints) and point into locals that outlive the launch call; the buffers hold what the
        // kernel reads and writes (the caller's contract).
        unsafe {
            cu::launch_kernel(
                self.modules[module].func,
                (grid, 1, 1),
                (block as u32, 1, 1),
                0,
                std::ptr::null_mut(),
                &mut params,
            )
        }
        .map_err(|e| drv(&format!("cuLaunchKernel (halo exchange {what})"), e))
    }

    /// `pack_staged` and `unpack_staged`: rows `rows` of dat `d` between its device copy and
    /// the send area (pack) or the receive area (unpack) at byte `at`, by the gather or the
    /// scatter kernel; the row list's device copy is kept per (dat, direction, offset).
    fn staged(&mut self, d: DatId, shape: DatShape, rows: &[u32], at: usize, unpack: bool) -> Result<u64> {
        let what = if unpack { "halo rows unpack (CUDA-aware MPI)" } else { "halo rows pack (CUDA-aware MPI)" };
        self.enter(what)?;
        let n = rows.len();
        let eb = shape.dim * shape.elem;
        if n == 0 || eb == 0 {
            return Ok(0);
        }
        let (Some(&total), Some(dat)) = (self.rows.get(&d), self.dats.get(&d)) else {
            op2_bail!(Internal, "cuda: {what}: the dat has no device copy");
        };
        let dat = dat.ptr;
        if let Some(&r) = rows.iter().find(|&&r| r as usize >= total) {
            op2_bail!(Internal, "cuda: {what}: row {r} of a dat of {total} rows");
        }
        let area = if unpack { &self.stage_recv } else { &self.stage_send };
        let Some(area) = area.as_ref().filter(|a| at.checked_add(n * eb).is_some_and(|end| end <= a.bytes)) else {
            op2_bail!(Internal, "cuda: {what}: {} bytes at {at} do not fit the staging area", n * eb);
        };
        let area = area.ptr + at as sys::CUdeviceptr;
        let (source, name) = if unpack {
            (super::device::SCATTER_CUDA, "halo exchange scatter")
        } else {
            (super::device::GATHER_CUDA, "halo exchange gather")
        };
        let module = self.module(source.to_string(), name, "halo exchange")?;
        let idx = self.row_list((d, if unpack { RowUse::Unpack(at) } else { RowUse::Pack(at) }), rows)?;
        let soa_rows = if self.soa && shape.dim > 1 { total as u32 } else { 0 };
        let ptrs = if unpack { (area, dat, idx) } else { (dat, area, idx) };
        // SAFETY: every row is below the dat's rows (checked above), the area holds n rows of
        // eb bytes from `at` (checked above), the row list holds n entries.
        unsafe { self.launch_rows(module, if unpack { "scatter" } else { "gather" }, ptrs, n, shape, soa_rows) }?;
        Ok((n * eb) as u64)
    }

    /// The module for this source, loaded on first use; its index in `modules`.
    /// The staged plan of `[start, end)` (`device::staged_plan`), its packed arrays uploaded once
    /// (in `colour_lists`, under the returned key): (pattern, staging bytes, key), or None when
    /// the loop cannot be staged or a block's data needs more than `room` bytes.
    fn staged_plan(
        &mut self,
        call: &LoopCall,
        start: usize,
        end: usize,
        room: usize,
    ) -> Result<Option<(crate::backend::device::codegen::StagePattern, usize, u64)>> {
        // Distinct from the unstaged plan's key of the same blocks.
        let key = colouring_key(call, start, end, self.block) ^ 0x5741_4745_5354_4147;
        if let Some(&known) = self.stage_info.get(&key) {
            return Ok(known.map(|(p, b)| (p, b, key)));
        }
        let made = super::device::staged_plan(&mut self.colourings, call, start, end, self.block)?;
        let info = match made {
            Some(sp) if sp.bytes <= room => {
                if !self.colour_lists.contains_key(&key) {
                    let buf = self.alloc_buf(std::mem::size_of_val(&sp.packed[..]), "a staged plan")?;
                    self.write(&buf, &sp.packed, "staged plan")?;
                    self.colour_lists.insert(key, (buf, sp.ranges));
                }
                Some((sp.pattern, sp.bytes))
            }
            _ => None,
        };
        self.stage_info.insert(key, info);
        Ok(info.map(|(p, b)| (p, b, key)))
    }

    fn module(&mut self, source: String, what: &str, loop_name: &str) -> Result<usize> {
        if let Some(&i) = self.by_source.get(&source) {
            return Ok(i);
        }
        if let Some(dir) = &self.dump_dir {
            crate::jit::dump_device_source(dir, loop_name, "cu", &source, what);
        }
        let cubin = self.cubin(&source, what, loop_name)?;
        // SAFETY: a complete CUBIN image for this device's architecture.
        let module = unsafe { cu::module::load_data(cubin.as_ptr() as *const c_void) }
            .map_err(|e| drv(&format!("cuModuleLoadData ({what})"), e))?;
        let name = std::ffi::CString::new("op2_kernel").map_err(|_| crate::op2_err!(Internal, "entry name"))?;
        // SAFETY: a module just loaded.
        let func = match unsafe { cu::module::get_function(module, name) } {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: unloaded once, nothing refers to it.
                let _ = unsafe { cu::module::unload(module) };
                return Err(drv(&format!("cuModuleGetFunction ({what})"), e));
            }
        };
        self.modules.push(Module { module, func });
        self.by_source.insert(source, self.modules.len() - 1);
        Ok(self.modules.len() - 1)
    }
}

impl Backend for Cuda {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn is_device(&self) -> bool {
        true
    }

    fn launches(&self) -> u64 {
        self.launches
    }

    fn small_writes(&self) -> u64 {
        self.small.count
    }

    fn describe(&self) -> String {
        format!(
            "cuda on {} (device {}, {}, driver {}.{})",
            self.device.name,
            self.device.ordinal,
            self.arch,
            self.device.driver_version / 1000,
            self.device.driver_version % 1000 / 10
        )
    }

    fn free(&mut self, d: DatId) {
        self.rows.remove(&d);
        let lists: Vec<(DatId, RowUse)> = self.row_lists.keys().filter(|k| k.0 == d).copied().collect();
        for k in lists {
            if let Some((_, b)) = self.row_lists.remove(&k) {
                if self.enter("op_free_dat_temp_char").is_ok() {
                    // SAFETY: allocated by cuMemAlloc in this context; the launches that read
                    // it finished (see row_list), and nothing else refers to it.
                    let _ = unsafe { cu::free_sync(b.ptr) };
                }
            }
        }
        if let Some(b) = self.dats.remove(&d) {
            if self.enter("op_free_dat_temp_char").is_ok() {
                // SAFETY: allocated by cuMemAlloc in this context; every launch has finished
                // (each loop synchronises), and the dat is gone, so nothing refers to it.
                let _ = unsafe { cu::free_sync(b.ptr) };
            }
        }
    }

    fn alloc(&mut self, d: DatId, shape: DatShape, bytes: usize) -> Result<()> {
        self.enter("device allocation")?;
        if !self.dats.contains_key(&d) {
            let buf = self.alloc_buf(bytes, "a dat")?;
            self.dats.insert(d, buf);
            self.rows.insert(d, bytes / (shape.dim * shape.elem).max(1));
        }
        Ok(())
    }

    fn upload(&mut self, d: DatId, shape: DatShape, host: &[u8]) -> Result<()> {
        self.alloc(d, shape, host.len())?;
        let buf = self.dats.get(&d).ok_or_else(|| crate::op2_err!(Internal, "cuda: upload: no buffer"))?;
        self.write(buf, &super::device::device_layout(self.soa, shape, host), "dat upload")
    }

    fn download(&mut self, d: DatId, shape: DatShape, host: &mut [u8]) -> Result<()> {
        self.enter("device download")?;
        match self.dats.get(&d) {
            Some(buf) => super::device::read_host_layout(self.soa, shape, host, |h| self.read(buf, h, "dat download")),
            None => Ok(()),
        }
    }

    fn can_stage_for_mpi(&self) -> bool {
        true
    }

    fn mpi_staging(&mut self, send: usize, recv: usize) -> Result<Option<(usize, usize)>> {
        self.enter("halo exchange staging (CUDA-aware MPI)")?;
        let s = self.stage_send.take();
        let s = self.ensure(s, send, "a halo exchange's send area")?;
        let r = self.stage_recv.take();
        let r = match self.ensure(r, recv, "a halo exchange's receive area") {
            Ok(r) => r,
            Err(e) => {
                self.stage_send = Some(s);
                return Err(e);
            }
        };
        let addrs = (s.ptr as usize, r.ptr as usize);
        self.stage_send = Some(s);
        self.stage_recv = Some(r);
        Ok(Some(addrs))
    }

    fn pack_staged(&mut self, d: DatId, shape: DatShape, rows: &[u32], at: usize) -> Result<u64> {
        self.staged(d, shape, rows, at, false)
    }

    fn unpack_staged(&mut self, d: DatId, shape: DatShape, rows: &[u32], at: usize) -> Result<u64> {
        self.staged(d, shape, rows, at, true)
    }

    fn staged_sync(&mut self) -> Result<()> {
        self.enter("halo exchange (CUDA-aware MPI)")?;
        cu::ctx::synchronize().map_err(|e| drv("halo exchange packs and unpacks (cuCtxSynchronize)", e))
    }

    fn download_rows(&mut self, d: DatId, shape: DatShape, host: &mut [u8], runs: &[(usize, usize)]) -> Result<u64> {
        self.enter("halo rows download")?;
        if runs.len() > super::device::GATHER_MIN_RUNS {
            return self.gather(d, shape, host, runs);
        }
        let (Some(buf), Some(&rows)) = (self.dats.get(&d), self.rows.get(&d)) else { return Ok(0) };
        super::device::read_rows(self.soa, shape, rows, host, runs, |off, out| {
            if off + out.len() > buf.bytes {
                op2_bail!(
                    Internal,
                    "cuda: halo rows download: {} bytes at {off} of a buffer of {}",
                    out.len(),
                    buf.bytes
                );
            }
            // SAFETY: the range lies inside the buffer (checked above).
            unsafe { cu::memcpy_dtoh_sync(out, buf.ptr + off as sys::CUdeviceptr) }
                .map_err(|e| drv("cuMemcpyDtoH (halo export rows)", e))
        })
    }

    fn upload_rows(&mut self, d: DatId, shape: DatShape, host: &[u8], runs: &[(usize, usize)]) -> Result<u64> {
        self.enter("halo rows upload")?;
        let (Some(buf), Some(&rows)) = (self.dats.get(&d), self.rows.get(&d)) else { return Ok(0) };
        super::device::write_rows(self.soa, shape, rows, host, runs, |off, data| {
            if off + data.len() > buf.bytes {
                op2_bail!(
                    Internal,
                    "cuda: halo rows upload: {} bytes at {off} of a buffer of {}",
                    data.len(),
                    buf.bytes
                );
            }
            // SAFETY: the range lies inside the buffer (checked above).
            unsafe { cu::memcpy_htod_sync(buf.ptr + off as sys::CUdeviceptr, data) }
                .map_err(|e| drv("cuMemcpyHtoD (halo import rows)", e))
        })
    }

    fn compute(&mut self, call: &mut LoopCall, start: usize, end: usize) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        let name = call.name;
        self.enter(&format!("op_par_loop '{name}'"))?;
        let sig = check_loop(call, "cuda")?;
        let coloured_loop = call.needs_colouring();
        // OP2_INC=measure (the default): this loop's strategy, or the next one to try.
        let tuning = (call.shape_key, start, end);
        let (choice, trial) = if coloured_loop && self.inc == IncChoice::Measure {
            let (dev, arch, soa) = (&self.device.name, &self.arch, self.soa);
            let device = || format!("cuda {dev} {arch} ({})", if soa { "soa" } else { "aos" });
            self.tuner.choose(call, sig, (start, end), device, &self.cache)
        } else {
            (self.inc, false)
        };
        let staged = coloured_loop && matches!(choice, IncChoice::Blocks | IncChoice::Stage);
        let stride = crate::backend::device::codegen::partial_words(call.descs);
        // With reductions: blocks of at most `block` threads whose partials fit 48 KiB of shared
        // memory, at most MAX_REDUCTION_THREADS threads a launch, one partials row per block.
        let block = if stride == 0 { self.block } else { self.block.min((SHARED_BYTES / (stride * 8)).max(1)) };
        // OP2_INC=stage: the plan blocks' indirect data in shared memory, where the loop can be
        // staged and a block's data fits beside the reductions' rows (else plain blocks).
        let stage = if staged && choice == IncChoice::Stage {
            self.staged_plan(call, start, end, SHARED_BYTES.saturating_sub(block * stride * 8))?
        } else {
            None
        };
        let atomics = coloured_loop
            && matches!(choice, IncChoice::Auto | IncChoice::Atomics)
            && emit::atomics_possible(call.descs);
        let coloured = coloured_loop && !atomics && !staged;
        let inc = match (atomics, staged) {
            (true, _) => IncStrategy::Atomics,
            (_, true) => IncStrategy::TwoLevel,
            _ => IncStrategy::Plain,
        };
        let shape = (call.shape_key, call.const_epoch, coloured, inc, stage.map(|s| s.0));
        let module = match self.by_shape.get(&shape) {
            Some(&i) => i,
            None => {
                let src = if call.parts.is_empty() {
                    let expanded = crate::backend::device::codegen::expand_includes(
                        sig.kernel_source,
                        &self.include_dirs,
                        sig.kernel_origin,
                    )
                    .map_err(|e| Op2Error::new(ErrorCode::Compile, format!("op_par_loop '{name}': {e}")))?;
                    let sig = crate::codegen::LoopSignature { kernel_source: &expanded, ..sig.clone() };
                    match stage {
                        Some((pattern, ..)) => emit::generate_staged(&sig, &call.const_values, self.soa, pattern),
                        None => emit::generate(&sig, &call.const_values, coloured, inc, self.soa),
                    }
                } else {
                    if coloured_loop {
                        op2_bail!(Internal, "op_par_loop '{name}': a fused unit that needs colouring");
                    }
                    let expanded = super::device::expand_parts(call, &self.include_dirs)?;
                    let parts: Vec<crate::codegen::LoopSignature> = call
                        .parts
                        .iter()
                        .zip(&expanded)
                        .map(|(p, src)| crate::codegen::LoopSignature { kernel_source: src, ..p.clone() })
                        .collect();
                    emit::generate_fused(&parts, sig.consts, &call.const_values, self.soa)
                };
                let what = format!("op_par_loop '{name}' (kernel '{}')", sig.kernel_name);
                let i = self.module(src, &what, name)?;
                self.by_shape.insert(shape, i);
                i
            }
        };
        // Inputs: maps (once), READ globals, partials. (A trial of OP2_INC=measure is timed from
        // here: building the module is not the strategy's cost.)
        let t0 = std::time::Instant::now();
        let kargs = kernel_arg_owners(call, self.soa)?;
        for &(owner, a) in &kargs {
            let Some((_, values)) = call.maps[owner].as_ref() else { continue };
            match a {
                KernelArg::Map(Some(m)) if !self.maps.contains_key(&m) => {
                    let buf = self.alloc_buf(std::mem::size_of_val(*values), "a map")?;
                    self.write(&buf, values, "map")?;
                    self.maps.insert(m, buf);
                }
                KernelArg::MapT(Some(m), dim) if !self.maps_t.contains_key(&m) => {
                    let buf = self.alloc_buf(std::mem::size_of_val(*values), "a map")?;
                    let written = self.write(&buf, &super::device::transpose_map(values, dim), "map");
                    self.maps_t.insert(m, (buf, values.len() / dim.max(1)));
                    written?;
                }
                _ => {}
            }
        }
        for (i, host) in read_globals(call) {
            let old = self.globals.remove(&i);
            let fresh = !matches!(&old, Some(b) if b.bytes >= host.len());
            let buf = self.ensure(old, host.len(), "a global")?;
            let key = SmallBuf::Global(i);
            if self.small.holds(key, host, fresh) {
                self.globals.insert(i, buf);
                continue;
            }
            let written = self.write(&buf, host, "global");
            self.globals.insert(i, buf);
            match written {
                Ok(()) => self.small.wrote(key, host),
                Err(e) => {
                    self.small.forget(key);
                    return Err(e);
                }
            }
        }
        let (elems, launches) = if let Some((_, _, key)) = stage {
            let (buf, ranges) = &self.colour_lists[&key];
            (buf.ptr, ranges.clone())
        } else if coloured || staged {
            // Element colourings, or plans of `block`-element blocks, uploaded once.
            let part = if staged { self.block } else { 1 };
            let key = colouring_key(call, start, end, part);
            if !self.colour_lists.contains_key(&key) {
                let (elems, ranges) = if staged {
                    packed_plan(&mut self.colourings, call, start, end, part)?
                } else {
                    element_lists(&mut self.colourings, call, start, end, 1)?
                };
                let buf = self.alloc_buf(std::mem::size_of_val(&elems[..]), "an element colouring")?;
                self.write(&buf, &elems, "element colouring")?;
                self.colour_lists.insert(key, (buf, ranges));
            }
            let (buf, ranges) = &self.colour_lists[&key];
            (buf.ptr, ranges.clone())
        } else {
            (0, vec![(start, end - start)])
        };
        // Thread blocks of each launch. With reductions, a direct or coloured launch has a
        // thread for every REDUCTION_ELEMS elements (at most MAX_REDUCTION_THREADS), and a staged
        // one a thread block per plan block (a grid-stride loop over them past the cap); one
        // partials row per thread block of the widest launch, so only those rows go up and down.
        let cap = MAX_REDUCTION_THREADS.div_ceil(block);
        let grid_of = |count: usize| -> usize {
            match (staged, stride) {
                (true, 0) => count,
                (true, _) => count.min(cap),
                (false, 0) => count.div_ceil(block),
                (false, _) => count.div_ceil(REDUCTION_ELEMS).clamp(1, MAX_REDUCTION_THREADS).div_ceil(block),
            }
        };
        let rows = launches.iter().filter(|l| l.1 > 0).map(|l| grid_of(l.1)).max().unwrap_or(1);
        let mut partials = None;
        if stride > 0 {
            let Some(p) = Partials::new(&call.reductions, rows) else {
                op2_bail!(OutOfMemory, "op_par_loop '{name}': cannot allocate reduction partials");
            };
            // The seed row (every block's seeds are the same), then a row per block.
            let bytes = stride * (rows + 1) * 8;
            let old = self.partials.take();
            let fresh = !matches!(&old, Some(b) if b.bytes >= bytes);
            let buf = self.ensure(old, bytes, "reduction partials")?;
            let seed = &p.words()[..stride];
            let key = SmallBuf::Seed;
            let written = if self.small.holds(key, as_bytes(seed), fresh) {
                Ok(())
            } else {
                self.small.forget(key);
                self.write(&buf, seed, "reduction seeds").map(|()| self.small.wrote(key, as_bytes(seed)))
            };
            self.partials = Some(buf);
            written?;
            partials = Some(p);
        }
        // Matrices stay in host memory (as on opencl): their values and slot tables go up for
        // the launches and the values come back after them.
        let mut mat_bufs = CallBufs(Vec::new());
        for m in super::device::mat_args(call) {
            let v = self.alloc_buf(m.values.len(), "a matrix's values")?;
            let t = match self.alloc_buf(std::mem::size_of_val(m.slots), "a matrix's slot table") {
                Ok(t) => t,
                Err(e) => {
                    // SAFETY: just allocated, never used.
                    let _ = unsafe { cu::free_sync(v.ptr) };
                    return Err(e);
                }
            };
            mat_bufs.0.push((m.arg, v, t));
            let (_, v, t) = &mat_bufs.0[mat_bufs.0.len() - 1];
            self.write(v, m.values, "a matrix's values")?;
            self.write(t, m.slots, "a matrix's slot table")?;
        }
        let mat_buf = |i: usize| mat_bufs.0.iter().find(|(a, _, _)| *a == i);
        // Argument values: device pointers (a disabled argument gets a null pointer, never
        // dereferenced) and ints, in the generated code's order.
        enum Val {
            Ptr(sys::CUdeviceptr),
            Int(c_int),
        }
        let part_ptr = self.partials.as_ref().filter(|_| stride > 0).map_or(0, |b| b.ptr);
        let mut vals = vec![Val::Int(0), Val::Int(0), Val::Int(0), Val::Ptr(elems), Val::Ptr(part_ptr)];
        for (_, a) in kargs {
            vals.push(match a {
                KernelArg::Dat(None) => Val::Ptr(0),
                KernelArg::Dat(Some(d)) => match self.dats.get(&d) {
                    Some(b) => Val::Ptr(b.ptr),
                    None => op2_bail!(Internal, "op_par_loop '{name}': a dat is not on the device"),
                },
                KernelArg::Rows(d) => Val::Int(d.and_then(|d| self.rows.get(&d)).map_or(0, |&r| r as c_int)),
                KernelArg::Map(m) => Val::Ptr(m.and_then(|m| self.maps.get(&m)).map_or(0, |b| b.ptr)),
                KernelArg::MapT(m, _) => Val::Ptr(m.and_then(|m| self.maps_t.get(&m)).map_or(0, |b| b.0.ptr)),
                KernelArg::MapRows(m, _) => Val::Int(m.and_then(|m| self.maps_t.get(&m)).map_or(0, |b| b.1 as c_int)),
                KernelArg::Flag(f) => Val::Int(f),
                KernelArg::Global(i) => match self.globals.get(&i) {
                    Some(b) => Val::Ptr(b.ptr),
                    None => op2_bail!(Internal, "op_par_loop '{name}': arg {i}: no global buffer"),
                },
                KernelArg::MatValues(i) => match mat_buf(i) {
                    Some((_, v, _)) => Val::Ptr(v.ptr),
                    None => op2_bail!(Internal, "op_par_loop '{name}': arg {i}: no matrix buffer"),
                },
                KernelArg::MatSlots(i) => match mat_buf(i) {
                    Some((_, _, t)) => Val::Ptr(t.ptr),
                    None => op2_bail!(Internal, "op_par_loop '{name}': arg {i}: no slot table buffer"),
                },
            });
        }
        let func = self.modules[module].func;
        // Partials rows written by this loop's launches so far (the rest start from the seed).
        let mut done = 0usize;
        for (first, count) in launches {
            if count == 0 {
                continue;
            }
            vals[0] = Val::Int(first as c_int);
            vals[1] = Val::Int(count as c_int);
            vals[2] = Val::Int(done as c_int);
            let grid = grid_of(count) as u32;
            done = done.max(grid as usize);
            let shared = (block * stride * 8 + stage.map_or(0, |s| s.1)) as u32;
            let mut params: Vec<*mut c_void> = vals
                .iter_mut()
                .map(|v| match v {
                    Val::Ptr(p) => p as *mut sys::CUdeviceptr as *mut c_void,
                    Val::Int(i) => i as *mut c_int as *mut c_void,
                })
                .collect();
            // SAFETY: the parameters match the generated kernel's (backend::device::codegen's ABI) and
            // point into `vals`, which outlives the launch; the grid is non-empty.
            unsafe {
                cu::launch_kernel(func, (grid, 1, 1), (block as u32, 1, 1), shared, std::ptr::null_mut(), &mut params)
            }
            .map_err(|e| drv(&format!("cuLaunchKernel (op_par_loop '{name}')"), e))?;
            self.launches += 1;
        }
        // A loop with nothing to bring back returns once launched: the launches run in order on
        // the default stream, and every later copy (up or down) and free waits for them. Waiting
        // here costs a round trip per loop (about 17 us a call on an H200: Airfoil's bres_calc,
        // 2 800 edges, took 35 us an iteration for its two calls).
        if self.sync_each || trial || stride > 0 || !mat_bufs.0.is_empty() {
            cu::ctx::synchronize().map_err(|e| drv(&format!("op_par_loop '{name}' (cuCtxSynchronize)"), e))?;
        }
        for (i, v, _) in &mat_bufs.0 {
            let (ptr, len) = super::device::mat_values_ptr(call, *i);
            if !ptr.is_null() && len > 0 {
                // SAFETY: the matrix's host values, `len` bytes, which nothing else refers to
                // during the loop (the driver's slot for this argument).
                let host = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
                self.read(v, host, "a matrix's values")?;
            }
        }
        drop(mat_bufs);
        if let Some(mut p) = partials {
            if let Some(buf) = &self.partials {
                let out = p.words_mut();
                if std::mem::size_of_val(out) + stride * 8 > buf.bytes {
                    op2_bail!(Internal, "cuda: op_par_loop '{name}': partials rows past their buffer");
                }
                // SAFETY: rows 1..=rows of the buffer (checked above), after the launches (synchronised).
                unsafe { cu::memcpy_dtoh_sync(out, buf.ptr + (stride * 8) as sys::CUdeviceptr) }
                    .map_err(|e| drv("cuMemcpyDtoH (reduction partials)", e))?;
            }
            p.combine_into(&mut call.reductions, rows);
        }
        if trial {
            self.tuner.record(tuning, choice, t0.elapsed(), &self.cache);
        }
        Ok(())
    }

    fn work_report(&self) -> Option<String> {
        self.tuner.report()
    }
}

impl Drop for Cuda {
    fn drop(&mut self) {
        if self.enter("op_exit").is_err() {
            // A forked child or a lost context: nothing to release here.
            return;
        }
        let bufs = self
            .dats
            .drain()
            .map(|(_, b)| b)
            .chain(self.maps.drain().map(|(_, b)| b))
            .chain(self.maps_t.drain().map(|(_, (b, _))| b))
            .chain(self.colour_lists.drain().map(|(_, (b, _))| b))
            .chain(self.globals.drain().map(|(_, b)| b))
            .chain(self.partials.take())
            .chain(self.row_lists.drain().map(|(_, (_, b))| b))
            .chain(self.gather_out.take())
            .chain(self.stage_send.take())
            .chain(self.stage_recv.take());
        for b in bufs {
            // SAFETY: allocated by cuMemAlloc in this context, freed once.
            let _ = unsafe { cu::free_sync(b.ptr) };
        }
        for m in self.modules.drain(..) {
            // SAFETY: loaded in this context, unloaded once.
            let _ = unsafe { cu::module::unload(m.module) };
        }
        // SAFETY: retained in `new`, released once.
        let _ = unsafe { cu::primary_ctx::release(self.device.dev) };
    }
}
