//! The name of the function or variable at an address of a loaded ELF object, from the object
//! file's own symbol table (`.symtab`): the dynamic linker only knows exported symbols, and a
//! program's Fortran subroutines, C++ kernels and global variables are not exported. Used to
//! name loops whose kernel is a compiled function (`op_par_loop_fptr` without a name) and
//! constants declared by address (OP2's three-argument `op_decl_const`). Anything unexpected
//! (not a 64-bit little-endian ELF file, no symbol table, a size that does not fit) gives
//! `None`: a name is a convenience.

use std::io::{Read, Seek, SeekFrom};

/// Section headers or a symbol table larger than this are not read (a name is not worth it).
const MAX_TABLE: u64 = 256 << 20;

/// The name of the function symbol of the ELF file `path` whose range holds `offset`, where
/// `offset` is the address relative to the object's load base for a shared object or a
/// position-independent executable (ELF type ET_DYN), and the address itself for a fixed-address
/// executable (ET_EXEC): pass both, `rel` and `abs`.
pub fn function_at(path: &str, rel: u64, abs: u64) -> Option<String> {
    symbol_at(path, rel, abs, Kind::Function).map(|(name, _)| name)
}

/// The name and size of the data symbol (a variable: STT_OBJECT) of the ELF file `path` that
/// starts exactly at the address (`rel`, `abs` as for `function_at`): a constant's address is
/// its variable's, never a point inside it.
pub fn variable_at(path: &str, rel: u64, abs: u64) -> Option<(String, u64)> {
    symbol_at(path, rel, abs, Kind::Variable)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Function,
    Variable,
}

fn symbol_at(path: &str, rel: u64, abs: u64, kind: Kind) -> Option<(String, u64)> {
    // A loaded object or /proc/self/exe; opened as every input file (without blocking, a
    // regular file only) in case the name now holds something else.
    let (mut f, _) = crate::core::file::open_regular(path, "op2: reading symbols").ok()?;
    let mut eh = [0u8; 64];
    f.read_exact(&mut eh).ok()?;
    // 64-bit (class 2), little-endian (data 1)
    if &eh[0..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return None;
    }
    let e_type = u16le(&eh, 16)?;
    let want = match e_type {
        2 => abs, // ET_EXEC
        3 => rel, // ET_DYN
        _ => return None,
    };
    let shoff = u64le(&eh, 40)?;
    let shentsize = u16le(&eh, 58)? as u64;
    let shnum = u16le(&eh, 60)? as u64;
    if shentsize < 64 || shnum == 0 {
        return None;
    }
    let shdrs = read_at(&mut f, shoff, shentsize.checked_mul(shnum)?)?;
    let section = |i: u64| -> Option<(u32, u64, u64, u32, u64)> {
        let base = usize::try_from(i.checked_mul(shentsize)?).ok()?;
        let s = shdrs.get(base..base + 64)?;
        // sh_type, sh_offset, sh_size, sh_link, sh_entsize
        Some((u32le(s, 4)?, u64le(s, 24)?, u64le(s, 32)?, u32le(s, 40)?, u64le(s, 56)?))
    };
    for i in 0..shnum {
        let (ty, off, size, link, entsize) = section(i)?;
        if ty != 2 || entsize < 24 {
            continue; // SHT_SYMTAB only
        }
        let (_, str_off, str_size, _, _) = section(link as u64)?;
        let syms = read_at(&mut f, off, size)?;
        let strs = read_at(&mut f, str_off, str_size)?;
        let mut k = 0usize;
        let step = usize::try_from(entsize).ok()?;
        while k + 24 <= syms.len() {
            let s = &syms[k..k + 24];
            k += step;
            let info = s[4];
            let value = u64le(s, 8)?;
            let len = u64le(s, 16)?;
            // A defined symbol (st_shndx != 0): STT_FUNC holding the address, or STT_OBJECT
            // starting at it.
            let fits = match kind {
                Kind::Function => info & 0xf == 2 && want >= value && want < value.saturating_add(len.max(1)),
                Kind::Variable => info & 0xf == 1 && want == value && len > 0,
            };
            if !fits || u16le(s, 6)? == 0 {
                continue;
            }
            let name_at = usize::try_from(u32le(s, 0)?).ok()?;
            let rest = strs.get(name_at..)?;
            let end = rest.iter().position(|&b| b == 0)?;
            return std::str::from_utf8(&rest[..end]).ok().map(|n| (n.to_string(), len));
        }
    }
    None
}

