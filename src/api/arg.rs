//! `op_arg` and the functions that build it. An `op_arg` is a plain value the caller keeps in
//! an array for `op_par_loop`; its fields are private to op2 (bindings hold it as opaque
//! storage of `op_arg_size()` bytes). A failed `op_arg_*` call returns an invalid `op_arg`,
//! which `op_par_loop` refuses.

use super::handle::{op_dat, op_map};
use super::{boundary, c_str, ApiState};
use crate::arg::rules::{self, ArgLabel};
use crate::arg::{Access, RawArg};
use crate::core::ElemType;
use crate::error::{Op2Error, Result};
use crate::op2_bail;
use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;

/// An access descriptor: OP_READ, OP_WRITE, OP_RW, OP_INC, OP_MIN or OP_MAX.
#[allow(non_camel_case_types)]
pub type op_access = c_int;

const KIND_INVALID: c_int = 0;
const KIND_DAT: c_int = 1;
const KIND_GBL: c_int = 2;
const KIND_IDX: c_int = 3;
const KIND_INFO: c_int = 4;
const KIND_MAT: c_int = 5;
/// Marks values built by op2 (an uninitialised `op_arg` is very unlikely to carry it).
const MAGIC: c_int = 0x4f50_3241; // "OP2A"

/// A loop argument, built only by the `op_arg_*` functions. Fields are private to op2.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct op_arg {
    pub dat: op_dat,
    pub map: op_map,
    pub data: *mut c_void,
    pub idx: c_int,
    pub dim: c_int,
    pub type_code: c_int,
    pub acc: c_int,
    pub kind: c_int,
    pub opt: c_int,
    pub reference: c_int,
    pub magic: c_int,
}

impl op_arg {
    fn invalid() -> op_arg {
        op_arg {
            dat: null_mut(),
            map: null_mut(),
            data: null_mut(),
            idx: 0,
            dim: 0,
            type_code: -1,
            acc: -1,
            kind: KIND_INVALID,
            opt: 0,
            reference: -1,
            magic: MAGIC,
        }
    }
}

