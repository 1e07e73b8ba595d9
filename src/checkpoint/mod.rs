//! Checkpoint and restart (`op_checkpointing_init`, `op_checkpoint_now`).
//!
//! Once on, every `op_par_loop` goes through `par_loop` here. Each loop is counted and given a
//! signature (its name, kernel, set and every argument's shape: dats, maps, indices, accesses,
//! dims and types; never addresses or values); each loop's global results (every non-READ
//! `op_arg_gbl` and every `op_arg_info`, in argument order) are kept, from the first loop on.
//! At the first loop boundary after each interval (or after `op_checkpoint_now`) the state is
//! saved (`file`): the loop count, the signatures, the saved results, the declarations (sets,
//! maps, dats, constants: names, global sizes, dims, types), every constant's value and every
//! live dat's rows in declared order; atomically (temporary file, fsync, rename, SHA-256).
//!
//! Started again with a checkpoint at its path, the program replays: loop k before the saved
//! count must have the saved k-th signature (else `OP2_ERR_CHECKPOINT`: another program), does
//! not run, and writes its saved results into the caller's globals; output calls are skipped.
//! At the saved count the declarations are compared, the constants and dats are loaded (host
//! copies current; under MPI each process its local rows, halos included) and the run goes on.

mod digest;
pub mod file;
pub mod state;

use crate::arg::{Access, RawArg};
use crate::context::Context;
use crate::core::{DatId, ElemType, KernelId, SetId};
use crate::error::Result;
use crate::{op2_bail, op2_err};
pub use state::Checkpointer;
use state::{Saved, Written};
use std::time::{Duration, Instant};

/// Collects a finished background write (`wait`: or waits for it): its report line (diags) or
/// its error (`OP2_ERR_CHECKPOINT` / `OP2_ERR_IO`), as the error of `call` (the loop at the
/// boundary after it failed, or `op_exit`), whose name the message starts with.
fn collect(ctx: &mut Context, wait: bool, call: &str) -> Result<()> {
    let Some(cp) = ctx.checkpoint.as_mut() else { return Ok(()) };
    if !cp.pending.as_ref().is_some_and(|h| wait || h.is_finished()) {
        return Ok(());
    }
    let Some(h) = cp.pending.take() else { return Ok(()) };
    let Ok(w) = h.join() else {
        op2_bail!(Checkpoint, "{call}: the writer thread of checkpoint '{}' failed", cp.path);
    };
    cp.buffers = w.buffers;
    cp.last_write = w.took;
    let line = w.outcome.map_err(|mut e| {
        let why = e.message.strip_prefix("op2 checkpoint: ").unwrap_or(&e.message);
        e.message = format!("{call}: checkpoint '{}' was not written: {why}", cp.path);
        e
    })?;
    diag(ctx, &line);
    Ok(())
}

/// `op_exit`: waits for a checkpoint still being written in the background; its failure is
/// `op_exit`'s error (the session ends all the same).
pub fn finish(ctx: &mut Context) -> Result<()> {
    collect(ctx, true, "op_exit")
}

/// The meta blob's format: v2 adds the digests of the maps' and dats' values (v1 is read, and
/// its values are not checked).
const META_MAGIC: &[u8; 16] = b"op2ckpt-meta-v2\n";
const META_MAGIC_V1: &[u8; 16] = b"op2ckpt-meta-v1\n";

/// FNV-1a, 64 bits: the loop signature (stable across runs and builds).
struct Fnv(u64);
impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ x as u64).wrapping_mul(0x100000001b3);
        }
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
}

fn acc_code(a: Access) -> u64 {
    match a {
        Access::Read => 0,
        Access::Write => 1,
        Access::Rw => 2,
        Access::Inc => 3,
        Access::Min => 4,
        Access::Max => 5,
    }
}

