//! The matrix operations of the C API on a `Context`: declarations, checks against dats, SpMV,
//! Dirichlet rows, CSR copy-out and solves. Dats are read and written through the residency
//! layer (`Context::host_data`), so on `opencl` these run on the host after a download.

use super::solve::{self, Options};
use super::sparsity::{PairMaps, Pattern};
use super::{Mat, MatId, Sparsity, SparsityId};
use crate::config::BackendKind;
use crate::context::Context;
use crate::core::{DatId, ElemType, MapId};
use crate::error::Result;
use crate::op2_bail;
use std::sync::Arc;

impl Context {
    /// `op_decl_sparsity_pairs`: the union of the pairs' patterns (and the diagonal when rows
    /// and columns are one set).
    pub fn decl_sparsity(&mut self, pairs: &[(MapId, MapId)], name: &str, call: &str) -> Result<SparsityId> {
        // Under MPI (collective): committed only once every process has built it.
        let s = (|| {
            if pairs.is_empty() {
                op2_bail!(BadSize, "{call} '{name}': no map pairs given (npairs must be at least 1)");
            }
            let m = |id: MapId| &self.maps[id.0 as usize];
            let set = |id: crate::core::SetId| self.sets[id.0 as usize].name.as_str();
            let (row_set, col_set) = (m(pairs[0].0).to, m(pairs[0].1).to);
            for (i, &(r, c)) in pairs.iter().enumerate() {
                let (rm, cm) = (m(r), m(c));
                if rm.from != cm.from {
                    op2_bail!(
                        ArgSet,
                        "{call} '{name}', pair {i}: row map '{}' goes from set '{}' but column map '{}' from set '{}' (both must start from the same elements)",
                        rm.name,
                        set(rm.from),
                        cm.name,
                        set(cm.from)
                    );
                }
                if rm.to != row_set {
                    op2_bail!(
                        ArgSet,
                        "{call} '{name}', pair {i}: row map '{}' reaches set '{}' but pair 0's reaches set '{}' (all row maps must reach one set)",
                        rm.name,
                        set(rm.to),
                        set(row_set)
                    );
                }
                if cm.to != col_set {
                    op2_bail!(
                        ArgSet,
                        "{call} '{name}', pair {i}: column map '{}' reaches set '{}' but pair 0's reaches set '{}' (all column maps must reach one set)",
                        cm.name,
                        set(cm.to),
                        set(col_set)
                    );
                }
            }
            // Under MPI before op_partition: an empty pattern, built when the sets are partitioned
            // (`mats_after_renumber`). After it: owned rows, from the owned and exec-halo elements
            // (every element touching an owned row is one of them), columns in local numbering.
            let pending = self.comm.distributed() && !self.comm.partitioned;
            let views: Vec<PairMaps> = pairs
                .iter()
                .map(|&(r, c)| {
                    let (rm, cm) = (m(r), m(c));
                    PairMaps {
                        rows: &rm.values,
                        row_dim: rm.dim,
                        cols: &cm.values,
                        col_dim: cm.dim,
                        n: if pending { 0 } else { self.sets[rm.from.0 as usize].exec_end },
                    }
                })
                .collect();
            let (rs, cs) = (&self.sets[row_set.0 as usize], &self.sets[col_set.0 as usize]);
            let (nr, nc) = if pending { (0, 0) } else { (rs.size, cs.total) };
            let halo_rows = if pending { 0 } else { rs.total - rs.size };
            let pattern = Pattern::build(nr, nc, &views, row_set == col_set);
            if pattern.nnz() > i32::MAX as usize {
                op2_bail!(BadSize, "{call} '{name}': {} entries, more than a C int can count", pattern.nnz());
            }
            Ok(Sparsity {
                name: name.to_string(),
                pairs: pairs.to_vec(),
                row_set,
                col_set,
                pattern: Arc::new(pattern),
                halo_rows,
            })
        })();
        let s = self.comm.agree(s)?;
        self.mats.sparsities.push(s);
        Ok(SparsityId(self.mats.sparsities.len() as u32 - 1))
    }

