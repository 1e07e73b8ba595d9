//! The C boundary: the only place with `extern "C"`. One file per C object; every entry point
//! runs inside `boundary`, which catches panics, records the outcome for
//! `op_last_error_code`/`op_last_error_message`, and applies the error handler.
//!
//! Entry points take raw pointers from C and are safe Rust functions by necessity (C calls them
//! directly); each documents what it requires of its pointers, as C API documentation does.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod arg;
pub mod checkpoint;
pub mod compat;
pub mod data;
pub mod decl;
pub mod error;
pub mod extra;
pub mod handle;
pub mod io;
pub mod lifecycle;
pub mod loops;
pub mod mat;
pub mod mpi;
pub mod profile;

use crate::context::Context;
use crate::error::{ErrorCode, Op2Error, Result};
use crate::op2_bail;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The process-wide state behind the C API: the one `Context` (while initialised). The error
/// handler mode, which the C API lets callers set before `op_init`, is `ERRORS_RETURN`.
pub(crate) struct ApiState {
    pub ctx: Option<Context>,
    /// Incremented by every `op_init`; handles carry it, so stale handles are detected.
    pub serial: u32,
    /// The most recent failed `op_arg_*` calls, by number (at most `ARG_FAILURES_KEPT`).
    arg_failures: VecDeque<(u32, Op2Error)>,
    next_arg_failure: u32,
    /// What `op_par_loop_fptr` knows of each function address it has been given.
    pub fns: Vec<loops::FnInfo>,
    /// The records behind set, map and dat handles.
    pub(crate) records: handle::Records,
    /// Names of constants declared by address (OP2's three-argument `op_decl_const`), by
    /// address: the variable found there, or why there is none.
    pub(crate) const_names: Vec<(usize, std::result::Result<String, String>)>,
    /// The Fortran source directories named by each object's debug information, read once.
    pub(crate) fortran_units: loops::FortranUnits,
}

/// How many failed `op_arg_*` calls are remembered for `op_par_loop`'s messages.
const ARG_FAILURES_KEPT: usize = 64;

static STATE: Mutex<ApiState> = Mutex::new(ApiState {
    ctx: None,
    serial: 0,
    arg_failures: VecDeque::new(),
    next_arg_failure: 0,
    fns: Vec::new(),
    records: handle::Records::new(),
    const_names: Vec::new(),
    fortran_units: Vec::new(),
});

/// Whether failing calls return (`OP_ERRORS_RETURN`) instead of exiting; an atomic, so that
/// errors found without the lock (a call from inside a kernel) follow it too.
static ERRORS_RETURN: AtomicBool = AtomicBool::new(false);
/// The thread (see `thread_id`) that holds `STATE`'s lock, or 0.
static LOCK_OWNER: AtomicU64 = AtomicU64::new(0);
/// Whether a parallel loop is running its kernel (set by `op_par_loop` around the compute).
pub(crate) static IN_LOOP: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Outcome of the most recent op2 call on this thread.
    static LAST_ERROR: RefCell<(i32, CString)> = RefCell::new((0, CString::default()));
    static THREAD_ID: u64 = {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
}

/// A small number naming the calling thread (never 0); `u64::MAX` once its thread-locals are
/// gone (during `exit()`), which no lock owner ever has.
fn thread_id() -> u64 {
    THREAD_ID.try_with(|id| *id).unwrap_or(u64::MAX)
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

    /// The context, or the "not initialised" error naming `call`, after every queued loop has
    /// run (lazy evaluation: a call that reads or changes data, or is collective, sees every
    /// loop called before it; a queued loop's failure is this call's error).
    pub fn ctx(&mut self, call: &str) -> Result<&mut Context> {
        match self.ctx.as_mut() {
            Some(c) => {
                run_queue(c, call)?;
                Ok(c)
            }
            None => op2_bail!(NotInitialised, "{call}: op2 is not initialised (call op_init first)"),
        }
    }

    /// The context, or the "not initialised" error naming `call`, with queued loops left
    /// waiting: for calls that neither read nor change what a queued loop touches (declarations
    /// of new objects, `op_arg_*`, queries of sizes, ranks and names, `op_par_loop` itself).
    pub fn ctx_lazy(&mut self, call: &str) -> Result<&mut Context> {
        match self.ctx.as_mut() {
            Some(c) => Ok(c),
            None => op2_bail!(NotInitialised, "{call}: op2 is not initialised (call op_init first)"),
        }
    }

    /// Remembers a failed `op_arg_*` call; returns its number (never 0).
    pub(crate) fn remember_arg_failure(&mut self, e: &Op2Error) -> u32 {
        self.next_arg_failure = self.next_arg_failure.wrapping_add(1).max(1);
        if self.arg_failures.len() == ARG_FAILURES_KEPT {
            self.arg_failures.pop_front();
        }
        self.arg_failures.push_back((self.next_arg_failure, e.clone()));
        self.next_arg_failure
    }

    /// The failure numbered `id`, if still remembered.
    pub(crate) fn arg_failure(&self, id: i32) -> Option<&Op2Error> {
        let id = u32::try_from(id).ok().filter(|&v| v != 0)?;
        self.arg_failures.iter().find(|(n, _)| *n == id).map(|(_, e)| e)
    }

    /// Sets the error handler mode.
    pub fn set_errors_return(&mut self, on: bool) {
        ERRORS_RETURN.store(on, Ordering::Relaxed);
    }
}

