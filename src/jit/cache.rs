//! The content-keyed disk cache of compiled loops, safe for concurrent processes.
//!
//! An entry is `<key>.so`: the compiled library followed by a trailer (magic + SHA-256 of the
//! library bytes). ELF loaders ignore trailing bytes, so the file is loadable as it is, and a
//! reader can tell a complete entry from a truncated or foreign one. Writers write to a
//! per-process temporary name in the same directory and `rename` it into place, so a reader
//! sees either no entry or a complete one, never a partial one. A corrupt entry fails the
//! trailer check and is rebuilt.

use crate::codegen::hex;
use crate::error::Result;
use crate::op2_bail;
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"OP2JIT01";
const TRAILER: usize = 8 + 32;

/// A validated cache directory.
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// Opens (creating with mode 0700 if needed) and checks the cache directory: it must be a
    /// directory owned by the current user and not writable by group or others, since anyone
    /// who can write there can make our process load their code.
    pub fn open(dir: &Path) -> Result<DiskCache> {
        let shown = dir.display();
        if !dir.exists() {
            if let Err(e) = fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
                op2_bail!(CacheDir, "op_init: cannot create the JIT cache directory '{shown}': {e}");
            }
        }
        let meta = match fs::metadata(dir) {
            Ok(m) => m,
            Err(e) => op2_bail!(CacheDir, "op_init: cannot use the JIT cache directory '{shown}': {e}"),
        };
        if !meta.is_dir() {
            op2_bail!(CacheDir, "op_init: the JIT cache directory '{shown}' is not a directory");
        }
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            op2_bail!(
                CacheDir,
                "op_init: the JIT cache directory '{shown}' is owned by uid {}, not by this user (uid {me}); set OP2_CACHE_DIR to a directory of your own",
                meta.uid()
            );
        }
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o022 != 0 {
            op2_bail!(
                CacheDir,
                "op_init: the JIT cache directory '{shown}' is writable by others (mode {mode:o}); use chmod 700 or another OP2_CACHE_DIR"
            );
        }
        Ok(DiskCache { dir: dir.to_path_buf() })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of the library entry for `key`.
    pub fn lib_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.so"))
    }

    /// Path of the source kept beside the entry (for compiler messages and inspection).
    pub fn src_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.c"))
    }

    /// Whether a complete, uncorrupted entry exists for `key`.
    pub fn lookup(&self, key: &str) -> Option<PathBuf> {
        let p = self.lib_path(key);
        let bytes = fs::read(&p).ok()?;
        verify(&bytes).then_some(p)
    }

    /// A fresh temporary path in the cache directory, unique to this process and call.
    pub fn temp_path(&self, key: &str, ext: &str) -> PathBuf {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        self.dir.join(format!(".{key}.{}.{n}.{nanos}.tmp{ext}", std::process::id()))
    }

    /// Seals the library just compiled at `tmp` (appends the trailer, syncs) and renames it
    /// into place atomically. Returns the entry's path.
    pub fn commit(&self, key: &str, tmp: &Path) -> Result<PathBuf> {
        let fail = |e: std::io::Error| {
            let _ = fs::remove_file(tmp);
            crate::op2_err!(Io, "JIT cache: cannot store entry '{}': {e}", tmp.display())
        };
        let bytes = fs::read(tmp).map_err(fail)?;
        let digest = Sha256::digest(&bytes);
        let mut f = fs::OpenOptions::new().append(true).open(tmp).map_err(fail)?;
        f.write_all(MAGIC).map_err(fail)?;
        f.write_all(&digest).map_err(fail)?;
        f.sync_all().map_err(fail)?;
        drop(f);
        let dest = self.lib_path(key);
        fs::rename(tmp, &dest).map_err(fail)?;
        Ok(dest)
    }

    /// Writes `text` to `dest` atomically (temporary file + rename).
    pub fn write_atomic(&self, dest: &Path, text: &str) -> std::io::Result<()> {
        let tmp = self.temp_path("src", ".c");
        fs::write(&tmp, text)?;
        fs::rename(&tmp, dest)
    }
}

/// Whether `bytes` is a library followed by a trailer that matches it.
pub fn verify(bytes: &[u8]) -> bool {
    if bytes.len() < TRAILER {
        return false;
    }
    let (body, trailer) = bytes.split_at(bytes.len() - TRAILER);
    &trailer[..8] == MAGIC && Sha256::digest(body).as_slice() == &trailer[8..]
}

/// The cache key: a SHA-256 over everything that determines the compiled bytes.
pub fn key(source: &str, compiler_identity: &str, flags: &[String]) -> String {
    let mut h = Sha256::new();
    for part in [source, compiler_identity, &flags.join(" "), env!("CARGO_PKG_VERSION")] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex(&h.finalize()[..20])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("op2-cache-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
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
    fn commit_verify_and_detect_corruption() {
        let d = tempdir("commit");
        let c = DiskCache::open(&d).unwrap();
        let tmp = c.temp_path("k", ".so");
        fs::write(&tmp, b"pretend this is ELF").unwrap();
        let p = c.commit("k", &tmp).unwrap();
        assert_eq!(c.lookup("k"), Some(p.clone()));
        // Truncation and bit flips are both detected.
        let mut bytes = fs::read(&p).unwrap();
        fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(c.lookup("k"), None);
        bytes[3] ^= 1;
        fs::write(&p, &bytes).unwrap();
        assert_eq!(c.lookup("k"), None);
        assert_eq!(c.lookup("missing"), None);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn key_is_stable_and_sensitive() {
        let f = vec!["-O3".to_string()];
        let k = key("src", "gcc 12", &f);
        assert_eq!(k, key("src", "gcc 12", &f));
        assert_eq!(k.len(), 40);
        assert_ne!(k, key("src2", "gcc 12", &f));
        assert_ne!(k, key("src", "gcc 13", &f));
        assert_ne!(k, key("src", "gcc 12", &["-O2".to_string()]));
        // Field boundaries matter: moving bytes between fields changes the key.
        assert_ne!(key("ab", "c", &f), key("a", "bc", &f));
    }
}
