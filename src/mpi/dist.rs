//! The distributed operations on a `Context`: the declared blocks of sets, `op_partition`
//! (partition, build the layouts, migrate maps and dats: see `distpart`, which does it on the
//! blocks without gathering anything), and the collective outputs in the original numbering
//! (fetch; fetch by range and printing are in `stream`). A layer above `context` (which holds
//! only the `Comm` of `mpi`, below it): what `Context` itself needs while declaring (a set's
//! global size, its declared block) is answered by `Comm`.
//!
//! Memory during `op_partition`: each process holds its declared blocks, its new local rows and
//! messages of the size of what it sends or receives; only `"METIS"` (serial k-way) gathers the
//! graph of the prime map on every process. `op_partition` at diagnostics >= 1 reports each
//! process's peak resident growth during the call.

use super::distpart::{self, Coll, DMap};
use super::partition::{self, Method};
use crate::context::Context;
use crate::core::alloc;
use crate::core::buffer::AlignedBuf;
use crate::core::{DatId, ElemType, FileSource, MapId, SetId};
use crate::error::Result;
use crate::op2_bail;

use distpart::{dec_i32 as from_bytes, enc_i32 as to_bytes};

/// Global size of a set (its local size on one process): `Comm::global_size`.
pub fn global_size(ctx: &Context, set: SetId) -> usize {
    ctx.comm.global_size(set, ctx.sets[set.0 as usize].size)
}

/// This process's first declared global index of a set: `Comm::global_offset`.
pub fn global_offset(ctx: &Context, set: SetId) -> usize {
    ctx.comm.global_offset(set)
}

/// The size of this process's declared block (what op_fetch_data fills): `Comm::declared_size`.
pub fn declared_size(ctx: &Context, set: SetId) -> usize {
    ctx.comm.declared_size(set, ctx.sets[set.0 as usize].size)
}

/// `op_partition`'s checks on this process, in the order they are reported: the method (and
/// the k-way routines' fallback to blocks without a map, with what to say), coordinates, the
/// state of the session (once, before loops, no device uploads or renumbering before), and
/// whether the ParMETIS interface loads where it will be needed. Nothing collective.
fn check_partition(
    ctx: &Context,
    lib: &str,
    routine: Option<&str>,
    prime_map: Option<MapId>,
    coords: Option<DatId>,
) -> Result<(Method, Option<String>)> {
    const CALL: &str = "op_partition";
    let method = partition::method(lib, routine)?;
    // A k-way routine given no map has no graph to partition: OP2 then keeps the declared
    // blocks ("Reverting to trivial block partitioning"), and so does op2, saying so.
    let (method, blocks_for) = match method {
        Method::Kway | Method::ParKway { .. } if prime_map.is_none() => {
            let r = if method == (Method::ParKway { geom: true }) { "GEOMKWAY" } else { "KWAY" };
            (Method::Block, Some(format!("{lib} {r}")))
        }
        m => (m, None),
    };
    match method {
        Method::Rcb if coords.is_none() => {
            op2_bail!(BadConfig, "{CALL}: {lib} (RCB/GEOM) needs a coordinate dat, coords is NULL")
        }
        Method::ParKway { geom: true } => {
            let Some(c) = coords else {
                op2_bail!(BadConfig, "{CALL}: {lib} GEOMKWAY needs coords on the to-set of prime_map, coords is NULL")
            };
            let (cs, m) = (ctx.dats[c.0 as usize].set, prime_map.map_or(0, |m| m.0 as usize));
            let to = ctx.maps[m].to;
            if cs != to {
                op2_bail!(
                    BadConfig,
                    "{CALL}: {lib} GEOMKWAY: coords '{}' is on set '{}', prime_map '{}' goes to set '{}' (they must be the same set)",
                    ctx.dats[c.0 as usize].name,
                    ctx.sets[cs.0 as usize].name,
                    ctx.maps[m].name,
                    ctx.sets[to.0 as usize].name
                );
            }
        }
        _ => {}
    }
    if let Some(c) = coords {
        let ty = ctx.dats[c.0 as usize].ty;
        if matches!(method, Method::Rcb | Method::ParKway { geom: true })
            && !matches!(ty, ElemType::Double | ElemType::Float | ElemType::Int)
        {
            op2_bail!(
                BadType,
                "{CALL}: coords '{}' is {}, {lib} needs double, float or int coordinates",
                ctx.dats[c.0 as usize].name,
                ty.api_name()
            );
        }
    }
    if ctx.comm.partitioned {
        op2_bail!(BadConfig, "{CALL}: the sets are already partitioned (call op_partition once)");
    }
    if !ctx.timings.loops().is_empty() {
        op2_bail!(BadLoop, "{CALL}: op_partition must come before the first op_par_loop");
    }
    if !ctx.comm.distributed() {
        return Ok((method, blocks_for));
    }
    // Sparsities declared before: rebuilt on the partitioned sets below (values must be zero).
    ctx.mats_before_renumber(CALL)?;
    if let Some(d) = ctx.dats.iter().find(|d| d.to_device > 0 && !d.freed) {
        // Its device buffer has the pre-partition size (backends cannot resize one).
        op2_bail!(
            BadConfig,
            "{CALL}: dat '{}' is already on the device (op_upload_*): upload after op_partition, not before",
            d.name
        );
    }
    if ctx.sets.iter().any(|s| s.order.is_some()) {
        op2_bail!(
            BadConfig,
            "{CALL}: op_renumber before op_partition is not supported under MPI (renumber after, or not at all)"
        );
    }
    // The ParMETIS interface, loaded now on every process that will call it (all of them:
    // par_kway calls it whenever the graph has more vertices than processes).
    if let (Method::ParKway { geom }, Some(m)) = (method, prime_map) {
        let to = ctx.maps[m.0 as usize].to.0 as usize;
        let np = ctx.comm.size() as usize;
        if ctx.comm.sets[to].offsets.get(np).copied().unwrap_or(0) > np {
            parmetis_loads(geom)?;
        }
    }
    Ok((method, blocks_for))
}

