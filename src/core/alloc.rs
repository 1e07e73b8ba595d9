//! Fallible allocation: the one way op2 allocates memory whose size comes from outside (a file,
//! an argument, an option, a mesh). A size that cannot be represented is `OP2_ERR_BAD_SIZE`; a
//! plausible size the allocator refuses is `OP2_ERR_OUT_OF_MEMORY`. Neither aborts the process,
//! and the caller's session stays usable.

use crate::error::{ErrorCode, Op2Error, Result};

/// Bytes of `count` elements of `elem` bytes each, or `OP2_ERR_BAD_SIZE` naming `what` when the
/// product does not fit in memory's address range.
pub fn bytes(count: usize, elem: usize, what: &str) -> Result<usize> {
    count.checked_mul(elem).filter(|&b| b <= isize::MAX as usize).ok_or_else(|| {
        Op2Error::new(
            ErrorCode::BadSize,
            format!("{what}: {count} x {elem} bytes does not fit in memory's address range"),
        )
    })
}

/// The `OP2_ERR_OUT_OF_MEMORY` error for `n` bytes of `what`.
pub fn oom(what: &str, n: usize) -> Op2Error {
    Op2Error::new(
        ErrorCode::OutOfMemory,
        format!("{what}: cannot allocate {n} bytes ({:.1} MiB)", n as f64 / 1048576.0),
    )
}

/// An empty vector with room for `len` elements, reserved fallibly.
pub fn with_capacity<T>(len: usize, what: &str) -> Result<Vec<T>> {
    let n = bytes(len, std::mem::size_of::<T>().max(1), what)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| oom(what, n))?;
    Ok(v)
}

/// A vector of `len` copies of `value`, allocated fallibly.
pub fn filled<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// A vector of `len` default values (zeroes for numbers), allocated fallibly.
pub fn zeroed<T: Clone + Default>(len: usize, what: &str) -> Result<Vec<T>> {
    filled(len, T::default(), what)
}

/// A copy of `src`, allocated fallibly.
pub fn copy_of<T: Clone>(src: &[T], what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(src.len(), what)?;
    v.extend_from_slice(src);
    Ok(v)
}

/// Grows `v` to hold `additional` more elements, fallibly.
pub fn reserve<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    let n = bytes(v.len().saturating_add(additional), std::mem::size_of::<T>().max(1), what)?;
    v.try_reserve_exact(additional).map_err(|_| oom(what, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_size_is_bad_size() {
        let e = with_capacity::<u64>(usize::MAX / 4, "test dat").unwrap_err();
        assert_eq!(e.code, ErrorCode::BadSize);
        assert!(e.message.contains("test dat"), "{}", e.message);
    }

    #[test]
    fn refused_size_is_out_of_memory() {
        // isize::MAX / 2 bytes is representable but no allocator grants it.
        let e = with_capacity::<u8>(isize::MAX as usize / 2, "big map").unwrap_err();
        assert_eq!(e.code, ErrorCode::OutOfMemory);
        assert!(e.message.contains("big map"), "{}", e.message);
    }

    #[test]
    fn values_are_right() {
        assert_eq!(filled(3, 7i32, "x").unwrap(), vec![7, 7, 7]);
        assert_eq!(zeroed::<f64>(2, "x").unwrap(), vec![0.0, 0.0]);
        assert_eq!(copy_of(&[1u8, 2], "x").unwrap(), vec![1, 2]);
        let mut v = vec![1];
        reserve(&mut v, 10, "x").unwrap();
        assert!(v.capacity() >= 11);
    }
}