/// A loop's signature: what it is, without data or addresses.
fn signature(ctx: &Context, kernel: KernelId, name: &str, set: SetId, raw: &[RawArg]) -> u64 {
    let mut h = Fnv(0xcbf29ce484222325);
    h.str(name);
    h.str(&ctx.kernels[kernel.0 as usize].name);
    h.str(&ctx.sets[set.0 as usize].name);
    h.u64(raw.len() as u64);
    let map = |m: Option<crate::core::MapId>| m.map_or(u64::MAX, |m| m.0 as u64);
    for r in raw {
        match *r {
            RawArg::Dat { dat, map: m, idx, acc, opt } => {
                h.u64(1);
                h.u64(dat.0 as u64);
                h.u64(map(m));
                h.u64(idx as i64 as u64);
                h.u64(acc_code(acc));
                h.u64(opt.map_or(2, |o| o as u64));
            }
            RawArg::Gbl { dim, ty, acc, .. } => {
                h.u64(2);
                h.u64(dim as u64);
                h.str(ty.api_name());
                h.u64(acc_code(acc));
            }
            RawArg::Idx { map: m, idx } => {
                h.u64(3);
                h.u64(map(m));
                h.u64(idx as i64 as u64);
            }
            RawArg::Info { dim, ty, reference, .. } => {
                h.u64(4);
                h.u64(dim as u64);
                h.str(ty.api_name());
                h.u64(reference as i64 as u64);
            }
            RawArg::Mat { mat, rowmap, ridx, colmap, cidx, acc } => {
                h.u64(5);
                h.u64(mat.0 as u64);
                h.u64(rowmap.0 as u64);
                h.u64(ridx as i64 as u64);
                h.u64(colmap.0 as u64);
                h.u64(cidx as i64 as u64);
                h.u64(acc_code(acc));
            }
        }
    }
    h.0
}

/// The caller's memory a loop hands results to: (pointer, bytes) of every non-READ global and
/// every info payload, in argument order.
fn outputs(raw: &[RawArg]) -> impl Iterator<Item = (*mut u8, usize)> + '_ {
    raw.iter().filter_map(|r| match *r {
        RawArg::Gbl { ptr, dim, ty, acc } if acc != Access::Read => Some((ptr, dim * ty.size())),
        RawArg::Info { ptr, dim, ty, .. } => Some((ptr, dim * ty.size())),
        _ => None,
    })
}

/// The declarations that make a program's data: sets (global sizes), maps, live dats and
/// constants, one per line.
fn declarations(ctx: &Context) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for (i, set) in ctx.sets.iter().enumerate() {
        let _ = writeln!(s, "set {} {}", set.name, crate::mpi::dist::global_size(ctx, SetId(i as u32)));
    }
    for m in &ctx.maps {
        let (f, t) = (&ctx.sets[m.from.0 as usize].name, &ctx.sets[m.to.0 as usize].name);
        let _ = writeln!(s, "map {} {f} -> {t} dim {}", m.name, m.dim);
    }
    for d in ctx.dats.iter().filter(|d| !d.freed) {
        let _ = writeln!(s, "dat {} on {} dim {} {}", d.name, ctx.sets[d.set.0 as usize].name, d.dim, d.ty.api_name());
    }
    for c in ctx.consts.values() {
        let _ = writeln!(s, "const {} dim {} {}", c.name, c.dim, c.ty.api_name());
    }
    s
}

struct Out(Vec<u8>);
impl Out {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
}

/// A bounds-checked reader of the meta blob (its sizes come from the file).
struct In<'a>(&'a [u8]);
impl<'a> In<'a> {
    fn take(&mut self, n: u64) -> Option<&'a [u8]> {
        let n = usize::try_from(n).ok().filter(|&n| n <= self.0.len())?;
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u64()?;
        self.take(n)
    }
    fn u64s(&mut self, n: u64) -> Option<Vec<u64>> {
        let b = self.take(n.checked_mul(8)?)?;
        Some(b.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect())
    }
}

fn parse_meta(b: &[u8]) -> Option<Saved> {
    let mut r = In(b);
    let v2 = match r.take(16)? {
        m if m == META_MAGIC => true,
        m if m == META_MAGIC_V1 => false,
        _ => return None,
    };
    let nprocs = r.u64()?;
    let count = r.u64()?;
    let sigs = r.u64s(count)?;
    let red_off = r.u64s(count.checked_add(1)?)?;
    let red = r.bytes()?.to_vec();
    if red_off.windows(2).any(|w| w[0] > w[1]) || red_off.last().copied()? != red.len() as u64 {
        return None;
    }
    let decls = String::from_utf8(r.bytes()?.to_vec()).ok()?;
    let nconst = r.u64()?;
    let mut consts = Vec::new();
    for _ in 0..nconst {
        let name = String::from_utf8(r.bytes()?.to_vec()).ok()?;
        let ty = ElemType::parse(std::str::from_utf8(r.bytes()?).ok()?, "", "").ok()?;
        let dim = usize::try_from(r.u64()?).ok()?;
        let data = r.bytes()?.to_vec();
        if dim.checked_mul(ty.size())? != data.len() {
            return None;
        }
        consts.push((name, ty, dim, data));
    }
    let digests = if v2 {
        let mut list = || -> Option<Vec<(u64, [u8; 32])>> {
            let n = r.u64()?;
            let mut v = Vec::new();
            for _ in 0..n {
                let i = r.u64()?;
                v.push((i, r.take(32)?.try_into().ok()?));
            }
            Some(v)
        };
        let maps = list()?;
        Some((maps, list()?))
    } else {
        None
    };
    if !r.0.is_empty() {
        return None;
    }
    Some(Saved { nprocs, count, sigs, red_off, red, decls, consts, digests })
}

