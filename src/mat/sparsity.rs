//! Sparsity patterns from maps (pure: no context, no FFI).
//!
//! The pattern of a pair (row map R, column map C, both from the same set of elements) is the
//! union over elements `e` of `{R[e][i]} x {C[e][j]}`; a sparsity is the union over its pairs,
//! plus the diagonal when rows and columns are the same set. It is stored as CSR with sorted
//! columns. The build is in two passes over rows, in parallel (rayon): an incidence list (which
//! elements touch each row, as CSR) and, per chunk of rows, the sorted unique columns, so memory
//! is O(nnz + incidences): no dense row x column table, no per-row hash sets.

use rayon::prelude::*;

/// One (row map, column map) pair as plain data: both maps from the same `n` elements.
#[derive(Clone, Copy, Debug)]
pub struct PairMaps<'a> {
    pub rows: &'a [i32],
    pub row_dim: usize,
    pub cols: &'a [i32],
    pub col_dim: usize,
    /// Elements of the maps' source set.
    pub n: usize,
}

/// A CSR pattern: row `r` has the sorted columns `colidx[rowptr[r]..rowptr[r + 1]]`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Pattern {
    pub nrows: usize,
    pub ncols: usize,
    pub rowptr: Vec<usize>,
    pub colidx: Vec<i32>,
}

/// Rows per parallel task.
const CHUNK: usize = 2048;

impl Pattern {
    pub fn nnz(&self) -> usize {
        self.colidx.len()
    }

    /// The columns of row `r`.
    pub fn row(&self, r: usize) -> &[i32] {
        &self.colidx[self.rowptr[r]..self.rowptr[r + 1]]
    }

    /// The position in `colidx` of entry `(r, c)`, if in the pattern.
    pub fn slot(&self, r: usize, c: i32) -> Option<usize> {
        self.row(r).binary_search(&c).ok().map(|p| self.rowptr[r] + p)
    }

    /// Builds the pattern of `pairs` over `nrows` x `ncols` (every column entry must lie in
    /// range: op2 maps are checked at declaration); `diagonal`: include `(r, r)` for every row.
    /// Row entries at or past `nrows` are left out (under MPI: halo rows, owned elsewhere).
    pub fn build(nrows: usize, ncols: usize, pairs: &[PairMaps], diagonal: bool) -> Pattern {
        // Incidence: for every row, the (pair, element) couples that reach it.
        let mut count = vec![0usize; nrows + 1];
        for p in pairs {
            for &r in &p.rows[..p.n * p.row_dim] {
                if (r as usize) < nrows {
                    count[r as usize + 1] += 1;
                }
            }
        }
        for r in 0..nrows {
            count[r + 1] += count[r];
        }
        let inc_ptr = count;
        let mut fill = inc_ptr.clone();
        let mut inc: Vec<(u32, u32)> = vec![(0, 0); inc_ptr[nrows]];
        for (pi, p) in pairs.iter().enumerate() {
            for e in 0..p.n {
                for &r in &p.rows[e * p.row_dim..(e + 1) * p.row_dim] {
                    if r as usize >= nrows {
                        continue;
                    }
                    let at = &mut fill[r as usize];
                    inc[*at] = (pi as u32, e as u32);
                    *at += 1;
                }
            }
        }
        drop(fill);
        // Per chunk of rows: counts and columns, sorted and unique per row.
        let chunks: Vec<(Vec<usize>, Vec<i32>)> = (0..nrows.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(nrows));
                let mut lens = Vec::with_capacity(hi - lo);
                let mut cols = Vec::new();
                for r in lo..hi {
                    let start = cols.len();
                    if diagonal {
                        cols.push(r as i32);
                    }
                    for &(pi, e) in &inc[inc_ptr[r]..inc_ptr[r + 1]] {
                        let p = &pairs[pi as usize];
                        let e = e as usize;
                        cols.extend_from_slice(&p.cols[e * p.col_dim..(e + 1) * p.col_dim]);
                    }
                    let row = &mut cols[start..];
                    row.sort_unstable();
                    let mut k = 0;
                    for j in 0..row.len() {
                        if j == 0 || row[j] != row[k - 1] {
                            row[k] = row[j];
                            k += 1;
                        }
                    }
                    cols.truncate(start + k);
                    lens.push(k);
                }
                (lens, cols)
            })
            .collect();
        drop(inc);
        let nnz = chunks.iter().map(|c| c.1.len()).sum();
        let mut rowptr = Vec::with_capacity(nrows + 1);
        rowptr.push(0);
        let mut colidx = Vec::with_capacity(nnz);
        for (lens, cols) in chunks {
            for l in lens {
                rowptr.push(rowptr[rowptr.len() - 1] + l);
            }
            colidx.extend_from_slice(&cols);
        }
        Pattern { nrows, ncols, rowptr, colidx }
    }

    /// The scalar pattern of `rdim` x `cdim` blocks: block entry `(r, c)` becomes rows
    /// `r*rdim..`, columns `c*cdim..` (what PETSc's AIJ stores for a BAIJ pattern).
    pub fn expand(&self, rdim: usize, cdim: usize) -> Pattern {
        if rdim == 1 && cdim == 1 {
            return self.clone();
        }
        let mut rowptr = Vec::with_capacity(self.nrows * rdim + 1);
        rowptr.push(0);
        let mut colidx = Vec::with_capacity(self.nnz() * rdim * cdim);
        for r in 0..self.nrows {
            for _ in 0..rdim {
                for &c in self.row(r) {
                    for b in 0..cdim {
                        colidx.push(c * cdim as i32 + b as i32);
                    }
                }
                rowptr.push(colidx.len());
            }
        }
        Pattern { nrows: self.nrows * rdim, ncols: self.ncols * cdim, rowptr, colidx }
    }
}

