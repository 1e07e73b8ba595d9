//! `op_partition` without gathering: every step runs on the processes' declared blocks and moves
//! only what a process owns, needs or is asked for, so no process ever holds a whole set (or a
//! whole map, or a whole graph). The results are the same as the gathered functions of
//! `partition` and `layout` compute on the whole mesh (the tests below check it on simulated
//! processes), so everything after `op_partition` is unchanged:
//!
//! - Each element has a *home*: the process whose declared block holds it (`home`). Homes know
//!   the element's map rows, dat rows and, once computed, its part; anyone else asks the home.
//! - `lookup` asks homes for values of elements (parts, lists of other owners); `fetch_rows`
//!   moves rows from homes to whoever needs them (migration).
//! - `derive` lets the other sets follow the partitioned one through the maps (OP2's rules, as
//!   `partition::derive`); `layouts` builds this process's core / owned / exec / non-exec
//!   numbering of every set with its import and export lists (as `layout::halos` +
//!   `layout::set_layout`); `rcb` bisects by coordinates with parallel medians (as
//!   `partition::rcb_parts`); `random` jumps its generator to the block (as
//!   `partition::random_parts`); `graph` builds this process's rows of the graph a k-way
//!   partitioner takes (as `partition::target_graph`).
//!
//! Memory per process: its blocks, its share of the new layout, and messages of the size of
//! what it exchanges with its neighbours (O(N/P) plus halos for a mesh partitioned well).

use super::layout::{Gids, SetLayout};
use super::partition::{next_derivation, row_modes};
use crate::core::alloc;
use crate::error::Result;
use crate::op2_bail;
use std::collections::{BTreeSet, HashMap};

/// The collective operations the distributed partitioner needs (MPI's `Comm`; threads standing
/// for processes in the tests).
pub trait Coll {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// `send[q]` to process q; returns what each process sent here, in rank order.
    fn all_to_all(&self, send: &[Vec<u8>]) -> Result<Vec<Vec<u8>>>;
    /// Every process's bytes, in rank order.
    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// All-to-all of bytes into one flat buffer (no per-process copies): `send[q]` to q.
    /// What a process sends itself comes back in `own`, moved (as MPI's implementation does).
    fn all_to_all_bytes(&self, mut send: Vec<Vec<u8>>) -> Result<Flat<u8>> {
        let own = send.get_mut(self.rank()).map(std::mem::take).unwrap_or_default();
        let got = self.all_to_all(&send)?;
        drop(send);
        let mut f = Flat::new(self.rank());
        f.own = own;
        for b in got {
            f.data.extend_from_slice(&b);
            f.starts.push(f.data.len());
        }
        Ok(f)
    }
    /// All-to-all of u32 words into one flat buffer (no per-process copies): `send[q]` to q.
    fn all_to_all_u32(&self, mut send: Vec<Vec<u32>>) -> Result<Flat<u32>> {
        let own = send.get_mut(self.rank()).map(std::mem::take).unwrap_or_default();
        let bytes: Vec<Vec<u8>> = send.into_iter().map(|v| enc_u32(&v)).collect();
        let got = self.all_to_all(&bytes)?;
        drop(bytes);
        let mut f = Flat::new(self.rank());
        f.own = own;
        for b in got {
            f.data.extend(dec_u32(&b));
            f.starts.push(f.data.len());
        }
        Ok(f)
    }
    /// A failure of this process between collectives (an allocation refused), made collective:
    /// it meets the others' next collective, which then fails on every process with this
    /// error (MPI's `Comm`: `World::status`). Returns the error to pass on. The default (one
    /// process, or threads that never fail alone) passes it on as it is.
    fn fail(&self, e: crate::error::Op2Error) -> crate::error::Op2Error {
        e
    }
    /// Element-wise sum over the processes.
    fn sum_u64(&self, v: &mut [u64]) -> Result<()> {
        let all = self.all_gather(&enc_u64(v))?;
        v.iter_mut().for_each(|x| *x = 0);
        for b in &all {
            for (x, y) in v.iter_mut().zip(dec_u64(b)) {
                *x += y;
            }
        }
        Ok(())
    }
    /// Element-wise minimum (`max` false) or maximum over the processes.
    fn min_max_f64(&self, v: &mut [f64], max: bool) -> Result<()> {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let all = self.all_gather(&bytes)?;
        for b in &all {
            for (x, c) in v.iter_mut().zip(b.chunks_exact(8)) {
                let y = f64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                *x = if max { x.max(y) } else { x.min(y) };
            }
        }
        Ok(())
    }
}

/// `r`, or its error made collective (`Coll::fail`): what every fallible step between two
/// collectives goes through.
pub fn local<T>(c: &dyn Coll, r: Result<T>) -> Result<T> {
    r.map_err(|e| c.fail(e))
}

pub fn enc_u32(v: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_ne_bytes());
    }
    out
}