fn diag(ctx: &Context, line: &str) {
    if ctx.config.diags >= 1 && ctx.comm.rank() == 0 {
        crate::core::output::print_after_c_stdio(&format!("op2: checkpoint: {line}\n"));
    }
}

/// `op_checkpointing_init`: checkpointing on, saving to `path` every `interval_s` seconds (0:
/// at every loop boundary). A checkpoint already at `path` is checked (header, checksum,
/// process count) and replayed. Collective under MPI.
pub fn init(ctx: &mut Context, path: &str, interval_s: f64, flags: i32) -> Result<()> {
    const CALL: &str = "op_checkpointing_init";
    if ctx.checkpoint.is_some() {
        op2_bail!(BadConfig, "{CALL} '{path}': checkpointing is already on (for '{}')", ctx.checkpoint_path());
    }
    if !(interval_s >= 0.0 && interval_s.is_finite()) {
        op2_bail!(BadConfig, "{CALL} '{path}': interval {interval_s} s is not a non-negative number of seconds");
    }
    if flags != 0 {
        op2_bail!(BadConfig, "{CALL} '{path}': flags {flags} unknown (0 expected)");
    }
    if path.is_empty() {
        op2_bail!(BadName, "{CALL}: the checkpoint path is empty");
    }
    let comm = &ctx.comm;
    let found = file::verify(comm, path)?;
    let replay = if found == file::Found::Whole {
        let f = file::open(path, comm)?;
        let n = comm.agree(f.len_of("meta"))?;
        let n = usize::try_from(n).map_err(|_| op2_err!(Checkpoint, "{CALL}: checkpoint '{path}': meta too large"))?;
        let mut meta = crate::core::alloc::zeroed::<u8>(n, "op_checkpointing_init: checkpoint meta")?;
        f.read("meta", 0, &mut meta, comm)?;
        f.close(comm)?;
        let Some(saved) = parse_meta(&meta) else {
            op2_bail!(
                Checkpoint,
                "{CALL}: checkpoint '{path}' is not readable: its description of the run is malformed"
            );
        };
        let p = comm.size().max(1) as u64;
        if saved.nprocs != p {
            op2_bail!(
                Checkpoint,
                "{CALL}: checkpoint '{path}' was written by {} process(es); this run has {p} (restart with the same process count)",
                saved.nprocs
            );
        }
        Some(saved)
    } else {
        None
    };
    // What the restart does, said at level 1 (process 0; the outcome is every process's).
    let everyone = if ctx.comm.distributed() {
        format!(" (every one of {} processes sees it)", ctx.comm.size())
    } else {
        String::new()
    };
    match (&replay, found) {
        (Some(s), _) => diag(
            ctx,
            &format!(
                "resuming from '{path}'{everyone}: written at loop {} by {} process(es); replaying {} loop(s) (not run, their global results handed back), then its dats are loaded{}",
                s.count,
                s.nprocs,
                s.count,
                if s.digests.is_some() { "" } else { " (an older format: the maps' and dats' values cannot be checked)" }
            ),
        ),
        (None, file::Found::Nothing { tmp }) => diag(
            ctx,
            &format!(
                "no checkpoint at '{path}': the run starts from loop 0{}",
                if tmp {
                    format!(" ('{path}.tmp' is the unfinished write of a run that stopped before its first checkpoint was complete: not a checkpoint, replaced by the next write)")
                } else {
                    String::new()
                }
            ),
        ),
        (None, file::Found::Whole) => {}
    }
    let delay_ms = std::env::var("OP2_CHECKPOINT_TEST_DELAY_MS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    ctx.checkpoint = Some(Box::new(Checkpointer {
        path: path.to_string(),
        interval: interval_s,
        last: Instant::now(),
        requested: false,
        count: 0,
        sigs: Vec::new(),
        red_off: vec![0],
        red: Vec::new(),
        replay,
        delay_ms,
        writes: 0,
        last_write: Duration::ZERO,
        pending: None,
        buffers: Vec::new(),
        map_digests: Vec::new(),
        dat_digests: Vec::new(),
    }));
    Ok(())
}

