//! A checkpoint file on disk: HDF5 (one 1-D byte dataset `meta`, one `datN` per live dat, rows
//! in declared order) behind a 512-byte user block that HDF5 leaves alone and op2 fills last
//! with a header: magic, the file's length and the SHA-256 of every byte after the user block.
//!
//! Writing is atomic: the file is written as `PATH.tmp` in the same directory (collectively
//! under MPI, each process its declared block of every dat through the MPI-IO driver), closed,
//! then process 0 hashes it, writes the header, flushes it to disk (`fsync`), renames it over
//! `PATH` and flushes the directory. A crash at any moment leaves `PATH` as it was: the previous
//! checkpoint, whole. Reading checks the header (length, checksum) before HDF5 sees the file.

use crate::error::{Op2Error, Result};
use crate::mpi::Comm;
use crate::{op2_bail, op2_err};
use sha2::{Digest, Sha256};
use std::io::{Read, Seek, SeekFrom, Write};

/// The user block HDF5 reserves at the start of the file (a power of two, at least 512).
pub const USERBLOCK: u64 = 512;
/// The first bytes of the header (version 1).
pub const MAGIC: &[u8; 16] = b"op2-checkpoint1\n";
/// Header: magic, file length (u64 little-endian), SHA-256 of bytes [USERBLOCK, length).
const HEADER: usize = 16 + 8 + 32;

/// What the checkpoint file's content is checked against: `OP2_ERR_CHECKPOINT` naming why.
fn bad(path: &str, why: impl std::fmt::Display) -> Op2Error {
    op2_err!(Checkpoint, "op_checkpointing_init: checkpoint '{path}' {why}")
}

/// SHA-256 of a file's bytes from `from` to its end, and its length: through a read-only
/// mapping (no copy), or read in 1 MiB pieces where the file cannot be mapped.
fn hash_from(f: &mut std::fs::File, from: u64) -> std::io::Result<([u8; 32], u64)> {
    let len = f.metadata()?.len();
    if let Some(sum) = hash_mapped(f, from, len) {
        return Ok((sum, len));
    }
    f.seek(SeekFrom::Start(from))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = from;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((h.finalize().into(), n))
}

fn hash_mapped(f: &std::fs::File, from: u64, len: u64) -> Option<[u8; 32]> {
    use std::os::unix::io::AsRawFd;
    let n = usize::try_from(len).ok().filter(|&n| n as u64 > from)?;
    // SAFETY: a private read-only mapping of `n` bytes of an open file, unmapped below; the
    // file is op2's own temporary or a checkpoint that nothing else writes meanwhile.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), n, libc::PROT_READ, libc::MAP_PRIVATE, f.as_raw_fd(), 0);
        if p == libc::MAP_FAILED {
            return None;
        }
        libc::madvise(p, n, libc::MADV_SEQUENTIAL);
        let bytes = std::slice::from_raw_parts(p as *const u8, n);
        let sum: [u8; 32] = Sha256::digest(&bytes[from as usize..]).into();
        libc::munmap(p, n);
        Some(sum)
    }
}

/// What `verify` found at a checkpoint's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Nothing at the path (on every process); `tmp`: `PATH.tmp` is there, the unfinished write
    /// of a run that stopped before renaming it (not a checkpoint).
    Nothing { tmp: bool },
    /// A whole checkpoint (header, length and checksum right).
    Whole,
}

/// What a process sees at `path`, for the agreement: nothing, something, or not knowable.
fn seen(path: &str) -> u8 {
    match std::fs::symlink_metadata(path) {
        Ok(_) => 1,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(_) => 2,
    }
}

