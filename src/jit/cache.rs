//! The content-keyed disk cache of compiled loops, safe for concurrent processes and against
//! other users.
//!
//! An entry is `<key>.so`: the compiled library, then the list of files it was compiled from
//! (headers the kernel `#include`s, with the SHA-256 of each), then a trailer (length of that
//! list, magic, SHA-256 of everything before it). ELF loaders ignore trailing bytes, so the file
//! is loadable as it is, and a reader can tell a complete entry from a truncated or foreign one.
//!
//! Whoever can write an entry or the directory holding it can make this process run their code,
//! so the directory is checked once and then pinned: [`DiskCache::open`] resolves the path
//! (`realpath`), checks the directory and every ancestor the way OpenSSH's `secure_path` does,
//! and keeps a descriptor of it; every later operation is relative to that descriptor
//! (`openat`, `renameat`, `fstatat`, `unlinkat`), so a repointed symlink or a `chdir` after
//! `op_init` cannot redirect it. An entry is read and loaded through one descriptor, opened
//! without following symlinks and without blocking, and used only if it is a regular file owned
//! by this user and writable by nobody else; the loader maps exactly that inode
//! (`/proc/self/fd/N`). Anything else in an entry's place (symlink, FIFO, device, directory,
//! a file of another owner or with loose permissions, a bad trailer) is never read: the entry is
//! rebuilt and the new one replaces it atomically.
//!
//! Writers compile in a private temporary directory inside the cache directory and `renameat`
//! the sealed library into place, so a reader sees either no entry or a complete one.

use crate::codegen::hex;
use crate::error::Result;
use crate::op2_bail;
use sha2::{Digest, Sha256};
use std::ffi::{CString, OsStr};
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"OP2JIT02";
/// Dependency-list length (u64) + magic + SHA-256.
const TRAILER: usize = 8 + 8 + 32;

/// A file an entry was compiled from, with the SHA-256 of its contents at compile time. A
/// relative path is relative to the working directory, as the compiler saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dep {
    pub path: PathBuf,
    pub sha: [u8; 32],
}

impl Dep {
    /// Hashes the file at `path` now (read as op2 reads every input file: without blocking, a
    /// regular file only, so a header replaced by a FIFO is an error, never a hang).
    pub fn of(path: &Path) -> std::io::Result<Dep> {
        let bytes = crate::core::file::read_regular_io(path)?;
        Ok(Dep { path: path.to_path_buf(), sha: Sha256::digest(&bytes).into() })
    }

    /// Hashes the file at `path` as a compile that started at `start` read it. A file modified
    /// since `start` may have been read in another state than it is hashed in now: it gets a
    /// hash no contents have, so the entry is rebuilt at its next lookup (as ccache does).
    pub fn of_compiled(path: &Path, start: std::time::SystemTime) -> Dep {
        let changed = fs::metadata(path).and_then(|m| m.modified()).map_or(true, |t| t >= start);
        match Dep::of(path) {
            Ok(d) if !changed => d,
            _ => Dep { path: path.to_path_buf(), sha: [0; 32] },
        }
    }

    /// Whether the file still has the contents it had when the entry was compiled.
    pub fn is_current(&self) -> bool {
        crate::core::file::read_regular_io(&self.path).is_ok_and(|b| Sha256::digest(&b).as_slice() == self.sha)
    }
}

/// The first dependency in `deps` whose file changed (or disappeared) since compile time.
pub fn stale_dep(deps: &[Dep]) -> Option<&Dep> {
    deps.iter().find(|d| !d.is_current())
}

/// A verified entry, open: `file` is the descriptor the checks and the trailer were read from.
#[derive(Debug)]
pub struct Entry {
    pub file: File,
    pub deps: Vec<Dep>,
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    Hit(Entry),
    Missing,
    /// Something unusable is in the entry's place; why (for diagnostics). It was not read.
    Rebuild(String),
}

