//! Sparse matrices: `op_decl_sparsity`, `op_decl_mat`, `op_arg_mat` and the matrix operations.
//! Matrices are op2's own CSR (no PETSc needed to assemble or multiply); `op_solve` runs the
//! native CG/GMRES or, in builds with PETSc, any KSP/PC of PETSc's.

use super::arg::{op_access, op_arg};
use super::handle::{decode, encode, op_dat, op_map, Kind};
use super::{boundary, c_str, ApiState};
use crate::arg::{Access, RawArg};
use crate::context::Context;
use crate::core::MatId;
use crate::core::{ElemType, MapId};
use crate::error::Result;
use crate::mat::SparsityId;
use crate::op2_bail;
use std::ffi::{c_char, c_double, c_int, c_longlong, c_void};
use std::fmt::Display;
use std::ptr::null_mut;

/// Opaque type behind `op_sparsity`.
#[allow(non_camel_case_types)]
pub struct op_sparsity_core {
    _private: [u8; 0],
}
/// Opaque type behind `op_mat`.
#[allow(non_camel_case_types)]
pub struct op_mat_core {
    _private: [u8; 0],
}

/// A sparsity pattern: the union of the (row map x column map) patterns of map pairs.
#[allow(non_camel_case_types)]
pub type op_sparsity = *mut op_sparsity_core;
/// A sparse matrix on a sparsity, in op2's own CSR storage.
#[allow(non_camel_case_types)]
pub type op_mat = *mut op_mat_core;

/// The most entries a loop's dense local block may have (it lives on the stack of generated code).
pub const LOCAL_BLOCK_MAX: usize = 1 << 16;

impl ApiState {
    pub(crate) fn sparsity(&mut self, p: op_sparsity, call: &dyn Display, what: &dyn Display) -> Result<SparsityId> {
        let n = self.ctx_named(call)?.mats.sparsities.len();
        decode(self, p, Kind::Sparsity, n, call, what).map(SparsityId)
    }

    pub(crate) fn mat(&mut self, p: op_mat, call: &dyn Display, what: &dyn Display) -> Result<MatId> {
        let n = self.ctx_named(call)?.mats.mats.len();
        decode(self, p, Kind::Mat, n, call, what).map(MatId)
    }
}

/// `ready`: the call's own checks so far (name, counts); under MPI the call is entered with
/// them and the maps' (collective).
fn decl_sparsity(st: &mut ApiState, call: &str, ready: Result<(&[op_map], &[op_map], &str)>) -> Result<op_sparsity> {
    let ready = ready.and_then(|(rows, cols, name)| {
        let label = format!("{call} '{name}'");
        let mut pairs = Vec::with_capacity(rows.len());
        for (i, (&r, &c)) in rows.iter().zip(cols).enumerate() {
            let r = st.map(r, &label, &format!("row map {i}"))?;
            let c = st.map(c, &label, &format!("column map {i}"))?;
            pairs.push((r, c));
        }
        Ok((pairs, name))
    });
    let ctx = st.ctx_lazy(call)?;
    let (pairs, name) = ctx.comm.enter(call, ready)?;
    let id = ctx.decl_sparsity(&pairs, name, call)?;
    Ok(encode(Kind::Sparsity, st.serial, id.0))
}

/// Declares the sparsity pattern of matrices whose entry (r, c) is non-zero when some element
/// `e` of the maps' common source set has `r` among `rowmap[e][..]` and `c` among
/// `colmap[e][..]`; when both maps reach the same set the diagonal is always included. Built in
/// parallel, in memory proportional to the number of entries. Returns NULL on error with
/// `OP_ERRORS_RETURN`. Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_ARG_SET
/// (the two maps start from different sets), OP2_ERR_BAD_SIZE (more entries than an int counts).
#[no_mangle]
pub extern "C" fn op_decl_sparsity(rowmap: op_map, colmap: op_map, name: *const c_char) -> op_sparsity {
    const CALL: &str = "op_decl_sparsity";
    boundary(CALL, null_mut(), |st| {
        st.ctx_lazy(CALL)?;
        let (rows, cols) = ([rowmap], [colmap]);
        let ready = c_str(name, CALL, "name").map(|name| (&rows[..], &cols[..], name));
        decl_sparsity(st, CALL, ready)
    })
}

