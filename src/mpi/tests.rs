//! Partitioning, sections and halos over many simulated processes in one process: the pure
//! functions every process runs (`partition`, `layout`) are run for each rank of P, and the
//! results are checked against each other and against a loop computed globally.

use super::layout::{self, SetLayout};
use super::partition::{self, GMap};

/// An airfoil-like mesh: an nx x ny quad grid of cells; nodes; interior edges (edge -> 2 nodes,
/// edge -> 2 cells); boundary edges on the outer rim (bedge -> 2 nodes, bedge -> 1 cell);
/// cell -> 4 nodes. Sets: 0 nodes, 1 edges, 2 bedges, 3 cells.
struct Mesh {
    sizes: Vec<usize>,
    /// (from, to, dim, values): pedge, pecell, pbedge, pbecell, pcell
    maps: Vec<(usize, usize, usize, Vec<i32>)>,
    cell_xy: Vec<f64>,
}

fn mesh(nx: usize, ny: usize) -> Mesh {
    let node = |i: usize, j: usize| (j * (nx + 1) + i) as i32;
    let cell = |i: usize, j: usize| (j * nx + i) as i32;
    let (mut pedge, mut pecell, mut pbedge, mut pbecell, mut pcell) = (vec![], vec![], vec![], vec![], vec![]);
    let mut cell_xy = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            pcell.extend([node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)]);
            cell_xy.extend([i as f64 + 0.5, j as f64 + 0.5]);
        }
    }
    for j in 0..ny {
        for i in 0..=nx {
            let nodes = [node(i, j), node(i, j + 1)];
            if i == 0 || i == nx {
                pbedge.extend(nodes);
                pbecell.push(cell(if i == 0 { 0 } else { nx - 1 }, j));
            } else {
                pedge.extend(nodes);
                pecell.extend([cell(i - 1, j), cell(i, j)]);
            }
        }
    }
    for j in 0..=ny {
        for i in 0..nx {
            let nodes = [node(i, j), node(i + 1, j)];
            if j == 0 || j == ny {
                pbedge.extend(nodes);
                pbecell.push(cell(i, if j == 0 { 0 } else { ny - 1 }));
            } else {
                pedge.extend(nodes);
                pecell.extend([cell(i, j - 1), cell(i, j)]);
            }
        }
    }
    let sizes = vec![(nx + 1) * (ny + 1), pedge.len() / 2, pbedge.len() / 2, nx * ny];
    Mesh {
        sizes,
        maps: vec![(1, 0, 2, pedge), (1, 3, 2, pecell), (2, 0, 2, pbedge), (2, 3, 1, pbecell), (3, 0, 4, pcell)],
        cell_xy,
    }
}

/// Airfoil's new_grid.dat (nnode ncell nedge nbedge; x y; 4 nodes per cell; na nb c1 c2 per
/// edge; na nb c1 bound per boundary edge), with cell centres for RCB.
fn read_mesh(path: &str) -> Mesh {
    let text = std::fs::read_to_string(path).expect("mesh file");
    let mut it = text.split_ascii_whitespace();
    let mut next = || it.next().expect("truncated mesh");
    let n: Vec<usize> = (0..4).map(|_| next().parse().expect("count")).collect();
    let (nnode, ncell, nedge, nbedge) = (n[0], n[1], n[2], n[3]);
    let x: Vec<f64> = (0..2 * nnode).map(|_| next().parse().expect("x")).collect();
    let int = |s: &str| s.parse::<i32>().expect("index");
    let pcell: Vec<i32> = (0..4 * ncell).map(|_| int(next())).collect();
    let (mut pedge, mut pecell, mut pbedge, mut pbecell) = (vec![], vec![], vec![], vec![]);
    for _ in 0..nedge {
        pedge.extend([int(next()), int(next())]);
        pecell.extend([int(next()), int(next())]);
    }
    for _ in 0..nbedge {
        pbedge.extend([int(next()), int(next())]);
        pbecell.push(int(next()));
        next();
    }
    let cell_xy = pcell
        .chunks(4)
        .flat_map(|c| {
            let (mut cx, mut cy) = (0.0, 0.0);
            for &v in c {
                cx += 0.25 * x[2 * v as usize];
                cy += 0.25 * x[2 * v as usize + 1];
            }
            [cx, cy]
        })
        .collect();
    Mesh {
        sizes: vec![nnode, nedge, nbedge, ncell],
        maps: vec![(1, 0, 2, pedge), (1, 3, 2, pecell), (2, 0, 2, pbedge), (2, 3, 1, pbecell), (3, 0, 4, pcell)],
        cell_xy,
    }
}