/// A validated, pinned cache directory.
#[derive(Debug, Clone)]
pub struct DiskCache {
    /// The resolved absolute path, for messages and for the compiler's command line.
    dir: PathBuf,
    fd: Arc<OwnedFd>,
    uid: u32,
}

fn cstr(name: &str) -> std::io::Result<CString> {
    CString::new(name).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
}

fn check(ret: libc::c_int) -> std::io::Result<libc::c_int> {
    if ret < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-pointer.
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

fn fstatat_nofollow(dirfd: RawFd, name: &str) -> std::io::Result<libc::stat> {
    let c = cstr(name)?;
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated, `st` a valid out-pointer.
    check(unsafe { libc::fstatat(dirfd, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
    Ok(st)
}

fn openat(dirfd: RawFd, name: &str, flags: libc::c_int, mode: libc::mode_t) -> std::io::Result<OwnedFd> {
    let c = cstr(name)?;
    // SAFETY: `c` is NUL-terminated; the descriptor returned is ours alone.
    let fd = check(unsafe { libc::openat(dirfd, c.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) })?;
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn renameat(from_dir: RawFd, from: &str, to_dir: RawFd, to: &str) -> std::io::Result<()> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    // SAFETY: both names are NUL-terminated.
    check(unsafe { libc::renameat(from_dir, f.as_ptr(), to_dir, t.as_ptr()) }).map(drop)
}

fn unlinkat(dirfd: RawFd, name: &str, flags: libc::c_int) -> std::io::Result<()> {
    let c = cstr(name)?;
    // SAFETY: `c` is NUL-terminated.
    check(unsafe { libc::unlinkat(dirfd, c.as_ptr(), flags) }).map(drop)
}

fn file_type_name(mode: libc::mode_t) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "a regular file",
        libc::S_IFDIR => "a directory",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFSOCK => "a socket",
        _ => "not a regular file",
    }
}

/// Why a file with this status may not be trusted as a cache entry by `uid`, if it may not.
fn untrusted_file(st: &libc::stat, uid: u32) -> Option<String> {
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Some(format!("is {}", file_type_name(st.st_mode)));
    }
    if st.st_uid != uid {
        return Some(format!("is owned by uid {}, not by this user (uid {uid})", st.st_uid));
    }
    if st.st_mode & 0o022 != 0 {
        return Some(format!("is writable by group or others (mode {:o})", st.st_mode & 0o7777));
    }
    None
}

/// Why the ancestors of `real` (an absolute, resolved path) may not be trusted by `me`, if they
/// may not: each must be owned by root or `me` and not writable by group or others unless
/// sticky (like `/tmp`), as OpenSSH's `secure_path` requires. Whoever can rename or replace an
/// ancestor can swap what lies below it.
pub(crate) fn untrusted_ancestor(real: &Path, me: u32) -> std::result::Result<(), String> {
    let mut up = real.parent();
    while let Some(a) = up {
        let m = fs::symlink_metadata(a).map_err(|e| format!("cannot be checked: '{}': {e}", a.display()))?;
        if m.uid() != 0 && m.uid() != me {
            return Err(format!(
                "is inside '{}', which is owned by uid {}, neither root nor this user (uid {me})",
                a.display(),
                m.uid()
            ));
        }
        let amode = m.mode() & 0o7777;
        if amode & 0o022 != 0 && amode & 0o1000 == 0 {
            return Err(format!(
                "is inside '{}', which is writable by others (mode {amode:o}) and not sticky",
                a.display()
            ));
        }
        up = a.parent();
    }
    Ok(())
}

/// The default locations of the cache directory (used when `OP2_CACHE_DIR` is not set), as
/// config.rs derives them from the environment; any of them that is a symlink is refused.
fn default_locations() -> Vec<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let mut v = Vec::new();
    if let Some(x) = var("XDG_CACHE_HOME") {
        v.push(PathBuf::from(x).join("op2"));
    }
    if let Some(h) = var("HOME") {
        v.push(PathBuf::from(h).join(".cache").join("op2"));
    }
    // SAFETY: geteuid has no preconditions.
    v.push(std::env::temp_dir().join(format!("op2-cache-{}", unsafe { libc::geteuid() })));
    v
}

