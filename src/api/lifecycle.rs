//! `op_init`, `op_exit` and the questions about the session.

use super::boundary;
use crate::backend;
use crate::config::{BackendKind, Config};
use crate::context::Context;
use crate::op2_bail;
use std::ffi::{c_char, c_int, CStr};

/// Starts an op2 session. `argv` tokens of the form `KEY=value` for the configuration keys
/// (`OP2_BACKEND=threads`, `OP2_CACHE_DIR=...`, ...) override the environment; other tokens are
/// ignored, so a program can pass its own `argc`/`argv`. `argv` may be NULL when `argc` is 0.
/// `diags` is the diagnostics level, printed to stdout: 0 quiet; 1 one line naming the backend,
/// its threads or device and the JIT cache; 2 also a line per new loop shape (compiled, disk or
/// memory cache hit, and the time taken); 3 also extra argument checks on every loop call
/// (indirect OP_WRITE/OP_RW targets must be exclusive: OP2_ERR_CHECK otherwise).
///
/// Errors: OP2_ERR_ALREADY_INITIALISED, OP2_ERR_BAD_CONFIG (a configuration value that cannot be
/// used), OP2_ERR_BACKEND_UNAVAILABLE, OP2_ERR_CACHE_DIR (the JIT cache directory is not owned
/// by this user, is writable by others, or cannot be created), OP2_ERR_MPI (MPI could not be
/// initialised, or the launcher started more processes than the MPI this program is linked
/// against sees). Collective under MPI: op2 runs on `MPI_COMM_WORLD`, initialising MPI if the
/// program has not, when started by an MPI launcher (`mpiexec`), when the program initialised
/// MPI itself, or when the program links MPI itself (an MPI library among its own `DT_NEEDED`:
/// it may call MPI after `op_init`, also without a launcher, as one process); `OP2_MPI=1`
/// forces it, `OP2_MPI=0` forbids it. Otherwise op2 runs as one process without touching MPI.
/// Under MPI every process's setup is agreed: an error on one process (or `OP2_MPI_CHECK` set
/// differently) is an error on all, and MPI that op2 initialised stays initialised for the next
/// `op_init`.
#[no_mangle]
pub extern "C" fn op_init(argc: c_int, argv: *mut *mut c_char, diags: c_int) {
    boundary("op_init", (), |st| init(st, argc, argv, diags, None, "op_init"))
}