fn gmaps(m: &Mesh) -> Vec<GMap<'_>> {
    m.maps.iter().map(|(f, t, d, v)| GMap { from: *f, to: *t, dim: *d, values: v }).collect()
}

fn parts_for(m: &Mesh, method: &str, p: usize) -> Vec<Vec<i32>> {
    let g = gmaps(m);
    let mut parts: Vec<Option<Vec<i32>>> = vec![None; m.sizes.len()];
    parts[3] = Some(match method {
        "METIS" => {
            let (x, a) = partition::target_graph(&g[1], m.sizes[3]);
            partition::kway_parts(&x, &a, p).unwrap()
        }
        "RCB" => partition::rcb_parts(&m.cell_xy, 2, p),
        _ => partition::random_parts(m.sizes[3], p),
    });
    let sizes = m.sizes.clone();
    let block = |s: usize| {
        let offs: Vec<usize> = (0..=p).map(|r| sizes[s] * r / p).collect();
        partition::block_parts(&offs)
    };
    partition::derive(&m.sizes, &g, &mut parts, &block);
    parts.into_iter().map(Option::unwrap).collect()
}

/// Every rank's layouts, checked for consistency; returns them per set, per rank.
fn check_layouts(m: &Mesh, parts: &[Vec<i32>], p: usize) -> Vec<Vec<SetLayout>> {
    let g = gmaps(m);
    let h = layout::halos(&m.sizes, &g, parts, p);
    let lay: Vec<Vec<SetLayout>> =
        (0..m.sizes.len()).map(|s| (0..p).map(|r| layout::set_layout(&h, parts, s, r as i32)).collect()).collect();
    for (s, per) in lay.iter().enumerate() {
        assert_eq!(per.iter().map(|l| l.owned).sum::<usize>(), m.sizes[s]);
        for (r, l) in per.iter().enumerate() {
            assert_eq!(l.gids.len(), l.total());
            for gid in l.gids.range(0, l.owned) {
                assert_eq!(parts[s][gid as usize], r as i32);
            }
            // Imports from q are exactly q's exports to r, element by element.
            for (q, pos) in &l.imports {
                let other = &per[*q as usize];
                let (_, exp) = other.exports.iter().find(|(t, _)| *t == r as i32).expect("matching export");
                assert_eq!(pos.len(), exp.len());
                for (a, b) in pos.iter().zip(exp) {
                    assert_eq!(l.gids.get(*a as usize), other.gids.get(*b as usize));
                }
            }
        }
    }
    for gm in &g {
        for (r, (lf, lt)) in lay[gm.from].iter().zip(&lay[gm.to]).enumerate() {
            let local = layout::local_map(gm, lf, lt, "m").unwrap();
            // core rows touch owned targets only
            for row in local[..lf.core * gm.dim].chunks(gm.dim) {
                assert!(row.iter().all(|&t| (t as usize) < lt.owned), "rank {r}: a core row reads the halo");
            }
        }
    }
    lay
}

