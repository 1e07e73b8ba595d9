//! The source files a program was compiled from, as its debug information records them: the
//! name and compilation directory of each compilation unit of an ELF file's `.debug_info`
//! (DWARF 2 to 5, 32-bit format, uncompressed sections). OP2's builds compile with `-g`, so a
//! Fortran kernel's module source can be found wherever the executable has been moved
//! (`api::loops`, the JIT tier of `op_par_loop_fptr`). Only the first entry of each unit (the
//! `DW_TAG_compile_unit` itself) is decoded; anything unexpected ends the walk with what was
//! found so far: a source found this way is a convenience, never required.

use super::elf::{read_at, section_headers, u16le, u32le};
use std::path::PathBuf;

const DW_AT_NAME: u64 = 0x03;
const DW_AT_COMP_DIR: u64 = 0x1b;

/// The source files of the compilation units of the ELF file `path` (absolute, or as recorded
/// joined to the unit's compilation directory), in the order of `.debug_info`, without
/// repeats. Empty without debug information.
pub fn unit_sources(path: &str) -> Vec<PathBuf> {
    read_units(path).unwrap_or_default()
}

fn read_units(path: &str) -> Option<Vec<PathBuf>> {
    let (mut f, _) = crate::core::file::open_regular(path, "op2: reading debug information").ok()?;
    let sections = section_headers(&mut f)?;
    // Uncompressed (SHF_COMPRESSED, 0x800, not set) sections by name.
    let get = |f: &mut std::fs::File, name: &str| -> Option<Vec<u8>> {
        let s = sections.iter().find(|s| s.name == name && s.flags & 0x800 == 0)?;
        read_at(f, s.offset, s.size)
    };
    let info = get(&mut f, ".debug_info")?;
    let abbrev = get(&mut f, ".debug_abbrev")?;
    let strs = get(&mut f, ".debug_str").unwrap_or_default();
    let line_strs = get(&mut f, ".debug_line_str").unwrap_or_default();
    let mut out: Vec<PathBuf> = Vec::new();
    let mut at = 0usize;
    while at + 11 <= info.len() {
        let len = u32le(&info, at)? as usize;
        if len >= 0xffff_fff0 {
            break; // 64-bit DWARF: not written by the compilers op2 drives
        }
        let end = at.checked_add(4 + len)?.min(info.len());
        let version = u16le(&info, at + 4)?;
        let (abbrev_off, addr_size, mut p) = match version {
            2..=4 => (u32le(&info, at + 6)? as usize, *info.get(at + 10)?, at + 11),
            5 => {
                let unit_type = *info.get(at + 6)?;
                // skeleton / split units (4, 5) carry a DWO id; type units (2, 6) a signature
                let extra = match unit_type {
                    1 | 3 => 0,
                    4 | 5 => 8,
                    2 | 6 => 12,
                    _ => break,
                };
                (u32le(&info, at + 8)? as usize, *info.get(at + 7)?, at + 12 + extra)
            }
            _ => break,
        };
        let code = uleb(&info, &mut p)?;
        let attrs = find_abbrev(&abbrev, abbrev_off, code)?;
        let (mut name, mut dir) = (None, None);
        for (attr, form) in attrs {
            let s = read_form(&info, &mut p, form, addr_size, &strs, &line_strs)?;
            match attr {
                DW_AT_NAME => name = s,
                DW_AT_COMP_DIR => dir = s,
                _ => {}
            }
        }
        if let Some(n) = name {
            let file = PathBuf::from(&n);
            let file = match dir {
                Some(d) if !file.is_absolute() => PathBuf::from(d).join(file),
                _ => file,
            };
            if !out.contains(&file) {
                out.push(file);
            }
        }
        at = end;
    }
    Some(out)
}

/// The attribute specifications (attribute, form) of abbreviation `code` in the table at `off`
/// of `.debug_abbrev` (an implicit constant's value, kept in the table, is skipped).
fn find_abbrev(abbrev: &[u8], off: usize, code: u64) -> Option<Vec<(u64, u64)>> {
    let mut p = off;
    loop {
        let c = uleb(abbrev, &mut p)?;
        if c == 0 {
            return None;
        }
        let _tag = uleb(abbrev, &mut p)?;
        p += 1; // has children
        let mut attrs = Vec::new();
        loop {
            let (a, f) = (uleb(abbrev, &mut p)?, uleb(abbrev, &mut p)?);
            if a == 0 && f == 0 {
                break;
            }
            if f == 0x21 {
                sleb(abbrev, &mut p)?; // DW_FORM_implicit_const's value
            }
            attrs.push((a, f));
        }
        if c == code {
            return Some(attrs);
        }
    }
}

