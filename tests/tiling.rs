//! Loop-chain analysis and the sparse-tiling inspector (`op2::plan::tiling`): fusion on Airfoil's
//! chain, hand-checked tilings of a 1D mesh, random meshes and chains checked by `verify` and by
//! running simple kernels eagerly and tiled (bit for bit on Sequential), and an Airfoil-shaped
//! grid (2 levels on Parallel, balanced tiles).

use op2::error::ErrorCode;
use op2::plan::tiling::*;

// ---------------------------------------------------------------------------------------------
// Small helpers

/// splitmix64: a seeded generator for reproducible random meshes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
    Rw,
    Inc,
}

fn arg<'a>(data: u32, data_size: usize, map: Option<(&'a [i32], usize, Option<usize>)>, mode: Mode) -> ChainArg<'a> {
    ChainArg {
        data,
        data_size,
        map,
        reads: matches!(mode, Mode::Read | Mode::Rw),
        writes: matches!(mode, Mode::Write | Mode::Rw | Mode::Inc),
        inc: mode == Mode::Inc,
    }
}

fn mode_of(a: &ChainArg) -> Mode {
    match (a.reads, a.writes, a.inc) {
        (_, _, true) => Mode::Inc,
        (true, true, _) => Mode::Rw,
        (false, true, _) => Mode::Write,
        _ => Mode::Read,
    }
}

fn elements(a: &ChainArg, i: usize) -> Vec<usize> {
    match a.map {
        None => vec![i],
        Some((v, dim, Some(k))) => vec![v[i * dim + k] as usize],
        Some((v, dim, None)) => v[i * dim..(i + 1) * dim].iter().map(|&x| x as usize).collect(),
    }
}

/// Initial values of every data id that appears (dim 1 doubles).
fn initial(loops: &[ChainLoop]) -> Vec<Vec<f64>> {
    let mut vals: Vec<Vec<f64>> = Vec::new();
    for l in loops {
        for a in &l.args {
            let d = a.data as usize;
            if vals.len() <= d {
                vals.resize(d + 1, Vec::new());
            }
            if vals[d].is_empty() {
                vals[d] = (0..a.data_size).map(|x| 1.0 + ((d * 7 + x * 3) % 13) as f64 * 0.1).collect();
            }
        }
    }
    vals
}

/// One iteration of a simple kernel: `val` mixes every element read; then each modified
/// element is written (`val`), updated (`0.5 * old + val`) or incremented (`+= val / 8`).
fn kernel(l: usize, i: usize, lp: &ChainLoop, vals: &mut [Vec<f64>]) {
    let mut val = 1.0 + (l + 1) as f64 * 1e-3 * i as f64;
    for a in &lp.args {
        if a.reads {
            for x in elements(a, i) {
                val += 0.25 * vals[a.data as usize][x];
            }
        }
    }
    for a in &lp.args {
        let m = mode_of(a);
        for (c, x) in elements(a, i).into_iter().enumerate() {
            let v = &mut vals[a.data as usize][x];
            match m {
                Mode::Read => {}
                Mode::Write => *v = val + 0.01 * c as f64,
                Mode::Rw => *v = 0.5 * *v + val,
                Mode::Inc => *v += 0.125 * val,
            }
        }
    }
}

fn eager(loops: &[ChainLoop]) -> Vec<Vec<f64>> {
    let mut vals = initial(loops);
    for (l, lp) in loops.iter().enumerate() {
        for i in 0..lp.size {
            kernel(l, i, lp, &mut vals);
        }
    }
    vals
}

/// Runs the tiling: levels in increasing order; within a level tiles in DECREASING index order
/// (any order must do); within a tile, loop by loop, runs in order.
fn tiled(loops: &[ChainLoop], t: &Tiling) -> Vec<Vec<f64>> {
    let mut vals = initial(loops);
    for tiles in t.levels().unwrap() {
        for &b in tiles.iter().rev() {
            for (l, lp) in loops.iter().enumerate() {
                for &(s, e) in &t.runs[l][b as usize] {
                    for i in s as usize..e as usize {
                        kernel(l, i, lp, &mut vals);
                    }
                }
            }
        }
    }
    vals
}

fn bits(v: &[Vec<f64>]) -> Vec<Vec<u64>> {
    v.iter().map(|d| d.iter().map(|x| x.to_bits()).collect()).collect()
}

fn close(a: &[Vec<f64>], b: &[Vec<f64>]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.iter().zip(y).all(|(p, q)| (p - q).abs() <= 1e-9 * p.abs().max(1.0)))
}

/// `tile_of[l][i]`, asserting every iteration is in exactly one tile.
fn tile_of(loops: &[ChainLoop], t: &Tiling) -> Vec<Vec<usize>> {
    assert_eq!(t.runs.len(), loops.len());
    assert_eq!(t.level.len(), t.tiles);
    loops
        .iter()
        .enumerate()
        .map(|(l, lp)| {
            assert_eq!(t.runs[l].len(), t.tiles);
            let mut of = vec![usize::MAX; lp.size];
            for (b, rs) in t.runs[l].iter().enumerate() {
                for w in rs.windows(2) {
                    assert!(w[0].1 <= w[1].0, "loop {l} tile {b}: runs {:?} not sorted", rs);
                }
                for &(s, e) in rs {
                    assert!(s < e, "empty run");
                    for x in &mut of[s as usize..e as usize] {
                        assert_eq!(*x, usize::MAX, "loop {l}: iteration in two tiles");
                        *x = b;
                    }
                }
            }
            assert!(of.iter().all(|&x| x != usize::MAX), "loop {l}: an iteration is in no tile");
            of
        })
        .collect()
}

