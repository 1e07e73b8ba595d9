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
//! - `op2-gpu-probe halo [--backend cuda|opencl]`: the device halo rows primitives of MPI halo
//!   exchanges, on a dat of 40 rows of 3 doubles and one of 40 floats, with the array-of-structs
//!   and the structure-of-arrays layout: export rows in several ranges (the gather kernel) and in
//!   one, import rows, and on cuda the device staging of a CUDA-aware MPI exchange (rows packed at
//!   two offsets of the send area by the gather kernel, the area copied to the receive area as
//!   MPI would move it, unpacked into other rows by the scatter kernel). Every row is checked
//!   against the values it must hold (and untouched rows against zero). Prints one line per
//!   check; exit 0 when all pass, 1 when one fails, 3 when the backend is unavailable.

use op2::backend::{cuda, Backend, DatShape};
use op2::core::DatId;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: op2-gpu-probe probe\n       op2-gpu-probe copy [--mib N] [--reps R]\n       op2-gpu-probe halo [--backend cuda|opencl]\n\
  probe  the CUDA driver, NVRTC and device op2 would use (or why none), and the OpenCL devices;\n\
         exit 0 when the cuda backend can run, 3 when it cannot\n\
  copy   cuMemcpyDtoD bandwidth: N MiB (default 1024) copied R times (default 20); prints copy_gbs=G\n\
  halo   the device halo rows primitives (gather, import rows, CUDA-aware MPI staging), checked\n\
environment: OP2_CUDA_DEVICE (device index, default 0)";

/// Exit status when there is no usable CUDA device.
const UNAVAILABLE: u8 = 3;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("probe") if args.len() == 1 => Ok(probe()),
        Some("copy") => copy(&args[1..]),
        Some("halo") => halo(&args[1..]),
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

/// `op2-gpu-probe halo`: see the module's documentation.
fn halo(args: &[String]) -> Result<ExitCode, String> {
    let mut name = "cuda".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--backend" => name = it.next().cloned().ok_or("--backend needs cuda or opencl")?,
            s => return Err(format!("unknown option '{s}'\n{USAGE}")),
        }
    }
    let mut failed = 0usize;
    let mut passed = 0usize;
    for soa in [false, true] {
        let mut config = op2::config::Config::from_env(&[], 0).map_err(|e| e.message)?;
        config.auto_soa = Some(soa);
        let made: Result<Box<dyn Backend>, op2::error::Op2Error> = match name.as_str() {
            "cuda" => cuda::Cuda::new(&config).map(|b| Box::new(b) as Box<dyn Backend>),
            "opencl" => op2::backend::opencl::OpenCl::new(&config).map(|b| Box::new(b) as Box<dyn Backend>),
            other => return Err(format!("--backend {other}: expected cuda or opencl")),
        };
        let mut b = match made {
            Ok(b) => b,
            Err(e) => {
                println!("halo: not run: {name} unavailable: {}", e.message);
                return Ok(ExitCode::from(UNAVAILABLE));
            }
        };
        for (what, ok) in
            halo_checks(b.as_mut(), &name).map_err(|e| format!("halo ({name}, soa={}): {e}", soa as u8))?
        {
            let verdict = match ok {
                Some(true) => "ok",
                Some(false) => "FAILED",
                None => "not run",
            };
            println!("halo: {name} soa={} {what}: {verdict}", soa as u8);
            match ok {
                Some(true) => passed += 1,
                Some(false) => failed += 1,
                None => {}
            }
        }
    }
    println!("halo_passed={passed} halo_failed={failed}");
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Row `r` of the test dats: 3 doubles (`wide`) or 1 float, distinct everywhere, never zero.
fn halo_row(r: usize, wide: bool) -> Vec<u8> {
    if wide {
        (0..3).flat_map(|c| (r as f64 * 8.0 + c as f64 + 0.25).to_ne_bytes()).collect()
    } else {
        (r as f32 + 0.5).to_ne_bytes().to_vec()
    }
}

/// A dat's host bytes with the rows `from(r)` says (None: zero).
fn halo_dat(rows: usize, wide: bool, from: impl Fn(usize) -> Option<usize>) -> Vec<u8> {
    let eb = if wide { 24 } else { 4 };
    (0..rows).flat_map(|r| from(r).map_or_else(|| vec![0u8; eb], |s| halo_row(s, wide))).collect()
}

