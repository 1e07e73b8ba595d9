//! Loop packs: compiled loops made ahead of time (`op2-pack DIR -o FILE` from an
//! `OP2_GENERATE=DIR` directory), loaded at run time with `OP2_LOOP_PACK=FILE[:FILE...]`, so that
//! compute nodes need no C compiler.
//!
//! A pack is one file:
//!
//! ```text
//! "OP2PACK1"  u64 (little-endian) header length  header (UTF-8 lines)  libraries  SHA-256
//! ```
//!
//! The header's lines are `op2 VERSION`, `abi N`, `compiler IDENTITY`, `flags FLAGS`,
//! `cpu TARGET`, `isa FEATURE...` (the instruction-set extensions the code may use, as Linux's
//! `/proc/cpuinfo` names them), then one `entry TARGET SHA256 OFFSET LENGTH KERNEL LOOP` per
//! loop (`LOOP` percent-encoded), where SHA256 is the hash of the exact generated source the
//! library was compiled from, so a loop is found by the code op2 would compile for it: a changed
//! kernel, other argument descriptors or another op2 code generator simply do not match. The
//! final SHA-256 covers every byte before it.
//!
//! A pack is trusted as cache entries are: a regular file owned by this user or root, writable
//! by nobody else, inside directories only root or this user can change; it is refused whole,
//! with the reason, when its checksum fails, when another op2 version or ABI made it, or when
//! its code needs an instruction-set extension this CPU lacks. Each library is loaded from a
//! sealed anonymous file (`memfd`), never from a path someone could swap.

use crate::codegen::hex;
use crate::error::Result;
use crate::op2_bail;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"OP2PACK1";
/// The calling convention between the driver and a compiled loop (`op2_loop`'s slots); bumped
/// whenever the driver's side changes without the generated code changing.
pub const ABI: u32 = 1;
/// The only target packs hold today (the host code of `seq`, `threads`, `check`, and the host
/// side of device backends).
pub const HOST: &str = "host";

/// Predefined macros of the C compiler and the `/proc/cpuinfo` flag of the same extension: the
/// extensions a compiler may use for plain C code. Those it uses only through intrinsics (random
/// numbers: RDRAND, RDSEED; cryptography: AES, PCLMUL, SHA) are left out: a loop's code does not
/// need them, and a kernel may hide one from `/proc/cpuinfo` while the CPU still reports it to
/// `-march=native` (Linux hides RDSEED on AMD CPUs with a faulty one: a pack built with
/// `-march=native` on such a machine was refused on that same machine).
pub const ISA_MACROS: &[(&str, &str)] = &[
    ("__SSE3__", "pni"),
    ("__SSSE3__", "ssse3"),
    ("__SSE4_1__", "sse4_1"),
    ("__SSE4_2__", "sse4_2"),
    ("__POPCNT__", "popcnt"),
    ("__AVX__", "avx"),
    ("__AVX2__", "avx2"),
    ("__FMA__", "fma"),
    ("__F16C__", "f16c"),
    ("__BMI__", "bmi1"),
    ("__BMI2__", "bmi2"),
    ("__LZCNT__", "abm"),
    ("__MOVBE__", "movbe"),
    ("__ADX__", "adx"),
    ("__GFNI__", "gfni"),
    ("__VAES__", "vaes"),
    ("__VPCLMULQDQ__", "vpclmulqdq"),
    ("__AVX512F__", "avx512f"),
    ("__AVX512CD__", "avx512cd"),
    ("__AVX512BW__", "avx512bw"),
    ("__AVX512DQ__", "avx512dq"),
    ("__AVX512VL__", "avx512vl"),
    ("__AVX512IFMA__", "avx512ifma"),
    ("__AVX512VBMI__", "avx512vbmi"),
    ("__AVX512VBMI2__", "avx512_vbmi2"),
    ("__AVX512VNNI__", "avx512_vnni"),
    ("__AVX512BITALG__", "avx512_bitalg"),
    ("__AVX512VPOPCNTDQ__", "avx512_vpopcntdq"),
];

/// The extensions named by the predefined macros in `text` (`cc -dM -E` output).
pub fn isa_of_macros(text: &str) -> Vec<String> {
    let defined: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("#define ")?.split(' ').next()).collect();
    ISA_MACROS.iter().filter(|(m, _)| defined.contains(m)).map(|(_, f)| f.to_string()).collect()
}

