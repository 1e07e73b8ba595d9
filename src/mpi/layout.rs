//! Halo construction (OP2's `op_halo_create`, in global numbering, as pure functions): given the
//! owner of every element of every set, each process's local numbering of each set is
//! `[core | owned, not core | exec halo | non-exec halo]`:
//! - exec halo of process q on set S: elements owned elsewhere that some map from S connects to
//!   an element owned by q (q runs them redundantly when a loop writes indirectly);
//! - non-exec halo of q on T: targets of a map into T from a row q owns or runs in its exec
//!   halo, owned elsewhere and not already in q's exec halo of T (read, never run);
//! - core: owned elements in no other process's exec halo (they touch only owned data).
//!
//! Owned elements keep their global order within core and within the rest; halo elements are
//! sorted by (owner, global index), so each neighbour's share is one contiguous run per halo
//! kind and its export list (the same elements, in the same order) needs no negotiation.

use super::partition::GMap;
use crate::core::buffer::AlignedBuf;
use crate::error::Result;
use crate::op2_bail;
use std::collections::{BTreeSet, HashMap};

/// Halo membership for every process: `exec[s][q]` and `nonexec[s][q]`, global indices sorted by
/// (owner, index); `others[s]`: for each element of s whose map rows reach other owners, those
/// owners (sorted).
pub struct Halos {
    pub exec: Vec<Vec<Vec<u32>>>,
    pub nonexec: Vec<Vec<Vec<u32>>>,
    pub others: Vec<HashMap<u32, Vec<i32>>>,
}

/// Builds the halos of `nranks` processes.
pub fn halos(sizes: &[usize], maps: &[GMap], parts: &[Vec<i32>], nranks: usize) -> Halos {
    let nsets = sizes.len();
    let mut others: Vec<HashMap<u32, Vec<i32>>> = vec![HashMap::new(); nsets];
    for m in maps {
        let (pf, pt) = (&parts[m.from], &parts[m.to]);
        for (e, row) in m.values.chunks_exact(m.dim).enumerate() {
            let me = pf[e];
            for &t in row {
                let q = pt[t as usize];
                if q != me {
                    let v = others[m.from].entry(e as u32).or_default();
                    if !v.contains(&q) {
                        v.push(q);
                    }
                }
            }
        }
    }
    for o in others.iter_mut() {
        for v in o.values_mut() {
            v.sort_unstable();
        }
    }
    let mut exec: Vec<Vec<Vec<u32>>> = vec![vec![Vec::new(); nranks]; nsets];
    for s in 0..nsets {
        for (&e, qs) in &others[s] {
            for &q in qs {
                exec[s][q as usize].push(e);
            }
        }
    }
    let mut nonexec_sets: Vec<Vec<BTreeSet<u32>>> = vec![vec![BTreeSet::new(); nranks]; nsets];
    for m in maps {
        let (pf, pt) = (&parts[m.from], &parts[m.to]);
        for (&r, qs) in &others[m.from] {
            let row = &m.values[r as usize * m.dim..(r as usize + 1) * m.dim];
            for q in std::iter::once(pf[r as usize]).chain(qs.iter().copied()) {
                for &t in row {
                    if pt[t as usize] != q && !others[m.to].get(&(t as u32)).is_some_and(|v| v.contains(&q)) {
                        nonexec_sets[m.to][q as usize].insert(t as u32);
                    }
                }
            }
        }
    }
    let nonexec: Vec<Vec<Vec<u32>>> = nonexec_sets
        .into_iter()
        .enumerate()
        .map(|(s, per)| {
            per.into_iter()
                .map(|set| {
                    let mut v: Vec<u32> = set.into_iter().collect();
                    v.sort_by_key(|&e| (parts[s][e as usize], e));
                    v
                })
                .collect()
        })
        .collect();
    for (s, per) in exec.iter_mut().enumerate() {
        for v in per.iter_mut() {
            v.sort_by_key(|&e| (parts[s][e as usize], e));
        }
    }
    Halos { exec, nonexec, others }
}

