//! The distributed layer, seen by the loop driver: halo exchanges and global reductions, plus
//! the partition state (each set's local layout under MPI). Without MPI (or on one process)
//! every set is all core, exchanges move nothing and reductions are already global; the driver
//! calls these hooks in the order of `mpi-halos.txt` either way, and backends never see MPI.
//!
//! Under `mpiexec` (cargo feature `mpi`) op2 runs on a duplicate of `MPI_COMM_WORLD` (or of the
//! communicator given to `op_mpi_init`). Declarations are each process's contiguous block;
//! `op_partition` (see `dist` and `distpart`) partitions on the blocks without gathering them,
//! and gives every set its local numbering `[core | owned | exec halo | non-exec halo]`. An exchange sends, per loop,
//! one message per neighbour holding every dat that needs it (grouped, as OP2's default).
//!
//! Layers: this module (`Comm`, which `Context` holds), `layout`, `partition` and `transport`
//! know nothing of `Context`; `dist`, the operations on a whole `Context`, sits above it.

pub mod dist;
pub mod distpart;
pub mod layout;
#[cfg(feature = "mpi")]
pub mod parmetis;
pub mod partition;
pub mod stream;
#[cfg(all(test, feature = "mpi"))]
mod tests;
#[cfg(feature = "mpi")]
pub mod transport;

use crate::backend::reduce::Partials;
use crate::backend::Reduction;
use crate::core::buffer::AlignedBuf;
use crate::core::{Dat, DatId, SetId};
use crate::error::Result;
use crate::op2_bail;
use layout::SetLayout;
use std::time::{Duration, Instant};

/// Set while op2 runs on more than one process: abort mode then ends the whole job.
pub static JOB_ABORT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Abort mode under MPI: `MPI_Abort` on `MPI_COMM_WORLD`, so no process waits forever for one
/// that exited. Does nothing without MPI (the caller then exits).
pub fn abort_job(code: i32) {
    #[cfg(feature = "mpi")]
    if JOB_ABORT.load(std::sync::atomic::Ordering::Acquire) && transport::is_initialized() {
        // SAFETY: MPI is initialised; aborting the world communicator is always allowed.
        unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, code) };
    }
    let _ = code;
}

/// Whether the MPI library in this process takes device (CUDA) buffers: the answer of
/// `MPIX_Query_cuda_support()` (OpenMPI's extension), looked up at run time (dlsym) so that op2
/// builds and runs against any MPI; `None` where the library has no such query (or op2 runs
/// without MPI). Reported by `op_diagnostic_output`; device halo exchanges stage their rows
/// through host memory either way (passing device buffers to MPI is not done yet).
pub fn cuda_aware() -> Option<bool> {
    #[cfg(feature = "mpi")]
    {
        if !transport::is_initialized() {
            return None;
        }
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks the symbol up.
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"MPIX_Query_cuda_support".as_ptr()) };
        if f.is_null() {
            return None;
        }
        // SAFETY: OpenMPI declares `int MPIX_Query_cuda_support(void)`, callable once MPI is
        // initialised (checked above).
        let query: extern "C" fn() -> std::ffi::c_int = unsafe { std::mem::transmute(f) };
        Some(query() != 0)
    }
    #[cfg(not(feature = "mpi"))]
    None
}

/// `OP2_MPI_CUDA_AWARE`: whether device halo exchanges hand device buffers to MPI (`auto`,
/// the default: where the MPI says it is CUDA-aware; `1`: also where it cannot say; `0`: never).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CudaAware {
    #[default]
    Auto,
    Off,
    On,
}

impl CudaAware {
    /// The setting for a value (unset or empty: auto); None for a value it does not take.
    pub fn parse(v: Option<&str>) -> Option<CudaAware> {
        match v.map(str::trim) {
            None | Some("") | Some("auto") => Some(CudaAware::Auto),
            Some("0") => Some(CudaAware::Off),
            Some("1") => Some(CudaAware::On),
            Some(_) => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CudaAware::Auto => "auto",
            CudaAware::Off => "0",
            CudaAware::On => "1",
        }
    }
}

/// Whether a device backend's halo exchanges go from device memory to MPI and back (packed and
/// unpacked on the device, nothing through host memory), given the setting, the MPI library's
/// own answer (`cuda_aware()`) and whether the backend can stage for MPI (cuda; OpenCL buffers
/// have no address MPI could take). `1` where the library says it is not CUDA-aware is an
/// error: it would read device addresses as host memory.
pub fn device_direct(setting: CudaAware, query: Option<bool>, backend_can: bool) -> Result<bool> {
    match setting {
        CudaAware::Off => Ok(false),
        _ if !backend_can => Ok(false),
        CudaAware::Auto => Ok(query == Some(true)),
        CudaAware::On if query == Some(false) => op2_bail!(
            BadConfig,
            "OP2_MPI_CUDA_AWARE=1: this MPI library is not CUDA-aware (MPIX_Query_cuda_support() returned 0), so device buffers cannot go to it; use auto or 0"
        ),
        CudaAware::On => Ok(true),
    }
}

