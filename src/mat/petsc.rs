//! `op_solve` through PETSc (cargo feature `petsc`): the C shim `petsc_shim.c` (compiled by
//! build.rs against `pkg-config PETSc`) hands op2's CSR to `MatCreateSeqAIJWithArrays` (no
//! copy) and runs a KSP with the caller's options. Each solve inserts the options under a prefix
//! of its own (`-op2_N_ksp_type ...`, KSP prefix `op2_N_`, as PyOP2's `pyop2_ksp_N`), so they
//! never mix with the program's own PETSc options or another solve's, and removes them after.

use super::solve::Options;
use super::sparsity::Pattern;
use crate::error::Result;
use crate::op2_bail;
use std::ffi::{c_char, c_double, c_int, CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};

extern "C" {
    fn op2_petsc_solve(
        fcomm: c_int,
        set_world: c_int,
        nglobal: c_int,
        n: c_int,
        rowptr: *const c_int,
        colidx: *const c_int,
        vals: *const c_double,
        b: *const c_double,
        x: *mut c_double,
        options: *const c_char,
        prefix: *const c_char,
        its: *mut c_int,
        rnorm: *mut c_double,
        reason: *mut c_int,
        reason_text: *mut c_char,
        ksp_type: *mut c_char,
        pc_type: *mut c_char,
        msg: *mut c_char,
        msglen: c_int,
    ) -> c_int;
    fn op2_petsc_clear_option(name: *const c_char);
    fn op2_petsc_finalize_ours();
}

/// Finalises PETSc if op2 initialised it (op_exit, before op2's communicator is freed).
pub fn finalize() {
    // SAFETY: the shim's function checks PETSc's and MPI's state itself.
    unsafe { op2_petsc_finalize_ours() }
}

static SOLVES: AtomicU64 = AtomicU64::new(0);

/// The option string with every option name under `prefix` (`-ksp_type` -> `-op2_3_ksp_type`),
/// without op2's own `-op2_petsc`; and the prefixed names (to clear them afterwards).
pub fn prefixed(text: &str, prefix: &str) -> (String, Vec<String>) {
    let mut out = Vec::new();
    let mut names = Vec::new();
    for t in text.split_whitespace() {
        if t == "-op2_petsc" {
            continue;
        }
        if let Some(rest) = t.strip_prefix('-').filter(|_| t.parse::<f64>().is_err()) {
            let name = format!("-{prefix}{rest}");
            names.push(name.clone());
            out.push(name);
        } else {
            out.push(t.to_string());
        }
    }
    (out.join(" "), names)
}

fn text(buf: &[c_char]) -> String {
    // SAFETY: the shim NUL-terminates every buffer it fills (snprintf); zeroed otherwise.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

/// Solves with PETSc; `x` holds the initial guess and receives the solution (or last iterate).
/// `fcomm`: op2's communicator (Fortran handle, -1 without MPI); `set_world`: a PETSc op2
/// starts runs on it (when op2 initialised MPI). `nglobal` None: `p` is the whole matrix (SeqAIJ). Some(N): `p` holds this process's rows
/// of an N x N matrix with global, sorted columns (MPIAIJ on `fcomm`; collective).
#[allow(clippy::too_many_arguments)]
pub fn solve(
    name: &str,
    fcomm: i32,
    set_world: bool,
    nglobal: Option<usize>,
    p: &Pattern,
    vals: &[f64],
    b: &[f64],
    x: &mut [f64],
    o: &Options,
) -> Result<usize> {
    let n = p.nrows;
    let rowptr: Vec<c_int> = p.rowptr.iter().map(|&v| v as c_int).collect();
    let prefix = format!("op2_{}_", SOLVES.fetch_add(1, Ordering::Relaxed));
    let (opts, names) = prefixed(&o.text, &prefix);
    let (Ok(copts), Ok(cprefix)) = (CString::new(opts), CString::new(prefix)) else {
        op2_bail!(BadConfig, "op_solve on mat '{name}': the options contain a NUL byte");
    };
    let (mut its, mut rnorm, mut reason) = (0 as c_int, 0.0f64, 0 as c_int);
    let mut reason_text = [0 as c_char; 64];
    let mut ksp = [0 as c_char; 64];
    let mut pc = [0 as c_char; 64];
    let mut msg = [0 as c_char; 1200];
    // SAFETY: the arrays have the sizes the shim's contract states (n rows, nnz entries, n
    // values per vector, 64-byte names, msg of msglen bytes) and outlive the call.
    let code = unsafe {
        op2_petsc_solve(
            fcomm,
            set_world as c_int,
            nglobal.map_or(-1, |g| g as c_int),
            n as c_int,
            rowptr.as_ptr(),
            p.colidx.as_ptr(),
            vals.as_ptr(),
            b.as_ptr(),
            x.as_mut_ptr(),
            copts.as_ptr(),
            cprefix.as_ptr(),
            &mut its,
            &mut rnorm,
            &mut reason,
            reason_text.as_mut_ptr(),
            ksp.as_mut_ptr(),
            pc.as_mut_ptr(),
            msg.as_mut_ptr(),
            msg.len() as c_int,
        )
    };
    for nm in names {
        if let Ok(c) = CString::new(nm) {
            // SAFETY: a NUL-terminated option name.
            unsafe { op2_petsc_clear_option(c.as_ptr()) };
        }
    }
    if code != 0 {
        op2_bail!(Petsc, "op_solve on mat '{name}': PETSc error {code}: {}", text(&msg));
    }
    // KSP's converged reasons: > 0 converged (by its own test; op_solve then checks the true
    // residual), < 0 diverged, 0 still iterating (never a success).
    if reason <= 0 {
        op2_bail!(
            Solve,
            "op_solve on mat '{name}': PETSc {} with {} did not converge in {its} iterations ({}; residual norm {rnorm:e})",
            text(&ksp),
            text(&pc),
            text(&reason_text)
        );
    }
    Ok(its.max(0) as usize)
}

#[cfg(test)]
mod tests {
    #[test]
    fn options_get_the_solve_prefix() {
        let (s, names) = super::prefixed("-ksp_type cg -op2_petsc -pc_type gamg -ksp_rtol 1e-10 -x -1", "op2_4_");
        assert_eq!(s, "-op2_4_ksp_type cg -op2_4_pc_type gamg -op2_4_ksp_rtol 1e-10 -op2_4_x -1");
        assert_eq!(names.len(), 4);
    }
}