    /// Before `op_renumber`: matrices must still be all zero (their patterns are rebuilt in the
    /// new numbering; values put in before would land in the wrong places).
    pub(crate) fn mats_before_renumber(&self, call: &str) -> Result<()> {
        if let Some(m) = self.mats.mats.iter().find(|m| m.values.bytes().iter().any(|&b| b != 0)) {
            op2_bail!(
                BadLoop,
                "{call}: matrix '{}' already holds values ({call} must come before op_mat_zero_rows or loops on matrices)",
                m.name
            );
        }
        Ok(())
    }

    /// After `op_renumber`: every sparsity and matrix rebuilt from the renumbered maps.
    pub(crate) fn mats_after_renumber(&mut self) -> Result<()> {
        for i in 0..self.mats.sparsities.len() {
            let (pairs, name) = (self.mats.sparsities[i].pairs.clone(), self.mats.sparsities[i].name.clone());
            let id = self.decl_sparsity(&pairs, &name, "op_renumber")?;
            let new = self.mats.sparsities.pop();
            if let Some(p) = new {
                debug_assert_eq!(id.0 as usize, self.mats.sparsities.len());
                self.mats.sparsities[i].pattern = p.pattern;
                self.mats.sparsities[i].halo_rows = p.halo_rows;
            }
        }
        for i in 0..self.mats.mats.len() {
            let m = &self.mats.mats[i];
            let sp = self.mats.sparsity(m.sparsity);
            let fresh = Mat::new(&m.name, m.sparsity, sp, m.rdim, m.cdim, m.ty)?;
            self.mats.mats[i] = fresh;
        }
        Ok(())
    }

    /// `op_decl_mat`.
    pub fn decl_mat(&mut self, sp: SparsityId, rdim: i32, cdim: i32, ty: ElemType, name: &str) -> Result<MatId> {
        let s = self.mats.sparsity(sp);
        let scalar = s.pattern.nnz() as u128 * rdim.max(0) as u128 * cdim.max(0) as u128;
        let m = if rdim < 1 || cdim < 1 {
            Err(crate::op2_err!(BadSize, "op_decl_mat '{name}': block size {rdim} x {cdim}: both must be at least 1"))
        } else if scalar > i32::MAX as u128 {
            Err(crate::op2_err!(BadSize, "op_decl_mat '{name}': {scalar} entries, more than a C int can count"))
        } else {
            Mat::new(name, sp, s, rdim as usize, cdim as usize, ty)
        };
        // Under MPI (collective): committed only once every process has it.
        let m = self.comm.agree(m)?;
        self.mats.mats.push(m);
        Ok(MatId(self.mats.mats.len() as u32 - 1))
    }

    /// Checks that `d` can be the row-side (`rows`) or column-side vector of `m`.
    fn check_vector(&self, call: &str, m: MatId, d: DatId, rows: bool, what: &str) -> Result<()> {
        let mat = self.mats.mat(m);
        let sp = self.mats.sparsity(mat.sparsity);
        let dat = &self.dats[d.0 as usize];
        let (set, dim, side) = if rows { (sp.row_set, mat.rdim, "row") } else { (sp.col_set, mat.cdim, "column") };
        if dat.set != set {
            op2_bail!(
                ArgSet,
                "{call} on mat '{}': {what} dat '{}' lives on set '{}' but the matrix's {side} set is '{}'",
                mat.name,
                dat.name,
                self.sets[dat.set.0 as usize].name,
                self.sets[set.0 as usize].name
            );
        }
        if dat.dim != dim || dat.ty != mat.ty {
            op2_bail!(
                ArgMismatch,
                "{call} on mat '{}': {what} dat '{}' is {} x {} but the matrix needs {} x {dim} ({side} block size)",
                mat.name,
                dat.name,
                dat.ty.api_name(),
                dat.dim,
                mat.ty.api_name()
            );
        }
        Ok(())
    }

    fn spmv_pool(&mut self) -> bool {
        if self.backend.kind() == BackendKind::Threads {
            self.mats.ensure_pool(self.config.num_threads);
            true
        } else {
            false
        }
    }

