//! `op_par_loop`.

use super::handle::{op_kernel, op_set};
use super::{boundary, c_str};
use crate::arg::RawArg;
use crate::backend::host::codegen::fptr::{self, FptrParam};
use crate::core::{ElemType, KernelId, SetId};
use crate::exec::chain;
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
/// whose module's source op2 finds (beside the executable, on `OP2_FORTRAN_PATH`, or beside a
/// Fortran source the program's debug information names) is compiled
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
        let name = if name.is_null() { None } else { Some(c_str(name, CALL, "name")?) };
        compiled_fn_loop(st, CALL, r#fn, name, Lang::Fortran, set, nargs, args)
    })
}

/// OP2's `op_par_loop(kernel, "name", set, args...)` with the kernel as a C or C++ function:
/// what the `op_par_loop` of `op_seq.h` calls (C and C++ programs written for OP2 build
/// unchanged). `fn` is the kernel's address, `kernel` its name as written at the call (the
/// macro's `#kernel`; NULL: from its symbol), `file` the calling source (`__FILE__`; may be
/// NULL). Two tiers run such a loop. The JIT tier, where op2 finds the kernel's header
/// `<kernel>.h` (OP2's convention) in the calling source's directory (as given, or relative to
/// the current directory, then to the executable's) or a directory of `OP2_KERNEL_PATH`, and
/// op2's compiler takes it: the loop is op2's generated code with the kernel inlined, on every
/// backend, exactly as with `op_decl_kernel_file` (constants declared by address with OP2's
/// three-argument `op_decl_const` are visible under their variables' names). Otherwise (no
/// header, a header that does not define the function, or one that does not compile on its
/// own, e.g. using a helper from another header or a global not declared constant) the
/// call-per-element tier: `fn` is called once per element with one pointer per argument, as
/// by `op_par_loop_fptr`, on host backends only. `OP2_DIAGNOSTICS=1` prints each kernel's tier
/// and why, once per kernel and `op_init`.
/// Errors: as `op_par_loop_fptr`; a device backend with a kernel on the call-per-element tier
/// is OP2_ERR_BACKEND_UNAVAILABLE, saying why the JIT tier was not taken. Collective under MPI.
#[no_mangle]
pub extern "C" fn op_par_loop_fn(
    r#fn: Option<unsafe extern "C" fn()>,
    kernel: *const c_char,
    file: *const c_char,
    name: *const c_char,
    set: op_set,
    nargs: c_int,
    args: *const op_arg,
) {
    // Messages name the call as the program wrote it (op_seq.h's op_par_loop).
    const CALL: &str = "op_par_loop";
    boundary(CALL, (), |st| {
        let name = if name.is_null() { None } else { Some(c_str(name, CALL, "name")?) };
        let kernel = if kernel.is_null() { None } else { Some(c_str(kernel, CALL, "kernel")?.to_string()) };
        let file = if file.is_null() { None } else { Some(c_str(file, CALL, "file")?.to_string()) };
        compiled_fn_loop(st, CALL, r#fn, name, Lang::C { kernel, file }, set, nargs, args)
    })
}

/// The language of a compiled kernel, and where a C kernel's header may be.
#[derive(Clone)]
enum Lang {
    Fortran,
    C { kernel: Option<String>, file: Option<String> },
}

/// `op_par_loop_fptr` and `op_par_loop_fn`: a loop whose kernel is a compiled function.
#[allow(clippy::too_many_arguments)]
fn compiled_fn_loop(
    st: &mut super::ApiState,
    call: &str,
    r#fn: Option<unsafe extern "C" fn()>,
    name: Option<&str>,
    lang: Lang,
    set: op_set,
    nargs: c_int,
    args: *const op_arg,
) -> crate::error::Result<()> {
    st.ctx_lazy(call)?;
    let Some(f) = r#fn else {
        op2_bail!(NullArgument, "{call}: fn is NULL (give the kernel's address, e.g. c_funloc(kernel))");
    };
    let addr = f as usize as u64;
    let i = fn_index(st, addr, &lang);
    let derived = st.fns[i].name.clone();
    let name = name.map_or(derived, str::to_string);
    let s = st.set(set, &super::LoopName(&name), &"set")?;
    let raw = decode_args(st, &name, nargs, args)?;
    let serial = st.serial;
    let mut params = Vec::with_capacity(raw.len());
    {
        let ctx = st.ctx_lazy(call)?;
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
                    "{call} '{name}': arg {i} is a matrix argument, which a compiled function cannot take (use op_par_loop with a C kernel)"
                ),
            });
        }
    }
    // The tier: the kernel's source compiled into the loop, where op2 finds it (chosen once
    // per function and op_init; a C kernel's is confirmed by its first loop's compilation).
    if !matches!(&st.fns[i].tier, Some((sr, _)) if *sr == serial) {
        let (symbol, addr) = (st.fns[i].symbol.clone(), st.fns[i].addr);
        st.ctx_lazy(call)?;
        let (Some(ctx), units) = (st.ctx.as_mut(), &mut st.fortran_units) else {
            op2_bail!(Internal, "{call}: op2 is not initialised");
        };
        let t = match &lang {
            Lang::Fortran => choose_tier(ctx, units, symbol.as_deref(), addr, &name),
            Lang::C { kernel, file } => choose_c_tier(ctx, kernel.as_deref(), symbol.as_deref(), file.as_deref()),
        };
        let confirmed = matches!(lang, Lang::Fortran) || !matches!(t, Tier::Jit(..));
        st.fns[i].tier = Some((serial, t));
        if confirmed {
            say_tier(st, i, &name, &lang)?;
        } else {
            // A C kernel's header compiles (or not) with the loop: its first loop says.
            let Some((_, Tier::Jit(k, _))) = st.fns[i].tier.clone() else {
                op2_bail!(Internal, "{call} '{name}': tier not set");
            };
            let ctx = st.ctx_lazy(call)?;
            let device = ctx.backend.is_device();
            match run(ctx, k, &name, s, &raw) {
                // A header that does not compile or link on its own (a helper from another
                // header, a global not declared constant): the function itself, per element.
                Err(e)
                    if matches!(e.code, crate::error::ErrorCode::Compile | crate::error::ErrorCode::Load)
                        && !device =>
                {
                    let first = e.message.lines().next().unwrap_or("").to_string();
                    let why = match &st.fns[i].tier {
                        Some((_, Tier::Jit(_, why))) => why.replace("compiled from", "its header"),
                        _ => String::new(),
                    };
                    st.fns[i].tier = Some((
                        serial,
                        Tier::Element(format!("{why} does not build in op2's generated loop ({first})")),
                    ));
                    say_tier(st, i, &name, &lang)?;
                }
                r => {
                    say_tier(st, i, &name, &lang)?;
                    return r;
                }
            }
        }
    }
    // Per call: the tier's kernel only (its reason is a String, read on the error path alone).
    let jit = match &st.fns[i].tier {
        Some((_, Tier::Jit(k, _))) => Some(*k),
        _ => None,
    };
    // A C kernel on the JIT tier takes its arguments as op2's own kernels do (indices in the
    // caller's base), on every backend: nothing more to work out per call.
    if let (Lang::C { .. }, Some(k)) = (&lang, jit) {
        return run(st.ctx_lazy(call)?, k, &name, s, &raw);
    }
    if st.ctx_lazy(call)?.backend.is_device() {
        let (what, why) = match (&lang, &st.fns[i].tier) {
            (Lang::C { .. }, Some((_, Tier::Element(why)))) => ("C kernel", why.clone()),
            _ => ("compiled function", "op2 has no Fortran device compiler".to_string()),
        };
        op2_bail!(
            BackendUnavailable,
            "{call} '{name}': backend {} runs loops on a device, and a {what} called per element cannot run there ({why}); use seq, threads or check",
            st.ctx_lazy(call)?.backend.kind().name()
        );
    }
    let vector = params.iter().any(|p| matches!(p, FptrParam::Vector(_)));
    let idx: Vec<usize> = params.iter().enumerate().filter(|(_, p)| **p == FptrParam::Idx).map(|(i, _)| i).collect();
    if let (Some(k), true) = (jit, idx.is_empty() && !vector) {
        return run(st.ctx_lazy(call)?, k, &name, s, &raw);
    }
    if let (Some(k), false) = (jit, vector) {
        // op_arg_idx: the Fortran subroutine gets the index in the caller's base, through an
        // adapter made once per function, positions, base and op_init.
        let base = st.ctx_lazy(call)?.index_base;
        let known = match &st.fns[i].adapter {
            Some((sr, b, p, a)) if *sr == serial && *b == base && *p == idx => Some(*a),
            _ => None,
        };
        let adapter = match known {
            Some(a) => Some(a),
            None => {
                let ctx = st.ctx_lazy(call)?;
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
            return run(st.ctx_lazy(call)?, a, &name, s, &raw);
        }
    }
    element_loop(st, call, i, addr, &name, s, raw, params)
}

