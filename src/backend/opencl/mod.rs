//! The `opencl` backend (opencl3, the OpenCL ICD loaded at run time): dats live in device
//! buffers between loops, moved by the driver's residency rule through `upload`/`download`;
//! maps are uploaded once; each loop shape is built once per device into a program from
//! `backend::opencl::codegen` and cached by source text (PoCL keeps its own binary cache too).
//!
//! Execution: every section runs as one launch of a grid-stride kernel over
//! `work_items(n)` work-items, or, for loops with indirect increments and `OP2_INC=colour`
//! (the default here, see `IncChoice`), one launch per colour of an element colouring (the
//! plan built with one element per block), so no two work-items of a launch increment the same
//! target. `OP2_INC=atomics` uses compare-and-swap adds instead and one launch. Reductions:
//! one partials row per work-item, started from a seed row that is written only when the
//! caller's values change, and combined on the host in work-item order (by the same code as
//! the threads backend's blocks): deterministic for a given device and set size.

pub mod codegen;

use super::device::{KernelArg, SmallBuf};
use super::reduce::as_bytes;
use super::reduce::Partials;
use super::{Backend, DatShape, LoopCall};
use crate::arg::ArgDesc;
use crate::backend::opencl::codegen::{self as emit, IncStrategy};
use crate::config::BackendKind;
pub use crate::config::IncChoice;
use crate::core::{DatId, MapId};
use crate::error::{ErrorCode, Op2Error, Result};
use crate::jit::cache::{DiskCache, Lookup};
use crate::op2_bail;
use crate::plan::PlanCache;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_int, CL_BLOCKING};
use std::collections::HashMap;
use std::ffi::c_void;

/// An OpenCL failure as an op2 error naming the call.
fn cl_err(what: &str, e: impl std::fmt::Display) -> Op2Error {
    Op2Error::new(ErrorCode::Device, format!("opencl: {what} failed: {e}"))
}

/// Whether an OpenCL error code means the device ran out of memory or the allocation is too
/// large for it.
fn is_oom(code: i32) -> bool {
    // CL_MEM_OBJECT_ALLOCATION_FAILURE -4, CL_OUT_OF_RESOURCES -5, CL_OUT_OF_HOST_MEMORY -6,
    // CL_INVALID_BUFFER_SIZE -61.
    matches!(code, -4 | -5 | -6 | -61)
}

/// The OpenCL device op2 runs on, or why there is none. `selector`: `P:D` indices (platform,
/// device) or a substring of the device or platform name (`OP2_OPENCL_DEVICE`).
pub fn probe(selector: Option<&str>) -> std::result::Result<Device, String> {
    use opencl3::platform::get_platforms;
    let platforms = get_platforms()
        .map_err(|e| format!("no OpenCL runtime or platform ({e}); install an ICD such as pocl-opencl-icd"))?;
    let mut all: Vec<(usize, usize, Device, String)> = Vec::new();
    for (p, plat) in platforms.iter().enumerate() {
        let pname = plat.name().unwrap_or_default();
        for (d, id) in plat.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default().into_iter().enumerate() {
            let dev = Device::new(id);
            let name = format!("{} / {}", pname, dev.name().unwrap_or_default());
            all.push((p, d, dev, name));
        }
    }
    if all.is_empty() {
        return Err("the OpenCL runtime lists no devices".to_string());
    }
    let chosen = match selector.map(str::trim).filter(|s| !s.is_empty()) {
        None => all.into_iter().next(),
        Some(sel) => {
            let idx = sel.split_once(':').and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)));
            let names: Vec<String> = all.iter().map(|(p, d, _, n)| format!("{p}:{d} {n}")).collect();
            let found = match idx {
                Some((p, d)) => all.into_iter().find(|(q, e, _, _)| *q == p && *e == d),
                None => all.into_iter().find(|(_, _, _, n)| n.to_lowercase().contains(&sel.to_lowercase())),
            };
            match found {
                Some(f) => Some(f),
                None => return Err(format!("OP2_OPENCL_DEVICE={sel} matches none of: {}", names.join("; "))),
            }
        }
    };
    let (_, _, dev, _) = chosen.ok_or("no OpenCL device")?;
    let ext = dev.extensions().unwrap_or_default();
    if !ext.contains("cl_khr_fp64") {
        return Err(format!(
            "the OpenCL device '{}' has no double precision (cl_khr_fp64)",
            dev.name().unwrap_or_default()
        ));
    }
    Ok(dev)
}

/// A colouring's element lists on the device, and (offset, count) per colour.
type ColourLists = (Buffer<cl_int>, Vec<(usize, usize)>);

/// A built loop program.
struct Prog {
    kernel: Kernel,
    _program: Program,
}

pub struct OpenCl {
    device: Device,
    /// `OP2_DUMP_SOURCE`: each program's source is written there before it is built.
    dump_dir: Option<std::path::PathBuf>,
    /// Dropped only in the process that made them (`Drop`): after fork() the runtime's threads
    /// and locks are not in the child.
    context: std::mem::ManuallyDrop<ClContext>,
    queue: std::mem::ManuallyDrop<CommandQueue>,
    /// `threads::fork_generation()` when the context was made.
    generation: u64,
    /// "platform device (version)", for diagnostics.
    pub description: String,
    inc: IncChoice,
    programs: Vec<Prog>,
    /// Index in `programs` by source text (loops of the same code share a program).
    by_source: HashMap<String, usize>,
    /// Index in `programs` per (loop shape, constants epoch, launch form): what a call looks
    /// up, so code is generated and hashed once per shape, not per call.
    by_shape: HashMap<(usize, u64, Form, u64), usize>,
    /// Maps of declared indices for `op_arg_idx` after `op_renumber`, by (map, loop set).
    idx_maps: HashMap<(Option<MapId>, u32), Buffer<cl_int>>,
    dats: HashMap<DatId, Buffer<u8>>,
    /// Host memory behind dat buffers made with `huge_buffer` (unmapped after the buffers).
    host_mem: HashMap<DatId, crate::core::buffer::AlignedBuf>,
    maps: HashMap<MapId, Buffer<cl_int>>,
    /// Maps transposed (`codegen::soa_map`), with their rows.
    maps_t: HashMap<MapId, (Buffer<u8>, usize)>,
    /// `OP2_DEVICE_PROFILE=1`: each loop's kernel time (profiling events) and backend time.
    profile: Option<super::device::DeviceProfile>,
    /// `OP2_INC=measure`: each loop's strategy by measure.
    tuner: super::device::IncTuner,
    /// Element colourings (one element per plan block) and their element lists on the device.
    colourings: PlanCache,
    colour_lists: HashMap<u64, ColourLists>,
    /// Buffers of READ globals, by argument position, reused from call to call.
    globals: Vec<Option<(Buffer<u8>, usize)>>,
    /// What the READ globals' buffers and the partials' seed row hold (written only when that
    /// changes).
    small: super::device::SmallWrites,
    partials: Option<(Buffer<u64>, usize)>,
    /// Global-memory staging of arguments too large for private memory, and its bytes.
    scratch: Option<(Buffer<u8>, usize)>,
    dummy: std::mem::ManuallyDrop<Buffer<u8>>,
    max_work_items: usize,
    /// `-I` directories of `OP2_CFLAGS`, where kernels' quoted includes are found.
    include_dirs: Vec<std::path::PathBuf>,
    /// `OP_AUTO_SOA=1`: dats of dim > 1 stored component by component on the device.
    soa: bool,
    /// Rows of each dat on the device (the component stride of the SoA layout).
    rows: HashMap<DatId, usize>,
    /// Per dat: the export rows last gathered and their device copy (fixed after op_partition,
    /// so uploaded once), and the packed buffer gathers fill.
    gather_rows: HashMap<DatId, (Vec<u32>, Buffer<u32>)>,
    gather_out: Option<(Buffer<u8>, usize)>,
    /// `OP_PART_SIZE` (block size of `Blocks`), or None for `threads::default_part_size`.
    part_size: Option<usize>,
    /// op2's disk cache, where program binaries are kept (`<key>.clbin`).
    cache: DiskCache,
    /// Platform, device and driver names and versions (part of the binaries' cache key).
    identity: String,
    /// `op_init`'s diagnostics level: at 2 and above a line per program built or loaded.
    diags: i32,
    /// A CPU device (PoCL): launches with reductions give each work-item a contiguous range.
    cpu: bool,
    /// Kernel launches so far (`Backend::launches`).
    launches: u64,
}

