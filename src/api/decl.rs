//! Declarations: sets, maps, dats, constants and kernels. Every declaration copies the
//! caller's arrays; the caller may free them afterwards.

use super::handle::{encode, op_dat, op_kernel, op_map, op_set, Kind};
use super::{boundary, c_str};
use crate::core::ElemType;
use crate::op2_bail;
use std::ffi::{c_char, c_int, c_longlong, c_void};
use std::ptr::null_mut;

/// Declares a set of `size` elements called `name`. Returns its handle (NULL on error with
/// `OP_ERRORS_RETURN`). Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_NULL_ARGUMENT (name),
/// OP2_ERR_BAD_SIZE (negative size). Collective under MPI.
#[no_mangle]
pub extern "C" fn op_decl_set(size: c_int, name: *const c_char) -> op_set {
    boundary("op_decl_set", null_mut(), |st| {
        let ctx = st.ctx_lazy("op_decl_set")?;
        let name = ctx.comm.enter("op_decl_set", c_str(name, "op_decl_set", "name"))?;
        let id = ctx.decl_set(size, name)?;
        Ok(st.publish(Kind::Set, id.0))
    })
}

/// Declares a map from each element of `from` to `dim` elements of `to`. `imap` holds
/// `from.size * dim` 0-based indices, row-major; op2 copies it. Every entry must lie in
/// `[0, to.size)`. Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_BAD_SIZE
/// (dim < 1), OP2_ERR_MAP_OUT_OF_RANGE (names the map, the position and the value),
/// OP2_ERR_OUT_OF_MEMORY (the copy cannot be allocated).
#[no_mangle]
pub extern "C" fn op_decl_map(from: op_set, to: op_set, dim: c_int, imap: *const c_int, name: *const c_char) -> op_map {
    const CALL: &str = "op_decl_map";
    boundary(CALL, null_mut(), |st| {
        st.ctx_lazy(CALL)?;
        let ready = (|| {
            let name = c_str(name, CALL, "name")?;
            let label = format!("{CALL} '{name}'");
            let from = st.set(from, &label, &"from set")?;
            let to = st.set(to, &label, &"to set")?;
            let ctx = st.ctx_lazy(CALL)?;
            if dim < 1 {
                op2_bail!(BadSize, "{CALL} '{name}': dim {dim} is less than 1");
            }
            let n = ctx.sets[from.0 as usize].size * dim as usize;
            let values: &[i32] = if n == 0 {
                &[]
            } else if imap.is_null() {
                op2_bail!(NullArgument, "{CALL} '{name}': imap is NULL");
            } else {
                // SAFETY: the caller provides from.size * dim indices (op_decl_map's contract).
                unsafe { std::slice::from_raw_parts(imap, n) }
            };
            Ok((name, from, to, values))
        })();
        let ctx = st.ctx_lazy(CALL)?;
        let (name, from, to, values) = ctx.comm.enter(CALL, ready)?;
        let id = ctx.decl_map(from, to, dim, values, name)?;
        Ok(st.publish(Kind::Map, id.0))
    })
}

/// OP2's `op_decl_map_long`: `op_decl_map` with 64-bit entries (OP2's `idx_g_t`, `long
/// long`). `imap` holds `from.size * dim` 0-based indices, row-major; op2 copies them into its
/// own 32-bit map (a set has at most `INT_MAX` elements, so every entry in range fits). Under
/// MPI (collective) the rows are this process's declared block of `from` and the entries global
/// indices of `to`, as for `op_decl_map`. Errors: as op_decl_map: OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_INVALID_HANDLE, OP2_ERR_BAD_SIZE (dim < 1), OP2_ERR_MAP_OUT_OF_RANGE (an entry
/// negative or not below `to`'s size, however large: names the map, the entry, its element
/// and position and the value), OP2_ERR_OUT_OF_MEMORY.
#[no_mangle]
pub extern "C" fn op_decl_map_long(
    from: op_set,
    to: op_set,
    dim: c_int,
    imap: *const c_longlong,
    name: *const c_char,
) -> op_map {
    const CALL: &str = "op_decl_map_long";
    boundary(CALL, null_mut(), |st| {
        st.ctx_lazy(CALL)?;
        let ready = (|| {
            let name = c_str(name, CALL, "name")?;
            let label = format!("{CALL} '{name}'");
            let from = st.set(from, &label, &"from set")?;
            let to = st.set(to, &label, &"to set")?;
            let ctx = st.ctx_lazy(CALL)?;
            if dim < 1 {
                op2_bail!(BadSize, "{CALL} '{name}': dim {dim} is less than 1");
            }
            let n = ctx.sets[from.0 as usize].size * dim as usize;
            let values: &[i64] = if n == 0 {
                &[]
            } else if imap.is_null() {
                op2_bail!(NullArgument, "{CALL} '{name}': imap is NULL");
            } else {
                // SAFETY: the caller provides from.size * dim indices (op_decl_map_long's contract).
                unsafe { std::slice::from_raw_parts(imap, n) }
            };
            Ok((name, from, to, values))
        })();
        let ctx = st.ctx_lazy(CALL)?;
        let (name, from, to, values) = ctx.comm.enter(CALL, ready)?;
        let id = ctx.decl_map_long(from, to, dim, values, name, CALL)?;
        Ok(st.publish(Kind::Map, id.0))
    })
}

