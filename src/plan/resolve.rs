//! Checks a [`PlanRequest`] and works out its structure before any per-element work.
//!
//! OP2 stages each unique (dat, map) pair once, however many arguments use it with different
//! `idx`; those are the *pairs*. The local renumbering of a pair depends only on its map and the
//! set of map columns its arguments use, not on the dat, so pairs sharing both (for Airfoil's
//! `res_calc`: `q`, `adt` and `res`, all through `pecell` columns 0 and 1) are renumbered once as
//! one *group* and share `ind_map` and `loc_map` storage. Colouring works on *coloured columns*:
//! each (dat, map, column) used by an argument that needs colouring, with the targets placed in
//! a conflict space where every coloured dat owns its own range (conflicts are keyed by dat).

use std::collections::HashMap;

use super::desc::{IndirectArg, PlanRequest};
use super::error::PlanError;
use super::StagePair;

/// Pairs renumbered together: same map, same set of used columns.
pub(crate) struct Group<'a> {
    pub values: &'a [i32],
    pub dim: usize,
    pub target_size: usize,
    /// Map columns renumbered together, ascending.
    pub cols: Vec<usize>,
    /// The `loc_map` column holding `cols[0]`; the others follow.
    pub loc_base: usize,
}

/// One (dat, map, column) read by an argument that needs colouring.
pub(crate) struct ColouredCol<'a> {
    pub values: &'a [i32],
    pub dim: usize,
    pub col: usize,
    /// Where the dat's targets start in the conflict space.
    pub base: usize,
}

pub(crate) struct Resolved<'a> {
    pub pairs: Vec<StagePair>,
    pub pair_of_arg: Vec<usize>,
    pub groups: Vec<Group<'a>>,
    pub arg_col_start: Vec<usize>,
    pub loc_col: Vec<usize>,
    pub nloc_cols: usize,
    pub coloured: Vec<ColouredCol<'a>>,
    /// Total slots of the conflict space (sum of coloured dats' set sizes).
    pub conflict_space: usize,
}

fn fits_i32(what: &'static str, value: usize) -> Result<(), PlanError> {
    if value > i32::MAX as usize {
        Err(PlanError::TooLarge { what, value })
    } else {
        Ok(())
    }
}

/// Checks the request's sizes, each map's shape and the values the range reads.
fn validate(req: &PlanRequest<'_>) -> Result<(), PlanError> {
    if req.part_size == 0 {
        return Err(PlanError::ZeroPartSize);
    }
    if req.start > req.end || req.end > req.set_size {
        return Err(PlanError::BadRange { start: req.start, end: req.end, set_size: req.set_size });
    }
    fits_i32("set size", req.set_size)?;
    let mut maps: HashMap<u64, &IndirectArg<'_>> = HashMap::new();
    let mut dats: HashMap<u64, &IndirectArg<'_>> = HashMap::new();
    for (i, a) in req.args.iter().enumerate() {
        let d = &a.desc;
        if d.map_dim == 0 {
            return Err(PlanError::ZeroMapDim { arg: i });
        }
        if let super::MapIdx::Col(k) = d.idx {
            if k as usize >= d.map_dim {
                return Err(PlanError::BadIdx { arg: i, idx: k, map_dim: d.map_dim });
            }
        }
        let expected =
            req.set_size.checked_mul(d.map_dim).ok_or(PlanError::TooLarge { what: "map length", value: usize::MAX })?;
        if a.map_values.len() != expected {
            return Err(PlanError::MapLength { arg: i, expected, got: a.map_values.len() });
        }
        if let Some(prev) = dats.get(&d.dat) {
            if prev.desc.target_size != d.target_size || prev.desc.elem_bytes != d.elem_bytes {
                return Err(PlanError::DatInconsistent { arg: i, dat: d.dat });
            }
        } else {
            dats.insert(d.dat, a);
        }
        if let Some(prev) = maps.get(&d.map) {
            let same_slice = std::ptr::eq(prev.map_values, a.map_values);
            if prev.desc.map_dim != d.map_dim
                || prev.desc.target_size != d.target_size
                || !(same_slice || prev.map_values == a.map_values)
            {
                return Err(PlanError::MapInconsistent { arg: i, map: d.map });
            }
            continue;
        }
        maps.insert(d.map, a);
        // Range-check the rows this plan reads, once per map: everything after indexes scratch
        // arrays by these values.
        let rows = &a.map_values[req.start * d.map_dim..req.end * d.map_dim];
        // As u32 a negative value is huge, so one maximum (which vectorises) finds both kinds
        // of bad value; the position is looked for only when there is one.
        let bound = d.target_size.min(u32::MAX as usize) as u32;
        let max = rows.iter().fold(0u32, |m, &v| m.max(v as u32));
        if max >= bound && !rows.is_empty() {
            let pos = rows.iter().position(|&v| v as u32 >= bound).expect("a value at or above the bound exists");
            return Err(PlanError::MapOutOfRange {
                arg: i,
                element: req.start + pos / d.map_dim,
                position: pos % d.map_dim,
                value: rows[pos],
                target_size: d.target_size,
            });
        }
    }
    Ok(())
}

