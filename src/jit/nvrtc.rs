//! NVRTC, CUDA's run-time compiler, loaded at run time: compiles generated CUDA C++ to a CUBIN
//! for one GPU architecture (`sm_XY`) or to PTX (`compute_XY`). Used by the `cuda` backend and
//! by whatever compiles CUDA code ahead of time.
//!
//! op2 binds the ten NVRTC functions it calls itself (with `dlopen`/`dlsym`) instead of through
//! cudarc: cudarc's loader resolves every symbol of the CUDA version it was built for and panics
//! on the first one missing, and NVRTC 13 dropped `nvrtcGetNVVM` (CUDA 12's), so on the first
//! GPU machine that ran op2 (driver 580, CUDA 13.0) every cuda loop failed with that panic. The
//! functions bound here exist, with these signatures, in every NVRTC from 11.2 to 13.

use super::cache::{DiskCache, Lookup, SCRATCH_LIB};
use crate::error::{ErrorCode, Op2Error, Result};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

/// The library names tried, newest first.
const NAMES: [&str; 3] = ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"];

/// Options every compile gets besides the architecture: the kernel and its helpers are device
/// functions (`-default-device`); no fused multiply-add, so direct loops give the bits `seq`
/// gives and validation can compare them exactly.
pub const OPTIONS: [&str; 3] = ["-default-device", "--std=c++17", "--fmad=false"];

type Prog = *mut c_void;
type Status = c_int;

/// The NVRTC entry points op2 calls, resolved once from the library found.
struct Api {
    version: (i32, i32),
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
    create: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    compile: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> Status,
    destroy: unsafe extern "C" fn(*mut Prog) -> Status,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> Status,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> Status,
    ptx_size: unsafe extern "C" fn(Prog, *mut usize) -> Status,
    ptx: unsafe extern "C" fn(Prog, *mut c_char) -> Status,
    cubin_size: unsafe extern "C" fn(Prog, *mut usize) -> Status,
    cubin: unsafe extern "C" fn(Prog, *mut c_char) -> Status,
    /// Keeps the function pointers valid for the life of the process.
    _lib: libloading::Library,
}

/// Resolves `name` in `lib` as a function of type `T` (`T` must be the symbol's C signature).
unsafe fn sym<T: Copy>(lib: &libloading::Library, path: &str, name: &str) -> std::result::Result<T, String> {
    let mut c = name.as_bytes().to_vec();
    c.push(0);
    // SAFETY: the caller gives T as the symbol's signature.
    unsafe { lib.get::<T>(&c) }.map(|s| *s).map_err(|e| format!("{path} has no {name} ({e})"))
}

impl Api {
    fn load() -> std::result::Result<Api, String> {
        let mut errors = Vec::new();
        for name in NAMES {
            // SAFETY: loading NVRTC runs no initialisers with preconditions of ours.
            let lib = match unsafe { libloading::Library::new(name) } {
                Ok(l) => l,
                Err(e) => {
                    errors.push(format!("{e}"));
                    continue;
                }
            };
            // SAFETY: each type below is the documented C signature of the symbol named.
            return unsafe {
                let version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status = sym(&lib, name, "nvrtcVersion")?;
                let (mut major, mut minor) = (0, 0);
                let rc = version(&mut major, &mut minor);
                if rc != 0 {
                    return Err(format!("nvrtcVersion failed with code {rc}"));
                }
                if major < 12 {
                    return Err(format!("NVRTC {major}.{minor} is too old (op2 needs CUDA 12 or newer)"));
                }
                Ok(Api {
                    version: (major, minor),
                    error_string: sym(&lib, name, "nvrtcGetErrorString")?,
                    create: sym(&lib, name, "nvrtcCreateProgram")?,
                    compile: sym(&lib, name, "nvrtcCompileProgram")?,
                    destroy: sym(&lib, name, "nvrtcDestroyProgram")?,
                    log_size: sym(&lib, name, "nvrtcGetProgramLogSize")?,
                    log: sym(&lib, name, "nvrtcGetProgramLog")?,
                    ptx_size: sym(&lib, name, "nvrtcGetPTXSize")?,
                    ptx: sym(&lib, name, "nvrtcGetPTX")?,
                    cubin_size: sym(&lib, name, "nvrtcGetCUBINSize")?,
                    cubin: sym(&lib, name, "nvrtcGetCUBIN")?,
                    _lib: lib,
                })
            };
        }
        Err(format!(
            "no NVRTC library ({}: {}); install the CUDA toolkit's NVRTC or `pip install nvidia-cuda-nvrtc-cu12` and add its lib directory to LD_LIBRARY_PATH",
            NAMES.join(", "),
            errors.join("; ")
        ))
    }