/// The CSR slot of every entry of every element's dense local block, row-major: element `e`'s
/// block of `(nr*rdim) x (nc*cdim)` entries starts at `e * nr*rdim * nc*cdim`. `rows`/`cols`
/// give the `nr`/`nc` block rows and columns of each element (`row_sel`/`col_sel`: one column of
/// the map, or all). `None` if some entry is not in the (scalar, expanded) pattern. A scalar row
/// `r` at or past `pat.nrows` (under MPI: a halo row, which its owner assembles from its own
/// and its exec-halo elements) goes to the discard slot `nnz + r - nrows`: one per halo row, so
/// elements of one colour never share one.
#[allow(clippy::too_many_arguments)]
pub fn slot_table(
    pat: &Pattern,
    n: usize,
    rows: (&[i32], usize, Option<usize>),
    cols: (&[i32], usize, Option<usize>),
    rdim: usize,
    cdim: usize,
) -> Option<Vec<i32>> {
    let (rmap, rmd, rsel) = rows;
    let (cmap, cmd, csel) = cols;
    let nr = if rsel.is_some() { 1 } else { rmd };
    let nc = if csel.is_some() { 1 } else { cmd };
    let per = nr * rdim * nc * cdim;
    if per == 0 || pat.nnz() > i32::MAX as usize {
        return None;
    }
    let mut table = vec![0i32; n * per];
    let ok = table.par_chunks_mut(per.max(1)).enumerate().all(|(e, out)| {
        let mut k = 0;
        for i in 0..nr {
            let br = rmap[e * rmd + rsel.unwrap_or(i)] as usize;
            for a in 0..rdim {
                let r = br * rdim + a;
                for j in 0..nc {
                    let bc = cmap[e * cmd + csel.unwrap_or(j)] as usize;
                    for b in 0..cdim {
                        if r >= pat.nrows {
                            out[k] = (pat.nnz() + r - pat.nrows) as i32;
                            k += 1;
                            continue;
                        }
                        match pat.slot(r, (bc * cdim + b) as i32) {
                            Some(s) => out[k] = s as i32,
                            None => return false,
                        }
                        k += 1;
                    }
                }
            }
        }
        true
    });
    ok.then_some(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The pattern by brute force: a dense boolean table.
    fn dense(nrows: usize, ncols: usize, pairs: &[PairMaps], diagonal: bool) -> Pattern {
        let mut t = vec![false; nrows * ncols];
        for p in pairs {
            for e in 0..p.n {
                for &r in &p.rows[e * p.row_dim..(e + 1) * p.row_dim] {
                    for &c in &p.cols[e * p.col_dim..(e + 1) * p.col_dim] {
                        t[r as usize * ncols + c as usize] = true;
                    }
                }
            }
        }
        if diagonal {
            for r in 0..nrows.min(ncols) {
                t[r * ncols + r] = true;
            }
        }
        let mut rowptr = vec![0];
        let mut colidx = Vec::new();
        for r in 0..nrows {
            for c in 0..ncols {
                if t[r * ncols + c] {
                    colidx.push(c as i32);
                }
            }
            rowptr.push(colidx.len());
        }
        Pattern { nrows, ncols, rowptr, colidx }
    }

    /// A small deterministic generator (no dependency).
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn random_maps_match_brute_force() {
        let mut seed = 7;
        for trial in 0..20 {
            let nrows = 1 + (lcg(&mut seed) % 5000) as usize;
            let ncols = if trial % 2 == 0 { nrows } else { 1 + (lcg(&mut seed) % 300) as usize };
            let n1 = (lcg(&mut seed) % 3000) as usize;
            let n2 = (lcg(&mut seed) % 100) as usize;
            let gen = |n: usize, d: usize, to: usize, s: &mut u64| -> Vec<i32> {
                (0..n * d).map(|_| (lcg(s) % to as u64) as i32).collect()
            };
            let (r1, c1) = (gen(n1, 3, nrows, &mut seed), gen(n1, 3, ncols, &mut seed));
            let (r2, c2) = (gen(n2, 2, nrows, &mut seed), gen(n2, 4, ncols, &mut seed));
            let pairs = [
                PairMaps { rows: &r1, row_dim: 3, cols: &c1, col_dim: 3, n: n1 },
                PairMaps { rows: &r2, row_dim: 2, cols: &c2, col_dim: 4, n: n2 },
            ];
            let diag = nrows == ncols;
            let got = Pattern::build(nrows, ncols, &pairs, diag);
            assert_eq!(got, dense(nrows, ncols, &pairs, diag), "trial {trial}");
        }
    }

    #[test]
    fn empty_and_repeated_entries() {
        let p = Pattern::build(3, 3, &[], true);
        assert_eq!((p.rowptr, p.colidx), (vec![0, 1, 2, 3], vec![0, 1, 2]));
        let p = Pattern::build(0, 0, &[], true);
        assert_eq!(p.nnz(), 0);
        // One element touching node 1 twice.
        let m = [1, 1, 2];
        let p = Pattern::build(4, 4, &[PairMaps { rows: &m, row_dim: 3, cols: &m, col_dim: 3, n: 1 }], false);
        assert_eq!(p.rowptr, vec![0, 0, 2, 4, 4]);
        assert_eq!(p.colidx, vec![1, 2, 1, 2]);
    }

    /// Under MPI: rows past `nrows` (halo rows) are left out of the pattern, and their entries
    /// go to one discard slot per scalar row after the pattern's.
    #[test]
    fn halo_rows_are_discarded() {
        // Triangles 0-1-2 and 1-3-2; rows 0..2 owned, 2 and 3 halo; columns all 4.
        let m = [0, 1, 2, 1, 3, 2];
        let pairs = [PairMaps { rows: &m, row_dim: 3, cols: &m, col_dim: 3, n: 2 }];
        let p = Pattern::build(2, 4, &pairs, true);
        assert_eq!(p.rowptr, vec![0, 3, 7]);
        assert_eq!(p.colidx, vec![0, 1, 2, 0, 1, 2, 3]);
        let x = p.expand(2, 1);
        let t = slot_table(&x, 2, (&m, 3, None), (&m, 3, None), 2, 1).unwrap();
        // Element 1 (nodes 1, 3, 2), local row 4 (node 2, component 0): scalar row 4, the
        // first discard slot (nnz = 14); local rows 2, 3 (node 3): scalar rows 6, 7.
        assert_eq!(&t[18 + 4 * 3..18 + 5 * 3], &[14, 14, 14]);
        assert_eq!(&t[18 + 2 * 3..18 + 4 * 3], &[16, 16, 16, 17, 17, 17]);
        // Element 0, local row 0 (node 0, component 0): pattern slots of columns 0, 1, 2.
        assert_eq!(&t[0..3], &[0, 1, 2]);
    }

    #[test]
    fn blocks_and_slots() {
        // Two triangles on 4 nodes: 0-1-2 and 1-3-2.
        let m = [0, 1, 2, 1, 3, 2];
        let p = Pattern::build(4, 4, &[PairMaps { rows: &m, row_dim: 3, cols: &m, col_dim: 3, n: 2 }], true);
        assert_eq!(p.nnz(), 4 + 2 * 5);
        let x = p.expand(2, 3);
        assert_eq!((x.nrows, x.ncols, x.nnz()), (8, 12, p.nnz() * 6));
        assert_eq!(x.row(1), &[0, 1, 2, 3, 4, 5, 6, 7, 8]);
        let t = slot_table(&x, 2, (&m, 3, None), (&m, 3, None), 2, 3).unwrap();
        assert_eq!(t.len(), 2 * 6 * 9);
        let mut seen = BTreeSet::new();
        for e in 0..2 {
            for li in 0..6 {
                for lj in 0..9 {
                    let r = m[e * 3 + li / 2] as usize * 2 + li % 2;
                    let c = m[e * 3 + lj / 3] * 3 + (lj % 3) as i32;
                    let s = t[e * 54 + li * 9 + lj] as usize;
                    assert_eq!(x.colidx[s], c);
                    assert!(x.rowptr[r] <= s && s < x.rowptr[r + 1]);
                    seen.insert(s);
                }
            }
        }
        // One block each (ridx, cidx >= 0).
        let t = slot_table(&p, 2, (&m, 3, Some(1)), (&m, 3, Some(2)), 1, 1).unwrap();
        assert_eq!(t, vec![p.slot(1, 2).unwrap() as i32, p.slot(3, 2).unwrap() as i32]);
        // An entry outside the pattern.
        let other = [0, 3, 0];
        assert!(slot_table(&p, 1, (&other, 3, None), (&other, 3, None), 1, 1).is_none());
    }
}