/// `op_init` and `op_mpi_init`: `fortran_comm` is the Fortran handle of the communicator to
/// run on (`op_mpi_init`), or None for `MPI_COMM_WORLD` when MPI is used (see `op_init`;
/// otherwise op2 runs as one process, MPI untouched).
pub(crate) fn init(
    st: &mut super::ApiState,
    argc: c_int,
    argv: *mut *mut c_char,
    diags: c_int,
    fortran_comm: Option<i32>,
    call: &str,
) -> crate::error::Result<()> {
    if st.ctx.is_some() {
        op2_bail!(AlreadyInitialised, "{call}: op2 is already initialised (call op_exit first)");
    }
    let mut tokens = Vec::new();
    if !argv.is_null() {
        for i in 0..argc.max(0) as usize {
            // SAFETY: argv has argc entries (C's contract for main's arguments).
            let p = unsafe { *argv.add(i) };
            if !p.is_null() {
                // SAFETY: each non-NULL argv entry is a NUL-terminated string.
                tokens.push(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
            }
        }
    }
    // The handler first: `OP2_ERROR_HANDLER=return` covers every other bad value given
    // in the same op_init.
    let env = |k: &str| std::env::var(k).ok();
    if let Some(r) = crate::config::error_handler(&env, &tokens)? {
        st.set_errors_return(r);
    }
    let token = |key: &str| {
        let prefix = format!("{key}=");
        tokens.iter().rev().find_map(|t| t.strip_prefix(prefix.as_str()).map(str::to_string)).or_else(|| env(key))
    };
    // This process's own setup; under MPI its outcome is agreed before op2 runs (below).
    let local = (|| {
        let config = Config::from_env(&tokens, diags)?;
        let mut ctx = Context::new(config)?;
        ctx.comm.check = match token("OP2_MPI_CHECK").as_deref().map(str::trim) {
            None | Some("") | Some("0") => false,
            Some("1") => true,
            Some(v) => op2_bail!(BadConfig, "{call}: OP2_MPI_CHECK='{v}': use 0 or 1"),
        };
        let aware = token("OP2_MPI_CUDA_AWARE");
        ctx.comm.cuda_aware = crate::mpi::CudaAware::parse(aware.as_deref()).ok_or_else(|| {
            crate::op2_err!(
                BadConfig,
                "{call}: OP2_MPI_CUDA_AWARE='{}': use auto (device buffers to MPI where it says it is CUDA-aware), 1 or 0",
                aware.as_deref().unwrap_or("")
            )
        })?;
        Ok(ctx)
    })();
    let mpi = match token("OP2_MPI").as_deref().map(str::trim) {
        None | Some("") | Some("auto") => None,
        Some("1") => Some(true),
        Some("0") => Some(false),
        Some(v) => op2_bail!(BadConfig, "{call}: OP2_MPI='{v}': use 0 (never initialise MPI), 1 (always) or auto"),
    };
    #[cfg(feature = "mpi")]
    let ctx = {
        use crate::mpi::transport;
        // MPI when a communicator is given, when OP2_MPI=1, and (unless OP2_MPI=0) when a
        // launcher started the program, when the program initialised MPI itself, or when it
        // links MPI itself (its own DT_NEEDED): such a program calls MPI after op_init.
        let use_mpi = fortran_comm.is_some()
            || match mpi {
                Some(on) => on,
                None => {
                    transport::launcher_size().is_some()
                        || transport::is_initialized()
                        || transport::program_links_mpi()
                }
            };
        if fortran_comm.is_some() && mpi == Some(false) && !transport::is_initialized() {
            op2_bail!(BadConfig, "{call}: OP2_MPI=0 forbids initialising MPI, and MPI is not initialised");
        }
        if use_mpi {
            let mut comm =
                crate::mpi::Comm { world: Some(transport::World::open(fortran_comm)?), ..Default::default() };
            // Every process's setup, and the same OP2_MPI_CHECK everywhere (the check is
            // itself collective), agreed in op_init's entry.
            // Device buffers to MPI: decided per process (the messages are the same either way),
            // now that MPI can answer whether it is CUDA-aware.
            let local = local.and_then(|mut ctx| {
                ctx.comm.device_direct = crate::mpi::device_direct(
                    ctx.comm.cuda_aware,
                    crate::mpi::cuda_aware(),
                    ctx.backend.can_stage_for_mpi(),
                )
                .map_err(|e| crate::error::Op2Error::new(e.code, format!("{call}: {}", e.message)))?;
                Ok(ctx)
            });
            let agreed = comm
                .enter_with(call, local.map(|ctx| {
                    let check = ctx.comm.check as u8;
                    (ctx, vec![check])
                }))
                .and_then(|(ctx, all)| {
                    if all.iter().any(|b| b.as_slice() != [ctx.comm.check as u8]) {
                        let on: Vec<String> =
                            all.iter().enumerate().filter(|(_, b)| b.as_slice() == [1]).map(|(q, _)| q.to_string()).collect();
                        op2_bail!(
                            BadConfig,
                            "{call}: OP2_MPI_CHECK differs between processes (1 on process(es) {} only): set it alike on every process",
                            on.join(", ")
                        );
                    }
                    Ok(ctx)
                });
            match agreed {
                Ok(mut ctx) => {
                    ctx.comm.world = comm.world.take();
                    ctx
                }
                Err(e) => {
                    if let Some(w) = comm.world.take() {
                        w.close_keep_mpi();
                    }
                    return Err(e);
                }
            }
        } else {
            local?
        }
    };
    #[cfg(not(feature = "mpi"))]
    let ctx = {
        if fortran_comm.is_some() || mpi == Some(true) {
            op2_bail!(BackendUnavailable, "{call}: this op2 was built without MPI (cargo feature mpi)");
        }
        local?
    };
    if ctx.config.diags >= 1 && ctx.comm.rank() == 0 {
        let line = format!("{}, {}\n", ctx.diags_init_line().trim_end(), ctx.comm.describe());
        crate::core::output::print_after_c_stdio(&line);
    }
    st.serial = st.serial.wrapping_add(1);
    st.records.end_session();
    st.const_names.clear();
    st.ctx = Some(ctx);
    Ok(())
}

/// Ends the op2 session: frees every set, map, dat, kernel and compiled loop. Handles from the
/// session become invalid; a later `op_init` starts afresh. Under MPI it is collective, and it
/// finalises MPI only if op2 initialised it (MPI cannot be initialised again in the same process,
/// so a later `op_init` under a launcher is then OP2_ERR_MPI). A checkpoint still being written
/// in the background is finished first. Errors: OP2_ERR_NOT_INITIALISED; OP2_ERR_MPI when
/// another process is at another collective call (the session stays open); OP2_ERR_CHECKPOINT
/// or OP2_ERR_IO when that last checkpoint could not be written (naming the file and why; the
/// session ends all the same, and the previous checkpoint, if any, is still at the path).
#[no_mangle]
pub extern "C" fn op_exit() {
    boundary("op_exit", (), |st| {
        // Collective under MPI: entered together (processes at other calls: OP2_ERR_MPI, and the
        // session stays open on every process).
        let ctx = st.ctx("op_exit")?;
        ctx.comm.enter("op_exit", Ok(()))?;
        let written = crate::checkpoint::finish(ctx);
        st.ctx = None;
        written
    })
}

/// 1 on the root process (rank 0 under MPI; always 1 without MPI).
#[no_mangle]
pub extern "C" fn op_is_root() -> c_int {
    boundary("op_is_root", 1, |st| Ok(st.ctx.as_ref().map_or(1, |c| (c.comm.rank() == 0) as c_int)))
}

/// The name of the running backend (`"seq"`, `"threads"`, ...), or `"none"` outside a session.
/// The string is static: do not free it.
#[no_mangle]
pub extern "C" fn op_backend_name() -> *const c_char {
    let name: &'static CStr = boundary("op_backend_name", c"none", |st| {
        Ok(match st.ctx.as_ref().map(|c| c.backend.kind()) {
            None => c"none",
            Some(BackendKind::Seq) => c"seq",
            Some(BackendKind::Threads) => c"threads",
            Some(BackendKind::OpenCl) => c"opencl",
            Some(BackendKind::Cuda) => c"cuda",
            Some(BackendKind::Check) => c"check",
        })
    });
    name.as_ptr()
}

