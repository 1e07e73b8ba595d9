//! The checkpoint state a session holds (`Context::checkpoint`), apart from the functions that
//! drive it (`checkpoint`, which takes the whole `Context`): the context layer stores it without
//! depending on the driver above it.

use crate::core::ElemType;
use crate::error::Result;
use std::time::{Duration, Instant};

/// The checkpoint state of a session (in `Context::checkpoint` once on).
pub struct Checkpointer {
    pub(super) path: String,
    pub(super) interval: f64,
    pub(super) last: Instant,
    pub(super) requested: bool,
    /// Loops since `op_checkpointing_init`.
    pub(super) count: u64,
    pub(super) sigs: Vec<u64>,
    /// `red[red_off[k]..red_off[k + 1]]`: loop k's global results.
    pub(super) red_off: Vec<u64>,
    pub(super) red: Vec<u8>,
    /// The checkpoint being replayed, until its loop count is reached.
    pub(super) replay: Option<Saved>,
    /// `OP2_CHECKPOINT_TEST_DELAY_MS`: a pause inside each write (tests kill the process there).
    pub(super) delay_ms: u64,
    /// Checkpoints written by this session, and the time of the last one.
    pub writes: u64,
    pub last_write: Duration,
    /// One process: the checkpoint being written by a background thread.
    pub(super) pending: Option<std::thread::JoinHandle<Written>>,
    /// One process: the snapshot buffers of the last background write, reused by the next.
    pub(super) buffers: Vec<Vec<u8>>,
    /// The digest (`digest`) of each map's values, by map index, from the first loop after its
    /// declaration (maps do not change).
    pub(super) map_digests: Vec<[u8; 32]>,
    /// The digest of each dat's values at the first loop after `op_checkpointing_init` or after
    /// its declaration, whichever is later: what the run started from (None: freed by then).
    pub(super) dat_digests: Vec<Option<[u8; 32]>>,
}

/// What a background write hands back: its outcome and report line, and its buffers.
pub(super) struct Written {
    pub(super) outcome: Result<String>,
    pub(super) buffers: Vec<Vec<u8>>,
    pub(super) took: Duration,
}

impl Drop for Checkpointer {
    /// A session dropped without `op_exit` (which collects the last write and reports its
    /// failure as its own error): a checkpoint still being written is finished first.
    fn drop(&mut self) {
        if let Some(h) = self.pending.take() {
            match h.join() {
                Ok(Written { outcome: Err(e), .. }) => eprintln!("{e}"),
                Err(_) => eprintln!("op2 checkpoint: the writer thread of '{}' failed", self.path),
                Ok(_) => {}
            }
        }
    }
}

/// What a checkpoint file says (all but the dats' rows, which are read at the restore point).
pub(super) struct Saved {
    pub(super) nprocs: u64,
    pub(super) count: u64,
    pub(super) sigs: Vec<u64>,
    pub(super) red_off: Vec<u64>,
    pub(super) red: Vec<u8>,
    pub(super) decls: String,
    pub(super) consts: Vec<(String, ElemType, usize, Vec<u8>)>,
    /// The digests of the maps' and dats' values (index, digest); None in a checkpoint of a
    /// format before them (not checked).
    pub(super) digests: Option<(Digests, Digests)>,
}

/// Digests by map or dat index, as a checkpoint lists them.
pub(super) type Digests = Vec<(u64, [u8; 32])>;

impl Checkpointer {
    pub(super) fn record(&mut self, sig: u64, results: &[u8]) -> Result<()> {
        crate::core::alloc::reserve(&mut self.red, results.len(), "op2 checkpoint: saved global results")?;
        self.red.extend_from_slice(results);
        self.sigs.push(sig);
        self.red_off.push(self.red.len() as u64);
        self.count += 1;
        Ok(())
    }
}