/// A set as the distributed layer sees it.
#[derive(Debug, Default, Clone)]
pub struct SetDist {
    /// Global size (all processes).
    pub global_size: usize,
    /// First global index of this process's declared block, and its size.
    pub decl_offset: usize,
    pub decl_size: usize,
    /// Declared block offsets of every process (P + 1 entries).
    pub offsets: Vec<usize>,
    /// The local layout after `op_partition`.
    pub layout: Option<SetLayout>,
}

/// The communicator seen by the driver.
#[derive(Default)]
pub struct Comm {
    #[cfg(feature = "mpi")]
    pub world: Option<transport::World>,
    /// Halo exchanges started (counted even when there is nothing to send: tests check that
    /// exchanges happen only for dirty halos that a loop reads).
    pub exchanges: u64,
    /// Messages sent by halo exchanges, bytes sent, and time spent in begin + end.
    pub messages: u64,
    pub halo_bytes: u64,
    pub halo_time: Duration,
    /// Per set (by SetId), under MPI.
    pub sets: Vec<SetDist>,
    /// `op_partition` has built the layouts.
    pub partitioned: bool,
    /// Counts the partitions made (what a cached chain tiling under MPI was made for).
    pub partition_epoch: u64,
    /// `OP2_MPI_CHECK=1`: loops (and matrix operations) enter like every other collective
    /// call (`enter`), so processes at different loops are an error instead of a hang.
    pub check: bool,
    /// `OP2_MPI_CUDA_AWARE`, and what it decided at op_init (`device_direct`): device halo
    /// exchanges hand the backend's device staging areas to MPI.
    pub cuda_aware: CudaAware,
    pub device_direct: bool,
    /// Collective calls entered so far (the sequence number `enter` compares).
    pub seq: std::sync::atomic::AtomicU64,
    /// Maps of original global indices for `op_arg_idx` on device backends: (map, loop set,
    /// values), made once per (map, set) after op_partition (see `dist::global_index_map`).
    pub idx_maps: Vec<(Option<crate::core::MapId>, SetId, std::sync::Arc<Vec<i32>>)>,
    /// The host message buffers of halo exchanges (send, receive), kept per list of dats
    /// exchanged together (emptied by `op_partition`): allocated fallibly at the list's
    /// first exchange, with the outcome agreed (every process exchanges the same lists in the
    /// same order, as every loop is collective), so a buffer refused on one process is
    /// OP2_ERR_OUT_OF_MEMORY on every process instead of the others waiting for its messages.
    /// An exchange takes its pair out and `halo_exchange_end` puts it back.
    #[cfg(feature = "mpi")]
    pub halo_bufs: std::collections::HashMap<HaloKey, (Vec<u8>, Vec<u8>)>,
}

/// A list of dats exchanged together: their ids.
pub type HaloKey = Vec<u32>;

/// An exchange in flight: the requests and the buffers they use. Dropping it waits for every
/// request, so an error between begin and end leaves nothing pending.
#[must_use]
pub struct Exchange {
    pending: Vec<DatId>,
    #[cfg(feature = "mpi")]
    reqs: Vec<mpi::ffi::MPI_Request>,
    /// The host staging areas (every neighbour's message at its offset; empty when the
    /// messages are staged on the device).
    #[cfg(feature = "mpi")]
    recv: Vec<u8>,
    #[cfg(feature = "mpi")]
    send: Vec<u8>,
    /// Where `send` and `recv` go back when the exchange ends (`Comm::halo_bufs`).
    #[cfg(feature = "mpi")]
    key: Option<HaloKey>,
    /// The pieces of the received messages (`HaloPlan::recvs`).
    #[cfg(feature = "mpi")]
    recvs: Vec<Piece>,
    /// Per dat in `pending`: its host pointer, set and shape (its rows' bytes: dim x elem).
    #[cfg(feature = "mpi")]
    dst: Vec<(*mut u8, usize, crate::backend::DatShape)>,
    /// The messages are in the backend's device staging areas (CUDA-aware MPI): `halo_exchange_end`
    /// unpacks through the backend into the device copies.
    direct: bool,
    started: Instant,
}

impl Exchange {
    /// Whether this exchange goes device to device (CUDA-aware MPI): the received rows land in
    /// the device copies, nothing to upload.
    pub fn is_direct(&self) -> bool {
        self.direct
    }
}

/// One piece of a halo message: the rows of one dat for one neighbour, at byte `at` of the
/// exchange's send (or receive) area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// Index in the exchange's dat list.
    pub dat: usize,
    /// The neighbour's entry in the dat's set's `exports` (sends) or `imports` (receives).
    pub entry: usize,
    pub at: usize,
    pub bytes: usize,
}

