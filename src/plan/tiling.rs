//! Loop chains: which queued loops can be fused, and a sparse-tiling inspector (issue 23).
//!
//! A chain is a list of [`ChainLoop`]s in the order the program issued them, each described only
//! by how its arguments touch data (which array, through which map, read or written). Two
//! analyses run over it:
//!
//! - [`fusable`] / [`fusion_groups`]: loops over one set that can run in one pass, element by
//!   element, because every conflicting access between them is direct.
//! - [`inspect`]: sparse tiling. The first loop (the seed) is cut into contiguous tiles; every
//!   iteration of every later loop goes to the earliest tile that keeps it after everything it
//!   depends on (RAW, WAR and WAW through any map), so running the tiles one after another, each
//!   running its share of every loop in chain order, gives the results of running the loops one
//!   after another, while a tile's data stays in cache between loops. [`verify`] checks a tiling
//!   by simulation.
//!
//! ```
//! use op2::plan::tiling::{inspect, verify, ChainArg, ChainLoop, Schedule};
//!
//! // Four cells in a row and the three edges between them. Loop 0 writes `u` on cells; loop 1
//! // reads `u` of each edge's two cells and increments `r` there.
//! let edge_cells = [0, 1, 1, 2, 2, 3];
//! let write_u = ChainArg { data: 0, data_size: 4, map: None, reads: false, writes: true, inc: false };
//! let read_u = ChainArg { data: 0, data_size: 4, map: Some((&edge_cells, 2, None)), reads: true, writes: false, inc: false };
//! let inc_r = ChainArg { data: 1, data_size: 4, map: Some((&edge_cells, 2, None)), reads: false, writes: true, inc: true };
//! let chain = [ChainLoop { size: 4, args: vec![write_u] }, ChainLoop { size: 3, args: vec![read_u, inc_r] }];
//! let t = inspect(&chain, 2, Schedule::Sequential).unwrap();
//! assert_eq!(t.tiles, 2);
//! // Edge 1 (cells 1 and 2) needs cell 2, written in tile 1.
//! assert_eq!(t.runs[1], vec![vec![(0, 1)], vec![(1, 3)]]);
//! verify(&chain, &t).unwrap();
//! ```
//!
//! Pure code: no backend, FFI or MPI types. Arrays sized by the mesh are allocated through
//! [`crate::core::alloc`]; errors are [`Op2Error`]s.

use std::ops::Range;

use crate::core::alloc;
use crate::error::{ErrorCode, Op2Error, Result};

/// How one argument of a queued loop touches data.
#[derive(Clone, Copy, Debug)]
pub struct ChainArg<'a> {
    /// Which array: args with equal `data` touch the same array (the caller passes the dat id).
    pub data: u32,
    /// Number of elements of that array (the size of the set the dat lives on, halos included).
    pub data_size: usize,
    /// None: direct (iteration i touches element i). Some: through a map: `values` row-major,
    /// `dim` entries per iteration; `idx` Some(k): only column k; None: every column.
    pub map: Option<(&'a [i32], usize, Option<usize>)>,
    pub reads: bool,
    pub writes: bool,
    /// OP_INC (a write whose order between iterations matters only for rounding). Counts as a
    /// write whether or not `writes` is set.
    pub inc: bool,
}

impl ChainArg<'_> {
    /// Whether the argument modifies its data (`writes` or `inc`).
    pub fn modifies(&self) -> bool {
        self.writes || self.inc
    }

    /// Whether the argument touches its data at all.
    fn touches(&self) -> bool {
        self.reads || self.modifies()
    }

    /// Calls `f` with every element iteration `i` touches (maps are checked by `prepare`).
    #[inline]
    fn for_each(&self, i: usize, mut f: impl FnMut(usize)) {
        match self.map {
            None => f(i),
            Some((values, dim, Some(k))) => f(values[i * dim + k] as usize),
            Some((values, dim, None)) => {
                for &x in &values[i * dim..(i + 1) * dim] {
                    f(x as usize)
                }
            }
        }
    }
}

/// One queued loop: its iteration count and its arguments (globals left out).
#[derive(Clone, Debug)]
pub struct ChainLoop<'a> {
    pub size: usize,
    pub args: Vec<ChainArg<'a>>,
}

/// Whether `b`, issued after `a`, can run in the same pass as `a`, element by element (a's kernel
/// then b's on element i, for i in order) with the results of running all of `a` then all of
/// `b`: both have the same size, and every pair of their arguments on the same data where at
/// least one modifies it is direct on both sides. Reads of one array through maps by both are
/// fine.
pub fn fusable(a: &ChainLoop, b: &ChainLoop) -> bool {
    if a.size != b.size {
        return false;
    }
    a.args.iter().filter(|x| x.touches()).all(|x| {
        b.args
            .iter()
            .filter(|y| y.touches() && y.data == x.data && (x.modifies() || y.modifies()))
            .all(|y| x.map.is_none() && y.map.is_none())
    })
}

