//! Files as op2 reads and writes them: an input file is opened without blocking and read only
//! when it is a regular file; an output file is written whole or removed. Used by every layer
//! that touches files (code generation's includes, the JIT's caches, the driver's files).

/// Writes `bytes` as the whole of the file `path` (created or truncated). When the write fails
/// after the file was opened (a full disk, a quota), what op2 wrote is removed (see
/// `discard_written`: the file, or the file a symlink at `path` leads to, never the link), so
/// nothing half-written is left under the name asked for; a file that could not be opened is
/// left as it was. The error says which happened.
pub(crate) fn write_whole(path: &str, bytes: &[u8]) -> std::result::Result<(), String> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(|e| e.to_string())?;
    match f.write_all(bytes).and_then(|_| f.flush()) {
        Ok(()) => Ok(()),
        Err(e) => Err(format!("{e}{}", discard_note(path, Some(&f)))),
    }
}

/// What `discard_written` did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Discarded {
    /// The file at the path was removed.
    Removed,
    /// The path is a symlink (kept): the regular file it leads to, named here, was removed.
    RemovedTarget(String),
    /// The name no longer leads to the file written (something replaced it meanwhile): that
    /// file was emptied through the open descriptor instead, and the name left alone.
    Emptied,
    /// What was written is not a regular file (a device such as `/dev/full`, a FIFO): nothing
    /// to remove.
    NotAFile(&'static str),
}

/// After a write to `path` failed part way: removes what op2 wrote there and nothing else.
/// `written` is the open file op2 wrote through, when there is one: only a file with its device
/// and inode is removed. Where `path` is a symlink, the link is the user's and stays; the
/// regular file it resolves to (which op2 truncated and wrote, or created through a dangling
/// link) is removed, so the next writer of `path` writes through the same link again. A device
/// or FIFO is never removed.
pub(crate) fn discard_written(path: &str, written: Option<&std::fs::File>) -> std::io::Result<Discarded> {
    use std::os::unix::fs::MetadataExt;
    let id = |m: &std::fs::Metadata| (m.dev(), m.ino());
    let wrote = written.map(|f| f.metadata()).transpose()?;
    if let Some(w) = wrote.as_ref().filter(|w| !w.file_type().is_file()) {
        return Ok(Discarded::NotAFile(kind_of(w.file_type())));
    }
    let here = std::fs::symlink_metadata(path)?;
    let link = here.file_type().is_symlink();
    let (target, meta) = if link {
        let t = std::fs::canonicalize(path)?;
        let m = std::fs::symlink_metadata(&t)?;
        (t, m)
    } else {
        (std::path::PathBuf::from(path), here)
    };
    if !meta.file_type().is_file() {
        return Ok(Discarded::NotAFile(kind_of(meta.file_type())));
    }
    if let (Some(f), Some(w)) = (written, wrote.as_ref()) {
        if id(w) != id(&meta) {
            f.set_len(0)?;
            return Ok(Discarded::Emptied);
        }
    }
    std::fs::remove_file(&target)?;
    Ok(if link { Discarded::RemovedTarget(target.display().to_string()) } else { Discarded::Removed })
}

/// `discard_written`, told as the end of an error message: what was removed, or why nothing.
pub(crate) fn discard_note(path: &str, written: Option<&std::fs::File>) -> String {
    match discard_written(path, written) {
        Ok(Discarded::Removed) => " (the incomplete file was removed)".to_string(),
        Ok(Discarded::RemovedTarget(t)) => {
            format!(" (the incomplete file '{t}' was removed; the symlink '{path}' to it was kept)")
        }
        Ok(Discarded::Emptied) => {
            format!(" ('{path}' was replaced meanwhile: the incomplete file written was emptied, '{path}' left alone)")
        }
        Ok(Discarded::NotAFile(kind)) => format!(" (nothing was removed: what '{path}' leads to is {kind})"),
        Err(r) => format!(" (the incomplete file could not be removed: {r})"),
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
        // A blocking open would hang here (no time limit: the machine may be busy).
        let e = read_regular(fifo.to_str().unwrap(), "t").unwrap_err();
        assert_eq!(e.code, ErrorCode::Io);
        assert!(e.message.contains("is a FIFO"), "{}", e.message);
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

    /// The cleanup after a failed write removes what op2 wrote and never a symlink: a regular
    /// file at the path goes; through a symlink (to an existing file or, dangling, to one the
    /// write created) the target goes and the link stays; a device is left; a name replaced
    /// since the open is left alone and the file written emptied through its descriptor.
    #[test]
    fn discard_written_keeps_symlinks() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("op2-discard-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
        let is_link = |p: &std::path::Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());

        let plain = dir.join("plain.txt");
        let mut f = std::fs::File::create(&plain).unwrap();
        f.write_all(b"half").unwrap();
        assert_eq!(discard_written(&s(&plain), Some(&f)).unwrap(), Discarded::Removed);
        assert!(!plain.exists());

        for existing in [true, false] {
            let target = dir.join("data").join(if existing { "old.txt" } else { "new.txt" });
            if existing {
                std::fs::write(&target, b"the user's older file").unwrap();
            }
            let link = dir.join(if existing { "old-link" } else { "new-link" });
            std::os::unix::fs::symlink(&target, &link).unwrap();
            let mut f = std::fs::File::create(&link).unwrap(); // truncates or creates the target
            f.write_all(b"half").unwrap();
            let d = discard_written(&s(&link), Some(&f)).unwrap();
            assert_eq!(d, Discarded::RemovedTarget(s(&std::fs::canonicalize(&target).unwrap_or(target.clone()))));
            assert!(is_link(&link), "the symlink was removed");
            assert!(!target.exists(), "the target op2 wrote is still there");
        }

        let full = dir.join("full");
        std::os::unix::fs::symlink("/dev/full", &full).unwrap();
        let e = write_whole(&s(&full), &[0u8; 10000]).unwrap_err();
        assert!(e.contains("No space left on device") && e.contains("a character device"), "{e}");
        assert!(is_link(&full) && std::path::Path::new("/dev/full").exists());

        let moved = dir.join("moved.txt");
        let mut f = std::fs::File::create(&plain).unwrap();
        f.write_all(b"half").unwrap();
        std::fs::rename(&plain, &moved).unwrap();
        std::fs::write(&plain, b"someone else's").unwrap();
        assert_eq!(discard_written(&s(&plain), Some(&f)).unwrap(), Discarded::Emptied);
        assert_eq!(std::fs::read(&plain).unwrap(), b"someone else's");
        assert_eq!(std::fs::metadata(&moved).unwrap().len(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
