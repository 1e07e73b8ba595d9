//! Loop arguments: the data-free descriptor (`ArgDesc`, what code generation and caches key on)
//! and the bound argument (`BoundArg`, which dat, map or caller memory it refers to), with the
//! validation that needs the whole loop (sets, `op_arg_info` references).

pub mod rules;

use crate::core::{DatId, ElemType, MapId, MatId, SetId};
use crate::error::Result;
use crate::op2_bail;

/// Access descriptor of a loop argument (`OP_READ` ... `OP_MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    Read,
    Write,
    Rw,
    Inc,
    Min,
    Max,
}

impl Access {
    pub fn from_c(acc: i32) -> Option<Access> {
        Some(match acc {
            0 => Access::Read,
            1 => Access::Write,
            2 => Access::Rw,
            3 => Access::Inc,
            4 => Access::Min,
            5 => Access::Max,
            _ => return None,
        })
    }

    pub fn to_c(self) -> i32 {
        self as i32
    }

    pub fn c_name(self) -> &'static str {
        match self {
            Access::Read => "OP_READ",
            Access::Write => "OP_WRITE",
            Access::Rw => "OP_RW",
            Access::Inc => "OP_INC",
            Access::Min => "OP_MIN",
            Access::Max => "OP_MAX",
        }
    }

    /// Whether the argument's data is read before being written (bandwidth accounting).
    pub fn reads(self) -> bool {
        !matches!(self, Access::Write)
    }

    /// Whether the argument's data is modified.
    pub fn writes(self) -> bool {
        !matches!(self, Access::Read)
    }

    pub fn is_reduction(self) -> bool {
        matches!(self, Access::Inc | Access::Min | Access::Max)
    }
}

/// How a dat argument reaches its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatAccess {
    /// Through `OP_ID`: element `e`'s own row.
    Direct,
    /// Through column `idx` of a map of arity `map_dim`.
    Indirect { map_dim: usize, idx: usize },
    /// Through every column of a map of arity `map_dim` (`idx == -map_dim`): the kernel gets `T**`.
    Vector { map_dim: usize },
}

/// What code generation needs to know about one argument: no sizes, no handles, no addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgDesc {
    Dat {
        ty: ElemType,
        dim: usize,
        acc: Access,
        how: DatAccess,
        optional: bool,
    },
    Gbl {
        ty: ElemType,
        dim: usize,
        acc: Access,
    },
    /// `op_arg_idx`: the element index (`map_dim == None`) or one map entry.
    Idx {
        map_dim: Option<usize>,
        idx: usize,
    },
    /// `op_arg_info`: a payload that follows the MIN/MAX global at argument `reference`.
    Info {
        ty: ElemType,
        dim: usize,
        reference: usize,
    },
    /// `op_arg_mat`: the kernel fills a zeroed dense `rows x cols` local block, which op2 adds
    /// (INC) or stores (WRITE) into the matrix through a table of CSR slots.
    Mat {
        ty: ElemType,
        rows: usize,
        cols: usize,
        acc: Access,
    },
}

/// OP2 colours exactly the indirect increments: `OP_INC` through a map is the only access the
/// library promises to make race-free on every backend. Direct arguments touch only their own
/// element; indirect `Read` never conflicts; indirect `Write` and `Rw` are, by the OP2 contract,
/// the user's promise that no two elements touch the same target; `Min`/`Max` are refused on
/// dats. (OP2-Common also colours blocks for indirect `Rw`; adding `Access::Rw` here is the one
/// change that would take that stricter line.)
pub fn needs_colouring(access: Access, indirect: bool) -> bool {
    indirect && access == Access::Inc
}

impl ArgDesc {
    /// Whether this argument needs the iteration to be coloured (the rule itself is
    /// `needs_colouring`, above).
    pub fn needs_colouring(&self) -> bool {
        match *self {
            ArgDesc::Dat { acc, how, .. } => needs_colouring(acc, how != DatAccess::Direct),
            // Elements sharing a row would add to the same entries: coloured on the row map.
            ArgDesc::Mat { .. } => true,
            _ => false,
        }
    }

    pub fn is_indirect(&self) -> bool {
        matches!(self, ArgDesc::Dat { how: DatAccess::Indirect { .. } | DatAccess::Vector { .. }, .. })
    }
}

/// What an argument refers to in this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundArg {
    Dat {
        dat: DatId,
        map: Option<MapId>,
        enabled: bool,
    },
    /// Caller memory of a global or info payload (`bytes` long).
    Gbl {
        ptr: *mut u8,
        bytes: usize,
    },
    Idx {
        map: Option<MapId>,
    },
    /// A matrix, through its row and column maps (`None`: all columns of the map).
    Mat {
        mat: MatId,
        rowmap: MapId,
        ridx: Option<usize>,
        colmap: MapId,
        cidx: Option<usize>,
        /// Bytes of the matrix's values (validation copies them).
        values_bytes: usize,
    },
}

/// An `op_arg` as the C layer decoded it: handles resolved to ids, nothing checked against the
/// loop yet. Built by the `op_arg_*` functions after their own checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawArg {
    Dat { dat: DatId, map: Option<MapId>, idx: i32, acc: Access, opt: Option<bool> },
    Gbl { ptr: *mut u8, dim: usize, ty: ElemType, acc: Access },
    Idx { map: Option<MapId>, idx: i32 },
    Info { ptr: *mut u8, dim: usize, ty: ElemType, reference: i32 },
    Mat { mat: MatId, rowmap: MapId, ridx: i32, colmap: MapId, cidx: i32, acc: Access },
}