/// Maximal runs of consecutive loops, from the first, where each loop is [`fusable`] with every
/// earlier member of its run. The ranges cover `0..loops.len()` in order.
pub fn fusion_groups(loops: &[ChainLoop]) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    for j in 1..loops.len() {
        if !(start..j).all(|k| fusable(&loops[k], &loops[j])) {
            groups.push(start..j);
            start = j;
        }
    }
    if !loops.is_empty() {
        groups.push(start..loops.len());
    }
    groups
}

/// In which order the tiles of a [`Tiling`] run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// One tile after another, in index order; every element sees its accesses in their eager
    /// order (bit-for-bit results on one thread).
    Sequential,
    /// By levels: the tiles of one level touch no common element where either writes and may
    /// run at the same time. Iterations of one loop may change order (as under colouring);
    /// accesses from different loops keep their eager order.
    Parallel,
}

/// A sparse tiling of a loop chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tiling {
    pub tiles: usize,
    /// Per loop, per tile: the iterations of that loop run in that tile, as sorted, disjoint
    /// half-open runs [start, end) (iterations in increasing order).
    pub runs: Vec<Vec<Vec<(u32, u32)>>>, // runs[loop][tile]
    /// Per tile: its level; tiles of one level touch no common element where either writes
    /// (across all loops), so they may run concurrently; levels run in increasing order,
    /// and within a level tiles run in any order. Sequential tilings: level == tile index.
    pub level: Vec<u32>,
    /// Number of levels (`max(level) + 1`, 0 without tiles).
    pub nlevels: u32,
    /// The schedule the tiling was built for ([`verify`] checks its rule).
    pub schedule: Schedule,
    /// Per loop: its deferred iterations ([`inspect_pinned`]), sorted, disjoint runs [start,
    /// end) that run after every tile, loop by loop in chain order, each loop's in increasing
    /// order. Empty (no loops) or all empty without pins.
    pub deferred: Vec<Vec<(u32, u32)>>,
    /// Per loop whose tiles hold many short runs (fewer than [`LIST_RUN_MAX`] iterations a run
    /// on average, as an edge loop's in tiles seeded on cells): its tiled iterations as one
    /// list, tile after tile, each tile's in increasing order, and where each tile's start
    /// (`offsets[t]..offsets[t + 1]`); `None` for the other loops. A backend then runs a tile's
    /// iterations in one call (the host's list wrappers) instead of one call per run.
    pub lists: Vec<Option<TileList>>,
}

/// One loop's tiled iterations as a list ([`Tiling::lists`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileList {
    pub elems: Vec<i32>,
    pub offsets: Vec<usize>,
}

/// [`Tiling::lists`]: a loop whose tiles average fewer iterations a run than this gets a list.
/// Airfoil's 720K mesh: `res_calc`'s tiles average 3.4 edges a run (419 130 runs for 1.44M
/// edges), and one call per run left the vectorised wrapper its scalar tail only.
pub const LIST_RUN_MAX: usize = 16;

/// What a tile may not run ([`inspect_pinned`]): pinned iterations and iterations that touch
/// pinned elements are deferred, to run after every tile, loop by loop.
#[derive(Clone, Debug, Default)]
pub struct Pins {
    /// Per loop, one flag per iteration (or empty: none): `true` defers the iteration.
    pub iterations: Vec<Vec<bool>>,
    /// Per data id, one entry per element: [`PIN_TOUCH`] defers every iteration that touches the
    /// element, [`PIN_MODIFY`] every iteration that modifies it, 0 none. Data not listed: none.
    pub rows: Vec<(u32, Vec<u8>)>,
}

/// [`Pins::rows`]: an iteration that modifies the element is deferred.
pub const PIN_MODIFY: u8 = 1;
/// [`Pins::rows`]: an iteration that touches the element is deferred.
pub const PIN_TOUCH: u8 = 2;

/// The tile index of a deferred iteration inside the inspector (its mark is `DEFERRED + 1`,
/// larger than every tile's).
const DEFERRED: u32 = u32::MAX - 1;

impl Tiling {
    /// Whether loop `l`'s iterations are listed ([`Tiling::lists`]).
    pub fn is_listed(&self, l: usize) -> bool {
        self.lists.get(l).is_some_and(Option::is_some)
    }

    /// Loop `l`'s iterations in tile `t` as a list, when the loop is listed.
    pub fn list(&self, l: usize, t: usize) -> Option<&[i32]> {
        self.lists.get(l)?.as_ref().map(|x| x.tile(t))
    }

    /// Number of iterations of loop `l` run in tile `t`.
    pub fn tile_len(&self, l: usize, t: usize) -> usize {
        self.runs[l][t].iter().map(|&(s, e)| (e - s) as usize).sum()
    }

    /// Number of deferred iterations of loop `l` (0 without pins).
    pub fn deferred_len(&self, l: usize) -> usize {
        self.deferred.get(l).map_or(0, |rs| rs.iter().map(|&(s, e)| (e - s) as usize).sum())
    }