/// Runs rebuilt from `tile_of`.
fn runs_from(tile_of: &[Vec<usize>], tiles: usize) -> Vec<Vec<Vec<(u32, u32)>>> {
    tile_of
        .iter()
        .map(|of| {
            let mut r = vec![Vec::new(); tiles];
            for (i, &b) in of.iter().enumerate() {
                let rs: &mut Vec<(u32, u32)> = &mut r[b];
                match rs.last_mut() {
                    Some(last) if last.1 as usize == i => last.1 += 1,
                    _ => rs.push((i as u32, i as u32 + 1)),
                }
            }
            r
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Airfoil's chain

/// A structured `nx` x `ny` quad grid numbered like Airfoil's: nodes and cells row by row,
/// interior edges in cell order (each cell's right then upper face), boundary edges after
/// (bottom, top, left, right).
struct Grid {
    nodes: usize,
    cells: usize,
    pcell: Vec<i32>,
    pedge: Vec<i32>,
    pecell: Vec<i32>,
    pbedge: Vec<i32>,
    pbecell: Vec<i32>,
}

impl Grid {
    fn new(nx: usize, ny: usize) -> Grid {
        let node = |i: usize, j: usize| (j * (nx + 1) + i) as i32;
        let cell = |i: usize, j: usize| (j * nx + i) as i32;
        let mut g = Grid {
            nodes: (nx + 1) * (ny + 1),
            cells: nx * ny,
            pcell: vec![],
            pedge: vec![],
            pecell: vec![],
            pbedge: vec![],
            pbecell: vec![],
        };
        for j in 0..ny {
            for i in 0..nx {
                g.pcell.extend([node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)]);
                if i + 1 < nx {
                    g.pedge.extend([node(i + 1, j), node(i + 1, j + 1)]);
                    g.pecell.extend([cell(i, j), cell(i + 1, j)]);
                }
                if j + 1 < ny {
                    g.pedge.extend([node(i + 1, j + 1), node(i, j + 1)]);
                    g.pecell.extend([cell(i, j), cell(i, j + 1)]);
                }
            }
        }
        for i in 0..nx {
            g.pbedge.extend([node(i, 0), node(i + 1, 0)]);
            g.pbecell.push(cell(i, 0));
        }
        for i in 0..nx {
            g.pbedge.extend([node(i + 1, ny), node(i, ny)]);
            g.pbecell.push(cell(i, ny - 1));
        }
        for j in 0..ny {
            g.pbedge.extend([node(0, j + 1), node(0, j)]);
            g.pbecell.push(cell(0, j));
        }
        for j in 0..ny {
            g.pbedge.extend([node(nx, j), node(nx, j + 1)]);
            g.pbecell.push(cell(nx - 1, j));
        }
        g
    }
    fn edges(&self) -> usize {
        self.pecell.len() / 2
    }
    fn bedges(&self) -> usize {
        self.pbecell.len()
    }
}

const X: u32 = 0;
const Q: u32 = 1;
const QOLD: u32 = 2;
const ADT: u32 = 3;
const RES: u32 = 4;
const BOUND: u32 = 5;

fn save_soln(g: &Grid) -> ChainLoop<'_> {
    let c = g.cells;
    ChainLoop { size: c, args: vec![arg(Q, c, None, Mode::Read), arg(QOLD, c, None, Mode::Write)] }
}

fn adt_calc(g: &Grid) -> ChainLoop<'_> {
    let c = g.cells;
    ChainLoop {
        size: c,
        args: vec![
            arg(X, g.nodes, Some((&g.pcell, 4, None)), Mode::Read),
            arg(Q, c, None, Mode::Read),
            arg(ADT, c, None, Mode::Write),
        ],
    }
}

fn res_calc(g: &Grid) -> ChainLoop<'_> {
    let c = g.cells;
    ChainLoop {
        size: g.edges(),
        args: vec![
            arg(X, g.nodes, Some((&g.pedge, 2, None)), Mode::Read),
            arg(Q, c, Some((&g.pecell, 2, None)), Mode::Read),
            arg(ADT, c, Some((&g.pecell, 2, None)), Mode::Read),
            arg(RES, c, Some((&g.pecell, 2, None)), Mode::Inc),
        ],
    }
}

fn bres_calc(g: &Grid) -> ChainLoop<'_> {
    let c = g.cells;
    ChainLoop {
        size: g.bedges(),
        args: vec![
            arg(X, g.nodes, Some((&g.pbedge, 2, None)), Mode::Read),
            arg(Q, c, Some((&g.pbecell, 1, Some(0))), Mode::Read),
            arg(ADT, c, Some((&g.pbecell, 1, Some(0))), Mode::Read),
            arg(RES, c, Some((&g.pbecell, 1, Some(0))), Mode::Inc),
            arg(BOUND, g.bedges(), None, Mode::Read),
        ],
    }
}

fn update(g: &Grid) -> ChainLoop<'_> {
    let c = g.cells;
    ChainLoop {
        size: c,
        args: vec![
            arg(QOLD, c, None, Mode::Read),
            arg(Q, c, None, Mode::Write),
            arg(RES, c, None, Mode::Rw),
            arg(ADT, c, None, Mode::Read),
        ],
    }
}

/// One Airfoil iteration: save_soln, then twice adt_calc, res_calc, bres_calc, update.
fn airfoil_chain(g: &Grid) -> Vec<ChainLoop<'_>> {
    let mut v = vec![save_soln(g)];
    for _ in 0..2 {
        v.extend([adt_calc(g), res_calc(g), bres_calc(g), update(g)]);
    }
    v
}

#[test]
fn airfoil_fusion() {
    let g = Grid::new(4, 3);
    assert_eq!((g.cells, g.nodes, g.edges(), g.bedges()), (12, 20, 17, 14));
    assert!(fusable(&save_soln(&g), &adt_calc(&g)));
    // Different sizes, and res_calc reads adt through pecell.
    assert!(!fusable(&adt_calc(&g), &res_calc(&g)));
    assert!(!fusable(&res_calc(&g), &bres_calc(&g)));
    // update writes q directly and adt_calc reads it directly; adt_calc writes adt directly,
    // update (of the half before) read it directly.
    assert!(fusable(&update(&g), &adt_calc(&g)));
    assert!(fusable(&update(&g), &save_soln(&g)));
    assert_eq!(fusion_groups(&airfoil_chain(&g)), vec![0..2, 2..3, 3..4, 4..6, 6..7, 7..8, 8..9]);
    assert_eq!(fusion_groups(&[]), vec![]);

    // Same size, but b reads indirectly (through a cell -> neighbour map) what a writes directly.
    let nbr: Vec<i32> = (0..12).map(|c| (c + 1) % 12).collect();
    let a = ChainLoop { size: 12, args: vec![arg(7, 12, None, Mode::Write)] };
    let b = ChainLoop { size: 12, args: vec![arg(7, 12, Some((&nbr, 1, Some(0))), Mode::Read)] };
    assert!(!fusable(&a, &b));
    // ... and the other way round (a reads through the map what b writes directly).
    let a2 = ChainLoop { size: 12, args: vec![arg(7, 12, Some((&nbr, 1, Some(0))), Mode::Read)] };
    let b2 = ChainLoop { size: 12, args: vec![arg(7, 12, None, Mode::Write)] };
    assert!(!fusable(&a2, &b2));
    // Both read through the map: fine; b reading directly what a writes directly: fine.
    assert!(fusable(&a2, &b));
    assert!(fusable(&a, &ChainLoop { size: 12, args: vec![arg(7, 12, None, Mode::Read)] }));
    // An increment through a map in b of what a reads directly: not fusable.
    let b3 = ChainLoop { size: 12, args: vec![arg(7, 12, Some((&nbr, 1, Some(0))), Mode::Inc)] };
    assert!(!fusable(&ChainLoop { size: 12, args: vec![arg(7, 12, None, Mode::Read)] }, &b3));
    // Each member of a group must be fusable with every earlier one, not only the last.
    let c = ChainLoop { size: 12, args: vec![arg(8, 12, None, Mode::Write)] };
    assert_eq!(fusion_groups(&[a.clone(), c.clone(), b.clone()]), vec![0..2, 2..3]);
    assert_eq!(fusion_groups(&[a, c, b2]), vec![0..3]);
}

