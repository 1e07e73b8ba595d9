//! Aligned byte storage for dat data: 64-byte aligned so generated loops can vectorise and
//! rows never straddle cache lines because of the allocation itself.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

const ALIGN: usize = 64;

/// From this size a buffer is its own anonymous mapping: zero pages the kernel provides on first
/// touch, as calloc gives, instead of memory the allocator zeroes at once (Rust's aligned
/// `alloc_zeroed` writes every byte), so a dat declared without data, or a new buffer about to
/// be filled, is resident only as it is written. Page-aligned, so 64-byte aligned.
#[cfg(unix)]
const LAZY_MIN: usize = 1 << 20;

/// A zero-initialised, 64-byte aligned, fixed-size byte buffer.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer owns its allocation exclusively; sharing follows Rust's usual rules.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer, or `None` if `len` bytes cannot be allocated (a caller's error to
    /// report, not a reason to abort the process).
    pub fn zeroed(len: usize) -> Option<AlignedBuf> {
        if len == 0 {
            return Some(AlignedBuf { ptr: NonNull::dangling(), len: 0 });
        }
        #[cfg(unix)]
        if len >= LAZY_MIN {
            // SAFETY: an anonymous private mapping of len bytes; no address hint.
            let raw = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if raw == libc::MAP_FAILED {
                return None;
            }
            return NonNull::new(raw as *mut u8).map(|ptr| AlignedBuf { ptr, len });
        }
        let layout = Layout::from_size_align(len, ALIGN).ok()?;
        // SAFETY: layout has non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        NonNull::new(raw).map(|ptr| AlignedBuf { ptr, len })
    }

    pub fn from_slice(data: &[u8]) -> Option<AlignedBuf> {
        let mut b = AlignedBuf::zeroed(data.len())?;
        b.as_mut_slice().copy_from_slice(data);
        Some(b)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes (or dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        #[cfg(unix)]
        if self.len >= LAZY_MIN {
            // SAFETY: mapped in zeroed() with this length; nothing refers to it any more.
            unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len) };
            return;
        }
        if self.len != 0 {
            // SAFETY: allocated in zeroed() with this layout.
            unsafe { dealloc(self.ptr.as_ptr(), Layout::from_size_align_unchecked(self.len, ALIGN)) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn aligned_and_zeroed() {
        let mut b = AlignedBuf::zeroed(100).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        let c = AlignedBuf::from_slice(&[1, 2, 3]).unwrap();
        assert_eq!(c.as_slice(), &[1, 2, 3]);
        assert!(AlignedBuf::zeroed(0).unwrap().is_empty());
        assert!(AlignedBuf::zeroed(usize::MAX - 100).is_none());
    }

    /// A large buffer is a mapping of zero pages: aligned, zero, writable, and resident only
    /// where written (VmRSS grows by about what is touched, not by its size).
    #[test]
    #[cfg(target_os = "linux")]
    fn large_buffers_are_lazy() {
        let rss = || crate::mpi::dist::proc_status_kib("VmRSS").unwrap_or(0);
        let before = rss();
        let mut b = AlignedBuf::zeroed(256 << 20).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        let after_alloc = rss();
        b.as_mut_slice()[100 << 20] = 7;
        assert_eq!(b.as_slice()[100 << 20], 7);
        assert_eq!(b.as_slice()[(256 << 20) - 1], 0);
        // 256 MiB allocated; far less resident (other tests run beside this one).
        assert!(after_alloc < before + (64 << 10), "{before} KiB -> {after_alloc} KiB after a 256 MiB buffer");
        let c = AlignedBuf::from_slice(&vec![3u8; 2 << 20]).unwrap();
        assert!(c.as_slice().iter().all(|&x| x == 3));
    }
}