/// This CPU's extensions (`flags` of `/proc/cpuinfo`; `Features` on other architectures).
pub fn cpu_flags() -> Vec<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("flags") || l.starts_with("Features"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The first of `needed` that `have` lacks.
pub fn missing_isa<'a>(needed: &'a [String], have: &[String]) -> Option<&'a str> {
    needed.iter().find(|n| !have.contains(n)).map(String::as_str)
}

/// `[A-Za-z0-9_.-]` kept, every other byte as `%XX`.
fn encode(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"_.-".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    if o.is_empty() {
        o.push('%');
    }
    o
}

fn decode(s: &str) -> Option<String> {
    if s == "%" {
        return Some(String::new());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The hash a pack entry is found by: SHA-256 of the generated source, in hex.
pub fn source_hash(source: &[u8]) -> String {
    hex(&Sha256::digest(source))
}

/// What a pack was built with and for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PackMeta {
    pub op2_version: String,
    pub abi: u32,
    pub compiler: String,
    pub flags: String,
    pub cpu: String,
    pub isa: Vec<String>,
}

impl PackMeta {
    /// The meta data of a pack built by this op2 with `compiler`, `flags`, the resolved target
    /// and the extensions the flags enable.
    pub fn current(compiler: &str, flags: &str, cpu: &str, isa: Vec<String>) -> PackMeta {
        PackMeta {
            op2_version: env!("CARGO_PKG_VERSION").to_string(),
            abi: ABI,
            compiler: compiler.to_string(),
            flags: flags.to_string(),
            cpu: cpu.to_string(),
            isa,
        }
    }
}

/// One compiled loop in a pack.
#[derive(Debug, Clone, PartialEq)]
pub struct PackEntry {
    pub target: String,
    pub hash: String,
    pub kernel: String,
    pub loop_name: String,
    offset: usize,
    len: usize,
}

/// Why a loop compiled from code hashed `hash` is in none of `packs` for `target`, as the end
/// of an `OP2_JIT=off` error: no pack given, the pack has the loop built from other code, or
/// not at all.
pub fn missing(packs: &[Pack], target: &str, loop_name: &str) -> String {
    let names: Vec<String> = packs.iter().map(|p| format!("'{}'", p.path.display())).collect();
    if packs.is_empty() {
        "no loop pack is given (OP2_LOOP_PACK)".to_string()
    } else if packs.iter().any(|p| p.named(target, loop_name).next().is_some()) {
        format!(
            "the loop pack {} has a loop '{loop_name}' compiled from other code (the kernel's source, the argument descriptors, the constants it uses or OP2_SIMD differ from the run that generated the pack): generate the loop again (OP2_GENERATE) and rebuild the pack with op2-pack",
            names.join(", ")
        )
    } else {
        format!(
            "the loop pack {} has no loop '{loop_name}' for target {target}: run the program once with OP2_GENERATE=DIR{} where a compiler is available, then op2-pack DIR -o FILE",
            names.join(", "),
            if target == HOST { "" } else { " OP2_GENERATE_TARGETS=cuda" }
        )
    }
}

/// A library to put in a pack.
pub struct NewEntry {
    pub target: String,
    pub source: Vec<u8>,
    pub kernel: String,
    pub loop_name: String,
    pub library: Vec<u8>,
}

/// Writes a pack: header, libraries, checksum. Entries with the same source are kept once.
pub fn write_pack(out: &Path, meta: &PackMeta, entries: &[NewEntry]) -> std::io::Result<usize> {
    let one_line = |s: &str| s.replace(['\n', '\r'], " ");
    let mut header = format!(
        "op2 {}\nabi {}\ncompiler {}\nflags {}\ncpu {}\nisa {}\n",
        meta.op2_version,
        meta.abi,
        one_line(&meta.compiler),
        one_line(&meta.flags),
        one_line(&meta.cpu),
        meta.isa.join(" ")
    );
    let mut seen = Vec::new();
    let mut body: Vec<u8> = Vec::new();
    for e in entries {
        let hash = source_hash(&e.source);
        if seen.contains(&(e.target.clone(), hash.clone())) {
            continue;
        }
        header.push_str(&format!(
            "entry {} {hash} {} {} {} {}\n",
            encode(&e.target),
            body.len(),
            e.library.len(),
            encode(&e.kernel),
            encode(&e.loop_name)
        ));
        body.extend_from_slice(&e.library);
        seen.push((e.target.clone(), hash));
    }
    let mut bytes = Vec::with_capacity(16 + header.len() + body.len() + 32);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(header.len() as u64).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&body);
    let sum = Sha256::digest(&bytes);
    bytes.extend_from_slice(&sum);
    // Written aside and renamed: a reader sees the old pack or the new one, never half.
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "pack".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o644).open(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
    }
    if let Err(e) = std::fs::rename(&tmp, out) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(seen.len())
}