/// The messages of one exchange, whether staged in host or device memory: one message per
/// neighbour each way, holding every dat's rows for it in the exchange's dat order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct HaloPlan {
    /// Per neighbour, ascending: (rank, send offset, send bytes, receive offset, receive bytes).
    pub peers: Vec<(i32, usize, usize, usize, usize)>,
    pub sends: Vec<Piece>,
    pub recvs: Vec<Piece>,
    pub send_bytes: usize,
    pub recv_bytes: usize,
}

/// The plan of an exchange of dats given as (their set's layout, row bytes), in order.
pub fn halo_plan(dats: &[(Option<&SetLayout>, usize)]) -> HaloPlan {
    let mut nbrs: Vec<i32> = Vec::new();
    for l in dats.iter().filter_map(|d| d.0) {
        nbrs.extend(l.imports.iter().map(|x| x.0));
        nbrs.extend(l.exports.iter().map(|x| x.0));
    }
    nbrs.sort_unstable();
    nbrs.dedup();
    let mut plan = HaloPlan::default();
    for q in nbrs {
        let (s0, r0) = (plan.send_bytes, plan.recv_bytes);
        for (i, &(l, eb)) in dats.iter().enumerate() {
            let Some(l) = l else { continue };
            if let Some(k) = l.exports.iter().position(|x| x.0 == q) {
                let bytes = l.exports[k].1.len() * eb;
                if bytes > 0 {
                    plan.sends.push(Piece { dat: i, entry: k, at: plan.send_bytes, bytes });
                    plan.send_bytes += bytes;
                }
            }
            if let Some(k) = l.imports.iter().position(|x| x.0 == q) {
                let bytes = l.imports[k].1.len() * eb;
                if bytes > 0 {
                    plan.recvs.push(Piece { dat: i, entry: k, at: plan.recv_bytes, bytes });
                    plan.recv_bytes += bytes;
                }
            }
        }
        plan.peers.push((q, s0, plan.send_bytes - s0, r0, plan.recv_bytes - r0));
    }
    plan
}

impl Drop for Exchange {
    fn drop(&mut self) {
        #[cfg(feature = "mpi")]
        if !self.reqs.is_empty() {
            // SAFETY: the requests are ours; their buffers are still alive (fields of self).
            unsafe {
                mpi::ffi::MPI_Waitall(self.reqs.len() as i32, self.reqs.as_mut_ptr(), mpi::ffi::RSMPI_STATUSES_IGNORE)
            };
            self.reqs.clear();
        }
    }
}

/// The message tag of grouped halo exchanges (one message per neighbour per loop; MPI keeps
/// messages between a pair on one tag in order, so consecutive loops never mix).
#[cfg(feature = "mpi")]
const HALO_TAG: i32 = 7001;

/// One process's all-to-all: its own values back, moved.
fn one_process_flat<T>(send: Vec<Vec<T>>) -> distpart::Flat<T> {
    let mut f = distpart::Flat::new(0);
    f.starts.extend(send.iter().map(|_| 0));
    f.own = send.into_iter().next().unwrap_or_default();
    f
}

/// The distributed partitioner's collectives on this communicator.
impl distpart::Coll for Comm {
    fn rank(&self) -> usize {
        Comm::rank(self) as usize
    }
    fn size(&self) -> usize {
        Comm::size(self) as usize
    }
    fn all_to_all(&self, send: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        Comm::all_to_all(self, send)
    }
    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        Comm::all_gather(self, mine)
    }
    fn all_to_all_bytes(&self, send: Vec<Vec<u8>>) -> Result<distpart::Flat<u8>> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            let (data, starts, own) = w.all_to_all_bytes(send)?;
            return Ok(distpart::Flat { data, starts, me: w.rank() as usize, own });
        }
        Ok(one_process_flat(send))
    }
    fn all_to_all_u32(&self, send: Vec<Vec<u32>>) -> Result<distpart::Flat<u32>> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            let (data, starts, own) = w.all_to_all_u32(send)?;
            return Ok(distpart::Flat { data, starts, me: w.rank() as usize, own });
        }
        Ok(one_process_flat(send))
    }
    fn fail(&self, e: crate::error::Op2Error) -> crate::error::Op2Error {
        Comm::fail(self, e)
    }
    fn sum_u64(&self, v: &mut [u64]) -> Result<()> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.sum_u64(v);
        }
        let _ = v;
        Ok(())
    }
    fn min_max_f64(&self, v: &mut [f64], max: bool) -> Result<()> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.min_max_f64(v, max);
        }
        let _ = (v, max);
        Ok(())
    }
}