/// As `op_decl_sparsity`, for the union of `npairs` map pairs `(rowmaps[i], colmaps[i])` (e.g.
/// cell and boundary-facet maps): every row map must reach one set and every column map one
/// set; each pair's two maps start from the same set. Errors: as `op_decl_sparsity`, and
/// OP2_ERR_BAD_SIZE (npairs < 1), OP2_ERR_ARG_SET (row maps or column maps reach different sets).
#[no_mangle]
pub extern "C" fn op_decl_sparsity_pairs(
    npairs: c_int,
    rowmaps: *const op_map,
    colmaps: *const op_map,
    name: *const c_char,
) -> op_sparsity {
    const CALL: &str = "op_decl_sparsity_pairs";
    boundary(CALL, null_mut(), |st| {
        st.ctx_lazy(CALL)?;
        let ready = (|| {
            let name = c_str(name, CALL, "name")?;
            if npairs < 1 {
                op2_bail!(BadSize, "{CALL} '{name}': npairs {npairs} is less than 1");
            }
            if rowmaps.is_null() || colmaps.is_null() {
                op2_bail!(NullArgument, "{CALL} '{name}': rowmaps or colmaps is NULL");
            }
            // SAFETY: the caller passes npairs maps in each array (the function's contract).
            let (r, c) = unsafe {
                (
                    std::slice::from_raw_parts(rowmaps, npairs as usize),
                    std::slice::from_raw_parts(colmaps, npairs as usize),
                )
            };
            Ok((r, c, name))
        })();
        decl_sparsity(st, CALL, ready)
    })
}