impl DiskCache {
    /// Opens (creating with mode 0700 if needed), checks and pins the cache directory.
    ///
    /// The path is resolved once (`realpath`); the directory must be owned by the current user
    /// and not writable by group or others, and every ancestor must be owned by root or the
    /// current user and not writable by group or others unless sticky (like `/tmp`). A default
    /// location (no `OP2_CACHE_DIR`) that is a symlink is refused. The directory is opened with
    /// `O_DIRECTORY|O_NOFOLLOW` and every later operation goes through that descriptor.
    pub fn open(dir: &Path) -> Result<DiskCache> {
        let shown = dir.display();
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if default_locations().iter().any(|d| d == dir)
            && fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink())
        {
            op2_bail!(
                CacheDir,
                "op_init: the default JIT cache directory '{shown}' is a symbolic link; remove it, or set OP2_CACHE_DIR to a directory of your own"
            );
        }
        if !dir.exists() {
            if let Err(e) = fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
                op2_bail!(CacheDir, "op_init: cannot create the JIT cache directory '{shown}': {e}");
            }
        }
        let real = match fs::canonicalize(dir) {
            Ok(r) => r,
            Err(e) => op2_bail!(CacheDir, "op_init: cannot use the JIT cache directory '{shown}': {e}"),
        };
        let also = if real != dir { format!(" (resolved to '{}')", real.display()) } else { String::new() };
        let c = match CString::new(real.as_os_str().as_bytes()) {
            Ok(c) => c,
            Err(_) => op2_bail!(CacheDir, "op_init: the JIT cache directory '{shown}' has a NUL byte in its path"),
        };
        // SAFETY: `c` is NUL-terminated.
        let raw =
            unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
        if raw < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOTDIR) {
                op2_bail!(CacheDir, "op_init: the JIT cache directory '{shown}'{also} is not a directory");
            }
            op2_bail!(CacheDir, "op_init: cannot open the JIT cache directory '{shown}'{also}: {e}");
        }
        // SAFETY: `raw` was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let st = match fstat(fd.as_raw_fd()) {
            Ok(s) => s,
            Err(e) => op2_bail!(CacheDir, "op_init: cannot use the JIT cache directory '{shown}'{also}: {e}"),
        };
        if st.st_uid != me {
            op2_bail!(
                CacheDir,
                "op_init: the JIT cache directory '{shown}'{also} is owned by uid {}, not by this user (uid {me}); set OP2_CACHE_DIR to a directory of your own",
                st.st_uid
            );
        }
        let mode = st.st_mode & 0o7777;
        if mode & 0o022 != 0 {
            op2_bail!(
                CacheDir,
                "op_init: the JIT cache directory '{shown}'{also} is writable by others (mode {mode:o}); use chmod 700 or another OP2_CACHE_DIR"
            );
        }
        // Every ancestor: whoever can rename or replace one can swap the directory under us.
        if let Err(why) = untrusted_ancestor(&real, me) {
            op2_bail!(CacheDir, "op_init: the JIT cache directory '{shown}'{also} {why}");
        }
        // The path still names the directory we opened and checked.
        match fs::symlink_metadata(&real) {
            Ok(m) if m.dev() == st.st_dev && m.ino() == st.st_ino => {}
            _ => op2_bail!(
                CacheDir,
                "op_init: the JIT cache directory '{shown}'{also} changed while it was being checked"
            ),
        }
        Ok(DiskCache { dir: real, fd: Arc::new(fd), uid: me })
    }

    /// The resolved absolute path of the directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn dirfd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// File name of the library entry for `key`.
    pub fn lib_name(key: &str) -> String {
        format!("{key}.so")
    }

    /// File name of the source kept beside the entry.
    pub fn src_name(key: &str) -> String {
        format!("{key}.c")
    }

    /// Path of the library entry for `key` (for messages only: never opened by path).
    pub fn lib_path(&self, key: &str) -> PathBuf {
        self.dir.join(Self::lib_name(key))
    }

    /// Path of the source kept beside the entry (for compiler messages and inspection).
    pub fn src_path(&self, key: &str) -> PathBuf {
        self.dir.join(Self::src_name(key))
    }

    /// Looks up the entry for `key`: a complete entry that passes every check, open; nothing;
    /// or something in its place that must be rebuilt (never read, never blocked on).
    pub fn lookup(&self, key: &str) -> Lookup {
        self.lookup_named(&Self::lib_name(key))
    }

    /// `lookup` of the entry file `name` in the cache directory (an entry under another
    /// extension than `.so`, e.g. an OpenCL program binary), under the same checks.
    pub fn lookup_named(&self, name: &str) -> Lookup {
        let st = match fstatat_nofollow(self.dirfd(), name) {
            Ok(st) => st,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Lookup::Missing,
            Err(e) => return Lookup::Rebuild(format!("cannot check it: {e}")),
        };
        if let Some(why) = untrusted_file(&st, self.uid) {
            if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                // rename cannot replace a directory: remove it if it is empty.
                let _ = unlinkat(self.dirfd(), name, libc::AT_REMOVEDIR);
            }
            return Lookup::Rebuild(why);
        }
        // O_NONBLOCK: should a FIFO or device have replaced the file since fstatat, opening it
        // does not wait for a writer; it is then refused by the checks on the descriptor.
        let fd = match openat(self.dirfd(), name, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Lookup::Missing,
            Err(e) => return Lookup::Rebuild(format!("cannot open it: {e}")),
        };
        let st = match fstat(fd.as_raw_fd()) {
            Ok(st) => st,
            Err(e) => return Lookup::Rebuild(format!("cannot check it: {e}")),
        };
        if let Some(why) = untrusted_file(&st, self.uid) {
            return Lookup::Rebuild(why);
        }
        let mut file = File::from(fd);
        let mut bytes = Vec::with_capacity(st.st_size.max(0) as usize);
        if let Err(e) = file.read_to_end(&mut bytes) {
            return Lookup::Rebuild(format!("cannot read it: {e}"));
        }
        match parse_entry(&bytes) {
            Some((_, deps)) => Lookup::Hit(Entry { file, deps }),
            None => Lookup::Rebuild("is truncated or corrupt (bad trailer)".to_string()),
        }
    }

    /// A small note kept beside the entry for `key` (`<key>.<what>`, e.g. the SIMD verdict),
    /// trusted only as entries are (a regular file of ours, writable by nobody else, opened
    /// without following links or blocking); at most 64 bytes.
    pub fn read_note(&self, key: &str, what: &str) -> Option<String> {
        let name = format!("{key}.{what}");
        let st = fstatat_nofollow(self.dirfd(), &name).ok()?;
        if untrusted_file(&st, self.uid).is_some() {
            return None;
        }
        let fd = openat(self.dirfd(), &name, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0).ok()?;
        let st = fstat(fd.as_raw_fd()).ok()?;
        if untrusted_file(&st, self.uid).is_some() || st.st_size > 64 {
            return None;
        }
        let mut text = String::new();
        File::from(fd).take(64).read_to_string(&mut text).ok()?;
        Some(text)
    }

    /// Writes a note (see `read_note`) atomically: a new private file, renamed into place.
    pub fn write_note(&self, key: &str, what: &str, text: &str) -> std::io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = format!(".{key}.{what}.{}.{n}.tmp", std::process::id());
        let fd = openat(
            self.dirfd(),
            &tmp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o600,
        )?;
        let written = File::from(fd).write_all(text.as_bytes());
        let moved = written.and_then(|_| renameat(self.dirfd(), &tmp, self.dirfd(), &format!("{key}.{what}")));
        if moved.is_err() {
            let _ = unlinkat(self.dirfd(), &tmp, 0);
        }
        moved
    }

    /// A new private (0700) temporary directory inside the cache directory for one compile.
    pub fn scratch(&self, key: &str) -> Result<Scratch> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let fail = |e: std::io::Error| {
            crate::op2_err!(Io, "JIT cache '{}': cannot create a temporary directory: {e}", self.dir.display())
        };
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = format!(".{}.{}.{n}.{nanos}.tmp", &key[..key.len().min(16)], std::process::id());
            let c = cstr(&name).map_err(fail)?;
            // SAFETY: `c` is NUL-terminated.
            match check(unsafe { libc::mkdirat(self.dirfd(), c.as_ptr(), 0o700) }) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                Err(e) => return Err(fail(e)),
            }
            let opened = openat(self.dirfd(), &name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0);
            let fd = match opened {
                Ok(fd) => fd,
                Err(e) => {
                    let _ = unlinkat(self.dirfd(), &name, libc::AT_REMOVEDIR);
                    return Err(fail(e));
                }
            };
            let scratch = Scratch { cache: self.clone(), name, fd };
            match fstat(scratch.fd.as_raw_fd()) {
                Ok(st) if st.st_uid == self.uid && st.st_mode & 0o077 == 0 => return Ok(scratch),
                Ok(_) => return Err(fail(std::io::Error::other("it is not private to this user"))),
                Err(e) => return Err(fail(e)),
            }
        }
        Err(fail(std::io::Error::from(std::io::ErrorKind::AlreadyExists)))
    }
}

