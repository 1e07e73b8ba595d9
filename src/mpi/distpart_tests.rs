//! The distributed partitioner against the gathered one: processes simulated by threads (one
//! per rank, all-to-all through shared slots), random meshes, every method; each process's
//! layouts, map rows and parts must equal what the gathered functions give it.

use super::*;
use crate::mpi::layout;
use crate::mpi::partition::{self, GMap};
use std::sync::{Barrier, Mutex};

struct Shared {
    barrier: Barrier,
    slots: Mutex<Vec<Vec<Vec<u8>>>>,
}

struct Sim<'a> {
    rank: usize,
    size: usize,
    shared: &'a Shared,
}

impl Coll for Sim<'_> {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn all_to_all(&self, send: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        assert_eq!(send.len(), self.size);
        self.shared.slots.lock().unwrap()[self.rank] = send.to_vec();
        self.shared.barrier.wait();
        let out = {
            let slots = self.shared.slots.lock().unwrap();
            (0..self.size).map(|q| slots[q][self.rank].clone()).collect()
        };
        self.shared.barrier.wait();
        Ok(out)
    }
    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.all_to_all(&vec![mine.to_vec(); self.size])
    }
}

/// Runs `f` on `p` simulated processes; their results in rank order.
fn run<T: Send>(p: usize, f: impl Fn(&dyn Coll) -> T + Sync) -> Vec<T> {
    let shared = Shared { barrier: Barrier::new(p), slots: Mutex::new(vec![Vec::new(); p]) };
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..p)
            .map(|r| {
                let (shared, f) = (&shared, &f);
                s.spawn(move || f(&Sim { rank: r, size: p, shared }))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn lcg(x: &mut u64) -> u64 {
    *x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *x >> 33
}

/// Blocks of n over p processes, the conventional split, with an empty block when `hole`.
fn blocks(n: usize, p: usize, hole: bool) -> Vec<usize> {
    let mut o: Vec<usize> = (0..=p).map(|r| n * r / p).collect();
    if hole && p > 2 {
        o[1] = o[0];
    }
    o
}

/// A random mesh: sets cells, edges, nodes, loose (no maps); maps edges->cells (2),
/// edges->nodes (2), cells->nodes (4), loose->loose none.
struct Mesh {
    sizes: Vec<usize>,
    maps: Vec<(usize, usize, usize, Vec<i32>)>,
}

fn mesh(seed: u64, ncell: usize) -> Mesh {
    let mut x = seed;
    let nnode = ncell + 7;
    let nedge = 2 * ncell;
    let rnd = |x: &mut u64, n: usize| (lcg(x) % n as u64) as i32;
    // Locality: rows mostly name nearby elements, so halos are not everything.
    let near = |x: &mut u64, c: usize, n: usize| ((c + (lcg(x) % 9) as usize) % n) as i32;
    let ec: Vec<i32> = (0..nedge).flat_map(|e| [near(&mut x, e / 2, ncell), near(&mut x, e / 2, ncell)]).collect();
    let en: Vec<i32> = (0..nedge).flat_map(|e| [near(&mut x, e / 2, nnode), rnd(&mut x, nnode)]).collect();
    let cn: Vec<i32> = (0..ncell).flat_map(|c| (0..4).map(|_| near(&mut x, c, nnode)).collect::<Vec<_>>()).collect();
    Mesh { sizes: vec![ncell, nedge, nnode, 5], maps: vec![(1, 0, 2, ec), (1, 2, 2, en), (0, 2, 4, cn)] }
}

/// Every set's parts from the gathered derivation, `prime` given on set `ps`.
fn gathered_parts(m: &Mesh, offs: &[Vec<usize>], ps: usize, prime: &[i32]) -> Vec<Vec<i32>> {
    let gmaps: Vec<GMap> = m.maps.iter().map(|(f, t, d, v)| GMap { from: *f, to: *t, dim: *d, values: v }).collect();
    let mut gparts: Vec<Option<Vec<i32>>> = vec![None; m.sizes.len()];
    gparts[ps] = Some(prime.to_vec());
    let fb = |s: usize| partition::block_parts(&offs[s]);
    partition::derive(&m.sizes, &gmaps, &mut gparts, &fb);
    gparts.into_iter().map(Option::unwrap).collect()
}

/// Each process's (layouts, local maps) from the gathered functions, given every set's parts.
fn gathered(m: &Mesh, parts: &[Vec<i32>], p: usize) -> Vec<(Vec<SetLayout>, Vec<Vec<i32>>)> {
    let gmaps: Vec<GMap> = m.maps.iter().map(|(f, t, d, v)| GMap { from: *f, to: *t, dim: *d, values: v }).collect();
    let h = layout::halos(&m.sizes, &gmaps, parts, p);
    (0..p)
        .map(|me| {
            let ls: Vec<SetLayout> = (0..m.sizes.len()).map(|s| layout::set_layout(&h, parts, s, me as i32)).collect();
            let lm = gmaps.iter().map(|g| layout::local_map(g, &ls[g.from], &ls[g.to], "m").unwrap()).collect();
            (ls, lm)
        })
        .collect()
}

/// One process's distributed run: parts of `prime` from `part_of` (its block), derive, layouts,
/// local maps; returns (all parts of its blocks, layouts, local maps).
type Out = (Vec<Vec<i32>>, Vec<SetLayout>, Vec<Vec<i32>>);

fn distributed(c: &dyn Coll, m: &Mesh, offs: &[Vec<usize>], prime: usize, prime_parts: Vec<i32>) -> Out {
    let me = c.rank();
    let dmaps: Vec<DMap> = m
        .maps
        .iter()
        .map(|(f, t, d, v)| DMap { from: *f, to: *t, dim: *d, values: &v[offs[*f][me] * d..offs[*f][me + 1] * d] })
        .collect();
    let mut parts: Vec<Option<Vec<i32>>> = vec![None; m.sizes.len()];
    parts[prime] = Some(prime_parts);
    derive(c, offs, &dmaps, &mut parts).unwrap();
    let parts: Vec<Vec<i32>> = parts.into_iter().map(Option::unwrap).collect();
    let ls = layouts(c, offs, &dmaps, &parts).unwrap();
    let lm = dmaps.iter().map(|d| local_map(c, d, &offs[d.from], &ls[d.from], &ls[d.to], "m").unwrap()).collect();
    (parts, ls, lm)
}

/// Derived parts, layouts and local maps equal the gathered ones for 1-5 processes, with
/// random and block prime parts, an empty block, and a set no map reaches.
#[test]
fn layouts_match_gathered() {
    for (seed, ncell) in [(1u64, 40usize), (2, 97), (3, 8)] {
        let m = mesh(seed, ncell);
        for p in 1..=5 {
            for hole in [false, true] {
                let offs: Vec<Vec<usize>> = m.sizes.iter().map(|&n| blocks(n, p, hole)).collect();
                // Prime set cells, random parts; the gathered side derives from the same.
                let prime = partition::random_parts(m.sizes[0], p);
                let gparts = gathered_parts(&m, &offs, 0, &prime);
                let want = gathered(&m, &gparts, p);
                let got = run(p, |c| {
                    let me = c.rank();
                    let mine = random(offs[0][me], offs[0][me + 1] - offs[0][me], p).unwrap();
                    assert_eq!(mine, prime[offs[0][me]..offs[0][me + 1]], "random parts of block {me}");
                    distributed(c, &m, &offs, 0, mine)
                });
                for (me, ((parts, ls, lm), (wls, wlm))) in got.iter().zip(&want).enumerate() {
                    for s in 0..m.sizes.len() {
                        assert_eq!(parts[s], gparts[s][offs[s][me]..offs[s][me + 1]], "seed {seed} p {p} set {s}");
                    }
                    assert_eq!(ls, wls, "seed {seed} p {p} hole {hole} process {me}");
                    assert_eq!(lm, wlm, "seed {seed} p {p} process {me}");
                }
            }
        }
    }
}

/// Nodes partitioned (as GEOMKWAY would): the edges and cells follow through maps *from* them,
/// the direction whose votes go to the targets' homes.
#[test]
fn layouts_match_gathered_from_nodes() {
    let m = mesh(11, 60);
    for p in [2usize, 3, 4] {
        let offs: Vec<Vec<usize>> = m.sizes.iter().map(|&n| blocks(n, p, p == 3)).collect();
        let prime = partition::random_parts(m.sizes[2], p);
        let gparts = gathered_parts(&m, &offs, 2, &prime);
        let want = gathered(&m, &gparts, p);
        let got = run(p, |c| {
            let me = c.rank();
            distributed(c, &m, &offs, 2, prime[offs[2][me]..offs[2][me + 1]].to_vec())
        });
        for (me, ((_, ls, lm), (wls, wlm))) in got.iter().zip(&want).enumerate() {
            assert_eq!(ls, wls, "p {p} process {me}");
            assert_eq!(lm, wlm, "p {p} process {me}");
        }
    }
}

/// Parallel-median RCB cuts exactly where the gathered RCB does, ties in coordinates included.
#[test]
fn rcb_matches_gathered() {
    let mut x = 5u64;
    for (n, dim) in [(200usize, 2usize), (57, 3), (10, 1), (3, 2)] {
        // Coordinates on a coarse grid: many ties, broken by the global index; -0.0 and 0.0.
        let coords: Vec<f64> =
            (0..n * dim).map(|i| if i % 17 == 0 { -0.0 } else { (lcg(&mut x) % 7) as f64 * 0.5 - 1.0 }).collect();
        for nparts in 1..=7 {
            let want = partition::rcb_parts(&coords, dim, nparts);
            for p in [1usize, 2, 3, 5] {
                let offs = blocks(n, p, p == 3);
                let got = run(p, |c| {
                    let me = c.rank();
                    rcb(c, &coords[offs[me] * dim..offs[me + 1] * dim], dim, offs[me], nparts).unwrap()
                });
                assert_eq!(got.concat(), want, "n {n} dim {dim} nparts {nparts} p {p}");
            }
        }
    }
}

/// Each process's rows of the target graph are the gathered graph's rows of its block.
#[test]
fn graph_matches_gathered() {
    let m = mesh(7, 50);
    let (f, t, d, v) = &m.maps[0];
    let (xadj, adjncy) = partition::target_graph(&GMap { from: *f, to: *t, dim: *d, values: v }, m.sizes[*t]);
    for p in 1..=4 {
        let offs: Vec<Vec<usize>> = m.sizes.iter().map(|&n| blocks(n, p, p == 4)).collect();
        let got = run(p, |c| {
            let me = c.rank();
            let dm = DMap { from: *f, to: *t, dim: *d, values: &v[offs[*f][me] * d..offs[*f][me + 1] * d] };
            graph(c, &offs[*t], &dm).unwrap()
        });
        for (me, (gx, ga)) in got.iter().enumerate() {
            let (a, b) = (offs[*t][me], offs[*t][me + 1]);
            let base = xadj[a];
            let wx: Vec<i32> = xadj[a..=b].iter().map(|&x| x - base).collect();
            assert_eq!(gx, &wx, "p {p} process {me}");
            assert_eq!(ga[..], adjncy[xadj[a] as usize..xadj[b] as usize], "p {p} process {me}");
        }
    }
}

/// Rows bigger than a round's bytes, and more rows than one round takes: fetched in rounds
/// (processes asking for different numbers of rows take part in every round).
#[test]
fn fetch_in_rounds() {
    let eb = FETCH_ROUND_BYTES / 3 + 8; // 3 rows do not fit a round
    let n = 7;
    let rows: Vec<u8> = (0..n * eb).map(|i| (i % 251) as u8).collect();
    for p in 1..=3 {
        let offs = blocks(n, p, false);
        let got = run(p, |c| {
            let me = c.rank();
            let wanted: Vec<u32> = (0..(me * 3 + 1) as u32).map(|k| (k * 5 + me as u32) % n as u32).collect();
            let r = fetch_rows(c, &offs, &rows[offs[me] * eb..offs[me + 1] * eb], eb, &wanted).unwrap();
            (wanted, r)
        });
        for (wanted, r) in got {
            for (k, &g) in wanted.iter().enumerate() {
                let g = g as usize;
                assert!(r[k * eb..(k + 1) * eb] == rows[g * eb..(g + 1) * eb], "p {p} row {g}");
            }
        }
    }
}

/// A graph and per-element values moved from blocks with empty processes to even blocks and
/// back are unchanged.
#[test]
fn move_graph_and_values() {
    let m = mesh(9, 30);
    let (f, t, d, v) = &m.maps[0];
    let n = m.sizes[*t];
    for p in 2..=4 {
        let offs: Vec<Vec<usize>> = m.sizes.iter().map(|&k| blocks(k, p, true)).collect();
        let even: Vec<usize> = (0..=p).map(|r| n * r / p).collect();
        let got = run(p, |c| {
            let me = c.rank();
            let dm = DMap { from: *f, to: *t, dim: *d, values: &v[offs[*f][me] * d..offs[*f][me + 1] * d] };
            let (x, a) = graph(c, &offs[*t], &dm).unwrap();
            let (ex, ea) = move_graph(c, &offs[*t], &x, &a, &even).unwrap();
            let vals: Vec<i32> = (offs[*t][me]..offs[*t][me + 1]).flat_map(|g| [g as i32, -(g as i32)]).collect();
            let ev = move_values(c, &offs[*t], &vals, 2, &even).unwrap();
            let back = move_values(c, &even, &ev, 2, &offs[*t]).unwrap();
            (ex, ea, ev, vals == back)
        });
        let (xadj, adjncy) = partition::target_graph(&GMap { from: *f, to: *t, dim: *d, values: v }, n);
        for (me, (ex, ea, ev, same)) in got.iter().enumerate() {
            assert!(same, "p {p} process {me}: values did not come back");
            let (a, b) = (even[me], even[me + 1]);
            let wx: Vec<i32> = xadj[a..=b].iter().map(|&x| x - xadj[a]).collect();
            assert_eq!(ex, &wx, "p {p} process {me}");
            assert_eq!(ea[..], adjncy[xadj[a] as usize..xadj[b] as usize]);
            assert_eq!(ev, &(a..b).flat_map(|g| [g as i32, -(g as i32)]).collect::<Vec<_>>());
        }
    }
}

/// Rows come from their homes in the order asked, repeats included; a lookup answers lists.
#[test]
fn fetch_and_lookup() {
    let n = 23;
    let rows: Vec<u8> = (0..n * 3).map(|i| i as u8).collect();
    for p in 1..=4 {
        let offs = blocks(n, p, p == 4);
        let got = run(p, |c| {
            let me = c.rank();
            let wanted: Vec<u32> = vec![22, 0, 5, 5, (me * 7 % n) as u32];
            let r = fetch_rows(c, &offs, &rows[offs[me] * 3..offs[me + 1] * 3], 3, &wanted).unwrap();
            let lists: Vec<Vec<i32>> = (0..n).map(|g| (0..g % 3).map(|k| (g * 10 + k) as i32).collect()).collect();
            let first = offs[me];
            let a = lookup(c, &offs, wanted.iter().copied(), &|i| &lists[first + i][..]).unwrap();
            let l: Vec<Vec<i32>> = wanted.iter().map(|&g| a.get(g).to_vec()).collect();
            (wanted, r, l)
        });
        for (wanted, r, l) in got {
            for (k, &g) in wanted.iter().enumerate() {
                let g = g as usize;
                assert_eq!(r[k * 3..k * 3 + 3], rows[g * 3..g * 3 + 3]);
                assert_eq!(l[k], (0..g % 3).map(|j| (g * 10 + j) as i32).collect::<Vec<_>>());
            }
        }
    }
}
