//! `op2-gpu-probe`: what op2 finds on a GPU machine, and the device's copy bandwidth, for the
//! GPU kit (`make gpu-kit`, `build/gpu-kit/run.sh`), which has no Rust toolchain on the machine
//! it runs on.
//!
//! - `op2-gpu-probe probe`: the CUDA driver, NVRTC and device op2's `cuda` backend would use
//!   (`OP2_CUDA_DEVICE`), or why there is none, by name ("no CUDA driver (...)"); then every
//!   OpenCL platform and device. Lines of `key: value`; exit 0 when `cuda` can run, 3 when not.
//! - `op2-gpu-probe copy [--mib N] [--reps R]`: `cuMemcpyDtoD` of N MiB (default 1024) between
//!   two device buffers, R times (default 20) after two untimed copies, synchronised; prints
//!   `copy_gbs=G` (bytes read plus bytes written per second, 1e9 bytes per GB, as STREAM's copy
//!   counts them). Exit 3 when there is no usable CUDA device, 1 on a driver error.

use op2::backend::cuda;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: op2-gpu-probe probe\n       op2-gpu-probe copy [--mib N] [--reps R]\n\
  probe  the CUDA driver, NVRTC and device op2 would use (or why none), and the OpenCL devices;\n\
         exit 0 when the cuda backend can run, 3 when it cannot\n\
  copy   cuMemcpyDtoD bandwidth: N MiB (default 1024) copied R times (default 20); prints copy_gbs=G\n\
environment: OP2_CUDA_DEVICE (device index, default 0)";

/// Exit status when there is no usable CUDA device.
const UNAVAILABLE: u8 = 3;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("probe") if args.len() == 1 => Ok(probe()),
        Some("copy") => copy(&args[1..]),
        Some("-h") | Some("--help") => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => Err(format!("expected 'probe' or 'copy'\n{USAGE}")),
    };
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("op2-gpu-probe: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// `OP2_CUDA_DEVICE`, as op2 reads it (an index).
fn device_index() -> Result<Option<usize>, String> {
    match std::env::var("OP2_CUDA_DEVICE") {
        Ok(s) if !s.trim().is_empty() => {
            s.trim().parse::<usize>().map(Some).map_err(|_| format!("OP2_CUDA_DEVICE={s}: not a device index"))
        }
        _ => Ok(None),
    }
}

fn probe() -> ExitCode {
    let code = match device_index().and_then(cuda::probe) {
        Ok(d) => {
            let nvrtc = op2::jit::nvrtc::probe().map(|(a, b)| format!("{a}.{b}")).unwrap_or_else(|e| e);
            // SAFETY: a device from cuDeviceGet (probe initialised the driver).
            let mem = unsafe { cudarc::driver::result::device::total_mem(d.dev) }
                .map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64))
                .unwrap_or_else(|e| format!("unknown ({e})"));
            println!("cuda: available");
            println!("cuda device: {} '{}'", d.ordinal, d.name);
            println!("cuda compute capability: {}.{} (NVRTC arch sm_{}{})", d.cc.0, d.cc.1, d.cc.0, d.cc.1);
            println!("cuda driver: {}.{}", d.driver_version / 1000, d.driver_version % 1000 / 10);
            println!("cuda nvrtc: {nvrtc}");
            println!("cuda memory: {mem}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("cuda: unavailable: {why}");
            ExitCode::from(UNAVAILABLE)
        }
    };
    opencl_devices();
    code
}

/// Every OpenCL platform and device, with double-precision support (op2 needs cl_khr_fp64).
fn opencl_devices() {
    use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
    let platforms = match opencl3::platform::get_platforms() {
        Ok(p) if !p.is_empty() => p,
        Ok(_) => {
            println!("opencl: unavailable: no OpenCL platform");
            return;
        }
        Err(e) => {
            println!("opencl: unavailable: no OpenCL runtime or platform ({e})");
            return;
        }
    };
    for (p, plat) in platforms.iter().enumerate() {
        let pname = plat.name().unwrap_or_default();
        let version = plat.version().unwrap_or_default();
        let ids = plat.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        if ids.is_empty() {
            println!("opencl platform {p}: '{pname}' ({version}): no devices");
        }
        for (d, id) in ids.into_iter().enumerate() {
            let dev = Device::new(id);
            let fp64 = dev.extensions().unwrap_or_default().contains("cl_khr_fp64");
            println!(
                "opencl device {p}:{d}: '{pname}' / '{}' ({version}; driver {}; fp64 {})",
                dev.name().unwrap_or_default(),
                dev.driver_version().unwrap_or_default(),
                if fp64 { "yes" } else { "no" }
            );
        }
    }
}