/// The facts about the context that binding needs (so this module stays free of `Context`).
pub trait ArgLookup {
    fn set_name(&self, s: SetId) -> &str;
    fn dat_info(&self, d: DatId) -> (&str, SetId, usize, ElemType);
    fn map_info(&self, m: MapId) -> (&str, SetId, SetId, usize);
    /// A matrix's name, block size (rdim, cdim), type and number of stored values.
    fn mat_info(&self, m: MatId) -> (&str, usize, usize, ElemType, usize);
    /// The caller's index base for messages (0 for C, 1 for Fortran).
    fn index_base(&self) -> i64 {
        0
    }
}

/// Checks the arguments of `op_par_loop` against the loop and each other and splits them into
/// descriptors and bindings. `name` is the loop's name, for error messages.
pub fn bind(ctx: &dyn ArgLookup, name: &str, set: SetId, raw: &[RawArg]) -> Result<(Vec<ArgDesc>, Vec<BoundArg>)> {
    let mut descs = Vec::with_capacity(raw.len());
    let mut bound = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let (d, b) = match *r {
            RawArg::Dat { dat, map, idx, acc, opt } => {
                rules::dat_access(ctx, &rules::ArgLabel(name, i, "op_arg_dat"), dat, map, idx, acc)?;
                let (dname, dset, dim, ty) = ctx.dat_info(dat);
                let how = match map {
                    None => {
                        if dset != set {
                            op2_bail!(
                                ArgSet,
                                "op_par_loop '{name}', arg {i} (dat '{dname}'): the dat lives on set '{}' but the loop is over set '{}' and the access is direct (OP_ID)",
                                ctx.set_name(dset),
                                ctx.set_name(set)
                            );
                        }
                        DatAccess::Direct
                    }
                    Some(m) => {
                        let (mname, from, _to, mdim) = ctx.map_info(m);
                        if from != set {
                            op2_bail!(
                                ArgSet,
                                "op_par_loop '{name}', arg {i} (dat '{dname}'): map '{mname}' goes from set '{}' but the loop is over set '{}'",
                                ctx.set_name(from),
                                ctx.set_name(set)
                            );
                        }
                        if idx >= 0 {
                            DatAccess::Indirect { map_dim: mdim, idx: idx as usize }
                        } else {
                            DatAccess::Vector { map_dim: mdim }
                        }
                    }
                };
                let enabled = opt.unwrap_or(true);
                (
                    ArgDesc::Dat { ty, dim, acc, how, optional: opt.is_some() },
                    BoundArg::Dat { dat, map: if enabled { map } else { None }, enabled },
                )
            }
            RawArg::Gbl { ptr, dim, ty, acc } => {
                let dim_i = i64::try_from(dim).unwrap_or(i64::MAX);
                rules::gbl(&rules::ArgLabel(name, i, "op_arg_gbl"), ptr.is_null(), dim_i, ty, acc)?;
                (ArgDesc::Gbl { ty, dim, acc }, BoundArg::Gbl { ptr, bytes: dim * ty.size() })
            }
            RawArg::Idx { map, idx } => {
                rules::idx(ctx, &rules::ArgLabel(name, i, "op_arg_idx"), map, idx)?;
                let map_dim = match map {
                    None => None,
                    Some(m) => {
                        let (mname, from, _to, mdim) = ctx.map_info(m);
                        if from != set {
                            op2_bail!(
                                ArgSet,
                                "op_par_loop '{name}', arg {i} (op_arg_idx): map '{mname}' goes from set '{}' but the loop is over set '{}'",
                                ctx.set_name(from),
                                ctx.set_name(set)
                            );
                        }
                        Some(mdim)
                    }
                };
                (ArgDesc::Idx { map_dim, idx: idx.max(0) as usize }, BoundArg::Idx { map })
            }
            RawArg::Info { ptr, dim, ty, reference } => {
                let dim_i = i64::try_from(dim).unwrap_or(i64::MAX);
                rules::info(&rules::ArgLabel(name, i, "op_arg_info"), ptr.is_null(), dim_i)?;
                let ok = usize::try_from(reference)
                    .ok()
                    .filter(|&r| r < raw.len() && r != i)
                    .and_then(|r| matches!(raw[r], RawArg::Gbl { acc: Access::Min | Access::Max, .. }).then_some(r));
                let Some(reference) = ok else {
                    op2_bail!(
                        ArgInfo,
                        "op_par_loop '{name}', arg {i} (op_arg_info): ref {reference} is not the position of an OP_MIN/OP_MAX global in this loop"
                    );
                };
                (ArgDesc::Info { ty, dim, reference }, BoundArg::Gbl { ptr, bytes: dim * ty.size() })
            }
            RawArg::Mat { mat, rowmap, ridx, colmap, cidx, acc } => {
                let (mname, rdim, cdim, ty, nnz) = ctx.mat_info(mat);
                let (rname, from, _, rmd) = ctx.map_info(rowmap);
                let (_, _, _, cmd) = ctx.map_info(colmap);
                if from != set {
                    op2_bail!(
                        ArgSet,
                        "op_par_loop '{name}', arg {i} (mat '{mname}'): map '{rname}' goes from set '{}' but the loop is over set '{}'",
                        ctx.set_name(from),
                        ctx.set_name(set)
                    );
                }
                let ridx = usize::try_from(ridx).ok();
                let cidx = usize::try_from(cidx).ok();
                let rows = if ridx.is_some() { 1 } else { rmd } * rdim;
                let cols = if cidx.is_some() { 1 } else { cmd } * cdim;
                (
                    ArgDesc::Mat { ty, rows, cols, acc },
                    BoundArg::Mat { mat, rowmap, ridx, colmap, cidx, values_bytes: nnz * ty.size() },
                )
            }
        };
        descs.push(d);
        bound.push(b);
    }
    Ok((descs, bound))
}