// ---------------------------------------------------------------------------------------------
// A 1D mesh by hand: 6 cells in a row, edge e joins cells e and e + 1.

const EDGE_CELLS: [i32; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 5];
const U: u32 = 0;
const R: u32 = 1;

/// cells: write u; edges: read u of both cells, increment r of both; cells: read r, write u.
fn line_chain() -> Vec<ChainLoop<'static>> {
    let m = Some((&EDGE_CELLS[..], 2, None));
    vec![
        ChainLoop { size: 6, args: vec![arg(U, 6, None, Mode::Write)] },
        ChainLoop { size: 5, args: vec![arg(U, 6, m, Mode::Read), arg(R, 6, m, Mode::Inc)] },
        ChainLoop { size: 6, args: vec![arg(R, 6, None, Mode::Read), arg(U, 6, None, Mode::Write)] },
    ]
}

#[test]
fn line_sequential_by_hand() {
    let chain = line_chain();
    let t = inspect(&chain, 2, Schedule::Sequential).unwrap();
    assert_eq!(t.tiles, 3);
    assert_eq!(t.level, vec![0, 1, 2]);
    assert_eq!(t.nlevels, 3);
    // Seed: cells {0,1} {2,3} {4,5}. Edge e goes with its later cell's tile.
    assert_eq!(t.runs[0], vec![vec![(0, 2)], vec![(2, 4)], vec![(4, 6)]]);
    assert_eq!(t.runs[1], vec![vec![(0, 1)], vec![(1, 3)], vec![(3, 5)]]);
    // Cell c waits for every edge that increments r[c] (and every reader of u[c]).
    assert_eq!(t.runs[2], vec![vec![(0, 1)], vec![(1, 3)], vec![(3, 6)]]);
    assert_eq!((t.tile_len(2, 0), t.tile_len(2, 1), t.tile_len(2, 2)), (1, 2, 3));
    verify(&chain, &t).unwrap();
    assert_eq!(bits(&tiled(&chain, &t)), bits(&eager(&chain)));

    // One tile holding everything, and one tile per seed cell.
    let one = inspect(&chain, 100, Schedule::Sequential).unwrap();
    assert_eq!(one.tiles, 1);
    assert_eq!(one.runs, vec![vec![vec![(0, 6)]], vec![vec![(0, 5)]], vec![vec![(0, 6)]]]);
    let fine = inspect(&chain, 1, Schedule::Sequential).unwrap();
    assert_eq!(fine.tiles, 6);
    assert_eq!(tile_of(&chain, &fine)[1], vec![1, 2, 3, 4, 5]);
    assert_eq!(tile_of(&chain, &fine)[2], vec![1, 2, 3, 4, 5, 5]);
    verify(&chain, &fine).unwrap();
}

#[test]
fn line_parallel_by_hand() {
    let chain = line_chain();
    let t = inspect(&chain, 2, Schedule::Parallel).unwrap();
    // Seed blocks 0, 1, 2 run as 0, 2, 1: tile 0 = cells 0-1, tile 1 = cells 4-5, tile 2 = 2-3.
    assert_eq!(t.tiles, 3);
    assert_eq!(t.runs[0], vec![vec![(0, 2)], vec![(4, 6)], vec![(2, 4)]]);
    // Edges 1, 2, 3 touch cells of tile 2 (the last to run).
    assert_eq!(t.runs[1], vec![vec![(0, 1)], vec![(4, 5)], vec![(1, 4)]]);
    assert_eq!(t.runs[2], vec![vec![(0, 1)], vec![(5, 6)], vec![(1, 5)]]);
    // Tiles 0 and 1 share nothing; tile 2 reads u[1] and u[4], which they wrote.
    assert_eq!(t.level, vec![0, 0, 1]);
    assert_eq!(t.nlevels, 2);
    assert_eq!(t.levels().unwrap(), vec![vec![0, 1], vec![2]]);
    verify(&chain, &t).unwrap();
    assert!(close(&tiled(&chain, &t), &eager(&chain)));
}