#[cfg(feature = "mpi")]
fn parmetis_loads(geom: bool) -> Result<()> {
    super::parmetis::available(geom)
}

#[cfg(not(feature = "mpi"))]
fn parmetis_loads(_: bool) -> Result<()> {
    op2_bail!(BackendUnavailable, "op_partition: ParMETIS needs the cargo feature mpi")
}

/// `op_partition`. Collective. Without MPI (one process) it only validates its arguments.
/// `reader` reads again the dats declared from files (`Dat::source`), released meanwhile
/// (None: every dat migrates; the implicit BLOCK partition of a first loop or matrix).
pub fn partition(
    ctx: &mut Context,
    reader: Option<Readers>,
    lib: &str,
    routine: Option<&str>,
    prime_set: Option<SetId>,
    prime_map: Option<MapId>,
    coords: Option<DatId>,
) -> Result<()> {
    const CALL: &str = "op_partition";
    // Every check, and the loading of the partitioner's library, before any collective work,
    // and agreed: a check that fails on one process is that error on every process (never one
    // process returning while the others enter PT-Scotch).
    let checked = check_partition(ctx, lib, routine, prime_map, coords);
    let (method, blocks_for) = ctx.comm.agree(checked)?;
    if let Some(what) = blocks_for.filter(|_| ctx.config.diags >= 1 && ctx.comm.rank() == 0) {
        crate::core::output::print_after_c_stdio(&format!(
            "op2: {CALL} {what} without a map: partitioned by blocks (the declared blocks are kept)\n"
        ));
    }
    if !ctx.comm.distributed() {
        let _ = prime_set;
        return Ok(());
    }
    let t = std::time::Instant::now();
    // Memory, when diagnostics ask for it: the process's high-water mark is reset at entry
    // (diags >= 1: the call's peak) and after each phase (diags >= 2: each phase's peak); never
    // otherwise, so a program measuring its own VmHWM is undisturbed.
    let diags = ctx.config.diags;
    // What the program freed before (file reads, mesh text) goes back first, so that it is not
    // resident under the partitioner's own peak.
    distpart::trim_heap();
    let rss_entry = if diags >= 1 { proc_status_kib("VmRSS") } else { None };
    if diags >= 1 {
        reset_peak_rss();
    }
    let mut phases: Vec<(&str, u64)> = Vec::new();
    // Each phase ends by returning freed heap (see distpart::trim_heap).
    let mut mark = |phase: &'static str| {
        distpart::trim_heap();
        if diags >= 2 {
            phases.push((phase, proc_status_kib("VmHWM").unwrap_or(0)));
            reset_peak_rss();
        }
    };
    let nranks = ctx.comm.size() as usize;
    let me = ctx.comm.rank();
    let mu = me as usize;
    let nsets = ctx.sets.len();
    let offsets: Vec<Vec<usize>> = (0..nsets).map(|s| ctx.comm.sets[s].offsets.clone()).collect();
    // The dats declared from HDF5 that still hold what was read go now (the coordinates once
    // the parts are known) and are read again into their new layout at the end: the
    // partitioner's working memory, the layouts and the maps' migration then never stack on the
    // mesh's data (#36).
    // So do the maps declared from HDF5, unchanged, while the partitioner runs (k-way's prime
    // map once its graph is built): they are read again, as they were, before the layouts.
    let (reread, remaps) = match reader {
        Some(_) => rereadable(ctx, &offsets)?,
        None => (Vec::new(), Vec::new()),
    };
    for r in reread.iter().filter(|r| Some(DatId(r.dat as u32)) != coords) {
        ctx.dats[r.dat].data = AlignedBuf::default();
    }
    let graph_map = prime_map.filter(|_| matches!(method, Method::Kway | Method::ParKway { .. }));
    for &i in remaps.iter().filter(|&&i| Some(MapId(i as u32)) != graph_map) {
        ctx.maps[i].values = Vec::new();
    }
    // What the process holds once they are gone (the partitioner's memory stacks on that).
    let rss_released = if diags >= 1 && !(reread.is_empty() && remaps.is_empty()) {
        distpart::trim_heap();
        proc_status_kib("VmRSS")
    } else {
        None
    };
    let migrated = migrate(
        ctx,
        method,
        (prime_set, prime_map, coords),
        &offsets,
        (&reread, &remaps, reader.unwrap_or(NO_READERS)),
        &mut mark,
    );
    let layouts = match migrated {
        Ok(l) => l,
        Err(mut e) => {
            // Never a dat or map shorter than its set: those still released (not read again
            // yet) hold zeros, of their declared block's size (said so).
            let mut lost = Vec::new();
            for r in &reread {
                let dv = &mut ctx.dats[r.dat];
                let want = declared_rows(&offsets, dv.set.0 as usize, mu) * dv.elem_bytes();
                if dv.data.is_empty() && want > 0 {
                    dv.data = AlignedBuf::zeroed(want).unwrap_or_default();
                    lost.push(dv.name.clone());
                }
            }
            for &i in &remaps {
                let m = &mut ctx.maps[i];
                let want = declared_rows(&offsets, m.from.0 as usize, mu) * m.dim;
                if m.values.is_empty() && want > 0 {
                    m.values = vec![0; want];
                    lost.push(m.name.clone());
                }
            }
            if !lost.is_empty() {
                e.message.push_str(&format!(
                    " (the dats and maps released to be read again from their HDF5 files now hold zeros: {})",
                    lost.join(", ")
                ));
            }
            return Err(e);
        }
    };
    for (s, mut l) in layouts.into_iter().enumerate() {
        // Kept for the whole run: as runs of consecutive indices where that is smaller.
        l.gids.compact();
        let set = &mut ctx.sets[s];
        set.size = l.owned;
        set.core_end = l.core;
        set.exec_end = l.owned + l.exec;
        set.total = l.total();
        ctx.comm.sets[s].layout = Some(l);
    }
    // The flat tables compact() let go of, back to the system.
    distpart::trim_heap();
    ctx.dats.iter_mut().for_each(|d| d.source = None);
    ctx.maps.iter_mut().for_each(|m| m.source = None);
    ctx.comm.partitioned = true;
    ctx.comm.partition_epoch += 1;
    // Halo buffers were sized for the old layouts.
    #[cfg(feature = "mpi")]
    ctx.comm.halo_bufs.clear();
    ctx.mats_after_renumber()?;
    if ctx.config.diags >= 1 {
        let mut line = format!(
            "op2: op_partition {lib}{} on {nranks} processes in {:.3} s; process {me}:",
            routine.map(|r| format!(" {r}")).unwrap_or_default(),
            t.elapsed().as_secs_f64()
        );
        for (s, set) in ctx.sets.iter().enumerate() {
            let l = ctx.comm.sets[s].layout.as_ref();
            line.push_str(&format!(
                " {} {} owned ({} core) +{} exec +{} nonexec;",
                set.name,
                set.size,
                set.core_end,
                l.map_or(0, |l| l.exec),
                l.map_or(0, |l| l.nonexec)
            ));
        }
        if !reread.is_empty() {
            let names: Vec<&str> = reread.iter().map(|r| ctx.dats[r.dat].name.as_str()).collect();
            line.push_str(&format!(" read again from HDF5: {};", names.join(", ")));
        }
        if !remaps.is_empty() {
            let names: Vec<&str> = remaps.iter().map(|&i| ctx.maps[i].name.as_str()).collect();
            line.push_str(&format!(" maps released while partitioning: {};", names.join(", ")));
        }
        if let Some(r) = rss_released {
            line.push_str(&format!(" rss {r} KiB once they were released;"));
        }
        let peak = phases.iter().map(|p| p.1).max().into_iter().chain(proc_status_kib("VmHWM")).max();
        if let (Some(entry), Some(peak)) = (rss_entry, peak) {
            line.push_str(&format!(" memory: rss {entry} KiB at entry, peak +{} KiB", peak.saturating_sub(entry)));
            if ctx.config.diags >= 2 {
                let each: Vec<String> =
                    phases.iter().map(|(n, k)| format!("{n} +{}", k.saturating_sub(entry))).collect();
                line.push_str(&format!(" (peak per phase, KiB: {})", each.join(", ")));
            }
        }
        line.push('\n');
        crate::core::output::print_after_c_stdio(&line);
    }
    Ok(())
}

