//! Execution plans: mini-partitions, local renumbering and two-level colouring (OP2's `op_plan`).
//!
//! Every parallel backend except `seq` runs an indirect loop from a plan. The iteration range is
//! cut into contiguous blocks (mini-partitions); blocks are coloured so that blocks of one colour
//! share no target of an argument that needs colouring and can run at the same time; elements
//! inside a block are coloured the same way for backends that run a block's elements in
//! parallel (GPU threads); and, for backends that stage indirect data in shared memory, each
//! block gets local-to-global (`ind_map`) and global-to-local (`loc_map`) renumbering maps.
//!
//! The arrays follow OP2's names and layout so that device stubs can use them as they are: all
//! are flat `i32` (C `int`), indexed by block, (block, pair) or (column, element).
//!
//! This module is pure data and algorithms over `std`: no backend, FFI or MPI types. A host
//! backend runs the colours one after another and the blocks of one colour in parallel, each
//! block as the contiguous element range `[offset, offset + nelems)`:
//!
//! ```
//! use op2::plan::{needs_colouring, Access, IndirectArg, IndirectDesc, MapIdx, Plan, PlanRequest};
//!
//! // Three edges incrementing their two nodes: 0-1, 1-2, 2-3.
//! let edge_nodes = [0, 1, 1, 2, 2, 3];
//! let inc = IndirectDesc {
//!     dat: 1,
//!     elem_bytes: 8,
//!     map: 1,
//!     map_dim: 2,
//!     idx: MapIdx::All,
//!     target_size: 4,
//!     colour: needs_colouring(Access::Inc, true),
//! };
//! let args = [IndirectArg { desc: inc, map_values: &edge_nodes }];
//! let req = PlanRequest {
//!     set: 1,
//!     set_size: 3,
//!     start: 0,
//!     end: 3,
//!     part_size: 1,
//!     staging: false,
//!     args: &args,
//! };
//! let plan = Plan::build(&req).unwrap();
//! let mut order = Vec::new();
//! for c in 0..plan.ncolours {
//!     // With rayon: plan.colour_blocks(c).par_iter().for_each(|&b| ...)
//!     for &b in plan.colour_blocks(c) {
//!         order.extend(plan.block_range(b as usize));
//!     }
//! }
//! assert_eq!(plan.ncolours, 2); // edges 0 and 2 share no node; edge 1 touches both
//! assert_eq!(order, [0, 2, 1]);
//! ```

mod blocks;
mod cache;
mod colour;
mod desc;
mod error;
mod resolve;
mod staging;
pub mod tiling;

#[cfg(test)]
mod tests;

use std::ops::Range;

pub use cache::PlanCache;
pub use desc::{needs_colouring, Access, IndirectArg, IndirectDesc, MapIdx, PlanKey, PlanRequest};
pub use error::PlanError;

use blocks::Blocks;

/// Alignment of each pair's region in a block's staging area, in bytes (a multiple of every
/// element type's alignment, as OP2's `ROUND_UP` to 16 in its OpenCL stubs).
pub const STAGING_ALIGN: usize = 16;

/// One unique (dat, map) pair of the loop: the unit of staging.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagePair {
    pub dat: u64,
    pub map: u64,
    /// Bytes of one element of the dat.
    pub elem_bytes: usize,
    /// Renumbering group: pairs with equal `group` share their `ind_map`/`loc_map` data.
    pub group: usize,
}