/// 1 if the backend called `name` (`seq`, `threads`, `openmp`, `opencl`, `cuda`, `check`) can
/// run in this build on this machine, else 0. Callable outside a session.
#[no_mangle]
pub extern "C" fn op_backend_available(name: *const c_char) -> c_int {
    boundary("op_backend_available", 0, |_| {
        let name = super::c_str(name, "op_backend_available", "name")?;
        Ok(BackendKind::parse(name).is_some_and(backend::available) as c_int)
    })
}

/// `sizeof(op_arg)`, for bindings (Fortran) that hold `op_arg` as opaque storage.
#[no_mangle]
pub extern "C" fn op_arg_size() -> c_int {
    std::mem::size_of::<super::arg::op_arg>() as c_int
}

/// Prints the session's sets, maps, dats, constants and JIT statistics to stdout; under MPI also
/// the number of processes and whether the MPI library is CUDA-aware (`MPIX_Query_cuda_support`,
/// looked up at run time).
/// Errors: OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_diagnostic_output() {
    boundary("op_diagnostic_output", (), |st| {
        let text = st.ctx("op_diagnostic_output")?.diagnostics();
        print_after_c_stdio(&text);
        Ok(())
    })
}

/// Prints, per loop: calls, total and mean time, GB/s achieved from the bytes its arguments move
/// (direct data, indirect data once per distinct target, maps), JIT time, and the fraction of
/// stream bandwidth when `OP2_STREAM_GBS` gives it. Under MPI it is collective and process 0
/// prints, per loop, the maximum and mean time over the processes and the halo exchanges' time,
/// bytes and messages per call (means over processes). On `threads` it ends with the blocks each
/// thread ran (under MPI one line per process), which shows every thread took part.
/// Errors: OP2_ERR_NOT_INITIALISED.
#[no_mangle]
pub extern "C" fn op_timing_output() {
    boundary("op_timing_output", (), |st| {
        let ctx = st.ctx("op_timing_output")?;
        ctx.comm.enter("op_timing_output", Ok(()))?;
        if let Some(t) = timing_text(ctx)? {
            print_after_c_stdio(&t);
        }
        Ok(())
    })
}

/// What `op_timing_output` prints (after the call's entry: collective under MPI, where only
/// process 0 gets the text).
pub(crate) fn timing_text(ctx: &Context) -> crate::error::Result<Option<String>> {
    if ctx.comm.distributed() {
        return crate::mpi::dist::timing_table(ctx);
    }
    let stream = std::env::var("OP2_STREAM_GBS").ok().and_then(|s| s.parse::<f64>().ok()).filter(|v| *v > 0.0);
    let mut table = ctx.timings.table(ctx.backend.kind().name(), stream);
    if let Some(w) = ctx.backend.work_report() {
        table.push_str(&format!("op2 {} backend: {w}\n", ctx.backend.kind().name()));
    }
    Ok(Some(table))
}

/// Prints after flushing C's stdio buffers, so our output lands after what the C program
/// printed before the call, as a C user expects.
fn print_after_c_stdio(text: &str) {
    use std::io::Write;
    // SAFETY: fflush(NULL) flushes all C output streams; no preconditions.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
