//! The distributed operations on a `Context`: the declared blocks of sets, `op_partition`
//! (gather the connectivity, partition, build the layouts, migrate maps and dats), and the
//! collective outputs in the original numbering (fetch, fetch by range, print). A layer above
//! `context` (which holds only the `Comm` of `mpi`, below it): what `Context` itself needs while
//! declaring (a set's global size, its declared block) is answered by `Comm`.
//!
//! The partitioner and the halo construction run on the whole connectivity, gathered on every
//! process (each computes the same answer; see `partition` and `layout`), and dat rows are
//! migrated by gathering each dat once. That costs O(global mesh) memory per process during
//! `op_partition` only; loops afterwards exchange only halo rows, point to point.

use super::layout::{self, local_rows, SetLayout};
use super::partition::{self, GMap, Method};
use super::BlockPlan;
use crate::context::Context;
use crate::core::buffer::AlignedBuf;
use crate::core::{DatId, ElemType, MapId, SetId};
use crate::error::Result;
use crate::op2_bail;

fn to_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

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

/// A whole map in global numbering (rows of every process, in rank order).
fn gather_map(ctx: &Context, m: MapId) -> Result<Vec<i32>> {
    let map = &ctx.maps[m.0 as usize];
    let all = ctx.comm.all_gather(&to_bytes(&map.values))?;
    Ok(all.iter().flat_map(|b| from_bytes(b)).collect())
}

/// The host rows of a dat, declared blocks of every process, in global order. Before
/// `op_partition` these are the local rows; after, the owned rows with their global indices.
fn gather_rows(ctx: &Context, d: DatId) -> Result<Vec<u8>> {
    let dat = &ctx.dats[d.0 as usize];
    let eb = dat.elem_bytes();
    let data = dat.data.as_slice();
    match ctx.comm.layout(dat.set) {
        None => {
            let n = ctx.sets[dat.set.0 as usize].size;
            Ok(ctx.comm.all_gather(&data[..n * eb])?.concat())
        }
        Some(l) => {
            // [count][gids][rows]
            let mut mine = Vec::with_capacity(8 + l.owned * (4 + eb));
            mine.extend_from_slice(&(l.owned as u64).to_ne_bytes());
            for &g in &l.gids[..l.owned] {
                mine.extend_from_slice(&g.to_ne_bytes());
            }
            mine.extend_from_slice(&data[..l.owned * eb]);
            let all = ctx.comm.all_gather(&mine)?;
            let n = global_size(ctx, dat.set);
            let mut out = vec![0u8; n * eb];
            for b in &all {
                let mut w = [0u8; 8];
                w.copy_from_slice(&b[..8]);
                let k = u64::from_ne_bytes(w) as usize;
                let rows = &b[8 + 4 * k..];
                for i in 0..k {
                    let g = u32::from_ne_bytes([b[8 + 4 * i], b[9 + 4 * i], b[10 + 4 * i], b[11 + 4 * i]]) as usize;
                    out[g * eb..(g + 1) * eb].copy_from_slice(&rows[i * eb..(i + 1) * eb]);
                }
            }
            Ok(out)
        }
    }
}