impl Comm {
    pub fn rank(&self) -> i32 {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.rank();
        }
        0
    }

    pub fn size(&self) -> i32 {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.size();
        }
        1
    }

    /// For op2's diagnostics: how many processes, and who initialised MPI (`op_init` at
    /// `diags` >= 1 prints it, so a program can tell whether op2 started MPI).
    pub fn describe(&self) -> String {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            let n = w.size();
            let by = if w.owns_init() { "op2" } else { "the program" };
            return format!("{n} MPI process{} (MPI initialised by {by})", if n == 1 { "" } else { "es" });
        }
        "MPI not initialised".to_string()
    }

    /// More than one process: declarations are blocks and `op_partition` matters.
    pub fn distributed(&self) -> bool {
        self.size() > 1
    }

    /// The layout of a set after `op_partition` (None on one process or before).
    pub fn layout(&self, set: SetId) -> Option<&SetLayout> {
        self.sets.get(set.0 as usize).and_then(|s| s.layout.as_ref())
    }

    /// After `op_decl_set` under MPI: `sizes` holds every process's block size (u64, rank order,
    /// gathered by the agreement before the set was committed) and `size` is this process's, so
    /// the set knows its global size and this process's offset.
    pub fn after_decl_set(&mut self, set: SetId, size: usize, sizes: &[Vec<u8>]) {
        let mut offsets = vec![0usize];
        for b in sizes {
            let mut w = [0u8; 8];
            if let Some(x) = b.get(..8) {
                w.copy_from_slice(x);
            }
            offsets.push(offsets.last().copied().unwrap_or(0) + u64::from_ne_bytes(w) as usize);
        }
        let me = self.rank() as usize;
        while self.sets.len() <= set.0 as usize {
            self.sets.push(SetDist::default());
        }
        self.sets[set.0 as usize] = SetDist {
            global_size: *offsets.last().unwrap_or(&0),
            decl_offset: offsets.get(me).copied().unwrap_or(0),
            decl_size: size,
            offsets,
            layout: None,
        };
    }

    /// Global size of a set whose size on this process is `local` (that size on one process).
    pub fn global_size(&self, set: SetId, local: usize) -> usize {
        match self.sets.get(set.0 as usize) {
            Some(d) if self.distributed() => d.global_size,
            _ => local,
        }
    }

    /// This process's first declared global index of a set (0 on one process).
    pub fn global_offset(&self, set: SetId) -> usize {
        match self.sets.get(set.0 as usize) {
            Some(d) if self.distributed() => d.decl_offset,
            _ => 0,
        }
    }

    /// The size of this process's declared block (what op_fetch_data fills) of a set whose size
    /// on this process is `local` (that size on one process).
    pub fn declared_size(&self, set: SetId, local: usize) -> usize {
        match self.sets.get(set.0 as usize) {
            Some(d) if self.distributed() => d.decl_size,
            _ => local,
        }
    }

    /// `op_decl_dat` with data after `op_partition`: `data` is this process's declared block
    /// (rows of `eb` bytes) of a set whose size on this process is `local`; returns the dat's
    /// local rows (collective: each process fetches its rows from the blocks that hold them).
    pub fn local_rows_of_block(
        &self,
        set: SetId,
        local: usize,
        eb: usize,
        data: &[u8],
        name: &str,
    ) -> Result<AlignedBuf> {
        let n = self.declared_size(set, local);
        match self.layout(set) {
            Some(l) => {
                // Each process fetches its local rows from the blocks that hold them.
                let offsets = &self.sets[set.0 as usize].offsets;
                let rows = distpart::fetch_rows(self, offsets, &data[..n * eb], eb, &l.gids.to_vec())?;
                match AlignedBuf::from_slice(&rows) {
                    Some(b) => Ok(b),
                    None => op2_bail!(OutOfMemory, "op_decl_dat '{name}': cannot allocate {} rows", l.total()),
                }
            }
            None => match AlignedBuf::from_slice(&data[..n * eb]) {
                Some(b) => Ok(b),
                None => op2_bail!(OutOfMemory, "op_decl_dat '{name}': cannot allocate {n} rows"),
            },
        }
    }

    pub fn barrier(&self) -> Result<()> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.barrier();
        }
        Ok(())
    }

    /// Every process's bytes on every process, in rank order.
    pub fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.all_gather(mine);
        }
        Ok(vec![mine.to_vec()])
    }

    /// Blocking point-to-point send of `bytes` to process `to` (under MPI only; one process
    /// has no one to send to).
    pub fn send_to(&self, bytes: &[u8], to: i32, tag: i32) -> Result<()> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.send(bytes, to, tag);
        }
        let _ = (bytes, tag);
        op2_bail!(Internal, "send to process {to} without MPI")
    }

    /// Blocking receive of exactly `buf.len()` bytes from process `from` (under MPI only).
    pub fn recv_from(&self, buf: &mut [u8], from: i32, tag: i32) -> Result<()> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.recv(buf, from, tag);
        }
        let _ = (buf, tag);
        op2_bail!(Internal, "receive from process {from} without MPI")
    }

    /// Personalised all-to-all (`send[q]` to process q; one buffer per process); returns what
    /// each process sent here, in rank order. One process: its own buffer back.
    pub fn all_to_all(&self, send: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.all_to_all(send);
        }
        Ok(send.to_vec())
    }

    /// A failure of this process between two collectives (an allocation refused, a check only
    /// it can make), made collective: it takes the place of this process's next collective,
    /// whose first step on the others (`World::status`) then returns it, so every process
    /// returns the error and none waits for this one. One process: `e` as it is.
    pub fn fail(&self, e: crate::error::Op2Error) -> crate::error::Op2Error {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            if self.distributed() && transport::is_initialized() {
                return w.fail(e);
            }
        }
        e
    }

    /// `r`, or its error made collective (`fail`).
    pub fn local<T>(&self, r: Result<T>) -> Result<T> {
        r.map_err(|e| self.fail(e))
    }

    /// `World::all_to_all_fill` (one process: what `fill` writes, all of it its own).
    pub fn all_to_all_fill(&self, counts: &[usize], fill: impl FnOnce(&mut Vec<u8>)) -> Result<(Vec<u8>, Vec<usize>)> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.all_to_all_fill(counts, fill);
        }
        let mut b = crate::core::alloc::with_capacity(counts.iter().sum(), "all-to-all: the send buffer")?;
        fill(&mut b);
        let n = b.len();
        Ok((b, vec![0, n]))
    }

    /// Makes a local outcome collective (before a collective that must not start unless every
    /// process is ready, e.g. a parallel HDF5 read, and before a declaration is committed):
    /// when any process failed, every process returns an error, its own or the first failing
    /// process's (with "(on process r)"), so no process waits in a collective for one that left
    /// and no process keeps what the others refused. One process: `r` as it is.
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        self.exchange(None, r.map(|v| (v, Vec::new()))).map(|(v, _)| v)
    }

    /// The entry of a collective op2 call (`what`, e.g. `op_decl_set` or `op_par_loop 'res'`):
    /// `ready` is the call's own checks on this process (handles, arguments). Every process
    /// must be at the same call (with the same sequence number): a divergence is `OP2_ERR_MPI`
    /// naming both calls on every process, and an error on any process is an error on all
    /// (see `agree`), before the call does anything collective. One process: `ready`.
    pub fn enter<T>(&self, what: &str, ready: Result<T>) -> Result<T> {
        self.exchange(Some(what), ready.map(|v| (v, Vec::new()))).map(|(v, _)| v)
    }

    /// `enter` that also gathers a payload from every process (rank order), in the same
    /// collective: what a declaration needs from the others (e.g. each process's block size).
    pub fn enter_with<T>(&self, what: &str, ready: Result<(T, Vec<u8>)>) -> Result<(T, Vec<Vec<u8>>)> {
        self.exchange(Some(what), ready)
    }

    /// `agree` that also gathers a payload from every process (rank order).
    pub fn agree_with<T>(&self, r: Result<(T, Vec<u8>)>) -> Result<(T, Vec<Vec<u8>>)> {
        self.exchange(None, r)
    }

    /// The one agreement behind `enter` and `agree` (one all-gather): each process sends
    /// `[call length][call][status][error code][payload or error message]`, where the call is
    /// `#sequence name` at an entry and empty inside a call. Every process then sees the same
    /// bytes, so every process reaches the same verdict: different calls (OP2_ERR_MPI naming
    /// both), else the first error (its own first), else every payload.
    fn exchange<T>(&self, what: Option<&str>, local: Result<(T, Vec<u8>)>) -> Result<(T, Vec<Vec<u8>>)> {
        if !self.distributed() {
            return local.map(|(v, p)| (v, vec![p]));
        }
        // A program that finalised MPI itself and then ends op2 (op_exit from an atexit
        // handler): nothing to agree with any more.
        #[cfg(feature = "mpi")]
        if !transport::is_initialized() {
            return local.map(|(v, p)| (v, vec![p]));
        }
        let call = match what {
            Some(w) => format!("#{} {w}", self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1),
            None => String::new(),
        };
        let mut mine = Vec::new();
        mine.extend_from_slice(&(call.len() as u64).to_ne_bytes());
        mine.extend_from_slice(call.as_bytes());
        match &local {
            Ok((_, payload)) => {
                mine.push(0);
                mine.extend_from_slice(&0i32.to_ne_bytes());
                mine.extend_from_slice(payload);
            }
            Err(e) => {
                mine.push(1);
                mine.extend_from_slice(&e.code.as_i32().to_ne_bytes());
                mine.extend_from_slice(e.message.as_bytes());
            }
        }
        let all = self.all_gather(&mine)?;
        // Each entry decoded: (call, failed, code, rest). A short entry (not op2's) reads as
        // a call nobody else is at.
        let decode = |b: &[u8]| -> Option<(String, bool, i32, Vec<u8>)> {
            let n = u64::from_ne_bytes(b.get(..8)?.try_into().ok()?) as usize;
            let call = String::from_utf8_lossy(b.get(8..8usize.checked_add(n)?)?).into_owned();
            let at = 8 + n;
            let failed = *b.get(at)? != 0;
            let code = i32::from_ne_bytes(b.get(at + 1..at + 5)?.try_into().ok()?);
            Some((call, failed, code, b[at + 5..].to_vec()))
        };
        let me = self.rank() as usize;
        let here = |c: &str| {
            if c.is_empty() {
                "a step inside its previous collective call".to_string()
            } else {
                format!("call {c}")
            }
        };
        let mut decoded = Vec::with_capacity(all.len());
        for (q, b) in all.iter().enumerate() {
            match decode(b) {
                Some(d) if d.0 == call => decoded.push(d),
                other => {
                    let theirs = other.map_or_else(|| "an unknown call".to_string(), |d| here(&d.0));
                    let name = what.unwrap_or("op2");
                    let check = if self.check { " OP2_MPI_CHECK:" } else { "" };
                    op2_bail!(
                        Mpi,
                        "{name}:{check} processes called op2 collectively in different orders: process {me} is at {}, process {q} at {theirs}",
                        here(&call)
                    );
                }
            }
        }
        let v = local?;
        if let Some((q, (_, _, code, msg))) = decoded.iter().enumerate().find(|(_, d)| d.1) {
            let code = crate::error::ErrorCode::ALL
                .iter()
                .copied()
                .find(|c| c.as_i32() == *code)
                .unwrap_or(crate::error::ErrorCode::Internal);
            return Err(crate::error::Op2Error::new(
                code,
                format!("{} (on process {q})", String::from_utf8_lossy(msg)),
            ));
        }
        Ok((v.0, decoded.into_iter().map(|d| d.3).collect()))
    }

    /// Starts exchanging the halos of `dats` (those the loop reads through its halo and whose
    /// halos are out of date): packs every neighbour's rows into one message (`halo_plan`) and
    /// posts the receives and sends. `direct`: the backend whose device copies are current
    /// (every dat's), to pack on the device into staging areas handed to a CUDA-aware MPI;
    /// None: packed from the host copies into host memory.
    pub fn halo_exchange_begin(
        &mut self,
        dats: &mut [Dat],
        list: Vec<DatId>,
        direct: Option<&mut dyn crate::backend::Backend>,
    ) -> Result<Exchange> {
        let started = Instant::now();
        if !list.is_empty() {
            self.exchanges += 1;
        }
        let mut ex = Exchange {
            pending: Vec::new(),
            #[cfg(feature = "mpi")]
            reqs: Vec::new(),
            #[cfg(feature = "mpi")]
            recv: Vec::new(),
            #[cfg(feature = "mpi")]
            send: Vec::new(),
            #[cfg(feature = "mpi")]
            key: None,
            #[cfg(feature = "mpi")]
            recvs: Vec::new(),
            #[cfg(feature = "mpi")]
            dst: Vec::new(),
            direct: false,
            started,
        };
        if !self.partitioned || list.is_empty() {
            ex.pending = list;
            return Ok(ex);
        }
        #[cfg(not(feature = "mpi"))]
        let _ = (dats, direct);
        #[cfg(feature = "mpi")]
        {
            let Some(w) = &self.world else {
                ex.pending = list;
                return Ok(ex);
            };
            let lay = |d: &Dat| self.sets[d.set.0 as usize].layout.as_ref();
            let plan = halo_plan(
                &list.iter().map(|d| (lay(&dats[d.0 as usize]), dats[d.0 as usize].elem_bytes())).collect::<Vec<_>>(),
            );
            let exports = |p: &Piece| -> &[u32] {
                let dv = &dats[list[p.dat].0 as usize];
                lay(dv).map_or(&[][..], |l| l.exports[p.entry].1.as_slice())
            };
            // Where the messages are: the backend's device areas, or host buffers.
            let (send_at, recv_at): (*mut u8, *mut u8) = match direct {
                Some(b) => {
                    ex.direct = true;
                    if plan.send_bytes + plan.recv_bytes == 0 {
                        (std::ptr::null_mut(), std::ptr::null_mut())
                    } else {
                        let Some((s, r)) = b.mpi_staging(plan.send_bytes, plan.recv_bytes)? else {
                            op2_bail!(Internal, "halo exchange: the backend has no device staging for MPI");
                        };
                        for p in &plan.sends {
                            let dv = &dats[list[p.dat].0 as usize];
                            b.pack_staged(list[p.dat], crate::backend::DatShape::of(dv), exports(p), p.at).map_err(
                                |e| {
                                    crate::error::Op2Error::new(
                                        e.code,
                                        format!("halo exchange of dat '{}': {}", dv.name, e.message),
                                    )
                                },
                            )?;
                        }
                        b.staged_sync()?;
                        (s as *mut u8, r as *mut u8)
                    }
                }
                None => {
                    let key: HaloKey = list.iter().map(|d| d.0).collect();
                    // Whether the list has buffers is the same on every process, so the agreement
                    // (a collective) happens on all of them or none.
                    let (mut send, recv) = match self.halo_bufs.remove(&key) {
                        Some((s, mut r)) => {
                            r.resize(plan.recv_bytes, 0);
                            (s, r)
                        }
                        None => {
                            let names =
                                || list.iter().map(|d| format!("'{}'", dats[d.0 as usize].name)).collect::<Vec<_>>();
                            let bufs =
                                crate::core::alloc::with_capacity(plan.send_bytes, "halo exchange: the send buffer")
                                    .and_then(|s| {
                                        Ok((
                                            s,
                                            crate::core::alloc::zeroed(
                                                plan.recv_bytes,
                                                "halo exchange: the receive buffer",
                                            )?,
                                        ))
                                    })
                                    .map_err(|e| {
                                        crate::error::Op2Error::new(
                                            e.code,
                                            format!("{} of dats {}", e.message, names().join(", ")),
                                        )
                                    });
                            self.agree(bufs)?
                        }
                    };
                    ex.key = Some(key);
                    send.clear();
                    for p in &plan.sends {
                        let dv = &dats[list[p.dat].0 as usize];
                        let eb = dv.elem_bytes();
                        let data = dv.data.as_slice();
                        for &i in exports(p) {
                            send.extend_from_slice(&data[i as usize * eb..(i as usize + 1) * eb]);
                        }
                    }
                    ex.send = send;
                    ex.recv = recv;
                    (ex.send.as_mut_ptr(), ex.recv.as_mut_ptr())
                }
            };
            // Post receives first, then sends. The areas never move from here on (the host
            // buffers are heap blocks the exchange owns; the device areas are the backend's,
            // unchanged until the next exchange begins, after this one ended).
            // Each request joins the exchange as soon as it is posted (its drop waits for it).
            for &(q, _, _, at, len) in plan.peers.iter().filter(|p| p.4 > 0) {
                let mut req = transport::World::null_request();
                // SAFETY: [at, at + len) lies in the receive area (halo_plan's offsets), which
                // stays put until the requests complete (end, or the exchange's drop).
                unsafe { w.irecv_raw(recv_at.add(at), len, q, HALO_TAG, &mut req) }?;
                ex.reqs.push(req);
            }
            for &(q, at, len, _, _) in plan.peers.iter().filter(|p| p.2 > 0) {
                let mut req = transport::World::null_request();
                // SAFETY: as the receives, in the send area.
                unsafe { w.isend_raw(send_at.add(at), len, q, HALO_TAG, &mut req) }?;
                ex.reqs.push(req);
                self.halo_bytes += len as u64;
                self.messages += 1;
            }
            for &d in &list {
                let dv = &mut dats[d.0 as usize];
                let shape = crate::backend::DatShape::of(dv);
                ex.dst.push((dv.data.as_mut_ptr(), dv.set.0 as usize, shape));
            }
            ex.recvs = plan.recvs;
        }
        ex.pending = list;
        self.halo_time += started.elapsed();
        Ok(ex)
    }

    /// Waits for an exchange and unpacks it (into the host copies, or through `backend` into
    /// the device copies when it is direct); returns the dats whose halos are now current.
    pub fn halo_exchange_end(
        &mut self,
        mut ex: Exchange,
        backend: Option<&mut dyn crate::backend::Backend>,
    ) -> Result<Vec<DatId>> {
        let t = Instant::now();
        #[cfg(not(feature = "mpi"))]
        let _ = backend;
        #[cfg(feature = "mpi")]
        if !ex.reqs.is_empty() {
            let mut reqs = std::mem::take(&mut ex.reqs);
            let r = match &self.world {
                Some(w) => w.wait_all(&mut reqs),
                None => Ok(()),
            };
            if r.is_err() {
                ex.reqs = reqs; // dropped: waited again
            }
            r?;
            let imports = |set: usize, entry: usize| -> &[u32] {
                self.sets[set].layout.as_ref().map_or(&[][..], |l| l.imports[entry].1.as_slice())
            };
            if ex.direct {
                let Some(b) = backend else {
                    op2_bail!(Internal, "halo exchange: a device-staged exchange ended without its backend");
                };
                for p in &ex.recvs {
                    let (_, set, shape) = ex.dst[p.dat];
                    b.unpack_staged(ex.pending[p.dat], shape, imports(set, p.entry), p.at)?;
                }
                b.staged_sync()?;
            } else {
                for p in &ex.recvs {
                    let (ptr, set, shape) = ex.dst[p.dat];
                    let eb = shape.dim * shape.elem;
                    for (i, &pos) in imports(set, p.entry).iter().enumerate() {
                        let from = &ex.recv[p.at + i * eb..p.at + (i + 1) * eb];
                        // SAFETY: ptr is the dat's host buffer of `total` rows; pos < total;
                        // nothing else writes it while the loop's driver waits here.
                        unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), ptr.add(pos as usize * eb), eb) };
                    }
                }
            }
        }
        #[cfg(feature = "mpi")]
        if let Some(key) = ex.key.take() {
            self.halo_bufs.insert(key, (std::mem::take(&mut ex.send), std::mem::take(&mut ex.recv)));
        }
        let _ = ex.started;
        self.halo_time += t.elapsed();
        Ok(std::mem::take(&mut ex.pending))
    }

    /// Combines the reduction partials of every process into `reductions`, which the caller
    /// has re-seeded with its own values: INC adds the processes' sums once (in rank order),
    /// MIN/MAX take the best (ties to the lowest rank) and info payloads follow the winner.
    /// `partial` is this process's reductions after the owned section (INC seeded with zero).
    pub fn reduce(&self, partial: &[Reduction], reductions: &mut [Reduction]) -> Result<()> {
        if reductions.is_empty() || !self.distributed() {
            return Ok(());
        }
        let mut mine: Vec<u8> = Vec::new();
        for r in partial {
            for w in &r.buf {
                mine.extend_from_slice(&w.to_ne_bytes());
            }
        }
        // Every process reduces the same globals (same loop): one fixed-size collective.
        #[cfg(feature = "mpi")]
        let all = match &self.world {
            Some(w) => w.all_gather_same(&mine)?,
            None => mine.clone(),
        };
        #[cfg(not(feature = "mpi"))]
        let all = mine.clone();
        let p = all.len() / mine.len().max(1);
        let Some(mut parts) = Partials::new(reductions, p) else {
            op2_bail!(OutOfMemory, "global reduction: cannot allocate {p} partials");
        };
        let words = parts.words_mut();
        for (i, c) in all.chunks_exact(8).enumerate() {
            words[i] = u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        }
        parts.combine_into(reductions, p);
        Ok(())
    }
}

