//! `op_checkpointing_init`, `op_checkpoint_now`: checkpoint and restart.

use super::{boundary, c_str};
use std::ffi::{c_char, c_double, c_int};

/// Turns checkpointing on (OP2's name): from here on, at the first loop boundary after each
/// `interval_s` seconds (0: every boundary), op2 saves every dat, the constants, the loop count
/// and every global reduction's results since this call to the HDF5 file `path`, atomically (a
/// temporary file in the same directory, flushed to disk, renamed over the previous checkpoint,
/// with a SHA-256 checksum inside): a crash at any moment leaves the previous checkpoint usable.
/// On one process the run pauses only to copy the state; a background thread writes the file
/// (the next checkpoint and `op_exit` wait for it). Under MPI the write is collective.
/// When `path` already holds a checkpoint, the run replays it: loops before its count do not
/// run, each writes its saved global results into the caller's memory, output calls (fetches,
/// prints, file output) are skipped, and at its count every dat and constant is loaded and the
/// run goes on; the results equal an uninterrupted run's (bit for bit on `seq`, same backend and
/// process count). A file at `path` is used or refused, never ignored; `OP2_DIAGNOSTICS=1` says
/// which checkpoint the run resumes from, or that there is none. `flags` must be 0. Returns 1
/// when on, 0 on error.
/// Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_NULL_ARGUMENT, OP2_ERR_BAD_CONFIG (already on, a
/// negative or non-finite interval, non-zero flags, processes naming different paths),
/// OP2_ERR_IO (what is at `path` cannot be opened as a regular file: a FIFO, a directory, a
/// device, a symlink to a missing file; at once, never a hang), OP2_ERR_CHECKPOINT (the
/// checkpoint at `path` is truncated, corrupted, not a checkpoint, or of another process count,
/// or processes see different things at `path`, naming why; a checkpoint of another program is
/// refused at the first loop that differs, or at the restore point when the declarations or
/// the values of maps and dats differ), OP2_ERR_BACKEND_UNAVAILABLE (built without HDF5).
/// Collective under MPI (every process writes its part of one file).
#[no_mangle]
pub extern "C" fn op_checkpointing_init(path: *const c_char, interval_s: c_double, flags: c_int) -> c_int {
    const CALL: &str = "op_checkpointing_init";
    boundary(CALL, 0, |st| {
        let ready = c_str(path, CALL, "path");
        let ctx = st.ctx(CALL)?;
        let path = ctx.comm.enter(CALL, ready)?;
        crate::checkpoint::init(ctx, path, interval_s, flags)?;
        Ok(1)
    })
}

/// Asks for a checkpoint at the next loop boundary, whatever the interval (nothing while
/// checkpointing is off). Errors: OP2_ERR_NOT_INITIALISED. Collective under MPI.
#[no_mangle]
pub extern "C" fn op_checkpoint_now() {
    const CALL: &str = "op_checkpoint_now";
    boundary(CALL, (), |st| {
        let ctx = st.ctx(CALL)?;
        ctx.comm.enter(CALL, Ok(()))?;
        crate::checkpoint::now(ctx);
        Ok(())
    })
}

/// Whether output call `call` is skipped because a checkpoint is being replayed (its data is
/// not yet the program's); `OP2_DIAGNOSTICS=1` says so.
pub(crate) fn replaying(st: &super::ApiState, call: &str) -> bool {
    st.ctx.as_ref().is_some_and(|c| crate::checkpoint::skip_output(c, call))
}