/// `op_partition`. Collective. Without MPI (one process) it only validates its arguments.
pub fn partition(
    ctx: &mut Context,
    lib: &str,
    routine: Option<&str>,
    prime_set: Option<SetId>,
    prime_map: Option<MapId>,
    coords: Option<DatId>,
) -> Result<()> {
    const CALL: &str = "op_partition";
    let method = partition::method(lib, routine)?;
    match method {
        Method::Kway if prime_map.is_none() => {
            op2_bail!(BadConfig, "{CALL}: {lib} KWAY partitions the graph of prime_map, which is OP_ID (NULL)")
        }
        Method::Rcb if coords.is_none() => {
            op2_bail!(BadConfig, "{CALL}: {lib} (RCB/GEOM) needs a coordinate dat, coords is NULL")
        }
        _ => {}
    }
    if let Some(c) = coords {
        let ty = ctx.dats[c.0 as usize].ty;
        if method == Method::Rcb && !matches!(ty, ElemType::Double | ElemType::Float | ElemType::Int) {
            op2_bail!(
                BadType,
                "{CALL}: coords '{}' is {}, RCB needs double, float or int",
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
        let _ = prime_set;
        return Ok(());
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
    let t = std::time::Instant::now();
    let nranks = ctx.comm.size() as usize;
    let me = ctx.comm.rank();
    let nsets = ctx.sets.len();
    let sizes: Vec<usize> = (0..nsets).map(|s| global_size(ctx, SetId(s as u32))).collect();
    let gvalues: Vec<Vec<i32>> =
        (0..ctx.maps.len()).map(|m| gather_map(ctx, MapId(m as u32))).collect::<Result<_>>()?;
    let gmaps: Vec<GMap> = ctx
        .maps
        .iter()
        .zip(&gvalues)
        .map(|(m, v)| GMap { from: m.from.0 as usize, to: m.to.0 as usize, dim: m.dim, values: v })
        .collect();
    let block = |s: usize| partition::block_parts(&ctx.comm.sets[s].offsets);
    let mut parts: Vec<Option<Vec<i32>>> = vec![None; nsets];
    match method {
        Method::Block => {
            for (s, p) in parts.iter_mut().enumerate() {
                *p = Some(block(s));
            }
        }
        Method::Random => {
            let s = prime_set.map_or(0, |s| s.0 as usize);
            if nsets > 0 {
                parts[s] = Some(partition::random_parts(sizes[s], nranks));
            }
        }
        Method::Rcb => {
            let c = coords.ok_or_else(|| crate::op2_err!(BadConfig, "{CALL}: no coords"))?;
            let dat = &ctx.dats[c.0 as usize];
            let (dim, ty, s) = (dat.dim, dat.ty, dat.set.0 as usize);
            let rows = gather_rows(ctx, c)?;
            let vals: Vec<f64> = match ty {
                ElemType::Double => {
                    rows.chunks_exact(8).map(|b| f64::from_ne_bytes(b.try_into().unwrap_or([0; 8]))).collect()
                }
                ElemType::Float => {
                    rows.chunks_exact(4).map(|b| f32::from_ne_bytes(b.try_into().unwrap_or([0; 4])) as f64).collect()
                }
                _ => rows.chunks_exact(4).map(|b| i32::from_ne_bytes(b.try_into().unwrap_or([0; 4])) as f64).collect(),
            };
            parts[s] = Some(partition::rcb_parts(&vals, dim, nranks));
        }
        Method::Kway => {
            let m = prime_map.ok_or_else(|| crate::op2_err!(BadConfig, "{CALL}: no prime_map"))?;
            let g = &gmaps[m.0 as usize];
            let (xadj, adjncy) = partition::target_graph(g, sizes[g.to]);
            if !partition::is_symmetric_loop_free(&xadj, &adjncy) {
                op2_bail!(Internal, "{CALL}: the graph of '{}' is not symmetric", ctx.maps[m.0 as usize].name);
            }
            parts[g.to] = Some(partition::kway_parts(&xadj, &adjncy, nranks)?);
        }
    }
    partition::derive(&sizes, &gmaps, &mut parts, &block);
    let parts: Vec<Vec<i32>> = parts.into_iter().map(|p| p.unwrap_or_default()).collect();
    let halos = layout::halos(&sizes, &gmaps, &parts, nranks);
    let layouts: Vec<SetLayout> = (0..nsets).map(|s| layout::set_layout(&halos, &parts, s, me)).collect();
    // Maps: local rows, local targets.
    let mut new_maps = Vec::with_capacity(gmaps.len());
    for (i, g) in gmaps.iter().enumerate() {
        new_maps.push(layout::local_map(g, &layouts[g.from], &layouts[g.to], &ctx.maps[i].name)?);
    }
    // Dats: gathered whole, then each process keeps its local rows.
    let mut new_dats: Vec<Option<AlignedBuf>> = Vec::with_capacity(ctx.dats.len());
    for d in 0..ctx.dats.len() {
        if ctx.dats[d].freed {
            new_dats.push(None);
            continue;
        }
        ctx.sync_to_host(DatId(d as u32))?;
        let rows = gather_rows(ctx, DatId(d as u32))?;
        let dv = &ctx.dats[d];
        new_dats.push(Some(local_rows(&rows, dv.elem_bytes(), &layouts[dv.set.0 as usize], &dv.name)?));
    }
    drop(gmaps);
    for (m, v) in ctx.maps.iter_mut().zip(new_maps) {
        m.values = v;
    }
    for (d, buf) in ctx.dats.iter_mut().zip(new_dats) {
        if let Some(b) = buf {
            d.data = b;
            d.halo_dirty = false;
            d.residency = crate::core::residency::Residency::Host;
        }
    }
    for (s, l) in layouts.into_iter().enumerate() {
        let set = &mut ctx.sets[s];
        set.size = l.owned;
        set.core_end = l.core;
        set.exec_end = l.owned + l.exec;
        set.total = l.total();
        ctx.comm.sets[s].layout = Some(l);
    }
    ctx.comm.partitioned = true;
    ctx.comm.partition_epoch += 1;
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
        line.push('\n');
        crate::timing::print_after_c_stdio(&line);
    }
    Ok(())
}

/// `op_fetch_data` under MPI: this process's declared block, original order (collective).
pub fn fetch_block(ctx: &mut Context, d: DatId, out: &mut [u8]) -> Result<()> {
    ctx.sync_to_host(d)?;
    let rows = dat_block(ctx, d)?;
    out.copy_from_slice(&rows[..out.len()]);
    Ok(())
}

/// The process whose declared block of a set holds original index `g` (`offsets`: P + 1
/// block starts; empty blocks are skipped).
fn block_owner(offsets: &[usize], g: usize) -> usize {
    offsets.partition_point(|&o| o <= g).saturating_sub(1)
}

/// The plan of `set`, made at first use: each process sends the original indices of its owned
/// rows to the block holders once (collective; every process asks for the same sets in the
/// same order, as every collective call does).
fn block_plan(ctx: &Context, set: SetId, l: &SetLayout) -> Result<std::sync::Arc<BlockPlan>> {
    let s = set.0 as usize;
    if let Some(p) = ctx.comm.block_plans.lock().ok().and_then(|v| v.get(s).cloned().flatten()) {
        return Ok(p);
    }
    let sd = &ctx.comm.sets[s];
    let np = ctx.comm.size() as usize;
    let mut send: Vec<Vec<u32>> = vec![Vec::new(); np];
    let mut gids: Vec<Vec<u8>> = vec![Vec::new(); np];
    for (i, &g) in l.gids[..l.owned].iter().enumerate() {
        let q = block_owner(&sd.offsets, g as usize);
        send[q].push(i as u32);
        gids[q].extend_from_slice(&g.to_ne_bytes());
    }
    let got = ctx.comm.all_to_all(&gids)?;
    let mut recv = Vec::with_capacity(np);
    for b in &got {
        let mut pos = Vec::with_capacity(b.len() / 4);
        for c in b.chunks_exact(4) {
            let g = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as usize;
            let Some(k) = g.checked_sub(sd.decl_offset).filter(|&k| k < sd.decl_size) else {
                op2_bail!(Internal, "original index {g} sent to the wrong process");
            };
            pos.push(k as u32);
        }
        recv.push(pos);
    }
    let plan = std::sync::Arc::new(BlockPlan { send, recv });
    if let Ok(mut v) = ctx.comm.block_plans.lock() {
        if v.len() <= s {
            v.resize(s + 1, None);
        }
        v[s] = Some(plan.clone());
    }
    Ok(plan)
}

/// This process's declared block of `set` (rows of `eb` bytes, original order), made from
/// every process's owned rows `owned` (`eb` bytes each, local order; after `op_partition`,
/// `layout.gids` names their original indices): each row goes straight to the process whose
/// declared block holds its original index, in one all-to-all (the plan of which rows go where
/// is made once per set); no process holds more than its block and its own rows. Before
/// `op_partition` (or on one process) the owned rows are the declared block. Collective.
pub fn to_declared_block(ctx: &Context, set: SetId, eb: usize, owned: &[u8]) -> Result<Vec<u8>> {
    let n = declared_size(ctx, set);
    let Some(l) = ctx.comm.layout(set) else {
        return Ok(owned[..n * eb].to_vec());
    };
    let plan = block_plan(ctx, set, l)?;
    let send: Vec<Vec<u8>> = plan
        .send
        .iter()
        .map(|rows| {
            let mut b = Vec::with_capacity(rows.len() * eb);
            for &i in rows {
                b.extend_from_slice(&owned[i as usize * eb..(i as usize + 1) * eb]);
            }
            b
        })
        .collect();
    let recv = ctx.comm.all_to_all(&send)?;
    drop(send);
    let mut out = vec![0u8; n * eb];
    for (b, pos) in recv.iter().zip(&plan.recv) {
        if b.len() != pos.len() * eb {
            op2_bail!(Internal, "declared block: {} bytes received for {} rows of {eb}", b.len(), pos.len());
        }
        for (c, &k) in b.chunks_exact(eb.max(1)).zip(pos) {
            out[k as usize * eb..(k as usize + 1) * eb].copy_from_slice(c);
        }
    }
    Ok(out)
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
        (Some(lf), Some(lt)) => map.values[..lf.owned * map.dim].iter().map(|&t| lt.gids[t as usize] as i32).collect(),
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
            Some(l) => l.gids[..rows].iter().map(|&g| g as i32).collect(),
            None => (0..rows as i32).collect(),
        },
        Some(m) => {
            let mp = &ctx.maps[m.0 as usize];
            match ctx.comm.layout(mp.to) {
                Some(l) => mp.values.iter().map(|&t| l.gids[t as usize] as i32).collect(),
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
    let name = ctx.dats[d.0 as usize].name.clone();
    let n = declared_size(ctx, set) * eb;
    let buf = ctx.comm.local_rows_from_blocks(set, eb, &block[..n], &name)?;
    let dat = &mut ctx.dats[d.0 as usize];
    dat.data = buf;
    dat.halo_dirty = false;
    Ok(())
}