/// Validates `req` and derives pairs, renumbering groups, `loc_map` columns and coloured columns.
pub(crate) fn resolve<'a>(req: &PlanRequest<'a>) -> Result<Resolved<'a>, PlanError> {
    validate(req)?;
    let args = req.args;

    // Unique (dat, map) pairs in order of first appearance, with the columns their args use.
    let mut pairs: Vec<StagePair> = Vec::new();
    let mut pair_used: Vec<Vec<bool>> = Vec::new();
    let mut pair_rep: Vec<usize> = Vec::new(); // an arg of each pair, for its map values
    let mut pair_of_arg = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let d = &a.desc;
        let p = match pairs.iter().position(|p| p.dat == d.dat && p.map == d.map) {
            Some(p) => p,
            None => {
                pairs.push(StagePair { dat: d.dat, map: d.map, elem_bytes: d.elem_bytes, group: 0 });
                pair_used.push(vec![false; d.map_dim]);
                pair_rep.push(i);
                pairs.len() - 1
            }
        };
        for j in 0..d.idx.ncols(d.map_dim) {
            pair_used[p][d.idx.column(j)] = true;
        }
        pair_of_arg.push(p);
    }

    // Renumbering groups: pairs with the same map and the same used columns.
    let mut groups: Vec<Group<'a>> = Vec::new();
    let mut group_key: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut nloc_cols = 0;
    for (p, pair) in pairs.iter_mut().enumerate() {
        let cols: Vec<usize> = (0..pair_used[p].len()).filter(|&k| pair_used[p][k]).collect();
        let key = (pair.map, cols);
        pair.group = match group_key.iter().position(|g| *g == key) {
            Some(g) => g,
            None => {
                let rep = &args[pair_rep[p]];
                groups.push(Group {
                    values: rep.map_values,
                    dim: rep.desc.map_dim,
                    target_size: rep.desc.target_size,
                    cols: key.1.clone(),
                    loc_base: nloc_cols,
                });
                nloc_cols += key.1.len();
                group_key.push(key);
                groups.len() - 1
            }
        };
    }

    // Each argument column's loc_map column.
    let mut arg_col_start = Vec::with_capacity(args.len() + 1);
    let mut loc_col = Vec::new();
    for (i, a) in args.iter().enumerate() {
        arg_col_start.push(loc_col.len());
        let g = &groups[pairs[pair_of_arg[i]].group];
        for j in 0..a.desc.idx.ncols(a.desc.map_dim) {
            let k = a.desc.idx.column(j);
            let pos = g.cols.binary_search(&k).expect("column recorded for its pair");
            loc_col.push(g.loc_base + pos);
        }
    }
    arg_col_start.push(loc_col.len());

    // Coloured columns: unique (dat, map, column) of args that need colouring, each dat with its
    // own range of the conflict space.
    let mut coloured: Vec<ColouredCol<'a>> = Vec::new();
    let mut seen: Vec<(u64, u64, usize)> = Vec::new();
    let mut dat_base: Vec<(u64, usize)> = Vec::new();
    let mut conflict_space = 0usize;
    for a in args.iter().filter(|a| a.desc.colour) {
        let d = &a.desc;
        let base = match dat_base.iter().find(|(dat, _)| *dat == d.dat) {
            Some(&(_, b)) => b,
            None => {
                let b = conflict_space;
                dat_base.push((d.dat, b));
                conflict_space += d.target_size;
                b
            }
        };
        for j in 0..d.idx.ncols(d.map_dim) {
            let k = d.idx.column(j);
            if seen.contains(&(d.dat, d.map, k)) {
                continue;
            }
            seen.push((d.dat, d.map, k));
            coloured.push(ColouredCol { values: a.map_values, dim: d.map_dim, col: k, base });
        }
    }

    Ok(Resolved { pairs, pair_of_arg, groups, arg_col_start, loc_col, nloc_cols, coloured, conflict_space })
}