impl Context {
    /// The checkpoint path ("" when off).
    pub fn checkpoint_path(&self) -> &str {
        self.checkpoint.as_ref().map_or("", |c| c.path.as_str())
    }
}

/// `op_checkpoint_now`: a checkpoint at the next loop boundary (nothing when checkpointing is
/// off or a replay is under way).
pub fn now(ctx: &mut Context) {
    if let Some(c) = ctx.checkpoint.as_mut().filter(|c| c.replay.is_none()) {
        c.requested = true;
    }
}

/// Whether an output call (`call`) is skipped: during a replay, when the data it would write
/// is not yet the program's. `OP2_DIAGNOSTICS=1` says so.
pub fn skip_output(ctx: &Context, call: &str) -> bool {
    let replaying = ctx.checkpoint.as_ref().is_some_and(|c| c.replay.is_some());
    if replaying {
        diag(ctx, &format!("replay: {call} skipped"));
    }
    replaying
}

/// `op_par_loop` while checkpointing is on: replay, restore, save, or run and record.
pub fn par_loop(ctx: &mut Context, kernel: KernelId, name: &str, set: SetId, raw: &[RawArg]) -> Result<()> {
    let sig = signature(ctx, kernel, name, set, raw);
    if ctx.checkpoint.is_none() {
        return crate::exec::run_loop(ctx, kernel, name, set, raw);
    }
    let call = format!("op_par_loop '{name}'");
    digest_new(ctx)?;
    let Some(cp) = ctx.checkpoint.as_mut() else { return crate::exec::run_loop(ctx, kernel, name, set, raw) };
    let k = cp.count;
    if let Some(s) = &cp.replay {
        if k < s.count {
            let i = k as usize;
            if s.sigs[i] != sig {
                op2_bail!(
                    Checkpoint,
                    "op_par_loop '{name}': checkpoint '{}' is of another program: loop {k} since op_checkpointing_init is '{name}' here, with arguments unlike the checkpoint's loop {k}",
                    cp.path
                );
            }
            let saved = &s.red[s.red_off[i] as usize..s.red_off[i + 1] as usize];
            let want: usize = outputs(raw).map(|(_, n)| n).sum();
            if want != saved.len() {
                op2_bail!(
                    Checkpoint,
                    "op_par_loop '{name}': checkpoint '{}' holds {} bytes of loop {k}'s global results; the loop has {want}",
                    cp.path,
                    saved.len()
                );
            }
            let mut at = 0;
            for (ptr, n) in outputs(raw) {
                // SAFETY: ptr is the caller's global of n bytes (op_arg_gbl's contract).
                unsafe { std::ptr::copy_nonoverlapping(saved[at..].as_ptr(), ptr, n) };
                at += n;
            }
            let saved = saved.to_vec();
            cp.record(sig, &saved)?;
            return Ok(());
        }
        restore(ctx, &call)?;
    }
    collect(ctx, false, &call)?;
    if due(ctx)? {
        write(ctx, &call)?;
    }
    crate::exec::run_loop(ctx, kernel, name, set, raw)?;
    let mut got = Vec::new();
    for (ptr, n) in outputs(raw) {
        // SAFETY: as above; the loop has just written them.
        got.extend_from_slice(unsafe { std::slice::from_raw_parts(ptr as *const u8, n) });
    }
    match ctx.checkpoint.as_mut() {
        Some(cp) => cp.record(sig, &got),
        None => Ok(()),
    }
}