/// Checks what is at `path` (collective under MPI, every process gets the same verdict): every
/// process names the same path (else `OP2_ERR_BAD_CONFIG`) and sees the same there, a file or
/// nothing (else `OP2_ERR_CHECKPOINT` naming the process: a node that cannot see the directory
/// would start afresh while the others resume); then process 0 reads the file. Nothing there
/// is `Found::Nothing`, a whole checkpoint `Found::Whole`; anything else is an error naming
/// why: `OP2_ERR_IO` for what cannot be opened as a regular file (a FIFO, a directory, a device,
/// a symlink to a missing file), `OP2_ERR_CHECKPOINT` for a file that is too short, not a
/// checkpoint, or whose length or checksum does not match. Never a silent fresh start.
pub fn verify(comm: &Comm, path: &str) -> Result<Found> {
    const CALL: &str = "op_checkpointing_init";
    if comm.distributed() {
        let mut mine = vec![seen(path)];
        mine.extend_from_slice(path.as_bytes());
        let all = comm.all_gather(&mine)?;
        let root = all.first().cloned().unwrap_or_default();
        let text = |b: &[u8]| String::from_utf8_lossy(b.get(1..).unwrap_or_default()).into_owned();
        let says = |b: &[u8]| match b.first() {
            Some(0) => "sees nothing there",
            Some(1) => "sees a file there",
            _ => "cannot check it",
        };
        for (r, b) in all.iter().enumerate().skip(1) {
            if b.get(1..) != root.get(1..) {
                op2_bail!(
                    BadConfig,
                    "{CALL}: process {r} names the checkpoint '{}', process 0 '{}': every process must name the same file",
                    text(b),
                    text(&root)
                );
            }
        }
        for (r, b) in all.iter().enumerate().skip(1) {
            if b.first() != root.first() {
                op2_bail!(
                    Checkpoint,
                    "{CALL}: checkpoint '{path}': process 0 {}, process {r} {}: every process must see the same file (put it in a directory all processes share)",
                    says(&root),
                    says(b)
                );
            }
        }
    }
    let mine = if comm.rank() == 0 {
        verify_here(path).map(|whole| {
            let tmp = !whole && std::fs::symlink_metadata(format!("{path}.tmp")).is_ok();
            [whole as u8, tmp as u8]
        })
    } else {
        Ok([0, 0])
    };
    let mine = comm.agree(mine)?;
    let verdict = if comm.distributed() {
        let all = comm.all_gather(&mine)?;
        all.first().and_then(|b| b.get(..2).map(|b| [b[0], b[1]])).unwrap_or_default()
    } else {
        mine
    };
    Ok(if verdict[0] == 1 { Found::Whole } else { Found::Nothing { tmp: verdict[1] == 1 } })
}

fn verify_here(path: &str) -> Result<bool> {
    // Whether anything is at `path`: the name itself (a symlink to a missing file is there, and
    // is refused below, never taken for "no checkpoint").
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => op2_bail!(Io, "op_checkpointing_init: cannot check checkpoint '{path}': {e}"),
        Ok(m) if m.file_type().is_symlink() && std::fs::metadata(path).is_err() => {
            let to = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
            op2_bail!(Io, "op_checkpointing_init: checkpoint '{path}' is a symlink to '{to}', which cannot be opened");
        }
        Ok(_) => {}
    }
    // As every input file: opened without blocking, a regular file only (a FIFO, a device or
    // a directory is OP2_ERR_IO at once, never a hang).
    let (mut f, _) = crate::core::file::open_regular(path, "op_checkpointing_init")?;
    let io = |e: std::io::Error| op2_err!(Io, "op_checkpointing_init: cannot read checkpoint '{path}': {e}");
    let len = f.metadata().map_err(io)?.len();
    if len < USERBLOCK {
        return Err(bad(path, format_args!("is truncated: {len} bytes, shorter than its {USERBLOCK}-byte header")));
    }
    let mut head = [0u8; HEADER];
    f.read_exact(&mut head).map_err(io)?;
    if &head[..16] != MAGIC {
        return Err(bad(path, "is not an op2 checkpoint (its first bytes are not op2's checkpoint header)"));
    }
    let want_len = u64::from_le_bytes([head[16], head[17], head[18], head[19], head[20], head[21], head[22], head[23]]);
    if len != want_len {
        return Err(bad(
            path,
            format_args!(
                "is {}: {len} bytes, its header says {want_len}",
                if len < want_len { "truncated" } else { "longer than written" }
            ),
        ));
    }
    let (sum, _) = hash_from(&mut f, USERBLOCK).map_err(io)?;
    if sum[..] != head[24..56] {
        return Err(bad(path, "is corrupted: its SHA-256 checksum does not match its content"));
    }
    Ok(true)
}

