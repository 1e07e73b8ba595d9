//! The rules of each loop argument, in one place: applied when an `op_arg_*` call builds an
//! argument (C, Fortran), and again by `bind` for every argument of every loop (so a loop built
//! from Rust, or an `op_arg` changed in the caller's memory, meets the same rules). Messages
//! name the call (or the loop and argument) and the objects; indices are shown in the caller's
//! numbering (`ArgLookup::index_base`).

use super::{Access, ArgLookup};
use crate::core::{DatId, ElemType, MapId};
use crate::error::Result;
use crate::op2_bail;
use std::fmt::Display;

/// `op_par_loop 'name', arg i (op_arg_dat)`, formatted only when a message needs it.
pub struct ArgLabel<'a>(pub &'a str, pub usize, pub &'a str);

impl Display for ArgLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "op_par_loop '{}', arg {} ({})", self.0, self.1, self.2)
    }
}

/// An `idx` as the caller wrote it: C's as it is; Fortran's (index base 1) one higher for
/// columns, and 0 for what the Fortran module passes for an idx of 0 (`-INT_MAX`).
pub fn shown_idx(base: i64, idx: i32) -> i64 {
    match (base, idx) {
        (0, i) => i as i64,
        (_, i) if i >= 0 => i as i64 + base,
        (_, i) if i == -i32::MAX => 0,
        (_, i) => i as i64,
    }
}

/// A dat argument's declared `dim` and type against the dat's (what only `op_arg_dat` states).
pub fn dat_decl(ctx: &dyn ArgLookup, call: &dyn Display, d: DatId, dim: i32, ty: ElemType) -> Result<()> {
    let (name, _, ddim, dty) = ctx.dat_info(d);
    if dim as i64 != ddim as i64 {
        op2_bail!(ArgMismatch, "{call} '{name}': dim {dim} disagrees with the dat's dim {ddim}");
    }
    if ty != dty {
        op2_bail!(
            ArgMismatch,
            "{call} '{name}': type '{}' disagrees with the dat's type '{}'",
            ty.api_name(),
            dty.api_name()
        );
    }
    Ok(())
}

/// A dat argument's access, map and idx: MIN/MAX only on globals; OP_ID with idx -1; a map
/// that targets the dat's set, with a column in range or `-dim` for all columns.
pub fn dat_access(
    ctx: &dyn ArgLookup,
    call: &dyn Display,
    d: DatId,
    m: Option<MapId>,
    idx: i32,
    acc: Access,
) -> Result<()> {
    let (name, dset, _, _) = ctx.dat_info(d);
    if matches!(acc, Access::Min | Access::Max) {
        op2_bail!(ArgAccess, "{call} '{name}': access {} is only allowed on globals (op_arg_gbl)", acc.c_name());
    }
    match m {
        None => {
            if idx != -1 {
                op2_bail!(ArgIdx, "{call} '{name}': idx must be -1 with OP_ID (direct access), got {idx}");
            }
        }
        Some(mid) => {
            let (mname, _, mto, mdim) = ctx.map_info(mid);
            if mto != dset {
                op2_bail!(
                    ArgSet,
                    "{call} '{name}': map '{mname}' targets set '{}' but the dat lives on set '{}'",
                    ctx.set_name(mto),
                    ctx.set_name(dset)
                );
            }
            let mdim = mdim as i64;
            let i = idx as i64;
            if !(0..mdim).contains(&i) && i != -mdim {
                let base = ctx.index_base();
                op2_bail!(
                    ArgIdx,
                    "{call} '{name}': idx {} is out of range for map '{mname}' of dim {mdim} (use {base}..{}, or -{mdim} for all)",
                    shown_idx(base, idx),
                    mdim - 1 + base
                );
            }
        }
    }
    Ok(())
}

/// A global argument (`op_arg_gbl`): data, a positive dim, and an access globals allow.
pub fn gbl(call: &dyn Display, data_is_null: bool, dim: i64, ty: ElemType, acc: Access) -> Result<()> {
    if data_is_null {
        op2_bail!(NullArgument, "{call}: data is NULL");
    }
    if dim < 1 {
        op2_bail!(BadSize, "{call}: dim {dim} is less than 1");
    }
    match acc {
        Access::Write | Access::Rw => {
            op2_bail!(
                ArgAccess,
                "{call}: access {} is not allowed on a global (use OP_READ, OP_INC, OP_MIN or OP_MAX)",
                acc.c_name()
            )
        }
        Access::Inc | Access::Min | Access::Max if !ty.is_numeric() => {
            op2_bail!(ArgAccess, "{call}: access {} needs a numeric type, got '{}'", acc.c_name(), ty.api_name())
        }
        _ => Ok(()),
    }
}

/// An index argument (`op_arg_idx`): idx -1 with OP_ID, else a column of the map.
pub fn idx(ctx: &dyn ArgLookup, call: &dyn Display, m: Option<MapId>, idx: i32) -> Result<()> {
    match m {
        None if idx != -1 => op2_bail!(ArgIdx, "{call}: idx must be -1 with OP_ID, got {idx}"),
        None => Ok(()),
        Some(m) => {
            let (mname, _, _, mdim) = ctx.map_info(m);
            if idx < 0 || idx as usize >= mdim {
                let base = ctx.index_base();
                op2_bail!(
                    ArgIdx,
                    "{call}: idx {} is out of range for map '{mname}' of dim {mdim} (use {base}..{})",
                    shown_idx(base, idx),
                    mdim as i64 - 1 + base
                );
            }
            Ok(())
        }
    }
}

/// An info argument (`op_arg_info`): data and a positive dim (its reference is checked by
/// `bind`, which sees the other arguments).
pub fn info(call: &dyn Display, data_is_null: bool, dim: i64) -> Result<()> {
    if data_is_null {
        op2_bail!(NullArgument, "{call}: data is NULL");
    }
    if dim < 1 {
        op2_bail!(BadSize, "{call}: dim {dim} is less than 1");
    }
    Ok(())
}