    /// Under MPI: a collective matrix call. Checked with `OP2_MPI_CHECK`; a program that never
    /// called op_partition runs on its declared blocks (as loops do).
    pub(crate) fn mat_collective(&mut self, call: &str) -> Result<()> {
        if !self.comm.distributed() {
            return Ok(());
        }
        if self.comm.check {
            self.comm.enter(call, Ok(()))?;
        }
        if !self.comm.partitioned {
            crate::mpi::dist::partition(self, None, "BLOCK", None, None, None, None)?;
        }
        Ok(())
    }

    /// `op_mat_mult`: `y = A x`.
    pub fn mat_mult(&mut self, m: MatId, x: DatId, y: DatId) -> Result<()> {
        const CALL: &str = "op_mat_mult";
        self.mat_collective(CALL)?;
        self.check_vector(CALL, m, x, false, "x")?;
        self.check_vector(CALL, m, y, true, "y")?;
        if x == y {
            op2_bail!(
                ArgMismatch,
                "{CALL} on mat '{}': x and y are the same dat '{}' (y = A x needs two dats)",
                self.mats.mat(m).name,
                self.dats[x.0 as usize].name
            );
        }
        self.sync_to_host(x)?;
        if self.comm.partitioned && self.dats[x.0 as usize].halo_dirty {
            // Under MPI: x's halo rows (the columns of other processes' rows), by the loops'
            // dat exchange.
            self.host_data(x, true)?;
            let ex = self.comm.halo_exchange_begin(&mut self.dats, vec![x], None)?;
            for d in self.comm.halo_exchange_end(ex, None)? {
                self.dats[d.0 as usize].halo_dirty = false;
            }
        }
        self.host_data(y, true)?;
        let pool = self.spmv_pool();
        let (xi, yi) = (x.0 as usize, y.0 as usize);
        let (xd, yd) = if xi < yi {
            let (a, b) = self.dats.split_at_mut(yi);
            (&a[xi], &mut b[0])
        } else {
            let (a, b) = self.dats.split_at_mut(xi);
            (&b[0], &mut a[yi])
        };
        let pool = if pool { self.mats.pool.as_ref() } else { None };
        self.mats.mats[m.0 as usize].mult(xd.data.as_slice(), yd.data.as_mut_slice(), pool);
        yd.halo_dirty = true;
        Ok(())
    }

    /// Scalar row `r` of `m` in the declared numbering, as a storage row (the row set may have
    /// been renumbered by `op_renumber`).
    fn storage_row(&self, m: &Mat, r: usize) -> usize {
        let sp = self.mats.sparsity(m.sparsity);
        match &self.sets[sp.row_set.0 as usize].order {
            None => r,
            Some(o) => o.new_of_old[r / m.rdim] as usize * m.rdim + r % m.rdim,
        }
    }

    /// `op_mat_zero_rows`: `rows` are scalar rows in the declared numbering.
    pub fn mat_zero_rows(&mut self, m: MatId, rows: &[i32], diag: f64) -> Result<()> {
        if self.comm.distributed() {
            return self.mat_zero_rows_dist(m, rows, diag);
        }
        let mat = self.mats.mat(m);
        let n = mat.pattern.nrows;
        let base = self.index_base as i64;
        let mut storage = Vec::with_capacity(rows.len());
        for (i, &r) in rows.iter().enumerate() {
            if r < 0 || r as usize >= n {
                op2_bail!(
                    BadRange,
                    "op_mat_zero_rows on mat '{}': rows[{}] is {}, outside [{base}, {}] (rows of {} elements x {})",
                    mat.name,
                    i as i64 + base,
                    r as i64 + base,
                    n as i64 - 1 + base,
                    n / mat.rdim.max(1),
                    mat.rdim
                );
            }
            storage.push(self.storage_row(mat, r as usize));
        }
        self.mats.mat_mut(m).zero_rows(&storage, diag);
        Ok(())
    }

