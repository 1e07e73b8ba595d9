//! Collective output under MPI without a whole set on any process: `op_print_dat_to_txtfile` /
//! `op_print_dat_to_binfile` stream the dat through process 0 block by block, and
//! `op_fetch_data_idx` moves only the rows of its range. A layer beside `dist` (above
//! `Context`).
//!
//! Printing: every process first gets its declared block of the dat in original order
//! (`dist::dat_block`: each owned row goes straight to its block holder, O(N/P) per process).
//! Process 0 then writes the file in original order: its own block, then process 1's, and so
//! on, each block arriving point to point in pieces of at most `PIECE` bytes. Process 0 holds
//! its own block, one received piece and its write buffer; no process holds the whole dat.
//! The bytes written are those of `core::output` (byte-identical to one process's file).

use super::dist;
use crate::context::Context;
use crate::core::{DatId, ElemType};
use crate::error::Result;
use crate::op2_bail;
use std::io::Write;

/// The tag of the pieces sent to process 0 (one sender at a time per tag and pair, in order).
const PIECE_TAG: i32 = 7101;
/// The most bytes of rows in one message to process 0 (a whole number of rows, at least one).
const PIECE: usize = 1 << 20;

/// What a dat is printed as: `core::output`'s text or binary format.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Format {
    Text,
    Binary,
}

/// The file process 0 writes as the rows arrive: created at the start, written through a
/// buffer, and on a failed write removed (nothing half-written stays under the name asked
/// for; `io::write_whole`'s contract). After the first error the rest is read and dropped.
struct Out {
    path: String,
    file: Option<std::io::BufWriter<std::fs::File>>,
    err: Option<String>,
    format: Format,
    dim: usize,
    ty: ElemType,
    text: String,
}

impl Out {
    fn create(path: &str, format: Format, n: usize, dim: usize, ty: ElemType) -> Out {
        let mut o = Out { path: path.to_string(), file: None, err: None, format, dim, ty, text: String::new() };
        match std::fs::File::create(path) {
            Ok(f) => o.file = Some(std::io::BufWriter::with_capacity(1 << 20, f)),
            Err(e) => o.err = Some(e.to_string()),
        }
        match format {
            Format::Text => o.put(format!("{n} {dim}\n").as_bytes()),
            Format::Binary => {
                let mut h = (n as i32).to_ne_bytes().to_vec();
                h.extend_from_slice(&(dim as i32).to_ne_bytes());
                o.put(&h)
            }
        }
        o
    }

    fn put(&mut self, bytes: &[u8]) {
        if self.err.is_some() {
            return;
        }
        if let Some(f) = self.file.as_mut() {
            if let Err(e) = f.write_all(bytes) {
                self.fail(e.to_string());
            }
        }
    }

    /// A failed write: the file is closed and removed; the error says whether that worked.
    fn fail(&mut self, e: String) {
        let written = self.file.take().map(|w| w.into_parts().0);
        self.err = Some(format!("{e}{}", crate::core::file::discard_note(&self.path, written.as_ref())));
    }

    /// Rows of the dat (whole rows, original order), in the file's format.
    fn rows(&mut self, rows: &[u8]) {
        if self.err.is_some() {
            return;
        }
        match self.format {
            Format::Binary => self.put(rows),
            Format::Text => {
                let ts = self.ty.size();
                let mut text = std::mem::take(&mut self.text);
                text.clear();
                for row in rows.chunks_exact(self.dim * ts) {
                    for v in row.chunks_exact(ts) {
                        crate::core::output::push_txt_value(&mut text, self.ty, v);
                    }
                    text.push('\n');
                }
                self.put(text.as_bytes());
                self.text = text;
            }
        }
    }

    fn finish(mut self) -> std::result::Result<(), String> {
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        match self.file.take().map(|mut f| f.flush()) {
            Some(Err(e)) => {
                self.fail(e.to_string());
                Err(self.err.take().unwrap_or_default())
            }
            _ => Ok(()),
        }
    }
}

/// `op_print_dat_to_txtfile` / `op_print_dat_to_binfile` under MPI (collective): process 0
/// writes `path` in original order from the declared blocks, streamed to it one piece at a
/// time. Returns this process's outcome (an I/O error only on process 0), which the caller
/// agrees on.
pub fn print_dat(ctx: &mut Context, d: DatId, path: &str, format: Format, call: &str) -> Result<()> {
    ctx.sync_to_host(d)?;
    let block = dist::dat_block(ctx, d)?;
    let dv = &ctx.dats[d.0 as usize];
    let (eb, dim, ty, set) = (dv.elem_bytes(), dv.dim, dv.ty, dv.set);
    let name = dv.name.clone();
    let rows_per_piece = (PIECE / eb.max(1)).max(1);
    let piece_bytes = rows_per_piece * eb;
    if ctx.comm.rank() != 0 {
        if eb > 0 {
            for piece in block.chunks(piece_bytes) {
                ctx.comm.send_to(piece, 0, PIECE_TAG)?;
            }
        }
        return Ok(());
    }
    let n = dist::global_size(ctx, set);
    let mut out = Out::create(path, format, n, dim, ty);
    if eb > 0 {
        // Its own block in pieces too, so the text buffer stays one piece's worth.
        for piece in block.chunks(piece_bytes) {
            out.rows(piece);
        }
        drop(block);
        let offsets = ctx.comm.sets[set.0 as usize].offsets.clone();
        let mut buf = vec![0u8; piece_bytes.min(offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0) * eb)];
        for (q, w) in offsets.windows(2).enumerate().skip(1) {
            let mut left = (w[1] - w[0]) * eb;
            while left > 0 {
                let k = left.min(piece_bytes);
                ctx.comm.recv_from(&mut buf[..k], q as i32, PIECE_TAG)?;
                out.rows(&buf[..k]);
                left -= k;
            }
        }
    }
    match out.finish() {
        Ok(()) => Ok(()),
        Err(e) => op2_bail!(Io, "{call} '{name}': cannot write '{path}': {e}"),
    }
}

