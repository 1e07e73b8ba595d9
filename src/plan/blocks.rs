//! Mini-partitions: the iteration range cut into contiguous blocks of `part_size` elements.
//!
//! OP2 sizes blocks so that one block's indirect working set fits shared memory (GPU) or cache
//! (CPU). Blocks are contiguous so that a block is fully described by its first element and its
//! length, and direct data of a block is one contiguous slice. All blocks hold `part_size`
//! elements except the last, which holds the rest; an empty range has no blocks.

use std::ops::Range;

/// The block structure of a range `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Blocks {
    pub start: usize,
    pub end: usize,
    pub part_size: usize,
    pub nblocks: usize,
}

impl Blocks {
    /// Cuts `[start, end)`; `part_size` must be at least 1 (checked by the caller).
    pub fn new(start: usize, end: usize, part_size: usize) -> Blocks {
        debug_assert!(part_size > 0 && start <= end);
        Blocks { start, end, part_size, nblocks: (end - start).div_ceil(part_size) }
    }

    /// Absolute element range of block `b`.
    #[inline]
    pub fn range(&self, b: usize) -> Range<usize> {
        let first = self.start + b * self.part_size;
        first..(first + self.part_size).min(self.end)
    }

    /// Number of elements in the range.
    pub fn len(&self) -> usize {
        self.end - self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_range_in_order() {
        for (start, end, ps) in [(0, 0, 4), (0, 1, 4), (3, 3, 1), (5, 17, 4), (0, 16, 4), (2, 9, 100)] {
            let b = Blocks::new(start, end, ps);
            let mut next = start;
            for i in 0..b.nblocks {
                let r = b.range(i);
                assert_eq!(r.start, next);
                assert!(!r.is_empty() && r.len() <= ps);
                if i + 1 < b.nblocks {
                    assert_eq!(r.len(), ps);
                }
                next = r.end;
            }
            assert_eq!(next, end, "blocks of [{start}, {end}) by {ps}");
        }
        assert_eq!(Blocks::new(0, 0, 4).nblocks, 0);
        assert_eq!(Blocks::new(0, 1, 4).nblocks, 1);
        assert_eq!(Blocks::new(2, 9, 100).nblocks, 1);
        assert_eq!(Blocks::new(5, 17, 4).nblocks, 3);
    }
}