    /// `op_mat_zero_rows` under MPI (collective): the rows every process gives (original
    /// global numbering) are zeroed by their owners.
    fn mat_zero_rows_dist(&mut self, m: MatId, rows: &[i32], diag: f64) -> Result<()> {
        const CALL: &str = "op_mat_zero_rows";
        self.mat_collective(CALL)?;
        let mine: Vec<u8> = rows.iter().flat_map(|r| r.to_ne_bytes()).collect();
        let all = self.comm.all_gather(&mine)?;
        let mat = self.mats.mat(m);
        let row_set = self.mats.sparsity(mat.sparsity).row_set;
        let rdim = mat.rdim;
        let n = crate::mpi::dist::global_size(self, row_set) * rdim;
        let base = self.index_base as i64;
        let Some(l) = self.comm.layout(row_set) else {
            op2_bail!(Internal, "{CALL}: set '{}' has no layout after op_partition", self.sets[row_set.0 as usize].name)
        };
        let local_of: std::collections::HashMap<u32, usize> =
            l.gids.range(0, l.owned).enumerate().map(|(i, g)| (g, i)).collect();
        let mut storage = Vec::new();
        // Every process checks every list, so all fail alike (and none waits on another).
        for (q, b) in all.iter().enumerate() {
            for (i, c) in b.chunks_exact(4).enumerate() {
                let r = i32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
                if r < 0 || r as usize >= n {
                    op2_bail!(
                        BadRange,
                        "{CALL} on mat '{}': process {q}'s rows[{}] is {}, outside [{base}, {}] (rows of {} elements x {rdim})",
                        mat.name,
                        i as i64 + base,
                        r as i64 + base,
                        n as i64 - 1 + base,
                        n / rdim.max(1)
                    );
                }
                let r = r as usize;
                if let Some(&li) = local_of.get(&((r / rdim) as u32)) {
                    storage.push(li * rdim + r % rdim);
                }
            }
        }
        self.mats.mat_mut(m).zero_rows(&storage, diag);
        Ok(())
    }

    /// `op_mat_nnz`: the entries of the whole matrix (under MPI: collective, the sum over the
    /// processes' rows).
    pub fn mat_nnz(&mut self, m: MatId) -> Result<u64> {
        self.mat_collective("op_mat_nnz")?;
        let n = self.mats.mat(m).pattern.nnz() as u64;
        if !self.comm.distributed() {
            return Ok(n);
        }
        Ok(super::dist::gather_u64(&self.comm, n)?.iter().sum())
    }

    /// `op_fetch_mat_csr` under MPI (collective): the scalar rows of this process's declared
    /// block of the row set, in the original numbering (rows and columns), sorted columns, as
    /// (rowptr, colidx, values bytes). Every process gathers every row (O(global nnz) memory:
    /// a function for checks and small problems).
    pub fn fetch_mat_csr_dist(&mut self, m: MatId) -> Result<(Vec<i32>, Vec<i32>, Vec<u8>)> {
        const CALL: &str = "op_fetch_mat_csr";
        self.mat_collective(CALL)?;
        let mat = self.mats.mat(m);
        let sp = self.mats.sparsity(mat.sparsity);
        let (rdim, cdim, es) = (mat.rdim, mat.cdim, mat.ty.size());
        let (Some(rl), Some(cl)) = (self.comm.layout(sp.row_set), self.comm.layout(sp.col_set)) else {
            op2_bail!(Internal, "{CALL}: mat '{}': its sets have no layout after op_partition", mat.name)
        };
        let p = &mat.pattern;
        let vals = mat.values.bytes();
        // Mine: per row, its global row, length, global columns (sorted) and values.
        let mut mine: Vec<u8> = Vec::new();
        let mut row: Vec<(i32, usize)> = Vec::new();
        for r in 0..p.nrows {
            let g = rl.gids.get(r / rdim) as usize * rdim + r % rdim;
            row.clear();
            row.extend((p.rowptr[r]..p.rowptr[r + 1]).map(|k| {
                let c = p.colidx[k] as usize;
                ((cl.gids.get(c / cdim) as usize * cdim + c % cdim) as i32, k)
            }));
            row.sort_unstable();
            mine.extend_from_slice(&(g as u32).to_ne_bytes());
            mine.extend_from_slice(&(row.len() as u32).to_ne_bytes());
            for &(c, _) in &row {
                mine.extend_from_slice(&c.to_ne_bytes());
            }
            for &(_, k) in &row {
                mine.extend_from_slice(&vals[k * es..(k + 1) * es]);
            }
        }
        let all = self.comm.all_gather(&mine)?;
        let sd = &self.comm.sets[sp.row_set.0 as usize];
        let (lo, hi) = (sd.decl_offset * rdim, (sd.decl_offset + sd.decl_size) * rdim);
        let mut rows: Vec<Option<(&[u8], &[u8])>> = vec![None; hi - lo];
        let u32_at = |b: &[u8], at: usize| u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
        for b in &all {
            let mut at = 0;
            while at + 8 <= b.len() {
                let (g, len) = (u32_at(b, at), u32_at(b, at + 4));
                let cols = &b[at + 8..at + 8 + 4 * len];
                let vv = &b[at + 8 + 4 * len..at + 8 + 4 * len + es * len];
                at += 8 + (4 + es) * len;
                if (lo..hi).contains(&g) {
                    rows[g - lo] = Some((cols, vv));
                }
            }
        }
        let (mut rp, mut ci, mut vv) = (vec![0i32], Vec::new(), Vec::new());
        for r in rows {
            if let Some((c, v)) = r {
                ci.extend(c.chunks_exact(4).map(|x| i32::from_ne_bytes([x[0], x[1], x[2], x[3]])));
                vv.extend_from_slice(v);
            }
            rp.push(ci.len() as i32);
        }
        Ok((rp, ci, vv))
    }

