//! The JIT through a `Context` built directly (no FFI): compile once, hit memory, load from
//! disk in a fresh session, rebuild a corrupt entry, constants without recompiling, and
//! compile errors that point into the kernel.

use op2::arg::{Access, RawArg};
use op2::config::Config;
use op2::context::Context;
use op2::core::ElemType;
use op2::exec::chain::par_loop;
use std::path::PathBuf;

fn cache_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("op2-jit-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn context(dir: &std::path::Path) -> Context {
    let tokens = vec![format!("OP2_CACHE_DIR={}", dir.display()), "OP2_BACKEND=seq".to_string()];
    Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap()
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// y[e] = x[e] * a + b[1], with constants `a` (scalar) and `b` (array).
fn run_axpy(ctx: &mut Context, a: f64) -> Vec<f64> {
    let set = ctx.decl_set(3, "s").unwrap();
    let x = ctx.decl_dat(set, 1, ElemType::Double, Some(&f64s(&[1.0, 2.0, 3.0])), "x", "t").unwrap();
    let y = ctx.decl_dat(set, 1, ElemType::Double, None, "y", "t").unwrap();
    ctx.decl_const(1, ElemType::Double, &f64s(&[a]), "a", "t").unwrap();
    ctx.decl_const(2, ElemType::Double, &f64s(&[0.0, 0.5]), "b", "t").unwrap();
    let k = ctx.decl_kernel("void axpy(const double *x, double *y) { *y = *x * a + b[1]; }", "axpy").unwrap();
    let args = [
        RawArg::Dat { dat: x, map: None, idx: -1, acc: Access::Read, opt: None },
        RawArg::Dat { dat: y, map: None, idx: -1, acc: Access::Write, opt: None },
    ];
    par_loop(ctx, k, "axpy", set, &args).unwrap();
    let mut out = vec![0u8; 24];
    ctx.fetch(y, 0, 2, &mut out).unwrap();
    out.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn compile_then_memory_then_disk_then_rebuild_corrupt() {
    let dir = cache_dir("cycle");
    {
        let mut ctx = context(&dir);
        assert_eq!(run_axpy(&mut ctx, 2.0), vec![2.5, 4.5, 6.5]);
        assert_eq!(ctx.jit.stats.compiles, 1);
        // The same kernel declared again is the same kernel: its compiled loop is reused.
        assert_eq!(run_axpy(&mut ctx, 3.0), vec![3.5, 6.5, 9.5]);
        assert_eq!((ctx.jit.stats.compiles, ctx.jit.stats.memory_hits), (1, 0));
        assert_eq!(ctx.loops.len(), 1);
    }
    {
        // A new session finds the entry on disk.
        let mut ctx = context(&dir);
        assert_eq!(run_axpy(&mut ctx, 1.0), vec![1.5, 2.5, 3.5]);
        assert_eq!((ctx.jit.stats.compiles, ctx.jit.stats.disk_hits), (0, 1));
    }
    // Corrupt every entry: the next session detects it and rebuilds.
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "so") {
            let mut b = std::fs::read(&p).unwrap();
            b.truncate(b.len() / 2);
            std::fs::write(&p, b).unwrap();
        }
    }
    {
        let mut ctx = context(&dir);
        assert_eq!(run_axpy(&mut ctx, 1.0), vec![1.5, 2.5, 3.5]);
        assert_eq!((ctx.jit.stats.compiles, ctx.jit.stats.rebuilt_corrupt), (1, 1));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_errors_carry_kernel_line_numbers_and_source_path() {
    let dir = cache_dir("err");
    let mut ctx = context(&dir);
    let set = ctx.decl_set(2, "s").unwrap();
    let x = ctx.decl_dat(set, 1, ElemType::Double, None, "x", "t").unwrap();
    let k = ctx.decl_kernel("void bad(double *x)\n{\n  x[0] = undefined_thing;\n}\n", "bad").unwrap();
    let args = [RawArg::Dat { dat: x, map: None, idx: -1, acc: Access::Write, opt: None }];
    let e = par_loop(&mut ctx, k, "badloop", set, &args).unwrap_err();
    assert_eq!(e.code, op2::ErrorCode::Compile);
    assert!(e.message.starts_with("op_par_loop 'badloop' (kernel 'bad'): kernel does not compile"), "{}", e.message);
    assert!(e.message.contains("kernel:bad:3:"), "{}", e.message);
    let path = e.message.split("generated source: ").nth(1).unwrap().split(';').next().unwrap();
    assert!(std::fs::read_to_string(path).unwrap().contains("undefined_thing"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn generated_code_is_deterministic_and_dumped() {
    let dir = cache_dir("dump");
    let dump = dir.join("dump");
    let tokens = vec![format!("OP2_CACHE_DIR={}", dir.display()), format!("OP2_DUMP_SOURCE={}", dump.display())];
    let mut ctx = Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap();
    run_axpy(&mut ctx, 2.0);
    let files: Vec<_> = std::fs::read_dir(&dump).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.starts_with("/* op2 loop 'axpy' (kernel 'axpy'), target host C"));
    // Only the constants the kernel uses, in name order.
    assert!(text.contains("static double a;\nstatic double b[2];\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A host library written by hand: `y[i] = T_K` over the range, with `T_K` from `t_k.h`.
const HEADER_SRC: &str = "#include \"t_k.h\"\n\
__attribute__((visibility(\"default\"))) void op2_loop(int start, int end, void *const *slots) {\n\
  int *y = (int *)slots[0];\n\
  for (int i = start; i < end; i++) y[i] = T_K;\n\
}\n";

fn call(lib: &op2::jit::HostLibrary) -> Vec<i32> {
    let mut y = vec![0i32; 3];
    let slots = [y.as_mut_ptr() as *mut std::ffi::c_void];
    // SAFETY: the library's op2_loop writes slots[0][start..end] as ints.
    unsafe { (lib.loop_fn)(0, 3, slots.as_ptr()) };
    y
}

fn jit_with_include(dir: &std::path::Path, inc: &std::path::Path) -> op2::jit::Jit {
    use op2::jit::{cache::DiskCache, Compiler, Jit};
    Jit::new(Compiler::new("cc", &format!("-I{}", inc.display())), DiskCache::open(dir).unwrap(), None)
}

#[test]
fn an_edited_header_means_a_rebuild_in_memory_and_on_disk() {
    let dir = cache_dir("deps");
    let inc = cache_dir("deps-inc");
    std::fs::create_dir_all(&inc).unwrap();
    let header = inc.join("t_k.h");
    std::fs::write(&header, "#define T_K 3\n").unwrap();
    let mut jit = jit_with_include(&dir, &inc);
    let lib = jit.host_library(HEADER_SRC, "t", "t").unwrap();
    assert_eq!(call(&lib), vec![3, 3, 3]);
    assert_eq!(lib.deps.len(), 1, "{:?}", lib.deps);
    assert_eq!(lib.deps[0].path, header);
    // Same source, header unchanged: the in-memory library.
    let again = jit.host_library(HEADER_SRC, "t", "t").unwrap();
    assert!(std::sync::Arc::ptr_eq(&lib, &again));
    // Header edited: the same process rebuilds (memory and disk entries are both stale).
    std::fs::write(&header, "#define T_K 5\n").unwrap();
    let new = jit.host_library(HEADER_SRC, "t", "t").unwrap();
    assert_eq!(call(&new), vec![5, 5, 5]);
    assert_eq!((jit.stats.compiles, jit.stats.rebuilt_stale, jit.stats.memory_hits), (2, 1, 1));
    // The library loaded first still runs its own code.
    assert_eq!(call(&lib), vec![3, 3, 3]);
    // A new session finds the rebuilt entry on disk and uses it.
    let mut fresh = jit_with_include(&dir, &inc);
    assert_eq!(call(&fresh.host_library(HEADER_SRC, "t", "t").unwrap()), vec![5, 5, 5]);
    assert_eq!((fresh.stats.compiles, fresh.stats.disk_hits), (0, 1));
    // Back to the old contents in another session: stale again, rebuilt.
    std::fs::write(&header, "#define T_K 3\n").unwrap();
    let mut third = jit_with_include(&dir, &inc);
    assert_eq!(call(&third.host_library(HEADER_SRC, "t", "t").unwrap()), vec![3, 3, 3]);
    assert_eq!((third.stats.compiles, third.stats.rebuilt_stale), (1, 1));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&inc);
}

#[test]
fn the_cache_directory_is_pinned_at_open() {
    let base = cache_dir("pinned");
    std::fs::create_dir_all(base.join("a")).unwrap();
    std::fs::create_dir_all(base.join("b")).unwrap();
    let link = base.join("link");
    std::os::unix::fs::symlink(base.join("a"), &link).unwrap();
    let cache = op2::jit::cache::DiskCache::open(&link).unwrap();
    assert_eq!(cache.dir(), base.join("a").canonicalize().unwrap());
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(base.join("b"), &link).unwrap();
    let mut jit = op2::jit::Jit::new(op2::jit::Compiler::new("cc", ""), cache, None);
    let src = HEADER_SRC.replace("#include \"t_k.h\"", "#define T_K 9");
    assert_eq!(call(&jit.host_library(&src, "t", "t").unwrap()), vec![9, 9, 9]);
    assert_eq!(std::fs::read_dir(base.join("b")).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(base.join("a")).unwrap().count(), 2); // <key>.so and <key>.c
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn sessions_sharing_an_entry_never_get_another_library() {
    // Two sessions load the same entry; the second ends; the first then loads other entries.
    // The loader knows libraries by `/proc/self/fd/N`: a name left attached to a loaded library
    // after its descriptor closed would make a later load of another file with that descriptor
    // number return the old library.
    let dir = cache_dir("shared");
    let src = |k: i32| HEADER_SRC.replace("#include \"t_k.h\"", &format!("#define T_K {k}"));
    let mut one =
        op2::jit::Jit::new(op2::jit::Compiler::new("cc", ""), op2::jit::cache::DiskCache::open(&dir).unwrap(), None);
    let a = one.host_library(&src(1), "t", "t").unwrap();
    {
        let mut two = op2::jit::Jit::new(
            op2::jit::Compiler::new("cc", ""),
            op2::jit::cache::DiskCache::open(&dir).unwrap(),
            None,
        );
        assert_eq!(call(&two.host_library(&src(1), "t", "t").unwrap()), vec![1, 1, 1]);
        assert_eq!(two.stats.disk_hits, 1);
    }
    for k in 2..6 {
        assert_eq!(call(&one.host_library(&src(k), "t", "t").unwrap()), vec![k, k, k]);
    }
    assert_eq!(call(&a), vec![1, 1, 1]);
    let _ = std::fs::remove_dir_all(&dir);
}