    /// The tiles of each level, ascending: `levels()[v]` may run concurrently, after level
    /// `v - 1`.
    pub fn levels(&self) -> Result<Vec<Vec<u32>>> {
        let n = self.nlevels as usize;
        let mut counts = alloc::zeroed::<usize>(n, "loop chain tiling: tiles per level")?;
        for &v in &self.level {
            counts[v as usize] += 1;
        }
        let mut out = alloc::with_capacity(n, "loop chain tiling: levels")?;
        for &c in &counts {
            out.push(alloc::with_capacity(c, "loop chain tiling: tiles of a level")?);
        }
        for (t, &v) in self.level.iter().enumerate() {
            out[v as usize].push(t as u32);
        }
        Ok(out)
    }
}

/// The chain's arrays: dense slot per data id, its size, and each arg's slot.
struct Prepared {
    sizes: Vec<usize>,
    /// `slot[l][a]`: dense index of loop `l`'s arg `a`'s data.
    slot: Vec<Vec<usize>>,
}

fn bad(code: ErrorCode, msg: String) -> Op2Error {
    Op2Error::new(code, format!("loop chain inspector: {msg}"))
}

/// Checks every loop's arguments (sizes, map lengths, columns, map values) and numbers the data
/// ids densely.
fn prepare(loops: &[ChainLoop]) -> Result<Prepared> {
    let mut ids: Vec<u32> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut slot = Vec::with_capacity(loops.len());
    for (l, lp) in loops.iter().enumerate() {
        if lp.size > u32::MAX as usize {
            return Err(bad(ErrorCode::BadSize, format!("loop {l}: size {} does not fit 32 bits", lp.size)));
        }
        let mut s = Vec::with_capacity(lp.args.len());
        for (a, arg) in lp.args.iter().enumerate() {
            let d = match ids.iter().position(|&id| id == arg.data) {
                Some(d) => {
                    if sizes[d] != arg.data_size {
                        return Err(bad(
                            ErrorCode::BadSize,
                            format!(
                                "loop {l} arg {a}: data {} has size {}, an earlier arg gave {}",
                                arg.data, arg.data_size, sizes[d]
                            ),
                        ));
                    }
                    d
                }
                None => {
                    ids.push(arg.data);
                    sizes.push(arg.data_size);
                    ids.len() - 1
                }
            };
            s.push(d);
            check_arg(l, a, lp.size, arg)?;
        }
        slot.push(s);
    }
    Ok(Prepared { sizes, slot })
}

fn check_arg(l: usize, a: usize, size: usize, arg: &ChainArg) -> Result<()> {
    let n = arg.data_size;
    let Some((values, dim, idx)) = arg.map else {
        if size > n {
            return Err(bad(
                ErrorCode::BadSize,
                format!("loop {l} arg {a}: direct access to data {} of size {n} by {size} iterations", arg.data),
            ));
        }
        return Ok(());
    };
    if dim == 0 {
        return Err(bad(ErrorCode::BadSize, format!("loop {l} arg {a}: map dim is 0")));
    }
    let need = size.checked_mul(dim).filter(|&x| x <= values.len());
    let Some(need) = need else {
        return Err(bad(
            ErrorCode::BadSize,
            format!("loop {l} arg {a}: map has {} values, expected at least {size} x {dim} (size x dim)", values.len()),
        ));
    };
    if let Some(k) = idx {
        if k >= dim {
            return Err(bad(ErrorCode::ArgIdx, format!("loop {l} arg {a}: idx {k} is outside [0, {dim}) of the map")));
        }
    }
    let first_bad = match idx {
        Some(k) => {
            values[..need].iter().skip(k).step_by(dim).position(|&v| v < 0 || v as usize >= n).map(|p| p * dim + k)
        }
        None => values[..need].iter().position(|&v| v < 0 || v as usize >= n),
    };
    if let Some(p) = first_bad {
        return Err(bad(
            ErrorCode::MapOutOfRange,
            format!(
                "loop {l} arg {a}: map entry (iteration {}, column {}) is {}, outside [0, {n}) of data {}",
                p / dim,
                p % dim,
                values[p],
                arg.data
            ),
        ));
    }
    Ok(())
}

/// Per-element state of the inspector, one array per data, tiles stored as `tile + 1` (0:
/// never): `[W]`, the largest tile that modified the element; `[A]`, the largest tile that
/// touched it (read or modified), always >= `[W]`. (The largest modifier is the last one and
/// every access before it is in its tile or earlier, so these stand for "tile of the last write"
/// and "tiles of the reads since".) Side by side: one cache line per element. (A newtype: the
/// header generator cannot read an array as a generic argument.)
#[derive(Clone, Copy, Default)]
struct Mark([u32; 2]);
type Track = Vec<Mark>;
const W: usize = 0;
const A: usize = 1;

fn tracks(p: &Prepared, what: &str) -> Result<Vec<Track>> {
    let mut v = Vec::with_capacity(p.sizes.len());
    for &n in &p.sizes {
        v.push(alloc::filled(n, Mark::default(), what)?);
    }
    Ok(v)
}