/// Runs the loops queued in `ctx` (if any) on behalf of `call`, as `op_par_loop` runs a loop
/// (kernels that call op2 are refused).
pub(crate) fn run_queue(ctx: &mut Context, call: &str) -> Result<()> {
    if ctx.lazy.queue.is_empty() {
        return Ok(());
    }
    IN_LOOP.store(true, Ordering::Release);
    let r = crate::exec::chain::flush(ctx, call);
    IN_LOOP.store(false, Ordering::Release);
    r
}

/// Records the outcome of a call for `op_last_error_*`. During `exit()` (thread-locals already
/// destroyed) there is nowhere to record it, and nothing is done.
fn set_last_error(code: i32, msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    let _ = LAST_ERROR.try_with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            *e = (code, c);
        }
    });
}

fn clear_last_error() {
    let _ = LAST_ERROR.try_with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            if e.0 != 0 {
                *e = (0, CString::default());
            }
        }
    });
}

/// Whether the calling thread is inside a kernel: it holds op2's lock already (a kernel of a
/// loop on this thread), or it is one of the `threads` backend's workers while a loop runs.
fn called_from_kernel() -> bool {
    if LOCK_OWNER.load(Ordering::Acquire) == thread_id() {
        return true;
    }
    IN_LOOP.load(Ordering::Acquire)
        && std::thread::current().name().is_some_and(|n| n.starts_with(crate::backend::host::threads::WORKER_PREFIX))
}

/// Runs the body of a C entry point named `call`: catches panics, records the outcome, and on
/// error applies the handler (print and exit by default, or return `default`). Nothing in here
/// can panic, also not during `exit()` when thread-locals are gone.
pub(crate) fn boundary<T>(call: &str, default: T, body: impl FnOnce(&mut ApiState) -> Result<T>) -> T {
    boundary_with(call, default, |_| false, body)
}

/// `boundary` for the calls with which a program probes for an optional dataset
/// (`op_decl_*_hdf5`): a dataset absent from the file (`NoDataset`, agreed on every process)
/// is recorded and `default` (NULL) returned whatever the handler, as OP2 returns NULL there;
/// every other error follows the handler.
pub(crate) fn boundary_probe<T>(call: &str, default: T, body: impl FnOnce(&mut ApiState) -> Result<T>) -> T {
    boundary_with(call, default, |e| e.code == ErrorCode::NoDataset, body)
}

fn boundary_with<T>(
    call: &str,
    default: T,
    returns_anyway: impl Fn(&Op2Error) -> bool,
    body: impl FnOnce(&mut ApiState) -> Result<T>,
) -> T {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if called_from_kernel() {
            op2_bail!(
                Reentrant,
                "{call}: called from inside a kernel while a loop runs (kernels may not call op2 functions)"
            );
        }
        let mut st = lock();
        LOCK_OWNER.store(thread_id(), Ordering::Release);
        let r = body(&mut st);
        // Sizes change at op_partition (and a first loop's implicit one): the handles' records
        // follow.
        st.records_follow();
        LOCK_OWNER.store(0, Ordering::Release);
        r
    }));
    let err = match outcome {
        Ok(Ok(v)) => {
            clear_last_error();
            return v;
        }
        Ok(Err(e)) => e,
        Err(panic) => {
            LOCK_OWNER.store(0, Ordering::Release);
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            Op2Error::new(ErrorCode::Internal, format!("{call}: internal error in op2 ({what}); please report this"))
        }
    };
    set_last_error(err.code.as_i32(), &err.message);
    if !ERRORS_RETURN.load(Ordering::Relaxed) && !returns_anyway(&err) {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{err}");
        crate::mpi::abort_job(1);
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

/// The recorded message as a C string owned by this thread's error slot ("" once the slot is
/// gone, during `exit()`).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.try_with(|e| e.try_borrow().map(|e| e.1.as_ptr()).unwrap_or(c"".as_ptr())).unwrap_or(c"".as_ptr())
}

/// The error code and message after a call (0 and "" once the slot is gone, during `exit()`).
pub fn last_error() -> (i32, String) {
    LAST_ERROR
        .try_with(|e| e.try_borrow().map(|e| (e.0, e.1.to_string_lossy().into_owned())).unwrap_or_default())
        .unwrap_or_default()
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
