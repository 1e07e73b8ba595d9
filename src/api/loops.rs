//! `op_par_loop`.

use super::handle::{op_kernel, op_set};
use super::{boundary, c_str};
use crate::arg::RawArg;
use crate::codegen::fptr::{self, FptrParam};
use crate::core::{ElemType, KernelId, SetId};
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
        let raw = decode_args(st, name, nargs, args)?;
        let ctx = st.ctx_lazy(CALL)?;
        if ctx.backend.is_device() && crate::jit::fortran::is_stand_in(&ctx.kernels[k.0 as usize].source) {
            op2_bail!(
                BackendUnavailable,
                "{CALL} '{name}': kernel '{}' is a Fortran kernel file, and backend {} runs loops on a device (op2 has no Fortran device compiler); use seq, threads or check",
                ctx.kernels[k.0 as usize].name,
                ctx.backend.kind().name()
            );
        }
        run(ctx, k, name, s, &raw)
    })
}

/// Applies a compiled function to every element of `set`, as `op_par_loop` does with a kernel:
/// `fn` is called once per element with one pointer per argument in `args[0..nargs]` (in order,
/// exactly what a C kernel would get for it), so a Fortran subroutine with explicit-shape or
/// scalar dummies (passed by reference) can be given as `c_funloc(sub)`. This is the
/// per-element tier of OP2's Fortran `op_par_loop_N`. An `op_arg_idx` argument gets the
/// element's index in the caller's index base (`op_set_index_base`: 1-based after the Fortran
/// module's op_init), through a private copy. Plans, colouring, threads, lazy evaluation and
/// MPI are those of every loop: a loop of each shape (argument kinds and types) is generated
/// and compiled once, whatever the function, whose address is run-time data. The function must
/// be safe to call from several threads at once on `threads`. `name` names the loop in timings
/// and messages; NULL derives one from the function's symbol, exported or in its file's symbol
/// table (the procedure's own name for gfortran's module and internal procedures), or
/// `fortran_kernel_N` (N counting distinct functions) when it has none. A module procedure
/// whose module's source op2 finds (beside the executable or on `OP2_FORTRAN_PATH`) is compiled
/// into the loop instead (the JIT tier, as `op_decl_kernel_file` with that file);
/// `OP2_DIAGNOSTICS=1` prints each function's tier and why.
/// Errors: as `op_par_loop`, and OP2_ERR_NULL_ARGUMENT (`fn` NULL), OP2_ERR_BAD_LOOP (a matrix
/// argument), OP2_ERR_BACKEND_UNAVAILABLE (a device backend: compiled host code cannot run
/// there). Collective under MPI.
#[no_mangle]
pub extern "C" fn op_par_loop_fptr(
    r#fn: Option<unsafe extern "C" fn()>,
    name: *const c_char,
    set: op_set,
    nargs: c_int,
    args: *const op_arg,
) {
    const CALL: &str = "op_par_loop_fptr";
    boundary(CALL, (), |st| {
        st.ctx_lazy(CALL)?;
        let Some(f) = r#fn else {
            op2_bail!(NullArgument, "{CALL}: fn is NULL (give the kernel's address, e.g. c_funloc(kernel))");
        };
        let addr = f as usize as u64;
        let i = fn_index(st, addr);
        let derived = st.fns[i].name.clone();
        let name = if name.is_null() { derived } else { c_str(name, CALL, "name")?.to_string() };
        let s = st.set(set, &super::LoopName(&name), &"set")?;
        let mut raw = decode_args(st, &name, nargs, args)?;
        let serial = st.serial;
        let ctx = st.ctx_lazy(CALL)?;
        if ctx.backend.is_device() {
            op2_bail!(
                BackendUnavailable,
                "{CALL} '{name}': backend {} runs loops on a device, and a compiled host function cannot run there (op2 has no Fortran device compiler); use seq, threads or check",
                ctx.backend.kind().name()
            );
        }
        let mut params = Vec::with_capacity(raw.len());
        for (i, r) in raw.iter().enumerate() {
            params.push(match *r {
                RawArg::Dat { dat, idx, .. } => {
                    let ty = ctx.dats[dat.0 as usize].ty;
                    if idx < -1 {
                        FptrParam::Vector(ty)
                    } else {
                        FptrParam::Data(ty)
                    }
                }
                RawArg::Gbl { ty, .. } | RawArg::Info { ty, .. } => FptrParam::Data(ty),
                RawArg::Idx { .. } => FptrParam::Idx,
                RawArg::Mat { .. } => op2_bail!(
                    BadLoop,
                    "{CALL} '{name}': arg {i} is a matrix argument, which a compiled function cannot take (use op_par_loop with a C kernel)"
                ),
            });
        }
        // The tier: the kernel's Fortran source compiled into the loop, where op2 finds it
        // (chosen once per function and op_init).
        if !matches!(&st.fns[i].tier, Some((sr, _)) if *sr == serial) {
            let symbol = st.fns[i].symbol.clone();
            let ctx = st.ctx_lazy(CALL)?;
            let t = choose_tier(ctx, symbol.as_deref(), &name);
            if ctx.config.diags >= 1 && ctx.comm.rank() == 0 {
                let line = match &t {
                    Tier::Jit(_, why) | Tier::Element(why) => {
                        let which = if matches!(t, Tier::Jit(..)) { "JIT tier" } else { "call-per-element tier" };
                        format!("op2: Fortran kernel '{name}': {which}: {why}\n")
                    }
                };
                crate::timing::print_after_c_stdio(&line);
            }
            st.fns[i].tier = Some((serial, t));
        }
        let jit = match &st.fns[i].tier {
            Some((_, Tier::Jit(k, _))) => Some(*k),
            _ => None,
        };
        let vector = params.iter().any(|p| matches!(p, FptrParam::Vector(_)));
        let idx: Vec<usize> =
            params.iter().enumerate().filter(|(_, p)| **p == FptrParam::Idx).map(|(i, _)| i).collect();
        if let (Some(k), false) = (jit, vector) {
            if idx.is_empty() {
                return run(st.ctx_lazy(CALL)?, k, &name, s, &raw);
            }
            // op_arg_idx: the subroutine gets the index in the caller's base, through an adapter
            // made once per function, positions, base and op_init.
            let base = st.ctx_lazy(CALL)?.index_base;
            let known = match &st.fns[i].adapter {
                Some((sr, b, p, a)) if *sr == serial && *b == base && *p == idx => Some(*a),
                _ => None,
            };
            let adapter = match known {
                Some(a) => Some(a),
                None => {
                    let ctx = st.ctx_lazy(CALL)?;
                    let kd = &ctx.kernels[k.0 as usize];
                    match crate::jit::fortran::index_adapter(&kd.source, &kd.name, &idx, base) {
                        Some((aname, source)) => {
                            let a = ctx.decl_kernel(&source, &aname)?;
                            // The subroutine's module variables take constants as before.
                            let vars = ctx.kernels[k.0 as usize].fortran_vars.clone();
                            ctx.kernels[a.0 as usize].fortran_vars = vars;
                            st.fns[i].adapter = Some((serial, base, idx.clone(), a));
                            Some(a)
                        }
                        None => None,
                    }
                }
            };
            if let Some(a) = adapter {
                return run(st.ctx_lazy(CALL)?, a, &name, s, &raw);
            }
        }
        // The stand-in kernel for this argument shape, made once per function, shape and op_init
        // (not on every call: generating and looking up its source is per shape work).
        let base = st.ctx_lazy(CALL)?.index_base;
        let k = match &st.fns[i].stand_in {
            Some((sr, b, p, k)) if *sr == serial && *b == base && *p == params => *k,
            _ => {
                let (kname, source) = fptr::kernel(&params, base);
                let k = st.ctx_lazy(CALL)?.decl_kernel(&source, &kname)?;
                st.fns[i].stand_in = Some((serial, base, params, k));
                k
            }
        };
        let ctx = st.ctx_lazy(CALL)?;
        // The hidden READ global: a queued loop copies it at this call (`hold_globals`), so a
        // local lives long enough.
        let mut slot: u64 = addr;
        raw.push(RawArg::Gbl {
            ptr: &mut slot as *mut u64 as *mut u8,
            dim: 1,
            ty: ElemType::Ull,
            acc: crate::arg::Access::Read,
        });
        run(ctx, k, &name, s, &raw)
    })
}

