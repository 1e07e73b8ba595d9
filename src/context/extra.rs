//! More of OP2's functions on the `Context`: temporary dats, kernels read from files, and
//! `op_renumber` (the algorithms are in `core::renumber`; this applies them to the session's
//! sets, maps and dats).

use crate::context::Context;
use crate::core::buffer::AlignedBuf;
use crate::core::{DatId, ElemType, KernelId, Map, MapId, SetId};
use crate::error::Result;
use crate::op2_bail;

impl Context {
    /// Declares a temporary dat (zeros) that `free_temp_dat` may free.
    pub fn decl_temp_dat(&mut self, set: SetId, dim: i32, ty: ElemType, name: &str, call: &str) -> Result<DatId> {
        let mut dat = self.prepare_dat(set, dim, ty, None, name, call);
        if let Ok(d) = &mut dat {
            d.temp = true;
        }
        // Under MPI (collective): committed only once every process has its dat.
        let dat = self.comm.agree(dat)?;
        self.dats.push(dat);
        Ok(DatId(self.dats.len() as u32 - 1))
    }

    /// Frees a temporary dat: its memory is released and its id is never reused (other dats
    /// keep their ids; the freed one's handle is stale from now on).
    pub fn free_temp_dat(&mut self, d: DatId, call: &str) -> Result<()> {
        let dat = &self.dats[d.0 as usize];
        let ok = if dat.temp {
            Ok(())
        } else {
            Err(crate::op2_err!(
                BadName,
                "{call} '{}': the dat was declared by op_decl_dat, not op_decl_dat_temp_char; only temporary dats can be freed",
                dat.name
            ))
        };
        // Under MPI (collective): freed only where every process frees it.
        self.comm.agree(ok)?;
        let dat = &mut self.dats[d.0 as usize];
        dat.freed = true;
        if let Some(empty) = AlignedBuf::zeroed(0) {
            dat.data = empty; // zero bytes: never fails
        }
        // Its device copy goes too (a program that makes and frees temporaries in a time loop
        // must not fill the device).
        dat.residency = crate::core::residency::Residency::Host;
        self.backend.free(d);
        Ok(())
    }

    /// Declares a kernel read from `path` (`op_decl_kernel_file`): the kernel remembers the file
    /// so compiler messages can name it.
    /// Under MPI (collective) the kernel is added only once every process has read it (a file
    /// missing on one node is an error on all).
    pub fn decl_kernel_file(&mut self, path: &str, name: &str, call: &str) -> Result<KernelId> {
        let fortran = crate::jit::fortran::is_fortran_file(path);
        let k = (|| {
            if fortran {
                let settings = crate::jit::fortran::Settings {
                    fc: &self.config.fc,
                    fflags: &self.config.fflags,
                    path: &self.config.fortran_path,
                    cache_dir: &self.config.cache_dir,
                };
                let (source, vars) =
                    crate::jit::fortran::kernel_source(path, name, &settings, &format!("{call} '{name}'"))?;
                let mut k = crate::core::Kernel::new(&source, name)?;
                k.fortran_vars = vars;
                return Ok(k);
            }
            let source = crate::core::file::read_regular(path, &format!("{call} '{name}': kernel file"))?;
            let Ok(source) = String::from_utf8(source) else {
                op2_bail!(BadKernel, "{call} '{name}': kernel file '{path}' is not valid UTF-8 text");
            };
            match crate::core::Kernel::new(&source, name) {
                Ok(k) => Ok(k),
                Err(e) => {
                    let msg = e.message.strip_prefix("op_decl_kernel ").unwrap_or(&e.message);
                    Err(crate::error::Op2Error::new(e.code, format!("{call} {msg} (kernel file '{path}')")))
                }
            }
        })();
        let mut k = self.comm.agree(k)?;
        // A Fortran kernel's C is op2's (compiler messages about the Fortran name its file).
        k.file = if fortran { None } else { Some(path.to_string()) };
        self.kernels.push(k);
        Ok(KernelId(self.kernels.len() as u32 - 1))
    }

