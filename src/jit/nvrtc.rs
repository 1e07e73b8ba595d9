//! NVRTC, CUDA's run-time compiler, loaded at run time (cudarc's `dynamic-loading`): compiles
//! generated CUDA C++ to a CUBIN for one GPU architecture (`sm_XY`) or to PTX (`compute_XY`).
//! Used by the `cuda` backend and by whatever compiles CUDA code ahead of time.
//!
//! cudarc panics when it cannot load the library, or when the library lacks a symbol of the
//! CUDA version op2 was built for (12.0), so the library is probed first with `dlopen` and its
//! version checked; cudarc is called only after that succeeded.

use crate::error::{ErrorCode, Op2Error, Result};
use cudarc::nvrtc::{result, sys};
use std::ffi::{c_int, CString};
use std::sync::OnceLock;

/// The library names tried, in order (all of them among those cudarc tries).
const NAMES: [&str; 2] = ["libnvrtc.so.12", "libnvrtc.so"];

/// Options every compile gets besides the architecture: the kernel and its helpers are device
/// functions (`-default-device`); no fused multiply-add, so direct loops give the bits `seq`
/// gives and validation can compare them exactly.
pub const OPTIONS: [&str; 3] = ["-default-device", "--std=c++17", "--fmad=false"];

/// NVRTC's version (major, minor), or why it cannot be used (what is missing).
pub fn probe() -> std::result::Result<(i32, i32), String> {
    static PROBE: OnceLock<std::result::Result<(i32, i32), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
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
                type Version = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
                // SAFETY: nvrtcVersion has this signature in every NVRTC.
                let f = match unsafe { lib.get::<Version>(b"nvrtcVersion\0") } {
                    Ok(f) => f,
                    Err(e) => return Err(format!("{name} has no nvrtcVersion ({e})")),
                };
                let (mut major, mut minor) = (0, 0);
                // SAFETY: two valid out-pointers.
                let rc = unsafe { f(&mut major, &mut minor) };
                if rc != 0 {
                    return Err(format!("nvrtcVersion failed with code {rc}"));
                }
                if major < 12 {
                    return Err(format!("NVRTC {major}.{minor} is too old (op2 needs CUDA 12 or newer)"));
                }
                // Keep it loaded: cudarc opens the same library by name.
                std::mem::forget(lib);
                return Ok((major, minor));
            }
            Err(format!(
                "no NVRTC library ({}: {}); install the CUDA toolkit's NVRTC or `pip install nvidia-cuda-nvrtc-cu12` and add its lib directory to LD_LIBRARY_PATH",
                NAMES.join(", "),
                errors.join("; ")
            ))
        })
        .clone()
}

/// Text of an NVRTC log buffer.
fn text(log: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = log.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

fn failed(call: &str, e: result::NvrtcError) -> Op2Error {
    Op2Error::new(ErrorCode::Compile, format!("NVRTC: {call} failed: {:?}", e.0))
}

/// Compiles CUDA C++ `src` for `arch`: `sm_XY` gives a CUBIN for that GPU, `compute_XY` gives
/// PTX (NUL-terminated text). `name` is the program's file name in messages. A compile error
/// is `OP2_ERR_COMPILE` with NVRTC's log (its lines name the `#line` origin of the kernel); no
/// NVRTC is `OP2_ERR_BACKEND_UNAVAILABLE`.
pub fn compile(src: &str, arch: &str, name: &str) -> Result<Vec<u8>> {
    probe().map_err(|e| Op2Error::new(ErrorCode::BackendUnavailable, format!("NVRTC: {e}")))?;
    let cubin = arch.starts_with("sm_");
    if !cubin && !arch.starts_with("compute_") {
        crate::op2_bail!(BadConfig, "NVRTC: architecture '{arch}' (expected sm_XY or compute_XY)");
    }
    let csrc = CString::new(src).map_err(|_| Op2Error::new(ErrorCode::Compile, "NVRTC: the source has a NUL byte"))?;
    let cname = CString::new(name).map_err(|_| Op2Error::new(ErrorCode::Compile, "NVRTC: the name has a NUL byte"))?;
    let prog = result::create_program(&csrc, Some(&cname)).map_err(|e| failed("nvrtcCreateProgram", e))?;
    let mut opts: Vec<String> = vec![format!("--gpu-architecture={arch}")];
    opts.extend(OPTIONS.iter().map(|o| o.to_string()));
    // SAFETY: `prog` is live until destroyed at the end; `csrc` and `cname` outlive it.
    let out = unsafe {
        match result::compile_program(prog, &opts) {
            Err(e) => {
                let log = result::get_program_log(prog).map(|l| text(&l)).unwrap_or_default();
                Err(Op2Error::new(
                    ErrorCode::Compile,
                    format!("NVRTC ({arch}) cannot compile '{name}': {:?}\n{log}", e.0),
                ))
            }
            Ok(()) if cubin => {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size).result().map_err(|e| failed("nvrtcGetCUBINSize", e)).and_then(
                    |_| {
                        let mut buf = vec![0u8; size];
                        sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut std::ffi::c_char)
                            .result()
                            .map_err(|e| failed("nvrtcGetCUBIN", e))?;
                        Ok(buf)
                    },
                )
            }
            Ok(()) => result::get_ptx(prog)
                .map(|p| p.into_iter().map(|c| c as u8).collect())
                .map_err(|e| failed("nvrtcGetPTX", e)),
        }
    };
    // SAFETY: destroyed once, after its last use.
    let destroyed = unsafe { result::destroy_program(prog) };
    let out = out?;
    destroyed.map_err(|e| failed("nvrtcDestroyProgram", e))?;
    Ok(out)
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
    }
}