/// Before a checkpoint is written as `tmp` (op2's own name beside the checkpoint): whatever a
/// stopped write or anything else left there (a file, a symlink, a FIFO) is removed, so the
/// file written is always a new regular file, never a symlink's target or a FIFO that would
/// block; a directory there is `OP2_ERR_IO`.
pub fn clear_tmp(tmp: &str) -> Result<()> {
    match std::fs::symlink_metadata(tmp) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => op2_bail!(Io, "op2 checkpoint: cannot check '{tmp}': {e}"),
        Ok(m) if m.is_dir() => {
            op2_bail!(Io, "op2 checkpoint: cannot write '{tmp}': a directory is in the way of the temporary file")
        }
        Ok(_) => std::fs::remove_file(tmp)
            .map_err(|e| op2_err!(Io, "op2 checkpoint: cannot remove the old temporary file '{tmp}': {e}")),
    }
}

/// After the HDF5 part of `tmp` is written and closed (process 0 only): the header, `fsync`,
/// the optional test delay, rename over `path`, `fsync` of the directory.
pub fn seal(tmp: &str, path: &str, delay_ms: u64) -> Result<(std::time::Duration, std::time::Duration)> {
    let io = |what: &str, e: std::io::Error| op2_err!(Io, "op2 checkpoint: {what} '{tmp}': {e}");
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(tmp).map_err(|e| io("cannot open", e))?;
    let t = std::time::Instant::now();
    // The data goes to disk while the checksum is computed (the header follows, flushed again).
    let g = f.try_clone().map_err(|e| io("cannot open", e))?;
    let (hashed, flushed) = std::thread::scope(|s| {
        let flush = s.spawn(move || g.sync_data());
        let hashed = hash_from(&mut f, USERBLOCK);
        (hashed, flush.join())
    });
    let (sum, len) = hashed.map_err(|e| io("cannot read", e))?;
    match flushed {
        Ok(r) => r.map_err(|e| io("cannot flush", e))?,
        Err(_) => return Err(op2_err!(Io, "op2 checkpoint: flushing '{tmp}' failed")),
    }
    let hashing = t.elapsed();
    let mut head = [0u8; HEADER];
    head[..16].copy_from_slice(MAGIC);
    head[16..24].copy_from_slice(&len.to_le_bytes());
    head[24..56].copy_from_slice(&sum);
    f.seek(SeekFrom::Start(0)).map_err(|e| io("cannot write", e))?;
    f.write_all(&head).map_err(|e| io("cannot write", e))?;
    f.sync_all().map_err(|e| io("cannot flush", e))?;
    drop(f);
    let flushing = t.elapsed() - hashing;
    if delay_ms > 0 {
        // OP2_CHECKPOINT_TEST_DELAY_MS: a window in which tests kill the process mid-write.
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
    }
    std::fs::rename(tmp, path).map_err(|e| op2_err!(Io, "op2 checkpoint: cannot rename '{tmp}' to '{path}': {e}"))?;
    let dir = std::path::Path::new(path).parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or(std::path::Path::new("."));
    if let Ok(d) = std::fs::File::open(dir) {
        d.sync_all().map_err(|e| op2_err!(Io, "op2 checkpoint: cannot flush directory '{}': {e}", dir.display()))?;
    }
    Ok((hashing, flushing))
}

#[cfg(feature = "hdf5")]
pub use h5::*;

#[cfg(not(feature = "hdf5"))]
pub use noh5::*;

#[cfg(not(feature = "hdf5"))]
mod noh5 {
    use crate::error::Result;
    use crate::mpi::Comm;
    use crate::op2_bail;

    pub struct H5File;

    fn unavailable<T>() -> Result<T> {
        op2_bail!(
            BackendUnavailable,
            "op_checkpointing_init: op2 was built without feature hdf5 (checkpoints are HDF5 files)"
        )
    }
    pub fn create(_: &str, _: &Comm) -> Result<H5File> {
        unavailable()
    }
    pub fn open(_: &str, _: &Comm) -> Result<H5File> {
        unavailable()
    }
    impl H5File {
        pub fn write(&self, _: &str, _: u64, _: u64, _: &[u8], _: &Comm) -> Result<()> {
            unavailable()
        }
        pub fn read(&self, _: &str, _: u64, _: &mut [u8], _: &Comm) -> Result<u64> {
            unavailable()
        }
        pub fn len_of(&self, _: &str) -> Result<u64> {
            unavailable()
        }
        pub fn close(self, _: &Comm) -> Result<()> {
            Ok(())
        }
    }
}