/// The checks of `op2-gpu-probe halo` on one backend: (what, passed; None: not run).
fn halo_checks(b: &mut dyn Backend, name: &str) -> Result<Vec<(String, Option<bool>)>, String> {
    const ROWS: usize = 40;
    let wide = DatShape { dim: 3, elem: 8 };
    let narrow = DatShape { dim: 1, elem: 4 };
    let e = |e: op2::error::Op2Error| e.message;
    let (a, c) = (DatId(9000), DatId(9001));
    let host_a = halo_dat(ROWS, true, Some);
    let host_c = halo_dat(ROWS, false, Some);
    b.upload(a, wide, &host_a).map_err(e)?;
    b.upload(c, narrow, &host_c).map_err(e)?;
    let mut out = Vec::new();
    let inside = |runs: &[(usize, usize)], r: usize| runs.iter().any(|&(f, n)| r >= f && r < f + n);
    // Export rows: several ranges go through the gather kernel, one range is read as it is.
    for runs in [&[(1usize, 2usize), (5, 1), (9, 3), (30, 1), (39, 1)][..], &[(12, 4)][..]] {
        let mut host = vec![0u8; ROWS * 24];
        let moved = b.download_rows(a, wide, &mut host, runs).map_err(e)?;
        let want = halo_dat(ROWS, true, |r| inside(runs, r).then_some(r));
        let rows: usize = runs.iter().map(|r| r.1).sum();
        out.push((
            format!("export rows in {} range(s), {} bytes", runs.len(), moved),
            Some(host == want && moved == (rows * 24) as u64),
        ));
    }
    // Import rows: into a zeroed dat, only the given ranges.
    let d = DatId(9002);
    b.upload(d, wide, &vec![0u8; ROWS * 24]).map_err(e)?;
    let runs = [(2usize, 3usize), (20, 2), (38, 2)];
    let moved = b.upload_rows(d, wide, &host_a, &runs).map_err(e)?;
    let mut got = vec![0u8; ROWS * 24];
    b.download(d, wide, &mut got).map_err(e)?;
    out.push((
        format!("import rows in 3 ranges, {moved} bytes"),
        Some(got == halo_dat(ROWS, true, |r| inside(&runs, r).then_some(r)) && moved == 7 * 24),
    ));
    // CUDA-aware MPI staging: pack at two offsets, move the send area to the receive area (what
    // MPI does), unpack elsewhere.
    let sends: [(DatId, DatShape, Vec<u32>, usize); 3] =
        [(a, wide, vec![3, 17, 8], 0), (a, wide, vec![39, 0], 72), (c, narrow, vec![5, 6], 120)];
    let (dd, ee) = (DatId(9003), DatId(9004));
    let recvs: [(DatId, DatShape, Vec<u32>, usize); 3] =
        [(dd, wide, vec![10, 11, 12], 0), (dd, wide, vec![25, 26], 72), (ee, narrow, vec![1, 2], 120)];
    match b.mpi_staging(128, 128).map_err(e)? {
        None => out.push((format!("device staging ({name} has none: its halos go through host memory)"), None)),
        Some((send, recv)) => {
            b.upload(dd, wide, &vec![0u8; ROWS * 24]).map_err(e)?;
            b.upload(ee, narrow, &[0u8; ROWS * 4]).map_err(e)?;
            let mut packed = 0u64;
            for (dat, shape, rows, at) in &sends {
                packed += b.pack_staged(*dat, *shape, rows, *at).map_err(e)?;
            }
            b.staged_sync().map_err(e)?;
            // SAFETY: both areas hold at least 128 bytes (mpi_staging's contract); the backend
            // made its context current and every pack has finished (staged_sync).
            unsafe { cudarc::driver::result::memcpy_dtod_sync(recv as u64, send as u64, 128) }
                .map_err(|err| format!("cuMemcpyDtoD (send area to receive area): {err}"))?;
            let mut unpacked = 0u64;
            for (dat, shape, rows, at) in &recvs {
                unpacked += b.unpack_staged(*dat, *shape, rows, *at).map_err(e)?;
            }
            b.staged_sync().map_err(e)?;
            let mut got_d = vec![0u8; ROWS * 24];
            b.download(dd, wide, &mut got_d).map_err(e)?;
            let mut got_e = vec![0u8; ROWS * 4];
            b.download(ee, narrow, &mut got_e).map_err(e)?;
            let from_d =
                |r: usize| [(10, 3), (11, 17), (12, 8), (25, 39), (26, 0)].iter().find(|p| p.0 == r).map(|p| p.1);
            let from_e = |r: usize| [(1, 5), (2, 6)].iter().find(|p| p.0 == r).map(|p| p.1);
            out.push((
                format!("device staging: {packed} bytes packed at 3 offsets, {unpacked} unpacked"),
                Some(
                    got_d == halo_dat(ROWS, true, from_d)
                        && got_e == halo_dat(ROWS, false, from_e)
                        && packed == 128
                        && unpacked == 128,
                ),
            ));
            // The row lists are kept on the device: a second exchange with other rows at the
            // same offsets must use the new ones.
            b.pack_staged(a, wide, &[4, 5, 6], 0).map_err(e)?;
            b.staged_sync().map_err(e)?;
            // SAFETY: as above.
            unsafe { cudarc::driver::result::memcpy_dtod_sync(recv as u64, send as u64, 72) }
                .map_err(|err| format!("cuMemcpyDtoD (send area to receive area): {err}"))?;
            b.unpack_staged(dd, wide, &[30, 31, 32], 0).map_err(e)?;
            b.staged_sync().map_err(e)?;
            b.download(dd, wide, &mut got_d).map_err(e)?;
            let from_d2 = |r: usize| match r {
                30..=32 => Some(r - 26),
                _ => from_d(r),
            };
            out.push((
                "device staging again with other rows at the same offsets".to_string(),
                Some(got_d == halo_dat(ROWS, true, from_d2)),
            ));
            b.free(dd);
            b.free(ee);
        }
    }
    b.free(a);
    b.free(c);
    b.free(d);
    Ok(out)
}
