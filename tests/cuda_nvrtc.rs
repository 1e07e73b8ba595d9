//! Compiles every CUDA source that static generation wrote (`OP2_GENERATE_TARGETS=cuda`) into
//! `$OP2_NVRTC_DIR` with NVRTC, for sm_80 and sm_90 (`make test-cuda-nvrtc` runs the C suite,
//! the Fortran tests and Airfoil with generation on, then this). Fails on any compile error, on
//! fewer than `$OP2_NVRTC_MIN` files, and if a deliberately broken source is not rejected.
//! `$OP2_NVRTC_EXPECT_FAIL` lists loop names (space-separated) whose code must fail to compile
//! (kernels that call host functions); every other file must compile.
//! Without `OP2_NVRTC_DIR` there is nothing to compile and the test says so.

use std::path::PathBuf;
use std::time::Instant;

const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

#[test]
fn generated_cuda_compiles_with_nvrtc() {
    let Some(dir) = std::env::var_os("OP2_NVRTC_DIR").map(PathBuf::from) else {
        eprintln!("cuda_nvrtc: OP2_NVRTC_DIR is not set: nothing to compile (make test-cuda-nvrtc sets it)");
        return;
    };
    if let Err(e) = op2::jit::nvrtc::probe() {
        panic!("cuda_nvrtc: {e}");
    }
    let min: usize = std::env::var("OP2_NVRTC_MIN").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cuda_nvrtc: {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    assert!(
        files.len() >= min,
        "cuda_nvrtc: {} CUDA sources in {}, expected at least {min}",
        files.len(),
        dir.display()
    );
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (name, std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        })
        .collect();

    // A broken source is rejected, with the kernel's own line in the log.
    let (name, first) = &sources[0];
    let broken = format!("{first}\n__device__ int op2_probe_broken() {{ return op2_undeclared_identifier; }}\n");
    let e = op2::jit::nvrtc::compile(&broken, "sm_80", name).expect_err("a broken source compiled");
    assert!(e.message.contains("op2_undeclared_identifier"), "{}", e.message);

    let t = Instant::now();
    let jobs: Vec<(&str, &str, &str)> =
        sources.iter().flat_map(|(n, s)| ARCHS.iter().map(move |a| (n.as_str(), s.as_str(), *a))).collect();
    let expect_fail: Vec<String> = std::env::var("OP2_NVRTC_EXPECT_FAIL")
        .unwrap_or_default()
        .split_whitespace()
        .map(|l| format!("{l}-"))
        .collect();
    let must_fail = |n: &str| expect_fail.iter().any(|p| n.starts_with(p.as_str()));
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(4);
    let must_fail = &must_fail;
    let failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<_> = jobs.chunks(jobs.len().div_ceil(threads)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(n, s, a)| match (op2::jit::nvrtc::compile(s, a, n), must_fail(n)) {
                            (Err(e), false) => Some(format!("{n} [{a}]: {}", e.message)),
                            (Ok(_), true) => Some(format!("{n} [{a}]: compiled, but it must not")),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a compile thread panicked")).collect()
    });
    eprintln!(
        "cuda_nvrtc: {} sources x {} architectures = {} NVRTC compiles in {:.1} s, {} failed",
        sources.len(),
        ARCHS.len(),
        jobs.len(),
        t.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "cuda_nvrtc: {} compiles failed:\n{}", failures.len(), failures.join("\n"));
}