/// One process's view of one set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetLayout {
    pub owned: usize,
    pub core: usize,
    pub exec: usize,
    pub nonexec: usize,
    /// Local index -> global (declared) index, for all `owned + exec + nonexec` elements.
    pub gids: Gids,
    /// Per neighbour (ascending): the local positions its values land in (its exec share, then
    /// its non-exec share).
    pub imports: Vec<(i32, Vec<u32>)>,
    /// Per neighbour (ascending): the local indices of the owned elements it needs, in the order
    /// of its import list.
    pub exports: Vec<(i32, Vec<u32>)>,
}

impl SetLayout {
    pub fn total(&self) -> usize {
        self.owned + self.exec + self.nonexec
    }
}

/// A layout's global indices (local index -> global). Built flat; `compact` keeps them, when that
/// is at most half the size, as runs of consecutive indices (a partition of a mesh numbered
/// along its rows holds long runs of consecutive elements): the table is kept for the whole
/// run (fetches, output, `op_arg_idx`), 4 bytes an element flat, so on Airfoil's 2.88M-cell
/// mesh at `-n 4` it was 11 MiB a process (#36). The flat table comes back, kept, only where a
/// raw pointer to it is needed (`as_slice`: `op_arg_idx` arguments).
#[derive(Debug, Clone, Default)]
pub struct Gids {
    flat: Vec<u32>,
    /// (first local index, its global index) of each run, ascending; empty when flat.
    runs: Vec<(u32, u32)>,
    len: usize,
    /// The flat table made from the runs for `as_slice`.
    made: std::sync::OnceLock<Vec<u32>>,
}

impl Gids {
    pub fn new(flat: Vec<u32>) -> Gids {
        Gids { len: flat.len(), flat, runs: Vec::new(), made: std::sync::OnceLock::new() }
    }