/// A private temporary directory inside the cache directory; removed (with what is left in it)
/// when dropped.
#[derive(Debug)]
pub struct Scratch {
    cache: DiskCache,
    name: String,
    fd: OwnedFd,
}

/// Names of the files a compile leaves in its scratch directory.
pub const SCRATCH_SRC: &str = "src.c";
pub const SCRATCH_LIB: &str = "out.so";
pub const SCRATCH_DEPS: &str = "deps.d";

impl Scratch {
    /// The path of `file` inside the scratch directory, for the compiler's command line.
    pub fn path(&self, file: &str) -> PathBuf {
        self.cache.dir.join(&self.name).join(file)
    }

    /// Creates `file` (which must not exist) with `text`.
    pub fn write(&self, file: &str, text: &[u8]) -> std::io::Result<()> {
        let fd =
            openat(self.fd.as_raw_fd(), file, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW, 0o600)?;
        File::from(fd).write_all(text)
    }

    /// Reads `file` if it is a regular file of this user.
    pub fn read(&self, file: &str) -> std::io::Result<Vec<u8>> {
        let fd = openat(self.fd.as_raw_fd(), file, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0)?;
        let st = fstat(fd.as_raw_fd())?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_uid != self.cache.uid {
            return Err(std::io::Error::other(format!("'{file}' is not a regular file of this user")));
        }
        let mut v = Vec::new();
        File::from(fd).read_to_end(&mut v)?;
        Ok(v)
    }