/// Declares a zero matrix on `sparsity` with `rdim` x `cdim` blocks per entry of the pattern
/// (1 x 1 for scalar fields), of `type` "double" or "float". Rows are numbered
/// `element * rdim + component` (columns likewise), as PETSc's AIJ stores a block pattern.
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_BAD_SIZE (rdim or cdim < 1,
/// or more entries than an int counts), OP2_ERR_BAD_TYPE (not double or float),
/// OP2_ERR_OUT_OF_MEMORY.
#[no_mangle]
pub extern "C" fn op_decl_mat(
    sparsity: op_sparsity,
    rdim: c_int,
    cdim: c_int,
    r#type: *const c_char,
    name: *const c_char,
) -> op_mat {
    const CALL: &str = "op_decl_mat";
    boundary(CALL, null_mut(), |st| {
        st.ctx_lazy(CALL)?;
        let ready = (|| {
            let name = c_str(name, CALL, "name")?;
            let label = format!("{CALL} '{name}'");
            let sp = st.sparsity(sparsity, &label, &"sparsity")?;
            let ty = ElemType::parse(c_str(r#type, CALL, "type")?, CALL, &format!(" '{name}'"))?;
            Ok((name, sp, ty))
        })();
        let ctx = st.ctx_lazy(CALL)?;
        let (name, sp, ty) = ctx.comm.enter(CALL, ready)?;
        let id = ctx.decl_mat(sp, rdim, cdim, ty, name)?;
        Ok(encode(Kind::Mat, st.serial, id.0))
    })
}

/// The rules of a matrix argument, shared by `op_arg_mat` and `op_par_loop`'s re-check.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_mat_arg(
    ctx: &Context,
    call: &dyn Display,
    m: MatId,
    ridx: c_int,
    rowmap: MapId,
    cidx: c_int,
    colmap: MapId,
    ty: ElemType,
    acc: Access,
) -> Result<()> {
    let mat = ctx.mats.mat(m);
    let name = &mat.name;
    if !matches!(acc, Access::Inc | Access::Write) {
        op2_bail!(
            ArgAccess,
            "{call} '{name}': access {} is not allowed on a matrix (use OP_INC to add the local block, OP_WRITE to store it)",
            acc.c_name()
        );
    }
    if ty != mat.ty {
        op2_bail!(
            ArgMismatch,
            "{call} '{name}': type '{}' disagrees with the matrix's type '{}'",
            ty.api_name(),
            mat.ty.api_name()
        );
    }
    let sp = ctx.mats.sparsity(mat.sparsity);
    let (rm, cm) = (&ctx.maps[rowmap.0 as usize], &ctx.maps[colmap.0 as usize]);
    if !sp.pairs.contains(&(rowmap, colmap)) {
        let known: Vec<String> = sp
            .pairs
            .iter()
            .map(|(r, c)| format!("({}, {})", ctx.maps[r.0 as usize].name, ctx.maps[c.0 as usize].name))
            .collect();
        op2_bail!(
            ArgMismatch,
            "{call} '{name}': maps ({}, {}) are not a pair of the matrix's sparsity '{}' (its pairs: {})",
            rm.name,
            cm.name,
            sp.name,
            known.join(", ")
        );
    }
    let base = ctx.index_base as i64;
    for (idx, mp, what) in [(ridx, rm, "ridx"), (cidx, cm, "cidx")] {
        let d = mp.dim as i64;
        let i = idx as i64;
        if !(0..d).contains(&i) && i != -d {
            op2_bail!(
                ArgIdx,
                "{call} '{name}': {what} {} is out of range for map '{}' of dim {d} (use {base}..{}, or -{d} for all)",
                crate::arg::rules::shown_idx(base, idx),
                mp.name,
                d - 1 + base
            );
        }
    }
    let nr = if ridx < 0 { rm.dim } else { 1 } * mat.rdim;
    let nc = if cidx < 0 { cm.dim } else { 1 } * mat.cdim;
    if nr.saturating_mul(nc) > LOCAL_BLOCK_MAX {
        op2_bail!(
            BadSize,
            "{call} '{name}': the local block would have {nr} x {nc} entries, more than op2's limit of {LOCAL_BLOCK_MAX}"
        );
    }
    Ok(())
}

/// A matrix argument of a loop. With `ridx = -N` and `cidx = -M` (N, M the maps' dims) the
/// kernel gets `T*` to a zeroed, dense, row-major local block of `(N*rdim) x (M*cdim)` values
/// (row `i*rdim + a` is component `a` of `rowmap[e][i]`, columns likewise), which op2 adds
/// (`OP_INC`) or stores (`OP_WRITE`) into the matrix after the kernel returns; with
/// `ridx, cidx >= 0`, one `rdim x cdim` block for `rowmap[e][ridx]`, `colmap[e][cidx]`.
/// Additions to one row never race: `threads` colours the loop on the row map; `opencl` too
/// (`OP2_INC=colour`, the default) or adds atomically (`OP2_INC=atomics`), with the matrix kept in
/// host memory and copied to the device and back around each such loop; `cuda` refuses such
/// loops for now (OP2_ERR_BACKEND_UNAVAILABLE). `type` must be the matrix's. The loop's set
/// must be the maps' source set.
/// Errors (the returned op_arg is then refused by op_par_loop): OP2_ERR_ARG_ACCESS
/// (OP_READ, OP_RW, OP_MIN, OP_MAX), OP2_ERR_ARG_MISMATCH (maps that are not a pair of the
/// matrix's sparsity, or another type), OP2_ERR_ARG_IDX, OP2_ERR_BAD_SIZE (a local block of more
/// than 65536 entries), OP2_ERR_BAD_TYPE, OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_arg_mat(
    mat: op_mat,
    ridx: c_int,
    rowmap: op_map,
    cidx: c_int,
    colmap: op_map,
    r#type: *const c_char,
    acc: op_access,
) -> op_arg {
    const CALL: &str = "op_arg_mat";
    super::arg::arg_boundary(CALL, |st| {
        let m = st.mat(mat, &CALL, &"mat")?;
        let r = st.map(rowmap, &CALL, &"rowmap")?;
        let c = st.map(colmap, &CALL, &"colmap")?;
        let ctx = st.ctx_lazy(CALL)?;
        let name = ctx.mats.mat(m).name.clone();
        let ty = ElemType::parse(c_str(r#type, CALL, "type")?, CALL, &format!(" '{name}'"))?;
        let a = super::arg::access(acc, CALL, &format!(" '{name}'"))?;
        check_mat_arg(ctx, &CALL, m, ridx, r, cidx, c, ty, a)?;
        Ok(super::arg::mat_arg(mat as *mut c_void, rowmap, colmap as *mut c_void, ridx, cidx, ty, a))
    })
}

/// `op_par_loop`'s decoding of a matrix `op_arg` (every field checked again).
pub(crate) fn decode_arg(
    st: &mut ApiState,
    a: &op_arg,
    loop_name: &str,
    i: usize,
    ty: ElemType,
    acc: Access,
) -> Result<RawArg> {
    let call = super::LoopName(loop_name);
    let what = super::ArgHandle(i);
    let m = st.mat(a.dat as op_mat, &call, &what)?;
    let rowmap = st.map(a.map, &call, &what)?;
    let colmap = st.map(a.data as op_map, &call, &what)?;
    let label = format!("op_par_loop '{loop_name}', arg {i} (op_arg_mat)");
    check_mat_arg(st.ctx_lazy("op_par_loop")?, &label, m, a.idx, rowmap, a.reference, colmap, ty, acc)?;
    Ok(RawArg::Mat { mat: m, rowmap, ridx: a.idx, colmap, cidx: a.reference, acc })
}

/// Sets every value of the matrix to zero (the pattern stays). Errors: OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_mat_zero(mat: op_mat) {
    const CALL: &str = "op_mat_zero";
    boundary(CALL, (), |st| {
        let m = st.mat(mat, &CALL, &"mat")?;
        st.ctx(CALL)?.mats.mat_mut(m).zero();
        Ok(())
    })
}

/// Dirichlet rows: sets every value of the `n` scalar rows `rows[0..n]` (0-based, `element *
/// rdim + component`, in the declared numbering) to zero and their diagonal entry to `diag`
/// (the pattern stays). Under MPI: collective; `rows` are global (original numbering), and the
/// rows any process gives are zeroed (each by the process that owns it; every process must give
/// the same `diag`). Errors: OP2_ERR_BAD_RANGE (a row outside the matrix), OP2_ERR_BAD_SIZE
/// (n < 0), OP2_ERR_NULL_ARGUMENT (rows NULL with n > 0), OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_mat_zero_rows(mat: op_mat, n: c_int, rows: *const c_int, diag: c_double) {
    const CALL: &str = "op_mat_zero_rows";
    boundary(CALL, (), |st| {
        let m = st.mat(mat, &CALL, &"mat")?;
        let ctx = st.ctx(CALL)?;
        let name = &ctx.mats.mat(m).name;
        if n < 0 {
            op2_bail!(BadSize, "{CALL} on mat '{name}': n {n} is negative");
        }
        let rows: &[i32] = if n == 0 {
            &[]
        } else if rows.is_null() {
            op2_bail!(NullArgument, "{CALL} on mat '{name}': rows is NULL but n is {n}");
        } else {
            // SAFETY: the caller passes n row indices (the function's contract).
            unsafe { std::slice::from_raw_parts(rows, n as usize) }
        };
        ctx.mat_zero_rows(m, rows, diag)
    })
}

/// Finishes assembly. op2's matrices are complete when each `op_par_loop` returns, so this only
/// checks the handle; it is kept for OP2 and PETSc programs, which call it. Errors:
/// OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_mat_assemble(mat: op_mat) {
    const CALL: &str = "op_mat_assemble";
    boundary(CALL, (), |st| st.mat(mat, &CALL, &"mat").map(|_| ()))
}

