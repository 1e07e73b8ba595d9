//! Partitioning in global numbering, as pure functions of the whole mesh (every process runs
//! them on the same gathered input and gets the same answer, so they also run for any number of
//! simulated processes in one test). One primary set is partitioned (block, random, geometric
//! RCB or METIS k-way); every other set follows through maps the way OP2's `partition_all`
//! does: a map *to* a partitioned set gives its from-set the mode of its targets' parts (cost 0
//! for dim 1, else 1), a map *from* a partitioned set gives its to-set the mode of the parts of
//! the elements that point at it (cost 2); cheapest first. A set no map reaches keeps its
//! declared blocks.

use crate::error::Result;
use crate::op2_bail;

/// A map in global numbering.
#[derive(Clone, Copy)]
pub struct GMap<'a> {
    pub from: usize,
    pub to: usize,
    pub dim: usize,
    pub values: &'a [i32],
}

/// Owner of each element when every set keeps its declared blocks (`offsets[r]` is process r's
/// first element; `offsets[P]` the global size).
pub fn block_parts(offsets: &[usize]) -> Vec<i32> {
    let mut out = Vec::with_capacity(*offsets.last().unwrap_or(&0));
    for r in 0..offsets.len().saturating_sub(1) {
        out.extend(std::iter::repeat_n(r as i32, offsets[r + 1] - offsets[r]));
    }
    out
}

/// Deterministic pseudo-random parts (for tests): a 64-bit LCG, so every process agrees.
pub fn random_parts(n: usize, nparts: usize) -> Vec<i32> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % nparts as u64) as i32
        })
        .collect()
}

/// Recursive coordinate bisection: split the longest extent at the weighted median, parts in
/// proportion, until each piece is one part. `coords` has `dim` values per element.
pub fn rcb_parts(coords: &[f64], dim: usize, nparts: usize) -> Vec<i32> {
    let n = coords.len().checked_div(dim).unwrap_or(0);
    let mut parts = vec![0i32; n];
    let mut idx: Vec<u32> = (0..n as u32).collect();
    rcb(coords, dim, &mut idx, 0, nparts, &mut parts);
    parts
}