    /// NVRTC's name for status `rc`.
    fn describe(&self, rc: Status) -> String {
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string for any code.
        let p = unsafe { (self.error_string)(rc) };
        if p.is_null() {
            return format!("NVRTC status {rc}");
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    fn check(&self, call: &str, rc: Status) -> Result<()> {
        if rc == 0 {
            return Ok(());
        }
        Err(Op2Error::new(ErrorCode::Compile, format!("NVRTC: {call} failed: {}", self.describe(rc))))
    }

    /// One of NVRTC's size-then-copy outputs (log, PTX, CUBIN) of `prog`.
    fn output(
        &self,
        prog: Prog,
        what: &str,
        size: unsafe extern "C" fn(Prog, *mut usize) -> Status,
        copy: unsafe extern "C" fn(Prog, *mut c_char) -> Status,
    ) -> Result<Vec<u8>> {
        let mut n = 0usize;
        // SAFETY: `prog` is a live program; `n` a valid out-pointer.
        self.check(what, unsafe { size(prog, &mut n) })?;
        let mut buf = vec![0u8; n];
        // SAFETY: `buf` holds the `n` bytes NVRTC said it writes.
        self.check(what, unsafe { copy(prog, buf.as_mut_ptr() as *mut c_char) })?;
        Ok(buf)
    }
}

fn api() -> std::result::Result<&'static Api, String> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(Api::load).as_ref().map_err(|e| e.clone())
}

/// NVRTC's version (major, minor), or why it cannot be used (what is missing).
pub fn probe() -> std::result::Result<(i32, i32), String> {
    api().map(|a| a.version)
}

/// Text of an NVRTC log buffer.
fn text(log: &[u8]) -> String {
    let bytes: Vec<u8> = log.iter().take_while(|&&c| c != 0).copied().collect();
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

/// Compiles CUDA C++ `src` for `arch`: `sm_XY` gives a CUBIN for that GPU, `compute_XY` gives
/// PTX (NUL-terminated text). `name` is the program's file name in messages. A compile error
/// is `OP2_ERR_COMPILE` with NVRTC's log (its lines name the `#line` origin of the kernel); no
/// NVRTC is `OP2_ERR_BACKEND_UNAVAILABLE`.
pub fn compile(src: &str, arch: &str, name: &str) -> Result<Vec<u8>> {
    let api = api().map_err(|e| Op2Error::new(ErrorCode::BackendUnavailable, format!("NVRTC: {e}")))?;
    let cubin = arch.starts_with("sm_");
    if !cubin && !arch.starts_with("compute_") {
        crate::op2_bail!(BadConfig, "NVRTC: architecture '{arch}' (expected sm_XY or compute_XY)");
    }
    let csrc = CString::new(src).map_err(|_| Op2Error::new(ErrorCode::Compile, "NVRTC: the source has a NUL byte"))?;
    let cname = CString::new(name).map_err(|_| Op2Error::new(ErrorCode::Compile, "NVRTC: the name has a NUL byte"))?;
    let opts: Vec<CString> = vec![format!("--gpu-architecture={arch}")]
        .into_iter()
        .chain(OPTIONS.iter().map(|o| o.to_string()))
        .filter_map(|o| CString::new(o).ok())
        .collect();
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let mut prog: Prog = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings; no headers (count 0, null arrays).
    let rc = unsafe { (api.create)(&mut prog, csrc.as_ptr(), cname.as_ptr(), 0, std::ptr::null(), std::ptr::null()) };
    api.check("nvrtcCreateProgram", rc)?;
    // SAFETY: `prog` is live until destroyed below; the option strings outlive the call.
    let rc = unsafe { (api.compile)(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr()) };
    let out = if rc != 0 {
        let log = api.output(prog, "nvrtcGetProgramLog", api.log_size, api.log).map(|l| text(&l)).unwrap_or_default();
        Err(Op2Error::new(
            ErrorCode::Compile,
            format!("NVRTC ({arch}) cannot compile '{name}': {}\n{log}", api.describe(rc)),
        ))
    } else if cubin {
        api.output(prog, "nvrtcGetCUBIN", api.cubin_size, api.cubin)
    } else {
        api.output(prog, "nvrtcGetPTX", api.ptx_size, api.ptx)
    };
    // SAFETY: destroyed once, after its last use.
    let rc = unsafe { (api.destroy)(&mut prog) };
    let out = out?;
    api.check("nvrtcDestroyProgram", rc)?;
    Ok(out)
}

/// `compile`, through op2's disk cache: the entry is keyed by the source, NVRTC's version, the
/// architecture and the options, and stored under the cache's trust rules (a sealed entry with
/// a checksum trailer, written privately and renamed into place) as `KEY.cubin` (`KEY.ptx` for
/// a `compute_XY` architecture), so it is never taken for a host library (`KEY.so`). Returns
/// the bytes and whether they came from the cache.
pub fn compile_cached(cache: &DiskCache, src: &str, arch: &str, name: &str) -> Result<(Vec<u8>, bool)> {
    let flags: Vec<String> = OPTIONS.iter().map(|s| s.to_string()).collect();
    let key = super::cache::key(src, &version_text(), arch, &flags);
    let entry_name = format!("{key}.{}", if arch.starts_with("sm_") { "cubin" } else { "ptx" });
    if let Lookup::Hit(mut entry) = cache.lookup_named(&entry_name) {
        use std::io::{Read, Seek};
        let mut bytes = Vec::new();
        let read = entry.file.seek(std::io::SeekFrom::Start(0)).and_then(|_| entry.file.read_to_end(&mut bytes));
        if let (Ok(_), Some((len, _))) = (read, super::cache::parse_entry(&bytes)) {
            bytes.truncate(len);
            return Ok((bytes, true));
        }
    }
    let out = compile(src, arch, name)?;
    let scratch = cache.scratch(&key)?;
    scratch
        .write(SCRATCH_LIB, &out)
        .map_err(|e| crate::op2_err!(Io, "JIT cache: cannot write compiled CUDA code: {e}"))?;
    scratch.commit_named(&entry_name, Vec::new())?;
    Ok((out, false))
}

/// NVRTC's version as text (part of the disk cache key of compiled CUDA code).
pub fn version_text() -> String {
    match probe() {
        Ok((a, b)) => format!("nvrtc {a}.{b}"),
        Err(_) => "nvrtc none".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs only where NVRTC is found (`make test-cuda-nvrtc` puts the wheel's on the path).
    #[test]
    fn compiles_and_reports_errors() {
        if probe().is_err() {
            let e = compile("", "sm_80", "x.cu").unwrap_err();
            assert_eq!(e.code, ErrorCode::BackendUnavailable);
            assert!(e.message.contains("no NVRTC library"), "{}", e.message);
            return;
        }
        let ok = "extern \"C\" __global__ void f(double *x) { atomicAdd(x, 1.0); }";
        let cubin = compile(ok, "sm_80", "ok.cu").unwrap();
        assert_eq!(&cubin[..4], b"\x7fELF");
        let ptx = compile(ok, "compute_90", "ok.cu").unwrap();
        assert!(String::from_utf8_lossy(&ptx).contains(".entry f"));
        // atomicAdd on double needs sm_60: the architecture option matters.
        let e = compile(ok, "sm_52", "old.cu").unwrap_err();
        assert_eq!(e.code, ErrorCode::Compile);
        let bad = "extern \"C\" __global__ void f(double *x) {\n#line 7 \"kernel:k\"\n  *x = y;\n}";
        let e = compile(bad, "sm_90", "bad.cu").unwrap_err();
        assert_eq!(e.code, ErrorCode::Compile);
        assert!(e.message.contains("kernel:k(7): error"), "{}", e.message);
        assert_eq!(compile(ok, "gfx90a", "x.cu").unwrap_err().code, ErrorCode::BadConfig);

        // Through the disk cache: compiled once, then read back (the same bytes); an entry that
        // is corrupt is compiled again.
        let dir = std::env::temp_dir().join(format!("op2-nvrtc-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = DiskCache::open(&dir).unwrap();
        let (a, hit) = compile_cached(&cache, ok, "sm_80", "ok.cu").unwrap();
        assert!(!hit);
        let (b, hit) = compile_cached(&cache, ok, "sm_80", "ok.cu").unwrap();
        assert!(hit);
        assert_eq!(a, b);
        let (_, hit) = compile_cached(&cache, ok, "sm_90", "ok.cu").unwrap();
        assert!(!hit, "the architecture is part of the key");
        let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()).collect();
        assert!(
            entries.iter().all(|e| !e.file_name().to_string_lossy().ends_with(".so")),
            "no entry looks like a host library"
        );
        for e in entries.iter().filter(|e| e.file_name().to_string_lossy().ends_with(".cubin")) {
            let mut bytes = std::fs::read(e.path()).unwrap();
            let n = bytes.len();
            bytes[n - 1] ^= 1;
            std::fs::remove_file(e.path()).unwrap();
            std::fs::write(e.path(), &bytes).unwrap();
            let mut perm = std::fs::metadata(e.path()).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o600);
            std::fs::set_permissions(e.path(), perm).unwrap();
        }
        let (c, hit) = compile_cached(&cache, ok, "sm_80", "ok.cu").unwrap();
        assert!(!hit);
        assert_eq!(a, c);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