/// An execution plan for one loop over `[start, end)` of a set. Elements are absolute set
/// indices; "element index relative to start" is written `e - start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// First element planned.
    pub start: usize,
    /// One past the last element planned.
    pub end: usize,
    /// Elements per block (the last block may hold fewer).
    pub part_size: usize,
    /// Number of blocks: `ceil((end - start) / part_size)`, 0 for an empty range.
    pub nblocks: usize,
    /// `offset[b]`: absolute index of block `b`'s first element. Blocks are contiguous and in
    /// ascending order: block `b` is `[offset[b], offset[b] + nelems[b])`.
    pub offset: Vec<i32>,
    /// `nelems[b]`: number of elements of block `b`.
    pub nelems: Vec<i32>,

    /// `block_colour[b]`: colour of block `b`, in `0..ncolours`.
    pub block_colour: Vec<i32>,
    /// Number of block colours: 0 without blocks, 1 when no argument needs colouring.
    pub ncolours: usize,
    /// Block ids grouped by colour, each colour's blocks ascending: colour `c` is
    /// `blkmap[colour_offsets[c]..colour_offsets[c + 1]]`.
    pub blkmap: Vec<i32>,
    /// `ncolours + 1` prefix offsets into `blkmap` (OP2 passes `colour_offsets[c]` to a device
    /// stub as its `block_offset`).
    pub colour_offsets: Vec<usize>,
    /// `ncolblk[c]`: number of blocks of colour `c`.
    pub ncolblk: Vec<i32>,

    /// `thrcol[e - start]`: thread colour of element `e` within its block, in
    /// `0..nthrcol[block]`; all 0 when no argument needs colouring.
    pub thrcol: Vec<i32>,
    /// `nthrcol[b]`: number of thread colours in block `b`.
    pub nthrcol: Vec<i32>,
    /// Largest `nthrcol` (0 without blocks).
    pub max_nthrcol: usize,

    /// Unique (dat, map) pairs in order of first appearance among the indirect args.
    pub pairs: Vec<StagePair>,
    /// `pair_of_arg[a]`: the pair of indirect arg `a`.
    pub pair_of_arg: Vec<usize>,
    /// Arg columns: arg `a` has columns `arg_col_start[a]..arg_col_start[a + 1]` (one for
    /// `MapIdx::Col`, map dim for `MapIdx::All`); `nargs + 1` entries.
    pub arg_col_start: Vec<usize>,
    /// `loc_col[arg_col_start[a] + j]`: the `loc_map` column of arg `a`'s column `j`. Arg
    /// columns with identical renumbering (same group and map column) share one column.
    pub loc_col: Vec<usize>,
    /// Number of `loc_map` columns.
    pub nloc_cols: usize,

    /// Whether the staging arrays below were built (`PlanRequest::staging`); when not, they are
    /// empty and the staging sizes are 0.
    pub staged: bool,
    /// Local-to-global maps: for block `b` and pair `p`, the sorted unique targets are
    /// `ind_map[ind_offs[b * npairs + p]..][..ind_sizes[b * npairs + p]]`. Offsets are absolute;
    /// pairs of one group point at the same data.
    pub ind_map: Vec<i32>,
    /// Start in `ind_map` per (block, pair), index `b * npairs + p`.
    pub ind_offs: Vec<i32>,
    /// Number of staged targets per (block, pair), index `b * npairs + p`.
    pub ind_sizes: Vec<i32>,
    /// Global-to-local maps: `loc_map[col * (end - start) + (e - start)]` is the position in its
    /// block's `ind_map` list of the target element `e` reaches through column `col`.
    /// Round trip: `ind_map[ind_offs[b * npairs + p] + loc] == map[e * dim + k]`.
    pub loc_map: Vec<i32>,
    /// Bytes of staging area per block: each pair's `ind_sizes * elem_bytes`, each rounded up to
    /// [`STAGING_ALIGN`], packed in pair order.
    pub staging_bytes: Vec<usize>,
    /// Largest `staging_bytes` (shared memory a device launch must provide).
    pub max_staging_bytes: usize,
}

fn to_i32(what: &'static str, value: usize) -> Result<i32, PlanError> {
    i32::try_from(value).map_err(|_| PlanError::TooLarge { what, value })
}