    /// `op_fetch_mat_csr`: the scalar CSR in the declared numbering (rows and columns), sorted
    /// columns. Each output may be None.
    pub fn fetch_mat_csr(
        &self,
        m: MatId,
        rowptr: Option<&mut [i32]>,
        colidx: Option<&mut [i32]>,
        values: Option<&mut [u8]>,
    ) -> Result<()> {
        let mat = self.mats.mat(m);
        let sp = self.mats.sparsity(mat.sparsity);
        let p = &mat.pattern;
        let (ro, co) = (&self.sets[sp.row_set.0 as usize].order, &self.sets[sp.col_set.0 as usize].order);
        let es = mat.ty.size();
        let vals = &mat.values.bytes()[..p.nnz() * es];
        if ro.is_none() && co.is_none() {
            if let Some(out) = rowptr {
                out.iter_mut().zip(&p.rowptr).for_each(|(o, &v)| *o = v as i32);
            }
            if let Some(out) = colidx {
                out.copy_from_slice(&p.colidx);
            }
            if let Some(out) = values {
                out.copy_from_slice(vals);
            }
            return Ok(());
        }
        // Renumbered sets: rows in declared order, columns mapped back and sorted.
        let col_decl = |c: i32| -> i32 {
            match co {
                None => c,
                Some(o) => o.old_of_new[c as usize / mat.cdim] * mat.cdim as i32 + c % mat.cdim as i32,
            }
        };
        let (mut rp, mut ci, mut vv) = (vec![0i32], Vec::with_capacity(p.nnz()), Vec::with_capacity(vals.len()));
        let mut row: Vec<(i32, usize)> = Vec::new();
        for r in 0..p.nrows {
            let s = self.storage_row(mat, r);
            row.clear();
            row.extend((p.rowptr[s]..p.rowptr[s + 1]).map(|k| (col_decl(p.colidx[k]), k)));
            row.sort_unstable();
            for &(c, k) in &row {
                ci.push(c);
                vv.extend_from_slice(&vals[k * es..(k + 1) * es]);
            }
            rp.push(ci.len() as i32);
        }
        if let Some(out) = rowptr {
            out.copy_from_slice(&rp);
        }
        if let Some(out) = colidx {
            out.copy_from_slice(&ci);
        }
        if let Some(out) = values {
            out.copy_from_slice(&vv);
        }
        Ok(())
    }

