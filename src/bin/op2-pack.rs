//! `op2-pack DIR [DIR...] -o FILE`: compiles the host code of `OP2_GENERATE` directories into
//! a loop pack that `OP2_LOOP_PACK=FILE` loads without a C compiler (see `op2::jit::pack`).
//! `op2-pack --list FILE` prints what a pack holds and whether this machine accepts it.
//!
//! The compiler and flags are the JIT's: `OP2_CC` (default `cc`) and op2's flags followed by
//! `OP2_CFLAGS` (e.g. `OP2_CFLAGS=-march=x86-64-v3` for a pack that runs on any CPU with
//! AVX2, instead of this CPU's `-march=native`). CUDA code (`OP2_GENERATE_TARGETS=cuda`) is
//! compiled by NVRTC into a CUBIN for each architecture of `OP2_CUDA_ARCH` (default
//! `sm_80,sm_90`). Kernel errors surface here, with the loop's name, before any job runs.
//! Loops are compiled in parallel (`--jobs N`, default: the CPUs).

use op2::exec::generate::{read_manifest, ManifestEntry};
use op2::jit::pack::{self, NewEntry, Pack, PackMeta};
use op2::jit::Compiler;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: op2-pack DIR [DIR...] -o FILE [--jobs N] [--skip-broken]\n       op2-pack --list FILE\n\
  DIR     directories written by a run with OP2_GENERATE=DIR (host target)\n\
  -o FILE the loop pack to write (replaced atomically)\n\
  --jobs  parallel compiles (default: the CPUs)\n\
  --skip-broken  leave out loops that do not compile (listed on stderr) instead of failing\n\
  --list  print a pack's build information and loops, and whether this op2 and CPU accept it\n\
environment: OP2_CC (compiler, default cc), OP2_CFLAGS (appended to op2's flags),\n\
  OP2_CUDA_ARCH (architectures of CUDA code, default sm_80,sm_90; NVRTC loaded at run time)";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("op2-pack: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut dirs = Vec::new();
    let mut out = None;
    let mut jobs = None;
    let mut list = None;
    let mut skip_broken = false;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            "-o" => out = Some(PathBuf::from(it.next().ok_or("-o needs a file name")?)),
            "--jobs" => {
                let n = it.next().ok_or("--jobs needs a number")?;
                jobs = Some(
                    n.parse::<usize>().ok().filter(|&n| n > 0).ok_or(format!("--jobs {n}: not a positive number"))?,
                );
            }
            "--skip-broken" => skip_broken = true,
            "--list" => list = Some(PathBuf::from(it.next().ok_or("--list needs a file name")?)),
            s if s.starts_with('-') => return Err(format!("unknown option '{s}'\n{USAGE}")),
            _ => dirs.push(PathBuf::from(a)),
        }
    }
    if let Some(p) = list {
        return list_pack(&p);
    }
    let out = out.ok_or(format!("no output file (-o FILE)\n{USAGE}"))?;
    if dirs.is_empty() {
        return Err(format!("no generated directory given\n{USAGE}"));
    }
    let archs: Vec<String> = std::env::var("OP2_CUDA_ARCH")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "sm_80,sm_90".into())
        .split(',')
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .collect();
    if let Some(a) = archs.iter().find(|a| !a.starts_with("sm_")) {
        return Err(format!("OP2_CUDA_ARCH: '{a}' is not a GPU architecture (sm_XY)"));
    }
    // (directory, manifest entry, target in the pack: host, or cuda-sm_XY per architecture)
    let mut todo: Vec<(PathBuf, ManifestEntry, String)> = Vec::new();
    let mut skipped = 0;
    for d in &dirs {
        let entries = read_manifest(d).map_err(|e| format!("{}: cannot read its manifest.jsonl: {e}", d.display()))?;
        for e in entries {
            let targets: Vec<String> = match e.target.as_str() {
                pack::HOST => vec![pack::HOST.to_string()],
                "cuda" => archs.iter().map(|a| format!("cuda-{a}")).collect(),
                _ => {
                    skipped += 1;
                    continue;
                }
            };
            for t in targets {
                if !todo.iter().any(|(_, x, tt)| x.file == e.file && *tt == t) {
                    todo.push((d.clone(), e.clone(), t));
                }
            }
        }
    }
    if todo.is_empty() {
        return Err("the manifests list no host or cuda loops (generate with OP2_GENERATE_TARGETS=host or cuda)".into());
    }
    if todo.iter().any(|(_, _, t)| t != pack::HOST) {
        op2::jit::nvrtc::probe().map_err(|e| format!("CUDA code needs NVRTC: {e}"))?;
    }
    let mut compiler = Compiler::new(
        &std::env::var("OP2_CC").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "cc".into()),
        &std::env::var("OP2_CFLAGS").unwrap_or_default(),
    );
    let identity = compiler.identity().map_err(|e| e.message)?.to_string();
    let target = compiler.target().map_err(|e| e.message)?.to_string();
    let isa = compiler.isa().map_err(|e| e.message)?;
    let work = std::env::temp_dir().join(format!("op2-pack-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create '{}': {e}", work.display()))?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs.unwrap_or(0)).build().map_err(|e| e.to_string())?;
    let t = std::time::Instant::now();
    let built: Vec<Result<NewEntry, String>> = pool.install(|| {
        todo.par_iter().enumerate().map(|(i, (dir, e, t))| compile_one(&compiler, &work, i, dir, e, t)).collect()
    });
    let _ = std::fs::remove_dir_all(&work);
    let mut entries = Vec::new();
    let mut failed = Vec::new();
    for r in built {
        match r {
            Ok(e) => entries.push(e),
            Err(m) => failed.push(m),
        }
    }
    if !failed.is_empty() && skip_broken {
        eprintln!(
            "op2-pack: {} of {} loops do not compile and are left out:\n{}",
            failed.len(),
            todo.len(),
            failed.join("\n")
        );
    } else if !failed.is_empty() {
        return Err(format!(
            "{} of {} loops do not compile; no pack written\n{}",
            failed.len(),
            todo.len(),
            failed.join("\n")
        ));
    }
    let meta = PackMeta::current(&identity, &compiler.flags.join(" "), &target, isa);
    let n = pack::write_pack(&out, &meta, &entries).map_err(|e| format!("cannot write '{}': {e}", out.display()))?;
    println!(
        "op2-pack: {} loops into {} ({:.2} s){}",
        n,
        out.display(),
        t.elapsed().as_secs_f64(),
        if skipped > 0 {
            format!("; {skipped} OpenCL entries skipped (OpenCL code is built by the driver at run time)")
        } else {
            String::new()
        }
    );
    Ok(())
}

