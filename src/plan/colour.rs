//! Two-level colouring: blocks, then elements within each block.
//!
//! OP2 runs the blocks of one colour at the same time, and on a GPU the elements of one thread
//! colour within a block at the same time, so both levels must guarantee that no two members of
//! a colour touch the same target of a coloured argument. Both levels use the greedy first-fit
//! scheme of OP2: a 32-bit mask per target records the colours already holding it; a block (or
//! element) ORs the masks of everything it touches and takes the lowest free bit, then sets that
//! bit on everything it touches. When all 32 bits are taken the candidate waits for the next
//! pass, which starts from clean masks and offsets its colours by 32, so any number of colours
//! works. First-fit never gives a candidate a colour above the number of its conflicting
//! neighbours, so at most max degree + 1 colours are used at each level.
//!
//! Targets live in one conflict space where every coloured dat owns a range (see `resolve`), so
//! two args on one dat conflict even through different maps, and args on different dats never
//! do. An element touching one target twice ORs its masks before setting any bit, so it never
//! conflicts with itself.

use std::borrow::Cow;
use std::ops::Range;

use super::blocks::Blocks;
use super::error::PlanError;
use super::resolve::ColouredCol;

const ALL_TAKEN: u32 = u32::MAX;

/// The conflict-space slots every element touches, `stride` per element, so that both levels
/// stream one flat array. When the only coloured columns are all columns of one map (Airfoil's
/// `res` through `pecell`) the map itself is that array and nothing is copied.
pub(crate) struct Slots<'a> {
    data: Cow<'a, [i32]>,
    stride: usize,
    /// Element whose slots start at `data[0]`.
    row0: usize,
    /// Total slots of the conflict space.
    space: usize,
}

impl<'a> Slots<'a> {
    pub fn new(cols: &[ColouredCol<'a>], space: usize, blocks: &Blocks) -> Result<Slots<'a>, PlanError> {
        if space > i32::MAX as usize {
            return Err(PlanError::TooLarge { what: "conflict space (sum of coloured dats' set sizes)", value: space });
        }
        let whole_map = cols.first().is_some_and(|c0| {
            c0.base == 0
                && cols.len() == c0.dim
                && cols.iter().enumerate().all(|(k, c)| std::ptr::eq(c.values, c0.values) && c.col == k && c.base == 0)
        });
        if whole_map {
            return Ok(Slots { data: Cow::Borrowed(cols[0].values), stride: cols.len(), row0: 0, space });
        }
        let mut data = Vec::with_capacity(blocks.len() * cols.len());
        for e in blocks.start..blocks.end {
            data.extend(cols.iter().map(|c| (c.base + c.values[e * c.dim + c.col] as usize) as i32));
        }
        Ok(Slots { data: Cow::Owned(data), stride: cols.len(), row0: blocks.start, space })
    }

    /// Slots of the elements in `r` (absolute), `stride` per element.
    #[inline]
    fn of(&self, r: Range<usize>) -> &[i32] {
        &self.data[(r.start - self.row0) * self.stride..(r.end - self.row0) * self.stride]
    }
}

/// Colours blocks. Returns each block's colour and the number of colours (0 without blocks).
pub(crate) fn colour_blocks(slots: &Slots<'_>, blocks: &Blocks) -> (Vec<i32>, usize) {
    let nb = blocks.nblocks;
    if nb == 0 {
        return (Vec::new(), 0);
    }
    if slots.stride == 0 {
        // Nothing can conflict: every block runs at once.
        return (vec![0; nb], 1);
    }
    let mut colour = vec![-1i32; nb];
    // Masks of the current pass, indexed by slot. A block touches everything its elements
    // touch, so a whole-array reset per pass (passes are few) is cheaper than tracking.
    let mut masks = vec![0u32; slots.space];
    let mut left = nb;
    let mut offset = 0i32;
    let mut ncolours = 0i32;
    while left > 0 {
        if offset > 0 {
            masks.fill(0);
        }
        for (b, col) in colour.iter_mut().enumerate() {
            if *col >= 0 {
                continue;
            }
            let s = slots.of(blocks.range(b));
            let taken = s.iter().fold(0u32, |m, &t| m | masks[t as usize]);
            if taken == ALL_TAKEN {
                continue; // next pass
            }
            let bit = (!taken).trailing_zeros();
            *col = offset + bit as i32;
            ncolours = ncolours.max(*col + 1);
            left -= 1;
            for &t in s {
                masks[t as usize] |= 1 << bit;
            }
        }
        offset += 32;
    }
    (colour, ncolours as usize)
}

/// Colours the elements of every block. Returns the thread colour of each element (indexed by
/// element - start) and the number of thread colours of each block.
pub(crate) fn colour_threads(slots: &Slots<'_>, blocks: &Blocks) -> (Vec<i32>, Vec<i32>) {
    let nb = blocks.nblocks;
    if slots.stride == 0 {
        return (vec![0; blocks.len()], vec![1; nb]);
    }
    let stride = slots.stride;
    let mut thrcol = vec![-1i32; blocks.len()];
    let mut nthrcol = vec![0i32; nb];
    // One word per slot: high half the stamp of the (block, pass) that last wrote it, low half
    // the mask. A stale stamp reads as an empty mask, so nothing is reset between blocks.
    let mut work = vec![0u64; slots.space];
    let mut stamp = 0u32;
    for (b, top) in nthrcol.iter_mut().enumerate() {
        let r = blocks.range(b);
        let block_slots = slots.of(r.clone());
        let block_thrcol = &mut thrcol[r.start - blocks.start..r.end - blocks.start];
        let mut left = r.len();
        let mut offset = 0i32;
        while left > 0 {
            if stamp == u32::MAX {
                work.fill(0);
                stamp = 0;
            }
            stamp += 1;
            let tag = (stamp as u64) << 32;
            for (t, s) in block_thrcol.iter_mut().zip(block_slots.chunks_exact(stride)) {
                if *t >= 0 {
                    continue;
                }
                let taken = s.iter().fold(0u32, |m, &x| {
                    let w = work[x as usize];
                    m | if w >> 32 == stamp as u64 { w as u32 } else { 0 }
                });
                if taken == ALL_TAKEN {
                    continue; // next pass
                }
                let bit = (!taken).trailing_zeros();
                *t = offset + bit as i32;
                *top = (*top).max(*t + 1);
                left -= 1;
                for &x in s {
                    let w = &mut work[x as usize];
                    let old = if *w >> 32 == stamp as u64 { *w as u32 } else { 0 };
                    *w = tag | (old | 1 << bit) as u64;
                }
            }
            offset += 32;
        }
    }
    (thrcol, nthrcol)
}