#[test]
fn verify_rejects_broken_tilings() {
    let chain = line_chain();
    let good = inspect(&chain, 2, Schedule::Sequential).unwrap();
    let expect = bits(&eager(&chain));

    // Cell 1 of the last loop moved from tile 1 to tile 0: it reads r[1] before edge 1 (tile 1)
    // has incremented it.
    let mut of = tile_of(&chain, &good);
    of[2][1] = 0;
    let broken = Tiling { runs: runs_from(&of, 3), ..good.clone() };
    assert_eq!(broken.runs[2], vec![vec![(0, 2)], vec![(2, 3)], vec![(3, 6)]]);
    let e = verify(&chain, &broken).unwrap_err();
    assert!(e.contains("loop 2 iteration 1") && e.contains("element 1 of data 1"), "{e}");
    assert_ne!(bits(&tiled(&chain, &broken)), expect);

    // Edge 2 moved before cell 3 is written (tile 1 -> 0): a read before its write.
    let mut of = tile_of(&chain, &good);
    of[1][2] = 0;
    let e = verify(&chain, &Tiling { runs: runs_from(&of, 3), ..good.clone() }).unwrap_err();
    assert!(e.contains("loop 1 iteration 2"), "{e}");

    // An iteration missing, one run twice, a run out of range, a wrong shape.
    let mut t = good.clone();
    t.runs[1][2] = vec![(3, 4)];
    assert!(verify(&chain, &t).unwrap_err().contains("loop 1: iteration 4 is in no tile"));
    let mut t = good.clone();
    t.runs[0][0].push((2, 4));
    assert!(verify(&chain, &t).unwrap_err().contains("is in tiles"));
    let mut t = good.clone();
    t.runs[2][2] = vec![(3, 7)];
    assert!(verify(&chain, &t).unwrap_err().contains("outside [0, 6)"));
    let mut t = good.clone();
    t.level.pop();
    assert!(verify(&chain, &t).is_err());
    assert!(verify(&chain[..2], &good).is_err());

    // Sequential order reversed: tile 2 before tile 1 (by its level).
    let mut t = good.clone();
    t.level = vec![0, 2, 1];
    assert!(verify(&chain, &t).is_err());

    // Parallel: tile 2 made concurrent with tiles 0 and 1, with which it conflicts.
    let par = inspect(&chain, 2, Schedule::Parallel).unwrap();
    let mut t = par.clone();
    t.level = vec![0, 0, 0];
    let e = verify(&chain, &t).unwrap_err();
    assert!(e.contains("of level 0 both touch"), "{e}");
    // Parallel levels swapped: tile 2 runs first, before the writes it reads.
    let mut t = par.clone();
    t.level = vec![1, 1, 0];
    assert!(verify(&chain, &t).is_err());
    // The same tiling judged as Sequential: tiles 1 (cells 4-5) before tile 2 (cells 2-3)
    // reorders the increments of r[4] by edges 3 and 4.
    let t = Tiling { schedule: Schedule::Sequential, level: vec![0, 1, 2], ..par };
    assert!(verify(&chain, &t).is_err());
}

#[test]
fn inspect_rejects_bad_input() {
    let chain = line_chain();
    assert_eq!(inspect(&chain, 0, Schedule::Sequential).unwrap_err().code, ErrorCode::BadSize);
    let bad_map = [0, 1, 1, 2, 2, 3, 3, 4, 4, 6];
    let m = Some((&bad_map[..], 2, None));
    let mut c = line_chain();
    c[1].args[0] = arg(U, 6, m, Mode::Read);
    let e = inspect(&c, 2, Schedule::Sequential).unwrap_err();
    assert_eq!(e.code, ErrorCode::MapOutOfRange);
    assert!(e.message.contains("loop 1 arg 0: map entry (iteration 4, column 1) is 6"), "{}", e.message);
    assert!(verify(&c, &inspect(&chain, 2, Schedule::Sequential).unwrap()).is_err());
    let mut c = line_chain();
    c[1].args[0] = arg(U, 6, Some((&EDGE_CELLS[..8], 2, None)), Mode::Read);
    assert_eq!(inspect(&c, 2, Schedule::Sequential).unwrap_err().code, ErrorCode::BadSize);
    let mut c = line_chain();
    c[1].args[0] = arg(U, 6, Some((&EDGE_CELLS[..], 2, Some(2))), Mode::Read);
    assert_eq!(inspect(&c, 2, Schedule::Sequential).unwrap_err().code, ErrorCode::ArgIdx);
    let mut c = line_chain();
    c[2].args[1] = arg(U, 7, None, Mode::Write);
    assert_eq!(inspect(&c, 2, Schedule::Sequential).unwrap_err().code, ErrorCode::BadSize);
    let mut c = line_chain();
    c[2].size = 7;
    c[2].args = vec![arg(R, 6, None, Mode::Read)];
    assert_eq!(inspect(&c, 2, Schedule::Sequential).unwrap_err().code, ErrorCode::BadSize);
    // Empty chain and empty seed: one tile.
    let t = inspect(&[], 4, Schedule::Parallel).unwrap();
    assert_eq!((t.tiles, t.level.clone(), t.runs.len()), (1, vec![0], 0));
    let c = [ChainLoop { size: 0, args: vec![] }, ChainLoop { size: 3, args: vec![arg(9, 3, None, Mode::Write)] }];
    let t = inspect(&c, 4, Schedule::Sequential).unwrap();
    assert_eq!(t.runs, vec![vec![vec![]], vec![vec![(0, 3)]]]);
    verify(&c, &t).unwrap();
}

/// An iteration touching nothing touched before goes to its proportional seed block.
#[test]
fn untouched_data_spreads_over_tiles() {
    let c = [
        ChainLoop { size: 8, args: vec![arg(0, 8, None, Mode::Write)] },
        ChainLoop { size: 4, args: vec![arg(1, 4, None, Mode::Write)] },
    ];
    let t = inspect(&c, 2, Schedule::Sequential).unwrap();
    assert_eq!(t.runs[1], vec![vec![(0, 1)], vec![(1, 2)], vec![(2, 3)], vec![(3, 4)]]);
    let t = inspect(&c, 2, Schedule::Parallel).unwrap();
    // Blocks 0..4 run as 0, 2, 1, 3.
    assert_eq!(t.runs[1], vec![vec![(0, 1)], vec![(2, 3)], vec![(1, 2)], vec![(3, 4)]]);
    assert_eq!(t.level, vec![0, 0, 0, 0]);
    verify(&c, &t).unwrap();
}

