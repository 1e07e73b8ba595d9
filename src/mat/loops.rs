//! What the loop driver needs for matrix arguments: the element-to-slot tables (built once per
//! matrix and map pair, then cached on the matrix) and the refusal on device backends.

use super::{MatId, SlotKey};
use crate::arg::{ArgDesc, BoundArg};
use crate::context::Context;
use crate::core::DatId;
use crate::error::Result;
use crate::op2_bail;
use std::sync::Arc;

/// The id plans and colouring use for a matrix (plans key their race targets on ids; these
/// count down from the top, far from any real dat's).
pub fn pseudo_dat(m: MatId) -> DatId {
    DatId(u32::MAX - m.0)
}

/// Per argument: the slot table of a matrix argument (None for other arguments).
pub fn slot_tables(
    ctx: &mut Context,
    name: &str,
    descs: &[ArgDesc],
    bound: &[BoundArg],
) -> Result<Vec<Option<Arc<Vec<i32>>>>> {
    let mut out = vec![None; bound.len()];
    if !descs.iter().any(|d| matches!(d, ArgDesc::Mat { .. })) {
        return Ok(out);
    }
    if ctx.backend.is_device() {
        op2_bail!(
            BackendUnavailable,
            "op_par_loop '{name}': matrix arguments (op_arg_mat) are not supported on the {} backend yet (use seq, threads or check; op_mat_mult and op_solve work on every backend)",
            ctx.backend.kind().name()
        );
    }
    for (i, b) in bound.iter().enumerate() {
        let BoundArg::Mat { mat, rowmap, ridx, colmap, cidx, .. } = *b else { continue };
        let (rm, cm) = (&ctx.maps[rowmap.0 as usize], &ctx.maps[colmap.0 as usize]);
        let n = ctx.sets[rm.from.0 as usize].size;
        let key = SlotKey { rowmap, ridx, colmap, cidx };
        let m = &mut ctx.mats.mats[mat.0 as usize];
        match m.slot_table(key, (&rm.values, rm.dim), (&cm.values, cm.dim), n) {
            Some(t) => out[i] = Some(t),
            None => op2_bail!(
                MatPattern,
                "op_par_loop '{name}', arg {i} (mat '{}'): maps '{}' and '{}' reach entries outside the matrix's sparsity (were the maps renumbered after op_decl_sparsity?)",
                m.name,
                rm.name,
                cm.name
            ),
        }
    }
    Ok(out)
}
