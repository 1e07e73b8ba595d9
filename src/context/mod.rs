//! The one `Context`: every set, map, dat, constant and kernel of an op2 session, the chosen
//! backend, the JIT and the statistics. Created by `op_init`, dropped by `op_exit`. Rust tests
//! build one directly.

mod diags;
mod extra;
pub mod timing;

use crate::arg::ArgLookup;
use crate::backend::{self, Backend};
use crate::codegen::ConstDecl;
use crate::config::Config;
use crate::context::timing::Timings;
use crate::core::buffer::AlignedBuf;
use crate::core::residency;
use crate::core::{Const, Dat, DatId, ElemType, Kernel, KernelId, Map, MapId, Set, SetId};
use crate::error::Result;
use crate::exec::loop_cache::LoopCache;
use crate::jit::cache::DiskCache;
use crate::jit::{Compiler, Jit};
use crate::mpi::Comm;
use crate::op2_bail;
use std::borrow::{Borrow, Cow};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// Looks up a `(String, String)` key with two `&str` (no allocation per lookup).
trait KernelKey {
    fn key(&self) -> (&str, &str);
}

impl KernelKey for (String, String) {
    fn key(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl KernelKey for (&str, &str) {
    fn key(&self) -> (&str, &str) {
        (self.0, self.1)
    }
}

impl<'a> Borrow<dyn KernelKey + 'a> for (String, String) {
    fn borrow(&self) -> &(dyn KernelKey + 'a) {
        self
    }
}

impl Hash for dyn KernelKey + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

impl PartialEq for dyn KernelKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn KernelKey + '_ {}

/// What an output reads through `Context::declared_rows`: a dat's rows or a map's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    Dat(DatId),
    Map(MapId),
}

pub struct Context {
    pub config: Config,
    pub sets: Vec<Set>,
    pub maps: Vec<Map>,
    pub dats: Vec<Dat>,
    pub kernels: Vec<Kernel>,
    /// Kernels by (name, source), so a repeated declaration finds its kernel.
    kernel_ids: HashMap<(String, String), KernelId>,
    pub consts: BTreeMap<String, Const>,
    /// Bumped whenever a constant's value changes (libraries reload values lazily).
    pub const_epoch: u64,
    /// Bumped whenever a constant is added or changes type or dim (code may change).
    pub const_shape_epoch: u64,
    pub backend: Box<dyn Backend>,
    pub jit: Jit,
    pub loops: LoopCache,
    pub timings: Timings,
    /// OP2's profiling regions (`op_profile_*`).
    pub profile: crate::context::timing::Profile,
    pub comm: Comm,
    /// The index base of the calling language, for messages: 0 (C) or 1 (Fortran, set by
    /// the Fortran module's op_init through `op_set_index_base`).
    pub index_base: i32,
    /// Sparsities and matrices (`op_decl_sparsity`, `op_decl_mat`).
    pub mats: crate::mat::Mats,
    /// Checkpoint and restart, once `op_checkpointing_init` turned it on.
    pub checkpoint: Option<Box<crate::checkpoint::state::Checkpointer>>,
    /// Which dat `op_fetch_data_hdf5_file` wrote into which (file, dataset) this session: a
    /// second dat of the same name into the same file is a name collision.
    pub hdf5_fetched: HashMap<(std::path::PathBuf, String), DatId>,
    /// Loops queued by lazy evaluation or an open loop chain (`exec::chain::flush` runs them).
    pub lazy: crate::exec::par_loop::Lazy,
}

impl Context {
    /// A new session: validates the cache directory and creates the backend.
    pub fn new(config: Config) -> Result<Context> {
        let cache = DiskCache::open(&config.cache_dir)?;
        let backend = backend::create(&config)?;
        let mut jit = Jit::new(Compiler::new(&config.cc, &config.cflags), cache, config.dump_source.clone());
        for p in &config.loop_packs {
            jit.packs.push(crate::jit::pack::Pack::open(p)?);
        }
        jit.jit_off = !config.jit;
        Ok(Context {
            config,
            sets: Vec::new(),
            maps: Vec::new(),
            dats: Vec::new(),
            kernels: Vec::new(),
            kernel_ids: HashMap::new(),
            consts: BTreeMap::new(),
            const_epoch: 0,
            const_shape_epoch: 0,
            backend,
            jit,
            loops: LoopCache::default(),
            timings: Timings::default(),
            profile: Default::default(),
            comm: Comm::default(),
            index_base: 0,
            mats: crate::mat::Mats::default(),
            checkpoint: None,
            hdf5_fetched: HashMap::new(),
            lazy: Default::default(),
        })
    }