/// The call-per-element tier: the stand-in kernel for this argument shape (made once per
/// function, shape and op_init: generating and looking up its source is per shape work) calls
/// the function at `addr`.
#[allow(clippy::too_many_arguments)]
fn element_loop(
    st: &mut super::ApiState,
    call: &str,
    i: usize,
    addr: u64,
    name: &str,
    s: SetId,
    mut raw: Vec<RawArg>,
    params: Vec<FptrParam>,
) -> crate::error::Result<()> {
    let serial = st.serial;
    let base = st.ctx_lazy(call)?.index_base;
    let k = match &st.fns[i].stand_in {
        Some((sr, b, p, k)) if *sr == serial && *b == base && *p == params => *k,
        _ => {
            let (kname, source) = fptr::kernel(&params, base);
            let k = st.ctx_lazy(call)?.decl_kernel(&source, &kname)?;
            st.fns[i].stand_in = Some((serial, base, params, k));
            k
        }
    };
    let ctx = st.ctx_lazy(call)?;
    // The hidden READ global: a queued loop copies it at this call (`hold_globals`), so a
    // local lives long enough.
    let mut slot: u64 = addr;
    raw.push(RawArg::Gbl {
        ptr: &mut slot as *mut u64 as *mut u8,
        dim: 1,
        ty: ElemType::Ull,
        acc: crate::arg::Access::Read,
    });
    run(ctx, k, name, s, &raw)
}