/// Bytes of global-memory scratch a launch may use for arguments too large for private memory
/// (it bounds the launch's work-items: at least one).
const SCRATCH_BUDGET: usize = 64 << 20;

/// Dats of at least this many bytes get huge-page memory on CPU devices (and their mappings
/// are rounded up to it: one huge page).
const HUGE_MIN: usize = 2 << 20;

/// Options every program is built with (part of the binaries' cache key).
const BUILD_OPTIONS: &str = "-cl-std=CL1.2 -w";
/// First bytes of a program binary entry, followed by its 40-character key: an entry moved
/// into another's place is never loaded as that program.
const BINARY_MAGIC: &[u8; 8] = b"OP2CLB01";

/// Where a program came from, for `diags` >= 2.
enum Origin {
    /// Its binary, from op2's disk cache.
    Cached,
    /// Built from source: why any cache entry was not used, and whether the binary was stored.
    Built { rebuilt: Option<String>, stored: std::result::Result<(), String> },
}

/// How one loop is launched: every element at once; element-coloured; block-coloured; or at
/// once with atomic increments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Form {
    Direct,
    Elements,
    Blocks,
    Atomics,
}

// SAFETY: the OpenCL objects are reference-counted handles usable from any thread; op2 uses
// the backend from one thread at a time (under the API lock).
unsafe impl Send for OpenCl {}

impl OpenCl {
    pub fn new(config: &crate::config::Config) -> Result<OpenCl> {
        let (selector, inc, cflags, soa, part_size) = (
            config.opencl_device.as_deref(),
            config.inc,
            &config.cflags,
            config.auto_soa.unwrap_or(false),
            config.part_size,
        );
        let device = probe(selector)
            .map_err(|e| Op2Error::new(ErrorCode::BackendUnavailable, format!("op_init: backend 'opencl': {e}")))?;
        let context = ClContext::from_device(&device).map_err(|e| cl_err("clCreateContext", e))?;
        #[allow(deprecated)]
        let props = if config.device_profile { opencl3::command_queue::CL_QUEUE_PROFILING_ENABLE } else { 0 };
        let queue = CommandQueue::create_default(&context, props).map_err(|e| cl_err("clCreateCommandQueue", e))?;
        // SAFETY: a 16-byte device buffer with no host pointer.
        let dummy = unsafe { Buffer::<u8>::create(&context, CL_MEM_READ_WRITE, 16, std::ptr::null_mut()) }
            .map_err(|e| cl_err("clCreateBuffer", e))?;
        let cu = device.max_compute_units().unwrap_or(1).max(1);
        let cpu = device.dev_type().is_ok_and(|t| t & opencl3::device::CL_DEVICE_TYPE_CPU != 0);
        let inc = match inc {
            IncChoice::Auto if cpu => IncChoice::Blocks,
            IncChoice::Auto => IncChoice::Colour,
            other => other,
        };
        // The program binary cache: op2's disk cache, under its trust rules; entries keyed by
        // the source, the build options and everything that identifies the compiler below.
        let cache = DiskCache::open(&config.cache_dir)?;
        let platform = device.platform().ok().map(opencl3::platform::Platform::new);
        let identity = format!(
            "platform '{}' '{}'; device '{}' '{}' '{}'; driver '{}'",
            platform.as_ref().and_then(|p| p.name().ok()).unwrap_or_default(),
            platform.as_ref().and_then(|p| p.version().ok()).unwrap_or_default(),
            device.vendor().unwrap_or_default(),
            device.name().unwrap_or_default(),
            device.version().unwrap_or_default(),
            device.driver_version().unwrap_or_default(),
        );
        let description = format!(
            "{} ({}, {} compute units)",
            device.name().unwrap_or_default(),
            device.version().unwrap_or_default(),
            cu
        );
        Ok(OpenCl {
            device,
            dump_dir: config.dump_source.clone(),
            context: std::mem::ManuallyDrop::new(context),
            queue: std::mem::ManuallyDrop::new(queue),
            generation: super::host::threads::fork_generation(),
            description,
            inc,
            programs: Vec::new(),
            by_source: HashMap::new(),
            by_shape: HashMap::new(),
            idx_maps: HashMap::new(),
            dats: HashMap::new(),
            host_mem: HashMap::new(),
            maps: HashMap::new(),
            maps_t: HashMap::new(),
            colourings: PlanCache::new(),
            colour_lists: HashMap::new(),
            globals: Vec::new(),
            small: Default::default(),
            partials: None,
            scratch: None,
            dummy: std::mem::ManuallyDrop::new(dummy),
            max_work_items: 65536,
            include_dirs: emit::include_dirs(cflags),
            soa,
            rows: HashMap::new(),
            gather_rows: HashMap::new(),
            gather_out: None,
            part_size,
            cache,
            identity,
            diags: config.diags,
            cpu,
            launches: 0,
            profile: config.device_profile.then(Default::default),
            tuner: Default::default(),
        })
    }

