//! Files: VTK output for ParaView (`vtk`) and OP2's HDF5 mesh files (`hdf5`, feature `hdf5`).
//!
//! Plain Rust over a `Context`; the C functions are in `api::io`, which first make the host
//! bytes of the dats involved current (`Context::sync_to_host`, the residency choke point).
//! Dat rows and map values are then read through `Context::declared_rows` (one process: the
//! declared order whatever `op_renumber` did to the storage) or, under MPI, through
//! `mpi::dist::dat_block` / `map_block` (HDF5: the declared block in original order) and the
//! local rows (VTK pieces).
//!
//! Names: every object an output file holds has a name of its own in that file; a collision
//! is `OP2_ERR_FILE_FORMAT` naming both objects, found before anything is written.

pub mod elf;
pub mod hdf5;
pub mod vtk;

/// Writes `bytes` as the whole of the file `path` (created or truncated). When the write fails
/// after the file was opened (a full disk, a quota), the incomplete file is removed, so nothing
/// half-written is left under the name asked for; a file that could not be opened is left as it
/// was. The error says which happened.
pub(crate) fn write_whole(path: &str, bytes: &[u8]) -> std::result::Result<(), String> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(|e| e.to_string())?;
    match f.write_all(bytes).and_then(|_| f.flush()) {
        Ok(()) => Ok(()),
        Err(e) => {
            drop(f);
            match std::fs::remove_file(path) {
                Ok(()) => Err(format!("{e} (the incomplete file was removed)")),
                Err(r) => Err(format!("{e} (the incomplete file could not be removed: {r})")),
            }
        }
    }
}

/// What kind of thing a file type is, for messages.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading without blocking (`O_NONBLOCK`: a FIFO with no writer must not
/// hang the open), without making it the controlling terminal, and says what it is.
fn open_nonblocking(path: &std::path::Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)?;
    let meta = f.metadata()?;
    Ok((f, meta))
}

/// Opens an input file as a file: without blocking (`O_NONBLOCK`: a FIFO with no writer must
/// not hang the open) and only if it is a regular file (a FIFO, a device, a socket or a
/// directory is `OP2_ERR_IO` naming what it is). Returns the open file and its length.
pub(crate) fn open_regular(path: &str, call: &str) -> crate::error::Result<(std::fs::File, u64)> {
    let (f, meta) = open_nonblocking(std::path::Path::new(path))
        .map_err(|e| crate::op2_err!(Io, "{call}: cannot open '{path}': {e}"))?;
    if !meta.file_type().is_file() {
        crate::op2_bail!(Io, "{call}: '{path}' is {}; op2 reads only regular files", kind_of(meta.file_type()));
    }
    Ok((f, meta.len()))
}

/// `read_regular` for callers that speak `std::io::Error` (the JIT's headers, `OP2_GENERATE`'s
/// manifest): the whole of a regular file, opened without blocking; anything else (a FIFO, a
/// device, a directory) is an `InvalidInput` error naming what it is, at once.
pub(crate) fn read_regular_io(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (f, meta) = open_nonblocking(path)?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("'{}' is {}; op2 reads only regular files", path.display(), kind_of(meta.file_type())),
        ));
    }
    let n = usize::try_from(meta.len()).map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(n).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("cannot allocate {n} bytes for '{}'", path.display()),
        )
    })?;
    f.take(meta.len()).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The length of a regular input file (see `open_regular`), which is then closed.
#[cfg(feature = "hdf5")]
pub(crate) fn regular_file_len(path: &str, call: &str) -> crate::error::Result<u64> {
    open_regular(path, call).map(|(_, len)| len)
}

/// The whole of a regular input file (see `open_regular`), read into memory allocated
/// fallibly for its length (`OP2_ERR_OUT_OF_MEMORY` when refused); a file that grows while
/// it is read is read up to the length it had.
pub(crate) fn read_regular(path: &str, call: &str) -> crate::error::Result<Vec<u8>> {
    use std::io::Read;
    let (f, len) = open_regular(path, call)?;
    let n = usize::try_from(len).map_err(|_| crate::op2_err!(BadSize, "{call}: '{path}' is {len} bytes long"))?;
    let mut bytes = crate::core::alloc::with_capacity::<u8>(n, &format!("{call}: reading '{path}'"))?;
    f.take(len).read_to_end(&mut bytes).map_err(|e| crate::op2_err!(Io, "{call}: cannot read '{path}': {e}"))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn refuses_what_is_not_a_regular_file() {
        let e = open_regular("/dev/null", "t").unwrap_err();
        assert_eq!(e.code, ErrorCode::Io);
        assert!(e.message.contains("'/dev/null' is a character device"), "{}", e.message);
        let e = open_regular("/", "t").unwrap_err();
        assert_eq!(e.code, ErrorCode::Io);
        assert!(e.message.contains("a directory"), "{}", e.message);
        let dir = std::env::temp_dir().join(format!("op2-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = std::time::Instant::now();
        let e = read_regular(fifo.to_str().unwrap(), "t").unwrap_err();
        assert_eq!(e.code, ErrorCode::Io);
        assert!(e.message.contains("is a FIFO"), "{}", e.message);
        assert!(t.elapsed().as_secs() < 5);
        let e = read_regular_io(&fifo).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("is a FIFO"), "{e}");
        assert!(read_regular_io(&dir).unwrap_err().to_string().contains("is a directory"));
        let file = dir.join("g");
        std::fs::write(&file, b"abc").unwrap();
        assert_eq!(read_regular(file.to_str().unwrap(), "t").unwrap(), b"abc");
        assert_eq!(read_regular_io(&file).unwrap(), b"abc");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn write_whole_writes_and_reports() {
        let dir = std::env::temp_dir().join(format!("op2-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.txt");
        write_whole(p.to_str().unwrap(), b"abc").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
        // A file that cannot be opened is left alone (here: a directory in its place).
        let e = write_whole(dir.to_str().unwrap(), b"abc").unwrap_err();
        assert!(e.contains("directory"), "{e}");
        assert!(dir.is_dir());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
