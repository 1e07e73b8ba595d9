//! Combining reduction partials: typed sums, minima and maxima over raw buffers, and the rule
//! that an `op_arg_info` payload follows the partial that wins its MIN/MAX. Partials are always
//! combined in a fixed order (ascending block), so a result depends only on the blocking, never
//! on which thread ran what.

use super::Reduction;
use crate::arg::Access;
use crate::core::ElemType;

/// Per-block copies of a loop's reductions, initialised for combining: INC partials start at
/// zero, MIN/MAX partials and info payloads at the caller's values (a partial that finds
/// nothing better then never wins).
pub struct Partials {
    /// Words (u64) per block: every reduction's buffer, back to back.
    stride: usize,
    /// Offset of each reduction's buffer within a block's stride.
    offsets: Vec<usize>,
    data: Vec<u64>,
    /// `data.as_mut_ptr()`, taken once: tasks write their own block's region through it.
    base: *mut u64,
}

// SAFETY: tasks write disjoint regions (one block each) through `base`; reads happen after the
// parallel phase has joined.
unsafe impl Sync for Partials {}
unsafe impl Send for Partials {}

impl Partials {
    /// Partials for `nblocks` blocks; None when their memory cannot be allocated.
    pub fn new(reductions: &[Reduction], nblocks: usize) -> Option<Partials> {
        let mut offsets = Vec::with_capacity(reductions.len());
        let mut stride = 0;
        for r in reductions {
            offsets.push(stride);
            stride += r.buf.len();
        }
        let words = stride.checked_mul(nblocks)?;
        let mut data: Vec<u64> = Vec::new();
        data.try_reserve_exact(words).ok()?;
        data.resize(words, 0);
        for b in 0..nblocks {
            for (r, &off) in reductions.iter().zip(&offsets) {
                if r.acc != Access::Inc {
                    let at = b * stride + off;
                    data[at..at + r.buf.len()].copy_from_slice(&r.buf);
                }
            }
        }
        let base = data.as_mut_ptr();
        Some(Partials { stride, offsets, data, base })
    }

    /// Every block's partials, back to back (`stride` words a block), for device backends that
    /// seed a device buffer from them.
    pub fn words(&self) -> &[u64] {
        &self.data
    }