/// The rows of set `s` in process `p`'s declared block (`offsets`: each set's block starts).
fn declared_rows(offsets: &[Vec<usize>], s: usize, p: usize) -> usize {
    offsets[s][p + 1] - offsets[s][p]
}

/// What a dat released by `op_partition` needs to be read again: where its rows are, its
/// shape, and the declared blocks of its set (the rows each process read at the declaration).
pub struct Reread<'a> {
    pub source: &'a FileSource,
    pub ty: ElemType,
    pub dim: usize,
    pub offsets: &'a [usize],
}

/// The file format's readers (`io::hdf5`, above this layer) of what `op_partition` released.
/// Both collective.
#[derive(Clone, Copy)]
pub struct Readers {
    pub dat: DatReader,
    pub map: MapReader,
}

/// Reads a released dat's rows (global indices, the new layout's) into a buffer.
pub type DatReader = fn(&super::Comm, &Reread, &[u32], &mut [u8], &str) -> Result<()>;

/// Reads a released map's declared block (dim, (first row, rows)), checked against its hash.
pub type MapReader = fn(&super::Comm, &FileSource, usize, (usize, usize), &str) -> Result<Vec<i32>>;

/// The readers of a partition that releases nothing.
const NO_READERS: Readers = Readers {
    dat: |_, _, _, _, call| op2_bail!(Internal, "{call}: a dat was released to be read again without a reader"),
    map: |_, _, _, _, call| op2_bail!(Internal, "{call}: a map was released to be read again without a reader"),
};

/// A dat `op_partition` releases at its entry and reads again from its file at the end.
struct Released {
    dat: usize,
    /// Whether any process's block holds a byte other than zero (else nothing is read: its
    /// new buffer stays zero pages, as a dat declared without data).
    nonzero: bool,
}

/// The dats to read again instead of migrating (`OP2_PARTITION_REREAD`, on by default): those
/// declared from HDF5 (`Dat::source`) whose declared block, on every process, still hashes as
/// it did when read and whose file has the same identity (device, inode, size, modification
/// time): a program may write through a dat's data pointer, or rewrite the file, in between.
/// The others (declared from arrays, changed, on a device) migrate. Collective (one sum).
/// Also the maps declared from HDF5 whose block still hashes the same, from the same file.
fn rereadable(ctx: &Context, offsets: &[Vec<usize>]) -> Result<(Vec<Released>, Vec<usize>)> {
    let n = ctx.dats.len();
    let mu = ctx.comm.rank() as usize;
    // Per dat: processes where it cannot be read again, processes where it is not all zero;
    // per map: processes where it cannot.
    let mut v = vec![0u64; 2 * n + ctx.maps.len()];
    for (i, m) in ctx.maps.iter().enumerate() {
        let s = m.from.0 as usize;
        let same = ctx.config.partition_reread
            && m.values.len() == declared_rows(offsets, s, mu) * m.dim
            && m.source.as_ref().is_some_and(|src| {
                FileSource::identity_of(&src.path) == Some(src.identity)
                    && FileSource::values_hash(&m.values) == src.hash
            });
        v[2 * n + i] = u64::from(!same);
    }
    for (d, dv) in ctx.dats.iter().enumerate() {
        let s = dv.set.0 as usize;
        let bytes = declared_rows(offsets, s, mu) * dv.elem_bytes();
        let same = ctx.config.partition_reread
            && !dv.freed
            && dv.to_device == 0
            && dv.data.len() == bytes
            && dv.source.as_ref().is_some_and(|src| {
                FileSource::identity_of(&src.path) == Some(src.identity)
                    && FileSource::block_hash(dv.data.as_slice()) == src.hash
            });
        v[d] = u64::from(!same);
        v[n + d] = u64::from(same && dv.data.as_slice().iter().any(|&b| b != 0));
    }
    Coll::sum_u64(&ctx.comm, &mut v)?;
    let dats = (0..n).filter(|&d| v[d] == 0).map(|d| Released { dat: d, nonzero: v[n + d] > 0 }).collect();
    Ok((dats, (0..ctx.maps.len()).filter(|&i| v[2 * n + i] == 0).collect()))
}