/// The `_char` forms give the element size in bytes: it must agree with the type.
fn check_elem_size(call: &str, name: &str, ty: ElemType, size: Option<c_int>) -> crate::error::Result<()> {
    match size {
        Some(size) if size as i64 != ty.size() as i64 => op2_bail!(
            BadSize,
            "{call} '{name}': element size {size} disagrees with type '{}' ({} bytes)",
            ty.api_name(),
            ty.size()
        ),
        _ => Ok(()),
    }
}

fn decl_dat(
    call: &str,
    set: op_set,
    dim: c_int,
    r#type: *const c_char,
    size: Option<c_int>,
    data: *const c_void,
    name: *const c_char,
) -> op_dat {
    boundary(call, null_mut(), |st| {
        st.ctx_lazy(call)?;
        let ready = (|| {
            let name = c_str(name, call, "name")?;
            let set = st.set(set, &format!("{call} '{name}'"), &"set")?;
            let ty = ElemType::parse(c_str(r#type, call, "type")?, call, &format!(" '{name}'"))?;
            check_elem_size(call, name, ty, size)?;
            Ok((name, set, ty))
        })();
        let ctx = st.ctx_lazy(call)?;
        let (name, set, ty) = ctx.comm.enter(call, ready)?;
        // Under MPI the caller's rows are its declared block (also after op_partition).
        let rows = crate::mpi::dist::declared_size(ctx, set);
        let bytes = rows.saturating_mul(dim.max(0) as usize).saturating_mul(ty.size());
        let slice = if data.is_null() || bytes == 0 || bytes == usize::MAX {
            None
        } else {
            // SAFETY: the caller provides set.size * dim values of `type` (op_decl_dat's contract).
            Some(unsafe { std::slice::from_raw_parts(data as *const u8, bytes) })
        };
        let id = ctx.decl_dat(set, dim, ty, slice, name, call)?;
        Ok(st.publish(Kind::Dat, id.0))
    })
}

/// Declares data on `set`: `dim` values of `type` (`"double"`, `"float"`, `"int"`, `"uint"`,
/// `"ll"`, `"ull"`, `"bool"`) per element, copied from `data` (`set.size * dim` values), or
/// zeros when `data` is NULL. Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE,
/// OP2_ERR_BAD_SIZE (dim < 1, or a size in bytes beyond the address range), OP2_ERR_BAD_TYPE
/// (unknown type string), OP2_ERR_OUT_OF_MEMORY (a size the allocator refuses).
#[no_mangle]
pub extern "C" fn op_decl_dat(
    set: op_set,
    dim: c_int,
    r#type: *const c_char,
    data: *const c_void,
    name: *const c_char,
) -> op_dat {
    decl_dat("op_decl_dat", set, dim, r#type, None, data, name)
}

/// As `op_decl_dat`, with the element size in bytes, which must agree with `type`
/// (OP2_ERR_BAD_SIZE otherwise).
#[no_mangle]
pub extern "C" fn op_decl_dat_char(
    set: op_set,
    dim: c_int,
    r#type: *const c_char,
    size: c_int,
    data: *const c_char,
    name: *const c_char,
) -> op_dat {
    decl_dat("op_decl_dat_char", set, dim, r#type, Some(size), data as *const c_void, name)
}

fn decl_const(
    call: &str,
    dim: c_int,
    r#type: *const c_char,
    size: Option<c_int>,
    data: *const c_void,
    name: *const c_char,
) {
    boundary(call, (), |st| {
        let name = c_str(name, call, "name");
        decl_const_in(st, call, dim, r#type, size, data, name)
    })
}

/// `op_decl_const` inside a call's boundary, with the name read (or the error reading it).
pub(super) fn decl_const_in(
    st: &mut super::ApiState,
    call: &str,
    dim: c_int,
    r#type: *const c_char,
    size: Option<c_int>,
    data: *const c_void,
    name: crate::error::Result<&str>,
) -> crate::error::Result<()> {
    let ctx = st.ctx_lazy(call)?;
    let ready = (|| {
        let name = name?;
        let ty = ElemType::parse(c_str(r#type, call, "type")?, call, &format!(" '{name}'"))?;
        check_elem_size(call, name, ty, size)?;
        if dim < 1 {
            op2_bail!(BadSize, "{call} '{name}': dim {dim} is less than 1");
        }
        if data.is_null() {
            op2_bail!(NullArgument, "{call} '{name}': data is NULL");
        }
        // SAFETY: the caller provides dim values of `type`.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, dim as usize * ty.size()) };
        Ok((name, ty, bytes))
    })();
    let (name, ty, bytes) = ctx.comm.enter(call, ready)?;
    // Queued loops run with the value they were called with: a new value runs them first.
    if ctx.consts.get(name).is_some_and(|c| c.data.as_slice() != bytes) {
        super::run_queue(ctx, call)?;
    }
    ctx.decl_const(dim, ty, bytes, name, call)
}

/// Declares a constant visible to every kernel as a global called `name` (an array when
/// `dim > 1`). Calling it again with the same name changes the value for every later loop
/// (without recompiling); a new type or dim recompiles the loops that use it.
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_BAD_SIZE, OP2_ERR_BAD_TYPE, OP2_ERR_BAD_NAME.
#[no_mangle]
pub extern "C" fn op_decl_const(dim: c_int, r#type: *const c_char, data: *const c_void, name: *const c_char) {
    decl_const("op_decl_const", dim, r#type, None, data, name)
}

/// As `op_decl_const`, with the element size in bytes, which must agree with `type`.
#[no_mangle]
pub extern "C" fn op_decl_const_char(
    dim: c_int,
    r#type: *const c_char,
    size: c_int,
    data: *const c_char,
    name: *const c_char,
) {
    decl_const("op_decl_const_char", dim, r#type, Some(size), data as *const c_void, name)
}

/// Declares a kernel: `source` is ISO C (C11) defining a function called `name` (it may define
/// helper functions and types too), with one pointer parameter per loop argument, in order.
/// Kernels see `<math.h>`, `<stdio.h>`, `<stdbool.h>`, `<stdint.h>`, `<string.h>`, `MIN`/`MAX`,
/// `M_PI` and every declared constant by name; identifiers starting with `op2_` are reserved.
/// The source may be in any 8-bit encoding (bytes that are not UTF-8 are kept in literals and
/// ignored in comments). op2 copies the source; declaring the same name and source again
/// returns the same kernel.
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_BAD_KERNEL (`name` is not a C identifier or is not
/// defined in `source`). Compile errors are reported by the first `op_par_loop` using it.
#[no_mangle]
pub extern "C" fn op_decl_kernel(source: *const c_char, name: *const c_char) -> op_kernel {
    const CALL: &str = "op_decl_kernel";
    boundary(CALL, null_mut(), |st| {
        let ctx = st.ctx_lazy(CALL)?;
        let ready = (|| {
            let name = c_str(name, CALL, "name")?;
            if source.is_null() {
                op2_bail!(NullArgument, "{CALL} '{name}': source is NULL");
            }
            // SAFETY: non-NULL, and the C API requires a NUL-terminated string.
            let bytes = unsafe { std::ffi::CStr::from_ptr(source) }.to_bytes();
            match crate::core::clex::source_from_bytes(bytes) {
                Ok(s) => Ok((name, s)),
                Err(e) => op2_bail!(BadKernel, "{CALL} '{name}': the source cannot be a C program: {e}"),
            }
        })();
        let (name, source) = ctx.comm.enter(CALL, ready)?;
        let id = ctx.decl_kernel(&source, name)?;
        Ok(encode(Kind::Kernel, st.serial, id.0))
    })
}