/// Prints (OP2_DIAGNOSTICS >= 1, rank 0) the tier of function `i`, once per op_init.
fn say_tier(st: &mut super::ApiState, i: usize, name: &str, lang: &Lang) -> crate::error::Result<()> {
    let t = st.fns[i].tier.clone();
    let ctx = st.ctx_lazy("op_par_loop")?;
    if ctx.config.diags >= 1 && ctx.comm.rank() == 0 {
        if let Some((_, t)) = t {
            let (which, why) = match &t {
                Tier::Jit(_, why) => ("JIT tier", why),
                Tier::Element(why) => ("call-per-element tier", why),
            };
            let lang = match lang {
                Lang::Fortran => "Fortran",
                Lang::C { .. } => "C",
            };
            crate::core::output::print_after_c_stdio(&format!("op2: {lang} kernel '{name}': {which}: {why}\n"));
        }
    }
    Ok(())
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
fn fn_index(st: &mut super::ApiState, addr: u64, lang: &Lang) -> usize {
    if let Some(i) = st.fns.iter().position(|f| f.addr == addr) {
        return i;
    }
    // A C kernel named at the call needs no symbol (reading the symbol table is per kernel work).
    let named_c = matches!(lang, Lang::C { kernel: Some(k), .. } if crate::core::is_c_identifier(k));
    let symbol = if named_c { None } else { symbol_of(addr) };
    let name = match lang {
        Lang::Fortran => match symbol.as_deref().map(crate::io::elf::procedure_name) {
            Some(s) if crate::core::is_c_identifier(&s) => s,
            _ => format!("fortran_kernel_{}", st.fns.len() + 1),
        },
        Lang::C { kernel, .. } => match kernel.clone().filter(|k| crate::core::is_c_identifier(k)) {
            Some(k) => k,
            None => match symbol.as_deref().and_then(crate::io::elf::c_function_name) {
                Some(s) => s,
                None => format!("c_kernel_{}", st.fns.len() + 1),
            },
        },
    };
    st.fns.push(FnInfo { addr, name, symbol, tier: None, stand_in: None, adapter: None });
    st.fns.len() - 1
}

/// The tier of a kernel whose symbol is `symbol` (at `addr`): the JIT tier when it is a module
/// procedure (`__<module>_MOD_<name>`) whose module's source is beside the executable, on
/// `OP2_FORTRAN_PATH`, or where the debug information of the object holding the kernel (else
/// the executable) says a Fortran unit was compiled from (OP2's builds use `-g`, so this finds
/// the sources of a program whose executable was moved), and compiles; the call-per-element
/// tier otherwise, saying why.
fn choose_tier(
    ctx: &mut crate::context::Context,
    units: &mut FortranUnits,
    symbol: Option<&str>,
    addr: u64,
    loop_name: &str,
) -> Tier {
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
    let mut how = "";
    let found = crate::jit::fortran::find_module(module, &dirs).or_else(|| {
        how = " (found through the program's debug information)";
        crate::jit::fortran::find_module(module, &fortran_unit_dirs(units, addr))
    });
    let Some(file) = found else {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Tier::Element(format!(
            "no source of module '{module}' beside the executable, on OP2_FORTRAN_PATH or among the Fortran sources its debug information names (searched {})",
            shown.join(", ")
        ));
    };
    let path = file.display().to_string();
    match ctx.decl_kernel_file(&path, proc, &format!("op_par_loop_fptr '{loop_name}'")) {
        Ok(k) => Tier::Jit(k, format!("compiled from '{path}'{how}")),
        Err(e) => Tier::Element(format!("its source '{path}' was found but not taken: {}", e.message)),
    }
}

/// The directories of the Fortran compilation units of each object file whose debug
/// information was read (by canonical path), for the process's lifetime: read once per object,
/// however many kernels it holds.
pub(crate) type FortranUnits = Vec<(std::path::PathBuf, Vec<std::path::PathBuf>)>;

/// The directories of the Fortran units of the object holding `addr`, then of the executable
/// (`FortranUnits` caches them).
fn fortran_unit_dirs(units: &mut FortranUnits, addr: u64) -> Vec<std::path::PathBuf> {
    let object = crate::io::elf::loaded_object(addr).map(|o| o.0).filter(|f| !f.is_empty());
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for o in object.iter().map(String::as_str).chain(["/proc/self/exe"]) {
        let Ok(path) = std::fs::canonicalize(o) else { continue };
        let k = match units.iter().position(|(p, _)| *p == path) {
            Some(k) => k,
            None => {
                let mut dirs: Vec<std::path::PathBuf> = Vec::new();
                for u in crate::io::dwarf::unit_sources(&path.display().to_string()) {
                    let fortran = crate::jit::fortran::is_fortran_file(&u.to_string_lossy());
                    if let Some(d) = u.parent().filter(|d| fortran && !dirs.iter().any(|x| x == d)) {
                        dirs.push(d.to_path_buf());
                    }
                }
                units.push((path, dirs));
                units.len() - 1
            }
        };
        for d in &units[k].1 {
            if !out.contains(d) {
                out.push(d.clone());
            }
        }
    }
    out
}

/// The tier of a C kernel named `kernel` (as written at the call; else from its `symbol`),
/// called from source `file`: the JIT tier when `<kernel>.h` is in the calling source's
/// directory (as given; relative to the current directory, then to the executable's) or on
/// `OP2_KERNEL_PATH`, and defines the function (its compilation, at the first loop, confirms
/// it); the call-per-element tier otherwise, saying why. The processes agree (the header found
/// on every process, or the call-per-element tier on all).
fn choose_c_tier(
    ctx: &mut crate::context::Context,
    kernel: Option<&str>,
    symbol: Option<&str>,
    file: Option<&str>,
) -> Tier {
    let name = kernel
        .filter(|k| crate::core::is_c_identifier(k))
        .map(str::to_string)
        .or_else(|| symbol.and_then(crate::io::elf::c_function_name));
    let Some(name) = name else {
        return Tier::Element("its name is unknown (no name at the call and no symbol at its address)".to_string());
    };
    let dirs = header_dirs(file, &ctx.config.kernel_path);
    let header = format!("{name}.h");
    let found = dirs.iter().map(|d| d.join(&header)).find(|p| p.is_file());
    let found = found.ok_or_else(|| {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        crate::op2_err!(
            Io,
            "no header '{header}' in the calling source's directory or on OP2_KERNEL_PATH (searched {})",
            shown.join(", ")
        )
    });
    let path = match ctx.comm.agree(found) {
        Ok(p) => p.display().to_string(),
        Err(e) => return Tier::Element(e.message),
    };
    match ctx.decl_kernel_file(&path, &name, &format!("op_par_loop '{name}'")) {
        Ok(k) => Tier::Jit(k, format!("compiled from '{path}'")),
        Err(e) => Tier::Element(format!("its header '{path}' was found but not taken: {}", e.message)),
    }
}

/// Where a kernel header called from source `file` may be, in order: the source's directory
/// (absolute as given; a relative one against the current directory, then the executable's),
/// then `kernel_path`. Without a file: the current directory and the executable's.
fn header_dirs(file: Option<&str>, kernel_path: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    use std::path::{Path, PathBuf};
    let src_dir: PathBuf = file.and_then(|f| Path::new(f).parent()).map(Path::to_path_buf).unwrap_or_default();
    let mut dirs: Vec<PathBuf> = Vec::new();
    if src_dir.is_absolute() {
        dirs.push(src_dir);
    } else {
        if let Ok(cwd) = std::env::current_dir() {
            dirs.push(cwd.join(&src_dir));
        }
        if let Some(exe_dir) = std::fs::read_link("/proc/self/exe").ok().and_then(|p| p.parent().map(Path::to_path_buf))
        {
            dirs.push(exe_dir.join(&src_dir));
        }
    }
    dirs.extend(kernel_path.iter().cloned());
    let mut out: Vec<PathBuf> = Vec::with_capacity(dirs.len());
    for d in dirs {
        let d = PathBuf::from(d.to_string_lossy().replace("/./", "/").trim_end_matches("/."));
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// The symbol of the function at `addr`: exported, or from its object file's symbol table (or
/// the executable's).
fn symbol_of(addr: u64) -> Option<String> {
    let exported = crate::io::elf::loaded_object(addr).and_then(|(_, _, e)| e);
    exported.or_else(|| crate::io::elf::symbol_near(addr, crate::io::elf::function_at))
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
    let r = chain::par_loop(ctx, k, name, s, raw);
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