/// The loop the halos exist for, simulated: over edges (owned + exec halo), increment nodes by
/// the edge's value and read a cell value through pecell; owned nodes must match the global sum.
#[allow(clippy::needless_range_loop)]
fn check_inc_loop(m: &Mesh, lay: &[Vec<SetLayout>], p: usize) {
    let g = gmaps(m);
    let cellv = |c: u32| 1.0 + c as f64 * 0.25;
    let mut want = vec![0.0f64; m.sizes[0]];
    for e in 0..m.sizes[1] {
        let c = &g[1].values[2 * e..2 * e + 2];
        let v = cellv(c[0] as u32) + 2.0 * cellv(c[1] as u32);
        for &n in &g[0].values[2 * e..2 * e + 2] {
            want[n as usize] += v;
        }
    }
    for r in 0..p {
        let (le, ln, lc) = (&lay[1][r], &lay[0][r], &lay[3][r]);
        let pedge = layout::local_map(&g[0], le, ln, "pedge").unwrap();
        let pecell = layout::local_map(&g[1], le, lc, "pecell").unwrap();
        // cell values: every local row (owned and halos) as after an exchange
        let cv: Vec<f64> = lc.gids.iter().map(cellv).collect();
        let mut acc = vec![0.0f64; ln.total()];
        for e in 0..le.owned + le.exec {
            let v = cv[pecell[2 * e] as usize] + 2.0 * cv[pecell[2 * e + 1] as usize];
            for k in 0..2 {
                acc[pedge[2 * e + k] as usize] += v;
            }
        }
        for i in 0..ln.owned {
            assert_eq!(acc[i], want[ln.gids.get(i) as usize], "rank {r} of {p}: node {}", ln.gids.get(i));
        }
    }
}

#[test]
fn halos_are_consistent_and_loops_match_over_many_ranks() {
    let m = mesh(60, 30);
    for method in ["METIS", "RCB", "RANDOM"] {
        for p in [1, 2, 3, 4, 7, 16] {
            let parts = parts_for(&m, method, p);
            let lay = check_layouts(&m, &parts, p);
            check_inc_loop(&m, &lay, p);
        }
    }
}

#[test]
fn more_ranks_than_elements_gives_empty_partitions() {
    let m = mesh(3, 2); // 6 cells, 10 bedges
    for method in ["METIS", "RCB"] {
        let parts = parts_for(&m, method, 9);
        let lay = check_layouts(&m, &parts, 9);
        assert!(lay[3].iter().any(|l| l.owned == 0));
        check_inc_loop(&m, &lay, 9);
    }
}

/// The partition table (halo sizes, core fractions, neighbours) for P up to 64 on an
/// airfoil-sized grid: `cargo test --release --lib mpi::tests::partition_table -- --ignored
/// --nocapture` (OP2_TABLE_NX/NY pick the grid; default 1200 x 600, 720K cells; or
/// OP2_TABLE_MESH=new_grid.dat reads an Airfoil mesh, e.g. from op2-meshgen).
#[test]
#[ignore]
fn partition_table() {
    let nx = std::env::var("OP2_TABLE_NX").ok().and_then(|v| v.parse().ok()).unwrap_or(1200);
    let ny = std::env::var("OP2_TABLE_NY").ok().and_then(|v| v.parse().ok()).unwrap_or(600);
    let file = std::env::var("OP2_TABLE_MESH").ok();
    let m = match &file {
        Some(f) => read_mesh(f),
        None => mesh(nx, ny),
    };
    match &file {
        Some(f) => println!("mesh {f}:"),
        None => println!("structured grid {nx} x {ny}:"),
    }
    println!("{} nodes, {} edges, {} bedges, {} cells", m.sizes[0], m.sizes[1], m.sizes[2], m.sizes[3]);
    println!("| P | method | cells exec / nonexec | edges exec | nodes nonexec | core cells / edges | max nbrs | min owned bedges | s |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for p in [2, 4, 8, 16, 32, 64] {
        for method in ["METIS", "RCB"] {
            let t = std::time::Instant::now();
            let parts = parts_for(&m, method, p);
            let g = gmaps(&m);
            let h = layout::halos(&m.sizes, &g, &parts, p);
            let per = |s: usize| (0..p).map(|r| layout::set_layout(&h, &parts, s, r as i32)).collect::<Vec<_>>();
            let (n, e, b, c) = (per(0), per(1), per(2), per(3));
            let secs = t.elapsed().as_secs_f64();
            let (sn, se, sb, sc) = (layout::stats(&n), layout::stats(&e), layout::stats(&b), layout::stats(&c));
            let nb = [&sn, &se, &sb, &sc].iter().map(|s| s.max_neighbours).max().unwrap_or(0);
            println!(
                "| {p} | {method} | {:.2}% / {:.2}% | {:.2}% | {:.2}% | {:.2} / {:.2}% | {nb} | {} | {secs:.2} |",
                sc.exec_pct, sc.nonexec_pct, se.exec_pct, sn.nonexec_pct, sc.core_pct, se.core_pct, sb.owned_min
            );
        }
    }
}