    /// After fork() the child has no OpenCL runtime threads: any call could hang.
    fn check_process(&self, call: &str) -> Result<()> {
        super::device::check_process(self.generation, call, "opencl")
    }

    /// Work-items for `n` elements: enough to fill the device, never more than the elements.
    /// Work-items of a launch with reductions over `n` elements: about 8 elements each (enough
    /// to amortise a partials row), at most `max_work_items`; depends on `n` only, so results
    /// are reproducible for a given device and set size.
    fn work_items(&self, n: usize) -> usize {
        n.div_ceil(8).clamp(1, self.max_work_items)
    }

    fn create_buffer<T>(&self, count: usize, what: &str) -> Result<Buffer<T>> {
        // SAFETY: a device buffer of `count` elements, no host pointer.
        unsafe { Buffer::<T>::create(&self.context, CL_MEM_READ_WRITE, count.max(1), std::ptr::null_mut()) }.map_err(
            |e| {
                if is_oom(e.0) {
                    Op2Error::new(
                        ErrorCode::OutOfMemory,
                        format!(
                            "opencl: cannot allocate {} bytes on '{}' for {what} ({e})",
                            count * std::mem::size_of::<T>(),
                            self.device.name().unwrap_or_default()
                        ),
                    )
                } else {
                    cl_err(&format!("clCreateBuffer for {what}"), e)
                }
            },
        )
    }