#[cfg(feature = "hdf5")]
mod h5 {
    use crate::error::Result;
    use crate::mpi::Comm;
    use crate::op2_err;
    use hdf5_sys::h5i::hid_t;

    // Parallel HDF5's MPI-IO driver (the declarations and whether a call uses it), as
    // `io::hdf5` has them.
    use crate::io::hdf5::imp::mpio;

    /// An open checkpoint file (closed on drop, or by `close` to see the outcome).
    pub struct H5File {
        id: hid_t,
        path: String,
        mpio: bool,
    }

    impl Drop for H5File {
        fn drop(&mut self) {
            if self.id >= 0 {
                // SAFETY: our own file id.
                hdf5::sync::sync(|| unsafe { hdf5_sys::h5f::H5Fclose(self.id) });
            }
        }
    }

    fn h5(path: &str, what: &str) -> crate::error::Op2Error {
        let detail = hdf5::Error::query().map(|e| e.to_string()).unwrap_or_default();
        op2_err!(Checkpoint, "op2 checkpoint '{path}': {what} failed {detail}")
    }

    /// A file access list: the MPI-IO driver under MPI with a parallel HDF5.
    fn fapl(comm: &Comm) -> hid_t {
        use hdf5_sys::h5p::{H5Pcreate, H5P_CLS_FILE_ACCESS};
        // SAFETY: a new property list, closed by the caller.
        let fapl = unsafe { H5Pcreate(*H5P_CLS_FILE_ACCESS) };
        #[cfg(all(feature = "mpi", op2_hdf5_mpio))]
        if let Some(w) = comm.world.as_ref().filter(|_| mpio(comm)) {
            // SAFETY: op2's communicator, valid while op2 runs.
            unsafe { mpio::H5Pset_fapl_mpio(fapl, w.raw(), mpi::ffi::RSMPI_INFO_NULL) };
        }
        let _ = comm;
        fapl
    }

    /// Creates (truncates) `path` with the checkpoint's user block (collective under MPI).
    pub fn create(path: &str, comm: &Comm) -> Result<H5File> {
        use hdf5_sys::h5f::{H5Fcreate, H5F_ACC_TRUNC};
        use hdf5_sys::h5p::{H5Pclose, H5Pcreate, H5Pset_userblock, H5P_CLS_FILE_CREATE};
        let c =
            std::ffi::CString::new(path).map_err(|_| op2_err!(BadName, "op2 checkpoint: '{path}' holds a NUL byte"))?;
        comm.agree(if comm.rank() == 0 { super::clear_tmp(path) } else { Ok(()) })?;
        let _ = hdf5::Datatype::from_type::<u8>(); // initialises the library
                                                   // SAFETY: property lists created and closed here.
        let id = hdf5::sync::sync(|| unsafe {
            let fcpl = H5Pcreate(*H5P_CLS_FILE_CREATE);
            H5Pset_userblock(fcpl, super::USERBLOCK);
            let fa = fapl(comm);
            let id = H5Fcreate(c.as_ptr(), H5F_ACC_TRUNC, fcpl, fa);
            H5Pclose(fa);
            H5Pclose(fcpl);
            id
        });
        let f = H5File { id, path: path.to_string(), mpio: mpio(comm) };
        comm.agree(if id < 0 { Err(h5(path, "creating the file")) } else { Ok(()) })?;
        Ok(f)
    }

    /// Opens a checkpoint (verified first) for reading (collective under MPI).
    pub fn open(path: &str, comm: &Comm) -> Result<H5File> {
        use hdf5_sys::h5f::{H5Fopen, H5F_ACC_RDONLY};
        use hdf5_sys::h5p::H5Pclose;
        let c =
            std::ffi::CString::new(path).map_err(|_| op2_err!(BadName, "op2 checkpoint: '{path}' holds a NUL byte"))?;
        let _ = hdf5::Datatype::from_type::<u8>();
        // SAFETY: a property list created and closed here.
        let id = hdf5::sync::sync(|| unsafe {
            let fa = fapl(comm);
            let id = H5Fopen(c.as_ptr(), H5F_ACC_RDONLY, fa);
            H5Pclose(fa);
            id
        });
        let f = H5File { id, path: path.to_string(), mpio: mpio(comm) };
        comm.agree(if id < 0 { Err(h5(path, "opening the file as HDF5")) } else { Ok(()) })?;
        Ok(f)
    }

