//! The digest of a map's or a dat's values that a checkpoint records, so that a restart with
//! the same declarations but other values (another mesh of the same sizes, other initial data)
//! is refused instead of resuming with results that match neither run.
//!
//! The digest is a SHA-256 of the values in declared order that does not depend on how they
//! are split into processes' blocks: the rows are cut into chunks of whole rows at fixed global
//! positions (`rows_per_chunk`), each chunk is hashed, and the digest is the SHA-256 of a header
//! (format, row size, row count) and the chunk hashes in order. Under MPI each process hashes
//! the chunks that lie inside its declared block and hands on its pieces of the chunks that
//! straddle a block boundary (at most two, each under one chunk's size); one all-gather and
//! every process has every chunk hash, and the same digest: one process's digest of the same
//! values is the same, whatever the process count or split.

use crate::error::Result;
use crate::mpi::Comm;
use crate::op2_err;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The bytes of a chunk, at most (whole rows; one row when a row is larger).
const CHUNK_BYTES: usize = 1 << 16;

/// Rows per chunk for rows of `row_bytes` bytes.
fn rows_per_chunk(row_bytes: usize) -> u64 {
    (CHUNK_BYTES / row_bytes.max(1)).max(1) as u64
}

/// What one process contributes: the hashes of the chunks inside its block, and its pieces of
/// the chunks it shares with a neighbour. `mine` holds whole rows of `row_bytes` bytes, the
/// first at global row `first`, of `nrows` rows in all.
pub(super) fn pieces(row_bytes: usize, nrows: u64, first: u64, mine: &[u8]) -> Vec<u8> {
    let k = rows_per_chunk(row_bytes);
    let rb = row_bytes.max(1) as u64;
    let n = mine.len() as u64 / rb;
    let (s, e) = (first, first + n);
    let mut full = Vec::new();
    let mut part = Vec::new();
    let mut c = s / k;
    while n > 0 && c * k < e {
        let (cs, ce) = (c * k, ((c + 1) * k).min(nrows));
        let (os, oe) = (s.max(cs), e.min(ce));
        let bytes = &mine[((os - s) * rb) as usize..((oe - s) * rb) as usize];
        if os == cs && oe == ce {
            full.extend_from_slice(&c.to_le_bytes());
            full.extend_from_slice(&Sha256::digest(bytes));
        } else {
            part.extend_from_slice(&c.to_le_bytes());
            part.extend_from_slice(&os.to_le_bytes());
            part.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            part.extend_from_slice(bytes);
        }
        c += 1;
    }
    let mut out = Vec::with_capacity(16 + full.len() + part.len());
    out.extend_from_slice(&((full.len() / 40) as u64).to_le_bytes());
    out.extend_from_slice(&full);
    out.extend_from_slice(&part);
    out
}

/// The digest from every process's `pieces` (any order): an error when they do not cover the
/// rows exactly (an internal error: the blocks of a set always do).
pub(super) fn combine(row_bytes: usize, nrows: u64, all: &[Vec<u8>]) -> Result<[u8; 32]> {
    let bad = || op2_err!(Internal, "op2 checkpoint: the digest's pieces do not cover the rows");
    let k = rows_per_chunk(row_bytes);
    let rb = row_bytes.max(1) as u64;
    let nchunks = nrows.div_ceil(k);
    let u64_at = |b: &[u8], at: usize| -> Option<u64> {
        b.get(at..at + 8).map(|x| u64::from_le_bytes([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]))
    };
    let mut hashes: BTreeMap<u64, [u8; 32]> = BTreeMap::new();
    let mut parts: BTreeMap<u64, Vec<(u64, &[u8])>> = BTreeMap::new();
    for p in all {
        let nfull = u64_at(p, 0).ok_or_else(bad)? as usize;
        let mut at = 8;
        for _ in 0..nfull {
            let c = u64_at(p, at).ok_or_else(bad)?;
            let h: [u8; 32] = p.get(at + 8..at + 40).and_then(|h| h.try_into().ok()).ok_or_else(bad)?;
            hashes.insert(c, h);
            at += 40;
        }
        while at < p.len() {
            let (c, start, len) = (u64_at(p, at), u64_at(p, at + 8), u64_at(p, at + 16));
            let (c, start, len) = (c.ok_or_else(bad)?, start.ok_or_else(bad)?, len.ok_or_else(bad)? as usize);
            let bytes = p.get(at + 24..at + 24 + len).ok_or_else(bad)?;
            parts.entry(c).or_default().push((start, bytes));
            at += 24 + len;
        }
    }
    for (c, mut ps) in parts {
        ps.sort_by_key(|&(start, _)| start);
        let mut h = Sha256::new();
        let mut next = c * k;
        for (start, bytes) in ps {
            if start != next {
                return Err(bad());
            }
            h.update(bytes);
            next += bytes.len() as u64 / rb;
        }
        if next != ((c + 1) * k).min(nrows) {
            return Err(bad());
        }
        hashes.insert(c, h.finalize().into());
    }
    let mut h = Sha256::new();
    h.update(b"op2-values-v1\n");
    h.update((row_bytes as u64).to_le_bytes());
    h.update(nrows.to_le_bytes());
    for c in 0..nchunks {
        h.update(hashes.get(&c).ok_or_else(bad)?);
    }
    Ok(h.finalize().into())
}