/// An iteration with no dependency goes where its data was last touched (read after read is no
/// dependency, but keeps the data in the tile's cache), not to tile 0.
#[test]
fn read_after_read_follows_locality() {
    let reversed: Vec<i32> = (0..6).rev().collect();
    let c = [
        ChainLoop { size: 6, args: vec![arg(0, 6, None, Mode::Read)] },
        ChainLoop {
            size: 6,
            args: vec![arg(0, 6, Some((&reversed, 1, Some(0))), Mode::Read), arg(1, 6, None, Mode::Write)],
        },
    ];
    let t = inspect(&c, 2, Schedule::Sequential).unwrap();
    assert_eq!(t.runs[1], vec![vec![(4, 6)], vec![(2, 4)], vec![(0, 2)]]);
    verify(&c, &t).unwrap();
    let t = inspect(&c, 2, Schedule::Parallel).unwrap();
    // Seed tiles: 0 = cells 0-1, 1 = cells 4-5, 2 = cells 2-3.
    assert_eq!(t.runs[1], vec![vec![(4, 6)], vec![(0, 2)], vec![(2, 4)]]);
    assert_eq!(t.level, vec![0, 0, 0]);
    verify(&c, &t).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Random meshes and chains

struct Mesh {
    sizes: Vec<usize>,
    /// (from set, to set, dim, values)
    maps: Vec<(usize, usize, usize, Vec<i32>)>,
    /// set of each data id
    data_set: Vec<usize>,
}

fn random_mesh(rng: &mut Rng) -> Mesh {
    let nsets = 1 + rng.below(4);
    let sizes: Vec<usize> = (0..nsets).map(|_| 1 + rng.below(120)).collect();
    let mut maps = Vec::new();
    for from in 0..nsets {
        for to in 0..nsets {
            for _ in 0..1 + rng.below(2) {
                let dim = 1 + rng.below(4);
                let (nf, nt) = (sizes[from], sizes[to]);
                let local = rng.chance(60);
                let mut v = Vec::with_capacity(nf * dim);
                for i in 0..nf {
                    for _ in 0..dim {
                        let x = if local {
                            // Near the proportional position: a mesh with locality.
                            let c = (i * nt / nf) as i64 + rng.below(5) as i64 - 2;
                            c.clamp(0, nt as i64 - 1) as usize
                        } else {
                            rng.below(nt)
                        };
                        v.push(x as i32);
                    }
                }
                maps.push((from, to, dim, v));
            }
        }
    }
    let ndata = 1 + rng.below(6);
    let data_set = (0..ndata).map(|_| rng.below(nsets)).collect();
    Mesh { sizes, maps, data_set }
}

/// A random chain of 2-8 loops. `legal`: as OP2 allows (one mode per data in a loop; WRITE and
/// RW only direct); otherwise anything (only Sequential keeps such a chain's results).
fn random_chain<'a>(rng: &mut Rng, m: &'a Mesh, legal: bool) -> Vec<ChainLoop<'a>> {
    let nloops = 2 + rng.below(7);
    let modes = [Mode::Read, Mode::Write, Mode::Rw, Mode::Inc];
    (0..nloops)
        .map(|_| {
            let set = rng.below(m.sizes.len());
            let mut mode_of_data = vec![None; m.data_set.len()];
            let nargs = 1 + rng.below(4);
            let args = (0..nargs)
                .map(|_| {
                    let d = rng.below(m.data_set.len());
                    let ds = m.data_set[d];
                    let n = m.sizes[ds];
                    let direct_ok = ds == set;
                    let mut mode = modes[rng.below(4)];
                    if legal {
                        mode = *mode_of_data[d].get_or_insert(mode);
                    }
                    let direct = direct_ok && (rng.chance(50) || (legal && matches!(mode, Mode::Write | Mode::Rw)));
                    if legal && !direct && matches!(mode, Mode::Write | Mode::Rw) {
                        // Not legal through a map: read it instead (the filter below drops the
                        // arg if the loop modifies this data elsewhere).
                        mode = Mode::Read;
                    }
                    let map = if direct {
                        None
                    } else {
                        let cands: Vec<usize> =
                            (0..m.maps.len()).filter(|&k| m.maps[k].0 == set && m.maps[k].1 == ds).collect();
                        let k = cands[rng.below(cands.len())];
                        let (_, _, dim, ref v) = m.maps[k];
                        let idx = if rng.chance(50) { Some(rng.below(dim)) } else { None };
                        Some((&v[..], dim, idx))
                    };
                    (d, n, map, mode)
                })
                .collect::<Vec<_>>();
            // Legal chains: a data written or RW here must have only that one direct arg.
            let args: Vec<ChainArg> = if legal {
                let mut out: Vec<ChainArg> = Vec::new();
                for (d, n, map, mode) in args {
                    let clash = out.iter().any(|a: &ChainArg| {
                        a.data == d as u32
                            && (mode_of(a) != mode
                                || matches!(mode, Mode::Write | Mode::Rw)
                                || matches!(mode_of(a), Mode::Write | Mode::Rw))
                    });
                    if !clash {
                        out.push(arg(d as u32, n, map, mode));
                    }
                }
                out
            } else {
                args.into_iter().map(|(d, n, map, mode)| arg(d as u32, n, map, mode)).collect()
            };
            ChainLoop { size: m.sizes[set], args }
        })
        .collect()
}

#[test]
fn random_chains() {
    let mut rng = Rng(0x5eed_0f71_11e5);
    let (mut cases, mut rejected, mut moved) = (0, 0, 0);
    let (mut max_levels, mut listed, mut loops) = (0, 0, 0);
    for round in 0..300 {
        let mesh = random_mesh(&mut rng);
        let legal = round % 2 == 0;
        let chain = random_chain(&mut rng, &mesh, legal);
        let expect = eager(&chain);
        for tile_size in [1, 3, 16, 1000] {
            for schedule in [Schedule::Sequential, Schedule::Parallel] {
                let t = inspect(&chain, tile_size, schedule).unwrap();
                cases += 1;
                assert_eq!(t.tiles, chain[0].size.div_ceil(tile_size).max(1));
                assert_eq!(t.schedule, schedule);
                let of = tile_of(&chain, &t);
                for (l, lp) in chain.iter().enumerate() {
                    let total: usize = (0..t.tiles).map(|b| t.tile_len(l, b)).sum();
                    assert_eq!(total, lp.size);
                }
                // The seed is cut into contiguous blocks in execution order.
                for (i, &b) in of[0].iter().enumerate() {
                    let s = i / tile_size;
                    let pos = match schedule {
                        Schedule::Sequential => s,
                        Schedule::Parallel if s % 2 == 0 => s / 2,
                        Schedule::Parallel => t.tiles.div_ceil(2) + s / 2,
                    };
                    assert_eq!(b, pos);
                }
                if let Err(e) = verify(&chain, &t) {
                    panic!("round {round} tile size {tile_size} {schedule:?}: {e}\n{chain:?}\n{t:?}");
                }
                listed += check_lists(&t);
                loops += chain.len();
                match schedule {
                    Schedule::Sequential => {
                        assert_eq!(t.level, (0..t.tiles as u32).collect::<Vec<_>>());
                        assert_eq!(bits(&tiled(&chain, &t)), bits(&expect), "round {round} tile size {tile_size}");
                    }
                    Schedule::Parallel => {
                        max_levels = max_levels.max(t.nlevels);
                        if legal {
                            assert!(close(&tiled(&chain, &t), &expect), "round {round} tile size {tile_size}");
                        }
                    }
                }
                // Move one iteration of a later loop to an earlier tile: whenever verify still
                // accepts the tiling, Sequential results must stay bit for bit (and verify must
                // reject some of these moves).
                if schedule == Schedule::Sequential && t.tiles > 1 {
                    let l = 1 + rng.below(chain.len() - 1);
                    if chain[l].size > 0 {
                        let i = rng.below(chain[l].size);
                        if of[l][i] > 0 {
                            let mut of2 = of.clone();
                            of2[l][i] = rng.below(of[l][i]);
                            let t2 = Tiling { runs: runs_from(&of2, t.tiles), ..t.clone() };
                            moved += 1;
                            match verify(&chain, &t2) {
                                Ok(()) => assert_eq!(bits(&tiled(&chain, &t2)), bits(&expect)),
                                Err(_) => rejected += 1,
                            }
                        }
                    }
                }
            }
        }
    }
    eprintln!("random chains: {cases} tilings verified, {rejected} of {moved} moved iterations rejected, at most {max_levels} levels on Parallel, {listed} loops listed");
    assert!(rejected > moved / 4, "{rejected} of {moved}");
    // Both kinds occur: loops listed (short runs) and loops left as runs.
    assert!(listed > loops / 10 && listed < loops * 9 / 10, "{listed} of {loops} loops listed");
}