/// Reads one attribute value of form `form` at `*p` (and moves past it): the string of a
/// string form, None for other forms; Option::None overall for a form it cannot size.
fn read_form(
    b: &[u8],
    p: &mut usize,
    form: u64,
    addr_size: u8,
    strs: &[u8],
    line_strs: &[u8],
) -> Option<Option<String>> {
    let skip = |p: &mut usize, n: usize| -> Option<Option<String>> {
        *p = p.checked_add(n).filter(|&e| e <= b.len())?;
        Some(None)
    };
    let cstr = |t: &[u8], at: usize| -> Option<String> {
        let rest = t.get(at..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        std::str::from_utf8(&rest[..end]).ok().map(str::to_string)
    };
    match form {
        0x01 => skip(p, addr_size as usize),                          // addr
        0x0b | 0x11 | 0x0c | 0x25 | 0x29 => skip(p, 1),               // data1 ref1 flag strx1 addrx1
        0x05 | 0x12 | 0x26 | 0x2a => skip(p, 2),                      // data2 ref2 strx2 addrx2
        0x27 | 0x2b => skip(p, 3),                                    // strx3 addrx3
        0x06 | 0x10 | 0x13 | 0x17 | 0x1c | 0x28 | 0x2c => skip(p, 4), // data4 ref_addr ref4 sec_offset ref_sup4 strx4 addrx4
        0x07 | 0x14 | 0x20 | 0x24 => skip(p, 8),                      // data8 ref8 ref_sig8 ref_sup8
        0x1e => skip(p, 16),                                          // data16
        0x19 | 0x21 => Some(None),                                    // flag_present implicit_const
        0x0d | 0x0f | 0x15 | 0x1a | 0x1b | 0x22 | 0x23 => {
            // sdata udata ref_udata strx addrx loclistx rnglistx
            uleb(b, p)?;
            Some(None)
        }
        0x09 | 0x18 => {
            // block, exprloc: a ULEB128 length
            let n = usize::try_from(uleb(b, p)?).ok()?;
            skip(p, n)
        }
        0x0a => {
            // block1: a one-byte length
            let n = *b.get(*p)? as usize;
            skip(p, 1 + n)
        }
        0x03 => {
            let n = u16le(b, *p)? as usize;
            skip(p, 2 + n)
        }
        0x04 => {
            let n = u32le(b, *p)? as usize;
            skip(p, 4 + n)
        }
        0x08 => {
            // string, inline
            let s = cstr(b, *p)?;
            *p += s.len() + 1;
            Some(Some(s))
        }
        0x0e | 0x1f => {
            // strp, line_strp
            let off = u32le(b, *p)? as usize;
            *p += 4;
            Some(cstr(if form == 0x0e { strs } else { line_strs }, off))
        }
        _ => None,
    }
}

fn uleb(b: &[u8], p: &mut usize) -> Option<u64> {
    let (mut v, mut shift) = (0u64, 0u32);
    loop {
        let byte = *b.get(*p)?;
        *p += 1;
        if shift < 64 {
            v |= u64::from(byte & 0x7f) << shift;
        }
        shift += 7;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
}

fn sleb(b: &[u8], p: &mut usize) -> Option<i64> {
    let (mut v, mut shift) = (0i64, 0u32);
    loop {
        let byte = *b.get(*p)?;
        *p += 1;
        if shift < 64 {
            v |= i64::from(byte & 0x7f) << shift;
        }
        shift += 7;
        if byte & 0x80 == 0 {
            if shift < 64 && byte & 0x40 != 0 {
                v |= -1i64 << shift;
            }
            return Some(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leb128() {
        let mut p = 0;
        assert_eq!(uleb(&[0xe5, 0x8e, 0x26], &mut p), Some(624485));
        assert_eq!(p, 3);
        let mut p = 0;
        assert_eq!(sleb(&[0xc0, 0xbb, 0x78], &mut p), Some(-123456));
    }

    /// A C program compiled with `-g` in one directory names its source through its units.
    #[test]
    fn finds_the_source_of_a_program_built_with_g() {
        let dir = std::env::temp_dir().join(format!("op2-dwarf-{}", std::process::id()));
        let src = dir.join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("prog_t.c"), "int main(void) { return 0; }\n").unwrap();
        let exe = dir.join("prog_t");
        let ok = std::process::Command::new("cc")
            .current_dir(&dir)
            .args(["-g", "-o"])
            .arg(&exe)
            .arg("src/prog_t.c")
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("no C compiler: skipped");
            return;
        }
        let units = unit_sources(&exe.display().to_string());
        assert!(units.contains(&src.join("prog_t.c")), "{units:?}");
        // Without debug information: nothing.
        let stripped = dir.join("prog_s");
        let ok = std::process::Command::new("cc").args(["-o"]).arg(&stripped).arg(src.join("prog_t.c")).status();
        if ok.map(|s| s.success()).unwrap_or(false) {
            assert!(unit_sources(&stripped.display().to_string()).iter().all(|u| !u.ends_with("prog_t.c")));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
