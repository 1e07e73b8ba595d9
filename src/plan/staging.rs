//! Local renumbering for staging indirect data (OP2's `ind_map` / `loc_map`).
//!
//! A device backend copies the indirect data a block needs into shared (local) memory before
//! running it. For each block and each unique (dat, map) pair OP2 builds the local-to-global map
//! (the sorted unique targets the block reaches through every column its args use: sorted so the
//! gather reads global memory in ascending order) and its inverse for each element and column,
//! the local index into that staged copy.
//!
//! Pairs of one renumbering group (same map, same columns; see `resolve`) have identical maps,
//! so each group is built once and the pairs point at it through `ind_offs`. Unique targets are
//! found with a stamp array indexed by global target (high half: stamp of the (group, block)
//! that saw it last, low half: its local index), so no per-block clearing, allocation or hash map
//! is needed; only the block's short target list is sorted.

use super::blocks::Blocks;
use super::error::PlanError;
use super::resolve::Resolved;

/// The flat staging arrays of a plan (see the fields of `Plan` for their layout).
pub(crate) struct Staging {
    pub ind_map: Vec<i32>,
    pub ind_offs: Vec<i32>,
    pub ind_sizes: Vec<i32>,
    pub loc_map: Vec<i32>,
}

/// A block's targets are listed in ascending order by scanning the stamp array over their range
/// when the range is at most this many times their number (meshes numbered with locality, like
/// Airfoil's, give about 5), and by sorting otherwise.
const SCAN_FACTOR: usize = 32;

pub(crate) fn build_staging(res: &Resolved<'_>, blocks: &Blocks) -> Result<Staging, PlanError> {
    let n = blocks.len();
    let nb = blocks.nblocks;
    let npairs = res.pairs.len();
    if nb == 0 {
        return Ok(Staging { ind_map: Vec::new(), ind_offs: Vec::new(), ind_sizes: Vec::new(), loc_map: Vec::new() });
    }
    let ngroups = res.groups.len();
    let mut loc_map = vec![0i32; res.nloc_cols * n];
    // Upper bound (every column of every element a distinct target); trimmed at the end.
    let mut ind_map: Vec<i32> = Vec::with_capacity(n * res.nloc_cols);
    let mut group_offs = vec![0usize; ngroups * nb];
    let mut group_sizes = vec![0usize; ngroups * nb];

    let max_target = res.groups.iter().map(|g| g.target_size).max().unwrap_or(0);
    let mut mark = vec![0u64; max_target];
    let mut stamp = 0u32;
    // Room for every visit of the largest block plus one: the branchless loops below write one
    // slot past the entries they keep.
    let max_cols = res.groups.iter().map(|g| g.cols.len()).max().unwrap_or(0);
    let mut list = vec![0u32; blocks.part_size.min(n) * max_cols + 1];

    for (g, grp) in res.groups.iter().enumerate() {
        let (dim, cols) = (grp.dim, grp.cols.as_slice());
        // Columns are unique and ascending, so as many as the arity means every column: then
        // the block's rows are walked flat.
        let whole_rows = cols.len() == dim;
        let mut out: Vec<&mut [i32]> = loc_map.chunks_mut(n).skip(grp.loc_base).take(cols.len()).collect();
        for b in 0..nb {
            if stamp == u32::MAX {
                mark.fill(0);
                stamp = 0;
            }
            stamp += 1;
            let tag = (stamp as u64) << 32;
            let r = blocks.range(b);
            let rows = &grp.values[r.start * dim..r.end * dim];

            // Unique targets of the block, in first-touch order. Whether a target was seen is
            // unpredictable, so the loop is written without a branch on it.
            let mut count = 0;
            let mut see = |t: i32| {
                let m = &mut mark[t as usize];
                let new = *m >> 32 != stamp as u64;
                list[count] = t as u32;
                *m = if new { tag } else { *m };
                count += new as usize;
            };
            if whole_rows {
                rows.iter().for_each(|&t| see(t));
            } else {
                for row in rows.chunks_exact(dim) {
                    cols.iter().for_each(|&k| see(row[k]));
                }
            }
            let seen = &mut list[..count];

            // Ascending order, recording each target's local index in its stamp word.
            let lo = seen.iter().copied().min().unwrap_or(0) as usize;
            let hi = seen.iter().copied().max().unwrap_or(0) as usize;
            if hi - lo < SCAN_FACTOR * count {
                let mut k = 0;
                for (t, m) in mark[lo..=hi].iter_mut().enumerate() {
                    let hit = *m >> 32 == stamp as u64;
                    list[k] = (lo + t) as u32;
                    *m = if hit { tag | k as u64 } else { *m };
                    k += hit as usize;
                }
                debug_assert_eq!(k, count);
            } else {
                seen.sort_unstable();
                for (i, &t) in seen.iter().enumerate() {
                    mark[t as usize] = tag | i as u64;
                }
            }
            group_offs[g * nb + b] = ind_map.len();
            group_sizes[g * nb + b] = count;
            ind_map.extend(list[..count].iter().map(|&t| t as i32));

            // Global-to-local for every element and column.
            let first = r.start - blocks.start;
            for (i, row) in rows.chunks_exact(dim).enumerate() {
                for (o, &k) in out.iter_mut().zip(cols) {
                    o[first + i] = mark[row[k] as usize] as u32 as i32;
                }
            }
        }
    }
    if ind_map.len() > i32::MAX as usize {
        return Err(PlanError::TooLarge { what: "ind_map length", value: ind_map.len() });
    }
    ind_map.shrink_to_fit();

    // Every pair points at its group's lists.
    let mut ind_offs = vec![0i32; nb * npairs];
    let mut ind_sizes = vec![0i32; nb * npairs];
    for b in 0..nb {
        for (p, pair) in res.pairs.iter().enumerate() {
            ind_offs[b * npairs + p] = group_offs[pair.group * nb + b] as i32;
            ind_sizes[b * npairs + p] = group_sizes[pair.group * nb + b] as i32;
        }
    }
    Ok(Staging { ind_map, ind_offs, ind_sizes, loc_map })
}
