//! A parallel loop as a value: bound to its data, owning everything it needs to run later
//! (`ParLoop`), and the session's queue of such loops (`Lazy`, held by `Context`). `exec` binds,
//! compiles and runs them; `exec::chain` runs a queue as one chain.

use crate::arg::{Access, ArgDesc, BoundArg};
use crate::core::{DatId, MapId, SetId};
use crate::error::Result;
use crate::exec::loop_cache::{CompiledLoop, LoopShape};
use crate::plan::tiling::{Schedule, Tiling};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// `op_arg_idx` under MPI on a device: the index of the map of original indices, and its values.
pub type IdxMap = Option<(usize, Arc<Vec<i32>>)>;

/// A loop bound to its data: the shape, plus what each argument refers to in this call. It
/// borrows nothing: handles are ids, tables are shared, and the values of READ globals are
/// copied (`hold_globals`) when the loop is queued; reduction targets stay the caller's memory,
/// written when the loop runs, and each starts from the value it had at the call.
pub struct ParLoop {
    pub name: String,
    pub set: SetId,
    pub shape: LoopShape,
    pub bound: Vec<BoundArg>,
    /// `op_arg_idx` under MPI on a device: per argument, the map of original indices that the
    /// device code reads instead (empty when no argument needs one).
    pub synth: Vec<IdxMap>,
    /// Per `op_arg_mat` argument: its element-to-CSR-slot table (empty without matrices).
    pub mat_slots: Vec<Option<Arc<Vec<i32>>>>,
    /// The shape's compiled loop, once found or compiled.
    pub compiled: Option<Arc<CompiledLoop>>,
    /// Time spent compiling this shape at this call (zero when the code was cached).
    pub jit_time: Duration,
    /// The values of READ globals at the call, once held: their `BoundArg::Gbl` pointers point
    /// here (heap blocks, so moving the loop moves no value).
    held: Vec<Box<[u64]>>,
    /// Reduction targets (INC/MIN/MAX globals, info payloads) once held: the caller's pointer,
    /// its value at the call and its size. The loop starts from that value whatever the caller
    /// wrote since (`restore_seeds`), as if it had run at its call.
    seeds: Vec<(*mut u8, Box<[u64]>, usize)>,
}

// SAFETY: the raw pointers in `bound` are the caller's reduction targets (C's contract keeps
// them valid until the loop has run) and this loop's own held blocks; a `ParLoop` is only used
// under the API's lock, by whichever thread holds it.
unsafe impl Send for ParLoop {}

impl ParLoop {
    pub fn new(name: &str, set: SetId, shape: LoopShape, bound: Vec<BoundArg>) -> ParLoop {
        ParLoop {
            name: name.to_string(),
            set,
            shape,
            bound,
            synth: Vec::new(),
            mat_slots: Vec::new(),
            compiled: None,
            jit_time: Duration::ZERO,
            held: Vec::new(),
            seeds: Vec::new(),
        }
    }

    /// Its enabled dat arguments as a chain sees them: dat, map, map column (`None`: direct, or
    /// every column of a vector argument) and access.
    pub fn dat_args(&self) -> impl Iterator<Item = ChainKeyArg> + '_ {
        self.shape.args.iter().zip(&self.bound).filter_map(|(d, b)| match (d, b) {
            (ArgDesc::Dat { acc, how, .. }, BoundArg::Dat { dat, map, enabled: true }) => {
                let col = match how {
                    crate::arg::DatAccess::Indirect { idx, .. } => Some(*idx),
                    _ => None,
                };
                Some((*dat, *map, col, *acc))
            }
            _ => None,
        })
    }

    /// Whether the loop hands values back to the caller (an OP_INC/MIN/MAX global or an info).
    pub fn reduces(&self) -> bool {
        self.shape.args.iter().any(|d| match d {
            ArgDesc::Gbl { acc, .. } => *acc != crate::arg::Access::Read,
            ArgDesc::Info { .. } => true,
            _ => false,
        })
    }

    /// Its global arguments: the caller's pointer, size, size of one value, and whether the loop
    /// reduces into it (INC/MIN/MAX, info) rather than reading it. A READ global's pointer is
    /// the caller's until `hold_globals`.
    pub fn globals(&self) -> impl Iterator<Item = (*mut u8, usize, usize, bool)> + '_ {
        self.shape.args.iter().zip(&self.bound).filter_map(|(d, b)| match (d, b) {
            (ArgDesc::Gbl { ty, acc, .. }, BoundArg::Gbl { ptr, bytes }) => {
                Some((*ptr, *bytes, ty.size(), *acc != crate::arg::Access::Read))
            }
            (ArgDesc::Info { ty, .. }, BoundArg::Gbl { ptr, bytes }) => Some((*ptr, *bytes, ty.size(), true)),
            _ => None,
        })
    }

    /// Whether some argument is a matrix (assembled in the loop: matrix loops never wait).
    pub fn has_mat(&self) -> bool {
        self.shape.args.iter().any(|d| matches!(d, ArgDesc::Mat { .. }))
    }

    /// Copies every global's current value: a READ global's copy is what the loop reads (its
    /// pointer is pointed at the copy), so the caller may change its variable before the loop
    /// runs; a reduction target's copy is the value the loop starts from (`restore_seeds`), its
    /// result still goes to the caller's variable. A copy that cannot be allocated is
    /// OP2_ERR_OUT_OF_MEMORY.
    pub fn hold_globals(&mut self) -> Result<()> {
        for (d, b) in self.shape.args.iter().zip(self.bound.iter_mut()) {
            let BoundArg::Gbl { ptr, bytes } = b else { continue };
            let read = matches!(d, ArgDesc::Gbl { acc: crate::arg::Access::Read, .. });
            let what = format!("op_par_loop '{}'", self.name);
            let mut block = crate::core::alloc::zeroed::<u64>(bytes.div_ceil(8).max(1), &what)?;
            // SAFETY: ptr is the caller's global of `bytes` bytes (op_arg_gbl's contract); the
            // block holds at least as many.
            unsafe { std::ptr::copy_nonoverlapping(*ptr as *const u8, block.as_mut_ptr() as *mut u8, *bytes) };
            let mut block = block.into_boxed_slice();
            if read {
                *ptr = block.as_mut_ptr() as *mut u8;
                self.held.push(block);
            } else {
                self.seeds.push((*ptr, block, *bytes));
            }
        }
        Ok(())
    }

    /// Puts back, in the caller's reduction variables, their values at the call (a queued
    /// loop starts from them, as it would have run then; see `hold_globals`). Nothing for a
    /// loop that was not queued.
    pub fn restore_seeds(&self) {
        for (ptr, block, bytes) in &self.seeds {
            // SAFETY: as in `hold_globals`; the caller's variable stays valid until the loop
            // has run (C's contract for a queued loop).
            unsafe { std::ptr::copy_nonoverlapping(block.as_ptr() as *const u8, *ptr, *bytes) };
        }
    }
}