    fn write<T>(&self, buf: &mut Buffer<T>, data: &[T], what: &str) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking write of `data` into a buffer at least as large.
        unsafe { self.queue.enqueue_write_buffer(buf, CL_BLOCKING, 0, data, &[]) }
            .map_err(|e| cl_err(&format!("clEnqueueWriteBuffer ({what})"), e))?;
        Ok(())
    }

    fn read<T>(&self, buf: &Buffer<T>, out: &mut [T], what: &str) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking read into `out` from a buffer at least as large.
        unsafe { self.queue.enqueue_read_buffer(buf, CL_BLOCKING, 0, out, &[]) }
            .map_err(|e| cl_err(&format!("clEnqueueReadBuffer ({what})"), e))?;
        Ok(())
    }

    /// `download_rows` by the gather kernel: the rows packed on the device, then one read.
    fn gather(&mut self, d: DatId, shape: DatShape, host: &mut [u8], runs: &[(usize, usize)]) -> Result<u64> {
        let Some(&total) = self.rows.get(&d) else { return Ok(0) };
        let (list, eb) = super::device::gather_plan(total, shape, host, runs)?;
        let n = list.len();
        if n == 0 {
            return Ok(0);
        }
        let prog = self.program(super::device::GATHER_OPENCL.to_string(), "halo exchange", "op2_gather_rows")?;
        if self.gather_rows.get(&d).is_none_or(|(v, _)| *v != list) {
            let mut b = self.create_buffer::<u32>(n, "a halo exchange's row list")?;
            self.write(&mut b, &list, "a halo exchange's row list")?;
            self.gather_rows.insert(d, (list, b));
        }
        if self.gather_out.as_ref().is_none_or(|(_, cap)| *cap < n * eb) {
            self.gather_out = Some((self.create_buffer::<u8>(n * eb, "a halo exchange's packed rows")?, n * eb));
        }
        let (Some(src), Some((_, idx)), Some((dst, _))) =
            (self.dats.get(&d), self.gather_rows.get(&d), &self.gather_out)
        else {
            return Ok(0);
        };
        let soa_rows = if self.soa && shape.dim > 1 { total as u32 } else { 0 };
        let k = &self.programs[prog].kernel;
        let global = [n * eb];
        // SAFETY: the kernel's seven arguments, buffers of at least the sizes it reads and
        // writes (rows < total, checked above; dst holds n * eb bytes), and a 1-D launch.
        unsafe {
            k.set_arg(0, src).map_err(|e| cl_err("clSetKernelArg 0 (halo gather)", e))?;
            k.set_arg(1, dst).map_err(|e| cl_err("clSetKernelArg 1 (halo gather)", e))?;
            k.set_arg(2, idx).map_err(|e| cl_err("clSetKernelArg 2 (halo gather)", e))?;
            for (i, v) in [n as u32, eb as u32, shape.elem as u32, soa_rows].iter().enumerate() {
                k.set_arg(3 + i as u32, v).map_err(|e| cl_err("clSetKernelArg (halo gather)", e))?;
            }
            self.queue
                .enqueue_nd_range_kernel(k.get(), 1, std::ptr::null(), global.as_ptr(), std::ptr::null(), &[])
                .map_err(|e| cl_err("clEnqueueNDRangeKernel (halo gather)", e))?;
        }
        let mut packed: Vec<u8> = crate::core::alloc::zeroed(n * eb, "a halo exchange's packed rows")?;
        self.read(dst, &mut packed, "a halo exchange's packed rows")?;
        super::device::scatter_gathered(&self.gather_rows[&d].0, &packed, eb, host);
        Ok((n * eb) as u64)
    }

    /// The program for this source, built on first use; its index in `programs`.
    fn program(&mut self, source: String, loop_name: &str, kernel: &str) -> Result<usize> {
        if let Some(&i) = self.by_source.get(&source) {
            return Ok(i);
        }
        if let Some(dir) = &self.dump_dir {
            let what = format!("op_par_loop '{loop_name}' (kernel '{kernel}')");
            crate::jit::dump_device_source(dir, loop_name, "cl", &source, &what);
        }
        let t = std::time::Instant::now();
        let (program, k, origin) = self.build(&source, loop_name, kernel)?;
        if self.diags >= 2 {
            let how = match origin {
                Origin::Cached => "binary loaded from the disk cache".to_string(),
                Origin::Built { rebuilt, stored } => format!(
                    "built from source{}, {}",
                    rebuilt.map(|why| format!(" (disk cache entry rebuilt: {why})")).unwrap_or_default(),
                    match stored {
                        Ok(()) => "binary stored in the disk cache".to_string(),
                        Err(why) => format!("binary not stored in the disk cache: {why}"),
                    }
                ),
            };
            crate::core::output::print_after_c_stdio(&format!(
                "op2: opencl program for loop '{loop_name}' (kernel '{kernel}'): {how}, {:.3} ms\n",
                t.elapsed().as_secs_f64() * 1e3
            ));
        }
        self.programs.push(Prog { kernel: k, _program: program });
        self.by_source.insert(source, self.programs.len() - 1);
        Ok(self.programs.len() - 1)
    }

    /// The binary-cache entry's name for `source`, and its key.
    fn binary_entry(&self, source: &str) -> (String, String) {
        let key = crate::jit::cache::key(source, &self.identity, "opencl", &[BUILD_OPTIONS.to_string()]);
        (format!("{key}.clbin"), key)
    }

    /// The program binary in the cache entry for `source` (the body after its header), or why
    /// there is none that can be used (None: no entry).
    fn cached_binary(&self, source: &str) -> std::result::Result<Vec<u8>, Option<String>> {
        use std::io::{Read, Seek};
        let (name, key) = self.binary_entry(source);
        let mut entry = match self.cache.lookup_named(&name) {
            Lookup::Hit(e) => e,
            Lookup::Missing => return Err(None),
            Lookup::Rebuild(why) => return Err(Some(why)),
        };
        let mut bytes = Vec::new();
        if let Err(e) = entry.file.seek(std::io::SeekFrom::Start(0)).and_then(|_| entry.file.read_to_end(&mut bytes)) {
            return Err(Some(format!("cannot read it: {e}")));
        }
        let Some((len, _)) = crate::jit::cache::parse_entry(&bytes) else {
            return Err(Some("is truncated or corrupt (bad trailer)".to_string()));
        };
        bytes.truncate(len);
        let head = BINARY_MAGIC.len() + key.len();
        if bytes.len() <= head
            || &bytes[..BINARY_MAGIC.len()] != BINARY_MAGIC
            || &bytes[BINARY_MAGIC.len()..head] != key.as_bytes()
        {
            return Err(Some("holds no program binary for this source and device".to_string()));
        }
        Ok(bytes.split_off(head))
    }

    /// Stores the binary of a program built from `source` in the disk cache (written privately
    /// and renamed into place, sealed with the cache's checksum trailer).
    fn store_binary(&self, source: &str, program: &Program) -> std::result::Result<(), String> {
        let bins = program.get_binaries().map_err(|e| format!("clGetProgramInfo(CL_PROGRAM_BINARIES) failed: {e}"))?;
        let bin = match bins.as_slice() {
            [b] if !b.is_empty() => b,
            _ => return Err(format!("the runtime gave {} binaries", bins.len())),
        };
        let (name, key) = self.binary_entry(source);
        let mut body = Vec::with_capacity(BINARY_MAGIC.len() + key.len() + bin.len());
        body.extend_from_slice(BINARY_MAGIC);
        body.extend_from_slice(key.as_bytes());
        body.extend_from_slice(bin);
        let scratch = self.cache.scratch(&key).map_err(|e| e.message)?;
        scratch.write(crate::jit::cache::SCRATCH_LIB, &body).map_err(|e| format!("cannot write it: {e}"))?;
        scratch.commit_named(&name, Vec::new()).map_err(|e| e.message)?;
        Ok(())
    }

    /// Builds the program of `source`: from its binary in op2's disk cache when there is a
    /// usable one (anything wrong with it, down to a binary the runtime refuses, means a build
    /// from source), else from source, storing the binary for the next process.
    fn build(&mut self, source: &str, loop_name: &str, kernel: &str) -> Result<(Program, Kernel, Origin)> {
        // The runtime may run a linker: children must be waitable (SIGCHLD set to SIG_IGN).
        let reaping = crate::jit::child::Reaping::begin();
        let rebuilt = match self.cached_binary(source) {
            Ok(bin) => {
                let loaded = Program::create_and_build_from_binary(&self.context, &[&bin], BUILD_OPTIONS)
                    .map_err(|e| format!("the runtime does not load its binary ({e})"))
                    .and_then(|p| match Kernel::create(&p, "op2_kernel") {
                        Ok(k) => Ok((p, k)),
                        Err(e) => Err(format!("its binary has no usable kernel ({e})")),
                    });
                match loaded {
                    Ok((p, k)) => return Ok((p, k, Origin::Cached)),
                    Err(why) => Some(why),
                }
            }
            Err(why) => why,
        };
        let mut built = Program::create_and_build_from_source(&self.context, source, BUILD_OPTIONS);
        // PoCL's own program cache can fail a build with an empty log while another process
        // writes the same entry: such a failure (no diagnostic in the log) is retried.
        for _ in 0..3 {
            match &built {
                Err(log) if !log.contains("error") && !log.contains("Error") => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    built = Program::create_and_build_from_source(&self.context, source, BUILD_OPTIONS);
                }
                _ => break,
            }
        }
        let program = built.map_err(|log| {
            Op2Error::new(
                ErrorCode::Compile,
                format!(
                    "op_par_loop '{loop_name}' (kernel '{kernel}'): the OpenCL program does not build (kernel lines are numbered as in the kernel's own source)\n{}",
                    log.trim_end()
                ),
            )
        })?;
        let k = Kernel::create(&program, "op2_kernel").map_err(|e| cl_err("clCreateKernel", e))?;
        let stored = self.store_binary(source, &program);
        drop(reaping);
        Ok((program, k, Origin::Built { rebuilt, stored }))
    }

    /// The launch lists of a colouring of `[start, end)` by the loop's indirect increments on
    /// the device (`device::element_lists`: elements, or block pairs when `part_size` > 1),
    /// with (offset, count) per colour; their key in `colour_lists`.
    fn colouring(&mut self, call: &LoopCall, start: usize, end: usize, part_size: usize) -> Result<u64> {
        let key = super::device::colouring_key(call, start, end, part_size);
        if !self.colour_lists.contains_key(&key) {
            let (elems, ranges) = super::device::element_lists(&mut self.colourings, call, start, end, part_size)?;
            let mut buf = self.create_buffer::<cl_int>(elems.len(), "an element colouring")?;
            self.write(&mut buf, &elems, "element colouring")?;
            self.colour_lists.insert(key, (buf, ranges));
        }
        Ok(key)
    }

    /// The map of declared indices of `op_arg_idx` argument `arg` after `op_renumber`, on the
    /// device: per element of the loop's set, its declared index (no map), or the declared
    /// indices of its map's targets. Built once: op_renumber comes before any loop.
    fn idx_map(&mut self, call: &LoopCall, arg: usize) -> Result<()> {
        let map = call.maps[arg].as_ref();
        let key = (map.map(|(m, _)| *m), call.set.0);
        if self.idx_maps.contains_key(&key) {
            return Ok(());
        }
        let Some(table) = super::device::idx_table(call, arg) else {
            op2_bail!(Internal, "op_par_loop '{}': arg {arg}: no index table", call.name);
        };
        // SAFETY: the table is the target set's storage-to-declared order (one entry per
        // element of that set, ParLoop::bind's binding); map values are elements of the target
        // set (checked at op_decl_map), and without a map the target is the loop's set.
        let values: Vec<i32> = match map {
            None => (0..call.set_size).map(|e| unsafe { *table.add(e) }).collect(),
            Some((_, v)) => v.iter().map(|&t| unsafe { *table.add(t as usize) }).collect(),
        };
        let mut buf = self.create_buffer::<cl_int>(values.len(), "a map of declared indices")?;
        self.write(&mut buf, &values, "map of declared indices")?;
        self.idx_maps.insert(key, buf);
        Ok(())
    }

    /// A dat's buffer on a CPU device in memory of op2's own, advised for transparent huge
    /// pages before first use (the runtime uses host memory in place: `CL_MEM_USE_HOST_PTR`),
    /// so indirect loops over large meshes miss the TLB less.
    fn huge_buffer(&mut self, d: DatId, bytes: usize) -> Result<Buffer<u8>> {
        let len = bytes.div_ceil(HUGE_MIN) * HUGE_MIN;
        // A fresh anonymous mapping (AlignedBuf maps buffers this large; its drop unmaps it).
        let Some(mut mem) = crate::core::buffer::AlignedBuf::zeroed(len) else {
            return self.create_buffer::<u8>(bytes, "a dat");
        };
        let ptr = mem.as_mut_ptr() as *mut c_void;
        // SAFETY: the mapping just made, of `len` bytes; advice only.
        unsafe { libc::madvise(ptr, len, libc::MADV_HUGEPAGE) };
        // SAFETY: `ptr` is `len` >= `bytes` bytes that stay mapped while the buffer lives (they
        // are unmapped in `Drop` after every buffer is released).
        let buf = unsafe {
            Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_USE_HOST_PTR, bytes, ptr)
        };
        match buf {
            Ok(b) => {
                self.host_mem.insert(d, mem);
                Ok(b)
            }
            Err(_) => {
                drop(mem);
                self.create_buffer::<u8>(bytes, "a dat")
            }
        }
    }

    fn map_buffer(&mut self, m: MapId, values: &[i32]) -> Result<()> {
        if !self.maps.contains_key(&m) {
            let mut buf = self.create_buffer::<cl_int>(values.len(), "a map")?;
            self.write(&mut buf, values, "map")?;
            self.maps.insert(m, buf);
        }
        Ok(())
    }
}