/// `op_partition`'s work after its checks: the parts, the layouts, the maps' and dats'
/// migration, and the dats of `reread` (released, the coordinates still held) read again into
/// the new layout. Returns the layouts (the sets still have their declared sizes). Collective.
fn migrate(
    ctx: &mut Context,
    method: Method,
    (prime_set, prime_map, coords): (Option<SetId>, Option<MapId>, Option<DatId>),
    offsets: &[Vec<usize>],
    (reread, remaps, readers): (&[Released], &[usize], Readers),
    mark: &mut dyn FnMut(&'static str),
) -> Result<Vec<super::layout::SetLayout>> {
    const CALL: &str = "op_partition";
    let nranks = ctx.comm.size() as usize;
    let me = ctx.comm.rank();
    let mu = me as usize;
    let nsets = ctx.sets.len();
    let block_len = |s: usize| declared_rows(offsets, s, mu);
    let coll: &dyn Coll = &ctx.comm;
    let mut parts: Vec<Option<Vec<i32>>> = vec![None; nsets];
    match method {
        // Every allocation below whose size comes from the mesh is fallible, and a failure on
        // one process is made collective (`Comm::local`: it meets the others' next collective),
        // so it is OP2_ERR_OUT_OF_MEMORY on every process, never an abort or a hang.
        Method::Block => {
            let blocks = (0..nsets).map(|s| alloc::filled(block_len(s), me, "op_partition: parts")).collect();
            for (p, b) in parts.iter_mut().zip(ctx.comm.local::<Vec<_>>(blocks)?) {
                *p = Some(b);
            }
        }
        Method::Random => {
            let s = prime_set.map_or(0, |s| s.0 as usize);
            if nsets > 0 {
                parts[s] = Some(ctx.comm.local(distpart::random(offsets[s][mu], block_len(s), nranks))?);
            }
        }
        Method::Rcb => {
            let c = coords.ok_or_else(|| crate::op2_err!(BadConfig, "{CALL}: no coords"))?;
            let s = ctx.dats[c.0 as usize].set.0 as usize;
            let (vals, dim) = ctx.comm.local(coords_f64(ctx, c, block_len(s)))?;
            parts[s] = Some(distpart::rcb(coll, &vals, dim, offsets[s][mu], nranks)?);
        }
        Method::Kway | Method::ParKway { .. } => {
            let m = prime_map.ok_or_else(|| crate::op2_err!(BadConfig, "{CALL}: no prime_map"))?;
            let pm = &ctx.maps[m.0 as usize];
            let (from, to) = (pm.from.0 as usize, pm.to.0 as usize);
            let g = DMap { from, to, dim: pm.dim, values: &pm.values[..block_len(from) * pm.dim] };
            let (xadj, adjncy) = distpart::graph(coll, &offsets[to], &g)?;
            // The graph is all the partitioner needs of the map: it goes too if it is to be
            // read again.
            if remaps.contains(&(m.0 as usize)) {
                ctx.maps[m.0 as usize].values = Vec::new();
            }
            mark("graph");
            let g = DMap { from, to, dim: 0, values: &[] };
            let coll: &dyn Coll = &ctx.comm;
            parts[g.to] = Some(match (method, coords) {
                (Method::Kway, _) => {
                    metis_gathered(coll, &offsets[g.to], &xadj, &adjncy, &ctx.maps[m.0 as usize].name)?
                }
                (Method::ParKway { geom: true }, Some(c)) => {
                    let xyz = ctx.comm.local(coords_f64(ctx, c, block_len(g.to)).and_then(|(v, dim)| {
                        let mut xyz: Vec<f32> = alloc::with_capacity(v.len(), "op_partition: coordinates")?;
                        xyz.extend(v.iter().map(|&x| x as f32));
                        Ok((xyz, dim))
                    }))?;
                    let (xyz, dim) = (&xyz.0, xyz.1);
                    par_kway(ctx, &offsets[g.to], &xadj, &adjncy, Some((xyz, dim)))?
                }
                _ => par_kway(ctx, &offsets[g.to], &xadj, &adjncy, None)?,
            });
        }
    }
    // The coordinates, needed until now, go too when they are to be read again.
    if let Some(c) = coords.filter(|c| reread.iter().any(|r| r.dat == c.0 as usize)) {
        ctx.dats[c.0 as usize].data = AlignedBuf::default();
    }
    mark("prime parts");
    // The maps released, read again as they were (each process its declared block).
    for &i in remaps {
        let m = &ctx.maps[i];
        let Some(source) = m.source.as_ref() else {
            op2_bail!(Internal, "{CALL}: map '{}' was released without the file it came from", m.name)
        };
        let s = m.from.0 as usize;
        let v = (readers.map)(&ctx.comm, source, m.dim, (offsets[s][mu], block_len(s)), CALL)?;
        ctx.maps[i].values = v;
    }
    if !remaps.is_empty() {
        mark("maps read again");
    }
    // Every map's rows of this process's declared block (global targets): nothing is gathered.
    let dmaps: Vec<DMap> = ctx
        .maps
        .iter()
        .map(|m| {
            let n = block_len(m.from.0 as usize);
            DMap { from: m.from.0 as usize, to: m.to.0 as usize, dim: m.dim, values: &m.values[..n * m.dim] }
        })
        .collect();
    let coll: &dyn Coll = &ctx.comm;
    distpart::derive(coll, offsets, &dmaps, &mut parts)?;
    let parts: Vec<Vec<i32>> = parts.into_iter().map(|p| p.unwrap_or_default()).collect();
    let layouts = distpart::layouts(coll, offsets, &dmaps, &parts)?;
    drop(parts);
    let shapes: Vec<(usize, usize, usize)> = dmaps.iter().map(|g| (g.from, g.to, g.dim)).collect();
    drop(dmaps);
    mark("layouts");
    // Migration: each map and dat is replaced as soon as its new rows are in, so only one of
    // them is held twice at a time. Past this point an error (out of memory) is still an error
    // on every process, but leaves the maps and dats half migrated: the message says so.
    for d in 0..ctx.dats.len() {
        if !ctx.dats[d].freed {
            ctx.sync_to_host(DatId(d as u32))?;
        }
    }
    for (i, &(from, to, dim)) in shapes.iter().enumerate() {
        // The rows of owned and exec elements from their homes, targets made local.
        let m = &ctx.maps[i];
        let g = DMap { from, to, dim, values: &m.values[..block_len(from) * dim] };
        let v = distpart::local_map(&ctx.comm, &g, &offsets[from], &layouts[from], &layouts[to], &m.name)?;
        ctx.maps[i].values = v;
        distpart::trim_heap();
    }
    mark("maps");
    for d in 0..ctx.dats.len() {
        if ctx.dats[d].freed || reread.iter().any(|r| r.dat == d) {
            continue;
        }
        // Each process fetches the rows of its layout from their homes.
        let dv = &ctx.dats[d];
        let (s, eb) = (dv.set.0 as usize, dv.elem_bytes());
        let l = &layouts[s];
        let buf = AlignedBuf::zeroed(l.total() * eb).ok_or_else(|| {
            crate::op2_err!(
                OutOfMemory,
                "{CALL}: cannot allocate {} rows of dat '{}' (its new layout); the maps and the dats before it are \
                 migrated already, so this run cannot go on",
                l.total(),
                dv.name
            )
        });
        let mut buf = ctx.comm.local(buf)?;
        // A dat still all zero on every process (declared without data) needs no rows moved,
        // and its new buffer stays untouched zero pages until a loop writes it.
        let block = &dv.data.as_slice()[..block_len(s) * eb];
        let mut nonzero = [u64::from(block.iter().any(|&b| b != 0))];
        Coll::sum_u64(&ctx.comm, &mut nonzero)?;
        if nonzero[0] > 0 {
            distpart::fetch_rows_into(
                &ctx.comm,
                &offsets[s],
                &dv.data.as_slice()[..block_len(s) * eb],
                eb,
                l.gids.as_slice(),
                buf.as_mut_slice(),
            )?;
        }
        let dv = &mut ctx.dats[d];
        dv.data = buf;
        dv.halo_dirty = false;
        dv.residency = crate::core::residency::Residency::Host;
        distpart::trim_heap();
    }
    mark("dats");
    // The dats released at the entry, read again from their files straight into the new
    // layout (the rows every process holds now: owned, exec and non-exec halo alike), in
    // pieces: the values are the declaration's, as migration would have brought them.
    for r in reread {
        let dv = &ctx.dats[r.dat];
        let (s, eb) = (dv.set.0 as usize, dv.elem_bytes());
        let l = &layouts[s];
        let buf = AlignedBuf::zeroed(l.total() * eb).ok_or_else(|| {
            crate::op2_err!(
                OutOfMemory,
                "{CALL}: cannot allocate {} rows of dat '{}' (its new layout, to read it again from its file)",
                l.total(),
                dv.name
            )
        });
        let mut buf = ctx.comm.local(buf)?;
        if r.nonzero {
            let Some(source) = dv.source.as_ref() else {
                op2_bail!(Internal, "{CALL}: dat '{}' was released without the file it came from", dv.name)
            };
            let rr = Reread { source, ty: dv.ty, dim: dv.dim, offsets: &offsets[s] };
            (readers.dat)(&ctx.comm, &rr, l.gids.as_slice(), buf.as_mut_slice(), CALL)?;
        }
        let dv = &mut ctx.dats[r.dat];
        dv.data = buf;
        dv.halo_dirty = false;
        dv.residency = crate::core::residency::Residency::Host;
        distpart::trim_heap();
    }
    if !reread.is_empty() {
        mark("read again");
    }
    Ok(layouts)
}

/// A `kB` field of /proc/self/status (VmRSS, VmHWM), in KiB; None where there is no procfs.
pub fn proc_status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))?;
    line[field.len() + 1..].trim().trim_end_matches("kB").trim().parse().ok()
}