    /// As `words`, to read a device buffer back into before `combine_into`.
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.data
    }

    /// Pointer to block `b`'s buffer of reduction `r`.
    pub fn ptr(&self, b: usize, r: usize) -> *mut u64 {
        debug_assert!(b * self.stride + self.offsets[r] < self.data.len());
        // SAFETY: in bounds (b < nblocks, r < reductions).
        unsafe { self.base.add(b * self.stride + self.offsets[r]) }
    }

    /// Combines every block's partials into `reductions` (the seeded scratch), in block order.
    pub fn combine_into(&self, reductions: &mut [Reduction], nblocks: usize) {
        for b in 0..nblocks {
            let base = b * self.stride;
            for i in 0..reductions.len() {
                let r = &reductions[i];
                let part = &self.data[base + self.offsets[i]..base + self.offsets[i] + r.buf.len()];
                match r.acc {
                    Access::Inc => add(r.ty, r.dim, &mut reductions[i].buf, part),
                    Access::Min | Access::Max => {
                        let wins = better(r.ty, r.acc, as_bytes(part), as_bytes(&r.buf), r.dim);
                        if wins.iter().any(|&w| w) {
                            let first_wins = wins[0];
                            take(r.ty, &wins, &mut reductions[i].buf, part);
                            // Payloads that follow this reduction go with its first component.
                            if first_wins {
                                for (j, payload) in reductions.iter_mut().enumerate() {
                                    if payload.follows == Some(i) {
                                        let at = base + self.offsets[j];
                                        let len = payload.buf.len();
                                        payload.buf.copy_from_slice(&self.data[at..at + len]);
                                    }
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

pub(crate) use crate::core::buffer::as_bytes;

fn as_bytes_mut(w: &mut [u64]) -> &mut [u8] {
    // SAFETY: as above, uniquely borrowed.
    unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr() as *mut u8, w.len() * 8) }
}

macro_rules! per_type {
    ($ty:expr, |$t:ident| $body:expr) => {
        match $ty {
            ElemType::Double => {
                type $t = f64;
                $body
            }
            ElemType::Float => {
                type $t = f32;
                $body
            }
            ElemType::Int => {
                type $t = i32;
                $body
            }
            ElemType::Uint => {
                type $t = u32;
                $body
            }
            ElemType::Ll => {
                type $t = i64;
                $body
            }
            ElemType::Ull => {
                type $t = u64;
                $body
            }
            ElemType::Bool => {
                type $t = u8;
                $body
            }
        }
    };
}

fn get<T: Copy>(b: &[u8], i: usize) -> T {
    // SAFETY: callers index within dim elements of a buffer holding at least that many; reads
    // are unaligned-safe.
    unsafe { std::ptr::read_unaligned((b.as_ptr() as *const T).add(i)) }
}

fn put<T: Copy>(b: &mut [u8], i: usize, v: T) {
    // SAFETY: as in `get`.
    unsafe { std::ptr::write_unaligned((b.as_mut_ptr() as *mut T).add(i), v) }
}

/// `acc += part`, elementwise, wrapping for integers (as C's unsigned arithmetic does).
fn add(ty: ElemType, dim: usize, acc: &mut [u64], part: &[u64]) {
    let (a, p) = (as_bytes_mut(acc), as_bytes(part));
    per_type!(ty, |T| {
        for i in 0..dim {
            let v: T = get::<T>(a, i);
            let w: T = get::<T>(p, i);
            put::<T>(a, i, sum(v, w));
        }
    })
}

trait Sum: Copy {
    fn sum(self, o: Self) -> Self;
}
macro_rules! sum_int {
    ($($t:ty),*) => { $(impl Sum for $t { fn sum(self, o: Self) -> Self { self.wrapping_add(o) } })* };
}
sum_int!(i32, u32, i64, u64, u8);
impl Sum for f64 {
    fn sum(self, o: Self) -> Self {
        self + o
    }
}
impl Sum for f32 {
    fn sum(self, o: Self) -> Self {
        self + o
    }
}
fn sum<T: Sum>(a: T, b: T) -> T {
    a.sum(b)
}

/// For each component: whether `cand` is strictly better than `cur` (smaller for MIN, larger
/// for MAX). Ties keep the earlier block's value.
fn better(ty: ElemType, acc: Access, cand: &[u8], cur: &[u8], dim: usize) -> Vec<bool> {
    per_type!(ty, |T| {
        (0..dim)
            .map(|i| {
                let (c, k): (T, T) = (get::<T>(cand, i), get::<T>(cur, i));
                if acc == Access::Min {
                    c < k
                } else {
                    c > k
                }
            })
            .collect()
    })
}

fn take(ty: ElemType, wins: &[bool], acc: &mut [u64], part: &[u64]) {
    let (a, p) = (as_bytes_mut(acc), as_bytes(part));
    per_type!(ty, |T| {
        for (i, &w) in wins.iter().enumerate() {
            if w {
                put::<T>(a, i, get::<T>(p, i));
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(ty: ElemType, acc: Access, vals: &[f64], follows: Option<usize>) -> Reduction {
        let mut buf = vec![0u64; vals.len()];
        for (i, v) in vals.iter().enumerate() {
            buf[i] = if ty == ElemType::Double { v.to_bits() } else { *v as i64 as u64 };
        }
        Reduction { arg: 0, ty, dim: vals.len(), acc, follows, buf }
    }

    #[test]
    fn sums_and_argmax_in_block_order() {
        // rms (INC, caller 10), maxerr (MAX, caller 1), errloc (info following maxerr).
        let mut rs = vec![
            red(ElemType::Double, Access::Inc, &[10.0], None),
            red(ElemType::Double, Access::Max, &[1.0], None),
            red(ElemType::Int, Access::Read, &[-1.0], Some(1)),
        ];
        let p = Partials::new(&rs, 3).unwrap();
        // INC partials start at 0; MAX and payload at the caller's values.
        assert_eq!(unsafe { *p.ptr(0, 0) }, 0);
        assert_eq!(f64::from_bits(unsafe { *p.ptr(2, 1) }), 1.0);
        let set = |b: usize, r: usize, v: u64| unsafe { *p.ptr(b, r) = v };
        set(0, 0, 1.5f64.to_bits());
        set(1, 0, 2.5f64.to_bits());
        set(2, 0, 3.0f64.to_bits());
        set(1, 1, 7.0f64.to_bits());
        set(1, 2, 42);
        set(2, 1, 7.0f64.to_bits()); // a tie: the earlier block keeps the win
        set(2, 2, 99);
        p.combine_into(&mut rs, 3);
        assert_eq!(f64::from_bits(rs[0].buf[0]), 10.0 + 1.5 + 2.5 + 3.0);
        assert_eq!(f64::from_bits(rs[1].buf[0]), 7.0);
        assert_eq!(rs[2].buf[0] as i32, 42);
    }

    #[test]
    fn integer_min_and_sum() {
        let mut rs =
            vec![red(ElemType::Int, Access::Min, &[5.0, 5.0], None), red(ElemType::Int, Access::Inc, &[1.0], None)];
        let p = Partials::new(&rs, 2).unwrap();
        unsafe {
            *(p.ptr(0, 0) as *mut [i32; 2]) = [3, 9];
            *(p.ptr(1, 0) as *mut [i32; 2]) = [4, -2];
            *(p.ptr(0, 1) as *mut i32) = 2;
            *(p.ptr(1, 1) as *mut i32) = 3;
        }
        p.combine_into(&mut rs, 2);
        let mins: [i32; 2] = unsafe { *(rs[0].buf.as_ptr() as *const [i32; 2]) };
        assert_eq!(mins, [3, -2]);
        assert_eq!(rs[1].buf[0] as i32, 6);
    }
}