impl Plan {
    /// Builds the plan for `req`. Deterministic: equal keys give equal plans.
    pub fn build(req: &PlanRequest<'_>) -> Result<Plan, PlanError> {
        let res = resolve::resolve(req)?;
        let blocks = Blocks::new(req.start, req.end, req.part_size);
        let nb = blocks.nblocks;

        let mut offset = error::with_capacity(nb, "block offsets")?;
        let mut nelems = error::with_capacity(nb, "block sizes")?;
        for b in 0..nb {
            let r = blocks.range(b);
            offset.push(to_i32("block offset", r.start)?);
            nelems.push(to_i32("block size", r.len())?);
        }

        let slots = colour::Slots::new(&res.coloured, res.conflict_space, &blocks)?;
        let colour::Colouring { block_colour, ncolours, thrcol, nthrcol } = colour::colour(&slots, &blocks)?;
        drop(slots);

        // Group blocks by colour with a counting sort, so each colour's blocks stay ascending.
        let mut colour_offsets = vec![0usize; ncolours + 1];
        for &c in &block_colour {
            colour_offsets[c as usize + 1] += 1;
        }
        for c in 0..ncolours {
            colour_offsets[c + 1] += colour_offsets[c];
        }
        let ncolblk = (0..ncolours).map(|c| (colour_offsets[c + 1] - colour_offsets[c]) as i32).collect();
        let mut next = colour_offsets.clone();
        let mut blkmap = error::filled(nb, 0i32, "blocks by colour")?;
        for (b, &c) in block_colour.iter().enumerate() {
            blkmap[next[c as usize]] = b as i32;
            next[c as usize] += 1;
        }

        let max_nthrcol = nthrcol.iter().copied().max().unwrap_or(0) as usize;

        let npairs = res.pairs.len();
        let (ind_map, ind_offs, ind_sizes, loc_map, staging_bytes) = if req.staging {
            let st = staging::build_staging(&res, &blocks)?;
            let bytes = (0..nb)
                .map(|b| {
                    res.pairs
                        .iter()
                        .enumerate()
                        .map(|(p, pair)| {
                            let sz = st.ind_sizes[b * npairs + p] as usize * pair.elem_bytes;
                            sz.div_ceil(STAGING_ALIGN) * STAGING_ALIGN
                        })
                        .sum()
                })
                .collect();
            (st.ind_map, st.ind_offs, st.ind_sizes, st.loc_map, bytes)
        } else {
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), vec![0; nb])
        };
        let max_staging_bytes = staging_bytes.iter().copied().max().unwrap_or(0);

        Ok(Plan {
            start: req.start,
            end: req.end,
            part_size: req.part_size,
            nblocks: nb,
            offset,
            nelems,
            block_colour,
            ncolours,
            blkmap,
            colour_offsets,
            ncolblk,
            thrcol,
            nthrcol,
            max_nthrcol,
            pairs: res.pairs,
            pair_of_arg: res.pair_of_arg,
            arg_col_start: res.arg_col_start,
            loc_col: res.loc_col,
            nloc_cols: res.nloc_cols,
            staged: req.staging,
            ind_map,
            ind_offs,
            ind_sizes,
            loc_map,
            staging_bytes,
            max_staging_bytes,
        })
    }

    /// Number of elements planned (`end - start`).
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the range is empty (then there are no blocks and no colours).
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Absolute element range of block `b`.
    pub fn block_range(&self, b: usize) -> Range<usize> {
        let first = self.offset[b] as usize;
        first..first + self.nelems[b] as usize
    }

    /// Block ids of colour `c`, ascending; blocks of one colour may run at the same time.
    pub fn colour_blocks(&self, c: usize) -> &[i32] {
        &self.blkmap[self.colour_offsets[c]..self.colour_offsets[c + 1]]
    }

    /// Sorted unique targets block `b` stages for pair `p` (requires a staged plan).
    pub fn ind_block(&self, b: usize, p: usize) -> &[i32] {
        let i = b * self.pairs.len() + p;
        let first = self.ind_offs[i] as usize;
        &self.ind_map[first..first + self.ind_sizes[i] as usize]
    }

    /// The `loc_map` column of indirect arg `arg`'s column `j`.
    pub fn loc_column(&self, arg: usize, j: usize) -> usize {
        debug_assert!(self.arg_col_start[arg] + j < self.arg_col_start[arg + 1]);
        self.loc_col[self.arg_col_start[arg] + j]
    }

    /// Global-to-local map of arg `arg`'s column `j`, indexed by `e - start` (requires a staged
    /// plan).
    pub fn loc(&self, arg: usize, j: usize) -> &[i32] {
        let n = self.len();
        let c = self.loc_column(arg, j);
        &self.loc_map[c * n..(c + 1) * n]
    }
}