/// The digests of the maps and dats declared since the last loop boundary (and, at the first
/// boundary after `op_checkpointing_init`, of all): their values now are those they were
/// declared with, or those the run had when checkpointing began (only loops change dats, and
/// none ran since). Collective under MPI (every process is at the same loop).
fn digest_new(ctx: &mut Context) -> Result<()> {
    use crate::mpi::dist;
    let Some(cp) = ctx.checkpoint.as_ref() else { return Ok(()) };
    let (maps_done, dats_done) = (cp.map_digests.len(), cp.dat_digests.len());
    if maps_done == ctx.maps.len() && dats_done == ctx.dats.len() {
        return Ok(());
    }
    let t = Instant::now();
    let mut maps = Vec::new();
    for m in maps_done..ctx.maps.len() {
        let id = crate::core::MapId(m as u32);
        let (from, dim) = (ctx.maps[m].from, ctx.maps[m].dim);
        let rows: std::borrow::Cow<'_, [u8]> = if ctx.comm.distributed() {
            let v = dist::map_block(ctx, id)?;
            std::borrow::Cow::Owned(v.iter().flat_map(|x| x.to_ne_bytes()).collect())
        } else {
            ctx.all_declared_rows(crate::context::Rows::Map(id), "op2 checkpoint")?
        };
        let (n, first) = (dist::global_size(ctx, from) as u64, dist::global_offset(ctx, from) as u64);
        maps.push(digest::digest(&ctx.comm, dim * 4, n, first, &rows)?);
    }
    let mut dats = Vec::new();
    for i in dats_done..ctx.dats.len() {
        if ctx.dats[i].freed {
            dats.push(None);
            continue;
        }
        let d = DatId(i as u32);
        ctx.sync_to_host(d)?;
        let eb = ctx.dats[i].elem_bytes();
        let (rows, offset, total) = dat_rows(ctx, d)?;
        let (n, first) = ((total / eb.max(1) as u64), offset / eb.max(1) as u64);
        dats.push(Some(digest::digest(&ctx.comm, eb, n, first, &rows)?));
    }
    let line = format!(
        "digests (SHA-256) of the values of {} map(s) and {} dat(s) in {:.3} s",
        maps.len(),
        dats.len(),
        t.elapsed().as_secs_f64()
    );
    if let Some(cp) = ctx.checkpoint.as_mut() {
        cp.map_digests.extend(maps);
        cp.dat_digests.extend(dats);
    }
    diag(ctx, &line);
    Ok(())
}

/// Whether a checkpoint is due at this boundary: process 0's clock decides for all (collective
/// under MPI), or any process's `op_checkpoint_now`.
fn due(ctx: &mut Context) -> Result<bool> {
    let Some(cp) = ctx.checkpoint.as_ref() else { return Ok(false) };
    let time = cp.last.elapsed().as_secs_f64() >= cp.interval;
    if !ctx.comm.distributed() {
        return Ok(time || cp.requested);
    }
    let all = ctx.comm.all_gather(&[time as u8, cp.requested as u8])?;
    Ok(all.first().is_some_and(|b| b.first() == Some(&1)) || all.iter().any(|b| b.get(1) == Some(&1)))
}

/// The rows of a live dat this process writes: its declared block in original order (borrowed
/// from the dat when it is stored so), and the offset of the block in the whole and the
/// whole's size (bytes). The caller makes the host bytes current first.
fn dat_rows(ctx: &Context, d: DatId) -> Result<(std::borrow::Cow<'_, [u8]>, u64, u64)> {
    use crate::mpi::dist;
    use std::borrow::Cow;
    let dat = &ctx.dats[d.0 as usize];
    let eb = dat.elem_bytes() as u64;
    let total = dist::global_size(ctx, dat.set) as u64 * eb;
    if ctx.comm.distributed() {
        let rows = dist::dat_block(ctx, d)?;
        return Ok((Cow::Owned(rows), dist::global_offset(ctx, dat.set) as u64 * eb, total));
    }
    Ok((ctx.all_declared_rows(crate::context::Rows::Dat(d), "op2 checkpoint")?, 0, total))
}

