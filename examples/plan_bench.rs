//! Times execution-plan construction for Airfoil's `res_calc` loop on a real mesh.
//!
//! `res_calc` is Airfoil's costliest indirect loop and the one OP2 plans are judged by: a loop
//! over edges reading `x` through `pedge` (columns 0 and 1) and `q`, `adt` through `pecell`, and
//! incrementing `res` through `pecell` (the only argument that needs colouring). The plan is
//! built once per run, so it must stay cheap next to the loop itself (target: under 100 ms on
//! one core for the 720K-cell mesh).
//!
//! Usage: `cargo run --release --example plan_bench -- MESH [PART_SIZE...]` where MESH is in
//! Airfoil's `new_grid.dat` format: a line `nnode ncell nedge nbedge`, then nnode lines `x y`,
//! ncell lines of 4 node ids, nedge lines `n0 n1 c0 c1`, nbedge lines `n0 n1 c bound`.

use std::time::{Duration, Instant};

use op2::plan::{needs_colouring, Access, IndirectArg, IndirectDesc, MapIdx, Plan, PlanRequest};

struct Mesh {
    nnode: usize,
    ncell: usize,
    nedge: usize,
    pedge: Vec<i32>,
    pecell: Vec<i32>,
}

fn read_mesh(path: &str) -> Result<Mesh, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut tok = text.split_ascii_whitespace();
    let mut int = |what: &str| -> Result<usize, String> {
        let t = tok.next().ok_or_else(|| format!("{path}: file ends before {what}"))?;
        t.parse().map_err(|_| format!("{path}: {what}: '{t}' is not a count"))
    };
    let (nnode, ncell, nedge, nbedge) = (int("nnode")?, int("ncell")?, int("nedge")?, int("nbedge")?);
    // Node coordinates and cell->node ids are not used by res_calc's plan: skip them.
    let skip = 2 * nnode + 4 * ncell;
    let mut tok = text.split_ascii_whitespace().skip(4 + skip);
    let mut pedge = Vec::with_capacity(2 * nedge);
    let mut pecell = Vec::with_capacity(2 * nedge);
    for e in 0..nedge {
        let mut v = [0i32; 4];
        for x in &mut v {
            let t = tok.next().ok_or_else(|| format!("{path}: file ends in edge {e}"))?;
            *x = t.parse().map_err(|_| format!("{path}: edge {e}: '{t}' is not an id"))?;
        }
        pedge.extend([v[0], v[1]]);
        pecell.extend([v[2], v[3]]);
    }
    if tok.count() != 4 * nbedge {
        return Err(format!("{path}: expected {nbedge} boundary edges at the end"));
    }
    Ok(Mesh { nnode, ncell, nedge, pedge, pecell })
}

fn res_calc_args(m: &Mesh) -> Vec<IndirectArg<'_>> {
    let (pedge, pecell) = (1u64, 2u64);
    // (dat id, bytes per element, map id, map values, target set size, access)
    let dats = [
        (10u64, 2 * 8, pedge, &m.pedge, m.nnode, Access::Read), // x: 2 doubles per node
        (11, 4 * 8, pecell, &m.pecell, m.ncell, Access::Read),  // q: 4 doubles per cell
        (12, 8, pecell, &m.pecell, m.ncell, Access::Read),      // adt: 1 double per cell
        (13, 4 * 8, pecell, &m.pecell, m.ncell, Access::Inc),   // res: 4 doubles per cell
    ];
    let mut args = Vec::new();
    for (dat, elem_bytes, map, values, target_size, access) in dats {
        for idx in 0..2 {
            args.push(IndirectArg {
                desc: IndirectDesc {
                    dat,
                    elem_bytes,
                    map,
                    map_dim: 2,
                    idx: MapIdx::Col(idx),
                    target_size,
                    colour: needs_colouring(access, true),
                },
                map_values: values,
            });
        }
    }
    args
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// CPU time of this thread (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`): on a shared machine it
/// is steadier than wall time. `None` off 64-bit Linux.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu() -> Option<Duration> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec (two 64-bit fields on 64-bit Linux).
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu() -> Option<Duration> {
    None
}

/// Timings of repeated builds of one plan.
struct Timing {
    /// Wall time of the first build (what a loop's first call pays, fresh memory included).
    first: Duration,
    /// Best wall time.
    best: Duration,
    /// Best thread CPU time, where it can be read.
    best_cpu: Option<Duration>,
}

impl Timing {
    fn show(&self) -> String {
        let cpu = self.best_cpu.map_or(String::new(), |c| format!(" ({:.1})", ms(c)));
        format!("{:.1} / {:.1}{cpu}", ms(self.first), ms(self.best))
    }
}

/// Builds `req` `runs` times; returns the last plan and the timings.
fn time_builds(req: &PlanRequest<'_>, runs: usize) -> (Plan, Timing) {
    let mut timing = Timing { first: Duration::ZERO, best: Duration::MAX, best_cpu: None };
    let mut plan = None;
    for run in 0..runs {
        let (t, c) = (Instant::now(), thread_cpu());
        let p = Plan::build(req).expect("res_calc plan builds");
        let wall = t.elapsed();
        if run == 0 {
            timing.first = wall;
        }
        timing.best = timing.best.min(wall);
        if let (Some(c0), Some(c1)) = (c, thread_cpu()) {
            timing.best_cpu = Some(timing.best_cpu.map_or(c1 - c0, |b| b.min(c1 - c0)));
        }
        plan = Some(p);
    }
    (plan.expect("runs > 0"), timing)
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.len() < 2 {
        eprintln!("usage: {} MESH [PART_SIZE...]   (env PLAN_BENCH_RUNS: builds per case, default 5)", argv[0]);
        std::process::exit(2);
    }
    let t = Instant::now();
    let mesh = read_mesh(&argv[1]).unwrap_or_else(|e| {
        eprintln!("plan_bench: {e}");
        std::process::exit(1);
    });
    println!(
        "mesh {}: {} nodes, {} cells, {} edges (read in {:.0} ms)",
        argv[1],
        mesh.nnode,
        mesh.ncell,
        mesh.nedge,
        ms(t.elapsed())
    );
    let mut part_sizes: Vec<usize> = argv[2..].iter().filter_map(|s| s.parse().ok()).collect();
    if part_sizes.is_empty() {
        part_sizes = vec![64, 128, 256, 512];
    }
    let runs: usize =
        std::env::var("PLAN_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).filter(|&r| r > 0).unwrap_or(5);
    let args = res_calc_args(&mesh);
    println!(
        "res_calc plan build on one thread, {runs} builds each: \
         first / best wall ms (best thread CPU ms)"
    );
    println!(
        "{:>9} {:>8} {:>20} {:>20} {:>9} {:>11} {:>13}",
        "part_size", "blocks", "staged", "unstaged", "ncolours", "max nthrcol", "max staging B"
    );
    for &part_size in &part_sizes {
        let req = |staging| PlanRequest {
            set: 1,
            set_size: mesh.nedge,
            start: 0,
            end: mesh.nedge,
            part_size,
            staging,
            args: &args,
        };
        let (plan, staged) = time_builds(&req(true), runs);
        let (bare, unstaged) = time_builds(&req(false), runs);
        assert_eq!(plan.blkmap, bare.blkmap, "staging does not change the colouring");
        println!(
            "{:>9} {:>8} {:>20} {:>20} {:>9} {:>11} {:>13}",
            part_size,
            plan.nblocks,
            staged.show(),
            unstaged.show(),
            plan.ncolours,
            plan.max_nthrcol,
            plan.max_staging_bytes
        );
    }
}
