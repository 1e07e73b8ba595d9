//! The names and the one layout rule of the generated host library (`seq`, `threads`) that both
//! of its wrappers follow: the scalar range wrapper (`backend::host::codegen`, whose module note describes
//! the ABI) and the vectorised one (`backend::host::codegen::simd`, which runs the elements after its last whole
//! block through the scalar wrapper and keeps small globals local exactly as it does). Both
//! emitters import this; neither imports the other's internals the other way round.

use crate::core::ElemType;

/// Name of the range wrapper symbol.
pub const LOOP_SYMBOL: &str = "op2_loop";
/// Name of the list wrapper symbol (`op2_loop` over elements given by a list).
pub const LIST_SYMBOL: &str = "op2_loop_list";
/// Name of the constant loader symbol.
pub const CONSTS_SYMBOL: &str = "op2_set_constants";

/// Globals (and info payloads) up to this many bytes live in a wrapper-local copy, which the
/// inlined kernel keeps in registers; larger ones are used in place (the driver already gives
/// reductions a private buffer), so no global of any size goes on the stack.
pub const GBL_LOCAL_MAX_BYTES: usize = 256;

/// Whether a global or info argument of `dim` values of `ty` is copied into a wrapper local.
pub fn gbl_is_local(ty: ElemType, dim: usize) -> bool {
    dim.saturating_mul(ty.size()) <= GBL_LOCAL_MAX_BYTES
}