/// Writes a checkpoint of the state at this loop boundary: under MPI collectively, here; on one
/// process the state is copied (a snapshot, into buffers reused from one checkpoint to the
/// next) and a background thread writes, seals and renames the file while the run goes on (the
/// previous one is waited for first; `op_exit` waits for the last).
fn write(ctx: &mut Context, call: &str) -> Result<()> {
    collect(ctx, true, call)?;
    let t = Instant::now();
    let Some(cp) = ctx.checkpoint.as_ref() else { return Ok(()) };
    let path = cp.path.clone();
    let tmp = format!("{path}.tmp");
    let mut m = Out(META_MAGIC.to_vec());
    m.u64(ctx.comm.size().max(1) as u64);
    m.u64(cp.count);
    cp.sigs.iter().for_each(|&s| m.u64(s));
    cp.red_off.iter().for_each(|&o| m.u64(o));
    m.bytes(&cp.red);
    let delay = cp.delay_ms;
    m.bytes(declarations(ctx).as_bytes());
    m.u64(ctx.consts.len() as u64);
    for c in ctx.consts.values() {
        m.bytes(c.name.as_bytes());
        m.bytes(c.ty.api_name().as_bytes());
        m.u64(c.dim as u64);
        m.bytes(&c.data);
    }
    m.u64(cp.map_digests.len() as u64);
    for (i, d) in cp.map_digests.iter().enumerate() {
        m.u64(i as u64);
        m.0.extend_from_slice(d);
    }
    let live = |i: &usize| !ctx.dats.get(*i).is_some_and(|d| d.freed);
    let dats: Vec<(usize, &[u8; 32])> = cp
        .dat_digests
        .iter()
        .enumerate()
        .filter(|(i, _)| live(i))
        .filter_map(|(i, d)| Some((i, d.as_ref()?)))
        .collect();
    m.u64(dats.len() as u64);
    for (i, d) in dats {
        m.u64(i as u64);
        m.0.extend_from_slice(d);
    }
    let meta = m.0;
    if !ctx.comm.distributed() {
        return write_behind(ctx, t, path, tmp, meta, delay);
    }
    let f = file::create(&tmp, &ctx.comm)?;
    let root = ctx.comm.rank() == 0;
    let mine: &[u8] = if root { &meta } else { &[] };
    f.write("meta", meta.len() as u64, 0, mine, &ctx.comm)?;
    let mut bytes = meta.len() as u64;
    for i in 0..ctx.dats.len() {
        if ctx.dats[i].freed {
            continue;
        }
        ctx.sync_to_host(DatId(i as u32))?;
        let (rows, offset, total) = dat_rows(ctx, DatId(i as u32))?;
        f.write(&format!("dat{i}"), total, offset, &rows, &ctx.comm)?;
        bytes += total;
    }
    f.close(&ctx.comm)?;
    let data_time = t.elapsed();
    ctx.comm.barrier()?;
    let sealed = if root { file::seal(&tmp, &path, delay) } else { Ok(Default::default()) };
    let (hashing, flushing) = ctx.comm.agree(sealed)?;
    let took = t.elapsed();
    if let Some(cp) = ctx.checkpoint.as_mut() {
        cp.writes += 1;
        cp.last_write = took;
        cp.requested = false;
        cp.last = Instant::now();
        let k = cp.count;
        let line = format!(
            "wrote '{path}' at loop {k}: {:.1} MB in {:.3} s (data {:.3} s, checksum {:.3} s, fsync {:.3} s)",
            bytes as f64 / 1e6,
            took.as_secs_f64(),
            data_time.as_secs_f64(),
            hashing.as_secs_f64(),
            flushing.as_secs_f64()
        );
        diag(ctx, &line);
    }
    Ok(())
}

/// One process: the snapshot (meta and every live dat's rows, copied), then the background write.
fn write_behind(ctx: &mut Context, t: Instant, path: String, tmp: String, meta: Vec<u8>, delay: u64) -> Result<()> {
    let mut buffers = ctx.checkpoint.as_mut().map(|c| std::mem::take(&mut c.buffers)).unwrap_or_default();
    let mut names = Vec::new();
    let mut j = 0;
    for i in 0..ctx.dats.len() {
        if ctx.dats[i].freed {
            continue;
        }
        ctx.sync_to_host(DatId(i as u32))?;
        let (rows, _, _) = dat_rows(ctx, DatId(i as u32))?;
        if buffers.len() <= j {
            buffers.push(Vec::new());
        }
        let b = &mut buffers[j];
        b.clear();
        crate::core::alloc::reserve(b, rows.len(), "op2 checkpoint: snapshot of the dats")?;
        b.extend_from_slice(&rows);
        names.push(format!("dat{i}"));
        j += 1;
    }
    buffers.truncate(j);
    let snapshot = t.elapsed();
    let Some(cp) = ctx.checkpoint.as_mut() else { return Ok(()) };
    let k = cp.count;
    let writer = move || {
        let comm = crate::mpi::Comm::default();
        let mut bytes = meta.len() as u64;
        let r = (|| -> Result<(Duration, Duration, Duration)> {
            let f = file::create(&tmp, &comm)?;
            f.write("meta", meta.len() as u64, 0, &meta, &comm)?;
            for (name, rows) in names.iter().zip(&buffers) {
                f.write(name, rows.len() as u64, 0, rows, &comm)?;
                bytes += rows.len() as u64;
            }
            f.close(&comm)?;
            let data = t.elapsed();
            let (h, fl) = file::seal(&tmp, &path, delay)?;
            Ok((data, h, fl))
        })();
        let took = t.elapsed();
        let outcome = r.map(|(data, h, fl)| {
            format!(
                "wrote '{path}' at loop {k}: {:.1} MB in {:.3} s (snapshot {:.3} s, then in the background: data {:.3} s, checksum {:.3} s, fsync {:.3} s)",
                bytes as f64 / 1e6,
                took.as_secs_f64(),
                snapshot.as_secs_f64(),
                (data - snapshot).as_secs_f64(),
                h.as_secs_f64(),
                fl.as_secs_f64()
            )
        });
        Written { outcome, buffers, took }
    };
    let h = std::thread::Builder::new()
        .name("op2-checkpoint".into())
        .spawn(writer)
        .map_err(|e| op2_err!(Checkpoint, "op2 checkpoint: cannot start the writer thread: {e}"))?;
    cp.pending = Some(h);
    cp.writes += 1;
    cp.requested = false;
    cp.last = Instant::now();
    Ok(())
}