    struct Xfer(hid_t);
    impl Xfer {
        fn new(collective: bool) -> Xfer {
            #[cfg(all(feature = "mpi", op2_hdf5_mpio))]
            if collective {
                use hdf5_sys::h5p::{H5Pcreate, H5P_CLS_DATASET_XFER};
                // SAFETY: a property list created here, closed on drop.
                let id = unsafe { H5Pcreate(*H5P_CLS_DATASET_XFER) };
                if id >= 0 {
                    // SAFETY: as above.
                    unsafe { mpio::H5Pset_dxpl_mpio(id, mpio::COLLECTIVE) };
                    return Xfer(id);
                }
            }
            let _ = collective;
            Xfer(hdf5_sys::h5p::H5P_DEFAULT)
        }
    }
    impl Drop for Xfer {
        fn drop(&mut self) {
            if self.0 != hdf5_sys::h5p::H5P_DEFAULT {
                // SAFETY: our own property list.
                unsafe { hdf5_sys::h5p::H5Pclose(self.0) };
            }
        }
    }

    /// Selects bytes `[offset, offset + n)` of 1-D space `fs` (nothing when n is 0) and a
    /// memory space of n bytes (at least 1).
    ///
    /// # Safety
    /// `fs` is a valid dataspace id.
    unsafe fn select(fs: hid_t, offset: u64, n: u64) -> (hid_t, i32) {
        use hdf5_sys::h5s::{H5S_seloper_t, H5Screate_simple, H5Sselect_hyperslab, H5Sselect_none};
        let dims = [n.max(1)];
        let ms = H5Screate_simple(1, dims.as_ptr(), std::ptr::null());
        let rc = if n == 0 {
            H5Sselect_none(fs).min(H5Sselect_none(ms))
        } else {
            let (st, ct) = ([offset], [n]);
            H5Sselect_hyperslab(
                fs,
                H5S_seloper_t::H5S_SELECT_SET,
                st.as_ptr(),
                std::ptr::null(),
                ct.as_ptr(),
                std::ptr::null(),
            )
        };
        (ms, rc)
    }