/// How one argument of a chain's loop touches data: dat, map, map column, access.
pub type ChainKeyArg = (DatId, Option<MapId>, Option<usize>, Access);

/// What a chain's tiling depends on: per loop, its set and how each argument touches data (dat,
/// map, column, access); and the tile size and schedule. Map values cannot change while a key
/// is cached (`op_renumber` clears the cache).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ChainKey {
    pub loops: Vec<(SetId, Vec<ChainKeyArg>)>,
    pub tile_size: usize,
    pub schedule: Schedule,
    /// The loops of each fusion group, in order (1: unfused).
    pub groups: Vec<usize>,
    /// Under MPI, the partition the tiling was made for (`Comm::partition_epoch`; 0 on one
    /// process): the sets' local numberings and halos it depends on.
    pub layout: u64,
}

/// A reduction target of a queued loop (`exec::chain`): from the loop's call until the queue
/// runs, the caller's variable holds op2's placeholder (`exec::chain::placeholder`), so that a
/// value the program stores there in between is seen (and kept, as eagerly), and a later loop
/// that reduces into it or reads it can tell whether it must follow the queued loop's result.
pub struct Pending {
    /// The caller's variable and its size.
    pub ptr: *mut u8,
    pub bytes: usize,
    /// The size of one of its values (the placeholder is per value).
    pub elem: usize,
    /// Its value at the first queued call that reduces into it (put back where a failure leaves
    /// the placeholder).
    pub first: Box<[u8]>,
}

// SAFETY: as for `ParLoop`: the caller's reduction target, valid until the queue has run, used
// only under the API's lock.
unsafe impl Send for Pending {}

/// The session's lazy state: loops waiting to run, the open chain (if any), and the tilings of
/// the chains run so far.
#[derive(Default)]
pub struct Lazy {
    pub queue: Vec<ParLoop>,
    /// The queued loops' reduction targets, each once (`exec::chain`).
    pub pending: Vec<Pending>,
    /// The name of the chain `op_loop_chain_begin` opened, until `op_loop_chain_end`.
    pub chain: Option<String>,
    pub tilings: HashMap<ChainKey, Arc<Tiling>>,
    /// Fused loops by their shapes: the library and the constants it loads (`None`: the
    /// loops do not compile as one unit and run unfused).
    pub fused: HashMap<Vec<LoopShape>, Option<Arc<Fused>>>,
    /// Device backends: fused units by their loops' shapes (`exec::device`; `None`: the unit
    /// did not compile and its loops run unfused).
    pub device_fused: HashMap<Vec<LoopShape>, Option<Arc<DeviceFused>>>,
}

/// A fused loop's library and the constants it loads, in order (`backend::host::codegen::generate_fused`).
pub struct Fused {
    pub lib: Arc<crate::jit::HostLibrary>,
    pub consts: Vec<crate::codegen::ConstDecl>,
}

/// A fused device unit (`exec::device`): the constants of all its loops, sorted by name (compiled
/// into its code). Its address identifies the unit's shape to the backend (`LoopCall::shape_key`).
pub struct DeviceFused {
    pub consts: Vec<crate::codegen::ConstDecl>,
}

impl Lazy {
    /// Whether `op_par_loop` queues instead of running: `OP2_LAZY=1`, or inside a chain.
    pub fn queues(&self, lazy: bool) -> bool {
        lazy || self.chain.is_some()
    }
}
