//! `op_init`'s diagnostics levels (OP2's `diags`): 1 one line at `op_init`; 2 also a line per
//! new loop shape (compiled or cache hit, and the time); 3 also checks on every loop call.

use crate::arg::{Access, ArgDesc, BoundArg, DatAccess};
use crate::config::BackendKind;
use crate::context::Context;
use crate::core::{DatId, KernelId, SetId};
use crate::error::Result;
use crate::op2_bail;

impl Context {
    /// `diags >= 1`: the line `op_init` prints, naming the backend, its threads or device, and
    /// the JIT cache.
    pub fn diags_init_line(&self) -> String {
        let kind = self.backend.kind();
        let workers = match kind {
            BackendKind::Threads => format!("{} threads", self.config.num_threads),
            BackendKind::Seq | BackendKind::Check => "1 thread".to_string(),
            BackendKind::OpenCl | BackendKind::Cuda => format!("device {}", self.backend.describe()),
        };
        format!(
            "op2: backend {}, {workers}, compiler '{}', cache {} (diags {})\n",
            kind.name(),
            self.config.cc,
            self.jit.cache.dir().display(),
            self.config.diags
        )
    }

    /// `diags >= 2`: one line per new loop shape, saying whether its code was compiled or
    /// loaded from the disk cache, and how long that took. `jit_before` is
    /// `(jit.stats.compiles, jit.stats.disk_hits)` read before the shape's code was produced.
    /// Printed to stdout (after C's buffered output); nothing below level 2.
    /// `simd_refused`: why the loop has no vector wrapper (OP2_SIMD), shown on the same line.
    pub fn diags_loop_shape(
        &self,
        name: &str,
        kernel: KernelId,
        jit_before: (u64, u64, u64),
        took: std::time::Duration,
        simd_refused: Option<&str>,
    ) {
        if self.config.diags < 2 {
            return;
        }
        let st = &self.jit.stats;
        let how = if st.compiles > jit_before.0 {
            "compiled"
        } else if st.disk_hits > jit_before.1 {
            "disk cache hit"
        } else if st.pack_loads > jit_before.2 {
            "loaded from loop pack"
        } else {
            "memory cache hit"
        };
        let simd = simd_refused.map(|r| format!("; not vectorised (OP2_SIMD): {r}")).unwrap_or_default();
        crate::core::output::print_after_c_stdio(&format!(
            "op2: loop '{name}' (kernel '{}'): new loop shape ({} in this session), {how}, {:.3} ms{simd}\n",
            self.kernels[kernel.0 as usize].name,
            self.loops.len(),
            took.as_secs_f64() * 1e3
        ));
    }

    /// `diags >= 2`: a chain's first run (after its inspection): its loops, and per loop the
    /// smallest and largest share of a tile, the tiles and the levels (tiles of a level run at
    /// once on threads).
    pub fn diags_chain<'n>(&self, name: &str, loops: impl Iterator<Item = &'n str>, t: &crate::plan::tiling::Tiling) {
        if self.config.diags < 2 {
            return;
        }
        let mut text = format!(
            "op2: {name}: sparse-tiled, {} tiles in {} level{} ({:?} schedule)\n",
            t.tiles,
            t.nlevels,
            if t.nlevels == 1 { "" } else { "s" },
            t.schedule
        );
        for (l, loop_name) in loops.enumerate() {
            let lens = (0..t.tiles).map(|k| t.tile_len(l, k));
            let (lo, hi, total) = lens.fold((usize::MAX, 0, 0), |(lo, hi, s), n| (lo.min(n), hi.max(n), s + n));
            let runs: usize = t.runs[l].iter().map(Vec::len).sum();
            let listed = if t.is_listed(l) { " (listed: one call a tile)" } else { "" };
            text.push_str(&format!(
                "op2:   loop {l} '{loop_name}': {total} elements, {} to {hi} per tile, {runs} runs{listed}\n",
                if lo == usize::MAX { 0 } else { lo }
            ));
        }
        crate::core::output::print_after_c_stdio(&text);
    }

    /// `diags >= 3`: checks run on every call, on every backend, beyond those every loop gets:
    /// an indirect OP_WRITE / OP_RW argument promises that no two elements reach the same
    /// target (a broken promise is a race on parallel backends); reported as OP2_ERR_CHECK with
    /// the elements in the declared numbering.
    pub fn diags_check_loop(&self, name: &str, set: SetId, descs: &[ArgDesc], bound: &[BoundArg]) -> Result<()> {
        if self.config.diags < 3 {
            return Ok(());
        }
        let n = self.sets[set.0 as usize].size;
        let declared =
            |s: SetId, e: usize| self.sets[s.0 as usize].order.as_ref().map_or(e, |o| o.old_of_new[e] as usize);
        let mut checked: Vec<DatId> = Vec::new();
        for (d, b) in descs.iter().zip(bound) {
            let (
                ArgDesc::Dat { acc: Access::Write | Access::Rw, .. },
                BoundArg::Dat { dat, map: Some(_), enabled: true },
            ) = (d, b)
            else {
                continue;
            };
            if checked.contains(dat) {
                continue;
            }
            checked.push(*dat);
            let dv = &self.dats[dat.0 as usize];
            let mut owner = vec![u32::MAX; self.sets[dv.set.0 as usize].size];
            for (j, (d2, b2)) in descs.iter().zip(bound).enumerate() {
                let (
                    ArgDesc::Dat { acc: acc2 @ (Access::Write | Access::Rw), how, .. },
                    BoundArg::Dat { dat: dat2, map: Some(m), enabled: true },
                ) = (d2, b2)
                else {
                    continue;
                };
                if dat2 != dat {
                    continue;
                }
                let mp = &self.maps[m.0 as usize];
                let cols = match how {
                    DatAccess::Indirect { idx, .. } => *idx..*idx + 1,
                    _ => 0..mp.dim,
                };
                for e in 0..n {
                    for c in cols.clone() {
                        let t = mp.values[e * mp.dim + c] as usize;
                        if owner[t] != u32::MAX && owner[t] != e as u32 {
                            op2_bail!(
                                Check,
                                "op_par_loop '{name}', arg {j} (dat '{}'): {} through map '{}' promises that no two elements reach the same target, but elements {} and {} of set '{}' both reach element {} (diags 3 check)",
                                dv.name,
                                acc2.c_name(),
                                mp.name,
                                declared(set, owner[t] as usize),
                                declared(set, e),
                                self.sets[set.0 as usize].name,
                                declared(dv.set, t)
                            );
                        }
                        owner[t] = e as u32;
                    }
                }
            }
        }
        Ok(())
    }
}