impl Backend for OpenCl {
    fn kind(&self) -> BackendKind {
        BackendKind::OpenCl
    }

    fn is_device(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("opencl on {}", self.description)
    }

    fn launches(&self) -> u64 {
        self.launches
    }

    fn work_report(&self) -> Option<String> {
        let parts: Vec<String> =
            self.profile.as_ref().map(|p| p.report()).into_iter().chain(self.tuner.report()).collect();
        (!parts.is_empty()).then(|| parts.join("\n"))
    }

    fn small_writes(&self) -> u64 {
        self.small.count
    }

    fn alloc(&mut self, d: DatId, shape: DatShape, bytes: usize) -> Result<()> {
        self.check_process("device allocation")?;
        if !self.dats.contains_key(&d) {
            let buf = if self.cpu && bytes >= HUGE_MIN {
                self.huge_buffer(d, bytes)?
            } else {
                self.create_buffer::<u8>(bytes, "a dat")?
            };
            self.dats.insert(d, buf);
            let rows = bytes / (shape.dim * shape.elem).max(1);
            self.rows.insert(d, rows);
        }
        Ok(())
    }

    fn upload(&mut self, d: DatId, shape: DatShape, host: &[u8]) -> Result<()> {
        self.alloc(d, shape, host.len())?;
        let mut buf = self.dats.remove(&d).ok_or_else(|| cl_err("upload", "no buffer"))?;
        let r = self.write(&mut buf, &super::device::device_layout(self.soa, shape, host), "dat upload");
        self.dats.insert(d, buf);
        r
    }

    fn free(&mut self, d: DatId) {
        self.rows.remove(&d);
        self.gather_rows.remove(&d);
        let buf = self.dats.remove(&d);
        let mem = self.host_mem.remove(&d);
        if self.check_process("op_free_dat_temp_char").is_err() {
            // A forked child: releasing would talk to runtime threads that are not here.
            std::mem::forget(buf);
            std::mem::forget(mem);
            return;
        }
        // The buffer first: its memory (op2's own, for huge-page dats) is unmapped after it.
        drop(buf);
        drop(mem);
    }

    fn download(&mut self, d: DatId, shape: DatShape, host: &mut [u8]) -> Result<()> {
        self.check_process("device download")?;
        match self.dats.get(&d) {
            Some(buf) => super::device::read_host_layout(self.soa, shape, host, |h| self.read(buf, h, "dat download")),
            None => Ok(()),
        }
    }

    fn download_rows(&mut self, d: DatId, shape: DatShape, host: &mut [u8], runs: &[(usize, usize)]) -> Result<u64> {
        self.check_process("halo rows download")?;
        if runs.len() > super::device::GATHER_MIN_RUNS {
            return self.gather(d, shape, host, runs);
        }
        let (Some(buf), Some(&rows)) = (self.dats.get(&d), self.rows.get(&d)) else { return Ok(0) };
        let queue = &self.queue;
        super::device::read_rows(self.soa, shape, rows, host, runs, |off, out| {
            // SAFETY: blocking read of `out` from rows inside the buffer (read_rows checks them).
            unsafe { queue.enqueue_read_buffer(buf, CL_BLOCKING, off, out, &[]) }
                .map(drop)
                .map_err(|e| cl_err("clEnqueueReadBuffer (halo export rows)", e))
        })
    }

    fn upload_rows(&mut self, d: DatId, shape: DatShape, host: &[u8], runs: &[(usize, usize)]) -> Result<u64> {
        self.check_process("halo rows upload")?;
        let Some(&rows) = self.rows.get(&d) else { return Ok(0) };
        let mut buf = self.dats.remove(&d).ok_or_else(|| cl_err("halo rows upload", "no buffer"))?;
        let queue = &self.queue;
        let r = super::device::write_rows(self.soa, shape, rows, host, runs, |off, data| {
            // SAFETY: blocking write of `data` into rows inside the buffer (write_rows checks them).
            unsafe { queue.enqueue_write_buffer(&mut buf, CL_BLOCKING, off, data, &[]) }
                .map(drop)
                .map_err(|e| cl_err("clEnqueueWriteBuffer (halo import rows)", e))
        });
        self.dats.insert(d, buf);
        r
    }