/// `Tiling::lists`: a loop is listed exactly when its tiles average fewer than `LIST_RUN_MAX`
/// iterations a run, and its list holds each tile's runs' iterations, in order. Returns how
/// many loops are listed.
fn check_lists(t: &Tiling) -> usize {
    assert_eq!(t.lists.len(), t.runs.len());
    let mut listed = 0;
    for (l, runs) in t.runs.iter().enumerate() {
        let nruns: usize = runs.iter().map(Vec::len).sum();
        let n: usize = (0..t.tiles).map(|b| t.tile_len(l, b)).sum();
        match &t.lists[l] {
            None => {
                assert!(nruns == 0 || n >= nruns * LIST_RUN_MAX, "loop {l}: {n} iterations in {nruns} runs, not listed")
            }
            Some(list) => {
                assert!(n < nruns * LIST_RUN_MAX, "loop {l}: {n} iterations in {nruns} runs, listed");
                assert_eq!(list.offsets.len(), t.tiles + 1);
                assert_eq!(list.elems.len(), n);
                for (b, tile) in runs.iter().enumerate() {
                    let want: Vec<i32> = tile.iter().flat_map(|&(s, e)| s as i32..e as i32).collect();
                    assert_eq!(list.tile(b), &want[..], "loop {l} tile {b}");
                }
                assert!(list.tile(t.tiles).is_empty());
                listed += 1;
            }
        }
    }
    listed
}

// ---------------------------------------------------------------------------------------------
// Airfoil-shaped grid

fn airfoil_stats(chain: &[ChainLoop], t: &Tiling) -> Vec<(usize, usize)> {
    (0..chain.len())
        .map(|l| {
            let lens: Vec<usize> = (0..t.tiles).map(|b| t.tile_len(l, b)).collect();
            (*lens.iter().min().unwrap(), *lens.iter().max().unwrap())
        })
        .collect()
}

#[test]
fn airfoil_grid() {
    let g = Grid::new(60, 40);
    let chain = airfoil_chain(&g);
    let expect = eager(&chain);
    for rows in [8, 10, 20] {
        let ts = rows * 60;
        let t = inspect(&chain, ts, Schedule::Parallel).unwrap();
        verify(&chain, &t).unwrap();
        assert!(close(&tiled(&chain, &t), &expect));
        assert_eq!(t.nlevels, 2, "tile of {rows} rows: levels {:?}", t.level);
        // Even seed blocks first (level 0), then the odd ones (level 1).
        let half = t.tiles.div_ceil(2);
        assert!(t.level.iter().enumerate().all(|(b, &v)| v == (b >= half) as u32), "{:?}", t.level);
        let st = airfoil_stats(&chain, &t);
        eprintln!(
            "airfoil 60x40 Parallel, tiles of {rows} rows ({} tiles): per loop (min, max) per tile {st:?}",
            t.tiles
        );
        // Every tile gets a fair share of the cell loops: at least a third of its seed share.
        for (l, &(lo, hi)) in st.iter().enumerate() {
            if chain[l].size == g.cells {
                assert!(lo >= ts / 3 && hi <= 2 * ts, "loop {l}: {lo}..{hi} of {ts}");
            }
        }
        let t = inspect(&chain, ts, Schedule::Sequential).unwrap();
        verify(&chain, &t).unwrap();
        assert_eq!(bits(&tiled(&chain, &t)), bits(&expect));
        let st = airfoil_stats(&chain, &t);
        eprintln!("airfoil 60x40 Sequential, tiles of {rows} rows: per loop (min, max) per tile {st:?}");
        for (l, &(lo, hi)) in st.iter().enumerate() {
            if chain[l].size == g.cells {
                assert!(lo >= ts / 3 && hi <= 2 * ts, "loop {l}: {lo}..{hi} of {ts}");
            }
        }
    }

    // A dependent update cell moved to an earlier tile breaks the tiling.
    let t = inspect(&chain, 600, Schedule::Sequential).unwrap();
    let mut of = tile_of(&chain, &t);
    let i = of[4].iter().position(|&b| b == 2).unwrap();
    of[4][i] = 1;
    let broken = Tiling { runs: runs_from(&of, t.tiles), ..t };
    assert!(verify(&chain, &broken).is_err());
    assert_ne!(bits(&tiled(&chain, &broken)), bits(&expect));
}

