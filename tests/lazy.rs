//! Lazy evaluation and sparse-tiled chains from Rust, no FFI (issue 23, points 4, 5, 9): an
//! Airfoil-shaped chain (a direct cell loop, an edge loop reading cells and incrementing them
//! through a map, a boundary loop, a cell update with a global sum) on a random mesh, run eagerly
//! and queued (tiled on seq and threads, with the tiling checked by simulation), must give the
//! same dats: bit for bit on seq, and exactly on threads (every value is a small integer, so
//! sums do not depend on order); the global sum lands at the flush.

use op2::arg::{Access, RawArg};
use op2::config::Config;
use op2::context::Context;
use op2::core::{DatId, ElemType, KernelId, MapId, SetId};

fn dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("op2-lazy-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn doubles(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect()
}

/// A small deterministic generator (xorshift), so the meshes are the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Mesh {
    cells: SetId,
    edges: SetId,
    bedges: SetId,
    pecell: MapId,
    pbecell: MapId,
    q: DatId,
    qold: DatId,
    res: DatId,
    k: [KernelId; 4],
}

/// Cells in a ring with edges between neighbours plus some random long edges (a mesh without
/// locality), boundary edges on random cells.
fn mesh(ctx: &mut Context, ncells: usize, seed: u64) -> Mesh {
    let mut rng = Rng(seed);
    let mut e2c: Vec<i32> = Vec::new();
    for c in 0..ncells {
        e2c.extend([c as i32, ((c + 1) % ncells) as i32]);
        if rng.below(4) == 0 {
            e2c.extend([c as i32, rng.below(ncells) as i32]);
        }
    }
    let nedges = e2c.len() / 2;
    let nb = ncells / 10 + 1;
    let b2c: Vec<i32> = (0..nb).map(|_| rng.below(ncells) as i32).collect();
    let q0: Vec<f64> = (0..ncells).map(|_| rng.below(8) as f64).collect();
    let cells = ctx.decl_set(ncells as i32, "cells").unwrap();
    let edges = ctx.decl_set(nedges as i32, "edges").unwrap();
    let bedges = ctx.decl_set(nb as i32, "bedges").unwrap();
    let pecell = ctx.decl_map(edges, cells, 2, &e2c, "pecell").unwrap();
    let pbecell = ctx.decl_map(bedges, cells, 1, &b2c, "pbecell").unwrap();
    let q = ctx.decl_dat(cells, 1, ElemType::Double, Some(&f64s(&q0)), "q", "t").unwrap();
    let qold = ctx.decl_dat(cells, 1, ElemType::Double, None, "qold", "t").unwrap();
    let res = ctx.decl_dat(cells, 1, ElemType::Double, None, "res", "t").unwrap();
    let k = [
        ctx.decl_kernel("void save(const double *q, double *qold) { *qold = *q; }\n", "save").unwrap(),
        ctx.decl_kernel(
            "void flux(const double *q1, const double *q2, double *r1, double *r2) {\n\
             \x20 double f = *q1 - *q2;\n  *r1 += f + 1.0;\n  *r2 -= f;\n}\n",
            "flux",
        )
        .unwrap(),
        ctx.decl_kernel("void bflux(const double *q, double *r) { *r += 2.0 * *q; }\n", "bflux").unwrap(),
        ctx.decl_kernel(
            "void upd(const double *qold, double *q, double *r, double *s) {\n\
             \x20 *q = *qold + (*r > 0.0 ? 1.0 : -1.0); *s += *r; *r = 0.0;\n\
             \x20 if (*q > 64.0) *q -= 64.0;\n  if (*q < -64.0) *q += 64.0;\n}\n",
            "upd",
        )
        .unwrap(),
    ];
    Mesh { cells, edges, bedges, pecell, pbecell, q, qold, res, k }
}

fn dat(d: DatId, map: Option<MapId>, idx: i32, acc: Access) -> RawArg {
    RawArg::Dat { dat: d, map, idx, acc, opt: None }
}