    fn compute(&mut self, call: &mut LoopCall, start: usize, end: usize) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        self.check_process(&format!("op_par_loop '{}'", call.name))?;
        let sig = super::device::check_loop_with(call, "opencl", true, true)?;
        // Arguments too large for private memory are staged in a global scratch buffer, a part
        // per work-item, which bounds the work-items of a launch.
        let (scr_bytes, _) = crate::backend::device::codegen::scratch_layout(call.descs);
        let scr_items = SCRATCH_BUDGET.checked_div(scr_bytes).map_or(usize::MAX, |n| n.clamp(1, self.max_work_items));
        // op_arg_idx after op_renumber: the kernel gets declared indices through a map of them
        // (the element's own, or map[e][k] translated), built and uploaded once per argument
        // kind; an element index becomes a dim-1 map of it in the generated code.
        let tables: Vec<usize> =
            (0..call.descs.len()).filter(|&i| super::device::idx_table(call, i).is_some()).collect();
        let mut gen_descs = call.descs.to_vec();
        for &i in &tables {
            if let ArgDesc::Idx { map_dim: None, .. } = gen_descs[i] {
                gen_descs[i] = ArgDesc::Idx { map_dim: Some(1), idx: 0 };
            }
            self.idx_map(call, i)?;
        }
        let tables_key = tables.iter().fold(0u64, |h, &i| h.wrapping_mul(1_000_003).wrapping_add(i as u64 + 1));
        // OP2_INC=measure: this loop's strategy, or the next one to try.
        let tuning = (call.shape_key, start, end);
        let (choice, trial) = if call.needs_colouring() && self.inc == IncChoice::Measure {
            let (identity, soa) = (&self.identity, self.soa);
            let device = || format!("opencl {identity} ({})", if soa { "soa" } else { "aos" });
            self.tuner.choose(call, sig, (start, end), device, &self.cache)
        } else {
            (self.inc, false)
        };
        let form = match choice {
            _ if !call.needs_colouring() => Form::Direct,
            IncChoice::Atomics => Form::Atomics,
            IncChoice::Blocks | IncChoice::Stage => Form::Blocks,
            IncChoice::Colour | IncChoice::Auto | IncChoice::Measure => Form::Elements,
        };
        let coloured = matches!(form, Form::Elements | Form::Blocks);
        let inc = match form {
            Form::Atomics => IncStrategy::Atomics,
            Form::Blocks => IncStrategy::Blocks,
            _ => IncStrategy::Plain,
        };
        let shape = (call.shape_key, call.const_epoch, form, tables_key);
        let soa = self.soa;
        let name = call.name;
        let prog_index = match self.by_shape.get(&shape) {
            Some(&i) => i,
            None => {
                let src = if call.parts.is_empty() {
                    let expanded = emit::expand_includes(sig.kernel_source, &self.include_dirs, sig.kernel_origin)
                        .map_err(|e| Op2Error::new(ErrorCode::Compile, format!("op_par_loop '{name}': {e}")))?;
                    let sig =
                        crate::codegen::LoopSignature { kernel_source: &expanded, args: &gen_descs, ..sig.clone() };
                    emit::generate_scratch(&sig, &call.const_values, coloured, inc, soa, self.cpu)
                        .map_err(|e| Op2Error::new(ErrorCode::BadLoop, format!("op_par_loop '{name}': {e}")))?
                } else {
                    if form != Form::Direct || !tables.is_empty() {
                        op2_bail!(Internal, "op_par_loop '{name}': a fused unit that needs colouring or index maps");
                    }
                    let expanded = super::device::expand_parts(call, &self.include_dirs)?;
                    let parts: Vec<crate::codegen::LoopSignature> = call
                        .parts
                        .iter()
                        .zip(&expanded)
                        .map(|(p, src)| crate::codegen::LoopSignature { kernel_source: src, ..p.clone() })
                        .collect();
                    emit::generate_fused(&parts, sig.consts, &call.const_values, soa)
                };
                let i = self.program(src, name, sig.kernel_name)?;
                self.by_shape.insert(shape, i);
                i
            }
        };
        // Inputs: maps, READ globals, partials. (The profile's backend time starts here: code
        // generation and program builds are the loop's JIT time.)
        let t0 = std::time::Instant::now();
        let mut events = Vec::new();
        let owners = super::device::kernel_arg_owners(call, soa)?;
        for &(owner, a) in &owners {
            let Some((_, values)) = call.maps[owner].as_ref() else { continue };
            match a {
                KernelArg::Map(Some(m)) => self.map_buffer(m, values)?,
                KernelArg::MapT(Some(m), dim) if !self.maps_t.contains_key(&m) => {
                    let mut buf = self.create_buffer::<u8>(std::mem::size_of_val(*values), "a map")?;
                    self.write(&mut buf, &super::device::transpose_map(values, dim), "map")?;
                    self.maps_t.insert(m, (buf, values.len() / dim.max(1)));
                }
                _ => {}
            }
        }
        if self.globals.len() < call.descs.len() {
            self.globals.resize_with(call.descs.len(), || None);
        }
        for (i, host) in super::device::read_globals(call) {
            let fresh = !matches!(&self.globals[i], Some((_, n)) if *n >= host.len());
            if fresh {
                self.globals[i] = None;
                let b = self.create_buffer::<u8>(host.len(), "a global")?;
                self.globals[i] = Some((b, host.len()));
            }
            let key = SmallBuf::Global(i);
            if self.small.holds(key, host, fresh) {
                continue;
            }
            self.small.forget(key);
            let mut slot = self.globals[i].take();
            let written = match slot.as_mut() {
                Some((buf, _)) => self.write(buf, host, "global"),
                None => Ok(()),
            };
            self.globals[i] = slot;
            written?;
            self.small.wrote(key, host);
        }
        let launches: Vec<(usize, usize)>;
        let colour_key = if coloured {
            let part_size = match form {
                Form::Blocks => {
                    self.part_size.unwrap_or_else(|| super::host::threads::default_part_size(call.set_size))
                }
                _ => 1,
            };
            let key = self.colouring(call, start, end, part_size)?;
            launches = self.colour_lists[&key].1.clone();
            Some(key)
        } else {
            launches = vec![(start, end - start)];
            None
        };
        let stride = emit::partial_words(call.descs);
        // One partials row per work-item of the widest launch, so only those rows come back and
        // are combined (the seed row goes up when it changes) (all max_work_items of them did, 1.5 MB each way for Airfoil's
        // update: on NVIDIA's OpenCL over PCIe that loop took 3.9 ms a call at 45K cells).
        let rows = launches
            .iter()
            .filter(|l| l.1 > 0)
            .map(
                |&(_, count)| {
                    if scr_bytes > 0 {
                        self.work_items(count).min(scr_items)
                    } else {
                        self.work_items(count)
                    }
                },
            )
            .max()
            .unwrap_or(1);

