//! `ParLoop` from Rust, no FFI: `new` applies the argument rules before anything is generated
//! or compiled, `generate` gives each target's code without compiling (and the same code
//! `OP2_GENERATE` writes), and `compute` runs the loop; the shape is the key of the code cache.

use op2::arg::{Access, RawArg};
use op2::config::Config;
use op2::context::Context;
use op2::core::ElemType;
use op2::error::ErrorCode;
use op2::exec::{ParLoop, Target};
use std::path::PathBuf;

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("op2-parloop-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn context(cache: &std::path::Path, extra: &[String]) -> Context {
    let mut tokens = vec![format!("OP2_CACHE_DIR={}", cache.display()), "OP2_BACKEND=seq".to_string()];
    tokens.extend_from_slice(extra);
    Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap()
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn doubles(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect()
}

/// Edges incrementing their two nodes: res[n] += w * (x[a] - x[b]) (+ for a, - for b),
/// with a global sum of w over edges.
struct Mesh {
    ctx: Context,
    edges: op2::core::SetId,
    e2n: op2::core::MapId,
    x: op2::core::DatId,
    res: op2::core::DatId,
    k: op2::core::KernelId,
}

fn mesh(ctx: Context) -> Mesh {
    let mut ctx = ctx;
    let nodes = ctx.decl_set(4, "nodes").unwrap();
    let edges = ctx.decl_set(3, "edges").unwrap();
    let e2n = ctx.decl_map(edges, nodes, 2, &[0, 1, 1, 2, 2, 3], "e2n").unwrap();
    let x = ctx.decl_dat(nodes, 1, ElemType::Double, Some(&f64s(&[1.0, 4.0, 9.0, 16.0])), "x", "t").unwrap();
    let res = ctx.decl_dat(nodes, 1, ElemType::Double, Some(&f64s(&[0.0; 4])), "res", "t").unwrap();
    ctx.decl_const(1, ElemType::Double, &f64s(&[0.5]), "w", "t").unwrap();
    let k = ctx
        .decl_kernel(
            "void flux(const double *xa, const double *xb, double *ra, double *rb, double *sum) {\n\
             \x20 double f = w * (*xa - *xb);\n  *ra += f;\n  *rb -= f;\n  *sum += w;\n}\n",
            "flux",
        )
        .unwrap();
    Mesh { ctx, edges, e2n, x, res, k }
}

fn args(m: &Mesh, sum: &mut f64) -> Vec<RawArg> {
    vec![
        RawArg::Dat { dat: m.x, map: Some(m.e2n), idx: 0, acc: Access::Read, opt: None },
        RawArg::Dat { dat: m.x, map: Some(m.e2n), idx: 1, acc: Access::Read, opt: None },
        RawArg::Dat { dat: m.res, map: Some(m.e2n), idx: 0, acc: Access::Inc, opt: None },
        RawArg::Dat { dat: m.res, map: Some(m.e2n), idx: 1, acc: Access::Inc, opt: None },
        RawArg::Gbl { ptr: sum as *mut f64 as *mut u8, dim: 1, ty: ElemType::Double, acc: Access::Inc },
    ]
}

#[test]
fn new_generate_compute() {
    let cache = dir("ngc");
    let mut m = mesh(context(&cache, &[]));
    let mut sum = 1.0f64;
    let a = args(&m, &mut sum);
    let (edges, k) = (m.edges, m.k);

    // generate() compiles nothing, and gives every target's code with the kernel inlined.
    let l = ParLoop::bind(&mut m.ctx, k, "flux", edges, &a).unwrap();
    assert_eq!(l.shape().args.len(), 5);
    let host = l.generate(&m.ctx, Target::Host).unwrap();
    let cl = l.generate(&m.ctx, Target::OpenCl).unwrap();
    let cu = l.generate(&m.ctx, Target::Cuda).unwrap();
    assert_eq!(host.len(), 1);
    assert!(host[0].source.contains("double f = w * (*xa - *xb);"), "{}", host[0].source);
    assert_eq!(cl.len(), 1);
    assert!(cl[0].source.contains("__kernel") && cl[0].source.contains("FP_CONTRACT OFF"));
    // The constant's value is compiled into device code.
    assert!(cl[0].source.contains("5.0") || cl[0].source.contains("0.5"), "{}", cl[0].source);
    // cuda: one source per variant the backend may pick for an indirect increment.
    let variants: Vec<&str> = cu.iter().filter_map(|g| g.variant.as_deref()).collect();
    assert!(variants.contains(&"colour") && variants.contains(&"atomics"), "{variants:?}");
    assert!(cu.iter().all(|g| g.source.contains("__global__")));
    // The same shape generates the same code (deterministic).
    assert_eq!(l.generate(&m.ctx, Target::OpenCl).unwrap(), cl);
    l.compute(&mut m.ctx).unwrap();
    assert_eq!(m.ctx.jit.stats.compiles + m.ctx.jit.stats.disk_hits, 1);

    // res: node 0: +0.5*(1-4) = -1.5; node 1: +1.5 + 0.5*(4-9) = -1; node 2: +2.5 + 0.5*(9-16) = -1;
    // node 3: +3.5. sum: 1 + 3 * 0.5.
    let mut out = vec![0u8; 32];
    m.ctx.fetch(m.res, 0, 3, &mut out).unwrap();
    assert_eq!(doubles(&out), vec![-1.5, -1.0, -1.0, 3.5]);
    assert_eq!(sum, 2.5);

    // A second loop of the same shape finds its code: no new compile.
    let a = args(&m, &mut sum);
    op2::exec::chain::par_loop(&mut m.ctx, k, "flux", edges, &a).unwrap();
    assert_eq!(m.ctx.jit.stats.compiles + m.ctx.jit.stats.disk_hits, 1);
    assert_eq!(m.ctx.loops.len(), 1);
    assert_eq!(sum, 4.0);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn new_checks_before_anything_is_generated() {
    let cache = dir("rules");
    let mut m = mesh(context(&cache, &[]));
    let mut sum = 0.0f64;
    let mut a = args(&m, &mut sum);
    // A direct argument on the node set in a loop over edges.
    a[0] = RawArg::Dat { dat: m.x, map: None, idx: -1, acc: Access::Read, opt: None };
    let e = ParLoop::bind(&mut m.ctx, m.k, "flux", m.edges, &a).err().unwrap();
    assert_eq!(e.code, ErrorCode::ArgSet, "{}", e.message);
    assert!(e.message.contains("op_par_loop 'flux'") && e.message.contains("'x'"), "{}", e.message);
    // A map column out of range.
    let mut a = args(&m, &mut sum);
    a[1] = RawArg::Dat { dat: m.x, map: Some(m.e2n), idx: 2, acc: Access::Read, opt: None };
    let e = ParLoop::bind(&mut m.ctx, m.k, "flux", m.edges, &a).err().unwrap();
    assert_eq!(e.code, ErrorCode::ArgIdx, "{}", e.message);
    assert!(
        e.message.starts_with("op_par_loop 'flux', arg 1 (op_arg_dat) 'x': idx 2 is out of range for map 'e2n'"),
        "{}",
        e.message
    );
    // A global with a NULL pointer, and OP_WRITE on a global.
    let mut a = args(&m, &mut sum);
    a[4] = RawArg::Gbl { ptr: std::ptr::null_mut(), dim: 1, ty: ElemType::Double, acc: Access::Inc };
    let e = ParLoop::bind(&mut m.ctx, m.k, "flux", m.edges, &a).err().unwrap();
    assert_eq!(e.code, ErrorCode::NullArgument, "{}", e.message);
    let mut a = args(&m, &mut sum);
    if let RawArg::Gbl { acc, .. } = &mut a[4] {
        *acc = Access::Write;
    }
    let e = ParLoop::bind(&mut m.ctx, m.k, "flux", m.edges, &a).err().unwrap();
    assert_eq!(e.code, ErrorCode::ArgAccess, "{}", e.message);
    // Kernel parameters against the descriptors: five parameters, four arguments.
    let a = args(&m, &mut sum);
    let e = ParLoop::bind(&mut m.ctx, m.k, "flux", m.edges, &a[..4]).err().unwrap();
    assert_eq!(e.code, ErrorCode::Compile, "{}", e.message);
    assert_eq!(m.ctx.jit.stats.compiles + m.ctx.jit.stats.disk_hits, 0);
    assert!(m.ctx.loops.is_empty());
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn generate_equals_static_generation() {
    let cache = dir("gen-cache");
    let out = dir("gen-out");
    let extra = [format!("OP2_GENERATE={}", out.display()), "OP2_GENERATE_TARGETS=host,opencl,cuda".to_string()];
    let mut m = mesh(context(&cache, &extra));
    let mut sum = 0.0f64;
    let a = args(&m, &mut sum);
    let l = ParLoop::bind(&mut m.ctx, m.k, "flux", m.edges, &a).unwrap();
    let mut want: Vec<String> = Vec::new();
    for t in [Target::Host, Target::OpenCl, Target::Cuda] {
        want.extend(l.generate(&m.ctx, t).unwrap().into_iter().map(|g| g.source));
    }
    l.compute(&mut m.ctx).unwrap();
    let mut got: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("flux-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "OP2_GENERATE wrote other code than ParLoop::generate gives");
    let _ = std::fs::remove_dir_all(&cache);
    let _ = std::fs::remove_dir_all(&out);
}
