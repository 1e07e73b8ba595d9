//! Local renumbering for staging indirect data (OP2's `ind_map` / `loc_map`).
//!
//! A device backend copies the indirect data a block needs into shared (local) memory before
//! running it. For each block and each unique (dat, map) pair OP2 builds the local-to-global map
//! (the sorted unique targets the block reaches through every column its args use: sorted so the
//! gather reads global memory in ascending order) and its inverse for each element and column,
//! the local index into that staged copy.
//!
//! Pairs of one renumbering group (same map, same columns; see `resolve`) have identical maps,
//! so each group is built once and the pairs point at it through `ind_offs`.
//!
//! Meshes are numbered with locality (that is what makes staging pay), so a block's targets
//! usually lie in a window not much wider than their number. Then one flag byte per window
//! position (set by plain stores, no read-modify-write chain) read back eight at a time gives
//! the sorted unique targets directly, and a rank table over the window gives each target's
//! local index: a few kilobytes that stay in L1, no sort, nothing indexed by global target. A
//! block whose window is too wide falls back to a stamp array indexed by global target (stamp
//! of the (group, block) that saw it last in the high half, its local index in the low half, so
//! it is never cleared) and a sort of the block's short list.

use super::blocks::Blocks;
use super::error::{filled, with_capacity, PlanError};
use super::resolve::{Group, Resolved};

/// The flat staging arrays of a plan (see the fields of `Plan` for their layout).
pub(crate) struct Staging {
    pub ind_map: Vec<i32>,
    pub ind_offs: Vec<i32>,
    pub ind_sizes: Vec<i32>,
    pub loc_map: Vec<i32>,
}

/// The window path is taken when the block's target window is at most this many positions per
/// map entry visited; reading the flags back costs about one word per eight positions.
const WINDOW_PER_VISIT: usize = 32;

/// Buffers reused across blocks and groups (grown as needed, never cleared as a whole).
struct Scratch {
    /// One flag per window position: whether the block reaches `lo + position`.
    flags: Vec<u8>,
    /// Local index of `lo + position`, valid where the flag is set.
    rank: Vec<u32>,
    /// Fallback: block's unique targets, then sorted.
    list: Vec<u32>,
    /// Fallback: stamp (high half) and local index (low half) per global target; allocated on
    /// first use.
    mark: Vec<u64>,
    stamp: u32,
}

pub(crate) fn build_staging(res: &Resolved<'_>, blocks: &Blocks) -> Result<Staging, PlanError> {
    let n = blocks.len();
    let nb = blocks.nblocks;
    let npairs = res.pairs.len();
    if nb == 0 {
        return Ok(Staging { ind_map: Vec::new(), ind_offs: Vec::new(), ind_sizes: Vec::new(), loc_map: Vec::new() });
    }
    let ngroups = res.groups.len();
    let mut loc_map = filled(res.nloc_cols.saturating_mul(n), 0i32, "global-to-local maps")?;
    // Upper bound (every visit a distinct target); trimmed at the end.
    let mut ind_map: Vec<i32> = with_capacity(n.saturating_mul(res.nloc_cols), "local-to-global maps")?;
    let mut group_offs = filled(ngroups.saturating_mul(nb), 0usize, "staging offsets")?;
    let mut group_sizes = filled(ngroups.saturating_mul(nb), 0usize, "staging sizes")?;

    let max_visits = blocks.part_size.min(n) * res.groups.iter().map(|g| g.cols.len()).max().unwrap_or(0);
    // The block's targets, one per (element, column), when they are not one flat map slice.
    let mut gathered: Vec<i32> = Vec::with_capacity(max_visits);
    let mut s = Scratch {
        flags: Vec::new(),
        rank: Vec::new(),
        list: Vec::with_capacity(max_visits),
        mark: Vec::new(),
        stamp: 0,
    };

    for (g, grp) in res.groups.iter().enumerate() {
        let ncols = grp.cols.len();
        let mut out: Vec<&mut [i32]> = loc_map.chunks_mut(n).skip(grp.loc_base).take(ncols).collect();
        for b in 0..nb {
            let r = blocks.range(b);
            let rows = &grp.values[r.start * grp.dim..r.end * grp.dim];
            // Columns are unique and ascending, so as many as the arity means every column:
            // then the rows are the visits as they stand.
            let visits: &[i32] = if ncols == grp.dim {
                rows
            } else {
                gathered.clear();
                for row in rows.chunks_exact(grp.dim) {
                    gathered.extend(grp.cols.iter().map(|&k| row[k]));
                }
                &gathered
            };
            let first = r.start - blocks.start;
            group_offs[g * nb + b] = ind_map.len();
            group_sizes[g * nb + b] = renumber_block(visits, grp, &mut s, &mut ind_map, &mut out, first)?;
        }
    }
    if ind_map.len() > i32::MAX as usize {
        return Err(PlanError::TooLarge { what: "ind_map length", value: ind_map.len() });
    }
    ind_map.shrink_to_fit();

    // Every pair points at its group's lists.
    let mut ind_offs = filled(nb.saturating_mul(npairs), 0i32, "staging offsets")?;
    let mut ind_sizes = filled(nb.saturating_mul(npairs), 0i32, "staging sizes")?;
    for b in 0..nb {
        for (p, pair) in res.pairs.iter().enumerate() {
            ind_offs[b * npairs + p] = group_offs[pair.group * nb + b] as i32;
            ind_sizes[b * npairs + p] = group_sizes[pair.group * nb + b] as i32;
        }
    }
    Ok(Staging { ind_map, ind_offs, ind_sizes, loc_map })
}