pub fn enc_i32(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

pub fn dec_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

pub fn dec_u32(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn enc_u64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn dec_u64(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(|c| u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect()
}

/// What an all-to-all brought: every process's values, in rank order, in one buffer, except
/// possibly this process's own, which may come separately (moved, not copied).
pub struct Flat<T> {
    pub data: Vec<T>,
    /// `starts[q]..starts[q + 1]`: process q's values in `data` (P + 1 entries).
    pub starts: Vec<usize>,
    /// This process's rank and what it sent itself, when not in `data`.
    pub me: usize,
    pub own: Vec<T>,
}

impl<T> Flat<T> {
    pub fn new(me: usize) -> Flat<T> {
        Flat { data: Vec::new(), starts: vec![0], me, own: Vec::new() }
    }

    /// Each process's values, in rank order.
    pub fn iter(&self) -> impl Iterator<Item = &[T]> {
        self.starts.windows(2).enumerate().map(|(q, w)| {
            let r = &self.data[w[0]..w[1]];
            if q == self.me && r.is_empty() {
                &self.own[..]
            } else {
                r
            }
        })
    }

    /// All the values received.
    pub fn total(&self) -> usize {
        self.data.len() + self.own.len()
    }
}

/// All-to-all of u32 words.
/// Received (global index, value) pairs for this process's block `[first, first + n)` as
/// `local index << 32 | value`, sorted (so each element's values come in a run, ascending); an
/// index outside the block is an internal error (`what` names the pair, e.g. "vote for element").
fn local_pairs(got: &Flat<u32>, first: usize, n: usize, what: &str) -> Result<Vec<u64>> {
    let mut out: Vec<u64> = alloc::with_capacity(got.total() / 2, "op_partition: received pairs")?;
    for v in got.iter() {
        for pair in v.chunks_exact(2) {
            let Some(t) = (pair[0] as usize).checked_sub(first).filter(|&t| t < n) else {
                op2_bail!(Internal, "op_partition: {what} {} sent to the wrong process", pair[0]);
            };
            out.push((t as u64) << 32 | pair[1] as u64);
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn exchange(c: &dyn Coll, send: Vec<Vec<u32>>) -> Result<Flat<u32>> {
    c.all_to_all_u32(send)
}

/// Returns freed heap pages to the system (glibc keeps small freed chunks in its heap, so the
/// phases' many small allocations would otherwise stay resident and stack up).
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The process whose declared block (`offsets`: P + 1 block starts) holds global index `g`.
pub fn home(offsets: &[usize], g: usize) -> usize {
    offsets.partition_point(|&o| o <= g).saturating_sub(1)
}

/// A map on this process before partitioning: the rows of its from-set's declared block, with
/// global indices of the to-set.
#[derive(Clone, Copy)]
pub struct DMap<'a> {
    pub from: usize,
    pub to: usize,
    pub dim: usize,
    pub values: &'a [i32],
}

/// Answers of the homes for a set of keys: `get(key)` is the list the home gave. Flat and
/// sorted (homes hold increasing ranges, each answers its keys in increasing order), so a key
/// costs 8 bytes plus its values, and a search.
pub struct Answers {
    keys: Vec<u32>,
    /// `starts[i]..starts[i + 1]`: the values of `keys[i]`.
    starts: Vec<u32>,
    vals: Vec<i32>,
}

impl Answers {
    pub fn get(&self, key: u32) -> &[i32] {
        match self.keys.binary_search(&key) {
            Ok(i) => &self.vals[self.starts[i] as usize..self.starts[i + 1] as usize],
            Err(_) => &[],
        }
    }

    /// The first value of the answer (for one-value answers such as parts).
    pub fn one(&self, key: u32) -> i32 {
        self.get(key).first().copied().unwrap_or(-1)
    }
}

/// Asks the homes (blocks `offsets`) of `keys` (global indices, repeats allowed) for a list of
/// values each: a home answers for its element `i` (index in its block) with `answer(i)`.
/// Collective; each process sends its distinct keys once.
pub fn lookup<'f>(
    c: &dyn Coll,
    offsets: &[usize],
    keys: impl Iterator<Item = u32>,
    answer: &dyn Fn(usize) -> &'f [i32],
) -> Result<Answers> {
    let p = c.size();
    let mut ask: Vec<Vec<u32>> = vec![Vec::new(); p];
    for k in keys {
        ask[home(offsets, k as usize)].push(k);
    }
    for v in ask.iter_mut() {
        v.sort_unstable();
        v.dedup();
    }
    let asked = exchange(c, ask.clone())?;
    let first = offsets[c.rank()];
    // The answers to every process (local work between two collectives: its failure, an
    // allocation refused, is made collective by `local`).
    let reply = local(
        c,
        (|| -> Result<Vec<Vec<u32>>> {
            let mine = offsets[c.rank() + 1] - first;
            let index = |k: u32| -> Result<usize> {
                match (k as usize).checked_sub(first).filter(|&i| i < mine) {
                    Some(i) => Ok(i),
                    None => op2_bail!(Internal, "op_partition: element {k} asked of the wrong process"),
                }
            };
            let mut reply: Vec<Vec<u32>> = Vec::with_capacity(p);
            for keys in asked.iter() {
                // Each answer is its length and its values: sized once.
                let mut words = keys.len();
                for &k in keys {
                    words += answer(index(k)?).len();
                }
                let mut r = alloc::with_capacity(words, "op_partition: answers")?;
                for &k in keys {
                    let a = answer(index(k)?);
                    r.push(a.len() as u32);
                    r.extend(a.iter().map(|&x| x as u32));
                }
                reply.push(r);
            }
            Ok(reply)
        })(),
    )?;
    drop(asked);
    let got = exchange(c, reply)?;
    local(
        c,
        (|| {
            let nkeys = ask.iter().map(Vec::len).sum();
            let mut keys = alloc::with_capacity(nkeys, "op_partition: keys asked")?;
            let mut starts = alloc::with_capacity(nkeys + 1, "op_partition: answers")?;
            let mut vals = alloc::with_capacity(got.total().saturating_sub(nkeys), "op_partition: answers")?;
            starts.push(0u32);
            for (ks, r) in ask.into_iter().zip(got.iter()) {
                let mut pos = 0usize;
                for _ in &ks {
                    let Some(&n) = r.get(pos) else { op2_bail!(Internal, "op_partition: short answer") };
                    let n = n as usize;
                    let Some(a) = r.get(pos + 1..pos + 1 + n) else {
                        op2_bail!(Internal, "op_partition: short answer")
                    };
                    vals.extend(a.iter().map(|&x| x as i32));
                    starts.push(vals.len() as u32);
                    pos += 1 + n;
                }
                keys.extend_from_slice(&ks);
            }
            Ok(Answers { keys, starts, vals })
        })(),
    )
}

/// Rows of `eb` bytes for the global indices `wanted` (in that order), from their homes, whose
/// declared blocks of rows are `block` (this process's). Collective.
pub fn fetch_rows(c: &dyn Coll, offsets: &[usize], block: &[u8], eb: usize, wanted: &[u32]) -> Result<Vec<u8>> {
    let mut out = local(c, alloc::zeroed(wanted.len().saturating_mul(eb), "op_partition: rows fetched"))?;
    fetch_rows_into(c, offsets, block, eb, wanted, &mut out)?;
    Ok(out)
}

/// `fetch_rows` into `out` (`wanted.len() * eb` bytes).
/// In rounds of at most `FETCH_ROUND_BYTES` of rows asked by each process, so that the
/// messages a process holds stay bounded whatever the dat's size (the number of rounds is
/// agreed: the most any process needs).
pub fn fetch_rows_into(
    c: &dyn Coll,
    offsets: &[usize],
    block: &[u8],
    eb: usize,
    wanted: &[u32],
    out: &mut [u8],
) -> Result<()> {
    if out.len() != wanted.len() * eb {
        op2_bail!(Internal, "op_partition: {} bytes of room for {} rows of {eb}", out.len(), wanted.len());
    }
    let per = (FETCH_ROUND_BYTES / eb.max(1)).max(1);
    let mut rounds = [wanted.len().div_ceil(per) as f64];
    c.min_max_f64(&mut rounds, true)?;
    for r in 0..rounds[0] as usize {
        let lo = (r * per).min(wanted.len());
        let hi = ((r + 1) * per).min(wanted.len());
        let first = offsets[c.rank()];
        fetch_round(c, offsets, (block, first), eb, &wanted[lo..hi], &mut out[lo * eb..hi * eb])?;
    }
    Ok(())
}

/// Reads rows `[lo, hi)` of this process's block into a buffer (`fetch_rows_from_pieces`).
pub type ReadPiece<'a> = dyn FnMut(usize, usize, &mut [u8]) -> Result<()> + 'a;

/// `fetch_rows_into` from homes that do not hold their blocks but read them piece by piece:
/// `read(lo, hi, buf)` fills `buf` with rows `[lo, hi)` of this process's block (a file read).
/// In round r every home reads rows `[r R, (r + 1) R)` of its block, R = `piece_rows`, and
/// every process asks each home for the rows it wants of that piece, so a process holds one
/// piece, its answers to the others and the rows it receives (at most P pieces' worth, R x P x
/// `eb` bytes: the caller sizes R for that). Every process calls `read` in every round, the
/// same number of rounds (the most any block needs), with `lo == hi` past its block's end (a
/// collective read takes part with nothing). Collective.
pub fn fetch_rows_from_pieces(
    c: &dyn Coll,
    offsets: &[usize],
    eb: usize,
    wanted: &[u32],
    out: &mut [u8],
    piece_rows: usize,
    read: &mut ReadPiece,
) -> Result<()> {
    if out.len() != wanted.len() * eb {
        op2_bail!(Internal, "op_partition: {} bytes of room for {} rows of {eb}", out.len(), wanted.len());
    }
    let me = c.rank();
    let r_rows = piece_rows.max(1);
    let mine = offsets[me + 1] - offsets[me];
    let mut rounds = [mine.div_ceil(r_rows) as f64];
    c.min_max_f64(&mut rounds, true)?;
    let nrounds = rounds[0] as usize;
    let mut piece =
        local(c, alloc::zeroed::<u8>(r_rows.min(mine) * eb, "op_partition: a piece of a block read again"))?;
    // The wanted rows by the round whose pieces hold them (a counting sort, stable: in the
    // order they are wanted within a round), once for every round.
    let round_of = |g: u32| (g as usize - offsets[home(offsets, g as usize)]) / r_rows;
    let mut starts = local(c, alloc::zeroed::<usize>(nrounds + 1, "op_partition: rounds of a read again"))?;
    for &g in wanted {
        starts[round_of(g).min(nrounds.saturating_sub(1)) + 1] += 1;
    }
    for r in 0..nrounds {
        starts[r + 1] += starts[r];
    }
    let mut order = local(c, alloc::zeroed::<u32>(wanted.len(), "op_partition: order of the rows read again"))?;
    let mut next = starts.clone();
    for (i, &g) in wanted.iter().enumerate() {
        let r = round_of(g).min(nrounds.saturating_sub(1));
        order[next[r]] = i as u32;
        next[r] += 1;
    }
    drop(next);
    let mut sub: Vec<u32> = Vec::new();
    for r in 0..nrounds {
        let lo = (r * r_rows).min(mine);
        let hi = ((r + 1) * r_rows).min(mine);
        let got = read(lo, hi, &mut piece[..(hi - lo) * eb]);
        local(c, got)?;
        // The rows wanted of every home's piece r, and where they go.
        let at = &order[starts[r]..starts[r + 1]];
        sub.clear();
        sub.extend(at.iter().map(|&i| wanted[i as usize]));
        let mut rows = local(c, alloc::zeroed::<u8>(sub.len() * eb, "op_partition: rows read again"))?;
        fetch_round(c, offsets, (&piece[..(hi - lo) * eb], offsets[me] + lo), eb, &sub, &mut rows)?;
        for (k, row) in rows.chunks_exact(eb.max(1)).enumerate() {
            let i = at[k] as usize;
            out[i * eb..(i + 1) * eb].copy_from_slice(row);
        }
    }
    Ok(())
}

/// The most bytes of rows a process asks for in one round of `fetch_rows_into`.
pub const FETCH_ROUND_BYTES: usize = 4 << 20;

/// One round of a fetch: rows `wanted` from their homes, each home serving from `piece` (rows
/// of its block from global index `piece.1` on), written to `out` (`wanted.len()` rows).
fn fetch_round(
    c: &dyn Coll,
    offsets: &[usize],
    piece: (&[u8], usize),
    eb: usize,
    wanted: &[u32],
    out: &mut [u8],
) -> Result<()> {
    let (block, first) = piece;
    let p = c.size();
    let mut ask: Vec<Vec<u32>> = vec![Vec::new(); p];
    let mut at: Vec<Vec<u32>> = vec![Vec::new(); p];
    for (i, &g) in wanted.iter().enumerate() {
        let q = home(offsets, g as usize);
        ask[q].push(g);
        at[q].push(i as u32);
    }
    let asked = exchange(c, ask)?;
    let mine = block.len() / eb.max(1);
    let send = local(
        c,
        (|| -> Result<Vec<Vec<u8>>> {
            let mut send = Vec::with_capacity(p);
            for keys in asked.iter() {
                let mut b = alloc::with_capacity(keys.len().saturating_mul(eb), "op_partition: rows sent")?;
                for &g in keys {
                    let Some(i) = (g as usize).checked_sub(first).filter(|&i| i < mine) else {
                        op2_bail!(Internal, "op_partition: row {g} asked of the wrong process");
                    };
                    b.extend_from_slice(&block[i * eb..(i + 1) * eb]);
                }
                send.push(b);
            }
            Ok(send)
        })(),
    )?;
    drop(asked);
    let got = c.all_to_all_bytes(send)?;
    for (b, pos) in got.iter().zip(&at) {
        if b.len() != pos.len() * eb {
            op2_bail!(Internal, "op_partition: {} bytes received for {} rows of {eb}", b.len(), pos.len());
        }
        for (row, &i) in b.chunks_exact(eb.max(1)).zip(pos) {
            out[i as usize * eb..(i as usize + 1) * eb].copy_from_slice(row);
        }
    }
    Ok(())
}

/// `partition::derive` on the blocks: `parts[s]` is this process's block of set s's parts
/// (None: not partitioned yet); sets no map reaches keep their blocks (part = home).
pub fn derive(c: &dyn Coll, offsets: &[Vec<usize>], maps: &[DMap], parts: &mut [Option<Vec<i32>>]) -> Result<()> {
    let me = c.rank();
    loop {
        let known = |s: usize| parts[s].is_some();
        let Some((i, forward)) = next_derivation(maps.iter().map(|m| (m.from, m.to, m.dim)), &known) else { break };
        let m = &maps[i];
        if forward {
            let tp = parts[m.to].as_deref().unwrap_or(&[]);
            let ans = lookup(c, &offsets[m.to], m.values.iter().map(|&t| t as u32), &|i| &tp[i..i + 1])?;
            parts[m.from] = Some(row_modes(m.values, m.dim, |t| ans.one(t as u32)));
        } else {
            // Votes (target, part of the element naming it) to the targets' homes.
            let fp = parts[m.from].as_deref().unwrap_or(&[]);
            let mut send: Vec<Vec<u32>> = vec![Vec::new(); c.size()];
            for (e, row) in m.values.chunks_exact(m.dim.max(1)).enumerate() {
                for &t in row {
                    let q = home(&offsets[m.to], t as usize);
                    send[q].push(t as u32);
                    send[q].push(fp[e] as u32);
                }
            }
            let got = exchange(c, send)?;
            let first = offsets[m.to][me];
            let n = offsets[m.to][me + 1] - first;
            // Votes as (element, part), sorted: each element's votes in runs of equal parts.
            let (votes, mut p, mut best) = local(
                c,
                (|| {
                    Ok((
                        local_pairs(&got, first, n, "vote for element")?,
                        alloc::filled(n, me as i32, "op_partition: parts")?,
                        alloc::zeroed::<u32>(n, "op_partition: votes")?,
                    ))
                })(),
            )?;
            drop(got);
            // The most votes, ties to the lowest part (runs come in increasing part order); an
            // element without votes keeps its block (this process).
            let mut i = 0;
            while i < votes.len() {
                let j = i + votes[i..].iter().take_while(|&&x| x == votes[i]).count();
                let (t, part) = ((votes[i] >> 32) as usize, votes[i] as u32 as i32);
                if (j - i) as u32 > best[t] {
                    best[t] = (j - i) as u32;
                    p[t] = part;
                }
                i = j;
            }
            parts[m.to] = Some(p);
        }
    }
    // The last step is local: a failure here meets the others' next collective.
    local(
        c,
        (|| {
            for (s, p) in parts.iter_mut().enumerate() {
                if p.is_none() {
                    *p = Some(alloc::filled(offsets[s][me + 1] - offsets[s][me], me as i32, "op_partition: parts")?);
                }
            }
            Ok(())
        })(),
    )
}

/// Lists per element, flat: `get(e)` is element e's list.
struct Csr {
    starts: Vec<u32>,
    vals: Vec<i32>,
}

impl Csr {
    fn get(&self, e: usize) -> &[i32] {
        &self.vals[self.starts[e] as usize..self.starts[e + 1] as usize]
    }
    fn len(&self) -> usize {
        self.starts.len() - 1
    }
}

// Record kinds of the layout messages.
const OWN_CORE: u32 = 0;
const OWN_NONCORE: u32 = 1;
const EXEC: u32 = 2;
const NONEXEC: u32 = 3;

/// This process's layout of every set (as `layout::set_layout(&layout::halos(..), ..)` on the
/// whole mesh), from the blocks of every set's parts and of every map. Collective.
pub fn layouts(c: &dyn Coll, offsets: &[Vec<usize>], maps: &[DMap], parts: &[Vec<i32>]) -> Result<Vec<SetLayout>> {
    let p = c.size();
    let me = c.rank();
    let nsets = offsets.len();
    // others[s].get(e): the owners other than e's own of the targets of e's rows (sorted),
    // merged map by map (the owners of one map's targets are asked of their homes and dropped
    // before the next map's).
    let mut others: Vec<Csr> = Vec::with_capacity(nsets);
    let mut tmp: Vec<i32> = Vec::new();
    for s in 0..nsets {
        let n = offsets[s][me + 1] - offsets[s][me];
        let mut o = Csr { starts: local(c, alloc::zeroed(n + 1, "op_partition: halo owners"))?, vals: Vec::new() };
        for m in maps.iter().filter(|m| m.from == s) {
            let tp = &parts[m.to];
            let ans = lookup(c, &offsets[m.to], m.values.iter().map(|&t| t as u32), &|i| &tp[i..i + 1])?;
            let room = || -> Result<Csr> {
                Ok(Csr {
                    starts: alloc::with_capacity(n + 1, "op_partition: halo owners")?,
                    vals: alloc::with_capacity(o.vals.len(), "op_partition: halo owners")?,
                })
            };
            let mut next = local(c, room())?;
            next.starts.push(0);
            for (e, &own) in parts[s].iter().enumerate().take(n) {
                tmp.clear();
                tmp.extend_from_slice(o.get(e));
                for &t in &m.values[e * m.dim..(e + 1) * m.dim] {
                    let q = ans.one(t as u32);
                    if q != own && !tmp.contains(&q) {
                        tmp.push(q);
                    }
                }
                tmp.sort_unstable();
                next.vals.extend_from_slice(&tmp);
                next.starts.push(next.vals.len() as u32);
            }
            o = next;
            drop(ans);
            trim_heap();
        }
        others.push(o);
    }
    // For rows that reach other owners (non-exec halos): their targets' owners and `others`.
    let mut target_parts = Vec::with_capacity(maps.len());
    let mut target_others = Vec::with_capacity(maps.len());
    for m in maps {
        let of = &others[m.from];
        let keys = || {
            m.values
                .chunks_exact(m.dim.max(1))
                .enumerate()
                .filter(|(e, _)| !of.get(*e).is_empty())
                .flat_map(|(_, row)| row.iter().map(|&t| t as u32))
        };
        let (tp, ot) = (&parts[m.to], &others[m.to]);
        target_parts.push(lookup(c, &offsets[m.to], keys(), &|i| &tp[i..i + 1])?);
        target_others.push(lookup(c, &offsets[m.to], keys(), &|i| ot.get(i))?);
    }
    trim_heap();
    // Records (kind << 24 | set, global index, owner) to the processes that own, run or read
    // each element, sent set by set (#36: one set's records in flight at a time, not every
    // set's at once; the largest set, Airfoil's edges, is half the elements).
    // Ownership records are two words (the owner is the receiver), halo records three.
    let rec = |send: &mut Vec<Vec<u32>>, to: i32, kind: u32, s: usize, g: usize, owner: i32| {
        let v = &mut send[to as usize];
        v.push(kind << 24 | s as u32);
        v.push(g as u32);
        if kind >= EXEC {
            v.push(owner as u32);
        }
    };
    let mut core: Vec<Vec<u32>> = vec![Vec::new(); nsets];
    let mut noncore: Vec<Vec<u32>> = vec![Vec::new(); nsets];
    let mut exec: Vec<Vec<(i32, u32)>> = vec![Vec::new(); nsets];
    let mut nonexec: Vec<BTreeSet<(i32, u32)>> = vec![BTreeSet::new(); nsets];
    for s in 0..nsets {
        let mut send: Vec<Vec<u32>> = vec![Vec::new(); p];
        // Room for the ownership records (most of the volume) at once.
        let mut owned_by = vec![0usize; p];
        for &q in parts[s].iter().take(others[s].len()) {
            owned_by[q as usize] += 2;
        }
        local(
            c,
            send.iter_mut().zip(&owned_by).try_for_each(|(v, &n)| alloc::reserve(v, n, "op_partition: layout records")),
        )?;
        drop(owned_by);
        let first = offsets[s][me];
        for (e, &own) in parts[s].iter().enumerate().take(others[s].len()) {
            let o = others[s].get(e);
            rec(&mut send, own, if o.is_empty() { OWN_CORE } else { OWN_NONCORE }, s, first + e, own);
            for &q in o {
                rec(&mut send, q, EXEC, s, first + e, own);
            }
        }
        for ((m, tp), to) in maps.iter().zip(&target_parts).zip(&target_others).filter(|((m, _), _)| m.to == s) {
            let mut sent: std::collections::HashSet<(i32, u32)> = std::collections::HashSet::new();
            for (e, row) in m.values.chunks_exact(m.dim.max(1)).enumerate() {
                let o = others[m.from].get(e);
                if o.is_empty() {
                    continue;
                }
                for q in std::iter::once(parts[m.from][e]).chain(o.iter().copied()) {
                    for &t in row {
                        let owner = tp.one(t as u32);
                        if owner != q && !to.get(t as u32).contains(&q) && sent.insert((q, t as u32)) {
                            rec(&mut send, q, NONEXEC, m.to, t as usize, owner);
                        }
                    }
                }
            }
        }
        let got = exchange(c, send)?;
        // Room for the ownership records received (two words each; the halo records' three
        // count as two: a little spare) at once.
        let recs = got.iter().map(|v| v.len() / 2).sum::<usize>();
        local(c, alloc::reserve(&mut core[s], recs, "op_partition: owned elements"))?;
        for v in got.iter() {
            let mut at = 0;
            while at + 1 < v.len() {
                let (kind, rs, g) = (v[at] >> 24, (v[at] & 0xff_ffff) as usize, v[at + 1]);
                let owner = if kind >= EXEC { v.get(at + 2).map_or(-1, |&o| o as i32) } else { -1 };
                at += if kind >= EXEC { 3 } else { 2 };
                if rs != s || at > v.len() {
                    op2_bail!(Internal, "op_partition: a layout record of set {s} names set {rs} or is cut short");
                }
                match kind {
                    OWN_CORE => core[s].push(g),
                    OWN_NONCORE => noncore[s].push(g),
                    EXEC => exec[s].push((owner, g)),
                    _ => {
                        nonexec[s].insert((owner, g));
                    }
                }
            }
        }
        drop(got);
        trim_heap();
    }
    drop(target_parts);
    drop(target_others);
    drop(others);
    let mut out = Vec::with_capacity(nsets);
    // What each neighbour needs of mine: (set, kind, global index) to the owners.
    let mut need: Vec<Vec<u32>> = vec![Vec::new(); p];
    for s in 0..nsets {
        core[s].sort_unstable();
        noncore[s].sort_unstable();
        exec[s].sort_unstable();
        let ne: Vec<(i32, u32)> = std::mem::take(&mut nonexec[s]).into_iter().collect();
        let owned = core[s].len() + noncore[s].len();
        let mut gids = std::mem::take(&mut core[s]);
        let ncore = gids.len();
        gids.append(&mut noncore[s]);
        let mut imports: Vec<(i32, Vec<u32>)> = Vec::new();
        let mut add_import = |q: i32, pos: usize| match imports.iter_mut().find(|(r, _)| *r == q) {
            Some((_, v)) => v.push(pos as u32),
            None => imports.push((q, vec![pos as u32])),
        };
        for &(q, g) in &exec[s] {
            add_import(q, gids.len());
            gids.push(g);
            need[q as usize].extend_from_slice(&[(EXEC << 24) | s as u32, g]);
        }
        for &(q, g) in &ne {
            add_import(q, gids.len());
            gids.push(g);
            need[q as usize].extend_from_slice(&[(NONEXEC << 24) | s as u32, g]);
        }
        imports.sort_by_key(|(q, _)| *q);
        out.push(SetLayout {
            owned,
            core: ncore,
            exec: exec[s].len(),
            nonexec: ne.len(),
            gids: Gids::new(gids),
            imports,
            exports: Vec::new(),
        });
    }
    // Exports: per neighbour, my elements in its exec halo then in its non-exec halo, in its
    // order (by global index within each kind, as it sorted them).
    let asked = exchange(c, need)?;
    // Set by set (one set's global -> local table at a time), neighbour by neighbour.
    for (s, l) in out.iter_mut().enumerate() {
        let local_of = LocalOf::new(&l.gids.as_slice()[..l.owned]);
        for (q, v) in asked.iter().enumerate() {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for r in v.chunks_exact(2) {
                let (kind, rs, g) = (r[0] >> 24, (r[0] & 0xff_ffff) as usize, r[1]);
                if rs >= nsets {
                    op2_bail!(Internal, "op_partition: process {q} needs an element of set {rs}, which does not exist");
                }
                if rs != s {
                    continue;
                }
                let Some(i) = local_of.get(g) else {
                    op2_bail!(
                        Internal,
                        "op_partition: process {q} needs element {g} of set {s}, which is not owned here"
                    );
                };
                if kind == EXEC {
                    a.push(i);
                } else {
                    b.push(i);
                }
            }
            a.extend(b);
            if !a.is_empty() {
                l.exports.push((q as i32, a));
            }
        }
    }
    Ok(out)
}

/// Global index -> local index of a layout's elements: (global, local) sorted, 8 bytes each.
struct LocalOf(Vec<(u32, u32)>);

impl LocalOf {
    fn new(gids: &[u32]) -> LocalOf {
        let mut v: Vec<(u32, u32)> = gids.iter().enumerate().map(|(i, &g)| (g, i as u32)).collect();
        v.sort_unstable();
        LocalOf(v)
    }
    fn get(&self, g: u32) -> Option<u32> {
        self.0.binary_search_by_key(&g, |x| x.0).ok().map(|i| self.0[i].1)
    }
}

/// A map's local rows after partitioning: the rows of the from-set's owned and exec elements
/// (fetched from their homes), targets as local indices of the to-set. Collective.
pub fn local_map(
    c: &dyn Coll,
    m: &DMap,
    from_offsets: &[usize],
    from: &SetLayout,
    to: &SetLayout,
    name: &str,
) -> Result<Vec<i32>> {
    let block = local(
        c,
        alloc::with_capacity(m.values.len() * 4, "op_partition: map block").map(|mut b: Vec<u8>| {
            b.extend(m.values.iter().flat_map(|v| v.to_ne_bytes()));
            b
        }),
    )?;
    let rows = fetch_rows(c, from_offsets, &block, m.dim * 4, &from.gids.as_slice()[..from.owned + from.exec])?;
    drop(block);
    let local_of = LocalOf::new(to.gids.as_slice());
    local(
        c,
        (|| {
            let mut out = alloc::with_capacity(rows.len() / 4, "op_partition: map rows")?;
            for (k, t) in rows.chunks_exact(4).enumerate() {
                let t = u32::from_ne_bytes([t[0], t[1], t[2], t[3]]);
                match local_of.get(t) {
                    Some(l) => out.push(l as i32),
                    None => op2_bail!(
                        Internal,
                        "op_partition: map '{name}': target {t} of element {} is not in this process's halo",
                        from.gids.get(k / m.dim.max(1))
                    ),
                }
            }
            Ok(out)
        })(),
    )
}

/// `partition::random_parts` for this process's block `[first, first + n)`: the generator
/// jumped ahead to the block (x -> a x + c applied `first` times, by squaring).
pub fn random(first: usize, n: usize, nparts: usize) -> Result<Vec<i32>> {
    const A: u64 = 6364136223846793005;
    const C: u64 = 1442695040888963407;
    // (mul, add) of the step applied k times, composed by squaring.
    let (mut am, mut ac) = (1u64, 0u64);
    let (mut bm, mut bc) = (A, C);
    let mut k = first as u64;
    while k > 0 {
        if k & 1 == 1 {
            ac = ac.wrapping_mul(bm).wrapping_add(bc);
            am = am.wrapping_mul(bm);
        }
        bc = bc.wrapping_mul(bm).wrapping_add(bc);
        bm = bm.wrapping_mul(bm);
        k >>= 1;
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(am).wrapping_add(ac);
    let mut out = alloc::with_capacity(n, "op_partition: parts")?;
    out.extend((0..n).map(|_| {
        x = x.wrapping_mul(A).wrapping_add(C);
        ((x >> 33) % nparts as u64) as i32
    }));
    Ok(out)
}

/// An f64 as an unsigned key in the order of `partial_cmp` (-0.0 equal to 0.0; NaN has no place
/// in that order and lands at an end).
fn ordered(v: f64) -> u64 {
    let b = (v + 0.0).to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// `partition::rcb_parts` on the blocks: this process's `coords` (`dim` values per element of
/// its block, whose first global index is `first`), the parts of its block. Each bisection
/// finds its cut with parallel medians: a binary search over the 96-bit keys (coordinate,
/// global index) with one sum of counts per step for every piece at once, so the cut is exactly
/// the serial one and no coordinate leaves its process. Collective.
pub fn rcb(c: &dyn Coll, coords: &[f64], dim: usize, first: usize, nparts: usize) -> Result<Vec<i32>> {
    let n = coords.len().checked_div(dim).unwrap_or(0);
    // Pieces: (first part, parts); every element's piece.
    let mut pieces: Vec<(usize, usize)> = vec![(0, nparts.max(1))];
    let mut piece = local(c, alloc::zeroed::<u32>(n, "op_partition RCB: pieces"))?;
    loop {
        let active: Vec<usize> = (0..pieces.len()).filter(|&k| pieces[k].1 > 1).collect();
        if active.is_empty() || dim == 0 {
            break;
        }
        let slot: HashMap<usize, usize> = active.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let na = active.len();
        let mut count = vec![0u64; na];
        let mut lo = vec![f64::INFINITY; na * dim];
        let mut hi = vec![f64::NEG_INFINITY; na * dim];
        for e in 0..n {
            if let Some(&i) = slot.get(&(piece[e] as usize)) {
                count[i] += 1;
                for d in 0..dim {
                    let v = coords[e * dim + d];
                    lo[i * dim + d] = lo[i * dim + d].min(v);
                    hi[i * dim + d] = hi[i * dim + d].max(v);
                }
            }
        }
        c.sum_u64(&mut count)?;
        c.min_max_f64(&mut lo, false)?;
        c.min_max_f64(&mut hi, true)?;
        // Per active piece: the dimension of the longest extent and the number going left.
        let mut axis = vec![0usize; na];
        let mut cut = vec![0u64; na];
        for i in 0..na {
            let mut best = (0usize, f64::NEG_INFINITY);
            for d in 0..dim {
                let ext = hi[i * dim + d] - lo[i * dim + d];
                if ext > best.1 {
                    best = (d, ext);
                }
            }
            axis[i] = best.0;
            let (_, np) = pieces[active[i]];
            cut[i] = count[i] * (np / 2) as u64 / np as u64;
        }
        // Each piece's local keys, sorted (room for them all reserved at once).
        let mut keys: Vec<Vec<u128>> = vec![Vec::new(); na];
        let mut per = vec![0usize; na];
        for &k in &piece {
            if let Some(&i) = slot.get(&(k as usize)) {
                per[i] += 1;
            }
        }
        let room = keys.iter_mut().zip(&per).try_for_each(|(k, &m)| alloc::reserve(k, m, "op_partition RCB: keys"));
        local(c, room)?;
        for e in 0..n {
            if let Some(&i) = slot.get(&(piece[e] as usize)) {
                keys[i].push((ordered(coords[e * dim + axis[i]]) as u128) << 32 | (first + e) as u128);
            }
        }
        keys.iter_mut().for_each(|k| k.sort_unstable());
        // The key at position cut: the least x with more than cut keys <= x.
        let mut lo_k = vec![0u128; na];
        let mut hi_k = vec![1u128 << 96; na];
        for _ in 0..97 {
            if lo_k.iter().zip(&hi_k).all(|(l, h)| l >= h) {
                break;
            }
            let mid: Vec<u128> = lo_k.iter().zip(&hi_k).map(|(l, h)| l + (h - l) / 2).collect();
            let mut le: Vec<u64> = (0..na).map(|i| keys[i].partition_point(|&k| k <= mid[i]) as u64).collect();
            c.sum_u64(&mut le)?;
            for i in 0..na {
                if lo_k[i] < hi_k[i] {
                    if le[i] > cut[i] {
                        hi_k[i] = mid[i];
                    } else {
                        lo_k[i] = mid[i] + 1;
                    }
                }
            }
        }
        let split = pieces.len();
        let mut left_of = vec![0usize; na];
        for (i, &k) in active.iter().enumerate() {
            let (f, np) = pieces[k];
            let left = np / 2;
            pieces[k] = (f, left);
            left_of[i] = k;
            pieces.push((f + left, np - left));
        }
        for e in 0..n {
            if let Some(&i) = slot.get(&(piece[e] as usize)) {
                let key = (ordered(coords[e * dim + axis[i]]) as u128) << 32 | (first + e) as u128;
                piece[e] = if key < lo_k[i] { left_of[i] as u32 } else { (split + i) as u32 };
            }
        }
    }
    local(
        c,
        alloc::with_capacity(n, "op_partition RCB: parts").map(|mut out: Vec<i32>| {
            out.extend(piece.iter().map(|&k| pieces[k as usize].0 as i32));
            out
        }),
    )
}

/// Values of `per` words per element, held in blocks `from` (this process's block: `vals`),
/// moved to blocks `to` (returns this process's block of `to`). Collective.
pub fn move_values(c: &dyn Coll, from: &[usize], vals: &[i32], per: usize, to: &[usize]) -> Result<Vec<i32>> {
    let me = c.rank();
    let ans = lookup(c, from, (to[me]..to[me + 1]).map(|g| g as u32), &|i| &vals[i * per..(i + 1) * per])?;
    local(
        c,
        (|| {
            let mut out = alloc::with_capacity((to[me + 1] - to[me]) * per, "op_partition: values moved")?;
            for g in to[me]..to[me + 1] {
                let a = ans.get(g as u32);
                if a.len() != per {
                    op2_bail!(Internal, "op_partition: element {g} moved with {} values, not {per}", a.len());
                }
                out.extend_from_slice(a);
            }
            Ok(out)
        })(),
    )
}

/// A distributed graph's rows (`xadj` from 0, `adjncy`) held in blocks `from`, moved to blocks
/// `to`. Collective.
pub fn move_graph(
    c: &dyn Coll,
    from: &[usize],
    xadj: &[i32],
    adjncy: &[i32],
    to: &[usize],
) -> Result<(Vec<i32>, Vec<i32>)> {
    let me = c.rank();
    let row = |i: usize| &adjncy[xadj[i] as usize..xadj[i + 1] as usize];
    let ans = lookup(c, from, (to[me]..to[me + 1]).map(|g| g as u32), &row)?;
    let mut nx = vec![0i32];
    let mut na = Vec::new();
    for g in to[me]..to[me + 1] {
        na.extend_from_slice(ans.get(g as u32));
        nx.push(na.len() as i32);
    }
    Ok((nx, na))
}

/// This process's rows of the graph of `m`'s target set (as `partition::target_graph`: two
/// targets are adjacent when one row names both), for its block `offsets` of the target set:
/// (xadj from 0, adjncy in global indices). Collective.
pub fn graph(c: &dyn Coll, offsets: &[usize], m: &DMap) -> Result<(Vec<i32>, Vec<i32>)> {
    let mut send: Vec<Vec<u32>> = vec![Vec::new(); c.size()];
    for row in m.values.chunks_exact(m.dim.max(1)) {
        for (a, &u) in row.iter().enumerate() {
            for &v in &row[a + 1..] {
                if u != v {
                    send[home(offsets, u as usize)].extend_from_slice(&[u as u32, v as u32]);
                    send[home(offsets, v as usize)].extend_from_slice(&[v as u32, u as u32]);
                }
            }
        }
    }
    let got = exchange(c, send)?;
    let me = c.rank();
    let first = offsets[me];
    let n = offsets[me + 1] - first;
    // Edges as (local vertex, neighbour), sorted and deduplicated: the rows in order.
    let (edges, mut xadj, mut adjncy) = local(
        c,
        (|| {
            let mut edges = local_pairs(&got, first, n, "graph edge of vertex")?;
            edges.dedup();
            let xadj = alloc::with_capacity(n + 1, "op_partition: graph rows")?;
            let adjncy = alloc::with_capacity(edges.len(), "op_partition: graph edges")?;
            Ok((edges, xadj, adjncy))
        })(),
    )?;
    drop(got);
    xadj.push(0i32);
    let mut at = 0;
    for u in 0..n as u64 {
        while at < edges.len() && edges[at] >> 32 == u {
            adjncy.push(edges[at] as u32 as i32);
            at += 1;
        }
        xadj.push(adjncy.len() as i32);
    }
    Ok((xadj, adjncy))
}

#[cfg(test)]
#[path = "distpart_tests.rs"]
mod tests;