    /// `op_renumber(base)`: reorders the storage of every set linked to `base`'s sets through
    /// maps (see `core::renumber`): permutes their dats' rows and the maps from and into them,
    /// and records each set's order so users keep seeing the declared numbering. Only before
    /// the first loop (compiled loops and plans know nothing of orders, but their statistics
    /// and any cached plans would describe the old storage).
    pub fn renumber(&mut self, base: MapId, call: &str) -> Result<()> {
        if !self.timings.loops().is_empty() {
            op2_bail!(
                BadLoop,
                "{call} '{}': op_renumber must come before the first op_par_loop",
                self.maps[base.0 as usize].name
            );
        }
        self.mats_before_renumber(call)?;
        if self.comm.distributed() {
            // Under MPI the local numbering is op_partition's (core first, then the halos).
            return Ok(());
        }
        let sizes: Vec<usize> = self.sets.iter().map(|s| s.size).collect();
        let views: Vec<crate::core::renumber::MapView> = self
            .maps
            .iter()
            .map(|m| crate::core::renumber::MapView {
                from: m.from.0 as usize,
                to: m.to.0 as usize,
                dim: m.dim,
                values: &m.values,
            })
            .collect();
        // Everything is computed and allocated first (fallibly), then committed: a refused
        // allocation is OP2_ERR_OUT_OF_MEMORY and leaves every set, map and dat as it was.
        let orders = crate::core::renumber::plan(&sizes, &views, base.0 as usize)?;
        drop(views);
        let mut new_data = Vec::new();
        for (i, d) in self.dats.iter().enumerate().filter(|(_, d)| !d.freed) {
            if let Some(o) = &orders[d.set.0 as usize] {
                let eb = d.elem_bytes();
                let bytes = d.data.as_slice().len();
                let Some(mut buf) = AlignedBuf::zeroed(bytes) else {
                    op2_bail!(
                        OutOfMemory,
                        "{call}: cannot allocate {bytes} bytes for a copy of dat '{}' to reorder it",
                        d.name
                    );
                };
                crate::core::renumber::permute_rows(d.data.as_slice(), eb, o, buf.as_mut_slice());
                new_data.push((i, buf));
            }
        }
        let mut new_maps = Vec::new();
        for (i, m) in self.maps.iter().enumerate() {
            let (fo, to) = (&orders[m.from.0 as usize], &orders[m.to.0 as usize]);
            if fo.is_none() && to.is_none() {
                continue;
            }
            let what = format!("{call}: map '{}'", m.name);
            let mut v = crate::core::alloc::copy_of(&m.values, &what)?;
            if let Some(o) = fo {
                for (dst, &old) in v.chunks_exact_mut(m.dim).zip(&o.old_of_new) {
                    dst.copy_from_slice(&m.values[old as usize * m.dim..(old as usize + 1) * m.dim]);
                }
            }
            if let Some(o) = to {
                v.iter_mut().for_each(|x| *x = o.new_of_old[*x as usize]);
            }
            let (from, to, dim) = (m.from, m.to, m.dim as i32);
            new_maps.push((
                i,
                Map::new(&m.name, (from, &self.sets[from.0 as usize]), (to, &self.sets[to.0 as usize]), dim, &v, 0)?,
            ));
        }
        let mut new_orders = Vec::new();
        for (s, o) in orders.into_iter().enumerate() {
            if let Some(o) = o {
                let o = match &self.sets[s].order {
                    None => o,
                    Some(prev) => prev.then(&o)?,
                };
                new_orders.push((s, Some(o).filter(|o| !o.is_identity())));
            }
        }
        for (i, buf) in new_data {
            self.dats[i].data = buf;
        }
        for (i, m) in new_maps {
            self.maps[i] = m;
        }
        for (s, o) in new_orders {
            self.sets[s].order = o;
        }
        // Sparsities follow their (renumbered) maps.
        self.mats_after_renumber()
    }
}