fn rcb(coords: &[f64], dim: usize, idx: &mut [u32], first: usize, nparts: usize, parts: &mut [i32]) {
    if nparts <= 1 || idx.is_empty() {
        for &i in idx.iter() {
            parts[i as usize] = first as i32;
        }
        return;
    }
    // Longest extent.
    let mut best = (0usize, f64::NEG_INFINITY);
    for d in 0..dim {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for &i in idx.iter() {
            let v = coords[i as usize * dim + d];
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if hi - lo > best.1 {
            best = (d, hi - lo);
        }
    }
    let d = best.0;
    let left = nparts / 2;
    let cut = idx.len() * left / nparts;
    let key = |i: &u32| (coords[*i as usize * dim + d], *i);
    if cut > 0 && cut < idx.len() {
        idx.select_nth_unstable_by(cut, |a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
    }
    let (a, b) = idx.split_at_mut(cut);
    rcb(coords, dim, a, first, left, parts);
    rcb(coords, dim, b, first + left, nparts - left, parts);
}

/// The graph of `map`'s target set: two targets are adjacent when one row names both.
/// Symmetric, without self-loops or duplicates (METIS requires it), as CSR.
pub fn target_graph(map: &GMap, nvtx: usize) -> (Vec<i32>, Vec<i32>) {
    let mut adj: Vec<Vec<i32>> = vec![Vec::new(); nvtx];
    for row in map.values.chunks_exact(map.dim.max(1)) {
        for (a, &u) in row.iter().enumerate() {
            for &v in &row[a + 1..] {
                if u != v {
                    adj[u as usize].push(v);
                    adj[v as usize].push(u);
                }
            }
        }
    }
    let mut xadj = Vec::with_capacity(nvtx + 1);
    let mut adjncy = Vec::new();
    xadj.push(0i32);
    for a in adj.iter_mut() {
        a.sort_unstable();
        a.dedup();
        adjncy.extend_from_slice(a);
        xadj.push(adjncy.len() as i32);
    }
    (xadj, adjncy)
}

/// METIS k-way on a symmetric loop-free CSR graph, with the edge cases METIS cannot take
/// guarded: no vertices, one part, and more parts than vertices (vertex i gets part i).
pub fn kway_parts(xadj: &[i32], adjncy: &[i32], nparts: usize) -> Result<Vec<i32>> {
    let n = xadj.len().saturating_sub(1);
    if n == 0 {
        return Ok(Vec::new());
    }
    if nparts <= 1 {
        return Ok(vec![0; n]);
    }
    if nparts >= n {
        return Ok((0..n as i32).collect());
    }
    debug_assert!(is_symmetric_loop_free(xadj, adjncy));
    #[cfg(feature = "mpi")]
    {
        // METIS's random generator is one static array of the C library (GKlib's random.c), so
        // two calls at once in one process change each other's partitions (seen in parallel
        // unit tests); calls take turns. The lock guards only that library state.
        static METIS_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _turn = METIS_TURN.lock().unwrap_or_else(|e| e.into_inner());
        let mut part = vec![0i32; n];
        let mut g = match metis::Graph::new(1, nparts as i32, xadj, adjncy) {
            Ok(g) => g,
            Err(e) => op2_bail!(Internal, "op_partition: METIS rejected the graph: {e:?}"),
        };
        g = g.set_option(metis::option::Seed(1));
        if let Err(e) = g.part_kway(&mut part) {
            op2_bail!(BadConfig, "op_partition: METIS k-way failed: {e:?}");
        }
        Ok(part)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = adjncy;
        op2_bail!(BackendUnavailable, "op_partition: METIS is not in this build (cargo feature mpi)")
    }
}

/// Whether a CSR graph is symmetric and has no self-loops (what METIS needs).
pub fn is_symmetric_loop_free(xadj: &[i32], adjncy: &[i32]) -> bool {
    let n = xadj.len().saturating_sub(1);
    let nb = |u: usize| &adjncy[xadj[u] as usize..xadj[u + 1] as usize];
    (0..n).all(|u| nb(u).iter().all(|&v| v as usize != u && (v as usize) < n && nb(v as usize).contains(&(u as i32))))
}

/// The part of each element of a map's from-set (rows of `dim` targets in `values`): the mode
/// of its targets' parts, `part_of(target)`. What the gathered and the distributed derivation
/// do along a map to a set with parts.
pub fn row_modes(values: &[i32], dim: usize, part_of: impl Fn(i32) -> i32) -> Vec<i32> {
    let mut buf = vec![0i32; dim];
    values
        .chunks_exact(dim.max(1))
        .map(|row| {
            for (b, &t) in buf.iter_mut().zip(row) {
                *b = part_of(t);
            }
            mode(&buf)
        })
        .collect()
}

/// The most frequent value, ties to the first in `vals`' order (OP2's rule).
pub fn mode(vals: &[i32]) -> i32 {
    let mut best = (vals.first().copied().unwrap_or(0), 0usize);
    for (i, &v) in vals.iter().enumerate() {
        if vals[..i].contains(&v) {
            continue;
        }
        let c = vals.iter().filter(|&&w| w == v).count();
        if c > best.1 {
            best = (v, c);
        }
    }
    best.0
}

/// The next derivation step (OP2's order): among the maps given as (from, to, dim), the
/// cheapest whose one end is partitioned (`known`) and the other not; a map *to* a partitioned
/// set costs 0 for dim 1, else 1 (`forward`: its from-set follows the targets), a map *from* one
/// costs 2 (its to-set follows by votes); ties to the first map. None when nothing is left.
pub fn next_derivation(
    maps: impl Iterator<Item = (usize, usize, usize)>,
    known: &dyn Fn(usize) -> bool,
) -> Option<(usize, bool)> {
    let mut best: Option<(u32, usize, bool)> = None;
    for (i, (from, to, dim)) in maps.enumerate() {
        if !known(from) && known(to) {
            let c = if dim == 1 { 0 } else { 1 };
            if best.is_none_or(|b| c < b.0) {
                best = Some((c, i, true));
            }
        } else if !known(to) && known(from) && best.is_none_or(|b| 2 < b.0) {
            best = Some((2, i, false));
        }
    }
    best.map(|(_, i, forward)| (i, forward))
}

/// Derives the parts of every set not given in `parts` through the maps, cheapest map first.
/// `fallback[s]` is used for a set that no map reaches (its declared blocks).
pub fn derive(sizes: &[usize], maps: &[GMap], parts: &mut [Option<Vec<i32>>], fallback: &dyn Fn(usize) -> Vec<i32>) {
    loop {
        let known = |s: usize| parts[s].is_some();
        let Some((i, forward)) = next_derivation(maps.iter().map(|m| (m.from, m.to, m.dim)), &known) else { break };
        let m = &maps[i];
        if forward {
            let tp = parts[m.to].as_ref().map_or(&[][..], |v| v.as_slice());
            parts[m.from] = Some(row_modes(m.values, m.dim, |t| tp[t as usize]));
        } else {
            let fp = parts[m.from].as_ref().map_or(&[][..], |v| v.as_slice());
            let fb = fallback(m.to);
            // (part, count) of the elements naming each target: a few entries each, so memory
            // stays O(set) at any P (a dense count per part was O(set x P): 12 GB for 720K
            // nodes at P = 4096).
            let mut counts: Vec<Vec<(i32, u32)>> = vec![Vec::new(); sizes[m.to]];
            for (e, row) in m.values.chunks_exact(m.dim).enumerate() {
                for &t in row {
                    let c = &mut counts[t as usize];
                    match c.iter_mut().find(|x| x.0 == fp[e]) {
                        Some(x) => x.1 += 1,
                        None => c.push((fp[e], 1)),
                    }
                }
            }
            let p: Vec<i32> = counts
                .iter()
                .enumerate()
                .map(|(t, c)| {
                    // the most elements, ties to the lowest part
                    c.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map_or(fb[t], |x| x.0)
                })
                .collect();
            parts[m.to] = Some(p);
        }
    }
    for (s, p) in parts.iter_mut().enumerate() {
        if p.is_none() {
            *p = Some(fallback(s));
        }
    }
}

/// What `op_partition` was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Block,
    Random,
    Rcb,
    /// METIS k-way on the graph gathered on every process (small runs).
    Kway,
    /// ParMETIS's interface (PT-Scotch's) on the distributed graph; `geom`: PartGeomKway with
    /// the coordinates of the graph's vertices.
    ParKway {
        geom: bool,
    },
}

/// The method for `lib`/`routine`, or `OP2_ERR_BAD_CONFIG` naming the supported ones. The
/// routine means nothing to BLOCK and RANDOM: any is accepted there, as OP2 does (its tutorial
/// Airfoil calls `op_partition("BLOCK", "ANY", ...)`); a misspelt library, or a routine the
/// library lacks, is an error.
pub fn method(lib: &str, routine: Option<&str>) -> Result<Method> {
    let r = routine.map(|r| r.to_ascii_uppercase());
    let l = lib.to_ascii_uppercase();
    Ok(match (l.as_str(), r.as_deref()) {
        ("BLOCK", _) => Method::Block,
        ("RANDOM", _) => Method::Random,
        // Geometric routines of the libraries that have one (METIS has none), and RCB's own.
        ("PARMETIS" | "PTSCOTCH" | "RCB" | "GEOM", Some("GEOM" | "RCB")) => Method::Rcb,
        ("RCB", None | Some("")) | ("GEOM", None | Some("")) => Method::Rcb,
        ("METIS" | "KWAY", None | Some("") | Some("KWAY")) => Method::Kway,
        ("PARMETIS" | "PTSCOTCH", None | Some("") | Some("KWAY")) => Method::ParKway { geom: false },
        ("PARMETIS", Some("GEOMKWAY")) => Method::ParKway { geom: true },
        _ => op2_bail!(
            BadConfig,
            "op_partition: unknown partitioner lib '{lib}' routine '{}': supported are BLOCK, RANDOM, RCB (or routine GEOM, on coords), METIS (gathered) or PARMETIS/PTSCOTCH (distributed) with KWAY (on prime_map), PARMETIS with GEOMKWAY (prime_map and coords on its to-set); BLOCK and RANDOM take any routine",
            routine.unwrap_or("(null)")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(method("BLOCK", None).unwrap(), Method::Block);
        assert_eq!(method("PTSCOTCH", Some("KWAY")).unwrap(), Method::ParKway { geom: false });
        assert_eq!(method("METIS", Some("KWAY")).unwrap(), Method::Kway);
        assert_eq!(method("parmetis", Some("geomkway")).unwrap(), Method::ParKway { geom: true });
        assert_eq!(method("PARMETIS", Some("GEOM")).unwrap(), Method::Rcb);
        let e = method("SCOTCHY", Some("KWAY")).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::BadConfig);
        assert!(e.message.contains("supported are BLOCK, RANDOM, RCB"), "{}", e.message);
        // The routine means nothing to BLOCK and RANDOM (OP2's Airfoil passes "ANY").
        assert_eq!(method("BLOCK", Some("ANY")).unwrap(), Method::Block);
        assert_eq!(method("block", Some("KWAY")).unwrap(), Method::Block);
        assert_eq!(method("RANDOM", Some("whatever")).unwrap(), Method::Random);
        assert_eq!(method("BLOCK", Some("GEOM")).unwrap(), Method::Block);
        // A misspelt library, or a routine the library lacks: named errors.
        assert_eq!(method("PTSCOTCH", Some("GEOM")).unwrap(), Method::Rcb);
        assert_eq!(method("RCB", Some("rcb")).unwrap(), Method::Rcb);
        for (lib, routine) in [
            ("BLOK", Some("ANY")),
            ("BLOK", Some("GEOM")),
            ("RANDUM", None),
            ("METIS", Some("ANY")),
            ("METIS", Some("GEOM")),
            ("PTSCOTCH", Some("KWAYS")),
            ("RCB", Some("KWAY")),
            ("PTSCOTCH", Some("GEOMKWAY")),
            ("METIS", Some("GEOMKWAY")),
        ] {
            let e = method(lib, routine).unwrap_err();
            assert_eq!(e.code, crate::error::ErrorCode::BadConfig, "{lib} {routine:?}");
            assert!(
                e.message.contains(&format!("lib '{lib}' routine '{}'", routine.unwrap_or("(null)"))),
                "{}",
                e.message
            );
        }
    }

    #[test]
    #[cfg(feature = "mpi")]
    fn metis_edge_cases_are_guarded() {
        assert!(kway_parts(&[0], &[], 4).unwrap().is_empty());
        assert_eq!(kway_parts(&[0, 1, 2], &[1, 0], 5).unwrap(), vec![0, 1]);
        assert_eq!(kway_parts(&[0, 1, 2], &[1, 0], 1).unwrap(), vec![0, 0]);
        // A path of 8 vertices in 2 parts: METIS cuts it once.
        let (x, a) =
            target_graph(&GMap { from: 0, to: 1, dim: 2, values: &[0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7] }, 8);
        assert!(is_symmetric_loop_free(&x, &a));
        let p = kway_parts(&x, &a, 2).unwrap();
        assert_eq!(p.iter().filter(|&&v| v == 0).count(), 4);
        let cuts = (0..7).filter(|&i| p[i] != p[i + 1]).count();
        assert_eq!(cuts, 1);
    }

    #[test]
    fn target_graph_drops_loops_and_duplicates() {
        let (x, a) = target_graph(&GMap { from: 0, to: 1, dim: 2, values: &[0, 0, 0, 1, 1, 0] }, 3);
        assert_eq!(x, vec![0, 1, 2, 2]);
        assert_eq!(a, vec![1, 0]);
    }

    #[test]
    fn derivation_follows_the_mode() {
        // cells 0..4 parts [0,0,1,1]; edges -> cells (dim 2); nodes <- cells (dim 2)
        let ecell = [0, 1, 1, 2, 2, 3];
        let cnode = [0, 1, 1, 2, 2, 3, 3, 4];
        let maps = [GMap { from: 1, to: 0, dim: 2, values: &ecell }, GMap { from: 0, to: 2, dim: 2, values: &cnode }];
        let mut parts = vec![Some(vec![0, 0, 1, 1]), None, None];
        derive(&[4, 3, 5], &maps, &mut parts, &|s| vec![0; [4, 3, 5][s]]);
        // edge (1,2): tie -> first target's part 0
        assert_eq!(parts[1].as_deref(), Some(&[0, 0, 1][..]));
        // node 2: cells 1 (0) and 2 (1): tie -> lowest part
        assert_eq!(parts[2].as_deref(), Some(&[0, 0, 0, 1, 1][..]));
    }

    #[test]
    fn rcb_balances() {
        let coords: Vec<f64> = (0..100).flat_map(|i| [(i % 10) as f64, (i / 10) as f64 * 3.0]).collect();
        let p = rcb_parts(&coords, 2, 3);
        for q in 0..3 {
            let c = p.iter().filter(|&&v| v == q).count();
            assert!((33..=34).contains(&c), "{c}");
        }
    }
}