/// Execution position of seed block `s` of `n`: Sequential keeps it; Parallel puts the even
/// blocks first, then the odd ones.
fn position(schedule: Schedule, s: usize, n: usize) -> u32 {
    match schedule {
        Schedule::Sequential => s as u32,
        Schedule::Parallel if s % 2 == 0 => (s / 2) as u32,
        Schedule::Parallel => (n.div_ceil(2) + s / 2) as u32,
    }
}

/// Records that tile `t` ran iteration `i` of loop `lp`.
#[inline]
fn record(lp: &ChainLoop, slots: &[usize], st: &mut [Track], i: usize, t: u32) {
    let t1 = t + 1;
    for (arg, &d) in lp.args.iter().zip(slots) {
        if !arg.touches() {
            continue;
        }
        let tr = &mut st[d];
        let m = arg.modifies();
        arg.for_each(i, |x| {
            let e = &mut tr[x].0;
            if m {
                e[W] = e[W].max(t1);
            }
            e[A] = e[A].max(t1);
        });
    }
}

/// The tile for iteration `i` of a non-seed loop: the largest tile it depends on (the last
/// modifier of what it reads; every earlier toucher of what it modifies); without dependencies,
/// the largest tile that touched any of its elements (locality); touching nothing touched
/// before, its proportional share of the seed.
#[inline]
fn place(lp: &ChainLoop, slots: &[usize], st: &[Track], i: usize, fallback: impl Fn() -> u32) -> u32 {
    let mut floor = 0u32;
    let mut hint = 0u32;
    for (arg, &d) in lp.args.iter().zip(slots) {
        if !arg.touches() {
            continue;
        }
        let tr = &st[d];
        let dep = if arg.modifies() { A } else { W };
        arg.for_each(i, |x| {
            let e = tr[x].0;
            floor = floor.max(e[dep]);
            if e[A] != DEFERRED + 1 {
                hint = hint.max(e[A]);
            }
        });
    }
    if floor > 0 {
        floor - 1
    } else if hint > 0 {
        hint - 1
    } else {
        fallback()
    }
}

/// Builds a sparse tiling of `loops` seeded by loop 0, whose iterations are cut into contiguous
/// blocks of `tile_size` (at least one tile, even for an empty seed).
///
/// Every iteration of a later loop goes to the earliest tile (in execution order) at or after
/// the tiles of everything it must follow: for each element it reads, the last tile that
/// modified it; for each element it modifies, every tile that touched it before. Sequential: the
/// earlier iterations of the same loop count too, so each element sees its accesses in eager
/// order. Parallel: they do not (iterations of one loop are unordered, as under colouring);
/// tiles that both touch an element one of them modifies get different levels. An iteration
/// with no dependency goes to the latest tile that touched any of its elements, or, touching
/// nothing touched before, to the seed block at its proportional position.
///
/// Parallel: the seed blocks in spatial order `s = 0..n` run even blocks first, then odd ones
/// (tile index = execution position); `level(b) = 1 + max level of the earlier tiles that
/// conflict with b`, else 0. On a mesh with locality and tiles wider than the chain's reach
/// that is 2 levels; more is still correct (see `nlevels`).
///
/// Cost: two passes over each loop's maps (three on Parallel) and a pair of `u32` per element of
/// each array.
pub fn inspect(loops: &[ChainLoop], tile_size: usize, schedule: Schedule) -> Result<Tiling> {
    inspect_pinned(loops, tile_size, schedule, &Pins::default())
}

/// Per dense data slot: its pinned elements, if any.
fn pinned_rows<'p>(loops: &[ChainLoop], prep: &Prepared, pins: &'p Pins) -> Result<Vec<Option<&'p [u8]>>> {
    let mut rows: Vec<Option<&[u8]>> = vec![None; prep.sizes.len()];
    for (data, mask) in &pins.rows {
        let slot = loops
            .iter()
            .zip(&prep.slot)
            .find_map(|(lp, sl)| lp.args.iter().zip(sl).find(|(a, _)| a.data == *data).map(|(_, &d)| d));
        let Some(d) = slot else { continue };
        if mask.len() != prep.sizes[d] {
            return Err(bad(
                ErrorCode::BadSize,
                format!("pins of data {data}: {} flags for {} elements", mask.len(), prep.sizes[d]),
            ));
        }
        rows[d] = Some(mask.as_slice());
    }
    for (l, (lp, it)) in loops.iter().zip(&pins.iterations).enumerate() {
        if !it.is_empty() && it.len() != lp.size {
            return Err(bad(
                ErrorCode::BadSize,
                format!("pins of loop {l}: {} flags for {} iterations", it.len(), lp.size),
            ));
        }
    }
    Ok(rows)
}

/// Whether iteration `i` of a loop is pinned: by its flag, or by an element it touches.
#[inline]
fn pinned(lp: &ChainLoop, slots: &[usize], rows: &[Option<&[u8]>], flags: &[bool], i: usize) -> bool {
    if flags.get(i) == Some(&true) {
        return true;
    }
    let mut p = false;
    for (arg, &d) in lp.args.iter().zip(slots) {
        let Some(mask) = rows[d] else { continue };
        if !arg.touches() {
            continue;
        }
        let need = if arg.modifies() { PIN_MODIFY | PIN_TOUCH } else { PIN_TOUCH };
        arg.for_each(i, |x| p |= mask[x] & need != 0);
        if p {
            return true;
        }
    }
    false
}

