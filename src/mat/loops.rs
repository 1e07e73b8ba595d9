//! What the loop driver needs for matrix arguments: the element-to-slot tables (built once per
//! matrix and map pair, then cached on the matrix).

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
    for (i, b) in bound.iter().enumerate() {
        let BoundArg::Mat { mat, rowmap, ridx, colmap, cidx, .. } = *b else { continue };
        let (rm, cm) = (&ctx.maps[rowmap.0 as usize], &ctx.maps[colmap.0 as usize]);
        // Owned and exec-halo elements (the same under one process).
        let n = ctx.sets[rm.from.0 as usize].exec_end;
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

#[cfg(test)]
mod tests {
    use crate::arg::{Access, ArgDesc, DatAccess};
    use crate::backend::device::codegen::{unsupported, IncStrategy};
    use crate::backend::host::codegen as host;
    use crate::backend::opencl::codegen as opencl;
    use crate::codegen::LoopSignature;
    use crate::core::ElemType;

    fn args(acc: Access) -> Vec<ArgDesc> {
        vec![
            ArgDesc::Dat {
                ty: ElemType::Double,
                dim: 2,
                acc: Access::Read,
                how: DatAccess::Vector { map_dim: 3 },
                optional: false,
            },
            ArgDesc::Mat { ty: ElemType::Double, rows: 3, cols: 3, acc },
        ]
    }

    fn sig(a: &[ArgDesc]) -> LoopSignature<'_> {
        LoopSignature {
            loop_name: "stiff",
            kernel_name: "k",
            kernel_source: "void k(const double **x, double *A) { A[0] = x[0][0]; }",
            kernel_origin: "\"kernel:k\"",
            args: a,
            consts: &[],
        }
    }

    /// The host wrapper zeroes a local block per element and adds (stores) it through the slot
    /// table after the kernel.
    #[test]
    fn host_code_adds_the_local_block() {
        let a = args(Access::Inc);
        let src = host::generate(&sig(&a));
        assert!(src.contains("double *op2_a1 = (double *)op2_slots[2];"), "{src}");
        assert!(src.contains("const int *op2_m1 = (const int *)op2_slots[3];"));
        assert!(src.contains("    double op2_b1[9];\n    memset(op2_b1, 0, sizeof(op2_b1));"));
        assert!(src.contains("(void *)op2_b1);"));
        assert!(src.contains(
            "    const int *op2_s1 = op2_m1 + op2_n * 9;\n    for (int op2_k = 0; op2_k < 9; op2_k++) op2_a1[op2_s1[op2_k]] += op2_b1[op2_k];"
        ));
        let a = args(Access::Write);
        assert!(host::generate(&sig(&a)).contains("op2_a1[op2_s1[op2_k]] = op2_b1[op2_k];"));
        assert_eq!(host::describe(&a[1]), "mat double[3x3] OP_WRITE");
    }

    #[test]
    fn opencl_code_adds_plainly_or_atomically() {
        let a = args(Access::Inc);
        let plain = opencl::generate(&sig(&a), &[], true, IncStrategy::Plain, false);
        assert!(plain.contains("__global double *op2_d1,"), "{plain}");
        assert!(plain.contains("__global const int *op2_m1"));
        assert!(plain.contains("op2_d1[op2_m1[(size_t)op2_e * 9 + op2_k]] += op2_p1[op2_k];"));
        let atomic = opencl::generate(&sig(&a), &[], false, IncStrategy::Atomics, false);
        assert!(atomic.contains("op2_atomic_add_double(&op2_d1[op2_m1[(size_t)op2_e * 9 + op2_k]], op2_p1[op2_k]);"));
        assert_eq!(unsupported(&a, "opencl"), None);
        let big = [ArgDesc::Mat { ty: ElemType::Float, rows: 100, cols: 100, acc: Access::Inc }];
        assert!(unsupported(&big, "opencl").is_some_and(|m| m.contains("10000 values")));
    }
}
