//! `op2-pack DIR [DIR...] -o FILE`: compiles the host code of `OP2_GENERATE` directories into
//! a loop pack that `OP2_LOOP_PACK=FILE` loads without a C compiler (see `op2::jit::pack`).
//! `op2-pack --list FILE` prints what a pack holds and whether this machine accepts it.
//!
//! The compiler and flags are the JIT's: `OP2_CC` (default `cc`) and op2's flags followed by
//! `OP2_CFLAGS` (e.g. `OP2_CFLAGS=-march=x86-64-v3` for a pack that runs on any CPU with
//! AVX2, instead of this CPU's `-march=native`). Kernel errors surface here, with the loop's
//! name, before any job runs. Loops are compiled in parallel (`--jobs N`, default: the CPUs).

use op2::generate::{read_manifest, ManifestEntry};
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
environment: OP2_CC (compiler, default cc), OP2_CFLAGS (appended to op2's flags)";

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
    let mut todo: Vec<(PathBuf, ManifestEntry)> = Vec::new();
    let mut skipped = 0;
    for d in &dirs {
        let entries = read_manifest(d).map_err(|e| format!("{}: cannot read its manifest.jsonl: {e}", d.display()))?;
        for e in entries {
            if e.target == pack::HOST {
                if !todo.iter().any(|(_, t)| t.file == e.file) {
                    todo.push((d.clone(), e));
                }
            } else {
                skipped += 1;
            }
        }
    }
    if todo.is_empty() {
        return Err("the manifests list no host loops (generate with OP2_GENERATE_TARGETS=host)".into());
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
        todo.par_iter().enumerate().map(|(i, (dir, e))| compile_one(&compiler, &work, i, dir, e)).collect()
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
            format!("; {skipped} non-host entries skipped (OpenCL code is built by the driver at run time)")
        } else {
            String::new()
        }
    );
    Ok(())
}

fn compile_one(c: &Compiler, work: &Path, i: usize, dir: &Path, e: &ManifestEntry) -> Result<NewEntry, String> {
    let src = dir.join(&e.file);
    let source =
        std::fs::read(&src).map_err(|err| format!("loop '{}': cannot read '{}': {err}", e.loop_name, src.display()))?;
    let lib = work.join(format!("{i}.so"));
    let deps = work.join(format!("{i}.d"));
    match c.compile(&src, &lib, &deps) {
        Ok(warnings) => {
            if !warnings.is_empty() {
                eprintln!("op2-pack: warnings compiling loop '{}' ({}):\n{warnings}", e.loop_name, src.display());
            }
        }
        Err(diag) => return Err(format!("loop '{}' (kernel '{}', {}): {diag}", e.loop_name, e.kernel, src.display())),
    }
    let library = std::fs::read(&lib)
        .map_err(|err| format!("loop '{}': cannot read the compiled library: {err}", e.loop_name))?;
    Ok(NewEntry { target: e.target.clone(), source, kernel: e.kernel.clone(), loop_name: e.loop_name.clone(), library })
}

fn list_pack(p: &Path) -> Result<(), String> {
    let bytes = std::fs::read(p).map_err(|e| format!("cannot read '{}': {e}", p.display()))?;
    let pack =
        Pack::parse(p, bytes, &pack::cpu_flags()).map_err(|why| format!("'{}' is refused here: {why}", p.display()))?;
    let m = &pack.meta;
    println!("pack {}: op2 {} (loop ABI {})", p.display(), m.op2_version, m.abi);
    println!("  compiler {}\n  flags {}\n  cpu {}\n  isa {}", m.compiler, m.flags, m.cpu, m.isa.join(" "));
    for e in &pack.entries {
        println!("  {} {} loop '{}' kernel '{}'", e.target, &e.hash[..12], e.loop_name, e.kernel);
    }
    println!("accepted by this op2 and CPU");
    Ok(())
}