        let mut partials = if stride > 0 {
            let Some(p) = Partials::new(&call.reductions, rows) else {
                op2_bail!(OutOfMemory, "op_par_loop '{name}': cannot allocate reduction partials");
            };
            // The seed row (every work-item's seeds are the same), then a row per work-item.
            let need = stride * (rows + 1);
            let fresh = !matches!(&self.partials, Some((_, n)) if *n >= need);
            if fresh {
                self.partials = None;
                let b = self.create_buffer::<u64>(need, "reduction partials")?;
                self.partials = Some((b, need));
            }
            let seed = &p.words()[..stride];
            let key = SmallBuf::Seed;
            if !self.small.holds(key, as_bytes(seed), fresh) {
                self.small.forget(key);
                let mut slot = self.partials.take();
                let written = match slot.as_mut() {
                    Some((buf, _)) => self.write(buf, seed, "reduction seeds"),
                    None => Ok(()),
                };
                self.partials = slot;
                written?;
                self.small.wrote(key, as_bytes(seed));
            }
            Some(p)
        } else {
            None
        };
        // Matrices stay in host memory: their values and slot tables go up for the launches and
        // the values come back after them.
        let mut mat_bufs: Vec<(usize, Buffer<u8>, Buffer<cl_int>)> = Vec::new();
        for m in super::device::mat_args(call) {
            let mut vb = self.create_buffer::<u8>(m.values.len().max(1), "a matrix's values")?;
            if !m.values.is_empty() {
                self.write(&mut vb, m.values, "a matrix's values")?;
            }
            let mut tb = self.create_buffer::<cl_int>(m.slots.len().max(1), "a matrix's slot table")?;
            if !m.slots.is_empty() {
                self.write(&mut tb, m.slots, "a matrix's slot table")?;
            }
            mat_bufs.push((m.arg, vb, tb));
        }
        let prog = &self.programs[prog_index];
        let k = &prog.kernel;
        // Fixed arguments: elems and part; per-argument buffers.
        let mut idx = 3u32;
        // SAFETY (every argument set): the argument order and types are those of the generated
        // kernel's parameter list (backend::opencl::codegen's ABI).
        macro_rules! arg {
            ($v:expr) => {{
                unsafe { k.set_arg(idx, $v) }.map_err(|e| cl_err(&format!("clSetKernelArg {idx}"), e))?;
                idx += 1;
            }};
        }
        let elems = match colour_key {
            Some(key) => &self.colour_lists[&key].0,
            None => self.dummy_i32(),
        };
        let part: &Buffer<u64> = match &self.partials {
            Some((b, _)) if stride > 0 => b,
            _ => self.dummy_u64(),
        };
        arg!(elems);
        arg!(part);
        // The launch's arguments: the generated code's order, with each translated index
        // argument's declared-index map (`None` here) in its argument's place.
        let mut kargs: Vec<(usize, Option<KernelArg>)> = Vec::new();
        let mut pending = tables.iter().copied().peekable();
        for (owner, a) in owners {
            while let Some(t) = pending.next_if(|&t| t < owner) {
                kargs.push((t, None));
            }
            if pending.peek() == Some(&owner) {
                continue;
            }
            kargs.push((owner, Some(a)));
        }
        kargs.extend(pending.map(|t| (t, None)));
        for (owner, a) in kargs {
            let Some(a) = a else {
                let key = (call.maps[owner].as_ref().map(|(m, _)| *m), call.set.0);
                match self.idx_maps.get(&key) {
                    Some(b) => arg!(b),
                    None => op2_bail!(Internal, "op_par_loop '{name}': arg {owner}: no declared-index map"),
                }
                continue;
            };
            match a {
                KernelArg::Dat(d) => match d {
                    Some(d) => match self.dats.get(&d) {
                        Some(b) => arg!(b),
                        None => op2_bail!(Internal, "op_par_loop '{name}': a dat is not on the device"),
                    },
                    None => arg!(&*self.dummy),
                },
                KernelArg::Rows(d) => {
                    let rows = d.and_then(|d| self.rows.get(&d)).map_or(0, |&r| r as cl_int);
                    arg!(&rows);
                }
                KernelArg::Map(m) => match m.and_then(|m| self.maps.get(&m)) {
                    Some(b) => arg!(b),
                    None => arg!(self.dummy_i32()),
                },
                KernelArg::MapT(m, _) => match m.and_then(|m| self.maps_t.get(&m)) {
                    Some((b, _)) => arg!(b),
                    None => arg!(self.dummy_i32()),
                },
                KernelArg::MapRows(m, _) => {
                    let rows = m.and_then(|m| self.maps_t.get(&m)).map_or(0, |&(_, r)| r as cl_int);
                    arg!(&rows);
                }
                KernelArg::Flag(f) => {
                    let f: cl_int = f;
                    arg!(&f);
                }
                KernelArg::Global(i) => match &self.globals[i] {
                    Some((b, _)) => arg!(b),
                    None => op2_bail!(Internal, "op_par_loop '{name}': arg {i}: no global buffer"),
                },
                KernelArg::MatValues(i) | KernelArg::MatSlots(i) => match mat_bufs.iter().find(|m| m.0 == i) {
                    Some((_, vb, tb)) => {
                        if matches!(a, KernelArg::MatValues(_)) {
                            arg!(vb)
                        } else {
                            arg!(tb)
                        }
                    }
                    None => op2_bail!(Internal, "op_par_loop '{name}': arg {i}: no matrix buffers"),
                },
            }
        }
        let scratch = if scr_bytes > 0 {
            let need = scr_bytes * scr_items;
            if !matches!(&self.scratch, Some((_, n)) if *n >= need) {
                self.scratch = None;
                let b = self.create_buffer::<u8>(need, "global-memory staging of large arguments")?;
                self.scratch = Some((b, need));
            }
            match &self.scratch {
                Some((b, _)) => {
                    arg!(b);
                    true
                }
                None => false,
            }
        } else {
            false
        };
        let _ = idx;
        // The runtime may compile and link work-group functions at the first launch: children
        // must be waitable even if the program set SIGCHLD to SIG_IGN.
        let _reaping = crate::jit::child::Reaping::begin();
        // Partials rows written by this loop's launches so far (the rest start from the seed).
        let mut done = 0usize;
        for &(first, count) in &launches {
            if count == 0 {
                continue;
            }
            let (s, c, dn) = (first as cl_int, count as cl_int, done as cl_int);
            // Without reductions, one work-item per element (the runtime packs them into
            // work-groups and vectorises across them); with reductions, a bounded number of
            // grid-striding work-items, one partials row each.
            let global = [if stride == 0 { count } else { self.work_items(count) }.min(if scratch {
                scr_items
            } else {
                usize::MAX
            })];
            // Blocks are heavy work-items: one per work-group, so the runtime spreads them over
            // its compute units (left to choose, PoCL packs a colour's few blocks into one group,
            // which then runs on one core).
            let one = [1usize];
            let local = if form == Form::Blocks { one.as_ptr() } else { std::ptr::null() };
            // SAFETY: the scalar arguments and a 1-D launch of `global` work-items.
            unsafe {
                k.set_arg(0, &s).map_err(|e| cl_err("clSetKernelArg 0", e))?;
                k.set_arg(1, &c).map_err(|e| cl_err("clSetKernelArg 1", e))?;
                k.set_arg(2, &dn).map_err(|e| cl_err("clSetKernelArg 2", e))?;
                let ev = self
                    .queue
                    .enqueue_nd_range_kernel(k.get(), 1, std::ptr::null(), global.as_ptr(), local, &[])
                    .map_err(|e| cl_err(&format!("clEnqueueNDRangeKernel (op_par_loop '{name}')"), e))?;
                if self.profile.is_some() {
                    events.push(ev);
                }
            }
            self.launches += 1;
            done = done.max(global[0]);
        }
        self.queue.finish().map_err(|e| cl_err(&format!("clFinish (op_par_loop '{name}')"), e))?;
        for (i, vb, _) in &mat_bufs {
            let (ptr, len) = super::device::mat_values_ptr(call, *i);
            if len > 0 {
                // SAFETY: the matrix's host values, `len` bytes, which nothing else refers to
                // during the loop.
                let host = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
                self.read(vb, host, "a matrix's values")?;
            }
        }
        if let Some(mut p) = partials.take() {
            if let Some((buf, n)) = &self.partials {
                let out = p.words_mut();
                if out.len() + stride > *n {
                    op2_bail!(Internal, "opencl: op_par_loop '{name}': partials rows past their buffer");
                }
                // SAFETY: blocking read of rows 1..=rows, inside the buffer (checked above).
                unsafe { self.queue.enqueue_read_buffer(buf, CL_BLOCKING, stride * 8, out, &[]) }
                    .map_err(|e| cl_err("clEnqueueReadBuffer (reduction partials)", e))?;
            }
            p.combine_into(&mut call.reductions, rows);
        }
        if let Some(prof) = self.profile.as_mut() {
            let mut kernel_ns = 0u64;
            for ev in &events {
                let (start, end) = (ev.profiling_command_start(), ev.profiling_command_end());
                let (start, end) = (
                    start.map_err(|e| cl_err("clGetEventProfilingInfo", e))?,
                    end.map_err(|e| cl_err("clGetEventProfilingInfo", e))?,
                );
                kernel_ns += end.saturating_sub(start);
            }
            prof.record(name, events.len() as u64, kernel_ns, t0.elapsed());
        }
        if trial {
            self.tuner.record(tuning, choice, t0.elapsed(), &self.cache);
        }
        Ok(())
    }
}

