//! `op_par_loop`.

use super::handle::{op_kernel, op_set};
use super::{boundary, c_str};
use crate::exec;
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
        st.ctx(CALL)?;
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
        let ctx = st.ctx(CALL)?;
        super::IN_LOOP.store(true, std::sync::atomic::Ordering::Release);
        let r = exec::par_loop(ctx, k, name, s, &raw);
        super::IN_LOOP.store(false, std::sync::atomic::Ordering::Release);
        r
    })
}