    /// Keeps the indices as runs when that takes at most half the memory.
    pub fn compact(&mut self) {
        let nruns = 1 + self.flat.windows(2).filter(|w| w[1] != w[0].wrapping_add(1)).count();
        if self.flat.is_empty() || nruns * 8 > self.flat.len() * 2 {
            return;
        }
        let mut runs = Vec::with_capacity(nruns);
        for (i, &g) in self.flat.iter().enumerate() {
            if i == 0 || g != self.flat[i - 1].wrapping_add(1) {
                runs.push((i as u32, g));
            }
        }
        self.runs = runs;
        self.flat = Vec::new();
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The run holding local element `i` (with runs).
    fn run_of(&self, i: usize) -> usize {
        self.runs.partition_point(|r| r.0 as usize <= i).saturating_sub(1)
    }

    /// The global index of local element `i` (< len).
    pub fn get(&self, i: usize) -> u32 {
        if self.runs.is_empty() {
            return self.flat[i];
        }
        let (l, g) = self.runs[self.run_of(i)];
        g + (i as u32 - l)
    }

    /// The global indices of local elements `lo..hi`, in order: with runs, one search for the
    /// first, then run after run.
    pub fn range(&self, lo: usize, hi: usize) -> impl Iterator<Item = u32> + '_ {
        let flat = self.runs.is_empty();
        let mut k = if flat || lo >= hi { 0 } else { self.run_of(lo) };
        (lo..hi).map(move |i| {
            if flat {
                return self.flat[i];
            }
            while self.runs.get(k + 1).is_some_and(|r| r.0 as usize <= i) {
                k += 1;
            }
            let (l, g) = self.runs[k];
            g + (i as u32 - l)
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.range(0, self.len)
    }

    /// A copy, flat.
    pub fn to_vec(&self) -> Vec<u32> {
        if self.runs.is_empty() {
            return self.flat.clone();
        }
        self.iter().collect()
    }

    /// The flat table (made once from the runs, and kept, when compact).
    pub fn as_slice(&self) -> &[u32] {
        if self.runs.is_empty() {
            return &self.flat;
        }
        self.made.get_or_init(|| self.iter().collect())
    }
}

impl PartialEq for Gids {
    fn eq(&self, other: &Gids) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl SetLayout {
    /// The owned rows some neighbour needs (every neighbour's export list, merged), as
    /// (first row, rows) ranges: what a device downloads for an exchange.
    pub fn export_runs(&self) -> Vec<(usize, usize)> {
        runs(self.exports.iter().flat_map(|(_, v)| v.iter().copied()))
    }

    /// The halo rows the neighbours send (every import list, merged), as ranges: what a device
    /// uploads after an exchange (each neighbour's share is one run per halo kind).
    pub fn import_runs(&self) -> Vec<(usize, usize)> {
        runs(self.imports.iter().flat_map(|(_, v)| v.iter().copied()))
    }
}

/// Rows as (first row, rows) ranges of consecutive rows, ascending, each row once.
pub fn runs(rows: impl IntoIterator<Item = u32>) -> Vec<(usize, usize)> {
    let mut v: Vec<u32> = rows.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for r in v {
        match out.last_mut() {
            Some((first, n)) if *first + *n == r as usize => *n += 1,
            _ => out.push((r as usize, 1)),
        }
    }
    out
}

/// Process `me`'s layout of set `s`.
pub fn set_layout(h: &Halos, parts: &[Vec<i32>], s: usize, me: i32) -> SetLayout {
    let p = &parts[s];
    let mut core = Vec::new();
    let mut noncore = Vec::new();
    for (e, &q) in p.iter().enumerate() {
        if q == me {
            if h.others[s].contains_key(&(e as u32)) {
                noncore.push(e as u32);
            } else {
                core.push(e as u32);
            }
        }
    }
    let owned = core.len() + noncore.len();
    let exec = &h.exec[s][me as usize];
    let nonexec = &h.nonexec[s][me as usize];
    let mut gids = core.clone();
    let ncore = core.len();
    gids.extend_from_slice(&noncore);
    let exec_start = gids.len();
    gids.extend_from_slice(exec);
    let nonexec_start = gids.len();
    gids.extend_from_slice(nonexec);
    let mut imports: Vec<(i32, Vec<u32>)> = Vec::new();
    let mut add_import = |q: i32, pos: u32| match imports.iter_mut().find(|(r, _)| *r == q) {
        Some((_, v)) => v.push(pos),
        None => imports.push((q, vec![pos])),
    };
    for (i, &e) in exec.iter().enumerate() {
        add_import(p[e as usize], (exec_start + i) as u32);
    }
    for (i, &e) in nonexec.iter().enumerate() {
        add_import(p[e as usize], (nonexec_start + i) as u32);
    }
    imports.sort_by_key(|(q, _)| *q);
    // Exports: my elements in q's exec, then in q's non-exec, as q orders them (by index).
    let local_of: HashMap<u32, u32> = gids[..owned].iter().enumerate().map(|(i, &g)| (g, i as u32)).collect();
    let mut exports: Vec<(i32, Vec<u32>)> = Vec::new();
    for q in 0..h.exec[s].len() as i32 {
        if q == me {
            continue;
        }
        let mine = |v: &Vec<u32>| -> Vec<u32> {
            v.iter().filter(|&&e| p[e as usize] == me).map(|e| local_of[e]).collect::<Vec<u32>>()
        };
        let mut list = mine(&h.exec[s][q as usize]);
        list.extend(mine(&h.nonexec[s][q as usize]));
        if !list.is_empty() {
            exports.push((q, list));
        }
    }
    SetLayout { owned, core: ncore, exec: exec.len(), nonexec: nonexec.len(), gids: Gids::new(gids), imports, exports }
}

/// The local rows of a map for `me`: rows of the from-set's owned and exec elements, targets as
/// local indices of the to-set.
pub fn local_map(m: &GMap, from: &SetLayout, to: &SetLayout, name: &str) -> Result<Vec<i32>> {
    let local_of: HashMap<u32, i32> = to.gids.iter().enumerate().map(|(i, g)| (g, i as i32)).collect();
    let rows = from.owned + from.exec;
    let mut out = Vec::with_capacity(rows * m.dim);
    for g in from.gids.range(0, rows) {
        for &t in &m.values[g as usize * m.dim..(g as usize + 1) * m.dim] {
            match local_of.get(&(t as u32)) {
                Some(&l) => out.push(l),
                None => op2_bail!(
                    Internal,
                    "op_partition: map '{name}': target {t} of element {g} is not in this process's halo"
                ),
            }
        }
    }
    Ok(out)
}

/// This process's local rows (owned and halos, local order) from rows of `eb` bytes in global
/// order.
pub fn local_rows(global: &[u8], eb: usize, l: &SetLayout, name: &str) -> Result<AlignedBuf> {
    let Some(mut buf) = AlignedBuf::zeroed(l.total() * eb) else {
        op2_bail!(OutOfMemory, "op_partition: cannot allocate {} rows of dat '{name}'", l.total());
    };
    let out = buf.as_mut_slice();
    for (i, g) in l.gids.iter().enumerate() {
        out[i * eb..(i + 1) * eb].copy_from_slice(&global[g as usize * eb..(g as usize + 1) * eb]);
    }
    Ok(buf)
}

/// Halo statistics of one set over all processes (for the partition table).
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub owned_min: usize,
    pub exec_pct: f64,
    pub nonexec_pct: f64,
    pub core_pct: f64,
    pub max_neighbours: usize,
}

/// Averages over processes of exec and non-exec sizes and core, relative to owned.
pub fn stats(layouts: &[SetLayout]) -> Stats {
    let owned: usize = layouts.iter().map(|l| l.owned).sum();
    let pct =
        |f: &dyn Fn(&SetLayout) -> usize| 100.0 * layouts.iter().map(f).sum::<usize>() as f64 / owned.max(1) as f64;
    Stats {
        owned_min: layouts.iter().map(|l| l.owned).min().unwrap_or(0),
        exec_pct: pct(&|l| l.exec),
        nonexec_pct: pct(&|l| l.nonexec),
        core_pct: pct(&|l| l.core),
        max_neighbours: layouts.iter().map(|l| l.imports.len().max(l.exports.len())).max().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows merge into ranges of consecutive rows, sorted, each row once; a layout's export
    /// A layout's global indices kept as runs answer as the flat table did: one by one, by
    /// range, whole; a table of short runs stays flat.
    #[test]
    fn gids_as_runs() {
        let flat: Vec<u32> = (100..400).chain(7..9).chain(1000..1500).chain([3, 5, 4]).collect();
        let mut g = Gids::new(flat.clone());
        g.compact();
        assert!(g.flat.is_empty());
        assert_eq!(g.runs, vec![(0, 100), (300, 7), (302, 1000), (802, 3), (803, 5), (804, 4)]);
        assert_eq!(g.len(), flat.len());
        assert!((0..flat.len()).all(|i| g.get(i) == flat[i]));
        assert_eq!(g.range(298, 305).collect::<Vec<_>>(), flat[298..305].to_vec());
        assert_eq!(g.to_vec(), flat);
        assert_eq!(g.as_slice(), &flat[..]);
        assert_eq!(g, Gids::new(flat));
        let mut short = Gids::new(vec![5, 3, 9, 1, 2, 8]);
        short.compact();
        assert_eq!(short.as_slice(), &[5, 3, 9, 1, 2, 8]);
        assert!(short.runs.is_empty());
        let mut none = Gids::new(Vec::new());
        none.compact();
        assert!(none.is_empty() && none.iter().next().is_none());
    }

    /// ranges merge every neighbour's list and its import ranges cover its halo.
    #[test]
    fn row_ranges() {
        assert_eq!(runs([7u32, 3, 4, 5, 9, 4, 10]), vec![(3, 3), (7, 1), (9, 2)]);
        assert!(runs(std::iter::empty()).is_empty());
        let l = SetLayout {
            owned: 6,
            core: 2,
            exec: 2,
            nonexec: 1,
            gids: Gids::default(),
            imports: vec![(0, vec![6, 8]), (2, vec![7])],
            exports: vec![(0, vec![5, 2]), (2, vec![3, 2])],
        };
        assert_eq!(l.export_runs(), vec![(2, 2), (5, 1)]);
        assert_eq!(l.import_runs(), vec![(6, 3)]);
    }
}
