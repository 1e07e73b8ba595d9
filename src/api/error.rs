//! The error API: the outcome of the last call and the handler mode.

use super::{boundary, last_error_ptr};
use std::ffi::{c_char, c_int};

/// Outcome of the most recent op2 call on this thread: 0 if it succeeded, else an `OP2_ERR_*`
/// code. Does not change the recorded outcome.
#[no_mangle]
pub extern "C" fn op_last_error_code() -> c_int {
    super::last_error().0
}

/// Message of the most recent op2 call on this thread: names the call, the objects and the
/// problem; `""` after a success. The string belongs to op2 and stays valid until the next op2
/// call on this thread. Does not change the recorded outcome.
#[no_mangle]
pub extern "C" fn op_last_error_message() -> *const c_char {
    last_error_ptr()
}

/// Selects what a failing call does: `OP_ERRORS_ABORT` (default: print `op2 error [code]:
/// message` to stderr and exit non-zero) or `OP_ERRORS_RETURN` (record the error, return a NULL
/// handle or do nothing). May be called before `op_init`. Errors: OP2_ERR_BAD_CONFIG for another
/// mode (reported with the handler unchanged).
#[no_mangle]
pub extern "C" fn op_set_error_handler(mode: c_int) {
    boundary("op_set_error_handler", (), |st| {
        match mode {
            0 => st.set_errors_return(false),
            1 => st.set_errors_return(true),
            _ => crate::op2_bail!(
                BadConfig,
                "op_set_error_handler: mode {mode} is neither OP_ERRORS_ABORT (0) nor OP_ERRORS_RETURN (1)"
            ),
        }
        Ok(())
    })
}