#[cfg(test)]
mod exchange_tests {
    use super::*;

    fn layout(imports: Vec<(i32, Vec<u32>)>, exports: Vec<(i32, Vec<u32>)>) -> SetLayout {
        SetLayout {
            owned: 4,
            core: 2,
            exec: 1,
            nonexec: 1,
            gids: super::layout::Gids::new(vec![0; 6]),
            imports,
            exports,
        }
    }

    /// Each neighbour's message holds every dat's rows for it in the exchange's order, one
    /// message after the other; a dat with nothing for a neighbour adds no piece, and a
    /// neighbour of one set only still gets its message.
    #[test]
    fn plan_lays_out_messages_per_neighbour() {
        let nodes = layout(vec![(1, vec![4]), (3, vec![5])], vec![(1, vec![0, 3]), (3, vec![2])]);
        let edges = layout(vec![(3, vec![4, 5])], vec![(2, vec![1])]);
        // u: nodes, 16-byte rows; w: edges, 8-byte rows; v: nodes, 8-byte rows.
        let plan = halo_plan(&[(Some(&nodes), 16), (Some(&edges), 8), (Some(&nodes), 8), (None, 4)]);
        assert_eq!(plan.peers, vec![(1, 0, 48, 0, 24), (2, 48, 8, 24, 0), (3, 56, 24, 24, 40)]);
        let piece = |dat, entry, at, bytes| Piece { dat, entry, at, bytes };
        assert_eq!(
            plan.sends,
            vec![piece(0, 0, 0, 32), piece(2, 0, 32, 16), piece(1, 0, 48, 8), piece(0, 1, 56, 16), piece(2, 1, 72, 8)]
        );
        assert_eq!(
            plan.recvs,
            vec![piece(0, 0, 0, 16), piece(2, 0, 16, 8), piece(0, 1, 24, 16), piece(1, 0, 40, 16), piece(2, 1, 56, 8)]
        );
        assert_eq!((plan.send_bytes, plan.recv_bytes), (80, 64));
        assert_eq!(halo_plan(&[(None, 8)]), HaloPlan::default());
    }