/// Renumbers one block of one group: appends its sorted unique targets to `ind_map`, writes the
/// local index of visit `i * ncols + c` to `out[c][first + i]`, and returns the number of
/// targets. `visits` is non-empty (a block has at least one element, a group one column).
fn renumber_block(
    visits: &[i32],
    grp: &Group<'_>,
    s: &mut Scratch,
    ind_map: &mut Vec<i32>,
    out: &mut [&mut [i32]],
    first: usize,
) -> Result<usize, PlanError> {
    let (lo, hi) = visits.iter().fold((i32::MAX, 0), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    let lo = lo as usize;
    let window = hi as usize - lo + 1;

    if window <= WINDOW_PER_VISIT * visits.len() {
        // Flags over [lo, hi], rounded up to whole 8-byte words, grown as needed.
        let padded = window.div_ceil(8) * 8;
        if s.flags.len() < padded {
            s.flags.resize(padded, 0);
            s.rank.resize(padded, 0);
        }
        let flags = &mut s.flags[..padded];
        flags.fill(0);
        for &t in visits {
            flags[t as usize - lo] = 1;
        }
        // Set flags in ascending order are the sorted unique targets.
        let mut count = 0u32;
        for (w, chunk) in flags.chunks_exact(8).enumerate() {
            let mut x = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
            while x != 0 {
                let d = w * 8 + (x.trailing_zeros() / 8) as usize;
                s.rank[d] = count;
                ind_map.push((lo + d) as i32);
                count += 1;
                x &= x - 1;
            }
        }
        let rank = &s.rank;
        write_local(visits, out, first, |t| rank[t as usize - lo] as i32);
        return Ok(count as usize);
    }

    // Wide window: dedupe through the stamp array, then sort the short list.
    if s.mark.len() < grp.target_size {
        let more = grp.target_size - s.mark.len();
        s.mark.try_reserve_exact(more).map_err(|_| PlanError::OutOfMemory {
            what: "staging scratch (one word per target)",
            bytes: grp.target_size.saturating_mul(8),
        })?;
        s.mark.resize(grp.target_size, 0);
    }
    if s.stamp == u32::MAX {
        s.mark.fill(0);
        s.stamp = 0;
    }
    s.stamp += 1;
    let tag = (s.stamp as u64) << 32;
    s.list.clear();
    for &t in visits {
        let m = &mut s.mark[t as usize];
        if *m >> 32 != s.stamp as u64 {
            *m = tag;
            s.list.push(t as u32);
        }
    }
    s.list.sort_unstable();
    for (i, &t) in s.list.iter().enumerate() {
        s.mark[t as usize] = tag | i as u64;
    }
    ind_map.extend(s.list.iter().map(|&t| t as i32));
    let mark = &s.mark;
    write_local(visits, out, first, |t| mark[t as usize] as u32 as i32);
    Ok(s.list.len())
}

/// Writes `local(target)` of visit `i * ncols + c` to `out[c][first + i]`, one column at a time
/// so each inner loop streams into one output column.
#[inline(always)]
fn write_local(visits: &[i32], out: &mut [&mut [i32]], first: usize, local: impl Fn(i32) -> i32) {
    let ncols = out.len();
    let nrows = visits.len() / ncols;
    for (c, o) in out.iter_mut().enumerate() {
        for (dst, row) in o[first..first + nrows].iter_mut().zip(visits.chunks_exact(ncols)) {
            *dst = local(row[c]);
        }
    }
}
