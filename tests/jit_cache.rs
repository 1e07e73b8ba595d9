//! The JIT through a `Context` built directly (no FFI): compile once, hit memory, load from
//! disk in a fresh session, rebuild a corrupt entry, constants without recompiling, and
//! compile errors that point into the kernel.

use op2::arg::{Access, RawArg};
use op2::config::Config;
use op2::context::Context;
use op2::core::ElemType;
use op2::exec::par_loop;
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
