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
    /// Collective calls entered so far (the sequence number `enter` compares).
    pub seq: std::sync::atomic::AtomicU64,
    /// Maps of original global indices for `op_arg_idx` on device backends: (map, loop set,
    /// values), made once per (map, set) after op_partition (see `dist::global_index_map`).
    pub idx_maps: Vec<(Option<crate::core::MapId>, SetId, std::sync::Arc<Vec<i32>>)>,
    /// Per set (by SetId), after op_partition: how owned rows reach the declared blocks
    /// (`dist::to_declared_block`), made at first use (one all-to-all of original indices).
    pub block_plans: std::sync::Mutex<Vec<Option<std::sync::Arc<BlockPlan>>>>,
}

/// How the owned rows of a set reach the declared blocks: per process q, which owned rows
/// (local indices, in order) go to q, and where the rows that q sends land in this process's
/// block (positions, in q's order). Fixed once op_partition has run (made by `dist`).
pub struct BlockPlan {
    send: Vec<Vec<u32>>,
    recv: Vec<Vec<u32>>,
}

/// An exchange in flight: the requests and the buffers they use. Dropping it waits for every
/// request, so an error between begin and end leaves nothing pending.
#[must_use]
pub struct Exchange {
    pending: Vec<DatId>,
    #[cfg(feature = "mpi")]
    reqs: Vec<mpi::ffi::MPI_Request>,
    /// Per neighbour: (rank, receive buffer).
    #[cfg(feature = "mpi")]
    recv: Vec<(i32, Vec<u8>)>,
    /// Per neighbour: (rank, send buffer).
    #[cfg(feature = "mpi")]
    send: Vec<(i32, Vec<u8>)>,
    /// Per dat in `pending`: where its rows go (host pointer), the row size and the set.
    #[cfg(feature = "mpi")]
    dst: Vec<(*mut u8, usize, usize)>,
    started: Instant,
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
                let rows = distpart::fetch_rows(self, offsets, &data[..n * eb], eb, &l.gids)?;
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
    /// halos are out of date): packs every neighbour's rows into one buffer and posts the sends
    /// and receives.
    pub fn halo_exchange_begin(&mut self, dats: &mut [Dat], list: Vec<DatId>) -> Result<Exchange> {
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
            dst: Vec::new(),
            started,
        };
        if !self.partitioned || list.is_empty() {
            ex.pending = list;
            return Ok(ex);
        }
        #[cfg(not(feature = "mpi"))]
        let _ = dats;
        #[cfg(feature = "mpi")]
        {
            let Some(w) = &self.world else {
                ex.pending = list;
                return Ok(ex);
            };
            let lay = |d: &Dat| self.sets[d.set.0 as usize].layout.as_ref();
            // Neighbours of any set involved, ascending.
            let mut nbrs: Vec<i32> = Vec::new();
            for &d in &list {
                if let Some(l) = lay(&dats[d.0 as usize]) {
                    nbrs.extend(l.imports.iter().map(|x| x.0));
                    nbrs.extend(l.exports.iter().map(|x| x.0));
                }
            }
            nbrs.sort_unstable();
            nbrs.dedup();
            for &q in &nbrs {
                let mut sbuf = Vec::new();
                let mut rbytes = 0usize;
                for &d in &list {
                    let dv = &dats[d.0 as usize];
                    let Some(l) = lay(dv) else { continue };
                    let eb = dv.elem_bytes();
                    let data = dv.data.as_slice();
                    if let Some((_, idx)) = l.exports.iter().find(|x| x.0 == q) {
                        for &i in idx {
                            sbuf.extend_from_slice(&data[i as usize * eb..(i as usize + 1) * eb]);
                        }
                    }
                    if let Some((_, pos)) = l.imports.iter().find(|x| x.0 == q) {
                        rbytes += pos.len() * eb;
                    }
                }
                if rbytes > 0 {
                    ex.recv.push((q, vec![0u8; rbytes]));
                }
                if !sbuf.is_empty() {
                    self.halo_bytes += sbuf.len() as u64;
                    self.messages += 1;
                    ex.send.push((q, sbuf));
                }
            }
            // Post receives first, then sends. The Vec<u8> heap buffers never move from here on.
            ex.reqs = vec![transport::World::null_request(); ex.recv.len() + ex.send.len()];
            let mut k = 0;
            for (q, buf) in ex.recv.iter_mut() {
                w.irecv(buf, *q, HALO_TAG, &mut ex.reqs[k])?;
                k += 1;
            }
            for (q, buf) in &ex.send {
                w.isend(buf, *q, HALO_TAG, &mut ex.reqs[k])?;
                k += 1;
            }
            for &d in &list {
                let dv = &mut dats[d.0 as usize];
                let eb = dv.elem_bytes();
                ex.dst.push((dv.data.as_mut_ptr(), eb, dv.set.0 as usize));
            }
        }
        ex.pending = list;
        self.halo_time += started.elapsed();
        Ok(ex)
    }

    /// Waits for an exchange and unpacks it; returns the dats whose halos are now current.
    pub fn halo_exchange_end(&mut self, mut ex: Exchange) -> Result<Vec<DatId>> {
        let t = Instant::now();
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
            for (q, buf) in &ex.recv {
                let mut at = 0usize;
                for &(ptr, eb, set) in &ex.dst {
                    let Some(l) = self.sets[set].layout.as_ref() else { continue };
                    if let Some((_, pos)) = l.imports.iter().find(|x| x.0 == *q) {
                        for &p in pos {
                            // SAFETY: ptr is the dat's host buffer of `total` rows; p < total;
                            // nothing else writes it while the loop's driver waits here.
                            unsafe {
                                std::ptr::copy_nonoverlapping(buf.as_ptr().add(at), ptr.add(p as usize * eb), eb)
                            };
                            at += eb;
                        }
                    }
                }
            }
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
