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

    /// A copy of `data`. A large buffer (its own mapping of zero pages) is written only where
    /// `data` is not zero, page by page: the pages of `data` that are all zero (a dat declared
    /// from an array of zeros, a work array) stay untouched, resident only once written.
    pub fn from_slice(data: &[u8]) -> Option<AlignedBuf> {
        let mut b = AlignedBuf::zeroed(data.len())?;
        if b.is_lazy() {
            let page = page_size();
            for (dst, src) in b.as_mut_slice().chunks_mut(page).zip(data.chunks(page)) {
                if !all_zero(src) {
                    dst.copy_from_slice(src);
                }
            }
        } else {
            b.as_mut_slice().copy_from_slice(data);
        }
        Some(b)
    }

    /// Whether the buffer is its own mapping of zero pages (from `LAZY_MIN` bytes on unix).
    fn is_lazy(&self) -> bool {
        #[cfg(unix)]
        return self.len >= LAZY_MIN;
        #[cfg(not(unix))]
        return false;
    }

    /// Gives the pages of a large buffer that hold only zeros back to the system
    /// (`madvise(MADV_DONTNEED)` on its private anonymous mapping, after which they read as zero
    /// again): a buffer filled by someone else (a file read) costs, like one declared without
    /// data, only the pages that hold something else. Returns the bytes given back. Nothing
    /// for a small buffer (the allocator's memory) or off Linux.
    pub fn release_zero_pages(&mut self) -> usize {
        #[cfg(target_os = "linux")]
        if self.is_lazy() {
            let page = page_size();
            let base = self.ptr.as_ptr();
            let mut released = 0;
            let mut run: Option<usize> = None; // first page of a run of zero pages
            let npages = self.len.div_ceil(page);
            for i in 0..=npages {
                let zero = i < npages && all_zero(&self.as_slice()[i * page..((i + 1) * page).min(self.len)]);
                match (zero, run) {
                    (true, None) => run = Some(i),
                    (false, Some(first)) => {
                        let len = ((i * page).min(self.len)) - first * page;
                        // SAFETY: a page-aligned range inside our own private anonymous mapping;
                        // its pages read as zero afterwards, which is what they hold now.
                        if unsafe {
                            libc::madvise(base.add(first * page) as *mut libc::c_void, len, libc::MADV_DONTNEED)
                        } == 0
                        {
                            released += len;
                        }
                        run = None;
                    }
                    _ => {}
                }
            }
            return released;
        }
        0
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

/// An empty buffer (what a dat holds while its rows are elsewhere: `op_partition` releasing a
/// dat it will read again).
impl Default for AlignedBuf {
    fn default() -> AlignedBuf {
        AlignedBuf { ptr: NonNull::dangling(), len: 0 }
    }
}

/// A slice of plain numbers (no padding: u64, i32, f64, ...) as its bytes.
pub(crate) fn as_bytes<T: Copy>(w: &[T]) -> &[u8] {
    // SAFETY: primitive numbers have no padding; any byte of theirs may be read.
    unsafe { std::slice::from_raw_parts(w.as_ptr() as *const u8, std::mem::size_of_val(w)) }
}

/// The system's page size (4 KiB where it cannot be asked).
fn page_size() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: sysconf reads a constant.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if n > 0 {
            return n as usize;
        }
    }
    4096
}

/// Whether every byte of `b` is zero (eight at a time).
fn all_zero(b: &[u8]) -> bool {
    let mut words = b.chunks_exact(8);
    words.all(|w| u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]) == 0)
        && words.remainder().iter().all(|&x| x == 0)
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

    /// Zero pages of a large buffer go back to the system and still read as zero; the others
    /// keep their values. A copy skips the zero pages of its source and equals it.
    #[test]
    #[cfg(target_os = "linux")]
    fn zero_pages_released() {
        let page = page_size();
        let len = LAZY_MIN + 100; // a mapping of its own, with a partial last page
        let npages = len.div_ceil(page);
        let mut b = AlignedBuf::zeroed(len).unwrap();
        b.as_mut_slice().fill(0); // every page resident
        b.as_mut_slice()[3 * page + 5] = 1;
        b.as_mut_slice()[10 * page] = 2;
        b.as_mut_slice()[len - 1] = 3;
        let released = b.release_zero_pages();
        assert_eq!(released, (npages - 3) * page);
        let s = b.as_slice();
        assert_eq!((s[3 * page + 5], s[10 * page], s[len - 1]), (1, 2, 3));
        assert_eq!(s.iter().filter(|&&x| x != 0).count(), 3);
        // all zero: everything goes back, and a second call finds nothing resident to keep
        let mut z = AlignedBuf::zeroed(len).unwrap();
        z.as_mut_slice().fill(0);
        assert_eq!(z.release_zero_pages(), len);
        assert!(z.as_slice().iter().all(|&x| x == 0));
        // a small buffer is the allocator's: nothing released
        let mut small = AlignedBuf::zeroed(100).unwrap();
        assert_eq!(small.release_zero_pages(), 0);
        let mut src = vec![0u8; len];
        src[7 * page + 1] = 9;
        src[len - 2] = 4;
        let c = AlignedBuf::from_slice(&src).unwrap();
        assert_eq!(c.as_slice(), &src[..]);
    }
}