    /// `op_solve`: solves `A x = b`; returns the iteration count.
    pub fn mat_solve(&mut self, m: MatId, b: DatId, x: DatId, options: Option<&str>) -> Result<usize> {
        const CALL: &str = "op_solve";
        self.mat_collective(CALL)?;
        let o = Options::parse(options)?;
        {
            let mat = self.mats.mat(m);
            let sp = self.mats.sparsity(mat.sparsity);
            if sp.row_set != sp.col_set || mat.rdim != mat.cdim {
                op2_bail!(
                    ArgMismatch,
                    "{CALL} on mat '{}': the matrix is not square ({} x {} blocks of sets '{}' and '{}')",
                    mat.name,
                    mat.rdim,
                    mat.cdim,
                    self.sets[sp.row_set.0 as usize].name,
                    self.sets[sp.col_set.0 as usize].name
                );
            }
        }
        self.check_vector(CALL, m, b, true, "b")?;
        self.check_vector(CALL, m, x, false, "x")?;
        if x == b {
            op2_bail!(ArgMismatch, "{CALL} on mat '{}': b and x are the same dat", self.mats.mat(m).name);
        }
        let ty = self.mats.mat(m).ty;
        // The rows this process owns (all of them on one process).
        let nrows = self.mats.mat(m).pattern.nrows;
        let mut bv = to_f64(self.host_data(b, false)?, ty);
        let mut xv = to_f64(self.host_data(x, false)?, ty);
        bv.truncate(nrows);
        xv.truncate(nrows);
        let outcome = self.solve_checked(m, o, &bv, &mut xv);
        // x holds the solution, or the last iterate of a solve that did not converge.
        from_f64(&xv, self.host_data(x, true)?, ty);
        self.dats[x.0 as usize].halo_dirty = true;
        outcome
    }

    /// Runs `A x = b` and reports success only when the true residual passes: `|b - A x| <=
    /// max(rtol |b - A x0|, atol)` (x0 the initial guess: 0 unless -ksp_initial_guess_nonzero,
    /// so with the default guess the test is `|b - Ax| / |b| <= rtol`; b = 0 then has the answer
    /// x = 0 at once). The solvers test their own (preconditioned, recurrence or Arnoldi)
    /// estimates, which a singular or badly scaled system can fool: when a solver claims
    /// convergence and the true residual disagrees, the solve goes on from its iterate (at most
    /// 3 more rounds within -ksp_max_it, each must halve the true residual); otherwise
    /// OP2_ERR_SOLVE with the solver, the iterations and the true residual.
    fn solve_checked(&mut self, m: MatId, mut o: Options, b: &[f64], x: &mut [f64]) -> Result<usize> {
        const CALL: &str = "op_solve";
        let name = self.mats.mat(m).name.clone();
        // GMRES ends in at most n steps: a restart beyond the system's size buys nothing (and
        // must not size memory).
        let mut n = [b.len() as f64];
        if self.comm.distributed() {
            super::dist::sum_f64s(&self.comm, &mut n)?;
        }
        o.restart = o.restart.min((n[0] as usize).max(1));
        if !o.nonzero_guess {
            x.iter_mut().for_each(|v| *v = 0.0);
        }
        let (r0, bnorm) = self.mat_operator(m, |mult, gsum, _| solve::true_residual(mult, gsum, b, x))??;
        let target = (o.rtol * r0).max(o.atol);
        let solver = match &o.native {
            Ok((ksp, pc)) => format!("{} with {}", ksp_name(*ksp), pc_name(*pc)),
            Err(_) => "PETSc".to_string(),
        };
        let relative = |r: f64| {
            if bnorm > 0.0 {
                format!("true residual |b - Ax|/|b| = {:e}", r / bnorm)
            } else {
                format!("true residual |b - Ax| = {r:e} (b = 0)")
            }
        };
        let (mut its, mut last) = (0usize, r0);
        for round in 0..4 {
            let mut step = o.clone();
            if round > 0 {
                // From the last iterate, asking the solver's own test for the reduction the
                // true residual still needs (its tolerance is relative to the round's start).
                step.nonzero_guess = true;
                step.max_it = o.max_it - its;
                step.rtol = 0.5 * target / last;
                // (PETSc's rtol is relative to |B b| unless told to use the initial residual.)
                step.text = format!(
                    "{} -ksp_initial_guess_nonzero -ksp_converged_use_initial_residual_norm -ksp_max_it {} -ksp_rtol {:e}",
                    o.text, step.max_it, step.rtol
                );
            }
            let r = match step.native.clone() {
                Ok((ksp, pc)) => self.native_solve(m, ksp, pc, &step, b, x),
                Err(needs) => self.petsc_solve(m, &step, &needs, b, x),
            };
            let done = r.as_ref().map_or(0, |&k| k);
            let (rt, _) = self.mat_operator(m, |mult, gsum, _| solve::true_residual(mult, gsum, b, x))??;
            let mut e = match r {
                Ok(_) => {
                    its += done;
                    if rt <= target {
                        return Ok(its);
                    }
                    if rt.is_finite() && rt <= 0.5 * last && its < o.max_it && round < 3 {
                        last = rt;
                        continue;
                    }
                    return Err(crate::op2_err!(
                        Solve,
                        "{CALL} on mat '{name}': {solver} reported convergence after {its} iterations, but the {} is above the tolerance (|b - Ax| = {rt:e} > max(rtol |b - A x0|, atol) = {target:e}; rtol {:e}, atol {:e}): the system may be singular or inconsistent",
                        relative(rt),
                        o.rtol,
                        o.atol
                    ));
                }
                Err(e) => e,
            };
            if e.code == crate::error::ErrorCode::Solve {
                e.message.push_str(&format!("; {}", relative(rt)));
            }
            return Err(e);
        }
        crate::op2_bail!(Internal, "{CALL} on mat '{name}': the refinement rounds ended without a verdict")
    }

