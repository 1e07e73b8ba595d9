//! More of OP2's functions: kernels from files, temporary dats, binary output, renumbering,
//! timers, and the MPI queries and device transfers that OP2 programs call (answered for one
//! process on host memory here; the MPI and device layers take them over).

use super::handle::{encode, op_dat, op_kernel, op_map, op_set, Kind};
use super::{boundary, c_str};
use crate::core::ElemType;
use crate::op2_bail;
use std::ffi::{c_char, c_double, c_int, c_longlong};
use std::ptr::null_mut;

/// Declares a kernel whose C source is read from the file `path` (OP2 programs keep each kernel
/// in `name.h`): as `op_decl_kernel` otherwise. Compiler messages name the file and lines
/// counted in it. A Fortran file (`.f90`, `.F90`, `.f`, `.F`) declares its subroutine `name`:
/// `OP2_FC` (gfortran) compiles it and the modules it uses (from its directory and
/// `OP2_FORTRAN_PATH`) and the loop's library links it with link-time optimisation; the loop's
/// arguments are checked against the dummies' declared types; `op_decl_const` values reach
/// module variables of the same name; device backends refuse the kernel.
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_IO (missing or unreadable file, or
/// not a regular file, naming it), OP2_ERR_OUT_OF_MEMORY, OP2_ERR_BAD_KERNEL (not UTF-8 text, or `name` is not defined in the file),
/// OP2_ERR_COMPILE (a Fortran file that does not compile: the compiler's messages, naming the file and line).
#[no_mangle]
pub extern "C" fn op_decl_kernel_file(path: *const c_char, name: *const c_char) -> op_kernel {
    const CALL: &str = "op_decl_kernel_file";
    boundary(CALL, null_mut(), |st| {
        let ctx = st.ctx_lazy(CALL)?;
        let ready = c_str(name, CALL, "name").and_then(|name| Ok((name, c_str(path, CALL, "path")?)));
        let (name, path) = ctx.comm.enter(CALL, ready)?;
        let id = ctx.decl_kernel_file(path, name, CALL)?;
        Ok(encode(Kind::Kernel, st.serial, id.0))
    })
}

/// Declares a temporary dat of zeros on `set` (`dim` values of `type` per element, element size
/// `size` bytes, which must agree with `type`), to be freed by `op_free_dat_temp_char`.
/// Errors: as `op_decl_dat_char`.
#[no_mangle]
pub extern "C" fn op_decl_dat_temp_char(
    set: op_set,
    dim: c_int,
    r#type: *const c_char,
    size: c_int,
    name: *const c_char,
) -> op_dat {
    const CALL: &str = "op_decl_dat_temp_char";
    boundary(CALL, null_mut(), |st| {
        st.ctx_lazy(CALL)?;
        let ready = (|| {
            let name = c_str(name, CALL, "name")?;
            let set = st.set(set, &format!("{CALL} '{name}'"), &"set")?;
            let ty = ElemType::parse(c_str(r#type, CALL, "type")?, CALL, &format!(" '{name}'"))?;
            if size as i64 != ty.size() as i64 {
                op2_bail!(
                    BadSize,
                    "{CALL} '{name}': element size {size} disagrees with type '{}' ({} bytes)",
                    ty.api_name(),
                    ty.size()
                );
            }
            Ok((name, set, ty))
        })();
        let ctx = st.ctx_lazy(CALL)?;
        let (name, set, ty) = ctx.comm.enter(CALL, ready)?;
        let id = ctx.decl_temp_dat(set, dim, ty, name, CALL)?;
        Ok(st.publish(Kind::Dat, id.0))
    })
}

/// Frees a dat declared by `op_decl_dat_temp_char`: its memory is released and its handle
/// becomes stale (any later use, including an `op_arg` built before, is OP2_ERR_INVALID_HANDLE
/// naming the freed dat); other dats are unaffected. Returns 1 on success, 0 on error.
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE (also for a dat already freed),
/// OP2_ERR_BAD_NAME (the dat is not a temporary one).
#[no_mangle]
pub extern "C" fn op_free_dat_temp_char(dat: op_dat) -> c_int {
    const CALL: &str = "op_free_dat_temp_char";
    boundary(CALL, 0, |st| {
        let d = st.dat(dat, &CALL, &"dat");
        let ctx = st.ctx(CALL)?;
        let d = ctx.comm.enter(CALL, d)?;
        ctx.free_temp_dat(d, CALL)?;
        Ok(1)
    })
}

/// Writes a dat to a binary file as OP2 does: the element count and the dim as C `int`s, then
/// the values row by row (native byte order), in the declared element order. Collective under
/// MPI. Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_IO.
#[no_mangle]
pub extern "C" fn op_print_dat_to_binfile(dat: op_dat, file: *const c_char) {
    const CALL: &str = "op_print_dat_to_binfile";
    boundary(CALL, (), |st| {
        if super::checkpoint::replaying(st, CALL) {
            return Ok(());
        }
        let ready = st.dat(dat, &CALL, &"dat").and_then(|d| Ok((d, c_str(file, CALL, "file")?)));
        let ctx = st.ctx(CALL)?;
        let (d, file) = ctx.comm.enter(CALL, ready)?;
        let bytes = if ctx.comm.distributed() {
            // Collective: written by process 0 in original order, streamed to it block by
            // block (no process holds the whole dat); its outcome is every process's.
            let r = crate::mpi::stream::print_dat(ctx, d, file, crate::mpi::stream::Format::Binary, CALL);
            return ctx.comm.agree(r);
        } else {
            ctx.sync_to_host(d)?;
            ctx.dat_binary(d)?
        };
        let r = crate::core::file::write_whole(file, bytes.as_ref())
            .map_err(|e| crate::op2_err!(Io, "{CALL} '{}': cannot write '{file}': {e}", ctx.dats[d.0 as usize].name));
        ctx.comm.agree(r)
    })
}

/// Reorders the storage of the sets linked through `base` (and, through maps, every set
/// connected to them) for locality: reverse Cuthill–McKee on the graph of `base`'s target set,
/// then each linked set sorted by the elements it reaches. Only storage changes: fetches,
/// output and `op_arg_idx` keep the declared numbering, and later declarations on these sets
/// are given in the declared numbering too. Call it after the declarations, before the first
/// loop. Under MPI with more than one process it does nothing (the local numbering is
/// op_partition's: core first, then the halos). Errors: OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_INVALID_HANDLE, OP2_ERR_BAD_LOOP (a loop has already run).
#[no_mangle]
pub extern "C" fn op_renumber(base: op_map) {
    const CALL: &str = "op_renumber";
    boundary(CALL, (), |st| {
        let m = st.map(base, &CALL, &"base map")?;
        st.ctx(CALL)?.renumber(m, CALL)
    })
}

/// Wall-clock time in seconds (since an arbitrary fixed point) in `*et`, and, when `cpu` is not
/// NULL, the process's CPU time in seconds in `*cpu`. Callable outside a session.
/// Errors: OP2_ERR_NULL_ARGUMENT (`et`).
#[no_mangle]
pub extern "C" fn op_timers(cpu: *mut c_double, et: *mut c_double) {
    const CALL: &str = "op_timers";
    boundary(CALL, (), |_| {
        if et.is_null() {
            op2_bail!(NullArgument, "{CALL}: et is NULL");
        }
        let wall =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
        // SAFETY: et is non-NULL and points at a double (op_timers' contract).
        unsafe { *et = wall };
        if !cpu.is_null() {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: ts is a valid timespec to fill.
            let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0;
            // SAFETY: cpu is non-NULL and points at a double.
            unsafe { *cpu = if ok { ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9 } else { 0.0 } };
        }
        Ok(())
    })
}

/// This process's rank in `*rank` (0 without MPI). Errors: OP2_ERR_NULL_ARGUMENT.
#[no_mangle]
pub extern "C" fn op_rank(rank: *mut c_int) {
    boundary("op_rank", (), |st| {
        if rank.is_null() {
            op2_bail!(NullArgument, "op_rank: rank is NULL");
        }
        let r = st.ctx.as_ref().map_or(0, |c| c.comm.rank());
        // SAFETY: rank is non-NULL and points at an int.
        unsafe { *rank = r };
        Ok(())
    })
}

/// The number of processes (1 without MPI).
#[no_mangle]
pub extern "C" fn op_num_ranks() -> c_int {
    boundary("op_num_ranks", 1, |st| Ok(st.ctx.as_ref().map_or(1, |c| c.comm.size())))
}

/// Waits until every process reaches this call (returns at once without MPI). Collective.
/// Errors: OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_mpi_barrier() {
    boundary("op_mpi_barrier", (), |st| {
        let ctx = st.ctx("op_mpi_barrier")?;
        // The entry's all-gather already waits for every process.
        ctx.comm.enter("op_mpi_barrier", Ok(()))
    })
}

/// The global index of this process's first element of `set` in the declared (original)
/// numbering: the sum of the block sizes the processes before it declared (0 without MPI,
/// where the process holds the whole set). Errors: OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_INVALID_HANDLE (then -1).
#[no_mangle]
pub extern "C" fn op_get_global_set_offset(set: op_set) -> c_longlong {
    const CALL: &str = "op_get_global_set_offset";
    boundary(CALL, -1, |st| {
        let s = st.set(set, &CALL, &"set")?;
        Ok(crate::mpi::dist::global_offset(st.ctx_lazy(CALL)?, s) as c_longlong)
    })
}

/// Copies every dat whose device copy is stale to the device (nothing to do on host backends,
/// where data never leaves host memory). Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_DEVICE,
/// OP2_ERR_OUT_OF_MEMORY.
#[no_mangle]
pub extern "C" fn op_upload_all() {
    boundary("op_upload_all", (), |st| {
        let ctx = st.ctx("op_upload_all")?;
        for i in 0..ctx.dats.len() {
            if !ctx.dats[i].freed {
                ctx.device_data(crate::core::DatId(i as u32))?;
            }
        }
        Ok(())
    })
}

/// Copies a dat to the device if its device copy is stale (nothing to do on host backends).
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_DEVICE, OP2_ERR_OUT_OF_MEMORY.
#[no_mangle]
pub extern "C" fn op_upload_dat(dat: op_dat) {
    boundary("op_upload_dat", (), |st| {
        let d = st.dat(dat, &"op_upload_dat", &"dat")?;
        st.ctx("op_upload_dat")?.device_data(d)
    })
}

/// Copies a dat back from the device to host memory if only the device copy is current
/// (nothing to do on host backends). Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE,
/// OP2_ERR_DEVICE.
#[no_mangle]
pub extern "C" fn op_download_dat(dat: op_dat) {
    boundary("op_download_dat", (), |st| {
        let d = st.dat(dat, &"op_download_dat", &"dat")?;
        st.ctx("op_download_dat")?.sync_to_host(d)
    })
}

/// The index base of the calling program, for error messages: 0 (C, the default) or 1
/// (Fortran: map entries, `idx` columns and element positions are then shown 1-based, e.g.
/// "use 1..2"). The Fortran module's `op_init` calls it; values op2 stores and kernels see stay
/// 0-based. Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_BAD_CONFIG for another base.
#[no_mangle]
pub extern "C" fn op_set_index_base(base: c_int) {
    boundary("op_set_index_base", (), |st| {
        let ctx = st.ctx_lazy("op_set_index_base")?;
        if base != 0 && base != 1 {
            op2_bail!(BadConfig, "op_set_index_base: base {base} (expected 0 for C or 1 for Fortran)");
        }
        ctx.index_base = base;
        Ok(())
    })
}