    /// Moves `file` into the cache directory as `dest`, replacing whatever non-directory is
    /// there (atomically).
    pub fn keep(&self, file: &str, dest: &str) -> std::io::Result<()> {
        renameat(self.fd.as_raw_fd(), file, self.cache.dirfd(), dest)
    }

    /// Seals the library the compiler wrote to `SCRATCH_LIB` as the entry for `key`: checks
    /// it, appends `deps` and the trailer, makes it read-only to others, syncs, and renames it
    /// into place atomically. Returns the entry, open on the sealed file.
    pub fn commit(&self, key: &str, deps: Vec<Dep>) -> Result<Entry> {
        self.commit_named(&DiskCache::lib_name(key), deps)
    }

    /// `commit` under the entry file name `dest` (see `DiskCache::lookup_named`).
    pub fn commit_named(&self, dest: &str, deps: Vec<Dep>) -> Result<Entry> {
        let shown = self.path(SCRATCH_LIB);
        let fail = |e: std::io::Error| crate::op2_err!(Io, "JIT cache: cannot store entry '{}': {e}", shown.display());
        let fd = openat(self.fd.as_raw_fd(), SCRATCH_LIB, libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0)
            .map_err(fail)?;
        let st = fstat(fd.as_raw_fd()).map_err(fail)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_uid != self.cache.uid {
            return Err(fail(std::io::Error::other(format!(
                "the compiler's output {} owned by uid {}",
                file_type_name(st.st_mode),
                st.st_uid
            ))));
        }
        // The compiler created it with the umask's mode: nobody else may write an entry.
        // SAFETY: `fd` is open.
        check(unsafe { libc::fchmod(fd.as_raw_fd(), (st.st_mode & 0o755) as libc::mode_t) }).map_err(fail)?;
        let mut file = File::from(fd);
        let mut body = Vec::new();
        file.read_to_end(&mut body).map_err(fail)?;
        let tail = trailer(&body, &deps);
        file.seek(SeekFrom::End(0)).map_err(fail)?;
        file.write_all(&tail).map_err(fail)?;
        file.sync_all().map_err(fail)?;
        renameat(self.fd.as_raw_fd(), SCRATCH_LIB, self.cache.dirfd(), dest).map_err(|e| {
            crate::op2_err!(Io, "JIT cache: cannot store entry '{}': {e}", self.cache.dir.join(dest).display())
        })?;
        Ok(Entry { file, deps })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for f in [SCRATCH_SRC, SCRATCH_LIB, SCRATCH_DEPS] {
            let _ = unlinkat(self.fd.as_raw_fd(), f, 0);
        }
        let _ = unlinkat(self.cache.dirfd(), &self.name, libc::AT_REMOVEDIR);
    }
}