/// Resets the process's peak resident size (VmHWM) to its current one (Linux: "5" written to
/// /proc/self/clear_refs), so that VmHWM afterwards is the peak of what follows. Best effort.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// A coordinate dat's rows of this process's declared block (`n` elements) as f64, and its dim.
fn coords_f64(ctx: &Context, c: DatId, n: usize) -> Result<(Vec<f64>, usize)> {
    let dat = &ctx.dats[c.0 as usize];
    let (dim, ty) = (dat.dim, dat.ty);
    let rows = &dat.data.as_slice()[..n * dat.elem_bytes()];
    let mut vals = alloc::with_capacity(n * dim, "op_partition: coordinates")?;
    match ty {
        ElemType::Double => {
            vals.extend(rows.chunks_exact(8).map(|b| f64::from_ne_bytes(b.try_into().unwrap_or([0; 8]))))
        }
        ElemType::Float => {
            vals.extend(rows.chunks_exact(4).map(|b| f32::from_ne_bytes(b.try_into().unwrap_or([0; 4])) as f64))
        }
        _ => vals.extend(rows.chunks_exact(4).map(|b| i32::from_ne_bytes(b.try_into().unwrap_or([0; 4])) as f64)),
    };
    Ok((vals, dim))
}

/// Serial METIS on the distributed graph (blocks `offsets`, this process's rows `xadj` from 0
/// and `adjncy`) gathered on every process (each computes the same parts): O(global graph)
/// memory, for small runs. The parts of this process's block.
fn metis_gathered(c: &dyn Coll, offsets: &[usize], xadj: &[i32], adjncy: &[i32], name: &str) -> Result<Vec<i32>> {
    let all = c.all_gather(&to_bytes(xadj))?;
    let alladj = c.all_gather(&to_bytes(adjncy))?;
    // The whole graph, gathered (KWAY is serial METIS): sized from what arrived.
    let words = |parts: &[Vec<u8>]| parts.iter().map(|b| b.len() / 4).sum::<usize>() + 1;
    let what = "op_partition KWAY: the gathered graph";
    let room = alloc::with_capacity::<i32>(words(&all), what)
        .and_then(|gx| Ok((gx, alloc::with_capacity::<i32>(words(&alladj), what)?)));
    let (mut gx, mut ga) = distpart::local(c, room)?;
    gx.push(0);
    for (x, a) in all.iter().zip(&alladj) {
        let base = ga.len() as i32;
        gx.extend(from_bytes(x).iter().skip(1).map(|v| v + base));
        ga.extend(from_bytes(a));
    }
    drop((all, alladj));
    if !partition::is_symmetric_loop_free(&gx, &ga) {
        op2_bail!(Internal, "op_partition: the graph of '{name}' is not symmetric");
    }
    let whole = partition::kway_parts(&gx, &ga, c.size())?;
    let me = c.rank();
    Ok(whole[offsets[me]..offsets[me + 1]].to_vec())
}

