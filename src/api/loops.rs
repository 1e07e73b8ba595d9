//! `op_par_loop`.

use super::handle::{op_kernel, op_set};
use super::{boundary, c_str};
use crate::exec_chain;
use crate::op2_bail;
use std::ffi::{c_char, c_int};

use super::arg::op_arg;

/// Applies `kernel` to every element of `set`, with one pointer per argument in `args[0..nargs]`
/// (in order), in any order of elements; results do not depend on the order beyond the
/// floating-point rounding of OP_INC. The first call of each loop shape generates and compiles
/// code (cached in memory and on disk). `name` names the loop in timings and messages.
/// Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE,
/// OP2_ERR_BAD_LOOP (negative nargs, or NULL args with nargs > 0), OP2_ERR_ARG_INVALID, OP2_ERR_ARG_SET (a map that does not
/// start from `set`), OP2_ERR_ARG_INFO, OP2_ERR_COMPILE (with the compiler's diagnostics,
/// lines counted in the kernel's source), OP2_ERR_LOAD. A failed loop leaves the caller's
/// globals untouched. Collective under MPI.
#[no_mangle]
pub extern "C" fn op_par_loop(kernel: op_kernel, name: *const c_char, set: op_set, nargs: c_int, args: *const op_arg) {
    const CALL: &str = "op_par_loop";
    boundary(CALL, (), |st| {
        st.ctx_lazy(CALL)?;
        let name = c_str(name, CALL, "name")?;
        let k = st.kernel(kernel, &super::LoopName(name), &"kernel")?;
        let s = st.set(set, &super::LoopName(name), &"set")?;
        if nargs < 0 {
            op2_bail!(BadLoop, "{CALL} '{name}': nargs {nargs} is negative");
        }
        if nargs > 0 && args.is_null() {
            op2_bail!(BadLoop, "{CALL} '{name}': args is NULL but nargs is {nargs}");
        }
        let args: &[op_arg] = if nargs == 0 {
            &[]
        } else {
            // SAFETY: the caller passes nargs op_arg values (op_par_loop's contract).
            unsafe { std::slice::from_raw_parts(args, nargs as usize) }
        };
        let mut raw = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            raw.push(match super::arg::decode(st, a, name, i)? {
                super::arg::Decoded::Arg(r) => r,
                super::arg::Decoded::Mat { ty, acc } => super::mat::decode_arg(st, a, name, i, ty, acc)?,
            });
        }
        let ctx = st.ctx_lazy(CALL)?;
        super::IN_LOOP.store(true, std::sync::atomic::Ordering::Release);
        let r = exec_chain::par_loop(ctx, k, name, s, &raw);
        super::IN_LOOP.store(false, std::sync::atomic::Ordering::Release);
        r
    })
}

/// Runs every loop queued by lazy evaluation (`OP2_LAZY=1`) now, in order. Inside a loop chain
/// it runs what the chain has queued so far (its reductions land now). Without queued loops it
/// does nothing. A queued loop's failure is this call's error, naming the loop (the loops before
/// it have run; the ones after it are dropped and counted in the message).
/// Errors: OP2_ERR_NOT_INITIALISED, and any error of a queued loop. Collective under MPI.
#[no_mangle]
pub extern "C" fn op_flush() {
    const CALL: &str = "op_flush";
    boundary(CALL, (), |st| st.ctx(CALL).map(|_| ()))
}

/// Begins a loop chain called `name`: the loops called until `op_loop_chain_end` are queued
/// (whatever `OP2_LAZY` says) and run together at its end, fused and sparse-tiled where that
/// gives the same results. Their global reductions reach the caller's memory at
/// `op_loop_chain_end`, in loop order: do not read them before. Any call that reads or changes
/// data (`op_fetch_data*`, prints, files, `op_flush`, ...) inside the chain first runs what is
/// queued. Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_NULL_ARGUMENT, OP2_ERR_CHAIN (a chain is
/// already open: chains do not nest). Collective under MPI.
#[no_mangle]
pub extern "C" fn op_loop_chain_begin(name: *const c_char) {
    const CALL: &str = "op_loop_chain_begin";
    boundary(CALL, (), |st| {
        let ctx = st.ctx_lazy(CALL)?;
        let ready = c_str(name, CALL, "name").and_then(|name| match &ctx.lazy.chain {
            Some(open) => Err(crate::op2_err!(
                Chain,
                "{CALL} '{name}': chain '{open}' is still open (chains do not nest; call op_loop_chain_end first)"
            )),
            None => Ok(name),
        });
        let name = ctx.comm.enter(CALL, ready)?;
        ctx.lazy.chain = Some(name.to_string());
        Ok(())
    })
}

/// Ends the open loop chain: runs every loop queued in it (a failure is this call's error,
/// naming the loop) and hands the chain's global reductions to the caller's memory.
/// Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_CHAIN (no chain is open), and any error of a
/// queued loop. Collective under MPI.
#[no_mangle]
pub extern "C" fn op_loop_chain_end() {
    const CALL: &str = "op_loop_chain_end";
    boundary(CALL, (), |st| {
        let ctx = st.ctx_lazy(CALL)?;
        let ready = ctx.lazy.chain.clone().ok_or_else(|| {
            crate::op2_err!(
                Chain,
                "{CALL}: no loop chain is open (op_loop_chain_begin was not called, or its chain has ended)"
            )
        });
        let name = ctx.comm.enter(CALL, ready)?;
        // The chain runs under its name (timings, diagnostics), then is closed, whatever happens.
        let r = super::run_queue(ctx, &format!("{CALL} (chain '{name}')"));
        ctx.lazy.chain = None;
        r
    })
}