/// [`inspect`], with some iterations deferred: those `pins` names, and every iteration that
/// must follow a deferred one (it reads what a deferred iteration modified, or modifies what
/// one touched, in an earlier loop, or, on `Sequential`, earlier in its own loop). Deferred
/// iterations are in no tile: they run after every tile, loop by loop in chain order
/// ([`Tiling::deferred`]), and nothing in a tile depends on them. (Under MPI: the iterations
/// that touch halo rows, or modify rows that a neighbour imports, with everything that depends
/// on them, run after the tiles with the loops' halo exchanges; see `exec::chain`.)
pub fn inspect_pinned(loops: &[ChainLoop], tile_size: usize, schedule: Schedule, pins: &Pins) -> Result<Tiling> {
    if tile_size == 0 {
        return Err(bad(ErrorCode::BadSize, "tile size is 0".into()));
    }
    let prep = prepare(loops)?;
    let rows = pinned_rows(loops, &prep, pins)?;
    let has_pins = rows.iter().any(Option::is_some) || pins.iterations.iter().any(|v| v.contains(&true));
    let seed = loops.first().map_or(0, |l| l.size);
    let nblocks = seed.div_ceil(tile_size).max(1);
    if nblocks > u32::MAX as usize - 3 {
        return Err(bad(ErrorCode::BadSize, format!("{nblocks} tiles do not fit 32 bits")));
    }
    let mut st = tracks(&prep, "loop chain inspector: per-element tiles")?;
    let maxlen = loops.iter().map(|l| l.size).max().unwrap_or(0);
    let mut tile_of = alloc::zeroed::<u32>(maxlen, "loop chain inspector: tile of each iteration")?;
    let mut runs = Vec::with_capacity(loops.len());
    let mut deferred = Vec::with_capacity(loops.len());
    let no_flags: Vec<bool> = Vec::new();

    for (l, lp) in loops.iter().enumerate() {
        let slots = &prep.slot[l];
        let flags = pins.iterations.get(l).unwrap_or(&no_flags);
        let pin = |i: usize| has_pins && pinned(lp, slots, &rows, flags, i);
        let tile_of = &mut tile_of[..lp.size];
        if l == 0 {
            for (i, t) in tile_of.iter_mut().enumerate() {
                *t = position(schedule, i / tile_size, nblocks);
                // Sequential: an iteration after a deferred one it conflicts with is deferred.
                if has_pins
                    && (pin(i) || (schedule == Schedule::Sequential && place(lp, slots, &st, i, || 0) == DEFERRED))
                {
                    *t = DEFERRED;
                }
                record(lp, slots, &mut st, i, *t);
            }
        } else {
            let size = lp.size;
            let fallback =
                |i: usize| position(schedule, (i as u128 * nblocks as u128 / size as u128) as usize, nblocks);
            match schedule {
                Schedule::Sequential => {
                    for (i, slot) in tile_of.iter_mut().enumerate() {
                        let t = if pin(i) { DEFERRED } else { place(lp, slots, &st, i, || fallback(i)) };
                        *slot = t;
                        record(lp, slots, &mut st, i, t);
                    }
                }
                Schedule::Parallel => {
                    for (i, t) in tile_of.iter_mut().enumerate() {
                        *t = if pin(i) { DEFERRED } else { place(lp, slots, &st, i, || fallback(i)) };
                    }
                    for (i, &t) in tile_of.iter().enumerate() {
                        record(lp, slots, &mut st, i, t);
                    }
                }
            }
        }
        let (r, d) = runs_of(tile_of, nblocks)?;
        runs.push(r);
        deferred.push(d);
    }
    drop(tile_of);

    let level = match schedule {
        Schedule::Sequential => {
            let mut v = alloc::with_capacity(nblocks, "loop chain inspector: tile levels")?;
            v.extend(0..nblocks as u32);
            v
        }
        Schedule::Parallel => levels(loops, &prep, &runs, nblocks, &mut st)?,
    };
    let nlevels = level.iter().copied().max().map_or(0, |m| m + 1);
    let mut lists = alloc::with_capacity(runs.len(), "loop chain inspector: iteration lists")?;
    for r in &runs {
        lists.push(list_of(r)?);
    }
    Ok(Tiling { tiles: nblocks, runs, level, nlevels, schedule, deferred, lists })
}

/// One loop's [`TileList`] if its runs (per tile) are short on average, else `None`.
fn list_of(runs: &[Vec<(u32, u32)>]) -> Result<Option<TileList>> {
    let nruns: usize = runs.iter().map(Vec::len).sum();
    let n: usize = runs.iter().flatten().map(|&(s, e)| (e - s) as usize).sum();
    if nruns == 0 || n >= nruns * LIST_RUN_MAX {
        return Ok(None);
    }
    let mut elems = alloc::with_capacity(n, "loop chain inspector: iteration list")?;
    let mut offsets = alloc::with_capacity(runs.len() + 1, "loop chain inspector: iteration list offsets")?;
    offsets.push(0);
    for tile in runs {
        for &(s, e) in tile {
            elems.extend(s as i32..e as i32);
        }
        offsets.push(elems.len());
    }
    Ok(Some(TileList { elems, offsets }))
}