    /// Runs `f` with the operator of `m`: `mult(x, y)` computes `y = A x` on this process's
    /// rows (under MPI with the halo of `x` exchanged first), `gsum` sums values over the
    /// processes (nothing on one process), and A's diagonal. A failed exchange or sum (MPI) is
    /// the error returned.
    fn mat_operator<R>(
        &mut self,
        m: MatId,
        f: impl FnOnce(&mut dyn FnMut(&[f64], &mut [f64]), solve::GlobalSum, &[f64]) -> R,
    ) -> Result<R> {
        let pool = self.spmv_pool();
        let mat = self.mats.mat(m);
        let p = &mat.pattern;
        let vals = mat.values.to_f64();
        let diag: Vec<f64> = (0..p.nrows).map(|r| p.slot(r, r as i32).map_or(0.0, |s| vals[s])).collect();
        let pool = if pool { self.mats.pool.as_ref() } else { None };
        let comm = &self.comm;
        let col_layout = comm.layout(self.mats.sparsity(mat.sparsity).col_set).filter(|_| comm.partitioned);
        let cdim = mat.cdim;
        let mut xfull: Vec<f64> = crate::core::alloc::zeroed(p.ncols, "op_solve: the matrix's column vector")?;
        let (mut mult_err, mut sum_err) = (None, None);
        let mut mult = |a: &[f64], y: &mut [f64]| match col_layout {
            None => super::spmv(p, &vals, a, y, pool),
            Some(l) => {
                xfull[..a.len()].copy_from_slice(a);
                // SAFETY: f64 values viewed as bytes.
                let bytes = unsafe { std::slice::from_raw_parts_mut(xfull.as_mut_ptr() as *mut u8, xfull.len() * 8) };
                if let Err(e) = super::dist::exchange(comm, l, bytes, 8 * cdim) {
                    mult_err.get_or_insert(e);
                }
                super::spmv(p, &vals, &xfull, y, pool)
            }
        };
        let distributed = comm.distributed();
        let mut gsum = |v: &mut [f64]| {
            if distributed {
                if let Err(e) = super::dist::sum_f64s(comm, v) {
                    sum_err.get_or_insert(e);
                    v.iter_mut().for_each(|x| *x = f64::NAN);
                }
            }
        };
        let r = f(&mut mult, &mut gsum, &diag);
        if let Some(e) = mult_err.or(sum_err) {
            return Err(e);
        }
        Ok(r)
    }

    /// One run of the native solver; OP2_ERR_SOLVE when its own test is not met.
    fn native_solve(
        &mut self,
        m: MatId,
        ksp: solve::Ksp,
        pc: solve::Pc,
        o: &Options,
        b: &[f64],
        x: &mut [f64],
    ) -> Result<usize> {
        let name = self.mats.mat(m).name.clone();
        let r = self.mat_operator(m, |mult, gsum, diag| solve::solve(ksp, pc, o, mult, gsum, diag, b, x))??;
        r.map_err(|e| {
            crate::op2_err!(
                Solve,
                "op_solve on mat '{name}': {} with {} did not converge in {} iterations (preconditioned residual norm {:e}; rtol {:e}, atol {:e})",
                ksp_name(ksp),
                pc_name(pc),
                e.iterations,
                e.residual,
                o.rtol,
                o.atol
            )
        })
    }