    /// Declares a set. Under MPI (collective) every process's block size is learnt in the
    /// agreement that precedes the commit: a set refused on any process is declared on none.
    pub fn decl_set(&mut self, size: i32, name: &str) -> Result<SetId> {
        let set = (|| {
            if self.comm.partitioned {
                op2_bail!(BadConfig, "op_decl_set '{name}': sets must be declared before op_partition");
            }
            let set = Set::new(name, size)?;
            let n = set.size as u64;
            Ok((set, n.to_ne_bytes().to_vec()))
        })();
        let (set, sizes) = self.comm.agree_with(set)?;
        self.sets.push(set);
        let id = SetId(self.sets.len() as u32 - 1);
        if self.comm.distributed() {
            // Under MPI: each process declares its block; the others' sizes came with the
            // agreement.
            let n = self.sets[id.0 as usize].size;
            self.comm.after_decl_set(id, n, &sizes);
        }
        Ok(id)
    }

    /// Declares a map; under MPI (collective) only once every process has accepted its rows.
    pub fn decl_map(&mut self, from: SetId, to: SetId, dim: i32, values: &[i32], name: &str) -> Result<MapId> {
        let m = self.prepare_map(from, to, dim, values, name);
        let m = self.comm.agree(m)?;
        self.maps.push(m);
        Ok(MapId(self.maps.len() as u32 - 1))
    }

    /// `decl_map` keeping `values` as the map's storage where no renumbering reorders it (a
    /// map read from a file holds one copy of its rows, not two).
    pub fn decl_map_vec(&mut self, from: SetId, to: SetId, dim: i32, values: Vec<i32>, name: &str) -> Result<MapId> {
        let reordered = !self.comm.distributed()
            && (self.sets[from.0 as usize].order.is_some() || self.sets[to.0 as usize].order.is_some());
        if reordered {
            return self.decl_map(from, to, dim, &values, name);
        }
        let base = self.index_base as i64;
        let m = (|| {
            if !self.comm.distributed() {
                let (f, t) = (&self.sets[from.0 as usize], &self.sets[to.0 as usize]);
                return Map::from_vec(name, (from, f), (to, t), dim, values, base);
            }
            if self.comm.partitioned {
                op2_bail!(BadConfig, "op_decl_map '{name}': maps must be declared before op_partition");
            }
            let global = self.comm.global_size(to, self.sets[to.0 as usize].size);
            let gto = Set::new(&self.sets[to.0 as usize].name, global.min(i32::MAX as usize) as i32)?;
            Map::from_vec(name, (from, &self.sets[from.0 as usize]), (to, &gto), dim, values, base)
        })();
        let m = self.comm.agree(m)?;
        self.maps.push(m);
        Ok(MapId(self.maps.len() as u32 - 1))
    }

    /// `op_decl_map_long`: `decl_map` with 64-bit entries, each checked against `to` (its global
    /// size under MPI) before it becomes one of op2's 32-bit entries: an entry outside is the
    /// error `op_decl_map` gives, named for `call` (agreed under MPI, as `decl_map` is).
    pub fn decl_map_long(
        &mut self,
        from: SetId,
        to: SetId,
        dim: i32,
        values: &[i64],
        name: &str,
        call: &str,
    ) -> Result<MapId> {
        let narrowed = (|| {
            let set = &self.sets[to.0 as usize];
            let global;
            let target = if self.comm.distributed() {
                global = Set::new(&set.name, self.comm.global_size(to, set.size).min(i32::MAX as usize) as i32)?;
                &global
            } else {
                set
            };
            crate::core::narrow_map(call, name, dim.max(1) as usize, values, target, self.index_base as i64)
        })();
        let narrowed = self.comm.agree(narrowed)?;
        self.decl_map(from, to, dim, &narrowed, name)
            .map_err(|e| crate::error::Op2Error::new(e.code, e.message.replacen("op_decl_map", call, 1)))
    }