/// ParMETIS (PT-Scotch's) k-way on the distributed graph (as `metis_gathered`), with the
/// coordinates of this process's vertices for GEOMKWAY; the parts of this process's block.
/// A graph with no more vertices than processes gets one vertex per part (as `kway_parts`
/// does). PT-Scotch can deadlock when a process has no vertices (seen: some processes in
/// dgraphInducePart's Allreduce, one in its halo Alltoallv), so then the graph is spread evenly
/// for the call and the parts come back to their blocks.
fn par_kway(
    ctx: &Context,
    offsets: &[usize],
    xadj: &[i32],
    adjncy: &[i32],
    geom: Option<(&[f32], usize)>,
) -> Result<Vec<i32>> {
    let c: &dyn Coll = &ctx.comm;
    let (np, me) = (c.size(), c.rank());
    let nv = offsets[np];
    if nv <= np {
        return Ok((offsets[me]..offsets[me + 1]).map(|v| v as i32).collect());
    }
    if (0..np).all(|r| offsets[r + 1] > offsets[r]) {
        return part_kway_raw(ctx, offsets, xadj, adjncy, geom);
    }
    let even: Vec<usize> = (0..=np).map(|r| nv * r / np).collect();
    let (ex, ea) = distpart::move_graph(c, offsets, xadj, adjncy, &even)?;
    let eg = match geom {
        Some((v, d)) => {
            let bits: Vec<i32> = v.iter().map(|x| x.to_bits() as i32).collect();
            let moved = distpart::move_values(c, offsets, &bits, d, &even)?;
            Some((moved.iter().map(|&b| f32::from_bits(b as u32)).collect::<Vec<f32>>(), d))
        }
        None => None,
    };
    let pe = part_kway_raw(ctx, &even, &ex, &ea, eg.as_ref().map(|(v, d)| (&v[..], *d)))?;
    distpart::move_values(c, &even, &pe, 1, offsets)
}

#[cfg(feature = "mpi")]
fn part_kway_raw(
    ctx: &Context,
    offsets: &[usize],
    xadj: &[i32],
    adjncy: &[i32],
    geom: Option<(&[f32], usize)>,
) -> Result<Vec<i32>> {
    let Some(w) = &ctx.comm.world else { op2_bail!(Internal, "op_partition: no communicator") };
    // PT-Scotch's collectives are not op2's: every process checks in first (`World::status`),
    // so a process that failed just before (an allocation refused) stops them all here.
    w.status(None)?;
    let Ok(vtxdist) = offsets.iter().map(|&o| i32::try_from(o)).collect::<std::result::Result<Vec<i32>, _>>() else {
        op2_bail!(BadConfig, "op_partition: more than 2^31-1 vertices for ParMETIS");
    };
    super::parmetis::part_kway(w.raw(), &vtxdist, xadj, adjncy, offsets.len() - 1, geom)
}

#[cfg(not(feature = "mpi"))]
fn part_kway_raw(_: &Context, _: &[usize], _: &[i32], _: &[i32], _: Option<(&[f32], usize)>) -> Result<Vec<i32>> {
    op2_bail!(BackendUnavailable, "op_partition: ParMETIS needs the cargo feature mpi")
}

/// `op_fetch_data` under MPI: this process's declared block, original order (collective).
pub fn fetch_block(ctx: &mut Context, d: DatId, out: &mut [u8]) -> Result<()> {
    ctx.sync_to_host(d)?;
    let dat = &ctx.dats[d.0 as usize];
    let eb = dat.elem_bytes();
    let owned = ctx.comm.layout(dat.set).map_or(declared_size(ctx, dat.set), |l| l.owned);
    // Straight into the caller's array (no block-sized copy of op2's own).
    to_declared_block_into(ctx, dat.set, eb, &dat.data.as_slice()[..owned * eb], out)
}

/// This process's declared block of `set` (rows of `eb` bytes, original order), made from
/// every process's owned rows `owned` (`eb` bytes each, local order; after `op_partition`,
/// `layout.gids` names their original indices): each row goes straight to the process whose
/// declared block holds its original index (the plan of which rows go where is made once per
/// set). Before `op_partition` (or on one process) the owned rows are the declared block.
/// Collective.
pub fn to_declared_block(ctx: &Context, set: SetId, eb: usize, owned: &[u8]) -> Result<Vec<u8>> {
    let n = declared_size(ctx, set);
    let mut out = ctx.comm.local(alloc::zeroed(n * eb, "declared block"))?;
    to_declared_block_into(ctx, set, eb, owned, &mut out)?;
    Ok(out)
}

/// The most bytes of rows a process sends in one round of `to_declared_block_into`.
pub const BLOCK_ROUND_BYTES: usize = 256 << 10;