/// The loop name for a compiled Fortran (or C) function's symbol: gfortran's module mangling
/// (`__MODULE_MOD_name`), an internal procedure's `.N` suffix and an external procedure's
/// trailing underscore are taken off (`__airfoil_kernels_MOD_save_soln` is `save_soln`).
pub fn procedure_name(symbol: &str) -> String {
    let s = symbol;
    let s = match s.find("_MOD_") {
        Some(p) if s.starts_with("__") => &s[p + 5..],
        _ => s,
    };
    let s = match s.rfind('.') {
        Some(p) if p > 0 && s[p + 1..].bytes().all(|b| b.is_ascii_digit()) => &s[..p],
        _ => s,
    };
    let s = if symbol.contains("_MOD_") { s } else { s.strip_suffix('_').unwrap_or(s) };
    s.to_string()
}

/// Where an address of this process lies, as the dynamic linker knows it: the loaded object's
/// file (empty for the main program on some systems), its load base, and the exported symbol
/// starting exactly at the address, if any. None when no loaded object holds it (a stack or
/// heap address).
pub fn loaded_object(addr: u64) -> Option<(String, u64, Option<String>)> {
    // SAFETY: dladdr only reads the address and fills `info`; `dli_sname` and `dli_fname`
    // (when not NULL) point to NUL-terminated strings of the dynamic linker.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr as usize as *const libc::c_void, &mut info) == 0 {
            return None;
        }
        let text = |p: *const std::ffi::c_char| {
            if p.is_null() {
                None
            } else {
                std::ffi::CStr::from_ptr(p).to_str().ok().map(str::to_string)
            }
        };
        let exact = info.dli_saddr as usize as u64 == addr;
        let exported = if exact { text(info.dli_sname) } else { None };
        Some((text(info.dli_fname).unwrap_or_default(), info.dli_fbase as usize as u64, exported))
    }
}

/// A symbol of the object holding `addr` found by `find(path, rel, abs)` in the object's file,
/// else in the executable's (`/proc/self/exe`).
pub fn symbol_near<T>(addr: u64, find: impl Fn(&str, u64, u64) -> Option<T>) -> Option<T> {
    let (file, base, _) = loaded_object(addr)?;
    let rel = addr.wrapping_sub(base);
    Some(file).filter(|f| !f.is_empty()).and_then(|f| find(&f, rel, addr)).or_else(|| find("/proc/self/exe", rel, addr))
}

/// The plain name of a C or C++ function's symbol: a C name as it is, a C++ function at
/// namespace scope (`_Z8res_calcPKdS0_Pd`; `_ZL8res_calcPKd` when `static`) its identifier
/// (`res_calc`); None for anything
/// else (a member, a name in a namespace, a template), which no kernel header names. The same
/// for a C++ `static` variable at namespace scope (`_ZL3gam`: `gam`).
pub fn c_function_name(symbol: &str) -> Option<String> {
    let Some(rest) = symbol.strip_prefix("_Z") else {
        return crate::core::is_c_identifier(symbol).then(|| symbol.to_string());
    };
    // `_ZL`: internal linkage (a `static` function or variable at namespace scope).
    let rest = rest.strip_prefix('L').unwrap_or(rest);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let n: usize = rest.get(..digits)?.parse().ok()?;
    let name = rest.get(digits..digits + n)?;
    crate::core::is_c_identifier(name).then(|| name.to_string())
}

/// One section of an ELF file: its name (from the section name table), flags, offset, size.
pub(crate) struct Section {
    pub name: String,
    pub flags: u64,
    pub offset: u64,
    pub size: u64,
}

