//! Static generation (`OP2_GENERATE=DIR`): while a program runs, on any backend, each new loop
//! shape's code is also written to `DIR` for every target of `OP2_GENERATE_TARGETS` (`host`,
//! `opencl`, `cuda`; default: the running backend's), with `manifest.json` listing loop name,
//! kernel, argument descriptors, target, file and content hash (and for `cuda`, one file per
//! variant the backend may run: `colour`/`blocks`/`atomics` for loops with indirect increments,
//! each also `-soa` when some dat has dim > 1; `plain` otherwise). Several runs (also concurrent
//! ones) may share `DIR`: entries are appended to `manifest.jsonl` under an exclusive `flock`, and
//! `manifest.json` is rewritten from it (temporary file + rename) under the same lock, so it is
//! always complete JSON and lists each (target, hash) once.

use crate::backend::host::codegen::describe;
use crate::codegen::{hex, LoopSignature};
use crate::error::Result;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::Path;

pub use crate::config::{parse_targets, Target};

/// JSON string literal.
fn json(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A file name from a loop name: `[A-Za-z0-9_-]`, at most 48 characters.
fn stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(48)
        .collect();
    if s.is_empty() {
        "loop".to_string()
    } else {
        s
    }
}

/// Writes the loop's code for each target and records it in the manifest. The host target's
/// code is `host_source`, exactly what the JIT compiles for this run's configuration (vector
/// wrappers included), so `op2-pack` builds what a later run looks up.
pub fn write(
    dir: &Path,
    targets: &[Target],
    sig: &LoopSignature,
    const_values: &[&[u8]],
    coloured: bool,
    cflags: &str,
    host_source: &str,
) -> Result<()> {
    let fail = |what: &str, e: std::io::Error| crate::op2_err!(Io, "OP2_GENERATE: {what} in '{}': {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| fail("cannot create the directory", e))?;
    let mut lines = Vec::new();
    for &t in targets {
        // A loop a device backend cannot run (too much to stage per element) has no device code.
        if t != Target::Host && crate::backend::device::codegen::unsupported(sig.args, t.name()).is_some() {
            continue;
        }
        let codes = sources(t, sig, const_values, coloured, cflags, host_source)?;
        for Generated { variant, source: code } in codes {
            let hash = hex(&Sha256::digest(code.as_bytes())[..16]);
            let file = format!("{}-{}.{}", stem(sig.loop_name), &hash[..12], t.ext());
            let path = dir.join(&file);
            if !path.exists() {
                let tmp = dir.join(format!(".{file}.{}.tmp", std::process::id()));
                std::fs::write(&tmp, &code).map_err(|e| fail("cannot write", e))?;
                std::fs::rename(&tmp, &path).map_err(|e| fail("cannot rename", e))?;
            }
            let args: Vec<String> = sig.args.iter().map(|a| json(&describe(a))).collect();
            lines.push(format!(
                "{{\"loop\": {}, \"kernel\": {}, \"target\": {}, \"file\": {}, \"hash\": {}, \"args\": [{}]}}",
                json(sig.loop_name),
                json(sig.kernel_name),
                json(t.name()),
                json(&file),
                json(&hash),
                args.join(", ")
            ));
            if let (Some(v), Some(l)) = (variant, lines.last_mut()) {
                l.insert_str(l.len() - 1, &format!(", \"variant\": {}", json(&v)));
            }
        }
    }
    record(dir, &lines).map_err(|e| fail("cannot update the manifest", e))
}

/// Writes a fused unit's host code (`backend::host::codegen::generate_fused`, host target only) and
/// records it in the manifest like a loop named `name` (its loops' names joined by `+`), with
/// kernel `kernels` (theirs, joined by `+`) and the loops' argument descriptors back to back, so
/// `op2-pack` packs it and a run with `OP2_LOOP_PACK` loads it by that name.
pub fn write_fused(dir: &Path, name: &str, kernels: &str, args: &[String], source: &str) -> Result<()> {
    let fail = |what: &str, e: std::io::Error| crate::op2_err!(Io, "OP2_GENERATE: {what} in '{}': {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| fail("cannot create the directory", e))?;
    let hash = hex(&Sha256::digest(source.as_bytes())[..16]);
    let file = format!("{}-{}.{}", stem(name), &hash[..12], Target::Host.ext());
    let path = dir.join(&file);
    if !path.exists() {
        let tmp = dir.join(format!(".{file}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, source).map_err(|e| fail("cannot write", e))?;
        std::fs::rename(&tmp, &path).map_err(|e| fail("cannot rename", e))?;
    }
    let args: Vec<String> = args.iter().map(|a| json(a)).collect();
    let line = format!(
        "{{\"loop\": {}, \"kernel\": {}, \"target\": {}, \"file\": {}, \"hash\": {}, \"args\": [{}]}}",
        json(name),
        json(kernels),
        json(Target::Host.name()),
        json(&file),
        json(&hash),
        args.join(", ")
    );
    record(dir, &[line]).map_err(|e| fail("cannot update the manifest", e))
}

/// One generated source of a loop: its variant (cuda: `colour`, `blocks`, `atomics`, each maybe
/// with `-soa`; `None` for a target with one form) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub variant: Option<String>,
    pub source: String,
}

/// The code of one loop for one target (pure). Host code is `host_source`, as given; device
/// code is self-contained: the kernel's quoted includes expanded (searched in the `-I`
/// directories of `cflags`), as the device backends compile it, with the constants' values.
pub fn sources(
    t: Target,
    sig: &LoopSignature,
    const_values: &[&[u8]],
    coloured: bool,
    cflags: &str,
    host_source: &str,
) -> Result<Vec<Generated>> {
    let expanded;
    let sig = if t == Target::Host {
        sig
    } else {
        let dirs = crate::backend::device::codegen::include_dirs(cflags);
        expanded = crate::backend::device::codegen::expand_includes(sig.kernel_source, &dirs, sig.kernel_origin)
            .map_err(|e| crate::op2_err!(Compile, "op_par_loop '{}': {} code: {e}", sig.loop_name, t.name()))?;
        &LoopSignature { kernel_source: &expanded, ..sig.clone() }
    };
    Ok(match t {
        Target::Host => vec![Generated { variant: None, source: host_source.to_string() }],
        Target::OpenCl => vec![Generated {
            variant: None,
            source: crate::backend::opencl::codegen::generate(
                sig,
                const_values,
                coloured,
                crate::backend::opencl::codegen::IncStrategy::Plain,
                false,
            ),
        }],
        Target::Cuda => crate::backend::cuda::codegen::variants(sig.args)
            .into_iter()
            .map(|(v, col, inc, soa, stage)| Generated {
                variant: Some(v),
                source: match stage {
                    Some(p) => crate::backend::cuda::codegen::generate_staged(sig, const_values, soa, p),
                    None => crate::backend::cuda::codegen::generate(sig, const_values, col, inc, soa),
                },
            })
            .collect(),
    })
}

/// Appends entries to `manifest.jsonl` (skipping ones already there) and rewrites
/// `manifest.json`, under an exclusive lock on the directory's lock file.
fn record(dir: &Path, lines: &[String]) -> std::io::Result<()> {
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(".manifest.lock"))?;
    // SAFETY: flock on a descriptor we own; released when `lock` is closed.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let jsonl = dir.join("manifest.jsonl");
    // Read as every input file (without blocking, a regular file only); none yet is empty.
    let old = match crate::core::file::read_regular_io(&jsonl) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let mut all: Vec<String> = old.lines().map(str::to_string).collect();
    let key = |l: &str| l.split("\"file\": ").nth(1).map(|r| r.split(',').next().unwrap_or("").to_string());
    for l in lines {
        if !all.iter().any(|a| key(a) == key(l)) {
            all.push(l.clone());
        }
    }
    let tmp = dir.join(format!(".manifest.{}.tmp", std::process::id()));
    std::fs::write(&tmp, all.iter().map(|l| format!("{l}\n")).collect::<String>())?;
    std::fs::rename(&tmp, &jsonl)?;
    let mut f = std::fs::File::create(&tmp)?;
    writeln!(f, "[")?;
    for (i, l) in all.iter().enumerate() {
        writeln!(f, "  {l}{}", if i + 1 < all.len() { "," } else { "" })?;
    }
    writeln!(f, "]")?;
    f.sync_all()?;
    std::fs::rename(&tmp, dir.join("manifest.json"))?;
    drop(lock);
    Ok(())
}

/// One line of `manifest.jsonl`: the fields `op2-pack` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    pub loop_name: String,
    pub kernel: String,
    pub target: String,
    pub file: String,
}

/// The JSON string value of `key` in a one-line object written by [`write`].
fn field(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!("{}: \"", json(key)))? + key.len() + 5;
    let mut out = String::new();
    let mut chars = line[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                'u' => {
                    let h: String = chars.by_ref().take(4).collect();
                    out.push(char::from_u32(u32::from_str_radix(&h, 16).ok()?)?);
                }
                c => out.push(c),
            },
            c => out.push(c),
        }
    }
    None
}

/// The entries of a generated directory's manifest (`manifest.jsonl`), in the order written.
pub fn read_manifest(dir: &Path) -> std::io::Result<Vec<ManifestEntry>> {
    let text = String::from_utf8(crate::core::file::read_regular_io(&dir.join("manifest.jsonl"))?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("manifest.jsonl: {e}")))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let get = |k: &str| {
            field(line, k).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("manifest.jsonl line {}: no \"{k}\" field", i + 1),
                )
            })
        };
        out.push(ManifestEntry {
            loop_name: get("loop")?,
            kernel: get("kernel")?,
            target: get("target")?,
            file: get("file")?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_fields_round_trip() {
        let name = "odd \"loop\"\\ name\n\u{1}é";
        let line =
            format!("{{\"loop\": {}, \"kernel\": {}, \"target\": \"host\", \"file\": \"a.c\"}}", json(name), json("k"));
        assert_eq!(field(&line, "loop").as_deref(), Some(name));
        assert_eq!(field(&line, "kernel").as_deref(), Some("k"));
        assert_eq!(field(&line, "file").as_deref(), Some("a.c"));
        assert_eq!(field(&line, "hash"), None);
    }
}