impl OpenCl {
    fn dummy_i32(&self) -> &Buffer<cl_int> {
        // SAFETY: Buffer<T> is a typed wrapper of one cl_mem; the dummy is never read or written
        // by a kernel (its argument is unused when it is passed).
        unsafe { &*(&*self.dummy as *const Buffer<u8> as *const Buffer<cl_int>) }
    }

    fn dummy_u64(&self) -> &Buffer<u64> {
        // SAFETY: as `dummy_i32`.
        unsafe { &*(&*self.dummy as *const Buffer<u8> as *const Buffer<u64>) }
    }
}

impl Drop for OpenCl {
    fn drop(&mut self) {
        if super::host::threads::fork_generation() != self.generation {
            // A forked child: releasing would talk to runtime threads that are not here.
            for p in self.programs.drain(..) {
                std::mem::forget(p);
            }
            for (_, b) in self.dats.drain() {
                std::mem::forget(b);
            }
            for (_, b) in self.maps.drain() {
                std::mem::forget(b);
            }
            for (_, b) in self.maps_t.drain() {
                std::mem::forget(b);
            }
            for (_, b) in self.idx_maps.drain() {
                std::mem::forget(b);
            }
            for (_, b) in self.colour_lists.drain() {
                std::mem::forget(b);
            }
            for g in self.globals.drain(..) {
                std::mem::forget(g);
            }
            std::mem::forget(self.partials.take());
            std::mem::forget(self.scratch.take());
            return;
        }
        // SAFETY: dropped once, here, in the process that made them; the buffers and programs
        // (fields dropped after this) hold their own references to the context.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.dummy);
            std::mem::ManuallyDrop::drop(&mut self.queue);
            std::mem::ManuallyDrop::drop(&mut self.context);
        }
    }
}

/// Keeps `c_void` in use for the slot pointers' type in docs and signatures.
#[allow(dead_code)]
type Slot = *mut c_void;

#[cfg(test)]
mod tests {
    use super::*;

    /// A program binary the runtime refuses, in a sealed entry with the right header, is
    /// rebuilt from source (runs only where an OpenCL device is found).
    #[test]
    fn refused_binary_is_rebuilt_from_source() {
        if probe(None).is_err() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("op2-clbin-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let d = dir.display().to_string();
        let env = |k: &str| (k == "OP2_CACHE_DIR").then(|| d.clone());
        let config = crate::config::Config::resolve(&env, &[], 0).unwrap();
        let src = "__kernel void op2_kernel(__global int *x) { x[get_global_id(0)] = 3; }\n";
        let mut a = OpenCl::new(&config).unwrap();
        let (_, _, o) = a.build(src, "l", "k").unwrap();
        assert!(matches!(o, Origin::Built { rebuilt: None, stored: Ok(()) }));
        let mut b = OpenCl::new(&config).unwrap();
        assert!(matches!(b.build(src, "l", "k").unwrap().2, Origin::Cached));
        // The right header, then bytes that are no program binary.
        let (name, key) = b.binary_entry(src);
        let mut body = BINARY_MAGIC.to_vec();
        body.extend_from_slice(key.as_bytes());
        body.extend_from_slice(b"not a program binary");
        let s = b.cache.scratch(&key).unwrap();
        s.write(crate::jit::cache::SCRATCH_LIB, &body).unwrap();
        s.commit_named(&name, Vec::new()).unwrap();
        let mut c = OpenCl::new(&config).unwrap();
        match c.build(src, "l", "k").unwrap().2 {
            Origin::Built { rebuilt: Some(why), stored: Ok(()) } => {
                assert!(why.contains("the runtime does not load its binary"), "{why}")
            }
            _ => panic!("the refused binary was not rebuilt"),
        }
        assert!(matches!(OpenCl::new(&config).unwrap().build(src, "l", "k").unwrap().2, Origin::Cached));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