/// A verified pack, in memory.
#[derive(Debug)]
pub struct Pack {
    pub path: PathBuf,
    pub meta: PackMeta,
    pub entries: Vec<PackEntry>,
    /// Entry index by (target, hash).
    by_hash: HashMap<(String, String), usize>,
    /// The libraries (the pack's bytes after the header).
    body: Vec<u8>,
}

impl Pack {
    /// Opens, checks and reads the pack at `path` (see the module documentation); the error
    /// says why it is refused.
    pub fn open(path: &Path) -> Result<Pack> {
        let shown = path.display();
        let refuse = |why: String| crate::op2_err!(Load, "OP2_LOOP_PACK: the loop pack '{shown}' is refused: {why}");
        let real = std::fs::canonicalize(path)
            .map_err(|e| crate::op2_err!(Io, "OP2_LOOP_PACK: cannot open the loop pack '{shown}': {e}"))?;
        let c = std::ffi::CString::new(real.as_os_str().as_bytes())
            .map_err(|_| refuse("its path has a NUL byte".into()))?;
        // SAFETY: `c` is NUL-terminated; the descriptor is owned below.
        let raw =
            unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC) };
        if raw < 0 {
            op2_bail!(Io, "OP2_LOOP_PACK: cannot open the loop pack '{shown}': {}", std::io::Error::last_os_error());
        }
        // SAFETY: `raw` was just opened and is owned by nothing else.
        let mut file = File::from(unsafe { OwnedFd::from_raw_fd(raw) });
        // SAFETY: an all-zero `stat` is valid; fstat fills it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and out-pointer.
        if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
            return Err(refuse(format!("cannot check it: {}", std::io::Error::last_os_error())));
        }
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(refuse("it is not a regular file".into()));
        }
        if st.st_uid != me && st.st_uid != 0 {
            return Err(refuse(format!("it is owned by uid {}, neither root nor this user (uid {me})", st.st_uid)));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(refuse(format!("it is writable by group or others (mode {:o})", st.st_mode & 0o7777)));
        }
        if let Err(why) = super::cache::untrusted_ancestor(&real, me) {
            return Err(refuse(format!("it {why}")));
        }
        // The file's own length bounds what is allocated and read (a file growing meanwhile is
        // read up to it); a length the allocator refuses (a sparse 1 TiB file) is
        // OP2_ERR_OUT_OF_MEMORY, an impossible one OP2_ERR_BAD_SIZE, never an abort.
        let len = u64::try_from(st.st_size).unwrap_or(0);
        let what = format!("OP2_LOOP_PACK: the loop pack '{shown}'");
        let mut bytes = crate::core::alloc::with_capacity::<u8>(usize::try_from(len).unwrap_or(usize::MAX), &what)?;
        Read::by_ref(&mut file)
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(|e| refuse(format!("cannot read it: {e}")))?;
        Pack::parse(path, bytes, &cpu_flags()).map_err(refuse)
    }

    /// Checks and parses a pack's bytes for a CPU with extensions `cpu`.
    pub fn parse(path: &Path, mut bytes: Vec<u8>, cpu: &[String]) -> std::result::Result<Pack, String> {
        if bytes.len() < 8 + 8 + 32 || &bytes[..8] != MAGIC {
            return Err("it is not an op2 loop pack (made by op2-pack)".into());
        }
        let end = bytes.len() - 32;
        if Sha256::digest(&bytes[..end]).as_slice() != &bytes[end..] {
            return Err("its checksum does not match (truncated or modified)".into());
        }
        let mut n = [0u8; 8];
        n.copy_from_slice(&bytes[8..16]);
        let hlen = u64::from_le_bytes(n) as usize;
        if hlen > end - 16 {
            return Err("its header is longer than the file".into());
        }
        let header = std::str::from_utf8(&bytes[16..16 + hlen]).map_err(|_| "its header is not UTF-8".to_string())?;
        let mut meta = PackMeta::default();
        let mut entries = Vec::new();
        let blen = end - 16 - hlen;
        for line in header.lines() {
            let (k, v) = line.split_once(' ').unwrap_or((line, ""));
            match k {
                "op2" => meta.op2_version = v.to_string(),
                "abi" => meta.abi = v.parse().map_err(|_| format!("bad abi line '{line}'"))?,
                "compiler" => meta.compiler = v.to_string(),
                "flags" => meta.flags = v.to_string(),
                "cpu" => meta.cpu = v.to_string(),
                "isa" => meta.isa = v.split_whitespace().map(str::to_string).collect(),
                "entry" => {
                    let f: Vec<&str> = v.split(' ').collect();
                    let bad = || format!("bad entry line '{line}'");
                    if f.len() != 6 {
                        return Err(bad());
                    }
                    let offset: usize = f[2].parse().map_err(|_| bad())?;
                    let len: usize = f[3].parse().map_err(|_| bad())?;
                    if offset.checked_add(len).is_none_or(|e| e > blen) || f[1].len() != 64 {
                        return Err(bad());
                    }
                    entries.push(PackEntry {
                        target: decode(f[0]).ok_or_else(bad)?,
                        hash: f[1].to_string(),
                        kernel: decode(f[4]).ok_or_else(bad)?,
                        loop_name: decode(f[5]).ok_or_else(bad)?,
                        offset,
                        len,
                    });
                }
                _ => {}
            }
        }
        let version = env!("CARGO_PKG_VERSION");
        if meta.op2_version != version || meta.abi != ABI {
            return Err(format!(
                "it was made by op2 {} (loop ABI {}); this is op2 {version} (loop ABI {ABI}): run op2-pack again",
                meta.op2_version, meta.abi
            ));
        }
        if let Some(f) = missing_isa(&meta.isa, cpu) {
            return Err(format!(
                "its code was compiled for {} and needs the CPU extension '{f}', which this CPU lacks (build the pack for a common target, e.g. OP2_CFLAGS=-march=x86-64-v2)",
                if meta.cpu.is_empty() { "another CPU" } else { meta.cpu.as_str() }
            ));
        }
        bytes.truncate(end);
        let body = bytes.split_off(16 + hlen);
        let by_hash = entries.iter().enumerate().map(|(i, e)| ((e.target.clone(), e.hash.clone()), i)).collect();
        Ok(Pack { path: path.to_path_buf(), meta, entries, by_hash, body })
    }

    /// The entry compiled from exactly `source` for `target`.
    pub fn find(&self, target: &str, hash: &str) -> Option<&PackEntry> {
        self.by_hash.get(&(target.to_string(), hash.to_string())).map(|&i| &self.entries[i])
    }

    /// Entries of `target` with this loop name (to explain why a loop is not in the pack).
    pub fn named<'a>(&'a self, target: &'a str, loop_name: &'a str) -> impl Iterator<Item = &'a PackEntry> + 'a {
        self.entries.iter().filter(move |e| e.target == target && e.loop_name == loop_name)
    }

    /// The entry's library (a shared object for `host`, a CUBIN for `cuda-sm_XY`).
    pub fn library(&self, e: &PackEntry) -> &[u8] {
        &self.body[e.offset..e.offset + e.len]
    }

    /// A sealed anonymous file holding the entry's library, for the loader.
    pub fn library_file(&self, e: &PackEntry) -> std::io::Result<File> {
        let bytes = self.library(e);
        let name = std::ffi::CString::new("op2-pack").unwrap_or_default();
        // SAFETY: `name` is NUL-terminated; the descriptor is owned below.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let mut f = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        f.write_all(bytes)?;
        let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
        // SAFETY: fcntl on a descriptor we own.
        if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(isa: &[&str]) -> PackMeta {
        PackMeta::current("cc | gcc 12", "-O3", "-march=test", isa.iter().map(|s| s.to_string()).collect())
    }

    fn entry(src: &str, name: &str, lib: &[u8]) -> NewEntry {
        NewEntry {
            target: HOST.into(),
            source: src.as_bytes().to_vec(),
            kernel: "k".into(),
            loop_name: name.into(),
            library: lib.to_vec(),
        }
    }

    fn built(dir: &Path, isa: &[&str]) -> (PathBuf, Vec<u8>) {
        let p = dir.join("p.op2pack");
        let n = write_pack(
            &p,
            &meta(isa),
            &[entry("src a", "res calc/1", b"LIB-A"), entry("src b", "update", b"LIB-BB"), entry("src a", "dup", b"X")],
        )
        .unwrap();
        assert_eq!(n, 2, "the same source is kept once");
        let bytes = std::fs::read(&p).unwrap();
        (p, bytes)
    }

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("op2-pack-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn round_trip_finds_entries_by_source_hash() {
        let d = tmp("rt");
        let (p, bytes) = built(&d, &["avx2"]);
        let pack = Pack::parse(&p, bytes, &["sse4_2".into(), "avx2".into()]).unwrap();
        assert_eq!(pack.meta, meta(&["avx2"]));
        let e = pack.find(HOST, &source_hash(b"src b")).unwrap();
        assert_eq!((e.loop_name.as_str(), e.kernel.as_str()), ("update", "k"));
        let a = pack.find(HOST, &source_hash(b"src a")).unwrap();
        assert_eq!(a.loop_name, "res calc/1", "names survive encoding");
        let mut got = Vec::new();
        pack.library_file(a).unwrap().read_to_end(&mut got).unwrap_or(0);
        let mut f = pack.library_file(e).unwrap();
        use std::io::{Seek, SeekFrom};
        f.seek(SeekFrom::Start(0)).unwrap();
        let mut lib = Vec::new();
        f.read_to_end(&mut lib).unwrap();
        assert_eq!(lib, b"LIB-BB");
        assert!(f.write_all(b"x").is_err(), "sealed against writes");
        assert!(pack.find(HOST, &source_hash(b"src c")).is_none());
        assert!(pack.find("cuda", &source_hash(b"src a")).is_none());
        assert_eq!(pack.named(HOST, "update").count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn refuses_corruption_other_versions_and_missing_cpu_extensions() {
        let d = tmp("bad");
        let (p, bytes) = built(&d, &["avx2", "avx512f"]);
        // Every single flipped byte is caught.
        for i in [0, 9, 20, bytes.len() / 2, bytes.len() - 1] {
            let mut b = bytes.clone();
            b[i] ^= 1;
            let e = Pack::parse(&p, b, &["avx2".into(), "avx512f".into()]).unwrap_err();
            assert!(e.contains("checksum") || e.contains("not an op2 loop pack"), "{e}");
        }
        let mut short = bytes.clone();
        short.truncate(bytes.len() - 7);
        assert!(Pack::parse(&p, short, &[]).unwrap_err().contains("checksum"));
        let e = Pack::parse(&p, bytes.clone(), &["avx2".into()]).unwrap_err();
        assert!(e.contains("'avx512f'") && e.contains("-march=test"), "{e}");
        // Another op2 version (re-sealed, so only the version differs).
        let mut m = meta(&[]);
        m.op2_version = "0.0.1".into();
        write_pack(&p, &m, &[entry("s", "l", b"L")]).unwrap();
        let e = Pack::parse(&p, std::fs::read(&p).unwrap(), &[]).unwrap_err();
        assert!(e.contains("op2 0.0.1") && e.contains("run op2-pack again"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn open_checks_owner_mode_and_kind() {
        use std::os::unix::fs::PermissionsExt;
        let d = tmp("open");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        let (p, _) = built(&d, &[]);
        assert!(Pack::open(&p).is_ok());
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o664)).unwrap();
        let e = Pack::open(&p).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::Load);
        assert!(e.message.contains("writable by group or others"), "{}", e.message);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = Pack::open(&p).unwrap_err();
        assert!(e.message.contains("writable by others") && e.message.contains("not sticky"), "{}", e.message);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        let e = Pack::open(&d).unwrap_err();
        assert!(e.message.contains("not a regular file") || e.message.contains("cannot read"), "{}", e.message);
        let e = Pack::open(&d.join("missing")).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::Io);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn isa_from_macros_and_cpu() {
        let text = "#define __AVX2__ 1\n#define __SSE4_2__ 1\n#define __linux__ 1\n";
        assert_eq!(isa_of_macros(text), vec!["sse4_2".to_string(), "avx2".to_string()]);
        let have: Vec<String> = vec!["sse4_2".into()];
        assert_eq!(missing_isa(&isa_of_macros(text), &have), Some("avx2"));
        // Extensions only intrinsics use are not required (Linux may hide RDSEED from cpuinfo
        // on a CPU whose -march=native names it).
        let znver =
            "#define __AVX2__ 1\n#define __RDSEED__ 1\n#define __RDRND__ 1\n#define __SHA__ 1\n#define __AES__ 1\n";
        assert_eq!(isa_of_macros(znver), vec!["avx2".to_string()]);
        if cfg!(target_arch = "x86_64") {
            assert!(cpu_flags().iter().any(|f| f == "sse2"), "/proc/cpuinfo flags are read");
        }
    }
}