/// What `op_par_loop_fptr` knows of one function address: the loop name derived for it, its
/// symbol, and (per `op_init`, by serial) the tier its loops take.
pub(crate) struct FnInfo {
    addr: u64,
    name: String,
    symbol: Option<String>,
    tier: Option<(u32, Tier)>,
    /// The call-per-element stand-in kernel last used: (op_init serial, index base, argument
    /// shape, kernel).
    stand_in: Option<(u32, i32, Vec<FptrParam>, KernelId)>,
    /// The JIT tier's kernel for loops with `op_arg_idx` arguments (an adapter adding the index
    /// base) last used: (op_init serial, index base, their positions, kernel).
    adapter: Option<(u32, i32, Vec<usize>, KernelId)>,
}

/// How a compiled Fortran kernel runs, and why.
#[derive(Clone)]
pub(crate) enum Tier {
    /// Its source is compiled into the loop (the kernel declared from it).
    Jit(KernelId, String),
    /// Called through its address, once per element.
    Element(String),
}

/// The entry of `addr` in `st.fns` (made on first use). Bounded by the program's number of
/// kernels.
fn fn_index(st: &mut super::ApiState, addr: u64) -> usize {
    if let Some(i) = st.fns.iter().position(|f| f.addr == addr) {
        return i;
    }
    let symbol = symbol_of(addr);
    let name = match symbol.as_deref().map(crate::io::elf::procedure_name) {
        Some(s) if crate::core::is_c_identifier(&s) => s,
        _ => format!("fortran_kernel_{}", st.fns.len() + 1),
    };
    st.fns.push(FnInfo { addr, name, symbol, tier: None, stand_in: None, adapter: None });
    st.fns.len() - 1
}