/// Whether this run may take the checkpoint's state at its loop count: the same declarations,
/// and the maps and dats the run started from with the same values (their digests).
fn check_restore(ctx: &Context, saved: &Saved, call: &str, path: &str) -> Result<()> {
    let here = declarations(ctx);
    if here != saved.decls {
        let (a, b) = here
            .lines()
            .zip(saved.decls.lines())
            .find(|(a, b)| a != b)
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .unwrap_or_else(|| {
                (format!("{} declaration(s)", here.lines().count()), format!("{}", saved.decls.lines().count()))
            });
        op2_bail!(
            Checkpoint,
            "{call}: checkpoint '{path}' is of another program: at loop {} its declarations differ: '{a}' here, '{b}' in the checkpoint",
            saved.count
        );
    }
    if let (Some((maps, dats)), Some(cp)) = (&saved.digests, ctx.checkpoint.as_ref()) {
        let other = |what: &str, name: &str, here: Option<&[u8; 32]>, there: &[u8; 32]| {
            op2_err!(
                Checkpoint,
                "{call}: checkpoint '{path}' is of other data: {what} '{name}' {} here than in the run that wrote it (SHA-256 of its values in declared order: {} here, {} in the checkpoint): restart with the same inputs, or delete the checkpoint to start afresh",
                if what == "map" { "has other values" } else { "was declared with other values" },
                here.map_or("none".to_string(), digest::short),
                digest::short(there)
            )
        };
        for (i, there) in maps {
            let here = cp.map_digests.get(*i as usize);
            if here != Some(there) {
                let name = ctx.maps.get(*i as usize).map_or("?", |m| m.name.as_str());
                return Err(other("map", name, here, there));
            }
        }
        for (i, there) in dats {
            let here = cp.dat_digests.get(*i as usize).and_then(|d| d.as_ref());
            if here != Some(there) {
                let name = ctx.dats.get(*i as usize).map_or("?", |d| d.name.as_str());
                return Err(other("dat", name, here, there));
            }
        }
    }
    Ok(())
}