    fn prepare_map(&self, from: SetId, to: SetId, dim: i32, values: &[i32], name: &str) -> Result<Map> {
        let base = self.index_base as i64;
        if self.comm.distributed() {
            // Under MPI the rows are this process's block of `from` and the values are global
            // indices of `to`: checked against its global size.
            if self.comm.partitioned {
                op2_bail!(BadConfig, "op_decl_map '{name}': maps must be declared before op_partition");
            }
            let global = self.comm.global_size(to, self.sets[to.0 as usize].size);
            let gto = Set::new(&self.sets[to.0 as usize].name, global.min(i32::MAX as usize) as i32)?;
            return Map::new(name, (from, &self.sets[from.0 as usize]), (to, &gto), dim, values, base);
        }
        let mut m =
            Map::new(name, (from, &self.sets[from.0 as usize]), (to, &self.sets[to.0 as usize]), dim, values, base)?;
        // After op_renumber, the caller still speaks the declared numbering: store rows and
        // targets in the renumbered storage order.
        let (fo, to_o) = (&self.sets[from.0 as usize].order, &self.sets[to.0 as usize].order);
        if fo.is_some() || to_o.is_some() {
            let what = format!("op_decl_map '{name}'");
            let mut v = crate::core::alloc::copy_of(&m.values, &what)?;
            if let Some(o) = fo {
                let mut bytes = crate::core::alloc::with_capacity::<u8>(v.len().saturating_mul(4), &what)?;
                bytes.extend(v.iter().flat_map(|x| x.to_ne_bytes()));
                let mut out = crate::core::alloc::zeroed::<u8>(bytes.len(), &what)?;
                crate::core::renumber::permute_rows(&bytes, m.dim * 4, o, &mut out);
                for (x, c) in v.iter_mut().zip(out.chunks_exact(4)) {
                    *x = i32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
                }
            }
            if let Some(o) = to_o {
                v.iter_mut().for_each(|x| *x = o.new_of_old[*x as usize]);
            }
            m = Map::new(name, (from, &self.sets[from.0 as usize]), (to, &self.sets[to.0 as usize]), dim, &v, 0)?;
        }
        Ok(m)
    }

    /// Declares a dat; `data` (when given) must be `set.size * dim * ty.size()` bytes.
    pub fn decl_dat(
        &mut self,
        set: SetId,
        dim: i32,
        ty: ElemType,
        data: Option<&[u8]>,
        name: &str,
        call: &str,
    ) -> Result<DatId> {
        let dat = self.prepare_dat(set, dim, ty, data, name, call);
        // Under MPI (collective): committed only once every process has its dat.
        let dat = self.comm.agree(dat)?;
        self.dats.push(dat);
        Ok(DatId(self.dats.len() as u32 - 1))
    }

    /// `decl_dat` with the values already in a buffer of the dat's size, which becomes the dat's
    /// storage (a dat read from a file: one copy of its rows, not two). Where the rows must be
    /// moved (after `op_partition`, or renumbered), they are copied as `decl_dat` copies them.
    pub fn decl_dat_buf(
        &mut self,
        set: SetId,
        dim: i32,
        ty: ElemType,
        data: AlignedBuf,
        name: &str,
        call: &str,
    ) -> Result<DatId> {
        if self.comm.partitioned || self.sets[set.0 as usize].order.is_some() {
            return self.decl_dat(set, dim, ty, Some(data.as_slice()), name, call);
        }
        let dat = self.dat_shape(set, dim, ty, name, call).and_then(|(_, bytes)| {
            if data.len() != bytes {
                op2_bail!(BadSize, "{call} '{name}': {} bytes given, {bytes} needed", data.len());
            }
            Ok(Dat::new(name, set, dim as usize, ty, data))
        });
        let dat = self.comm.agree(dat)?;
        self.dats.push(dat);
        Ok(DatId(self.dats.len() as u32 - 1))
    }

