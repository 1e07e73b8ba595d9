//! Why a plan could not be built.
//!
//! The plan module is pure and knows nothing of `Op2Error`; callers convert a [`PlanError`] into
//! the crate error at their boundary. Most of these are caller bugs (maps are range-checked at
//! `op_decl_map`), but the plan checks again because it indexes scratch arrays by map values and
//! must never read out of bounds. Argument numbers are positions in the slice of indirect args
//! handed to the plan, not OP2 loop argument numbers.

use std::fmt;

/// A request the plan builder refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// `part_size` was 0: a mini-partition must hold at least one element.
    ZeroPartSize,
    /// The iteration range is not inside the set: `start <= end <= set_size` must hold.
    BadRange { start: usize, end: usize, set_size: usize },
    /// A size or offset does not fit the `i32` the plan arrays use (C `int` on the device side).
    TooLarge { what: &'static str, value: usize },
    /// A map has arity 0.
    ZeroMapDim { arg: usize },
    /// An `idx` names a column outside `[0, map_dim)`.
    BadIdx { arg: usize, idx: u32, map_dim: usize },
    /// The map values slice does not hold `set_size * map_dim` entries.
    MapLength { arg: usize, expected: usize, got: usize },
    /// A map value used by the range lies outside the target set.
    MapOutOfRange { arg: usize, element: usize, position: usize, value: i32, target_size: usize },
    /// Two args name the same map id but disagree about it (arity, target size or values).
    MapInconsistent { arg: usize, map: u64 },
    /// Two args name the same dat id but disagree about its set size or element size.
    DatInconsistent { arg: usize, dat: u64 },
    /// The allocator refused a plan array or colouring scratch of `bytes` bytes.
    OutOfMemory { what: &'static str, bytes: usize },
}

impl PlanError {
    /// Whether this is a refused allocation (callers report it as out of memory, not as a bug).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, PlanError::OutOfMemory { .. })
    }
}

/// `len` copies of `value`, allocated fallibly (plan arrays and scratch are sized by the mesh).
pub(crate) fn filled<T: Clone>(len: usize, value: T, what: &'static str) -> Result<Vec<T>, PlanError> {
    let mut v = with_capacity(len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// An empty vector with room for `len` elements, reserved fallibly.
pub(crate) fn with_capacity<T>(len: usize, what: &'static str) -> Result<Vec<T>, PlanError> {
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| PlanError::OutOfMemory { what, bytes })?;
    Ok(v)
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::ZeroPartSize => write!(f, "plan: part size is 0"),
            PlanError::BadRange { start, end, set_size } => {
                write!(f, "plan: range [{start}, {end}) is not inside a set of size {set_size}")
            }
            PlanError::TooLarge { what, value } => {
                write!(f, "plan: {what} is {value}, more than a 32-bit int holds")
            }
            PlanError::ZeroMapDim { arg } => write!(f, "plan: indirect arg {arg}: map dim is 0"),
            PlanError::BadIdx { arg, idx, map_dim } => {
                write!(f, "plan: indirect arg {arg}: idx {idx} is outside [0, {map_dim}) of the map's dim")
            }
            PlanError::MapLength { arg, expected, got } => write!(
                f,
                "plan: indirect arg {arg}: map has {got} values, expected {expected} \
                 (set size * dim)"
            ),
            PlanError::MapOutOfRange { arg, element, position, value, target_size } => write!(
                f,
                "plan: indirect arg {arg}: map entry (element {element}, position {position}) \
                 is {value}, outside [0, {target_size}) of the target set"
            ),
            PlanError::MapInconsistent { arg, map } => write!(
                f,
                "plan: indirect arg {arg}: map id {map} was given with a different dim, target \
                 size or values by an earlier arg"
            ),
            PlanError::DatInconsistent { arg, dat } => write!(
                f,
                "plan: indirect arg {arg}: dat id {dat} was given with a different set size or \
                 element size by an earlier arg"
            ),
            PlanError::OutOfMemory { what, bytes } => {
                write!(f, "plan: cannot allocate {bytes} bytes ({:.1} MiB) for the {what}", *bytes as f64 / 1048576.0)
            }
        }
    }
}

impl std::error::Error for PlanError {}