/// The tier of a kernel whose symbol is `symbol`: the JIT tier when it is a module procedure
/// (`__<module>_MOD_<name>`) whose module's source is beside the executable or on
/// `OP2_FORTRAN_PATH` and compiles; the call-per-element tier otherwise, saying why.
fn choose_tier(ctx: &mut crate::context::Context, symbol: Option<&str>, loop_name: &str) -> Tier {
    let Some(sym) = symbol else {
        return Tier::Element("its address has no symbol".to_string());
    };
    let Some((module, proc)) = sym.strip_prefix("__").and_then(|r| r.split_once("_MOD_")) else {
        return Tier::Element(format!("'{sym}' is not a module procedure (__<module>_MOD_<name>)"));
    };
    let mut dirs: Vec<std::path::PathBuf> = Vec::new();
    if let Some(d) = std::fs::read_link("/proc/self/exe").ok().and_then(|p| p.parent().map(|d| d.to_path_buf())) {
        dirs.push(d);
    }
    dirs.extend(ctx.config.fortran_path.iter().cloned());
    let Some(file) = crate::jit::fortran::find_module(module, &dirs) else {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Tier::Element(format!(
            "no source of module '{module}' beside the executable or on OP2_FORTRAN_PATH (searched {})",
            shown.join(", ")
        ));
    };
    let path = file.display().to_string();
    match ctx.decl_kernel_file(&path, proc, &format!("op_par_loop_fptr '{loop_name}'")) {
        Ok(k) => Tier::Jit(k, format!("compiled from '{path}'")),
        Err(e) => Tier::Element(format!("its source '{path}' was found but not taken: {}", e.message)),
    }
}

/// The symbol of the function at `addr`: exported, or from its object file's symbol table (or
/// the executable's).
fn symbol_of(addr: u64) -> Option<String> {
    // SAFETY: dladdr only reads the address and fills `info`; `dli_sname` and `dli_fname`
    // (when not NULL) point to NUL-terminated strings of the dynamic linker.
    let (exported, file, base) = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr as usize as *const libc::c_void, &mut info) == 0 {
            (None, None, 0)
        } else {
            let text = |p: *const c_char| {
                if p.is_null() {
                    None
                } else {
                    std::ffi::CStr::from_ptr(p).to_str().ok().map(str::to_string)
                }
            };
            let exact = info.dli_saddr as usize as u64 == addr;
            (if exact { text(info.dli_sname) } else { None }, text(info.dli_fname), info.dli_fbase as usize as u64)
        }
    };
    exported.or_else(|| {
        let rel = addr.wrapping_sub(base);
        let from_file = file.filter(|f| !f.is_empty()).and_then(|f| crate::io::elf::function_at(&f, rel, addr));
        from_file.or_else(|| crate::io::elf::function_at("/proc/self/exe", rel, addr))
    })
}

/// `op_par_loop`'s arguments, decoded and checked (`nargs` of them at `args`).
fn decode_args(
    st: &mut super::ApiState,
    name: &str,
    nargs: c_int,
    args: *const op_arg,
) -> crate::error::Result<Vec<RawArg>> {
    const CALL: &str = "op_par_loop";
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
    Ok(raw)
}

/// Runs a bound loop, marking the time inside it (`IN_LOOP`).
fn run(
    ctx: &mut crate::context::Context,
    k: KernelId,
    name: &str,
    s: SetId,
    raw: &[RawArg],
) -> crate::error::Result<()> {
    super::IN_LOOP.store(true, std::sync::atomic::Ordering::Release);
    let r = exec_chain::par_loop(ctx, k, name, s, raw);
    super::IN_LOOP.store(false, std::sync::atomic::Ordering::Release);
    r
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
