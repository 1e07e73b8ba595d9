//! Code generation: loop signature in, source text out. Pure: no compilers, no data, no
//! backends. One emitter per target.

pub mod host;
pub mod writer;

use crate::arg::ArgDesc;
use crate::core::ElemType;
use sha2::{Digest, Sha256};

/// A constant as generated code sees it (its value is loaded at run time, not baked in, so a
/// new value never forces a recompile).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConstDecl {
    pub name: String,
    pub ty: ElemType,
    pub dim: usize,
}

/// Everything that determines the generated code of one loop.
#[derive(Debug, Clone)]
pub struct LoopSignature<'a> {
    /// The name given to `op_par_loop` (for comments only: it does not change the code).
    pub loop_name: &'a str,
    pub kernel_name: &'a str,
    pub kernel_source: &'a str,
    pub args: &'a [ArgDesc],
    /// The constants the kernel uses, sorted by name.
    pub consts: &'a [ConstDecl],
}

impl LoopSignature<'_> {
    /// A short stable hash of what shapes the code (not the loop name), for the header comment.
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.kernel_name.as_bytes());
        h.update([0]);
        h.update(self.kernel_source.as_bytes());
        h.update([0]);
        h.update(format!("{:?}", self.args).as_bytes());
        h.update(format!("{:?}", self.consts).as_bytes());
        hex(&h.finalize()[..8])
    }
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