/// One iteration: save, then twice (flux, bflux, update with a global sum). Returns the sums.
fn iteration(ctx: &mut Context, m: &Mesh, sums: &mut [f64; 2]) {
    use op2::exec::chain::par_loop;
    par_loop(ctx, m.k[0], "save", m.cells, &[dat(m.q, None, -1, Access::Read), dat(m.qold, None, -1, Access::Write)])
        .unwrap();
    for s in sums.iter_mut() {
        let a = [
            dat(m.q, Some(m.pecell), 0, Access::Read),
            dat(m.q, Some(m.pecell), 1, Access::Read),
            dat(m.res, Some(m.pecell), 0, Access::Inc),
            dat(m.res, Some(m.pecell), 1, Access::Inc),
        ];
        par_loop(ctx, m.k[1], "flux", m.edges, &a).unwrap();
        let a = [dat(m.q, Some(m.pbecell), 0, Access::Read), dat(m.res, Some(m.pbecell), 0, Access::Inc)];
        par_loop(ctx, m.k[2], "bflux", m.bedges, &a).unwrap();
        let a = [
            dat(m.qold, None, -1, Access::Read),
            dat(m.q, None, -1, Access::Write),
            dat(m.res, None, -1, Access::Rw),
            RawArg::Gbl { ptr: s as *mut f64 as *mut u8, dim: 1, ty: ElemType::Double, acc: Access::Inc },
        ];
        par_loop(ctx, m.k[3], "upd", m.cells, &a).unwrap();
    }
}

/// Runs `iters` iterations (each one chain when `chain`) and returns q, res and every sum.
fn run(backend: &str, extra: &[&str], ncells: usize, seed: u64, iters: usize, chain: bool) -> (Vec<f64>, Vec<f64>) {
    // One cache per test process: the kernels compile once.
    let cache = std::env::temp_dir().join(format!("op2-lazy-cache-{}", std::process::id()));
    let mut tokens = vec![format!("OP2_CACHE_DIR={}", cache.display()), format!("OP2_BACKEND={backend}")];
    tokens.extend(extra.iter().map(|s| s.to_string()));
    let mut ctx = Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap();
    let m = mesh(&mut ctx, ncells, seed);
    let mut all_sums = Vec::new();
    for _ in 0..iters {
        let mut sums = [0.0f64; 2];
        if chain {
            ctx.lazy.chain = Some("iteration".to_string());
        }
        iteration(&mut ctx, &m, &mut sums);
        if chain {
            // Inside the chain nothing has run yet: each sum holds op2's placeholder (a NaN)
            // until the chain runs and hands the results over (doc/lazy.md).
            assert!(sums.iter().all(|v| v.is_nan()), "{sums:?}");
            assert_eq!(ctx.lazy.queue.len(), 7);
            ctx.lazy.chain = None;
        }
        op2::exec::chain::flush(&mut ctx, "test").unwrap();
        assert!(ctx.lazy.queue.is_empty());
        all_sums.extend(sums);
    }
    let mut q = vec![0u8; 8 * ncells];
    ctx.fetch(m.q, 0, ncells - 1, &mut q).unwrap();
    let mut out = doubles(&q);
    ctx.fetch(m.res, 0, ncells - 1, &mut q).unwrap();
    out.extend(doubles(&q));
    (out, all_sums)
}

#[test]
fn queued_and_tiled_chains_equal_eager() {
    for (seed, ncells) in [(1u64, 300usize), (7, 1000), (42, 2500)] {
        for backend in ["seq", "threads"] {
            let (eager, eager_sums) = run(backend, &[], ncells, seed, 3, false);
            for tile in ["OP2_TILE_SIZE=1", "OP2_TILE_SIZE=17", "OP2_TILE_SIZE=256"] {
                let lazy = ["OP2_LAZY=1", tile, "OP2_TILE_VERIFY=1"];
                let (got, sums) = run(backend, &lazy, ncells, seed, 3, false);
                assert!(got == eager, "{backend} {tile} seed {seed}: lazy dats differ from eager");
                assert_eq!(sums, eager_sums, "{backend} {tile} seed {seed}");
                let (got, sums) = run(backend, &[tile, "OP2_TILE_VERIFY=1"], ncells, seed, 3, true);
                assert!(got == eager, "{backend} {tile} seed {seed}: chained dats differ from eager");
                assert_eq!(sums, eager_sums, "{backend} {tile} seed {seed}: chained sums");
            }
            // Tiling off: the queue runs loop after loop.
            let (got, _) = run(backend, &["OP2_LAZY=1", "OP2_TILE_SIZE=0"], ncells, seed, 3, false);
            assert!(got == eager);
        }
    }
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("op2-lazy-cache-{}", std::process::id())));
}