pub(crate) fn access(acc: c_int, call: &str, what: &str) -> Result<Access> {
    match Access::from_c(acc) {
        Some(a) => Ok(a),
        None => op2_bail!(
            ArgAccess,
            "{call}{what}: access {acc} is not one of OP_READ, OP_WRITE, OP_RW, OP_INC, OP_MIN, OP_MAX"
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn arg_dat(
    call: &str,
    st: &mut ApiState,
    opt: Option<bool>,
    dat: op_dat,
    idx: c_int,
    map: op_map,
    dim: c_int,
    r#type: *const c_char,
    acc: op_access,
) -> Result<op_arg> {
    let d = st.dat(dat, &call, &"dat")?;
    let m = if map.is_null() { None } else { Some(st.map(map, &call, &"map")?) };
    let ctx = st.ctx_lazy(call)?;
    let name = ctx.dats[d.0 as usize].name.clone();
    let ty = ElemType::parse(c_str(r#type, call, "type")?, call, &format!(" '{name}'"))?;
    let acc = access(acc, call, &format!(" '{name}'"))?;
    rules::dat_decl(ctx, &call, d, dim, ty)?;
    rules::dat_access(ctx, &call, d, m, idx, acc)?;
    Ok(op_arg {
        dat,
        map,
        data: null_mut(),
        idx,
        dim,
        type_code: ty.code(),
        acc: acc.to_c(),
        kind: KIND_DAT,
        opt: match opt {
            None => -1,
            Some(o) => o as c_int,
        },
        reference: -1,
        magic: MAGIC,
    })
}

/// A matrix argument (`op_arg_mat`): the mat handle in `dat`, the row map in `map`, the column
/// map in `data`, `ridx` in `idx` and `cidx` in `reference`.
pub(crate) fn mat_arg(
    mat: *mut c_void,
    rowmap: op_map,
    colmap: *mut c_void,
    ridx: c_int,
    cidx: c_int,
    ty: ElemType,
    acc: Access,
) -> op_arg {
    op_arg {
        dat: mat as op_dat,
        map: rowmap,
        data: colmap,
        idx: ridx,
        dim: 0,
        type_code: ty.code(),
        acc: acc.to_c(),
        kind: KIND_MAT,
        opt: -1,
        reference: cidx,
        magic: MAGIC,
    }
}

/// Runs an `op_arg_*` body; a failure is remembered (`ApiState::remember_arg_failure`) and its
/// number kept in the invalid `op_arg` returned, so that `op_par_loop` can report the real
/// cause when it is given that argument.
pub(crate) fn arg_boundary(call: &str, body: impl FnOnce(&mut ApiState) -> Result<op_arg>) -> op_arg {
    let mut failure = 0;
    let mut a = boundary(call, op_arg::invalid(), |st| {
        body(st).inspect_err(|e| {
            failure = st.remember_arg_failure(e);
        })
    });
    if a.kind == KIND_INVALID {
        a.reference = failure as c_int;
    }
    a
}

/// A dat argument. `map == OP_ID` with `idx == -1`: direct, the kernel gets `T*` to the
/// element's `dim` values. `idx >= 0` with a map: the kernel gets `T*` to the values of
/// `map[e][idx]`. `idx == -N` (N = the map's dim): the kernel gets `T**`, one pointer per map
/// entry. `dim` and `type` must match the dat's; the map must target the dat's set (the loop
/// checks that it starts from the loop's set). `acc`: OP_READ, OP_WRITE, OP_RW or OP_INC
/// (indirect OP_INC is race-free on every backend; indirect WRITE/RW promise no conflicts).
/// Errors (the returned op_arg is then refused by op_par_loop): OP2_ERR_ARG_MISMATCH,
/// OP2_ERR_ARG_SET, OP2_ERR_ARG_IDX, OP2_ERR_ARG_ACCESS, OP2_ERR_BAD_TYPE, OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_arg_dat(
    dat: op_dat,
    idx: c_int,
    map: op_map,
    dim: c_int,
    r#type: *const c_char,
    acc: op_access,
) -> op_arg {
    arg_boundary("op_arg_dat", |st| arg_dat("op_arg_dat", st, None, dat, idx, map, dim, r#type, acc))
}

/// An optional dat argument: as `op_arg_dat` when `opt` is non-zero; when `opt` is 0 the
/// kernel gets NULL for it and no data is touched (the arguments must still be valid).
#[no_mangle]
pub extern "C" fn op_opt_arg_dat(
    opt: c_int,
    dat: op_dat,
    idx: c_int,
    map: op_map,
    dim: c_int,
    r#type: *const c_char,
    acc: op_access,
) -> op_arg {
    arg_boundary("op_opt_arg_dat", |st| arg_dat("op_opt_arg_dat", st, Some(opt != 0), dat, idx, map, dim, r#type, acc))
}

fn arg_gbl(
    call: &str,
    st: &mut ApiState,
    data: *mut c_void,
    dim: c_int,
    r#type: *const c_char,
    size: Option<c_int>,
    acc: op_access,
) -> Result<op_arg> {
    st.ctx_lazy(call)?;
    let ty = ElemType::parse(c_str(r#type, call, "type")?, call, "")?;
    if let Some(size) = size {
        if size as i64 != ty.size() as i64 {
            op2_bail!(
                BadSize,
                "{call}: element size {size} disagrees with type '{}' ({} bytes)",
                ty.api_name(),
                ty.size()
            );
        }
    }
    let acc = access(acc, call, "")?;
    rules::gbl(&call, data.is_null(), dim as i64, ty, acc)?;
    Ok(op_arg {
        dat: null_mut(),
        map: null_mut(),
        data,
        idx: -1,
        dim,
        type_code: ty.code(),
        acc: acc.to_c(),
        kind: KIND_GBL,
        opt: -1,
        reference: -1,
        magic: MAGIC,
    })
}

/// A global argument: `dim` values of `type` in the caller's memory at `data`, which must stay
/// valid until `op_par_loop` returns. OP_READ: the kernel reads them. OP_INC: the sum of all
/// contributions is added to the caller's values. OP_MIN / OP_MAX: combined with the caller's
/// values. Results are in the caller's memory when `op_par_loop` returns, on every backend; a
/// failed loop leaves them untouched. Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_BAD_SIZE,
/// OP2_ERR_BAD_TYPE, OP2_ERR_ARG_ACCESS (WRITE/RW, or INC/MIN/MAX on a non-numeric type).
#[no_mangle]
pub extern "C" fn op_arg_gbl(data: *mut c_void, dim: c_int, r#type: *const c_char, acc: op_access) -> op_arg {
    arg_boundary("op_arg_gbl", |st| arg_gbl("op_arg_gbl", st, data, dim, r#type, None, acc))
}

/// As `op_arg_gbl`, with the element size in bytes, which must agree with `type`.
#[no_mangle]
pub extern "C" fn op_arg_gbl_char(
    data: *mut c_char,
    dim: c_int,
    r#type: *const c_char,
    size: c_int,
    acc: op_access,
) -> op_arg {
    arg_boundary("op_arg_gbl_char", |st| {
        arg_gbl("op_arg_gbl_char", st, data as *mut c_void, dim, r#type, Some(size), acc)
    })
}

/// The kernel gets `int*` to the element's index (`OP_ID`, idx -1) or to `map[e][idx]`.
/// Errors: OP2_ERR_ARG_IDX, OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_arg_idx(idx: c_int, map: op_map) -> op_arg {
    const CALL: &str = "op_arg_idx";
    arg_boundary(CALL, |st| {
        st.ctx_lazy(CALL)?;
        let m = if map.is_null() { None } else { Some(st.map(map, &CALL, &"map")?) };
        rules::idx(st.ctx_lazy(CALL)?, &CALL, m, idx)?;
        Ok(op_arg {
            dat: null_mut(),
            map,
            data: null_mut(),
            idx,
            dim: 1,
            type_code: ElemType::Int.code(),
            acc: Access::Read.to_c(),
            kind: KIND_IDX,
            opt: -1,
            reference: -1,
            magic: MAGIC,
        })
    })
}

/// A payload that follows the OP_MIN/OP_MAX global at argument position `ref` of the same loop
/// (e.g. the location of the maximum): the kernel gets `T*` to a private copy and updates it
/// together with the MIN/MAX value; the caller receives the payload of the winning value.
/// `op_par_loop` reports OP2_ERR_ARG_INFO if `ref` is not such a global.
#[no_mangle]
pub extern "C" fn op_arg_info(data: *mut c_void, dim: c_int, r#type: *const c_char, reference: c_int) -> op_arg {
    const CALL: &str = "op_arg_info";
    arg_boundary(CALL, |st| {
        st.ctx_lazy(CALL)?;
        let ty = ElemType::parse(c_str(r#type, CALL, "type")?, CALL, "")?;
        rules::info(&CALL, data.is_null(), dim as i64)?;
        Ok(op_arg {
            dat: null_mut(),
            map: null_mut(),
            data,
            idx: -1,
            dim,
            type_code: ty.code(),
            acc: Access::Read.to_c(),
            kind: KIND_INFO,
            opt: -1,
            reference,
            magic: MAGIC,
        })
    })
}

/// Decodes an `op_arg` for `op_par_loop`, checking every field again: the handles (they may be
/// stale if the session ended since the argument was built) and every rule of the `op_arg_*`
/// call that built it, since the struct lives in the caller's memory and may have been changed.
/// An argument whose `op_arg_*` call failed reports that call's error. A matrix argument is
/// returned as `Decoded::Mat`, for `api::mat::decode_arg` to check its handles and rules.
pub(crate) fn decode(st: &mut ApiState, a: &op_arg, loop_name: &str, i: usize) -> Result<Decoded> {
    let bad = |why: &str| {
        crate::op2_err!(
            ArgInvalid,
            "op_par_loop '{loop_name}', arg {i}: this op_arg was not built by a successful op_arg_* call ({why})"
        )
    };
    if a.magic != MAGIC {
        return Err(bad("it does not carry op2's mark"));
    }
    if a.kind == KIND_INVALID {
        return Err(match st.arg_failure(a.reference) {
            Some(e) => Op2Error::new(e.code, format!("op_par_loop '{loop_name}', arg {i}: {}", e.message)),
            None => bad("its op_arg_* call failed"),
        });
    }
    let Some(ty) = ElemType::from_code(a.type_code) else {
        return Err(bad(&format!("type code {} is unknown", a.type_code)));
    };
    let Some(acc) = Access::from_c(a.acc) else {
        return Err(crate::op2_err!(
            ArgAccess,
            "op_par_loop '{loop_name}', arg {i}: access {} is not one of OP_READ, OP_WRITE, OP_RW, OP_INC, OP_MIN, OP_MAX",
            a.acc
        ));
    };
    let call = super::LoopName(loop_name);
    let what = super::ArgHandle(i);
    Ok(Decoded::Arg(match a.kind {
        KIND_DAT => {
            let dat = st.dat(a.dat, &call, &what)?;
            let map = if a.map.is_null() { None } else { Some(st.map(a.map, &call, &what)?) };
            let opt = match a.opt {
                -1 => None,
                0 => Some(false),
                1 => Some(true),
                o => return Err(bad(&format!("opt field {o}"))),
            };
            let label = ArgLabel(loop_name, i, "op_arg_dat");
            let ctx = st.ctx_lazy("op_par_loop")?;
            rules::dat_decl(ctx, &label, dat, a.dim, ty)?;
            rules::dat_access(ctx, &label, dat, map, a.idx, acc)?;
            RawArg::Dat { dat, map, idx: a.idx, acc, opt }
        }
        KIND_GBL => {
            rules::gbl(&ArgLabel(loop_name, i, "op_arg_gbl"), a.data.is_null(), a.dim as i64, ty, acc)?;
            RawArg::Gbl { ptr: a.data as *mut u8, dim: a.dim as usize, ty, acc }
        }
        KIND_IDX => {
            let map = if a.map.is_null() { None } else { Some(st.map(a.map, &call, &what)?) };
            rules::idx(st.ctx_lazy("op_par_loop")?, &ArgLabel(loop_name, i, "op_arg_idx"), map, a.idx)?;
            RawArg::Idx { map, idx: a.idx }
        }
        KIND_INFO => {
            rules::info(&ArgLabel(loop_name, i, "op_arg_info"), a.data.is_null(), a.dim as i64)?;
            RawArg::Info { ptr: a.data as *mut u8, dim: a.dim as usize, ty, reference: a.reference }
        }
        KIND_MAT => return Ok(Decoded::Mat { ty, acc }),
        k => return Err(bad(&format!("kind {k}"))),
    }))
}

/// An `op_arg` decoded by `decode`: every kind but matrices is complete; a matrix argument's
/// type and access are checked, its handles and rules are `api::mat`'s to check.
pub(crate) enum Decoded {
    Arg(RawArg),
    Mat { ty: ElemType, acc: Access },
}