    impl H5File {
        /// Creates the 1-D byte dataset `name` of `total` bytes and writes this process's
        /// `bytes` at `offset` (collective under MPI: every process calls it, maybe with none).
        pub fn write(&self, name: &str, total: u64, offset: u64, bytes: &[u8], comm: &Comm) -> Result<()> {
            use hdf5_sys::h5d::{H5Dclose, H5Dcreate2, H5Dget_space, H5Dwrite};
            use hdf5_sys::h5p::H5P_DEFAULT;
            use hdf5_sys::h5s::{H5Sclose, H5Screate_simple};
            let c = std::ffi::CString::new(name).map_err(|_| op2_err!(Internal, "checkpoint dataset name"))?;
            let ty = hdf5::Datatype::from_type::<u8>().map_err(|_| h5(&self.path, "the byte type"))?;
            let xfer = Xfer::new(self.mpio);
            let mut dummy = [0u8; 1];
            let buf = if bytes.is_empty() { dummy.as_mut_ptr() as *const u8 } else { bytes.as_ptr() };
            // SAFETY: spaces and the dataset are created and closed here; `buf` holds the
            // selected number of bytes (or the dummy with nothing selected).
            let rc = hdf5::sync::sync(|| unsafe {
                let dims = [total.max(1)];
                let space = H5Screate_simple(1, dims.as_ptr(), std::ptr::null());
                let ds = H5Dcreate2(self.id, c.as_ptr(), ty.id(), space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
                H5Sclose(space);
                if ds < 0 {
                    return -1;
                }
                let fs = H5Dget_space(ds);
                let (ms, mut rc) = select(fs, offset, bytes.len() as u64);
                if rc >= 0 {
                    rc = H5Dwrite(ds, ty.id(), ms, fs, xfer.0, buf as *const _);
                }
                H5Sclose(ms);
                H5Sclose(fs);
                H5Dclose(ds);
                rc
            });
            comm.agree(if rc < 0 { Err(h5(&self.path, &format!("writing '{name}'"))) } else { Ok(()) })
        }

        /// The length in bytes of dataset `name` (an error naming it when missing).
        pub fn len_of(&self, name: &str) -> Result<u64> {
            use hdf5_sys::h5d::{H5Dclose, H5Dget_space, H5Dopen2};
            use hdf5_sys::h5p::H5P_DEFAULT;
            use hdf5_sys::h5s::{H5Sclose, H5Sget_simple_extent_dims, H5Sget_simple_extent_ndims};
            let c = std::ffi::CString::new(name).map_err(|_| op2_err!(Internal, "checkpoint dataset name"))?;
            // SAFETY: ids opened and closed here.
            let n = hdf5::sync::sync(|| unsafe {
                let ds = H5Dopen2(self.id, c.as_ptr(), H5P_DEFAULT);
                if ds < 0 {
                    return None;
                }
                let fs = H5Dget_space(ds);
                let mut d = [0u64; 1];
                let ok = H5Sget_simple_extent_ndims(fs) == 1
                    && H5Sget_simple_extent_dims(fs, d.as_mut_ptr(), std::ptr::null_mut()) == 1;
                H5Sclose(fs);
                H5Dclose(ds);
                ok.then_some(d[0])
            });
            n.ok_or_else(|| op2_err!(Checkpoint, "op2 checkpoint '{}': no dataset '{name}' of bytes", self.path))
        }

        /// Reads `out.len()` bytes of dataset `name` from `offset` (collective under MPI).
        pub fn read(&self, name: &str, offset: u64, out: &mut [u8], comm: &Comm) -> Result<u64> {
            use hdf5_sys::h5d::{H5Dclose, H5Dget_space, H5Dopen2, H5Dread};
            use hdf5_sys::h5p::H5P_DEFAULT;
            use hdf5_sys::h5s::H5Sclose;
            let total = comm.agree(self.len_of(name))?;
            let c = std::ffi::CString::new(name).map_err(|_| op2_err!(Internal, "checkpoint dataset name"))?;
            let ty = hdf5::Datatype::from_type::<u8>().map_err(|_| h5(&self.path, "the byte type"))?;
            let xfer = Xfer::new(self.mpio);
            let in_range = offset.checked_add(out.len() as u64).is_some_and(|e| e <= total);
            let n = if in_range { out.len() as u64 } else { 0 };
            let mut dummy = [0u8; 1];
            let buf = if n == 0 { dummy.as_mut_ptr() } else { out.as_mut_ptr() };
            // SAFETY: ids opened and closed here; `buf` holds the selected bytes.
            let rc = hdf5::sync::sync(|| unsafe {
                let ds = H5Dopen2(self.id, c.as_ptr(), H5P_DEFAULT);
                if ds < 0 {
                    return -1;
                }
                let fs = H5Dget_space(ds);
                let (ms, mut rc) = select(fs, offset, n);
                if rc >= 0 {
                    rc = H5Dread(ds, ty.id(), ms, fs, xfer.0, buf as *mut _);
                }
                H5Sclose(ms);
                H5Sclose(fs);
                H5Dclose(ds);
                rc
            });
            let r = if !in_range {
                Err(op2_err!(
                    Checkpoint,
                    "op2 checkpoint '{}': dataset '{name}' holds {total} bytes, {} wanted from {offset}",
                    self.path,
                    out.len()
                ))
            } else if rc < 0 {
                Err(h5(&self.path, &format!("reading '{name}'")))
            } else {
                Ok(total)
            };
            comm.agree(r)
        }

        /// Closes the file (collective under MPI), reporting a failure.
        pub fn close(mut self, comm: &Comm) -> Result<()> {
            let id = std::mem::replace(&mut self.id, -1);
            // SAFETY: our own file id, closed once.
            let rc = hdf5::sync::sync(|| unsafe { hdf5_sys::h5f::H5Fclose(id) });
            comm.agree(if rc < 0 { Err(h5(&self.path, "closing the file")) } else { Ok(()) })
        }
    }
}