    /// A dat's (elements, bytes) on this process (its total: owned and halo), checked:
    /// `BadSize` for a dim below 1 or a size beyond the address range.
    fn dat_shape(&self, set: SetId, dim: i32, ty: ElemType, name: &str, call: &str) -> Result<(usize, usize)> {
        if dim < 1 {
            op2_bail!(BadSize, "{call} '{name}': dim {dim} is less than 1");
        }
        let n = self.sets[set.0 as usize].total;
        let Some(bytes) = n.checked_mul(dim as usize).and_then(|v| v.checked_mul(ty.size())) else {
            op2_bail!(
                BadSize,
                "{call} '{name}': {n} elements x dim {dim} x {} bytes overflows the address space",
                ty.size()
            );
        };
        // a size beyond the address range is BAD_SIZE; a representable one the allocator
        // refuses is OUT_OF_MEMORY
        crate::core::alloc::bytes(bytes, 1, &format!("{call} '{name}'"))?;
        Ok((n, bytes))
    }

    /// A dat as `decl_dat` would add it (not yet added). Under MPI after `op_partition` with
    /// data this is collective (the processes' blocks are redistributed) and agrees itself
    /// before that collective.
    pub(crate) fn prepare_dat(
        &self,
        set: SetId,
        dim: i32,
        ty: ElemType,
        data: Option<&[u8]>,
        name: &str,
        call: &str,
    ) -> Result<Dat> {
        let shape = self.dat_shape(set, dim, ty, name, call);
        let buf = match data {
            Some(d) if self.comm.partitioned => {
                // Under MPI after op_partition: `data` is this process's declared block,
                // redistributed to the local rows (collective, so agreed first).
                let shape = self.comm.agree(shape)?;
                let local = self.sets[set.0 as usize].size;
                self.comm.local_rows_of_block(set, local, dim as usize * ty.size(), d, name).map(|b| (shape, b))
            }
            _ => shape.and_then(|(n, bytes)| {
                let buf = match (data, &self.sets[set.0 as usize].order) {
                    (Some(d), None) => AlignedBuf::from_slice(&d[..bytes]),
                    (Some(d), Some(o)) => AlignedBuf::zeroed(bytes).map(|mut b| {
                        // Declared order in, renumbered storage order kept.
                        crate::core::renumber::permute_rows(&d[..bytes], dim as usize * ty.size(), o, b.as_mut_slice());
                        b
                    }),
                    (None, _) => AlignedBuf::zeroed(bytes),
                };
                let Some(buf) = buf else {
                    op2_bail!(
                        OutOfMemory,
                        "{call} '{name}': cannot allocate {bytes} bytes ({:.1} MiB: {n} elements x dim {dim} x {})",
                        bytes as f64 / 1048576.0,
                        ty.api_name()
                    );
                };
                Ok(((n, bytes), buf))
            }),
        };
        let (_, buf) = buf?;
        Ok(Dat::new(name, set, dim as usize, ty, buf))
    }

    /// Declares or redeclares a constant. A new value takes effect in the next loop; a new
    /// type or dim changes the generated code of the kernels that use it.
    /// Under MPI (collective) the constant changes only once every process has accepted it.
    pub fn decl_const(&mut self, dim: i32, ty: ElemType, data: &[u8], name: &str, call: &str) -> Result<()> {
        let ok = (|| {
            if dim < 1 {
                op2_bail!(BadSize, "{call} '{name}': dim {dim} is less than 1");
            }
            if !crate::core::is_c_identifier(name) || name.starts_with("op2_") {
                op2_bail!(BadName, "{call} '{name}': the name is not a C identifier (or is a C keyword, or uses the prefix op2_ reserved for generated code)");
            }
            Ok(())
        })();
        self.comm.agree(ok)?;
        let dim = dim as usize;
        let value = crate::core::alloc::copy_of(&data[..dim * ty.size()], &format!("{call} '{name}'"))?;
        match self.consts.get_mut(name) {
            Some(c) if c.ty == ty && c.dim == dim => {
                if c.data != value {
                    c.data = value;
                    self.const_epoch += 1;
                }
            }
            _ => {
                self.consts.insert(name.to_string(), Const { name: name.to_string(), dim, ty, data: value });
                self.const_epoch += 1;
                self.const_shape_epoch += 1;
            }
        }
        Ok(())
    }