impl TileList {
    /// Tile `t`'s iterations.
    pub fn tile(&self, t: usize) -> &[i32] {
        match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&a), Some(&b)) => &self.elems[a..b],
            _ => &[],
        }
    }
}

/// Cuts one loop's tile assignment into per-tile runs of consecutive iterations, and the runs of
/// its deferred iterations.
#[allow(clippy::type_complexity)]
fn runs_of(tile_of: &[u32], tiles: usize) -> Result<(Vec<Vec<(u32, u32)>>, Vec<(u32, u32)>)> {
    let mut count = alloc::zeroed::<usize>(tiles, "loop chain inspector: runs per tile")?;
    let mut ndeferred = 0usize;
    for (i, &t) in tile_of.iter().enumerate() {
        if i == 0 || tile_of[i - 1] != t {
            match count.get_mut(t as usize) {
                Some(c) => *c += 1,
                None => ndeferred += 1,
            }
        }
    }
    let mut out = alloc::with_capacity(tiles, "loop chain inspector: tiles")?;
    for &c in &count {
        out.push(alloc::with_capacity(c, "loop chain inspector: runs of a tile")?);
    }
    let mut deferred = alloc::with_capacity(ndeferred, "loop chain inspector: deferred runs")?;
    let mut start = 0;
    for i in 1..=tile_of.len() {
        if i == tile_of.len() || tile_of[i] != tile_of[start] {
            match out.get_mut(tile_of[start] as usize) {
                Some(o) => o.push((start as u32, i as u32)),
                None => deferred.push((start as u32, i as u32)),
            }
            start = i;
        }
    }
    Ok((out, deferred))
}

/// Calls `f(arg, slot, element)` for every access of tile `t` (every loop, in order).
fn for_each_access(
    loops: &[ChainLoop],
    prep: &Prepared,
    runs: &[Vec<Vec<(u32, u32)>>],
    t: usize,
    mut f: impl FnMut(&ChainArg, usize, usize),
) {
    for (l, lp) in loops.iter().enumerate() {
        for &(s, e) in &runs[l][t] {
            for i in s as usize..e as usize {
                for (arg, &d) in lp.args.iter().zip(&prep.slot[l]) {
                    if arg.touches() {
                        arg.for_each(i, |x| f(arg, d, x));
                    }
                }
            }
        }
    }
}

/// Parallel levels: tile by tile in execution order, `1 + max level of the earlier tiles it
/// conflicts with`. Reuses the tracks (`[A]`: max level + 1 of the earlier toucher tiles, `[W]`: of
/// the earlier modifiers).
fn levels(
    loops: &[ChainLoop],
    prep: &Prepared,
    runs: &[Vec<Vec<(u32, u32)>>],
    tiles: usize,
    st: &mut [Track],
) -> Result<Vec<u32>> {
    for tr in st.iter_mut() {
        tr.fill(Mark::default());
    }
    let mut level = alloc::zeroed::<u32>(tiles, "loop chain inspector: tile levels")?;
    for (t, lev) in level.iter_mut().enumerate() {
        let mut v = 0u32;
        for_each_access(loops, prep, runs, t, |arg, d, x| {
            let tr = &st[d];
            v = v.max(tr[x].0[if arg.modifies() { A } else { W }]);
        });
        *lev = v;
        let v1 = v + 1;
        for_each_access(loops, prep, runs, t, |arg, d, x| {
            let tr = &mut st[d];
            let e = &mut tr[x].0;
            if arg.modifies() {
                e[W] = e[W].max(v1);
            }
            e[A] = e[A].max(v1);
        });
    }
    Ok(level)
}