/// At the saved loop count: the declarations and the values the run started from (maps, dats:
/// their digests) must match; constants and dats are loaded. `call`: the loop, for messages.
fn restore(ctx: &mut Context, call: &str) -> Result<()> {
    let Some(saved) = ctx.checkpoint.as_mut().and_then(|c| c.replay.take()) else { return Ok(()) };
    let path = ctx.checkpoint_path().to_string();
    if let Err(e) = check_restore(ctx, &saved, call, &path) {
        // Refused for good: every later loop is refused too, never run on data that is half
        // the checkpoint's (its loops skipped) and half this run's.
        if let Some(cp) = ctx.checkpoint.as_mut() {
            cp.replay = Some(saved);
        }
        return Err(e);
    }
    for (name, ty, dim, data) in &saved.consts {
        ctx.decl_const(*dim as i32, *ty, data, name, "op2 checkpoint restore")?;
    }
    let f = file::open(&path, &ctx.comm)?;
    for i in 0..ctx.dats.len() {
        if ctx.dats[i].freed {
            continue;
        }
        let d = DatId(i as u32);
        let dat = &ctx.dats[i];
        let eb = dat.elem_bytes();
        let set = dat.set;
        let (start, count) = (crate::mpi::dist::global_offset(ctx, set), crate::mpi::dist::declared_size(ctx, set));
        let mut block = crate::core::alloc::zeroed::<u8>(count * eb, "op2 checkpoint restore: dat rows")?;
        f.read(&format!("dat{i}"), (start * eb) as u64, &mut block, &ctx.comm)?;
        ctx.host_data(d, true)?; // host copy current, device copy stale
        if ctx.comm.distributed() {
            crate::mpi::dist::set_from_block(ctx, d, &block)?;
        } else {
            let n = block.len();
            let dat = &mut ctx.dats[i];
            match &ctx.sets[set.0 as usize].order {
                Some(o) => crate::core::renumber::permute_rows(&block, eb, o, &mut dat.data.as_mut_slice()[..n]),
                None => dat.data.as_mut_slice()[..n].copy_from_slice(&block),
            }
        }
    }
    f.close(&ctx.comm)?;
    if let Some(cp) = ctx.checkpoint.as_mut() {
        cp.last = Instant::now();
    }
    diag(ctx, &format!("restored '{path}' at loop {}", saved.count));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Vec<u8> {
        let mut m = meta_v1();
        m[..16].copy_from_slice(META_MAGIC);
        let mut m = Out(m);
        m.u64(1); // map digests
        m.u64(0);
        m.0.extend_from_slice(&[7; 32]);
        m.u64(2); // dat digests
        m.u64(0);
        m.0.extend_from_slice(&[8; 32]);
        m.u64(2);
        m.0.extend_from_slice(&[9; 32]);
        m.0
    }

    fn meta_v1() -> Vec<u8> {
        let mut m = Out(META_MAGIC_V1.to_vec());
        m.u64(2); // processes
        m.u64(3); // loops
        [11u64, 12, 13].iter().for_each(|&s| m.u64(s));
        [0u64, 0, 8, 12].iter().for_each(|&o| m.u64(o));
        m.bytes(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        m.bytes(b"set cells 10\n");
        m.u64(1);
        m.bytes(b"gam");
        m.bytes(b"double");
        m.u64(1);
        m.bytes(&1.4f64.to_ne_bytes());
        m.0
    }

    #[test]
    fn meta_round_trip() {
        let s = parse_meta(&meta()).expect("a well-formed meta parses");
        assert_eq!((s.nprocs, s.count), (2, 3));
        assert_eq!(s.sigs, vec![11, 12, 13]);
        assert_eq!(s.red_off, vec![0, 0, 8, 12]);
        assert_eq!(s.red.len(), 12);
        assert_eq!(s.decls, "set cells 10\n");
        assert_eq!(s.consts.len(), 1);
        assert_eq!((s.consts[0].0.as_str(), s.consts[0].1, s.consts[0].2), ("gam", ElemType::Double, 1));
        let (maps, dats) = s.digests.expect("v2 has digests");
        assert_eq!(maps, vec![(0, [7; 32])]);
        assert_eq!(dats, vec![(0, [8; 32]), (2, [9; 32])]);
        // a checkpoint of the format before digests is read, with nothing to check
        let s = parse_meta(&meta_v1()).expect("a v1 meta parses");
        assert_eq!((s.count, s.decls.as_str()), (3, "set cells 10\n"));
        assert!(s.digests.is_none());
    }

    #[test]
    fn malformed_meta_is_refused_never_a_panic() {
        let m = meta();
        for n in 0..m.len() {
            assert!(parse_meta(&m[..n]).is_none(), "a meta cut to {n} bytes parsed");
        }
        let mut longer = m.clone();
        longer.push(0);
        assert!(parse_meta(&longer).is_none(), "trailing bytes");
        // offsets that go backwards or past the results
        let mut bad = m.clone();
        bad[16 + 16 + 24 + 8..16 + 16 + 24 + 16].copy_from_slice(&9u64.to_le_bytes());
        assert!(parse_meta(&bad).is_none());
        // a loop count that claims more signatures than there are bytes
        let mut huge = m.clone();
        huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_meta(&huge).is_none());
    }

    #[test]
    fn fnv_separates_fields() {
        let h = |a: &str, b: &str| {
            let mut f = Fnv(0xcbf29ce484222325);
            f.str(a);
            f.str(b);
            f.0
        };
        assert_ne!(h("ab", "c"), h("a", "bc"));
        assert_eq!(h("update", "q"), h("update", "q"));
    }
}