/// Device fusion (issue 23, point 10): the CUDA source of a fused unit, Airfoil's
/// `save_soln + adt_calc` (direct copy, then a loop reading the nodes through a map, with
/// constants), in both dat layouts, plus a unit with an optional argument, a READ global and an
/// element index, compiles with NVRTC for sm_80 and sm_90. Runs where `make test-cuda-nvrtc`
/// sets `OP2_NVRTC_DIR` (NVRTC is there).
#[test]
fn fused_units_compile_with_nvrtc() {
    use op2::arg::{Access, ArgDesc, DatAccess};
    use op2::codegen::{ConstDecl, LoopSignature};
    use op2::core::ElemType;
    if std::env::var_os("OP2_NVRTC_DIR").is_none() {
        eprintln!("cuda_nvrtc: OP2_NVRTC_DIR is not set: no fused unit compiled (make test-cuda-nvrtc sets it)");
        return;
    }
    if let Err(e) = op2::jit::nvrtc::probe() {
        panic!("cuda_nvrtc: {e}");
    }
    let kernels = concat!(env!("CARGO_MANIFEST_DIR"), "/examples-c/airfoil/kernels");
    let read = |k: &str| std::fs::read_to_string(format!("{kernels}/{k}.c")).unwrap();
    let (save, adt) = (read("save_soln"), read("adt_calc"));
    let dat = |dim, acc, how| ArgDesc::Dat { ty: ElemType::Double, dim, acc, how, optional: false };
    let save_args = [dat(4, Access::Read, DatAccess::Direct), dat(4, Access::Write, DatAccess::Direct)];
    let node = |idx| dat(2, Access::Read, DatAccess::Indirect { map_dim: 4, idx });
    let adt_args = [
        node(0),
        node(1),
        node(2),
        node(3),
        dat(4, Access::Read, DatAccess::Direct),
        dat(1, Access::Write, DatAccess::Direct),
    ];
    let consts: Vec<ConstDecl> = ["cfl", "gam", "gm1"]
        .iter()
        .map(|n| ConstDecl { name: n.to_string(), ty: ElemType::Double, dim: 1, symbol: None })
        .collect();
    let values: Vec<[u8; 8]> = [0.9f64, 1.4, 0.4].iter().map(|v| v.to_ne_bytes()).collect();
    let values: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
    let parts = [
        LoopSignature {
            loop_name: "save_soln",
            kernel_name: "save_soln",
            kernel_source: &save,
            kernel_origin: "\"kernel:save_soln\"",
            args: &save_args,
            consts: &[],
        },
        LoopSignature {
            loop_name: "adt_calc",
            kernel_name: "adt_calc",
            kernel_source: &adt,
            kernel_origin: "\"kernel:adt_calc\"",
            args: &adt_args,
            consts: &consts,
        },
    ];
    let mut sources = Vec::new();
    for soa in [false, true] {
        sources.push((
            format!("save_soln+adt_calc soa={soa}"),
            op2::backend::cuda::codegen::generate_fused(&parts, &consts, &values, soa),
        ));
    }
    let opt_args = [
        ArgDesc::Dat { ty: ElemType::Float, dim: 3, acc: Access::Rw, how: DatAccess::Direct, optional: true },
        ArgDesc::Gbl { ty: ElemType::Int, dim: 2, acc: Access::Read },
        ArgDesc::Idx { map_dim: None, idx: 0 },
    ];
    let inc_args =
        [ArgDesc::Dat { ty: ElemType::Float, dim: 3, acc: Access::Inc, how: DatAccess::Direct, optional: false }];
    let small = [
        LoopSignature {
            loop_name: "scale",
            kernel_name: "scale",
            kernel_source: "void scale(float *v, const int *g, const int *i) { if (v) v[0] = v[1] * g[0] + *i; }\n",
            kernel_origin: "\"kernel:scale\"",
            args: &opt_args,
            consts: &[],
        },
        LoopSignature {
            loop_name: "bump",
            kernel_name: "bump",
            kernel_source: "void bump(float *v) { v[2] += 1.0f; }\n",
            kernel_origin: "\"kernel:bump\"",
            args: &inc_args,
            consts: &[],
        },
    ];
    sources.push(("scale+bump".to_string(), op2::backend::cuda::codegen::generate_fused(&small, &[], &[], false)));
    let mut failures = Vec::new();
    for (name, src) in &sources {
        assert!(src.contains("/* loop '"), "{name}: {src}");
        for arch in ARCHS {
            if let Err(e) = op2::jit::nvrtc::compile(src, arch, "fused.cu") {
                failures.push(format!("{name} [{arch}]: {}", e.message));
            }
        }
    }
    assert!(failures.is_empty(), "cuda_nvrtc: fused units that do not compile:\n{}", failures.join("\n"));
}

/// The halo exchanges' gather and scatter kernels (`backend::device::GATHER_CUDA`, launched by
/// the cuda backend to pack export rows; `SCATTER_CUDA`, to unpack rows a CUDA-aware MPI
/// received into device memory) compile with NVRTC for every architecture.
#[test]
fn halo_gather_compiles_with_nvrtc() {
    if std::env::var_os("OP2_NVRTC_DIR").is_none() {
        eprintln!(
            "cuda_nvrtc: OP2_NVRTC_DIR is not set: the halo gather kernel not compiled (make test-cuda-nvrtc sets it)"
        );
        return;
    }
    if let Err(e) = op2::jit::nvrtc::probe() {
        panic!("cuda_nvrtc: {e}");
    }
    for a in ARCHS {
        if let Err(e) = op2::jit::nvrtc::compile(op2::backend::device::GATHER_CUDA, a, "op2_halo_gather.cu") {
            panic!("cuda_nvrtc: the halo gather kernel does not compile for {a}: {}", e.message);
        }
        if let Err(e) = op2::jit::nvrtc::compile(op2::backend::device::SCATTER_CUDA, a, "op2_halo_scatter.cu") {
            panic!("cuda_nvrtc: the halo scatter kernel does not compile for {a}: {}", e.message);
        }
    }
}