/// `to_declared_block` into `out` (the declared block's `n * eb` bytes, e.g. the caller's
/// array of `op_fetch_data`): in rounds of at most `BLOCK_ROUND_BYTES` of rows sent by each
/// process (the number of rounds agreed: the most any process needs), each row sent with its
/// original index and written to its place in `out` as it arrives. A fetch allocates one
/// round's messages (at most 256 KiB of rows sent, P x 256 KiB received, 4 bytes more per row),
/// whatever the dat's size, and keeps nothing (#36: a plan of which rows go where, made once
/// per set and kept, cost 8 bytes per owned row and as much again to make).
pub fn to_declared_block_into(ctx: &Context, set: SetId, eb: usize, owned: &[u8], out: &mut [u8]) -> Result<()> {
    let n = declared_size(ctx, set);
    if out.len() != n * eb {
        op2_bail!(Internal, "declared block: {} bytes of room for {n} rows of {eb}", out.len());
    }
    let Some(l) = ctx.comm.layout(set) else {
        out.copy_from_slice(&owned[..n * eb]);
        return Ok(());
    };
    let sd = &ctx.comm.sets[set.0 as usize];
    let np = ctx.comm.size() as usize;
    let (gids, nown) = (&l.gids, l.owned);
    // Round r sends owned rows [r * per, (r + 1) * per), each to the process whose declared
    // block holds it, as (original index, row).
    let per = (BLOCK_ROUND_BYTES / eb.max(1)).max(1);
    let rec = 4 + eb;
    let mut rounds = [nown.div_ceil(per) as f64];
    Coll::min_max_f64(&ctx.comm, &mut rounds, true)?;
    let window = per.min(nown);
    let bufs = alloc::with_capacity::<u32>(window, "declared block: a round's destinations")
        .and_then(|h| Ok((h, alloc::zeroed::<u32>(window, "declared block: a round's order")?)));
    let (mut home, mut order) = ctx.comm.local(bufs)?;
    let mut got = 0usize;
    for r in 0..rounds[0] as usize {
        let (lo, hi) = ((r * per).min(nown), ((r + 1) * per).min(nown));
        home.clear();
        home.extend(gids.range(lo, hi).map(|g| distpart::home(&sd.offsets, g as usize) as u32));
        // The window's rows in destination order (a counting sort, stable).
        let mut at = vec![0usize; np + 1];
        for &q in &home {
            at[q as usize + 1] += 1;
        }
        let counts: Vec<usize> = at[1..].iter().map(|&c| c * rec).collect();
        for q in 0..np {
            at[q + 1] += at[q];
        }
        for (k, &q) in home.iter().enumerate() {
            order[at[q as usize]] = k as u32;
            at[q as usize] += 1;
        }
        let (rbuf, _) = ctx.comm.all_to_all_fill(&counts, |sbuf| {
            for &k in &order[..home.len()] {
                let i = lo + k as usize;
                sbuf.extend_from_slice(&gids.get(i).to_ne_bytes());
                sbuf.extend_from_slice(&owned[i * eb..(i + 1) * eb]);
            }
        })?;
        for c in rbuf.chunks_exact(rec) {
            let g = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as usize;
            let Some(k) = g.checked_sub(sd.decl_offset).filter(|&k| k < sd.decl_size) else {
                op2_bail!(Internal, "declared block: original index {g} sent to the wrong process");
            };
            out[k * eb..(k + 1) * eb].copy_from_slice(&c[4..]);
            got += 1;
        }
    }
    if got != n {
        op2_bail!(Internal, "declared block: {got} of {n} rows received");
    }
    Ok(())
}

/// A dat's rows of this process's declared block, original order (collective; the caller
/// makes the host bytes current first).
pub fn dat_block(ctx: &Context, d: DatId) -> Result<Vec<u8>> {
    let dat = &ctx.dats[d.0 as usize];
    let eb = dat.elem_bytes();
    let owned = ctx.comm.layout(dat.set).map_or(declared_size(ctx, dat.set), |l| l.owned);
    to_declared_block(ctx, dat.set, eb, &dat.data.as_slice()[..owned * eb])
}

/// A map's rows of this process's declared block of its from-set, original order, with
/// original (global) indices of the to-set as values (collective).
pub fn map_block(ctx: &Context, m: MapId) -> Result<Vec<i32>> {
    let map = &ctx.maps[m.0 as usize];
    let rows: Vec<i32> = match (ctx.comm.layout(map.from), ctx.comm.layout(map.to)) {
        (Some(lf), Some(lt)) => {
            map.values[..lf.owned * map.dim].iter().map(|&t| lt.gids.get(t as usize) as i32).collect()
        }
        _ => map.values.clone(),
    };
    let out = to_declared_block(ctx, map.from, map.dim * 4, &to_bytes(&rows))?;
    Ok(from_bytes(&out))
}

