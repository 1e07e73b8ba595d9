//! Sparse matrices: sparsities built from maps, matrices in CSR (scalar entries, `rdim` x `cdim`
//! blocks expanded as PETSc's AIJ stores them), the element-to-slot tables loops add through,
//! and the operations of the C API (zero, Dirichlet rows, SpMV, CSR copy-out, solve).
//!
//! Storage is op2's own (no PETSc needed to assemble or multiply): a pattern shared by the
//! sparsity and its scalar matrices, and one value array per matrix. A loop adds an element's
//! dense local block through a precomputed table of CSR slots (`sparsity::slot_table`), so
//! assembly does no search; races on `threads` are avoided by colouring on the row map.

pub mod dist;
pub mod loops;
mod ops;
#[cfg(feature = "petsc")]
pub mod petsc;
pub mod solve;
pub mod sparsity;

use crate::core::{ElemType, MapId, MatId, SetId};
use crate::error::Result;
use crate::op2_bail;
use rayon::prelude::*;
use sparsity::Pattern;
use std::sync::Arc;

/// Index of a sparsity in `Mats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SparsityId(pub u32);

pub struct Sparsity {
    pub name: String,
    /// The (row map, column map) pairs whose union this is.
    pub pairs: Vec<(MapId, MapId)>,
    pub row_set: SetId,
    pub col_set: SetId,
    /// Block pattern (one entry per (row element, column element)). Under MPI: this process's
    /// owned rows (local numbering), columns in the column set's local numbering (owned, then
    /// exec and non-exec halo).
    pub pattern: Arc<Pattern>,
    /// Under MPI: the row set's halo elements (exec and non-exec), whose rows their owners
    /// assemble; loops add their entries to one discard value per scalar row (0 otherwise).
    pub halo_rows: usize,
}

/// A matrix's values, in the order of its pattern's `colidx`.
pub enum Values {
    F64(Vec<f64>),
    F32(Vec<f32>),
}