/// A positive integer option value.
fn positive(flag: &str, v: Option<&String>) -> Result<usize, String> {
    let v = v.ok_or(format!("{flag} needs a number"))?;
    v.parse::<usize>().ok().filter(|&n| n > 0).ok_or(format!("{flag} {v}: not a positive number"))
}

fn copy(args: &[String]) -> Result<ExitCode, String> {
    let (mut mib, mut reps) = (1024usize, 20usize);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--mib" => mib = positive("--mib", it.next())?,
            "--reps" => reps = positive("--reps", it.next())?,
            s => return Err(format!("unknown option '{s}'\n{USAGE}")),
        }
    }
    let bytes = mib.checked_mul(1 << 20).ok_or(format!("--mib {mib}: too large"))?;
    let dev = match device_index().and_then(cuda::probe) {
        Ok(d) => d,
        Err(why) => {
            println!("copy: not run: cuda unavailable: {why}");
            return Ok(ExitCode::from(UNAVAILABLE));
        }
    };
    match copy_bandwidth(&dev, bytes, reps) {
        Ok(secs) => {
            let gbs = 2.0 * bytes as f64 * reps as f64 / secs / 1e9;
            println!(
                "copy: cuMemcpyDtoD of {mib} MiB, {reps} times on '{}': {:.3} ms per copy, {gbs:.1} GB/s (read + write)",
                dev.name,
                1e3 * secs / reps as f64
            );
            println!("copy_gbs={gbs:.1}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(format!("copy: {e}")),
    }
}

/// Seconds for `reps` device-to-device copies of `bytes`, after two untimed ones.
fn copy_bandwidth(dev: &cuda::Device, bytes: usize, reps: usize) -> Result<f64, String> {
    use cudarc::driver::result as cu;
    // SAFETY: a device from cuDeviceGet; the context is released below on every path.
    let ctx = unsafe { cu::primary_ctx::retain(dev.dev) }.map_err(|e| format!("cuDevicePrimaryCtxRetain: {e}"))?;
    let run = || -> Result<f64, String> {
        // SAFETY: retained above.
        unsafe { cu::ctx::set_current(ctx) }.map_err(|e| format!("cuCtxSetCurrent: {e}"))?;
        // SAFETY: plain allocations of `bytes` (> 0) in the current context.
        let src = unsafe { cu::malloc_sync(bytes) }.map_err(|e| format!("cuMemAlloc of {bytes} bytes: {e}"))?;
        let dst = match unsafe { cu::malloc_sync(bytes) } {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: allocated above, nothing in flight.
                let _ = unsafe { cu::free_sync(src) };
                return Err(format!("cuMemAlloc of {bytes} bytes: {e}"));
            }
        };
        let timed = || -> Result<f64, String> {
            // SAFETY: both buffers hold `bytes`; any byte pattern is fine.
            unsafe { cu::memset_d8_sync(src, 1, bytes) }.map_err(|e| format!("cuMemsetD8: {e}"))?;
            for _ in 0..2 {
                // SAFETY: as above.
                unsafe { cu::memcpy_dtod_sync(dst, src, bytes) }.map_err(|e| format!("cuMemcpyDtoD: {e}"))?;
            }
            cu::ctx::synchronize().map_err(|e| format!("cuCtxSynchronize: {e}"))?;
            let t = Instant::now();
            for _ in 0..reps {
                // SAFETY: as above.
                unsafe { cu::memcpy_dtod_sync(dst, src, bytes) }.map_err(|e| format!("cuMemcpyDtoD: {e}"))?;
            }
            cu::ctx::synchronize().map_err(|e| format!("cuCtxSynchronize: {e}"))?;
            Ok(t.elapsed().as_secs_f64())
        };
        let r = timed();
        // SAFETY: allocated above; the context was synchronised (or failed).
        unsafe {
            let _ = cu::free_sync(src);
            let _ = cu::free_sync(dst);
        }
        r
    };
    let r = run();
    // SAFETY: retained above, released once.
    let _ = unsafe { cu::primary_ctx::release(dev.dev) };
    r
}