/// `y = A x`: `x` a dat on the matrix's column set (dim `cdim`), `y` on its row set (dim `rdim`),
/// both of the matrix's type. Each row is summed in column order by one thread, so the result
/// is the same on every backend and thread count. Under MPI: collective; each process computes
/// its owned rows of `y`, after refreshing the halo of `x`. On `opencl` it runs on the host: `x` is
/// downloaded if needed and `y` is uploaded before the next loop that uses it. Errors:
/// OP2_ERR_ARG_SET (a dat on another set), OP2_ERR_ARG_MISMATCH (dim or type, or x and y the
/// same dat), OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_DEVICE.
#[no_mangle]
pub extern "C" fn op_mat_mult(mat: op_mat, x: op_dat, y: op_dat) {
    const CALL: &str = "op_mat_mult";
    boundary(CALL, (), |st| {
        let m = st.mat(mat, &CALL, &"mat")?;
        let x = st.dat(x, &CALL, &"x")?;
        let y = st.dat(y, &CALL, &"y")?;
        st.ctx(CALL)?.mat_mult(m, x, y)
    })
}

/// The number of stored (scalar) entries of the matrix: the sparsity's entries times
/// `rdim * cdim`; -1 on error. Under MPI: collective, the entries of the whole matrix (the
/// same number as on one process; `op_fetch_mat_csr` with only `rowptr` gives this process's
/// share). Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_mat_nnz(mat: op_mat) -> c_longlong {
    const CALL: &str = "op_mat_nnz";
    boundary(CALL, -1, |st| {
        let m = st.mat(mat, &CALL, &"mat")?;
        Ok(st.ctx(CALL)?.mat_nnz(m)? as c_longlong)
    })
}

