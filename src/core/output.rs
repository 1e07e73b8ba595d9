//! OP2's file formats for dats: `op_print_dat_to_txtfile` and `op_print_dat_to_binfile`; and
//! `print_after_c_stdio`, how op2 prints to stdout after what the C program printed.
//!
//! The text format is OP2's own, byte for byte, so files written by op2 diff cleanly against
//! files written by OP2: a header line `"<size> <dim>"`, then one line per element in which
//! every value is printed with a leading space by C's `printf` formats `" %+2.15lE"` (double),
//! `" %+f"` (float) and `" %+d"` (int). OP2 has no other types; op2 prints them in the same
//! style (`" %u"`, `" %+lld"`, `" %llu"`, bool as `" %+d"` of 0/1). The values are formatted by
//! the C library's `snprintf` itself, so rounding and special values (`+INF`, `-NAN`) are C's.

use super::ElemType;
use std::ffi::{c_char, c_int, c_longlong, c_uint, c_ulonglong};

fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

/// Appends one value in OP2's text format (with its leading space) to `out`.
pub fn push_txt_value(out: &mut String, ty: ElemType, bytes: &[u8]) {
    let mut buf = [0u8; 64];
    let p = buf.as_mut_ptr() as *mut c_char;
    let n = buf.len();
    // SAFETY: snprintf writes at most n bytes (NUL included) into buf; each format has exactly
    // one conversion, given a value of the C type it expects (float is promoted to double).
    let len: c_int = unsafe {
        match ty {
            ElemType::Double => libc::snprintf(p, n, c" %+2.15lE".as_ptr(), f64::from_ne_bytes(arr(bytes))),
            ElemType::Float => libc::snprintf(p, n, c" %+f".as_ptr(), f32::from_ne_bytes(arr(bytes)) as f64),
            ElemType::Int => libc::snprintf(p, n, c" %+d".as_ptr(), i32::from_ne_bytes(arr(bytes)) as c_int),
            ElemType::Uint => libc::snprintf(p, n, c" %u".as_ptr(), u32::from_ne_bytes(arr(bytes)) as c_uint),
            ElemType::Ll => libc::snprintf(p, n, c" %+lld".as_ptr(), i64::from_ne_bytes(arr(bytes)) as c_longlong),
            ElemType::Ull => libc::snprintf(p, n, c" %llu".as_ptr(), u64::from_ne_bytes(arr(bytes)) as c_ulonglong),
            ElemType::Bool => libc::snprintf(p, n, c" %+d".as_ptr(), (bytes[0] != 0) as c_int),
        }
    };
    // " %+f" of 1e308 needs 311 characters: fall back to a heap buffer of the size C asks for.
    let len = len.max(0) as usize;
    if len < n {
        out.push_str(std::str::from_utf8(&buf[..len]).unwrap_or(""));
    } else {
        let mut big = vec![0u8; len + 1];
        let p = big.as_mut_ptr() as *mut c_char;
        // SAFETY: as above, with a buffer of len + 1 bytes (only float and double get here).
        let got = unsafe {
            match ty {
                ElemType::Double => libc::snprintf(p, len + 1, c" %+2.15lE".as_ptr(), f64::from_ne_bytes(arr(bytes))),
                _ => libc::snprintf(p, len + 1, c" %+f".as_ptr(), f32::from_ne_bytes(arr(bytes)) as f64),
            }
        };
        out.push_str(std::str::from_utf8(&big[..(got.max(0) as usize).min(len)]).unwrap_or(""));
    }
}

/// The whole text file for `rows` (each `dim` values of `ty`, in the order to print).
pub fn txt(size: usize, dim: usize, ty: ElemType, rows: &[u8]) -> String {
    let ts = ty.size();
    let mut s = String::with_capacity(16 + size * dim * 24);
    s.push_str(&format!("{size} {dim}\n"));
    if dim > 0 {
        for row in rows.chunks_exact(dim * ts).take(size) {
            for v in row.chunks_exact(ts) {
                push_txt_value(&mut s, ty, v);
            }
            s.push('\n');
        }
    }
    s
}

/// The binary file: C `int` element count, C `int` dim (native byte order, as OP2's
/// `fwrite`s), then the rows' raw bytes.
pub fn bin(size: usize, dim: usize, rows: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + rows.len());
    v.extend_from_slice(&(size as i32).to_ne_bytes());
    v.extend_from_slice(&(dim as i32).to_ne_bytes());
    v.extend_from_slice(rows);
    v
}

/// Prints `text` to stdout after flushing C's stdio buffers, so it lands after what the C
/// program printed before (diagnostics interleave with the program's own output as it expects).
pub fn print_after_c_stdio(text: &str) {
    use std::io::Write;
    // SAFETY: fflush(NULL) flushes all C output streams; no preconditions.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(ty: ElemType, bytes: &[u8]) -> String {
        let mut s = String::new();
        push_txt_value(&mut s, ty, bytes);
        s
    }

    #[test]
    fn op2_number_formats() {
        assert_eq!(one(ElemType::Double, &0.1f64.to_ne_bytes()), " +1.000000000000000E-01");
        assert_eq!(one(ElemType::Double, &(-2.5e300f64).to_ne_bytes()), " -2.500000000000000E+300");
        assert_eq!(one(ElemType::Double, &0.0f64.to_ne_bytes()), " +0.000000000000000E+00");
        assert_eq!(one(ElemType::Double, &f64::INFINITY.to_ne_bytes()), " +INF");
        assert_eq!(one(ElemType::Float, &(-1.5f32).to_ne_bytes()), " -1.500000");
        assert_eq!(one(ElemType::Float, &0.1f32.to_ne_bytes()), " +0.100000");
        assert_eq!(one(ElemType::Int, &7i32.to_ne_bytes()), " +7");
        assert_eq!(one(ElemType::Int, &i32::MIN.to_ne_bytes()), " -2147483648");
        assert_eq!(one(ElemType::Uint, &u32::MAX.to_ne_bytes()), " 4294967295");
        assert_eq!(one(ElemType::Ll, &(-9i64).to_ne_bytes()), " -9");
        assert_eq!(one(ElemType::Ull, &u64::MAX.to_ne_bytes()), " 18446744073709551615");
        assert_eq!(one(ElemType::Bool, &[1]), " +1");
        // A float too wide for the stack buffer.
        let big = one(ElemType::Float, &f32::MAX.to_ne_bytes());
        assert!(big.starts_with(" +340282346638528859811704183484516925440.000000"), "{big}");
    }

    #[test]
    fn files() {
        let rows: Vec<u8> = [1i32, -2, 3, 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(txt(2, 2, ElemType::Int, &rows), "2 2\n +1 -2\n +3 +4\n");
        let b = bin(2, 2, &rows);
        assert_eq!(&b[..4], &2i32.to_ne_bytes());
        assert_eq!(&b[4..8], &2i32.to_ne_bytes());
        assert_eq!(&b[8..], &rows[..]);
    }
}