/// Serialises `deps` and the trailer that follow the library bytes `body` in an entry.
fn trailer(body: &[u8], deps: &[Dep]) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&(deps.len() as u32).to_le_bytes());
    for d in deps {
        let p = d.path.as_os_str().as_bytes();
        t.extend_from_slice(&d.sha);
        t.extend_from_slice(&(p.len() as u32).to_le_bytes());
        t.extend_from_slice(p);
    }
    t.extend_from_slice(&(t.len() as u64).to_le_bytes());
    t.extend_from_slice(MAGIC);
    let mut h = Sha256::new();
    h.update(body);
    h.update(&t);
    t.extend_from_slice(&h.finalize());
    t
}

/// Splits a whole entry into the library length and its dependencies, if its trailer is
/// complete and matches.
pub fn parse_entry(bytes: &[u8]) -> Option<(usize, Vec<Dep>)> {
    let n = bytes.len();
    if n < TRAILER {
        return None;
    }
    let (signed, digest) = bytes.split_at(n - 32);
    if &signed[n - 40..] != MAGIC || Sha256::digest(signed).as_slice() != digest {
        return None;
    }
    let list_len = u64::from_le_bytes(signed[n - 48..n - 40].try_into().ok()?) as usize;
    let list_start = (n - 48).checked_sub(list_len)?;
    let mut list = &bytes[list_start..n - 48];
    let mut take = |k: usize| -> Option<&[u8]> {
        let (a, b) = (list.get(..k)?, list.get(k..)?);
        list = b;
        Some(a)
    };
    let count = u32::from_le_bytes(take(4)?.try_into().ok()?);
    let mut deps = Vec::new();
    for _ in 0..count {
        let sha: [u8; 32] = take(32)?.try_into().ok()?;
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        let path = PathBuf::from(OsStr::from_bytes(take(len)?));
        deps.push(Dep { path, sha });
    }
    Some((list_start, deps))
}