/// A tile's iterations of an edge loop scattered over the set run as one list (the list
/// wrappers, `op2_loop_list` and `op2_loop_simd_list`), with the vectorised wrapper forced on
/// and off: dats and sums bit for bit eager's with the same wrapper, and the chain's timing row
/// says the edge loop was listed.
#[test]
fn listed_tiles_equal_eager_with_either_wrapper() {
    for simd in ["OP2_SIMD=on", "OP2_SIMD=off"] {
        for backend in ["seq", "threads"] {
            let (eager, eager_sums) = run(backend, &[simd], 3000, 5, 3, false);
            let lazy = ["OP2_LAZY=1", "OP2_TILE_SIZE=40", "OP2_TILE_VERIFY=1", simd];
            let (got, sums) = run(backend, &lazy, 3000, 5, 3, false);
            assert!(got == eager, "{backend} {simd}: listed tiles' dats differ from eager");
            assert_eq!(sums, eager_sums, "{backend} {simd}");
        }
    }
    // Which loops the tiling listed: the chain's row in op_timing_output.
    let cache = std::env::temp_dir().join(format!("op2-lazy-cache-{}", std::process::id()));
    let tokens =
        [format!("OP2_CACHE_DIR={}", cache.display()), "OP2_BACKEND=seq".to_string(), "OP2_TILE_SIZE=40".into()];
    let mut ctx = Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap();
    let m = mesh(&mut ctx, 3000, 5);
    ctx.lazy.chain = Some("iteration".to_string());
    iteration(&mut ctx, &m, &mut [0.0; 2]);
    ctx.lazy.chain = None;
    op2::exec::chain::flush(&mut ctx, "test").unwrap();
    let row = ctx.timings.loops().iter().find(|r| r.members.is_some()).and_then(|r| r.members.clone());
    let row = row.unwrap_or_default();
    // The seed loop's tiles are whole blocks of cells: never listed.
    assert!(row.contains("; listed: flux "), "{row}");
}