/// Checks that running `t` gives the results of running `loops` one after another, by
/// simulation in O(total accesses):
///
/// - the runs are sorted, disjoint, inside each loop, and cover every iteration exactly once;
/// - tiles of one level touch no common element where either modifies it;
/// - with tiles run by increasing level (ties by tile index) and, inside a tile, loop by loop,
///   every pair of accesses to one element where either modifies it keeps its eager order:
///   every pair on Sequential; on Parallel, every pair from different loops (iterations of one
///   loop may run in any order, never concurrently).
///
/// The message names the loop, iteration, data and element of the first violation found.
pub fn verify(loops: &[ChainLoop], t: &Tiling) -> std::result::Result<(), String> {
    let prep = prepare(loops).map_err(|e| e.message)?;
    let oom = |e: Op2Error| e.message;
    if t.runs.len() != loops.len() {
        return Err(format!("tiling has runs for {} loops, the chain has {}", t.runs.len(), loops.len()));
    }
    if t.level.len() != t.tiles {
        return Err(format!("tiling has {} levels for {} tiles", t.level.len(), t.tiles));
    }
    if t.tiles > u32::MAX as usize - 3 {
        return Err(format!("{} tiles", t.tiles));
    }
    if !t.deferred.is_empty() && t.deferred.len() != loops.len() {
        return Err(format!("tiling has deferred runs for {} loops, the chain has {}", t.deferred.len(), loops.len()));
    }
    // Execution rank of each tile: by level, then index.
    let mut order = alloc::with_capacity::<u32>(t.tiles, "tiling check: tile order").map_err(oom)?;
    order.extend(0..t.tiles as u32);
    order.sort_by_key(|&b| (t.level[b as usize], b));
    let mut rank = alloc::zeroed::<u32>(t.tiles, "tiling check: tile ranks").map_err(oom)?;
    for (r, &b) in order.iter().enumerate() {
        rank[b as usize] = r as u32;
    }

    // Tile of every iteration, each exactly once.
    const NONE: u32 = u32::MAX;
    let mut tile_of = Vec::with_capacity(loops.len());
    for (l, lp) in loops.iter().enumerate() {
        if t.runs[l].len() != t.tiles {
            return Err(format!("loop {l}: runs for {} tiles, the tiling has {}", t.runs[l].len(), t.tiles));
        }
        let mut tl = alloc::filled(lp.size, NONE, "tiling check: tile of each iteration").map_err(oom)?;
        for (b, rs) in t.runs[l].iter().enumerate() {
            let mut prev = 0u32;
            for &(s, e) in rs {
                if s >= e || (e as usize) > lp.size || s < prev {
                    return Err(format!(
                        "loop {l} tile {b}: run [{s}, {e}) is empty, unsorted or outside [0, {})",
                        lp.size
                    ));
                }
                prev = e;
                for x in &mut tl[s as usize..e as usize] {
                    if *x != NONE {
                        return Err(format!("loop {l}: an iteration in [{s}, {e}) is in tiles {} and {b}", *x));
                    }
                    *x = b as u32;
                }
            }
        }
        let mut prev = 0u32;
        for &(s, e) in t.deferred.get(l).map_or(&[][..], Vec::as_slice) {
            if s >= e || (e as usize) > lp.size || s < prev {
                return Err(format!(
                    "loop {l}: deferred run [{s}, {e}) is empty, unsorted or outside [0, {})",
                    lp.size
                ));
            }
            prev = e;
            for x in &mut tl[s as usize..e as usize] {
                if *x != NONE {
                    return Err(format!("loop {l}: an iteration in [{s}, {e}) is in tile {} and deferred", *x));
                }
                *x = DEFERRED;
            }
        }
        if let Some(i) = tl.iter().position(|&x| x == NONE) {
            return Err(format!("loop {l}: iteration {i} is in no tile"));
        }
        tile_of.push(tl);
    }

    check_levels(loops, &prep, t, &order)?;

    // Eager order against tiled order. Keys (0: none): Sequential, the position of the
    // iteration in the tiled execution; Parallel, (rank of its tile, loop). Deferred iterations
    // run after every tile, loop by loop: rank `tiles + loop`.
    let mut key: Vec<Vec<u64>> = Vec::with_capacity(loops.len());
    for (l, lp) in loops.iter().enumerate() {
        key.push(alloc::zeroed(lp.size, "tiling check: iteration keys").map_err(oom)?);
        if t.schedule == Schedule::Parallel {
            for (i, k) in key[l].iter_mut().enumerate() {
                let r = match tile_of[l][i] {
                    DEFERRED => (t.tiles + l) as u64,
                    b => rank[b as usize] as u64,
                };
                *k = (r << 32 | l as u64) + 1;
            }
        }
    }
    if t.schedule == Schedule::Sequential {
        let mut pos = 0u64;
        for &b in &order {
            for (l, k) in key.iter_mut().enumerate() {
                for &(s, e) in &t.runs[l][b as usize] {
                    for x in &mut k[s as usize..e as usize] {
                        pos += 1;
                        *x = pos;
                    }
                }
            }
        }
        for (l, k) in key.iter_mut().enumerate() {
            for &(s, e) in t.deferred.get(l).map_or(&[][..], Vec::as_slice) {
                for x in &mut k[s as usize..e as usize] {
                    pos += 1;
                    *x = pos;
                }
            }
        }
    }
    drop(tile_of);

    // Per element: `w`/`a`, the largest key of a modifying / any access from the loops before
    // `cur` (Parallel) or before this iteration (Sequential); `cw`/`ca`, the same for loop `cur`.
    struct Seen {
        w: Vec<u64>,
        a: Vec<u64>,
        cw: Vec<u64>,
        ca: Vec<u64>,
        cur: Vec<u32>,
    }
    let par = t.schedule == Schedule::Parallel;
    let mut seen = Vec::with_capacity(prep.sizes.len());
    for &n in &prep.sizes {
        let what = "tiling check: per-element keys";
        let (cw, ca, cur) = if par {
            (
                alloc::zeroed(n, what).map_err(oom)?,
                alloc::zeroed(n, what).map_err(oom)?,
                alloc::filled(n, NONE, what).map_err(oom)?,
            )
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        seen.push(Seen {
            w: alloc::zeroed(n, what).map_err(oom)?,
            a: alloc::zeroed(n, what).map_err(oom)?,
            cw,
            ca,
            cur,
        });
    }
    for (l, lp) in loops.iter().enumerate() {
        let slots = &prep.slot[l];
        for (i, &k) in key[l].iter().enumerate() {
            let mut err = None;
            for (a, (arg, &d)) in lp.args.iter().zip(slots).enumerate() {
                if !arg.touches() {
                    continue;
                }
                let s = &mut seen[d];
                let m = arg.modifies();
                arg.for_each(i, |x| {
                    if par && s.cur[x] != l as u32 {
                        s.w[x] = s.w[x].max(s.cw[x]);
                        s.a[x] = s.a[x].max(s.ca[x]);
                        s.cw[x] = 0;
                        s.ca[x] = 0;
                        s.cur[x] = l as u32;
                    }
                    let before = if m { s.a[x] } else { s.w[x] };
                    if before >= k && err.is_none() {
                        err = Some((a, x, arg.data));
                    }
                });
            }
            if let Some((a, x, data)) = err {
                return Err(format!(
                    "loop {l} iteration {i} (tile {}) arg {a}: element {x} of data {data} runs before an \
                     earlier access it must follow",
                    t.runs[l]
                        .iter()
                        .position(|rs| rs.iter().any(|&(s, e)| (s as usize..e as usize).contains(&i)))
                        .unwrap_or(0)
                ));
            }
            for (arg, &d) in lp.args.iter().zip(slots) {
                if !arg.touches() {
                    continue;
                }
                let s = &mut seen[d];
                let m = arg.modifies();
                arg.for_each(i, |x| {
                    let (w, a) = if par { (&mut s.cw[x], &mut s.ca[x]) } else { (&mut s.w[x], &mut s.a[x]) };
                    if m {
                        *w = (*w).max(k);
                    }
                    *a = (*a).max(k);
                });
            }
        }
    }
    Ok(())
}

/// [`verify`] for a tiling made with `pins` ([`inspect_pinned`]): the deferred iterations run
/// after every tile, loop by loop, and besides, no iteration in a tile is pinned or touches an
/// element pinned against its access.
pub fn verify_pinned(loops: &[ChainLoop], t: &Tiling, pins: &Pins) -> std::result::Result<(), String> {
    verify(loops, t)?;
    let prep = prepare(loops).map_err(|e| e.message)?;
    let rows = pinned_rows(loops, &prep, pins).map_err(|e| e.message)?;
    let none: Vec<bool> = Vec::new();
    for (l, lp) in loops.iter().enumerate() {
        let flags = pins.iterations.get(l).unwrap_or(&none);
        for (b, rs) in t.runs[l].iter().enumerate() {
            for &(s, e) in rs {
                for i in s as usize..e as usize {
                    if pinned(lp, &prep.slot[l], &rows, flags, i) {
                        return Err(format!("loop {l} iteration {i} is pinned, and runs in tile {b}"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Tiles of one level must not both touch an element where either modifies it.
fn check_levels(loops: &[ChainLoop], prep: &Prepared, t: &Tiling, order: &[u32]) -> std::result::Result<(), String> {
    const MULTI: u32 = u32::MAX;
    // Per element, for the level being scanned (`stamp` = level + 1): the tile + 1 that
    // modified it, and the tile + 1 that touched it (MULTI: several).
    struct Lv {
        stamp: Vec<u32>,
        w: Vec<u32>,
        a: Vec<u32>,
    }
    let what = "tiling check: per-element tiles";
    let mut lv = Vec::with_capacity(prep.sizes.len());
    for &n in &prep.sizes {
        let z = || alloc::zeroed::<u32>(n, what).map_err(|e| e.message);
        lv.push(Lv { stamp: z()?, w: z()?, a: z()? });
    }
    let mut err = None;
    for &b in order {
        let stamp = t.level[b as usize] + 1;
        let b1 = b + 1;
        for_each_access(loops, prep, &t.runs, b as usize, |arg, d, x| {
            let s = &mut lv[d];
            if s.stamp[x] != stamp {
                s.stamp[x] = stamp;
                s.w[x] = 0;
                s.a[x] = 0;
            }
            let other = if arg.modifies() { s.a[x] } else { s.w[x] };
            if other != 0 && other != b1 && err.is_none() {
                err = Some((other, arg.data, x));
            }
            if arg.modifies() {
                s.w[x] = b1;
            }
            s.a[x] = if s.a[x] == 0 || s.a[x] == b1 { b1 } else { MULTI };
        });
        if let Some((other, data, x)) = err {
            let other = if other == MULTI { "another tile".to_string() } else { format!("tile {}", other - 1) };
            return Err(format!(
                "tile {b} and {other} of level {} both touch element {x} of data {data} and one modifies it",
                stamp - 1
            ));
        }
    }
    Ok(())
}