    /// Declares a kernel. The same name and source again (a declaration inside a time loop)
    /// gives the same kernel: nothing grows per call.
    /// Under MPI (collective) a new kernel is added only once every process has accepted it.
    pub fn decl_kernel(&mut self, source: &str, name: &str) -> Result<KernelId> {
        let known = self.kernel_ids.get(&(name, source) as &dyn KernelKey).copied();
        let k = match known {
            Some(id) => Ok((None, Some(id))),
            None => Kernel::new(source, name).map(|k| (Some(k), None)),
        };
        let (k, known) = self.comm.agree(k)?;
        if let Some(id) = known {
            return Ok(id);
        }
        let Some(k) = k else {
            op2_bail!(Internal, "op_decl_kernel '{name}': neither a known nor a new kernel");
        };
        let id = KernelId(self.kernels.len() as u32);
        self.kernel_ids.insert((k.name.clone(), k.source.clone()), id);
        self.kernels.push(k);
        Ok(id)
    }

    /// The constants a kernel uses (its identifiers that name constants), in name order.
    pub fn consts_used_by(&self, k: KernelId) -> Vec<ConstDecl> {
        let kernel = &self.kernels[k.0 as usize];
        self.consts
            .values()
            .filter_map(|c| {
                let lower = c.name.to_lowercase();
                let fortran = kernel.fortran_vars.iter().find(|v| v.0 == lower && v.1 == c.ty && v.2 == c.dim);
                match fortran {
                    Some(v) => Some(Some(v.3.clone())),
                    None if kernel.identifiers.contains(&c.name)
                        && !crate::jit::fortran::is_stand_in(&kernel.source) =>
                    {
                        Some(None)
                    }
                    None => None,
                }
                .map(|symbol| ConstDecl { name: c.name.clone(), ty: c.ty, dim: c.dim, symbol })
            })
            .collect()
    }

    /// The one way to the host bytes of a dat (fetch, print, file output, validation): on a
    /// device backend, downloads them first if only the device copy is current (counted by
    /// `op_dat_transfers`); `writes`: the caller changes them, so the device copy goes stale.
    pub fn host_data(&mut self, d: DatId, writes: bool) -> Result<&mut [u8]> {
        let dat = &mut self.dats[d.0 as usize];
        if self.backend.is_device() {
            let (download, after) = residency::host_access(dat.residency, writes);
            if download {
                self.backend.download(d, crate::backend::DatShape::of(dat), dat.data.as_mut_slice())?;
                dat.to_host += dat.data.as_slice().len() as u64;
            }
            dat.residency = after;
        }
        Ok(dat.data.as_mut_slice())
    }

    /// Makes the device copy of `d` current (`op_upload_dat`): uploads it when stale; nothing on
    /// host backends.
    pub fn device_data(&mut self, d: DatId) -> Result<()> {
        if !self.backend.is_device() {
            return Ok(());
        }
        let dat = &mut self.dats[d.0 as usize];
        if residency::before_loop(dat.residency, false) == residency::Before::Upload {
            self.backend.upload(d, crate::backend::DatShape::of(dat), dat.data.as_slice())?;
            dat.to_device += dat.data.as_slice().len() as u64;
            dat.residency = residency::after_loop(dat.residency, false);
        }
        Ok(())
    }

    /// Makes the host bytes of `d` current (see `host_data`), for readers that take `&Context`.
    pub fn sync_to_host(&mut self, d: DatId) -> Result<()> {
        self.host_data(d, false).map(|_| ())
    }

    /// `sync_to_host` for every dat (before whole-session output: HDF5 dumps, VTK).
    pub fn sync_all_to_host(&mut self) -> Result<()> {
        for i in 0..self.dats.len() {
            self.sync_to_host(DatId(i as u32))?;
        }
        Ok(())
    }

    /// Copies declared elements `[low, high]` of a dat into `out` (exactly the bytes of that
    /// range), in the declared order whatever the storage order, downloading first if needed.
    pub fn fetch(&mut self, d: DatId, low: usize, high_inclusive: usize, out: &mut [u8]) -> Result<()> {
        self.sync_to_host(d)?;
        out.copy_from_slice(&self.declared_rows(Rows::Dat(d), low..high_inclusive + 1, "op_fetch_data")?);
        Ok(())
    }