/// Copies the matrix out as scalar CSR in the declared numbering: `rowptr` (rows + 1 ints,
/// rows = row set size x rdim), `colidx` (`op_mat_nnz` ints, sorted within each row) and
/// `values` (`op_mat_nnz` values of the matrix's type). Any of the three may be NULL to skip it.
/// Under MPI: collective; the rows of this process's declared block of the row set (as
/// `op_fetch_data` gives its rows: rows = declared size x rdim), columns in the original global
/// numbering, and `rowptr[rows]` entries (call with only `rowptr` first to size the others).
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_fetch_mat_csr(mat: op_mat, rowptr: *mut c_int, colidx: *mut c_int, values: *mut c_void) {
    const CALL: &str = "op_fetch_mat_csr";
    boundary(CALL, (), |st| {
        let m = st.mat(mat, &CALL, &"mat")?;
        let ctx = st.ctx(CALL)?;
        if ctx.comm.distributed() {
            let (rp, ci, vv) = ctx.fetch_mat_csr_dist(m)?;
            // SAFETY (all three): the caller provides rows + 1, rowptr[rows] and rowptr[rows]
            // entries of this process's declared block (the contract under MPI).
            unsafe {
                if !rowptr.is_null() {
                    std::ptr::copy_nonoverlapping(rp.as_ptr(), rowptr, rp.len());
                }
                if !colidx.is_null() {
                    std::ptr::copy_nonoverlapping(ci.as_ptr(), colidx, ci.len());
                }
                if !values.is_null() {
                    std::ptr::copy_nonoverlapping(vv.as_ptr(), values as *mut u8, vv.len());
                }
            }
            return Ok(());
        }
        let mv = ctx.mats.mat(m);
        let (nrows, nnz, es) = (mv.pattern.nrows, mv.pattern.nnz(), mv.ty.size());
        // SAFETY (all three): the caller provides rows + 1, nnz and nnz entries (the contract).
        let rp = (!rowptr.is_null()).then(|| unsafe { std::slice::from_raw_parts_mut(rowptr, nrows + 1) });
        let ci = (!colidx.is_null() && nnz > 0).then(|| unsafe { std::slice::from_raw_parts_mut(colidx, nnz) });
        let vv = (!values.is_null() && nnz > 0)
            .then(|| unsafe { std::slice::from_raw_parts_mut(values as *mut u8, nnz * es) });
        ctx.fetch_mat_csr(m, rp, ci, vv)
    })
}

/// Solves `A x = b` (A square: same row and column set and block size; `b` on the rows, `x` on
/// the columns, both of the matrix's type) and returns the number of iterations (-1 on error).
/// `options` are PETSc's (`"-ksp_type cg -pc_type jacobi -ksp_rtol 1e-10 -ksp_max_it 500"`);
/// NULL means CG with Jacobi. As in PETSc, the initial guess is zero unless
/// `-ksp_initial_guess_nonzero` is given, and the defaults are rtol 1e-5, atol 1e-50, max_it
/// 10000. `-ksp_type cg|gmres` with `-pc_type jacobi|none` (and `-ksp_rtol`, `-ksp_atol`,
/// `-ksp_max_it`, `-ksp_gmres_restart`) run op2's native solver; anything else (another KSP or
/// PC, any other option, or `-op2_petsc`) goes to PETSc's KSP with the whole string, in builds
/// with PETSc (cargo feature `petsc`), and is OP2_ERR_BACKEND_UNAVAILABLE without. Under MPI:
/// collective; the native solvers run on the distributed matrix (dot products summed over the
/// processes), PETSc on an MPIAIJ matrix on op2's communicator (a PETSc that op2 initialises
/// runs on it, and op_exit finalises it before MPI); the result equals one process's within the
/// tolerance. Success only when the true residual passes: `|b - Ax| <= max(rtol |b - A x0|,
/// atol)` (x0 the initial guess; with the default zero guess `|b - Ax|/|b| <= rtol`; b = 0
/// gives x = 0 after 0 iterations); when a solver's own (preconditioned or estimated) test
/// passes and the true residual does not, the solve continues from its iterate (at most 3 more
/// rounds within -ksp_max_it, each halving the true residual). `-ksp_gmres_restart` is bounded
/// by the system size. Errors:
/// OP2_ERR_SOLVE (did not converge, or converged by the solver's test but not by the true
/// residual: names the solver, iterations and true residual |b - Ax|/|b|; `x` holds the last
/// iterate), OP2_ERR_BAD_SIZE / OP2_ERR_OUT_OF_MEMORY (the native GMRES's basis), OP2_ERR_PETSC (PETSc's code and message), OP2_ERR_BAD_CONFIG (a malformed
/// option), OP2_ERR_ARG_SET / OP2_ERR_ARG_MISMATCH (dats that do not fit, a non-square matrix),
/// OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn op_solve(mat: op_mat, b: op_dat, x: op_dat, options: *const c_char) -> c_int {
    const CALL: &str = "op_solve";
    boundary(CALL, -1, |st| {
        let m = st.mat(mat, &CALL, &"A")?;
        let b = st.dat(b, &CALL, &"b")?;
        let x = st.dat(x, &CALL, &"x")?;
        let options = if options.is_null() { None } else { Some(c_str(options, CALL, "options")?) };
        let n = st.ctx(CALL)?.mat_solve(m, b, x, options)?;
        Ok(n.min(c_int::MAX as usize) as c_int)
    })
}