    #[test]
    fn cuda_aware_setting() {
        use CudaAware::*;
        assert_eq!(CudaAware::parse(None), Some(Auto));
        assert_eq!(CudaAware::parse(Some(" auto")), Some(Auto));
        assert_eq!(CudaAware::parse(Some("")), Some(Auto));
        assert_eq!(CudaAware::parse(Some("1")), Some(On));
        assert_eq!(CudaAware::parse(Some("0")), Some(Off));
        assert_eq!(CudaAware::parse(Some("yes")), None);
        // auto: only where the library says yes, and only for a backend that can stage.
        assert!(device_direct(Auto, Some(true), true).unwrap());
        assert!(!device_direct(Auto, None, true).unwrap());
        assert!(!device_direct(Auto, Some(false), true).unwrap());
        assert!(!device_direct(Auto, Some(true), false).unwrap());
        // 1: trusted where the library cannot say; refused where it says no.
        assert!(device_direct(On, None, true).unwrap());
        let e = device_direct(On, Some(false), true).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::BadConfig);
        assert!(e.message.contains("not CUDA-aware"), "{}", e.message);
        // ... but only matters to a backend that can stage (OpenCL, host backends: ignored).
        assert!(!device_direct(On, Some(false), false).unwrap());
        assert!(!device_direct(Off, Some(true), true).unwrap());
    }
}