    /// The declared-order view: the ONE way every output (`op_fetch_data*`, the txt/bin prints,
    /// HDF5 fetch and dump, VTK) reads dat rows and map values. Rows `range` (declared indices
    /// of the dat's set, or of the map's from-set) in the declared order, whatever storage order
    /// `op_renumber` chose; a map's values are translated to the declared numbering of its
    /// target set. Native-order bytes (map values as `i32`), borrowed when storage already is
    /// the declared order. Reads the host bytes as they are: callers make them current first
    /// (`sync_to_host`). `range` must lie inside the set (callers check user ranges). Under MPI
    /// (local numbering is op_partition's; `op_renumber` changes nothing there) sets carry no
    /// storage order, and the distributed writers route rows by original index instead
    /// (`mpi::dist`).
    pub fn declared_rows(&self, what: Rows, range: std::ops::Range<usize>, call: &str) -> Result<Cow<'_, [u8]>> {
        let (set, row_bytes, bytes, name, target) = match what {
            Rows::Dat(d) => {
                let dat = &self.dats[d.0 as usize];
                (dat.set, dat.elem_bytes(), dat.data.as_slice(), &dat.name, None)
            }
            Rows::Map(m) => {
                let map = &self.maps[m.0 as usize];
                // SAFETY: i32 values viewed as their native-order bytes (no padding, align 1).
                let b = unsafe { std::slice::from_raw_parts(map.values.as_ptr() as *const u8, map.values.len() * 4) };
                (map.from, map.dim * 4, b, &map.name, Some(map.to))
            }
        };
        let set_order = |s: SetId| self.sets[s.0 as usize].order.as_ref();
        let (rows_order, target_order) = (set_order(set), target.and_then(set_order));
        if self.comm.distributed() && (rows_order.is_some() || target_order.is_some()) {
            op2_bail!(Internal, "{call} '{name}': a storage order under MPI (op_renumber is a no-op there)");
        }
        let len = crate::core::alloc::bytes(range.len(), row_bytes, call)?;
        if rows_order.is_none() && target_order.is_none() {
            return Ok(Cow::Borrowed(&bytes[range.start * row_bytes..range.start * row_bytes + len]));
        }
        let mut out: Vec<u8> = crate::core::alloc::zeroed(len, &format!("{call} '{name}' in declared order"))?;
        for (dst, old) in out.chunks_exact_mut(row_bytes.max(1)).zip(range) {
            let at = rows_order.map_or(old, |o| o.new_of_old[old] as usize) * row_bytes;
            dst.copy_from_slice(&bytes[at..at + row_bytes]);
        }
        if let Some(o) = target_order {
            for v in out.chunks_exact_mut(4) {
                let storage = i32::from_ne_bytes([v[0], v[1], v[2], v[3]]);
                v.copy_from_slice(&o.old_of_new[storage as usize].to_ne_bytes());
            }
        }
        Ok(Cow::Owned(out))
    }