#[test]
fn a_reduction_outside_a_chain_runs_the_queue_before_it_returns() {
    let cache = dir("reduce");
    let tokens = vec![format!("OP2_CACHE_DIR={}", cache.display()), "OP2_BACKEND=seq".into(), "OP2_LAZY=1".into()];
    let mut ctx = Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap();
    let m = mesh(&mut ctx, 50, 3);
    let mut sums = [0.0f64; 2];
    op2::exec::chain::par_loop(
        &mut ctx,
        m.k[0],
        "save",
        m.cells,
        &[dat(m.q, None, -1, Access::Read), dat(m.qold, None, -1, Access::Write)],
    )
    .unwrap();
    // A loop without a reduction waits.
    assert_eq!(ctx.lazy.queue.len(), 1);
    let a = [
        dat(m.qold, None, -1, Access::Read),
        dat(m.q, None, -1, Access::Write),
        dat(m.res, None, -1, Access::Rw),
        RawArg::Gbl { ptr: &mut sums[0] as *mut f64 as *mut u8, dim: 1, ty: ElemType::Double, acc: Access::Inc },
    ];
    op2::exec::chain::par_loop(&mut ctx, m.k[3], "upd", m.cells, &a).unwrap();
    // A loop with one runs, with everything before it.
    assert!(ctx.lazy.queue.is_empty());
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_queue_holds_at_most_max_queue_loops() {
    let cache = dir("bound");
    let tokens = vec![format!("OP2_CACHE_DIR={}", cache.display()), "OP2_BACKEND=seq".into(), "OP2_LAZY=1".into()];
    let mut ctx = Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap();
    let m = mesh(&mut ctx, 40, 5);
    let mut longest = 0;
    for _ in 0..(2 * op2::exec::chain::MAX_QUEUE + 5) {
        let a = [dat(m.q, None, -1, Access::Read), dat(m.qold, None, -1, Access::Write)];
        op2::exec::chain::par_loop(&mut ctx, m.k[0], "save", m.cells, &a).unwrap();
        longest = longest.max(ctx.lazy.queue.len());
    }
    assert_eq!(longest, op2::exec::chain::MAX_QUEUE - 1);
    op2::exec::chain::flush(&mut ctx, "test").unwrap();
    let mut q = vec![0u8; 8 * 40];
    let mut qold = vec![0u8; 8 * 40];
    ctx.fetch(m.q, 0, 39, &mut q).unwrap();
    ctx.fetch(m.qold, 0, 39, &mut qold).unwrap();
    assert_eq!(q, qold);
    let _ = std::fs::remove_dir_all(&cache);
}

/// Soft fusion (issue 23, point 8): consecutive loops over one set whose dependencies are all
/// direct run as one generated loop; results are eager's (bit for bit on seq, exactly on threads:
/// small integers), reductions in a fused loop land in each loop's own variable, and two kernels
/// whose helpers clash in one unit run unfused, with the same results.
#[test]
fn fused_loops_equal_eager() {
    let clash = "static double twice(double v) { return 2.0 * v; }\n";
    let run = |backend: &str, lazy: bool, fuse: bool| -> (Vec<f64>, [f64; 2], usize, usize) {
        let cache = std::env::temp_dir().join(format!("op2-lazy-fuse-{}", std::process::id()));
        let mut tokens = vec![format!("OP2_CACHE_DIR={}", cache.display()), format!("OP2_BACKEND={backend}")];
        tokens.push(format!("OP2_FUSE={}", fuse as u8));
        tokens.push("OP2_TILE_SIZE=64".into());
        tokens.push("OP2_TILE_VERIFY=1".into());
        let mut ctx = Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap();
        let n = 1000usize;
        let cells = ctx.decl_set(n as i32, "cells").unwrap();
        let init: Vec<f64> = (0..n).map(|i| (i % 13) as f64).collect();
        let a = ctx.decl_dat(cells, 1, ElemType::Double, Some(&f64s(&init)), "a", "t").unwrap();
        let b = ctx.decl_dat(cells, 2, ElemType::Double, None, "b", "t").unwrap();
        let c = ctx.decl_dat(cells, 1, ElemType::Double, None, "c", "t").unwrap();
        let k1 = ctx
            .decl_kernel(&format!("{clash}void first(const double *a, double *b, const double *w) {{ b[0] = twice(*a) + *w; b[1] = *a; }}\n"), "first")
            .unwrap();
        let k2 = ctx
            .decl_kernel("void second(const double *b, double *c, double *s, const int *i) { *c = b[0] - b[1] + *i; *s += *c; }\n", "second")
            .unwrap();
        let k3 = ctx
            .decl_kernel(
                &format!("{clash}void third(double *a, const double *c) {{ *a = twice(*c) - *a; }}\n"),
                "third",
            )
            .unwrap();
        let mut w = Box::new(3.0f64);
        let wp: *mut f64 = &mut *w;
        let mut sums = [0.0f64; 2];
        for sum in sums.iter_mut() {
            if lazy {
                ctx.lazy.chain = Some("fuse".into());
            }
            let a1 = [
                dat(a, None, -1, Access::Read),
                dat(b, None, -1, Access::Write),
                RawArg::Gbl { ptr: wp as *mut u8, dim: 1, ty: ElemType::Double, acc: Access::Read },
            ];
            op2::exec::chain::par_loop(&mut ctx, k1, "first", cells, &a1).unwrap();
            // READ globals are taken at the call: the queued loop still reads 3.
            unsafe { *wp = 100.0 };
            let a2 = [
                dat(b, None, -1, Access::Read),
                dat(c, None, -1, Access::Write),
                RawArg::Gbl { ptr: sum as *mut f64 as *mut u8, dim: 1, ty: ElemType::Double, acc: Access::Inc },
                RawArg::Idx { map: None, idx: -1 },
            ];
            op2::exec::chain::par_loop(&mut ctx, k2, "second", cells, &a2).unwrap();
            let a3 = [dat(a, None, -1, Access::Rw), dat(c, None, -1, Access::Read)];
            op2::exec::chain::par_loop(&mut ctx, k3, "third", cells, &a3).unwrap();
            unsafe { *wp = 3.0 };
            if lazy {
                ctx.lazy.chain = None;
                op2::exec::chain::flush(&mut ctx, "test").unwrap();
            }
        }
        let mut out = vec![0u8; 8 * n];
        ctx.fetch(a, 0, n - 1, &mut out).unwrap();
        let fused_ok = ctx.lazy.fused.values().filter(|f| f.is_some()).count();
        let fused_no = ctx.lazy.fused.values().filter(|f| f.is_none()).count();
        (doubles(&out), sums, fused_ok, fused_no)
    };
    for backend in ["seq", "threads"] {
        let (eager, eager_sums, _, _) = run(backend, false, true);
        let (got, sums, ok, no) = run(backend, true, true);
        assert!(got == eager, "{backend}: fused chain differs from eager");
        assert_eq!(sums, eager_sums, "{backend}");
        // first+second+third: 'twice' twice in one unit does not compile; first+second does.
        assert_eq!((ok, no), (1, 1), "{backend}: fused units that compiled / did not");
        let (got, sums, ok, no) = run(backend, true, false);
        assert!(got == eager && sums == eager_sums);
        assert_eq!((ok, no), (0, 0));
    }
}

/// Device fusion (issue 23, point 10): on `opencl`, a chain's consecutive loops over one set with
/// only direct dependencies and nothing to colour or reduce run as one launch. The chain: three
/// direct loops (one with a READ global and `op_arg_idx`) and a loop reading through a map (one
/// launch), a loop incrementing through a map (alone), a loop reading through a map what the
/// next loop overwrites directly (a write after read through a map: not fused), that next loop
/// and a direct one (one launch), a loop with a global sum (alone): 5 launches instead of 8.
/// Results equal hand-computed values, eager and unfused ones, and so do the dats' transfer
/// counts. Runs where an OpenCL device is found.
/// The device tests of this file run one at a time (one OpenCL context at a time).
static DEVICE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn device_fusion_runs_direct_loops_as_one_launch() {
    let _one = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    if op2::backend::opencl::probe(None).is_err() {
        eprintln!("no OpenCL device: device fusion not tested");
        return;
    }
    let n = 600usize;
    let nn = n / 2 + 1;
    let a0: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let x0: Vec<f64> = (0..nn).map(|i| (i % 5) as f64).collect();
    let e0: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
    let c2n: Vec<i32> = (0..n).flat_map(|c| [(c / 2) as i32, ((c / 2 + 1) % nn) as i32]).collect();
    let prev: Vec<i32> = (0..n).map(|c| ((c + n - 1) % n) as i32).collect();
    let iters = 3;
    // The chain by hand.
    let (mut a, mut e, mut r) = (a0.clone(), e0.clone(), vec![0.0f64; nn]);
    let mut sums = Vec::new();
    for _ in 0..iters {
        let c: Vec<f64> = (0..n).map(|i| (a[i] * 3.0) - (a[i] + 1.0) + i as f64).collect();
        let d: Vec<f64> = (0..n).map(|i| x0[c2n[2 * i] as usize] + 2.0 * x0[c2n[2 * i + 1] as usize] + c[i]).collect();
        for i in 0..n {
            r[c2n[2 * i] as usize] += d[i];
            r[c2n[2 * i + 1] as usize] += 1.0;
        }
        let f: Vec<f64> = (0..n).map(|i| 3.0 * e[prev[i] as usize]).collect();
        for i in 0..n {
            e[i] += c[i];
        }
        for i in 0..n {
            a[i] = f[i] - e[i] - a[i];
        }
        sums.push(a.iter().sum::<f64>());
    }
    let expected = (a, e, r, sums);

    type Got = ((Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>), u64, Vec<(u64, u64)>, usize);
    let run = |chain: bool, fuse: bool| -> Got {
        let cache = std::env::temp_dir().join(format!("op2-lazy-devfuse-{}", std::process::id()));
        let tokens = vec![
            format!("OP2_CACHE_DIR={}", cache.display()),
            "OP2_BACKEND=opencl".to_string(),
            "OP2_INC=atomics".to_string(),
            format!("OP2_FUSE={}", fuse as u8),
        ];
        let mut ctx = Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap();
        let cells = ctx.decl_set(n as i32, "cells").unwrap();
        let nodes = ctx.decl_set(nn as i32, "nodes").unwrap();
        let pcn = ctx.decl_map(cells, nodes, 2, &c2n, "pcn").unwrap();
        let pprev = ctx.decl_map(cells, cells, 1, &prev, "pprev").unwrap();
        let da = ctx.decl_dat(cells, 1, ElemType::Double, Some(&f64s(&a0)), "a", "t").unwrap();
        let db = ctx.decl_dat(cells, 2, ElemType::Double, None, "b", "t").unwrap();
        let dc = ctx.decl_dat(cells, 1, ElemType::Double, None, "c", "t").unwrap();
        let dd = ctx.decl_dat(cells, 1, ElemType::Double, None, "d", "t").unwrap();
        let de = ctx.decl_dat(cells, 1, ElemType::Double, Some(&f64s(&e0)), "e", "t").unwrap();
        let df = ctx.decl_dat(cells, 1, ElemType::Double, None, "f", "t").unwrap();
        let dx = ctx.decl_dat(nodes, 1, ElemType::Double, Some(&f64s(&x0)), "x", "t").unwrap();
        let dr = ctx.decl_dat(nodes, 1, ElemType::Double, None, "r", "t").unwrap();
        let k = |ctx: &mut Context, src: &str, name: &str| ctx.decl_kernel(src, name).unwrap();
        let k1 = k(
            &mut ctx,
            "void first(const double *a, double *b, const double *w) { b[0] = *a * *w; b[1] = *a + 1.0; }\n",
            "first",
        );
        let k2 =
            k(&mut ctx, "void second(const double *b, double *c, const int *i) { *c = b[0] - b[1] + *i; }\n", "second");
        let k3 = k(&mut ctx, "void gather(const double *x0, const double *x1, const double *c, double *d) { *d = *x0 + 2.0 * *x1 + *c; }\n", "gather");
        let k4 = k(
            &mut ctx,
            "void scatter(const double *d, double *r0, double *r1) { *r0 += *d; *r1 += 1.0; }\n",
            "scatter",
        );
        let k5 = k(&mut ctx, "void neighbour(const double *e, double *f) { *f = 3.0 * *e; }\n", "neighbour");
        let k6 = k(&mut ctx, "void overwrite(double *e, const double *c) { *e = *e + *c; }\n", "overwrite");
        let k7 =
            k(&mut ctx, "void third(double *a, const double *f, const double *e) { *a = *f - *e - *a; }\n", "third");
        let k8 = k(&mut ctx, "void total(const double *a, double *s) { *s += *a; }\n", "total");
        let mut w = 3.0f64;
        let mut sums = vec![0.0f64; iters];
        let mut fused_launches = 0;
        for (it, s) in sums.iter_mut().enumerate() {
            let before = ctx.backend.launches();
            if chain {
                ctx.lazy.chain = Some("devfuse".into());
            }
            use op2::exec::chain::par_loop;
            let gw =
                RawArg::Gbl { ptr: &mut w as *mut f64 as *mut u8, dim: 1, ty: ElemType::Double, acc: Access::Read };
            par_loop(
                &mut ctx,
                k1,
                "first",
                cells,
                &[dat(da, None, -1, Access::Read), dat(db, None, -1, Access::Write), gw],
            )
            .unwrap();
            let idx = RawArg::Idx { map: None, idx: -1 };
            par_loop(
                &mut ctx,
                k2,
                "second",
                cells,
                &[dat(db, None, -1, Access::Read), dat(dc, None, -1, Access::Write), idx],
            )
            .unwrap();
            let a3 = [
                dat(dx, Some(pcn), 0, Access::Read),
                dat(dx, Some(pcn), 1, Access::Read),
                dat(dc, None, -1, Access::Read),
                dat(dd, None, -1, Access::Write),
            ];
            par_loop(&mut ctx, k3, "gather", cells, &a3).unwrap();
            let a4 = [
                dat(dd, None, -1, Access::Read),
                dat(dr, Some(pcn), 0, Access::Inc),
                dat(dr, Some(pcn), 1, Access::Inc),
            ];
            par_loop(&mut ctx, k4, "scatter", cells, &a4).unwrap();
            par_loop(
                &mut ctx,
                k5,
                "neighbour",
                cells,
                &[dat(de, Some(pprev), 0, Access::Read), dat(df, None, -1, Access::Write)],
            )
            .unwrap();
            par_loop(
                &mut ctx,
                k6,
                "overwrite",
                cells,
                &[dat(de, None, -1, Access::Rw), dat(dc, None, -1, Access::Read)],
            )
            .unwrap();
            let a7 = [dat(da, None, -1, Access::Rw), dat(df, None, -1, Access::Read), dat(de, None, -1, Access::Read)];
            par_loop(&mut ctx, k7, "third", cells, &a7).unwrap();
            let gs = RawArg::Gbl { ptr: s as *mut f64 as *mut u8, dim: 1, ty: ElemType::Double, acc: Access::Inc };
            par_loop(&mut ctx, k8, "total", cells, &[dat(da, None, -1, Access::Read), gs]).unwrap();
            if chain {
                ctx.lazy.chain = None;
                op2::exec::chain::flush(&mut ctx, "test").unwrap();
            }
            // The first iteration runs each loop at its call (a device compiles a shape's code then).
            if it == iters - 1 {
                fused_launches = ctx.backend.launches() - before;
            }
        }
        let get = |ctx: &mut Context, d: DatId, len: usize| {
            let mut out = vec![0u8; 8 * len];
            ctx.fetch(d, 0, len - 1, &mut out).unwrap();
            doubles(&out)
        };
        let got = (get(&mut ctx, da, n), get(&mut ctx, de, n), get(&mut ctx, dr, nn), sums);
        let units = ctx.lazy.device_fused.values().filter(|u| u.is_some()).count();
        let transfers = ctx.dats.iter().map(|d| (d.to_device, d.to_host)).collect();
        // op_timing_output: every loop counts each of its calls, fused or not; a fused chain
        // has its row (the first iteration ran each loop at its call), naming its groups.
        for l in ["first", "second", "gather", "scatter", "neighbour", "overwrite", "third", "total"] {
            let row = ctx.timings.loops().iter().find(|r| r.name == l).unwrap();
            assert_eq!(row.calls, iters as u64, "{l}: calls");
        }
        // (The chain is closed before its flush here: it goes by its first and last loops.)
        let chain_row = ctx.timings.loops().iter().find(|r| r.name == "chain:first..total");
        if chain && fuse {
            let row = chain_row.unwrap();
            assert_eq!(row.calls, iters as u64 - 1);
            assert!(
                row.members.as_deref().unwrap().starts_with(
                    "first+second+gather scatter neighbour overwrite+third total (on opencl: 2 fused launches"
                ),
                "{:?}",
                row.members
            );
        } else {
            assert!(chain_row.is_none());
        }
        (got, fused_launches, transfers, units)
    };
    let (eager, eager_launches, eager_moves, eager_units) = run(false, true);
    assert_eq!(eager, expected, "eager opencl differs from the hand-computed values");
    assert_eq!((eager_launches, eager_units), (8, 0));
    let (got, launches, moves, units) = run(true, true);
    assert_eq!(got, expected, "the fused chain differs from the hand-computed values");
    // first+second+gather, scatter, neighbour, overwrite+third, total.
    assert_eq!(launches, 5, "launches of a fused chain");
    assert_eq!(units, 2, "fused units");
    assert_eq!(moves, eager_moves, "transfers of a fused chain");
    let (got, launches, moves, units) = run(true, false);
    assert_eq!(got, expected);
    assert_eq!((launches, units), (8, 0), "OP2_FUSE=0: one launch a loop");
    assert_eq!(moves, eager_moves);
}

/// A fused device unit that does not compile (two kernels with a helper of one name and other
/// code) runs its loops unfused, now and later, with eager's results.
#[test]
fn a_device_unit_that_does_not_compile_runs_unfused() {
    let _one = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    if op2::backend::opencl::probe(None).is_err() {
        eprintln!("no OpenCL device: device fusion not tested");
        return;
    }
    let run = |chain: bool| -> (Vec<f64>, u64, usize, usize) {
        let cache = std::env::temp_dir().join(format!("op2-lazy-devclash-{}", std::process::id()));
        let tokens = vec![format!("OP2_CACHE_DIR={}", cache.display()), "OP2_BACKEND=opencl".to_string()];
        let mut ctx = Context::new(Config::from_env(&tokens, 0).unwrap()).unwrap();
        let n = 100usize;
        let cells = ctx.decl_set(n as i32, "cells").unwrap();
        let init: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let a = ctx.decl_dat(cells, 1, ElemType::Double, Some(&f64s(&init)), "a", "t").unwrap();
        let b = ctx.decl_dat(cells, 1, ElemType::Double, None, "b", "t").unwrap();
        let k1 = ctx
            .decl_kernel(
                "static double h(double v) { return 2.0 * v; }\nvoid one(const double *a, double *b) { *b = h(*a); }\n",
                "one",
            )
            .unwrap();
        let k2 = ctx
            .decl_kernel(
                "static double h(double v) { return v + 1.0; }\nvoid two(double *a, const double *b) { *a = h(*b); }\n",
                "two",
            )
            .unwrap();
        let mut launches = 0;
        for _ in 0..3 {
            let before = ctx.backend.launches();
            if chain {
                ctx.lazy.chain = Some("clash".into());
            }
            op2::exec::chain::par_loop(
                &mut ctx,
                k1,
                "one",
                cells,
                &[dat(a, None, -1, Access::Read), dat(b, None, -1, Access::Write)],
            )
            .unwrap();
            op2::exec::chain::par_loop(
                &mut ctx,
                k2,
                "two",
                cells,
                &[dat(a, None, -1, Access::Write), dat(b, None, -1, Access::Read)],
            )
            .unwrap();
            if chain {
                ctx.lazy.chain = None;
                op2::exec::chain::flush(&mut ctx, "test").unwrap();
            }
            launches = ctx.backend.launches() - before;
        }
        let mut out = vec![0u8; 8 * n];
        ctx.fetch(a, 0, n - 1, &mut out).unwrap();
        let ok = ctx.lazy.device_fused.values().filter(|u| u.is_some()).count();
        let no = ctx.lazy.device_fused.values().filter(|u| u.is_none()).count();
        (doubles(&out), launches, ok, no)
    };
    let (eager, _, _, _) = run(false);
    let want: Vec<f64> = (0..100).map(|i| 8.0 * i as f64 + 7.0).collect();
    assert_eq!(eager, want);
    let (got, launches, ok, no) = run(true);
    assert_eq!(got, want);
    assert_eq!((launches, ok, no), (2, 0, 1), "launches, units that compiled / did not");
}
