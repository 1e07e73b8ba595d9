//! OP2's profiling calls (`op_profile_*`, from OP2's `op_profile.h`): a tree of named regions
//! timed by wall clock, printed with op2's per-loop report. The tree lives in the session's
//! `Context` (`timing::Profile`).

use super::{boundary, c_str};
use crate::context::Context;
use std::ffi::c_char;
use std::time::Instant;

/// A profiling call that did not fit the open regions changed nothing; at diagnostics level 1
/// the process says why (never an error: OP2 programs call these in every configuration).
fn said(ctx: &Context, r: std::result::Result<(), String>) {
    if let Err(why) = r {
        if ctx.config.diags >= 1 {
            crate::core::output::print_after_c_stdio(&format!("op2: {why}\n"));
        }
    }
}

/// The session for a profiling call. On one process, loops queued by OP2_LAZY or an open chain
/// run first, so that their time falls in the region they were called in. Under MPI they stay
/// queued: running them is collective, and these calls are not (a process may enter a region
/// the others do not), so their time falls where they run.
fn session<'a>(st: &'a mut super::ApiState, call: &str) -> crate::error::Result<&'a mut Context> {
    let ctx = st.ctx_lazy(call)?;
    if !ctx.comm.distributed() {
        super::run_queue(ctx, call)?;
    }
    Ok(ctx)
}

/// Runs one profiling call on the session's region tree.
fn region(call: &str, name: Option<*const c_char>, f: impl FnOnce(&mut Context, &str, Instant) -> Result<(), String>) {
    boundary(call, (), |st| {
        let name = match name {
            Some(p) => c_str(p, call, "name")?,
            None => "",
        };
        let ctx = session(st, call)?;
        let r = f(ctx, name, Instant::now());
        said(ctx, r);
        Ok(())
    })
}

/// OP2's `op_profile_start`: opens the root region `name` of the profile (the whole run, or
/// the part of it to be timed); regions entered until `op_profile_end` nest inside it. A start
/// while a root region is open changes nothing (said at diagnostics level 1); a start after
/// `op_profile_end` opens the root again (a region entered again adds a call to it). Like
/// every profiling call, on one process it first runs the loops queued by OP2_LAZY or an open
/// chain (their time falls in the region they were called in); under MPI they stay queued,
/// since running them is collective and these calls are not (a process may enter a region the
/// others do not). Not collective. Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_profile_start(name: *const c_char) {
    region("op_profile_start", Some(name), |ctx, name, now| ctx.profile.start(name, now))
}

/// OP2's `op_profile_enter`: opens region `name` inside the innermost open region (one region
/// per name under a parent: entering it again adds a call to its count and time). Before
/// `op_profile_start` it changes nothing (said at diagnostics level 1). Not collective.
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_profile_enter(name: *const c_char) {
    region("op_profile_enter", Some(name), |ctx, name, now| ctx.profile.enter(name, now))
}

/// OP2's `op_profile_enter_kernel` (called by OP2's generated code around a kernel): as
/// `op_profile_enter` with the region named `name/target/variant`, as OP2 names it. Errors:
/// OP2_ERR_NULL_ARGUMENT (any of the three), OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_profile_enter_kernel(name: *const c_char, target: *const c_char, variant: *const c_char) {
    const CALL: &str = "op_profile_enter_kernel";
    boundary(CALL, (), |st| {
        let full = format!(
            "{}/{}/{}",
            c_str(name, CALL, "name")?,
            c_str(target, CALL, "target")?,
            c_str(variant, CALL, "variant")?
        );
        let ctx = session(st, CALL)?;
        let r = ctx.profile.enter(&full, Instant::now());
        said(ctx, r);
        Ok(())
    })
}

/// OP2's `op_profile_next`: closes the innermost region entered (as `op_profile_exit`) and
/// enters its sibling `name` (as `op_profile_enter`), at one instant. With no region entered
/// below the root it only enters `name` (said at diagnostics level 1). Not collective. Errors:
/// OP2_ERR_NULL_ARGUMENT, OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_profile_next(name: *const c_char) {
    region("op_profile_next", Some(name), |ctx, name, now| ctx.profile.next(name, now))
}

/// OP2's `op_profile_exit`: closes the innermost region opened by `op_profile_enter`, adding
/// the time since it was entered. With none open (an exit without its enter) it changes
/// nothing and says so at diagnostics level 1; the root region is closed by `op_profile_end`.
/// Not collective. Errors: OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_profile_exit() {
    region("op_profile_exit", None, |ctx, _, now| ctx.profile.exit(now))
}

/// OP2's `op_profile_end`: closes every open region, the root last (with nothing open it
/// changes nothing, said at diagnostics level 1). Not collective. Errors:
/// OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_profile_end() {
    region("op_profile_end", None, |ctx, _, now| ctx.profile.end(now))
}

/// OP2's `op_profile_output`: prints the region tree to stdout (process 0), one line per
/// region indented by its depth, in the order regions were first entered: calls, total, mean,
/// min and max wall time in seconds and the share of its parent's total (a region still open is
/// marked "(open)" and counts its time so far); then op2's per-loop report (`op_timing_output`).
/// Under MPI (collective) the regions of every process are matched by their path of names and
/// each figure is the maximum over the processes (min the minimum). Without any region it
/// prints the loop report only. Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_MPI.
#[no_mangle]
pub extern "C" fn op_profile_output() {
    const CALL: &str = "op_profile_output";
    boundary(CALL, (), |st| {
        let ctx = st.ctx(CALL)?;
        ctx.comm.enter(CALL, Ok(()))?;
        let mine = ctx.profile.rows(Instant::now());
        let rows = if ctx.comm.distributed() {
            let all = ctx.comm.all_gather(&crate::context::timing::Profile::encode(&mine))?;
            let all: Vec<_> = all.iter().map(|b| crate::context::timing::Profile::decode(b)).collect();
            crate::context::timing::Profile::merge(&all)
        } else {
            mine
        };
        let loops = super::lifecycle::timing_text(ctx)?;
        if ctx.comm.rank() == 0 {
            let mut text = String::new();
            if !rows.is_empty() {
                text = crate::context::timing::Profile::table(&rows, ctx.comm.size());
            }
            text.push_str(&loops.unwrap_or_default());
            crate::core::output::print_after_c_stdio(&text);
        }
        Ok(())
    })
}