/// The cost on OP2's 720K-cell size (1200 x 600): `cargo test --release --test tiling -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn airfoil_720k_timing() {
    let g = Grid::new(1200, 600);
    let chain = airfoil_chain(&g);
    for schedule in [Schedule::Sequential, Schedule::Parallel] {
        for ts in [8192, 32768] {
            let t0 = std::time::Instant::now();
            let t = inspect(&chain, ts, schedule).unwrap();
            let dt = t0.elapsed();
            let t0 = std::time::Instant::now();
            verify(&chain, &t).unwrap();
            let dv = t0.elapsed();
            let st = airfoil_stats(&chain, &t);
            eprintln!(
                "720K {schedule:?} tile {ts}: {} tiles, {} levels, inspect {:.1} ms, verify {:.1} ms, \
                 (min, max) per loop {st:?}",
                t.tiles,
                t.nlevels,
                dt.as_secs_f64() * 1e3,
                dv.as_secs_f64() * 1e3
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Deferral (MPI: the tiles run what depends on no halo; the rest runs after, loop by loop)

/// A model of MPI's halo exchange before loop `k`: every data with pinned rows sets each of its
/// `PIN_TOUCH` rows (halo) from the current values of its `PIN_MODIFY` rows (the rows other
/// processes import) and `k`.
fn exchange(pins: &Pins, k: usize, vals: &mut [Vec<f64>]) {
    for (d, mask) in &pins.rows {
        let Some(v) = vals.get_mut(*d as usize) else { continue };
        if v.is_empty() {
            continue;
        }
        let sent: f64 = mask.iter().zip(v.iter()).filter(|(m, _)| **m & PIN_MODIFY != 0).map(|(_, x)| *x).sum();
        for (x, m) in v.iter_mut().zip(mask) {
            if m & PIN_TOUCH != 0 {
                *x = 0.5 * sent + k as f64 + 0.001 * *x;
            }
        }
    }
}

/// Loop by loop, each loop after its exchange.
fn eager_exchanging(loops: &[ChainLoop], pins: &Pins) -> Vec<Vec<f64>> {
    let mut vals = initial(loops);
    for (l, lp) in loops.iter().enumerate() {
        exchange(pins, l, &mut vals);
        for i in 0..lp.size {
            kernel(l, i, lp, &mut vals);
        }
    }
    vals
}

/// Phase 1: the tiles (levels in order, a level's tiles in decreasing index order), no exchange;
/// phase 2: per loop in order, its exchange, then its deferred iterations.
fn two_phases(loops: &[ChainLoop], t: &Tiling, pins: &Pins) -> Vec<Vec<f64>> {
    let mut vals = tiled(loops, t);
    for (l, lp) in loops.iter().enumerate() {
        exchange(pins, l, &mut vals);
        for &(s, e) in &t.deferred[l] {
            for i in s as usize..e as usize {
                kernel(l, i, lp, &mut vals);
            }
        }
    }
    vals
}

/// Brute force, independent of `verify`: no tiled iteration is pinned, touches a row pinned
/// against its access, or conflicts with (both touch an element, one modifies it) a deferred
/// iteration before it in eager order (an earlier loop; on Sequential, also earlier in its own
/// loop). Returns the number of deferred iterations.
fn check_deferral(loops: &[ChainLoop], t: &Tiling, pins: &Pins) -> usize {
    let mut deferred: Vec<Vec<bool>> = loops.iter().map(|lp| vec![false; lp.size]).collect();
    let mut tiled_it: Vec<Vec<bool>> = loops.iter().map(|lp| vec![false; lp.size]).collect();
    for (l, rs) in t.deferred.iter().enumerate() {
        for &(s, e) in rs {
            deferred[l][s as usize..e as usize].fill(true);
        }
    }
    for (l, tiles) in t.runs.iter().enumerate() {
        for rs in tiles {
            for &(s, e) in rs {
                for i in s as usize..e as usize {
                    assert!(!deferred[l][i], "loop {l} iteration {i} both tiled and deferred");
                    tiled_it[l][i] = true;
                }
            }
        }
    }
    let mask_of = |d: u32| pins.rows.iter().find(|(x, _)| *x == d).map(|(_, m)| m);
    // Per element: the deferred accesses so far (loop, iteration, modifies).
    let ndata = loops.iter().flat_map(|l| l.args.iter()).map(|a| a.data as usize + 1).max().unwrap_or(0);
    type Accesses = std::collections::HashMap<usize, Vec<(usize, usize, bool)>>;
    let mut seen: Vec<Accesses> = vec![Default::default(); ndata];
    let mut count = 0;
    for (l, lp) in loops.iter().enumerate() {
        for i in 0..lp.size {
            assert!(deferred[l][i] || tiled_it[l][i], "loop {l} iteration {i} runs nowhere");
            if deferred[l][i] {
                count += 1;
                for a in lp.args.iter().filter(|a| a.reads || a.writes || a.inc) {
                    for x in elements(a, i) {
                        seen[a.data as usize].entry(x).or_default().push((l, i, a.writes || a.inc));
                    }
                }
                continue;
            }
            assert!(
                pins.iterations.get(l).is_none_or(|f| f.is_empty() || !f[i]),
                "pinned loop {l} iteration {i} is tiled"
            );
            for a in lp.args.iter().filter(|a| a.reads || a.writes || a.inc) {
                let m = a.writes || a.inc;
                for x in elements(a, i) {
                    if let Some(mask) = mask_of(a.data) {
                        assert!(
                            mask[x] & PIN_TOUCH == 0,
                            "loop {l} iteration {i} is tiled and touches halo row {x} of data {}",
                            a.data
                        );
                        assert!(
                            !m || mask[x] & PIN_MODIFY == 0,
                            "loop {l} iteration {i} is tiled and modifies exported row {x} of data {}",
                            a.data
                        );
                    }
                    for &(l2, i2, m2) in seen[a.data as usize].get(&x).map_or(&[][..], Vec::as_slice) {
                        let before = l2 < l || (t.schedule == Schedule::Sequential && l2 == l && i2 < i);
                        assert!(
                            !(before && (m || m2)),
                            "loop {l} iteration {i} is tiled but depends on deferred loop {l2} iteration {i2} (element {x} of data {})",
                            a.data
                        );
                    }
                }
            }
        }
    }
    count
}

/// Random pins for a chain on a mesh: some iterations, and per data some halo rows
/// (`PIN_TOUCH`) and some exported rows (`PIN_MODIFY`).
fn random_pins(rng: &mut Rng, chain: &[ChainLoop], m: &Mesh) -> Pins {
    let iterations = chain
        .iter()
        .map(|lp| if rng.chance(50) { (0..lp.size).map(|_| rng.chance(5)).collect() } else { Vec::new() })
        .collect();
    let mut rows = Vec::new();
    for (d, &set) in m.data_set.iter().enumerate() {
        if rng.chance(70) {
            let n = m.sizes[set];
            // The last rows as the halo (MPI's numbering puts it last), a few owned ones exported.
            let halo = rng.below(n / 4 + 1);
            let mask = (0..n)
                .map(|x| {
                    if x >= n - halo {
                        PIN_TOUCH
                    } else if rng.chance(8) {
                        PIN_MODIFY
                    } else {
                        0
                    }
                })
                .collect();
            rows.push((d as u32, mask));
        }
    }
    Pins { iterations, rows }
}

#[test]
fn deferral_keeps_eager_results_with_exchanges_between_loops() {
    let mut rng = Rng(0xdefe_11ed_0a11);
    let (mut cases, mut deferred, mut total, mut partial) = (0, 0usize, 0usize, 0);
    for round in 0..300 {
        let mesh = random_mesh(&mut rng);
        let legal = round % 2 == 0;
        let chain = random_chain(&mut rng, &mesh, legal);
        let pins = random_pins(&mut rng, &chain, &mesh);
        let expect = eager_exchanging(&chain, &pins);
        for tile_size in [1, 7, 1000] {
            for schedule in [Schedule::Sequential, Schedule::Parallel] {
                let t = inspect_pinned(&chain, tile_size, schedule, &pins).unwrap();
                cases += 1;
                assert_eq!(t.deferred.len(), chain.len());
                if let Err(e) = verify_pinned(&chain, &t, &pins) {
                    panic!("round {round} tile size {tile_size} {schedule:?}: {e}\n{chain:?}\n{pins:?}\n{t:?}");
                }
                let n = check_deferral(&chain, &t, &pins);
                let all: usize = chain.iter().map(|l| l.size).sum();
                assert_eq!((0..chain.len()).map(|l| t.deferred_len(l)).sum::<usize>(), n);
                deferred += n;
                total += all;
                partial += (n > 0 && n < all) as usize;
                match schedule {
                    Schedule::Sequential => assert_eq!(
                        bits(&two_phases(&chain, &t, &pins)),
                        bits(&expect),
                        "round {round} tile size {tile_size}"
                    ),
                    Schedule::Parallel if legal => {
                        assert!(close(&two_phases(&chain, &t, &pins), &expect), "round {round} tile size {tile_size}")
                    }
                    Schedule::Parallel => {}
                }
            }
        }
    }
    eprintln!("deferral: {cases} tilings, {deferred} of {total} iterations deferred, {partial} partly deferred");
    // The pins leave most work to the tiles and defer some in most cases.
    assert!(deferred > total / 20 && deferred < total * 9 / 10, "{deferred} of {total}");
    assert!(partial > cases / 2, "{partial} of {cases}");
}

#[test]
fn deferral_by_hand_on_a_line() {
    // line_chain (6 cells, 5 edges; cells write u, edges read u and increment r, cells read r and
    // write u), tiles of 2 cells. Cell 5 of u in the halo: loop 0's cell 5 touches it, edge 4
    // reads it, and loop 2's cell 5 touches it and cell 4 reads r[4] that edge 4 increments.
    let chain = line_chain();
    let halo = Pins { iterations: Vec::new(), rows: vec![(U, vec![0, 0, 0, 0, 0, PIN_TOUCH])] };
    let t = inspect_pinned(&chain, 2, Schedule::Sequential, &halo).unwrap();
    assert_eq!(t.deferred, vec![vec![(5, 6)], vec![(4, 5)], vec![(4, 6)]]);
    assert_eq!(t.runs[0], vec![vec![(0, 2)], vec![(2, 4)], vec![(4, 5)]]);
    assert_eq!(t.runs[1], vec![vec![(0, 1)], vec![(1, 3)], vec![(3, 4)]]);
    assert_eq!(t.runs[2], vec![vec![(0, 1)], vec![(1, 3)], vec![(3, 4)]]);
    assert_eq!((t.deferred_len(0), t.deferred_len(1), t.deferred_len(2)), (1, 1, 2));
    verify_pinned(&chain, &t, &halo).unwrap();
    // A pinned iteration in a tile (no ordering broken): refused by verify_pinned only.
    let mut broken = t.clone();
    broken.runs[0][2] = vec![(4, 6)];
    broken.deferred[0] = vec![];
    verify(&chain, &broken).unwrap();
    assert!(verify_pinned(&chain, &broken, &halo).unwrap_err().contains("loop 0 iteration 5 is pinned"));
    // An iteration that depends on a deferred one, in a tile: refused by verify.
    let mut broken = t.clone();
    broken.runs[1][2] = vec![(3, 5)];
    broken.deferred[1] = vec![];
    assert!(verify(&chain, &broken).unwrap_err().contains("loop 1 iteration 4"));

    // Cell 1 of r exported: the edges that increment it (0 and 1) are deferred. Sequential keeps
    // each loop's increments in order, so every later edge sharing a cell follows (all edges),
    // and every cell reads r after them; Parallel defers the cells reading r[0..3) only.
    let export = Pins { iterations: Vec::new(), rows: vec![(R, vec![0, PIN_MODIFY, 0, 0, 0, 0])] };
    let t = inspect_pinned(&chain, 2, Schedule::Sequential, &export).unwrap();
    assert_eq!(t.deferred, vec![vec![], vec![(0, 5)], vec![(0, 6)]]);
    verify_pinned(&chain, &t, &export).unwrap();
    let t = inspect_pinned(&chain, 2, Schedule::Parallel, &export).unwrap();
    assert_eq!(t.deferred, vec![vec![], vec![(0, 2)], vec![(0, 3)]]);
    verify_pinned(&chain, &t, &export).unwrap();

    // Reading an exported row is fine, modifying it is not: cell 1 of u exported defers loop 0's
    // cell 1 and the edges reading u[1]; edge 2 is pinned itself; the cells reading what edges
    // 0-2 increment follow.
    let pins = Pins {
        iterations: vec![vec![], vec![false, false, true, false, false]],
        rows: vec![(U, vec![0, PIN_MODIFY, 0, 0, 0, 0])],
    };
    let t = inspect_pinned(&chain, 2, Schedule::Parallel, &pins).unwrap();
    assert_eq!(t.deferred, vec![vec![(1, 2)], vec![(0, 3)], vec![(0, 4)]]);
    verify_pinned(&chain, &t, &pins).unwrap();

    // Pins of the wrong size are errors.
    let bad = Pins { iterations: vec![vec![true]], rows: Vec::new() };
    assert_eq!(inspect_pinned(&chain, 2, Schedule::Sequential, &bad).unwrap_err().code, ErrorCode::BadSize);
    let bad = Pins { iterations: Vec::new(), rows: vec![(U, vec![0; 5])] };
    assert_eq!(inspect_pinned(&chain, 2, Schedule::Sequential, &bad).unwrap_err().code, ErrorCode::BadSize);
    // Without pins, nothing is deferred and the tiling is inspect's.
    let plain = inspect_pinned(&chain, 2, Schedule::Sequential, &Pins::default()).unwrap();
    assert_eq!(plain, inspect(&chain, 2, Schedule::Sequential).unwrap());
    assert!(plain.deferred.iter().all(Vec::is_empty));
}
