//! What a plan is asked for: the loop's range and its indirect arguments.
//!
//! Following PyOP2's split between data-free descriptors and bound arguments, each indirect
//! argument is an [`IndirectDesc`] (ids and sizes only, hashable, the cache key is made of these)
//! plus the map values it is bound to. Identity is by the `u64` ids the caller gives its dats,
//! maps and sets, never by object addresses, so a key stays valid however objects move.
//!
//! The one rule deciding which arguments take part in colouring lives here:
//! [`needs_colouring`].

/// How a loop argument touches its data (OP2's `OP_READ` ... `OP_MAX`): the crate's one
/// access type, re-exported so plan users need no other import.
pub use crate::arg::Access;

/// Whether an argument must be coloured: the one place this rule is written.
///
/// Whether an argument's conflicts are resolved by colouring (the rule lives with the argument
/// descriptors, in `arg`).
pub use crate::arg::needs_colouring;

/// Which column(s) of the map an indirect argument goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapIdx {
    /// One column, OP2 `idx >= 0`: the kernel gets the target `map[e][k]`.
    Col(u32),
    /// Every column, OP2 vector argument `idx == -dim`: the kernel gets `map[e][0..dim]`.
    All,
}

impl MapIdx {
    /// From OP2's integer convention: `idx >= 0` is one column (checked against `dim` when the
    /// plan is built), `idx == -dim` is all columns. Any other negative value gives `None`.
    pub fn from_op2(idx: i32, dim: usize) -> Option<MapIdx> {
        if idx >= 0 {
            Some(MapIdx::Col(idx as u32))
        } else if (idx as i64) == -(dim as i64) {
            Some(MapIdx::All)
        } else {
            None
        }
    }

    /// How many map columns this argument uses: 1, or the map's arity.
    pub fn ncols(self, map_dim: usize) -> usize {
        match self {
            MapIdx::Col(_) => 1,
            MapIdx::All => map_dim,
        }
    }

    /// The map column of this argument's `j`-th column (`j < ncols`).
    pub fn column(self, j: usize) -> usize {
        match self {
            MapIdx::Col(k) => k as usize,
            MapIdx::All => j,
        }
    }
}

/// One indirect argument, data-free: everything the plan's shape depends on except the map's
/// values (which are fixed for a map id: OP2 maps are immutable once declared).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndirectDesc {
    /// Id of the dat. Conflicts are keyed by it: two args on one dat through different maps to
    /// the same set do conflict.
    pub dat: u64,
    /// Bytes of one dat element (dat dim * type size); sizes the staging area.
    pub elem_bytes: usize,
    /// Id of the map.
    pub map: u64,
    /// Arity of the map (entries per iteration element).
    pub map_dim: usize,
    /// Column(s) used.
    pub idx: MapIdx,
    /// Size of the map's target set (the dat's set), including any halo the values reach into.
    pub target_size: usize,
    /// Whether this argument takes part in colouring: pass [`needs_colouring`]`(access, true)`.
    pub colour: bool,
}

/// An indirect argument bound to its map values.
#[derive(Clone, Copy, Debug)]
pub struct IndirectArg<'a> {
    pub desc: IndirectDesc,
    /// The map, row-major: `values[e * map_dim + k]` is the target of element `e` through
    /// column `k`. Length `set_size * map_dim`.
    pub map_values: &'a [i32],
}

/// Everything a plan is built from.
#[derive(Clone, Copy, Debug)]
pub struct PlanRequest<'a> {
    /// Id of the iteration set.
    pub set: u64,
    /// Size of the iteration set (rows of every map here).
    pub set_size: usize,
    /// First element of the range to plan.
    pub start: usize,
    /// One past the last element of the range to plan.
    pub end: usize,
    /// Elements per mini-partition (block).
    pub part_size: usize,
    /// Whether to build the staging maps (`ind_map`, `loc_map`, ...). Device backends that stage
    /// indirect data in shared/local memory need them; a threaded host backend does not.
    pub staging: bool,
    /// The loop's indirect arguments, in loop order (direct args and globals left out).
    pub args: &'a [IndirectArg<'a>],
}

impl PlanRequest<'_> {
    /// The cache key for this request: the same key always gives an identical plan.
    pub fn key(&self) -> PlanKey {
        PlanKey {
            set: self.set,
            set_size: self.set_size,
            start: self.start,
            end: self.end,
            part_size: self.part_size,
            staging: self.staging,
            args: self.args.iter().map(|a| a.desc).collect(),
        }
    }
}

/// Identifies a plan: set id, size and range, part size, whether staging was built, and every
/// indirect arg's descriptor (map id, dat id, idx, colour flag and the sizes those ids imply).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlanKey {
    pub set: u64,
    pub set_size: usize,
    pub start: usize,
    pub end: usize,
    pub part_size: usize,
    pub staging: bool,
    pub args: Vec<IndirectDesc>,
}