/// `op_timing_output` under MPI (collective): per loop, the maximum and mean time over the
/// processes, and per process on average the halo exchange time, bytes and messages; printed by
/// process 0 (None elsewhere).
pub fn timing_table(ctx: &Context) -> Result<Option<String>> {
    use std::fmt::Write;
    let mut mine = String::new();
    for l in ctx.timings.loops() {
        let _ = writeln!(
            mine,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}",
            l.name,
            l.calls,
            l.time.as_secs_f64(),
            l.bytes,
            l.halo_time.as_secs_f64(),
            l.halo_bytes,
            l.halo_messages
        );
    }
    // How this process's work spread over its threads (threads backend): one line, no tabs.
    if let Some(w) = ctx.backend.work_report() {
        let _ = writeln!(mine, "#work {}", w.replace(['\t', '\n'], " "));
    }
    let all = ctx.comm.all_gather(mine.as_bytes())?;
    if ctx.comm.rank() != 0 {
        return Ok(None);
    }
    let p = all.len() as f64;
    // name -> per process (calls, time, bytes, halo time, halo bytes, messages)
    let mut rows: Vec<(String, Vec<[f64; 6]>)> = Vec::new();
    for b in &all {
        for line in String::from_utf8_lossy(b).lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() != 7 {
                continue;
            }
            let v: Vec<f64> = f[1..].iter().map(|x| x.parse::<f64>().unwrap_or(0.0)).collect();
            let rec = [v[0], v[1], v[2], v[3], v[4], v[5]];
            match rows.iter_mut().find(|r| r.0 == f[0]) {
                Some(r) => r.1.push(rec),
                None => rows.push((f[0].to_string(), vec![rec])),
            }
        }
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "op2 timing ({} backend, {} MPI processes: max and mean over processes)",
        ctx.backend.kind().name(),
        all.len()
    );
    let _ = writeln!(
        s,
        "  {:<24} {:>8} {:>12} {:>12} {:>12} {:>10} {:>12} {:>14} {:>10}",
        "loop", "calls", "max (s)", "mean (s)", "mean (ms)", "GB/s", "halo (s)", "halo B/call", "msgs/call"
    );
    let (mut tmax, mut halo_t, mut halo_b) = (0.0f64, 0.0f64, 0.0f64);
    for (name, per) in &rows {
        let calls = per[0][0].max(1.0);
        let max = per.iter().map(|r| r[1]).fold(0.0, f64::max);
        let mean = per.iter().map(|r| r[1]).sum::<f64>() / p;
        let bytes: f64 = per.iter().map(|r| r[2]).sum();
        let ht = per.iter().map(|r| r[3]).sum::<f64>() / p;
        let hb = per.iter().map(|r| r[4]).sum::<f64>() / p;
        let msgs = per.iter().map(|r| r[5]).sum::<f64>() / p;
        tmax += max;
        halo_t += ht;
        halo_b += hb;
        let gbs = if max > 0.0 { bytes / max / 1e9 } else { 0.0 };
        let _ = writeln!(
            s,
            "  {:<24} {:>8} {:>12.6} {:>12.6} {:>12.6} {:>10.3} {:>12.6} {:>14.0} {:>10.2}",
            name,
            calls as u64,
            max,
            mean,
            1e3 * max / calls,
            gbs,
            ht,
            hb / calls,
            msgs / calls
        );
    }
    let _ = writeln!(s, "  {:<24} {:>8} {:>12.6}", "total", "", tmax);
    let _ = writeln!(
        s,
        "  MPI halo exchanges: {:.6} s and {:.0} bytes sent per process (mean); {} exchanges, {} messages on process 0",
        halo_t, halo_b, ctx.comm.exchanges, ctx.comm.messages
    );
    // Per process, how the backend's threads shared the work (hybrid MPI + threads).
    let work: Vec<(usize, String)> = all
        .iter()
        .enumerate()
        .filter_map(|(r, b)| {
            String::from_utf8_lossy(b).lines().find_map(|l| l.strip_prefix("#work ").map(|w| (r, w.to_string())))
        })
        .collect();
    if !work.is_empty() {
        let _ = writeln!(s, "op2 {} backend, per process", ctx.backend.kind().name());
        for (r, w) in &work {
            let _ = writeln!(s, "  process {r}: {w}");
        }
    }
    // Chains (lazy evaluation, op_loop_chain_begin/end) as process 0 ran them.
    if ctx.timings.loops().iter().any(|l| l.members.is_some()) {
        let _ = writeln!(s, "op2 loop chains (process 0; time in the chain's row; its loops count calls and bytes)");
        for l in ctx.timings.loops() {
            if let Some(m) = &l.members {
                let _ = writeln!(s, "  {:<24} {m}", l.name);
            }
        }
    }
    Ok(Some(s))
}

/// The id device backends cache the `k`th global-index map under (far from real map ids).
pub fn idx_map_id(k: usize) -> MapId {
    MapId(u32::MAX - k as u32)
}

/// For `op_arg_idx` on device backends under MPI: a map from the loop set's local elements
/// (owned and exec halo) to original global indices: the element's own (`map` None, dim 1), or
/// `map`'s targets translated. Made once; returns its position in `comm.idx_maps`.
pub fn global_index_map(ctx: &mut Context, set: SetId, map: Option<MapId>) -> Result<usize> {
    if let Some(k) = ctx.comm.idx_maps.iter().position(|(m, s, _)| *m == map && *s == set) {
        return Ok(k);
    }
    let rows = ctx.sets[set.0 as usize].exec_end;
    let values: Vec<i32> = match map {
        None => match ctx.comm.layout(set) {
            Some(l) => l.gids.range(0, rows).map(|g| g as i32).collect(),
            None => (0..rows as i32).collect(),
        },
        Some(m) => {
            let mp = &ctx.maps[m.0 as usize];
            match ctx.comm.layout(mp.to) {
                Some(l) => mp.values.iter().map(|&t| l.gids.get(t as usize) as i32).collect(),
                None => mp.values.clone(),
            }
        }
    };
    if ctx.comm.idx_maps.len() >= 1 << 20 {
        op2_bail!(Internal, "op_par_loop: too many op_arg_idx maps");
    }
    ctx.comm.idx_maps.push((map, set, std::sync::Arc::new(values)));
    Ok(ctx.comm.idx_maps.len() - 1)
}

/// The inverse of `dat_block` (checkpoint restore): `block` is this process's declared block of
/// the dat's rows in original order; every process gets its local rows (owned and halos, so
/// the halos are current). Before `op_partition` the block is the local rows. Collective.
pub fn set_from_block(ctx: &mut Context, d: DatId, block: &[u8]) -> Result<()> {
    let dat = &ctx.dats[d.0 as usize];
    let eb = dat.elem_bytes();
    let set = dat.set;
    if ctx.comm.layout(set).is_none() {
        let n = declared_size(ctx, set) * eb;
        ctx.dats[d.0 as usize].data.as_mut_slice()[..n].copy_from_slice(&block[..n]);
        return Ok(());
    }
    let Some(l) = ctx.comm.layout(set) else { return Ok(()) };
    let name = &ctx.dats[d.0 as usize].name;
    let n = declared_size(ctx, set);
    // Each process fetches its local rows from the blocks that hold them (no whole dat).
    let rows = distpart::fetch_rows(
        &ctx.comm,
        &ctx.comm.sets[set.0 as usize].offsets,
        &block[..n * eb],
        eb,
        &l.gids.to_vec(),
    )?;
    let Some(buf) = AlignedBuf::from_slice(&rows) else {
        op2_bail!(OutOfMemory, "checkpoint: cannot allocate {} rows of dat '{name}'", l.total());
    };
    let dat = &mut ctx.dats[d.0 as usize];
    dat.data = buf;
    dat.halo_dirty = false;
    Ok(())
}