impl Values {
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            Values::F64(v) => v.as_mut_ptr() as *mut u8,
            Values::F32(v) => v.as_mut_ptr() as *mut u8,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: plain floating-point values viewed as their bytes.
        unsafe {
            match self {
                Values::F64(v) => std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 8),
                Values::F32(v) => std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 4),
            }
        }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`; any bit pattern is a valid float.
        unsafe {
            match self {
                Values::F64(v) => std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, v.len() * 8),
                Values::F32(v) => std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, v.len() * 4),
            }
        }
    }

    /// The values as `f64` (a copy for `float` matrices).
    pub fn to_f64(&self) -> std::borrow::Cow<'_, [f64]> {
        match self {
            Values::F64(v) => std::borrow::Cow::Borrowed(v),
            Values::F32(v) => std::borrow::Cow::Owned(v.iter().map(|&x| x as f64).collect()),
        }
    }

    fn zero(&mut self) {
        match self {
            Values::F64(v) => v.iter_mut().for_each(|x| *x = 0.0),
            Values::F32(v) => v.iter_mut().for_each(|x| *x = 0.0),
        }
    }
}

/// What selects an element-to-slot table: the maps and the map columns used (None: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotKey {
    pub rowmap: MapId,
    pub ridx: Option<usize>,
    pub colmap: MapId,
    pub cidx: Option<usize>,
}

pub struct Mat {
    pub name: String,
    pub sparsity: SparsityId,
    pub rdim: usize,
    pub cdim: usize,
    pub ty: ElemType,
    /// Scalar pattern (the sparsity's, expanded by the block size).
    pub pattern: Arc<Pattern>,
    /// The pattern's values, then one discard value per scalar halo row (under MPI).
    pub values: Values,
    /// Element-to-slot tables already built for loops over this matrix.
    pub slots: Vec<(SlotKey, Arc<Vec<i32>>)>,
}

/// Every sparsity and matrix of a session, and the thread pool SpMV uses on `threads`.
#[derive(Default)]
pub struct Mats {
    pub sparsities: Vec<Sparsity>,
    pub mats: Vec<Mat>,
    pub(crate) pool: Option<rayon::ThreadPool>,
}

impl Mats {
    pub fn sparsity(&self, s: SparsityId) -> &Sparsity {
        &self.sparsities[s.0 as usize]
    }

    pub fn mat(&self, m: MatId) -> &Mat {
        &self.mats[m.0 as usize]
    }

    pub fn mat_mut(&mut self, m: MatId) -> &mut Mat {
        &mut self.mats[m.0 as usize]
    }

    /// Makes the pool of `n` threads SpMV uses on `threads` (once; without it, SpMV runs on
    /// the calling thread, with the same result).
    pub fn ensure_pool(&mut self, n: usize) {
        if self.pool.is_none() {
            self.pool =
                rayon::ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("op2-mat-{i}")).build().ok();
        }
    }
}

impl Mat {
    pub fn new(name: &str, sparsity: SparsityId, sp: &Sparsity, rdim: usize, cdim: usize, ty: ElemType) -> Result<Mat> {
        let pattern = if rdim == 1 && cdim == 1 { sp.pattern.clone() } else { Arc::new(sp.pattern.expand(rdim, cdim)) };
        let n = pattern.nnz() + sp.halo_rows * rdim;
        let values = match ty {
            ElemType::Double => {
                let mut v = Vec::new();
                if v.try_reserve_exact(n).is_err() {
                    op2_bail!(OutOfMemory, "op_decl_mat '{name}': cannot allocate {n} values");
                }
                v.resize(n, 0.0);
                Values::F64(v)
            }
            ElemType::Float => {
                let mut v = Vec::new();
                if v.try_reserve_exact(n).is_err() {
                    op2_bail!(OutOfMemory, "op_decl_mat '{name}': cannot allocate {n} values");
                }
                v.resize(n, 0.0);
                Values::F32(v)
            }
            t => op2_bail!(BadType, "op_decl_mat '{name}': type '{}' is not 'double' or 'float'", t.api_name()),
        };
        Ok(Mat { name: name.to_string(), sparsity, rdim, cdim, ty, pattern, values, slots: Vec::new() })
    }

    pub fn zero(&mut self) {
        self.values.zero();
    }

    /// Zeroes the given (scalar, storage-numbered) rows and puts `diag` on their diagonal
    /// (when the diagonal is in the pattern; a rectangular matrix's rows just become zero).
    pub fn zero_rows(&mut self, rows: &[usize], diag: f64) {
        let p = &self.pattern;
        for &r in rows {
            let d = p.slot(r, r as i32);
            for s in p.rowptr[r]..p.rowptr[r + 1] {
                let v = if Some(s) == d { diag } else { 0.0 };
                match &mut self.values {
                    Values::F64(x) => x[s] = v,
                    Values::F32(x) => x[s] = v as f32,
                }
            }
        }
    }

    /// `y = A x` on the (scalar) rows, each row summed in column order by one thread, so the
    /// result does not depend on the pool. `x`, `y`: the dats' bytes, of the matrix's type.
    pub fn mult(&self, x: &[u8], y: &mut [u8], pool: Option<&rayon::ThreadPool>) {
        let p = &self.pattern;
        match &self.values {
            Values::F64(v) => {
                let x = cast::<f64>(x);
                let y = cast_mut::<f64>(y);
                spmv(p, v, x, y, pool)
            }
            Values::F32(v) => {
                let x = cast::<f32>(x);
                let y = cast_mut::<f32>(y);
                spmv(p, v, x, y, pool)
            }
        }
    }

    /// The element-to-slot table for `key` (built on first use); None if the maps reach an
    /// entry outside the pattern.
    pub fn slot_table(
        &mut self,
        key: SlotKey,
        rows: (&[i32], usize),
        cols: (&[i32], usize),
        n: usize,
    ) -> Option<Arc<Vec<i32>>> {
        if let Some((_, t)) = self.slots.iter().find(|(k, _)| *k == key) {
            return Some(t.clone());
        }
        let t = Arc::new(sparsity::slot_table(
            &self.pattern,
            n,
            (rows.0, rows.1, key.ridx),
            (cols.0, cols.1, key.cidx),
            self.rdim,
            self.cdim,
        )?);
        self.slots.push((key, t.clone()));
        Some(t)
    }
}

/// Floating-point types SpMV runs on.
pub trait Real: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl Real for f64 {
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

impl Real for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

fn cast<T>(b: &[u8]) -> &[T] {
    // SAFETY: dat buffers are 64-byte aligned (AlignedBuf) and hold whole values of T.
    unsafe { std::slice::from_raw_parts(b.as_ptr() as *const T, b.len() / std::mem::size_of::<T>()) }
}

fn cast_mut<T>(b: &mut [u8]) -> &mut [T] {
    // SAFETY: as `cast`.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut T, b.len() / std::mem::size_of::<T>()) }
}

/// Rows per parallel SpMV task.
const SPMV_CHUNK: usize = 4096;

/// `y = A x` (values accumulated in double).
pub fn spmv<T: Real>(p: &Pattern, v: &[T], x: &[T], y: &mut [T], pool: Option<&rayon::ThreadPool>) {
    let x = &x[..p.ncols];
    let row = |r: usize| -> T {
        let (a, b) = (p.rowptr[r], p.rowptr[r + 1]);
        let mut s = 0.0f64;
        for (&c, &val) in p.colidx[a..b].iter().zip(&v[a..b]) {
            s += val.to_f64() * x[c as usize].to_f64();
        }
        T::from_f64(s)
    };
    let y = &mut y[..p.nrows];
    match pool {
        Some(pool) if p.nrows > SPMV_CHUNK => pool.install(|| {
            y.par_chunks_mut(SPMV_CHUNK).enumerate().for_each(|(c, out)| {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = row(c * SPMV_CHUNK + i);
                }
            })
        }),
        _ => y.iter_mut().enumerate().for_each(|(r, o)| *o = row(r)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spmv_and_zero_rows() {
        // [[2, 1, 0], [1, 3, 1], [0, 1, 4]]
        let p = Pattern { nrows: 3, ncols: 3, rowptr: vec![0, 2, 5, 7], colidx: vec![0, 1, 0, 1, 2, 1, 2] };
        let mut m = Mat {
            name: "A".into(),
            sparsity: SparsityId(0),
            rdim: 1,
            cdim: 1,
            ty: ElemType::Double,
            pattern: Arc::new(p),
            values: Values::F64(vec![2.0, 1.0, 1.0, 3.0, 1.0, 1.0, 4.0]),
            slots: Vec::new(),
        };
        let x: Vec<u8> = [1.0f64, 2.0, 3.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut y = vec![0u8; 24];
        m.mult(&x, &mut y, None);
        assert_eq!(cast::<f64>(&y), &[4.0, 10.0, 14.0]);
        m.zero_rows(&[1], 7.0);
        m.mult(&x, &mut y, None);
        assert_eq!(cast::<f64>(&y), &[4.0, 14.0, 14.0]);
    }

    #[test]
    fn parallel_spmv_is_the_serial_one() {
        let n: usize = 20_000;
        let mut rowptr = vec![0];
        let mut colidx = Vec::new();
        for r in 0..n {
            for c in [r.saturating_sub(7), r, (r + 13) % n] {
                if !colidx[rowptr[r]..].contains(&(c as i32)) {
                    colidx.push(c as i32);
                }
            }
            colidx[rowptr[r]..].sort_unstable();
            rowptr.push(colidx.len());
        }
        let p = Pattern { nrows: n, ncols: n, rowptr, colidx };
        let v: Vec<f64> = (0..p.nnz()).map(|k| (k as f64 * 0.37).sin()).collect();
        let x: Vec<f64> = (0..n).map(|k| (k as f64 * 0.11).cos()).collect();
        let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
        spmv(&p, &v, &x, &mut a, None);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        spmv(&p, &v, &x, &mut b, Some(&pool));
        assert_eq!(a, b);
    }
}