/// The digest of values in declared order, this process holding rows `[first, first + n)` of
/// `nrows` as `mine` (collective under MPI: one all-gather).
pub(super) fn digest(comm: &Comm, row_bytes: usize, nrows: u64, first: u64, mine: &[u8]) -> Result<[u8; 32]> {
    let all = comm.all_gather(&pieces(row_bytes, nrows, first, mine))?;
    combine(row_bytes, nrows, &all)
}

/// The first bytes of a digest in hex, for messages.
pub(super) fn short(d: &[u8; 32]) -> String {
    d[..6].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(nrows: u64, row_bytes: usize) -> Vec<u8> {
        (0..nrows as usize * row_bytes).map(|i| (i * 7 + i / 13) as u8).collect()
    }

    /// The digest of the rows split at `cuts` (global row numbers) into blocks.
    fn split(row_bytes: usize, v: &[u8], cuts: &[u64]) -> [u8; 32] {
        let nrows = (v.len() / row_bytes) as u64;
        let mut bounds = vec![0];
        bounds.extend_from_slice(cuts);
        bounds.push(nrows);
        let all: Vec<Vec<u8>> = bounds
            .windows(2)
            .rev() // any order
            .map(|w| pieces(row_bytes, nrows, w[0], &v[w[0] as usize * row_bytes..w[1] as usize * row_bytes]))
            .collect();
        combine(row_bytes, nrows, &all).unwrap_or_else(|e| panic!("{row_bytes} x {nrows} at {cuts:?}: {e:?}"))
    }

    #[test]
    fn the_same_whatever_the_split() {
        for (row_bytes, nrows) in [(8usize, 20000u64), (16, 4097), (4, 5), (70000, 3), (32, 0)] {
            let v = values(nrows, row_bytes);
            let whole = split(row_bytes, &v, &[]);
            let k = rows_per_chunk(row_bytes);
            let cuts: Vec<Vec<u64>> = vec![
                vec![nrows / 2],
                vec![1.min(nrows), nrows / 3, nrows / 3 + 1, nrows.saturating_sub(1)],
                vec![k.min(nrows), (k + 1).min(nrows)],
                vec![0, 0, nrows], // processes with nothing
            ];
            for c in cuts {
                let mut c: Vec<u64> = c.into_iter().map(|x| x.min(nrows)).collect();
                c.sort();
                assert_eq!(split(row_bytes, &v, &c), whole, "{row_bytes} x {nrows} split at {c:?}");
            }
        }
    }

    #[test]
    fn other_values_other_digest() {
        let v = values(5000, 8);
        let mut w = v.clone();
        w[8 * 4321 + 3] ^= 1;
        assert_ne!(split(8, &v, &[2500]), split(8, &w, &[2500]));
        // the row size is part of the digest: the same bytes as other rows differ
        assert_ne!(split(8, &v, &[]), split(16, &v, &[]));
    }

    #[test]
    fn pieces_that_do_not_cover_are_refused() {
        let v = values(100, 8);
        let a = pieces(8, 100, 0, &v[..8 * 50]);
        assert!(combine(8, 100, &[a]).is_err());
    }
}
