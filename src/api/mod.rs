//! The C boundary: the only place with `extern "C"`. One file per C object; every entry point
//! runs inside `boundary`, which catches panics, records the outcome for
//! `op_last_error_code`/`op_last_error_message`, and applies the error handler.
//!
//! Entry points take raw pointers from C and are safe Rust functions by necessity (C calls them
//! directly); each documents what it requires of its pointers, as C API documentation does.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod arg;
pub mod data;
pub mod decl;
pub mod error;
pub mod extra;
pub mod handle;
pub mod lifecycle;
pub mod loops;

use crate::context::Context;
use crate::error::{ErrorCode, Op2Error, Result};
use crate::op2_bail;
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

/// The process-wide state behind the C API: the one `Context` (while initialised) and the
/// error handler mode, which the C API lets callers set before `op_init`.
pub(crate) struct ApiState {
    pub ctx: Option<Context>,
    /// Incremented by every `op_init`; handles carry it, so stale handles are detected.
    pub serial: u32,
    pub errors_return: bool,
}

static STATE: Mutex<ApiState> = Mutex::new(ApiState { ctx: None, serial: 0, errors_return: false });

thread_local! {
    /// Outcome of the most recent op2 call on this thread.
    static LAST_ERROR: RefCell<(i32, CString)> = RefCell::new((0, CString::default()));
}

fn lock() -> MutexGuard<'static, ApiState> {
    // A panic inside a call is caught and reported; the state it leaves is still consistent
    // (declarations are pushed only when complete), so a poisoned lock is safe to reuse.
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

impl ApiState {
    /// As `ctx`, naming the call with anything displayable (formatted only on error).
    pub fn ctx_named(&mut self, call: &dyn std::fmt::Display) -> Result<&mut Context> {
        match self.ctx.as_mut() {
            Some(c) => Ok(c),
            None => op2_bail!(NotInitialised, "{call}: op2 is not initialised (call op_init first)"),
        }
    }

    /// The context, or the "not initialised" error naming `call`.
    pub fn ctx(&mut self, call: &str) -> Result<&mut Context> {
        match self.ctx.as_mut() {
            Some(c) => Ok(c),
            None => op2_bail!(NotInitialised, "{call}: op2 is not initialised (call op_init first)"),
        }
    }
}

fn set_last_error(code: i32, msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = (code, c));
}

fn clear_last_error() {
    LAST_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        if e.0 != 0 {
            *e = (0, CString::default());
        }
    });
}

/// Runs the body of a C entry point named `call`: catches panics, records the outcome, and on
/// error applies the handler (print and exit by default, or return `default`).
pub(crate) fn boundary<T>(call: &str, default: T, body: impl FnOnce(&mut ApiState) -> Result<T>) -> T {
    let mut errors_return = false;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut st = lock();
        let r = body(&mut st);
        errors_return = st.errors_return;
        r
    }));
    let err = match outcome {
        Ok(Ok(v)) => {
            clear_last_error();
            return v;
        }
        Ok(Err(e)) => e,
        Err(panic) => {
            errors_return = lock().errors_return;
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            Op2Error::new(ErrorCode::Internal, format!("{call}: internal error in op2 ({what}); please report this"))
        }
    };
    set_last_error(err.code.as_i32(), &err.message);
    if !errors_return {
        eprintln!("{err}");
        std::process::exit(1);
    }
    default
}

/// Reads a required C string argument.
pub(crate) fn c_str<'a>(p: *const c_char, call: &str, what: &str) -> Result<&'a str> {
    if p.is_null() {
        op2_bail!(NullArgument, "{call}: {what} is NULL");
    }
    // SAFETY: non-NULL, and the C API requires NUL-terminated strings.
    match unsafe { CStr::from_ptr(p) }.to_str() {
        Ok(s) => Ok(s),
        Err(_) => op2_bail!(BadName, "{call}: {what} is not valid UTF-8"),
    }
}

/// The recorded message as a C string owned by this thread's error slot.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().1.as_ptr())
}

/// The error code after a call, for Rust tests of the boundary.
pub fn last_error() -> (i32, String) {
    LAST_ERROR.with(|e| {
        let e = e.borrow();
        (e.0, e.1.to_string_lossy().into_owned())
    })
}

/// `op_par_loop 'name'`, formatted only when an error message needs it.
pub(crate) struct LoopName<'a>(pub &'a str);

impl std::fmt::Display for LoopName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "op_par_loop '{}'", self.0)
    }
}

/// `arg N's handle`, formatted only when an error message needs it.
pub(crate) struct ArgHandle(pub usize);

impl std::fmt::Display for ArgHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "arg {}'s handle", self.0)
    }
}