fn compile_one(
    c: &Compiler,
    work: &Path,
    i: usize,
    dir: &Path,
    e: &ManifestEntry,
    target: &str,
) -> Result<NewEntry, String> {
    let src = dir.join(&e.file);
    let source =
        std::fs::read(&src).map_err(|err| format!("loop '{}': cannot read '{}': {err}", e.loop_name, src.display()))?;
    if let Some(arch) = target.strip_prefix("cuda-") {
        let text = String::from_utf8(source.clone())
            .map_err(|_| format!("loop '{}': '{}' is not UTF-8", e.loop_name, src.display()))?;
        let cubin = op2::jit::nvrtc::compile(&text, arch, &e.file).map_err(|err| {
            format!("loop '{}' (kernel '{}', {}, {arch}): {}", e.loop_name, e.kernel, src.display(), err.message)
        })?;
        return Ok(NewEntry {
            target: target.to_string(),
            source,
            kernel: e.kernel.clone(),
            loop_name: e.loop_name.clone(),
            library: cubin,
        });
    }
    let lib = work.join(format!("{i}.so"));
    let deps = work.join(format!("{i}.d"));
    match c.compile(&src, &lib, &deps, &op2::jit::fortran::objects_in(&String::from_utf8_lossy(&source))) {
        Ok(warnings) => {
            if !warnings.is_empty() {
                eprintln!("op2-pack: warnings compiling loop '{}' ({}):\n{warnings}", e.loop_name, src.display());
            }
        }
        Err(diag) => return Err(format!("loop '{}' (kernel '{}', {}): {diag}", e.loop_name, e.kernel, src.display())),
    }
    let library = std::fs::read(&lib)
        .map_err(|err| format!("loop '{}': cannot read the compiled library: {err}", e.loop_name))?;
    Ok(NewEntry {
        target: target.to_string(),
        source,
        kernel: e.kernel.clone(),
        loop_name: e.loop_name.clone(),
        library,
    })
}

fn list_pack(p: &Path) -> Result<(), String> {
    let bytes = std::fs::read(p).map_err(|e| format!("cannot read '{}': {e}", p.display()))?;
    let pack =
        Pack::parse(p, bytes, &pack::cpu_flags()).map_err(|why| format!("'{}' is refused here: {why}", p.display()))?;
    let m = &pack.meta;
    let mut text = format!("pack {}: op2 {} (loop ABI {})\n", p.display(), m.op2_version, m.abi);
    text += &format!("  compiler {}\n  flags {}\n  cpu {}\n  isa {}\n", m.compiler, m.flags, m.cpu, m.isa.join(" "));
    for e in &pack.entries {
        let lib = pack.library(e);
        let kind = if lib.starts_with(b"\x7fELF") { "ELF" } else { "data" };
        text += &format!(
            "  {} {} loop '{}' kernel '{}' ({kind}, {} bytes)\n",
            e.target,
            &e.hash[..12],
            e.loop_name,
            e.kernel,
            lib.len()
        );
    }
    text += "accepted by this op2 and CPU\n";
    // A reader that stops early (`op2-pack --list P | grep -q ...`) closes the pipe: that is not
    // an error of the listing (println! would panic on it).
    use std::io::Write;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write the listing: {e}")),
        _ => Ok(()),
    }
}