/// The sections of the 64-bit little-endian ELF file `f` (read from its start); None for
/// anything else.
pub(crate) fn section_headers(f: &mut std::fs::File) -> Option<Vec<Section>> {
    let eh = read_at(f, 0, 64)?;
    if &eh[0..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return None;
    }
    let shoff = u64le(&eh, 40)?;
    let shentsize = u16le(&eh, 58)? as u64;
    let shnum = u16le(&eh, 60)? as u64;
    let shstrndx = u16le(&eh, 62)? as u64;
    if shentsize < 64 || shnum == 0 || shstrndx >= shnum {
        return None;
    }
    let shdrs = read_at(f, shoff, shentsize.checked_mul(shnum)?)?;
    let raw = |i: u64| -> Option<(u32, u64, u64, u64)> {
        let base = usize::try_from(i.checked_mul(shentsize)?).ok()?;
        let s = shdrs.get(base..base + 64)?;
        // sh_name, sh_flags, sh_offset, sh_size
        Some((u32le(s, 0)?, u64le(s, 8)?, u64le(s, 24)?, u64le(s, 32)?))
    };
    let (_, _, str_off, str_size) = raw(shstrndx)?;
    let names = read_at(f, str_off, str_size)?;
    let mut out = Vec::with_capacity(shnum as usize);
    for i in 0..shnum {
        let (n, flags, offset, size) = raw(i)?;
        let rest = names.get(n as usize..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        let name = String::from_utf8_lossy(&rest[..end]).into_owned();
        out.push(Section { name, flags, offset, size });
    }
    Some(out)
}

pub(crate) fn read_at(f: &mut std::fs::File, off: u64, len: u64) -> Option<Vec<u8>> {
    if len > MAX_TABLE {
        return None;
    }
    let n = usize::try_from(len).ok()?;
    let mut buf: Vec<u8> = crate::core::alloc::zeroed(n, "ELF symbol table").ok()?;
    f.seek(SeekFrom::Start(off)).ok()?;
    f.read_exact(&mut buf).ok()?;
    Some(buf)
}

pub(crate) fn u16le(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub(crate) fn u32le(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64le(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedure_names_from_gfortran_symbols() {
        assert_eq!(procedure_name("__airfoil_kernels_MOD_save_soln"), "save_soln");
        assert_eq!(procedure_name("__m_MOD_has_under_"), "has_under_");
        assert_eq!(procedure_name("cell_count.0"), "cell_count");
        assert_eq!(procedure_name("res_"), "res");
        assert_eq!(procedure_name("kernel"), "kernel");
    }

    #[test]
    fn c_function_names_from_c_and_cpp_symbols() {
        assert_eq!(c_function_name("res_calc").as_deref(), Some("res_calc"));
        assert_eq!(c_function_name("_Z8res_calcPKdS0_S0_S0_S0_S0_PdS1_").as_deref(), Some("res_calc"));
        assert_eq!(c_function_name("_Z6updatePKdPdS1_S0_S1_").as_deref(), Some("update"));
        assert_eq!(c_function_name("_ZN2ns3fooEv"), None);
        assert_eq!(c_function_name("_ZL3cfl").as_deref(), Some("cfl"));
        assert_eq!(c_function_name("_ZL4qinf").as_deref(), Some("qinf"));
        assert_eq!(c_function_name("_ZL9save_solnPKdPd").as_deref(), Some("save_soln"));
        assert_eq!(c_function_name("_Z99x"), None);
        assert_eq!(c_function_name("a.b"), None);
    }

    #[no_mangle]
    static OP2_ELF_TEST_VARIABLE: [f64; 3] = [1.0, 2.0, 3.0];

    #[test]
    fn finds_a_variable_of_this_test_program() {
        let addr = std::hint::black_box(&OP2_ELF_TEST_VARIABLE) as *const [f64; 3] as usize as u64;
        // SAFETY: dladdr only reads the address and fills `info`.
        let (path, base) = unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            assert!(libc::dladdr(addr as usize as *const libc::c_void, &mut info) != 0);
            (std::ffi::CStr::from_ptr(info.dli_fname).to_str().unwrap().to_string(), info.dli_fbase as u64)
        };
        let path = if path.is_empty() { "/proc/self/exe".to_string() } else { path };
        let got = variable_at(&path, addr - base, addr);
        assert_eq!(got, Some(("OP2_ELF_TEST_VARIABLE".to_string(), 24)));
        // Not at its start: no variable.
        assert_eq!(variable_at(&path, addr - base + 8, addr + 8), None);
    }

    #[inline(never)]
    #[no_mangle]
    extern "C" fn op2_elf_test_marker() -> u32 {
        std::hint::black_box(7)
    }

    #[test]
    fn finds_a_function_of_this_test_program() {
        let addr = op2_elf_test_marker as *const () as usize as u64;
        // SAFETY: dladdr only reads the address and fills `info`.
        let (path, base) = unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            assert!(libc::dladdr(addr as usize as *const libc::c_void, &mut info) != 0);
            (std::ffi::CStr::from_ptr(info.dli_fname).to_str().unwrap().to_string(), info.dli_fbase as u64)
        };
        let path = if path.is_empty() { "/proc/self/exe".to_string() } else { path };
        assert_eq!(function_at(&path, addr - base, addr).as_deref(), Some("op2_elf_test_marker"));
        assert_eq!(function_at("/nonexistent/file", 0, 0), None);
    }
}
