//! Getting data out: fetch, sizes, printing.

use super::handle::{op_dat, op_set};
use super::{boundary, c_str};
use crate::op2_bail;
use std::ffi::{c_char, c_int, c_longlong, c_void};

/// Copies all of a dat's values (`set.size * dim` values, original element order) into `data`,
/// which the caller provides. Under MPI: this process's declared block, in its original order,
/// whatever the partitioner (collective). Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_fetch_data(dat: op_dat, data: *mut c_void) {
    const CALL: &str = "op_fetch_data";
    boundary(CALL, (), |st| {
        if super::checkpoint::replaying(st, CALL) {
            return Ok(());
        }
        let d = st.dat(dat, &CALL, &"dat");
        let ctx = st.ctx(CALL)?;
        let ready = d.and_then(|d| {
            let dv = &ctx.dats[d.0 as usize];
            if data.is_null() && crate::mpi::dist::declared_size(ctx, dv.set) > 0 {
                op2_bail!(NullArgument, "{CALL} '{}': data is NULL", dv.name);
            }
            Ok(d)
        });
        let d = ctx.comm.enter(CALL, ready)?;
        let dv = &ctx.dats[d.0 as usize];
        let n = crate::mpi::dist::declared_size(ctx, dv.set);
        let eb = dv.elem_bytes();
        if ctx.comm.distributed() {
            // Collective: every process takes part, also one that declared nothing.
            let out: &mut [u8] = if n == 0 {
                &mut []
            } else {
                // SAFETY: the caller provides room for its declared block: n * dim values.
                unsafe { std::slice::from_raw_parts_mut(data as *mut u8, n * eb) }
            };
            return crate::mpi::dist::fetch_block(ctx, d, out);
        }
        if n == 0 {
            return Ok(());
        }
        // SAFETY: the caller provides room for set.size * dim values.
        let out = unsafe { std::slice::from_raw_parts_mut(data as *mut u8, n * eb) };
        ctx.fetch(d, 0, n - 1, out)?;
        Ok(())
    })
}

/// Copies the values of elements `low..=high` (inclusive) of a dat into `data`
/// (`(high - low + 1) * dim` values). Under MPI the indices are global (original numbering), the
/// call is collective and every process gets the range. Errors: OP2_ERR_BAD_RANGE unless
/// `0 <= low <= high < set.size` (global size under MPI); OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_fetch_data_idx(dat: op_dat, data: *mut c_void, low: c_int, high: c_int) {
    const CALL: &str = "op_fetch_data_idx";
    boundary(CALL, (), |st| {
        if super::checkpoint::replaying(st, CALL) {
            return Ok(());
        }
        let d = st.dat(dat, &CALL, &"dat");
        let ctx = st.ctx(CALL)?;
        let ready = d.and_then(|d| {
            let dv = &ctx.dats[d.0 as usize];
            let n = crate::mpi::dist::global_size(ctx, dv.set);
            if low < 0 || high < low || high as usize >= n {
                op2_bail!(
                    BadRange,
                    "{CALL} '{}': range [{low}, {high}] is not inside the set '{}' of {n} elements",
                    dv.name,
                    ctx.sets[dv.set.0 as usize].name
                );
            }
            if data.is_null() {
                op2_bail!(NullArgument, "{CALL} '{}': data is NULL", dv.name);
            }
            Ok(d)
        });
        let d = ctx.comm.enter(CALL, ready)?;
        let dv = &ctx.dats[d.0 as usize];
        let count = (high - low + 1) as usize;
        // SAFETY: the caller provides room for (high - low + 1) * dim values.
        let eb = dv.elem_bytes();
        let out = unsafe { std::slice::from_raw_parts_mut(data as *mut u8, count * eb) };
        if ctx.comm.distributed() {
            // Only the rows of the range move (from the processes that own them).
            return crate::mpi::stream::fetch_range(ctx, d, low as usize, high as usize, out);
        }
        ctx.fetch(d, low as usize, high as usize, out)?;
        Ok(())
    })
}

/// The global number of elements of a set (over all ranks under MPI). Errors:
/// OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE (then returns -1).
#[no_mangle]
pub extern "C" fn op_get_size(set: op_set) -> c_longlong {
    const CALL: &str = "op_get_size";
    boundary(CALL, -1, |st| {
        let s = st.set(set, &CALL, &"set")?;
        Ok(crate::mpi::dist::global_size(st.ctx_lazy(CALL)?, s) as c_longlong)
    })
}

/// Writes a dat to a text file in OP2's exact format, so files diff against OP2's: a first line
/// `<set size> <dim>`, then one line per element (declared order), each value with a leading
/// space as C's `" %+2.15lE"` (double), `" %+f"` (float), `" %+d"` (int); op2's other types as
/// `" %u"` (uint), `" %+lld"` (ll), `" %llu"` (ull), `" %+d"` (bool 0/1). Collective under MPI.
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_IO.
#[no_mangle]
pub extern "C" fn op_print_dat_to_txtfile(dat: op_dat, file: *const c_char) {
    const CALL: &str = "op_print_dat_to_txtfile";
    boundary(CALL, (), |st| {
        if super::checkpoint::replaying(st, CALL) {
            return Ok(());
        }
        let ready = st.dat(dat, &CALL, &"dat").and_then(|d| Ok((d, c_str(file, CALL, "file")?)));
        let ctx = st.ctx(CALL)?;
        let (d, file) = ctx.comm.enter(CALL, ready)?;
        let text = if ctx.comm.distributed() {
            // Collective: written by process 0 in original order, streamed to it block by
            // block (no process holds the whole dat); its outcome is every process's.
            let r = crate::mpi::stream::print_dat(ctx, d, file, crate::mpi::stream::Format::Text, CALL);
            return ctx.comm.agree(r);
        } else {
            ctx.sync_to_host(d)?;
            ctx.dat_text(d)?
        };
        let r = crate::core::file::write_whole(file, text.as_ref())
            .map_err(|e| crate::op2_err!(Io, "{CALL} '{}': cannot write '{file}': {e}", ctx.dats[d.0 as usize].name));
        ctx.comm.agree(r)
    })
}

/// Bytes copied host to device (`*to_device`) and device to host (`*to_host`) for this dat
/// since it was declared: dats stay on the device between loops and move only when a loop or a
/// host access (fetch, print, file output, `op_download_dat`) needs them; under MPI a halo
/// exchange moves only the rows it exchanges (export rows down, received halo rows up), counted
/// here too. Always 0 and 0 on host backends. Either pointer may be NULL. Errors: OP2_ERR_INVALID_HANDLE, OP2_ERR_NULL_ARGUMENT.
#[no_mangle]
pub extern "C" fn op_dat_transfers(dat: op_dat, to_device: *mut c_longlong, to_host: *mut c_longlong) {
    const CALL: &str = "op_dat_transfers";
    boundary(CALL, (), |st| {
        let d = st.dat(dat, &CALL, &"dat")?;
        let dv = &st.ctx(CALL)?.dats[d.0 as usize];
        // SAFETY: non-NULL pointers are the caller's long long outputs.
        unsafe {
            if !to_device.is_null() {
                *to_device = dv.to_device as c_longlong;
            }
            if !to_host.is_null() {
                *to_host = dv.to_host as c_longlong;
            }
        }
        Ok(())
    })
}
