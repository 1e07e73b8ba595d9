//! Element types of dats, globals and constants: the type strings of the C API and their C names.

use crate::error::Result;
use crate::op2_bail;

/// The element types the C API accepts (`"double"`, `"float"`, `"int"`, `"uint"`, `"ll"`,
/// `"ull"`, `"bool"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElemType {
    Double,
    Float,
    Int,
    Uint,
    Ll,
    Ull,
    Bool,
}

impl ElemType {
    pub const ALL: [ElemType; 7] =
        [ElemType::Double, ElemType::Float, ElemType::Int, ElemType::Uint, ElemType::Ll, ElemType::Ull, ElemType::Bool];

    /// Parses a C API type string; `call` and `what` name the caller in the error message.
    pub fn parse(s: &str, call: &str, what: &str) -> Result<ElemType> {
        for t in ElemType::ALL {
            if t.api_name() == s {
                return Ok(t);
            }
        }
        // OP2 programs written for C++ often say "real(8)"-free spellings like these; accept the
        // obvious C spellings too, so `"unsigned int"` does not become a confusing error.
        let alias = match s {
            "unsigned int" | "unsigned" => Some(ElemType::Uint),
            "long long" => Some(ElemType::Ll),
            "unsigned long long" => Some(ElemType::Ull),
            "_Bool" => Some(ElemType::Bool),
            _ => None,
        };
        match alias {
            Some(t) => Ok(t),
            None => op2_bail!(
                BadType,
                "{call}{what}: unknown type '{s}' (expected one of double, float, int, uint, ll, ull, bool)"
            ),
        }
    }

    /// The spelling in the C API.
    pub fn api_name(self) -> &'static str {
        match self {
            ElemType::Double => "double",
            ElemType::Float => "float",
            ElemType::Int => "int",
            ElemType::Uint => "uint",
            ElemType::Ll => "ll",
            ElemType::Ull => "ull",
            ElemType::Bool => "bool",
        }
    }

    /// The C type used in generated code.
    pub fn c_name(self) -> &'static str {
        match self {
            ElemType::Double => "double",
            ElemType::Float => "float",
            ElemType::Int => "int",
            ElemType::Uint => "unsigned int",
            ElemType::Ll => "long long",
            ElemType::Ull => "unsigned long long",
            ElemType::Bool => "_Bool",
        }
    }

    /// Size in bytes (the C ABI sizes of the types above on every platform we support).
    pub fn size(self) -> usize {
        match self {
            ElemType::Double | ElemType::Ll | ElemType::Ull => 8,
            ElemType::Float | ElemType::Int | ElemType::Uint => 4,
            ElemType::Bool => 1,
        }
    }

    /// Whether sums, minima and maxima are defined (INC/MIN/MAX globals need this).
    pub fn is_numeric(self) -> bool {
        !matches!(self, ElemType::Bool)
    }

    /// A stable small integer for `op_arg` (the C side never interprets it).
    pub fn code(self) -> i32 {
        self as i32
    }

    pub fn from_code(c: i32) -> Option<ElemType> {
        ElemType::ALL.get(usize::try_from(c).ok()?).copied()
    }

    /// Formats one value read from `bytes` (exactly `size()` long) the way
    /// `op_print_dat_to_txtfile` prints it.
    pub fn format_value(self, bytes: &[u8]) -> String {
        fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
            let mut a = [0u8; N];
            a.copy_from_slice(&b[..N]);
            a
        }
        match self {
            ElemType::Double => fmt_g(f64::from_ne_bytes(arr(bytes)), 17),
            ElemType::Float => fmt_g(f32::from_ne_bytes(arr(bytes)) as f64, 9),
            ElemType::Int => i32::from_ne_bytes(arr(bytes)).to_string(),
            ElemType::Uint => u32::from_ne_bytes(arr(bytes)).to_string(),
            ElemType::Ll => i64::from_ne_bytes(arr(bytes)).to_string(),
            ElemType::Ull => u64::from_ne_bytes(arr(bytes)).to_string(),
            ElemType::Bool => (if bytes[0] != 0 { "1" } else { "0" }).to_string(),
        }
    }
}

/// C's `%.{prec}g` for finite and non-finite doubles (what C users compare against).
pub fn fmt_g(v: f64, prec: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let p = prec.max(1);
    // Exponent as %e would print it after rounding to p significant digits.
    let e_repr = format!("{:.*e}", p - 1, v);
    let (mant, exp) = e_repr.split_once('e').unwrap_or((&e_repr, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let mant = strip_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{:.*}", decimals, v)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_names() {
        for t in ElemType::ALL {
            assert_eq!(ElemType::parse(t.api_name(), "x", "").unwrap(), t);
            assert_eq!(ElemType::from_code(t.code()), Some(t));
        }
        let e = ElemType::parse("doubel", "op_decl_dat", " 'q'").unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::BadType);
        assert!(e.message.starts_with("op_decl_dat 'q': unknown type 'doubel'"));
    }

    #[test]
    fn g_format_matches_c() {
        assert_eq!(fmt_g(1.0, 17), "1");
        assert_eq!(fmt_g(0.1, 17), "0.10000000000000001");
        assert_eq!(fmt_g(1e-5, 17), "1.0000000000000001e-05");
        assert_eq!(fmt_g(123456.0, 9), "123456");
        assert_eq!(fmt_g(1.5e20, 17), "1.5e+20");
        assert_eq!(fmt_g(-2.5, 17), "-2.5");
        assert_eq!(fmt_g(0.0001, 3), "0.0001");
    }
}