/// `op_fetch_data_idx` under MPI (collective): rows `low..=high` (original numbering) of the
/// dat into `out` on every process. Each process contributes only its owned rows inside the
/// range (with their original indices), so what moves is the range, not the set.
pub fn fetch_range(ctx: &mut Context, d: DatId, low: usize, high: usize, out: &mut [u8]) -> Result<()> {
    ctx.sync_to_host(d)?;
    let dv = &ctx.dats[d.0 as usize];
    let eb = dv.elem_bytes();
    let data = dv.data.as_slice();
    // [count u64][original indices u32][rows]
    let mut idx: Vec<u32> = Vec::new();
    let mut rows: Vec<u8> = Vec::new();
    match ctx.comm.layout(dv.set) {
        Some(l) => {
            for (i, g) in l.gids.range(0, l.owned).enumerate() {
                if (low..=high).contains(&(g as usize)) {
                    idx.push(g);
                    rows.extend_from_slice(&data[i * eb..(i + 1) * eb]);
                }
            }
        }
        None => {
            let off = dist::global_offset(ctx, dv.set);
            let n = dist::declared_size(ctx, dv.set);
            let (a, b) = (low.max(off), (high + 1).min(off + n));
            if a < b {
                idx.extend((a..b).map(|g| g as u32));
                rows.extend_from_slice(&data[(a - off) * eb..(b - off) * eb]);
            }
        }
    }
    let mut mine = Vec::with_capacity(8 + idx.len() * 4 + rows.len());
    mine.extend_from_slice(&(idx.len() as u64).to_ne_bytes());
    for g in &idx {
        mine.extend_from_slice(&g.to_ne_bytes());
    }
    mine.extend_from_slice(&rows);
    drop((idx, rows));
    let all = ctx.comm.all_gather(&mine)?;
    drop(mine);
    let mut filled = 0usize;
    for b in &all {
        let Some(k) = b.get(..8).and_then(|h| h.try_into().ok()).map(|h: [u8; 8]| u64::from_ne_bytes(h) as usize)
        else {
            op2_bail!(Internal, "op_fetch_data_idx: a short message");
        };
        if b.len() != 8 + k * (4 + eb) {
            op2_bail!(Internal, "op_fetch_data_idx: {} bytes for {k} rows of {eb}", b.len());
        }
        let (gids, body) = b[8..].split_at(4 * k);
        for (c, row) in gids.chunks_exact(4).zip(body.chunks_exact(eb.max(1))) {
            let g = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as usize;
            let at = (g - low) * eb;
            out[at..at + eb].copy_from_slice(row);
        }
        filled += k;
    }
    if filled != high - low + 1 {
        op2_bail!(Internal, "op_fetch_data_idx: {filled} rows received for the {} of [{low}, {high}]", high - low + 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("op2-stream-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Rows given in pieces of any size give `core::output`'s file byte for byte.
    #[test]
    fn pieces_make_the_one_process_file() {
        let dir = tmp("pieces");
        let vals: Vec<f64> = (0..30).map(|i| (i as f64 - 7.5) * 1.25e-3).collect();
        let rows: Vec<u8> = vals.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let (n, dim, eb) = (10, 3, 24);
        for (format, want) in [
            (Format::Text, crate::core::output::txt(n, dim, ElemType::Double, &rows).into_bytes()),
            (Format::Binary, crate::core::output::bin(n, dim, &rows)),
        ] {
            for rows_per_piece in [1, 3, 10] {
                let p = dir.join(format!("{format:?}-{rows_per_piece}"));
                let mut o = Out::create(p.to_str().unwrap(), format, n, dim, ElemType::Double);
                for piece in rows.chunks(rows_per_piece * eb) {
                    o.rows(piece);
                }
                o.finish().unwrap();
                assert_eq!(std::fs::read(&p).unwrap(), want, "{format:?} in pieces of {rows_per_piece} rows");
            }
        }
        // dim 0: the header alone, as one process writes it.
        let p = dir.join("dim0");
        Out::create(p.to_str().unwrap(), Format::Text, 4, 0, ElemType::Int).finish().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), crate::core::output::txt(4, 0, ElemType::Int, &[]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file that cannot be created is an error at the end, and the rows are dropped.
    #[test]
    fn unwritable_path_is_an_error() {
        let dir = tmp("unwritable");
        let p = dir.join("no-such-dir").join("x.txt");
        let mut o = Out::create(p.to_str().unwrap(), Format::Text, 1, 1, ElemType::Int);
        o.rows(&7i32.to_ne_bytes());
        let e = o.finish().unwrap_err();
        assert!(e.contains("No such file"), "{e}");
        assert!(!p.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
