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
use super::error::{filled, with_capacity, PlanError};
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
        let mut data = with_capacity(blocks.len().saturating_mul(cols.len()), "colouring slots")?;
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

/// Both colourings of a range.
pub(crate) struct Colouring {
    pub block_colour: Vec<i32>,
    pub ncolours: usize,
    pub thrcol: Vec<i32>,
    pub nthrcol: Vec<i32>,
}

/// Colours blocks and the elements of each block.
///
/// Both levels visit the same slots block by block, so they share one sweep and one word per
/// slot: the low half holds the block-colour mask of the first pass, the high half the
/// thread-colour mask of the block being coloured. Thread masks are cleared as the block's own
/// colour is recorded, while the block's slots are still in cache. Blocks that find all 32 block
/// colours taken are coloured afterwards by further passes.
pub(crate) fn colour(slots: &Slots<'_>, blocks: &Blocks) -> Result<Colouring, PlanError> {
    let nb = blocks.nblocks;
    if slots.stride == 0 {
        // Nothing can conflict: every block runs at once, every element in thread colour 0.
        return Ok(Colouring {
            block_colour: filled(nb, 0, "block colours")?,
            ncolours: usize::from(nb > 0),
            thrcol: filled(blocks.len(), 0, "thread colours")?,
            nthrcol: filled(nb, 1, "thread colour counts")?,
        });
    }
    const LOW: u64 = u32::MAX as u64;
    let stride = slots.stride;
    let mut words = filled(slots.space, 0u64, "colouring scratch (one word per target)")?;
    let mut block_colour = filled(nb, -1i32, "block colours")?;
    // Zeroed memory comes cheap from the allocator; each block marks its own elements
    // uncoloured (-1) just before colouring them, while they are in cache.
    let mut thrcol = filled(blocks.len(), 0i32, "thread colours")?;
    let mut nthrcol = filled(nb, 0i32, "thread colour counts")?;
    let mut ncolours = 0i32;
    let mut blocks_left = 0;
    for b in 0..nb {
        let r = blocks.range(b);
        let block_slots = slots.of(r.clone());
        let block_thrcol = &mut thrcol[r.start - blocks.start..r.end - blocks.start];
        block_thrcol.fill(-1);
        let mut left = r.len();
        let mut offset = 0i32;
        let mut top = 0i32;
        let mut block_taken = 0u32;
        loop {
            for (t, s) in block_thrcol.iter_mut().zip(block_slots.chunks_exact(stride)) {
                if *t >= 0 {
                    continue;
                }
                let mut taken = 0u32;
                for &x in s {
                    let w = words[x as usize];
                    taken |= (w >> 32) as u32;
                    block_taken |= w as u32;
                }
                if taken == ALL_TAKEN {
                    continue; // next thread pass
                }
                let bit = (!taken).trailing_zeros();
                *t = offset + bit as i32;
                top = top.max(*t + 1);
                left -= 1;
                for &x in s {
                    words[x as usize] |= 1 << (32 + bit);
                }
            }
            if left == 0 {
                break;
            }
            for &x in block_slots {
                words[x as usize] &= LOW;
            }
            offset += 32;
        }
        nthrcol[b] = top;
        if block_taken == ALL_TAKEN {
            blocks_left += 1;
            for &x in block_slots {
                words[x as usize] &= LOW;
            }
        } else {
            let bit = (!block_taken).trailing_zeros();
            block_colour[b] = bit as i32;
            ncolours = ncolours.max(bit as i32 + 1);
            for &x in block_slots {
                let w = &mut words[x as usize];
                *w = (*w & LOW) | 1 << bit; // also clears the thread mask
            }
        }
    }
    drop(words);
    if blocks_left > 0 {
        ncolours = colour_blocks_from(slots, blocks, &mut block_colour, blocks_left, 32)?;
    }
    Ok(Colouring { block_colour, ncolours: ncolours as usize, thrcol, nthrcol })
}

/// Colours the `left` blocks still marked -1 in `colour` by passes of 32 colours starting at
/// `offset`; returns the number of colours.
fn colour_blocks_from(
    slots: &Slots<'_>,
    blocks: &Blocks,
    colour: &mut [i32],
    mut left: usize,
    mut offset: i32,
) -> Result<i32, PlanError> {
    // Masks of the current pass, indexed by slot. A block touches everything its elements
    // touch, so a whole-array reset per pass (passes are few) is cheaper than tracking.
    let mut masks = filled(slots.space, 0u32, "block colouring scratch (one mask per target)")?;
    let mut ncolours = offset;
    while left > 0 {
        masks.fill(0);
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
    Ok(ncolours)
}