/// The prerequisites in a make rule written by the compiler (`-MMD -MF`), unescaped.
pub fn parse_make_deps(text: &[u8]) -> Vec<PathBuf> {
    // Skip the target: everything up to the first ':' followed by whitespace or the end.
    let start = text
        .windows(2)
        .position(|w| w[0] == b':' && (w[1] == b' ' || w[1] == b'\t' || w[1] == b'\n' || w[1] == b'\\'))
        .map(|p| p + 1)
        .unwrap_or(text.len());
    let mut out = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut i = start;
    let flush = |cur: &mut Vec<u8>, out: &mut Vec<PathBuf>| {
        if !cur.is_empty() {
            out.push(PathBuf::from(OsStr::from_bytes(cur)));
            cur.clear();
        }
    };
    while i < text.len() {
        let c = text[i];
        match c {
            b'\\' if i + 1 < text.len() && text[i + 1] == b'\n' => {
                flush(&mut cur, &mut out);
                i += 2;
                continue;
            }
            b'\\' if i + 1 < text.len() && (text[i + 1] == b' ' || text[i + 1] == b'#' || text[i + 1] == b'\\') => {
                cur.push(text[i + 1]);
                i += 2;
                continue;
            }
            b'$' if i + 1 < text.len() && text[i + 1] == b'$' => {
                cur.push(b'$');
                i += 2;
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' => flush(&mut cur, &mut out),
            _ => cur.push(c),
        }
        i += 1;
    }
    flush(&mut cur, &mut out);
    out
}

/// The cache key: a SHA-256 over everything that determines the compiled bytes (the source,
/// the compiler's identity, the concrete target CPU that `-march=native` stands for, and the
/// flags). Files the source includes are checked separately (they are recorded in the entry).
pub fn key(source: &str, compiler_identity: &str, target: &str, flags: &[String]) -> String {
    let mut h = Sha256::new();
    for part in [source, compiler_identity, target, &flags.join(" "), env!("CARGO_PKG_VERSION")] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex(&h.finalize()[..20])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tempdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("op2-cache-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    /// Stores `body` as the entry `k` the way a compile does.
    fn store(c: &DiskCache, k: &str, body: &[u8], deps: Vec<Dep>) -> Entry {
        let s = c.scratch(k).unwrap();
        s.write(SCRATCH_LIB, body).unwrap();
        s.commit(k, deps).unwrap()
    }

    #[test]
    fn creates_private_dir_and_refuses_shared_ones() {
        let d = tempdir("perm");
        let c = DiskCache::open(&d).unwrap();
        assert_eq!(fs::metadata(c.dir()).unwrap().permissions().mode() & 0o777, 0o700);
        fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).unwrap();
        let e = DiskCache::open(&d).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::CacheDir);
        assert!(e.message.contains("writable by others"), "{}", e.message);
        let f = d.join("file");
        fs::write(&f, "x").unwrap();
        fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
        assert!(DiskCache::open(&f).unwrap_err().message.contains("not a directory"));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn ancestors_must_be_private_or_sticky() {
        let d = tempdir("anc");
        let inner = d.join("a").join("cache");
        fs::create_dir_all(&inner).unwrap();
        fs::set_permissions(d.join("a"), fs::Permissions::from_mode(0o777)).unwrap();
        let e = DiskCache::open(&inner).unwrap_err();
        assert!(e.message.contains("writable by others (mode 777) and not sticky"), "{}", e.message);
        assert!(e.message.contains(&format!("inside '{}'", d.join("a").display())), "{}", e.message);
        fs::set_permissions(d.join("a"), fs::Permissions::from_mode(0o1777)).unwrap();
        DiskCache::open(&inner).unwrap();
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn commit_verify_and_detect_corruption() {
        let d = tempdir("commit");
        let c = DiskCache::open(&d).unwrap();
        let deps = vec![Dep { path: PathBuf::from("/some/h.h"), sha: [7; 32] }];
        store(&c, "k", b"pretend this is ELF", deps.clone());
        let p = c.lib_path("k");
        match c.lookup("k") {
            Lookup::Hit(e) => assert_eq!(e.deps, deps),
            other => panic!("{other:?}"),
        }
        let bytes = fs::read(&p).unwrap();
        assert_eq!(parse_entry(&bytes).unwrap().0, b"pretend this is ELF".len());
        // No temporaries are left behind.
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        // Truncation and bit flips are both detected.
        let mut bytes = fs::read(&p).unwrap();
        fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert!(matches!(c.lookup("k"), Lookup::Rebuild(w) if w.contains("corrupt")));
        bytes[3] ^= 1;
        fs::write(&p, &bytes).unwrap();
        assert!(matches!(c.lookup("k"), Lookup::Rebuild(_)));
        assert!(matches!(c.lookup("missing"), Lookup::Missing));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn entries_other_than_private_regular_files_are_not_read() {
        let d = tempdir("kinds");
        let c = DiskCache::open(&d).unwrap();
        store(&c, "good", b"ELF", vec![]);
        let p = c.lib_path("k");
        // A symlink to a valid entry.
        std::os::unix::fs::symlink(c.lib_path("good"), &p).unwrap();
        assert!(matches!(c.lookup("k"), Lookup::Rebuild(w) if w.contains("symbolic link")));
        fs::remove_file(&p).unwrap();
        // A FIFO: must not block.
        let cp = CString::new(p.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(cp.as_ptr(), 0o600) }, 0);
        assert!(matches!(c.lookup("k"), Lookup::Rebuild(w) if w.contains("FIFO")));
        // A device (only root can make one): not opened at all.
        if unsafe { libc::geteuid() } == 0 {
            fs::remove_file(&p).unwrap();
            assert_eq!(unsafe { libc::mknod(cp.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) }, 0);
            assert!(matches!(c.lookup("k"), Lookup::Rebuild(w) if w.contains("character device")));
        }
        // A commit replaces it.
        store(&c, "k", b"ELF", vec![]);
        assert!(matches!(c.lookup("k"), Lookup::Hit(_)));
        // Group-writable, or another owner.
        fs::set_permissions(&p, fs::Permissions::from_mode(0o664)).unwrap();
        assert!(matches!(c.lookup("k"), Lookup::Rebuild(w) if w.contains("writable by group")));
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::chown(&p, Some(65534), None).unwrap();
            assert!(matches!(c.lookup("k"), Lookup::Rebuild(w) if w.contains("owned by uid 65534")));
        }
        // A directory: refused, and removed when empty so the rebuild can take its place.
        fs::remove_file(&p).unwrap();
        fs::create_dir(&p).unwrap();
        assert!(matches!(c.lookup("k"), Lookup::Rebuild(w) if w.contains("directory")));
        store(&c, "k", b"ELF", vec![]);
        assert!(matches!(c.lookup("k"), Lookup::Hit(_)));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn make_deps_are_unescaped() {
        let text = b"op2_entry: /tmp/x/src.c /inc/a\\ b.h \\\n  rel/c.h /d$$/e\\#.h\n";
        let deps = parse_make_deps(text);
        let want: Vec<PathBuf> =
            ["/tmp/x/src.c", "/inc/a b.h", "rel/c.h", "/d$/e#.h"].iter().map(PathBuf::from).collect();
        assert_eq!(deps, want);
        assert!(parse_make_deps(b"op2_entry:\n").is_empty());
    }

    #[test]
    fn key_is_stable_and_sensitive() {
        let f = vec!["-O3".to_string()];
        let k = key("src", "gcc 12", "-march=skylake", &f);
        assert_eq!(k, key("src", "gcc 12", "-march=skylake", &f));
        assert_eq!(k.len(), 40);
        assert_ne!(k, key("src2", "gcc 12", "-march=skylake", &f));
        assert_ne!(k, key("src", "gcc 13", "-march=skylake", &f));
        assert_ne!(k, key("src", "gcc 12", "-march=skylake", &["-O2".to_string()]));
        // The concrete CPU behind -march=native is part of the key.
        assert_ne!(k, key("src", "gcc 12", "-march=znver3", &f));
        // Field boundaries matter: moving bytes between fields changes the key.
        assert_ne!(key("ab", "c", "", &f), key("a", "bc", "", &f));
    }
}