    /// All of a dat's (or map's) rows in the declared order: `declared_rows` over the whole set.
    pub fn all_declared_rows(&self, what: Rows, call: &str) -> Result<Cow<'_, [u8]>> {
        let set = match what {
            Rows::Dat(d) => self.dats[d.0 as usize].set,
            Rows::Map(m) => self.maps[m.0 as usize].from,
        };
        self.declared_rows(what, 0..self.sets[set.0 as usize].size, call)
    }

    /// The text `op_print_dat_to_txtfile` writes: OP2's format (see `core::output`), declared
    /// order.
    pub fn dat_text(&self, d: DatId) -> Result<String> {
        let dat = &self.dats[d.0 as usize];
        let n = self.sets[dat.set.0 as usize].size;
        Ok(crate::core::output::txt(
            n,
            dat.dim,
            dat.ty,
            &self.all_declared_rows(Rows::Dat(d), "op_print_dat_to_txtfile")?,
        ))
    }

    /// The bytes `op_print_dat_to_binfile` writes: int count, int dim, raw rows in declared
    /// order.
    pub fn dat_binary(&self, d: DatId) -> Result<Vec<u8>> {
        let dat = &self.dats[d.0 as usize];
        let n = self.sets[dat.set.0 as usize].size;
        Ok(crate::core::output::bin(n, dat.dim, &self.all_declared_rows(Rows::Dat(d), "op_print_dat_to_binfile")?))
    }

    /// The text `op_diagnostic_output` prints.
    pub fn diagnostics(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "op2 diagnostics: backend {}, {} set(s), {} map(s), {} dat(s), {} constant(s), {} kernel(s)",
            self.backend.kind().name(),
            self.sets.len(),
            self.maps.len(),
            self.dats.len(),
            self.consts.len(),
            self.kernels.len()
        );
        if self.backend.is_device() {
            let _ = writeln!(s, "  kernel launches: {}", self.backend.launches());
            let _ = writeln!(s, "  small writes (READ globals, reduction seeds): {}", self.backend.small_writes());
        }
        if self.comm.distributed() {
            let query = crate::mpi::cuda_aware();
            let aware = match query {
                Some(true) => "yes",
                Some(false) => "no",
                None => "unknown (no MPIX_Query_cuda_support)",
            };
            let setting = self.comm.cuda_aware.name();
            let halos = if !self.backend.is_device() {
                String::new()
            } else if self.comm.device_direct {
                format!("; device halo exchanges: packed on the device and given to MPI in device memory (OP2_MPI_CUDA_AWARE={setting})")
            } else {
                let why = if !self.backend.can_stage_for_mpi() {
                    format!("{} buffers cannot go to MPI", self.backend.kind().name())
                } else if self.comm.cuda_aware == crate::mpi::CudaAware::Off {
                    "OP2_MPI_CUDA_AWARE=0".to_string()
                } else if query == Some(false) {
                    "the MPI library is not CUDA-aware".to_string()
                } else {
                    "the MPI library cannot say whether it is CUDA-aware; OP2_MPI_CUDA_AWARE=1 says it is".to_string()
                };
                format!("; device halo exchanges: export and import rows staged through host memory ({why})")
            };
            let _ = writeln!(s, "  mpi: {} processes; CUDA-aware MPI: {aware}{halos}", self.comm.size());
        }
        for set in &self.sets {
            let _ = writeln!(s, "  set   {:<20} size {}", set.name, set.size);
        }
        for m in &self.maps {
            let _ = writeln!(
                s,
                "  map   {:<20} {} -> {}, dim {}",
                m.name, self.sets[m.from.0 as usize].name, self.sets[m.to.0 as usize].name, m.dim
            );
        }
        for d in &self.dats {
            let _ = writeln!(
                s,
                "  dat   {:<20} on {}, {} x {}{}",
                d.name,
                self.sets[d.set.0 as usize].name,
                d.dim,
                d.ty.api_name(),
                if d.freed {
                    " (freed)"
                } else if d.temp {
                    " (temporary)"
                } else {
                    ""
                }
            );
        }
        for c in self.consts.values() {
            let _ = writeln!(s, "  const {:<20} {} x {}", c.name, c.dim, c.ty.api_name());
        }
        let st = &self.jit.stats;
        let _ = writeln!(
            s,
            "  jit: {} compiled ({:.3} s), {} loaded from disk cache ({:.3} s), {} from loop packs ({:.3} s), {} memory hits; cache {}",
            st.compiles,
            st.compile_time.as_secs_f64(),
            st.disk_hits,
            st.disk_load_time.as_secs_f64(),
            st.pack_loads,
            st.pack_load_time.as_secs_f64(),
            st.memory_hits,
            self.jit.cache.dir().display()
        );
        s
    }
}

impl ArgLookup for Context {
    fn set_name(&self, s: SetId) -> &str {
        &self.sets[s.0 as usize].name
    }

    fn dat_info(&self, d: DatId) -> (&str, SetId, usize, ElemType) {
        let dat = &self.dats[d.0 as usize];
        (&dat.name, dat.set, dat.dim, dat.ty)
    }

    fn map_info(&self, m: MapId) -> (&str, SetId, SetId, usize) {
        let map = &self.maps[m.0 as usize];
        (&map.name, map.from, map.to, map.dim)
    }

    fn mat_info(&self, m: crate::core::MatId) -> (&str, usize, usize, ElemType, usize) {
        let mat = self.mats.mat(m);
        // Stored values: the pattern's, and under MPI the halo rows' discard values.
        (&mat.name, mat.rdim, mat.cdim, mat.ty, mat.values.bytes().len() / mat.ty.size())
    }

    fn index_base(&self) -> i64 {
        self.index_base as i64
    }
}