    #[cfg(feature = "petsc")]
    fn petsc_solve(&mut self, m: MatId, o: &Options, _needs: &str, b: &[f64], x: &mut [f64]) -> Result<usize> {
        #[cfg(feature = "mpi")]
        let (fcomm, set_world) = self.comm.world.as_ref().map_or((-1, false), |w| (w.fortran_handle(), w.owns_init()));
        #[cfg(not(feature = "mpi"))]
        let (fcomm, set_world) = (-1, false);
        let mat = self.mats.mat(m);
        let vals = mat.values.to_f64();
        if !self.comm.partitioned {
            return super::petsc::solve(&mat.name, fcomm, set_world, None, &mat.pattern, &vals, b, x, o);
        }
        // Under MPI: this process's rows of an MPIAIJ in the partition-order global numbering
        // (rows of rank r after those of lower ranks), columns translated and sorted.
        let sp = self.mats.sparsity(mat.sparsity);
        let Some(l) = self.comm.layout(sp.col_set) else {
            op2_bail!(Internal, "op_solve: mat '{}': its set has no layout after op_partition", mat.name)
        };
        let (num, _) = super::dist::partition_numbers(&self.comm, l)?;
        let nglobal = crate::mpi::dist::global_size(self, sp.col_set) * mat.cdim;
        let (p, cdim) = (&mat.pattern, mat.cdim as i64);
        let mut g = Pattern { nrows: p.nrows, ncols: nglobal, rowptr: p.rowptr.clone(), colidx: Vec::new() };
        g.colidx.reserve(p.nnz());
        let mut gv = Vec::with_capacity(p.nnz());
        let mut row: Vec<(i32, f64)> = Vec::new();
        for r in 0..p.nrows {
            row.clear();
            row.extend((p.rowptr[r]..p.rowptr[r + 1]).map(|k| {
                let c = p.colidx[k] as i64;
                ((num[(c / cdim) as usize] * cdim + c % cdim) as i32, vals[k])
            }));
            row.sort_unstable_by_key(|e| e.0);
            g.colidx.extend(row.iter().map(|e| e.0));
            gv.extend(row.iter().map(|e| e.1));
        }
        super::petsc::solve(&mat.name, fcomm, set_world, Some(nglobal), &g, &gv, b, x, o)
    }

    #[cfg(not(feature = "petsc"))]
    fn petsc_solve(&mut self, m: MatId, _o: &Options, needs: &str, _b: &[f64], _x: &mut [f64]) -> Result<usize> {
        op2_bail!(
            BackendUnavailable,
            "op_solve on mat '{}': {needs} needs PETSc, and this op2 was built without it (cargo feature 'petsc'); the native solver offers -ksp_type cg|gmres with -pc_type jacobi|none",
            self.mats.mat(m).name
        )
    }
}

fn ksp_name(k: solve::Ksp) -> &'static str {
    match k {
        solve::Ksp::Cg => "cg",
        solve::Ksp::Gmres => "gmres",
    }
}

fn pc_name(p: solve::Pc) -> &'static str {
    match p {
        solve::Pc::Jacobi => "jacobi",
        solve::Pc::None => "none",
    }
}

fn to_f64(b: &[u8], ty: ElemType) -> Vec<f64> {
    match ty {
        ElemType::Float => b.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as f64).collect(),
        _ => b.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap_or([0; 8]))).collect(),
    }
}

fn from_f64(v: &[f64], out: &mut [u8], ty: ElemType) {
    match ty {
        ElemType::Float => {
            out.chunks_exact_mut(4).zip(v).for_each(|(o, &x)| o.copy_from_slice(&(x as f32).to_ne_bytes()))
        }
        _ => out.chunks_exact_mut(8).zip(v).for_each(|(o, &x)| o.copy_from_slice(&x.to_ne_bytes())),
    }
}
