//! VTK output for ParaView: an unstructured grid from a cells-to-nodes map and node coordinates,
//! with dats as point data (on the node set) or cell data (on the cell set).
//!
//! Formats, chosen by the file's extension and `flags`:
//! - `.vtu` XML (`UnstructuredGrid`, `header_type="UInt64"`): appended raw (default), ASCII, or
//!   appended base64 (each array one base64 block of its 8-byte length and its bytes, offsets
//!   counted in characters after the `_`).
//! - `.vtk` legacy 3.0: big-endian binary (default) or ASCII; dats as `FIELD` arrays.
//!
//! Under MPI (after `op_partition`) each process writes a `.vtu` piece `<stem>_<rank>.vtu` and
//! process 0 the `<stem>.pvtu` index (`write_pieces`); legacy `.vtk` is refused there.
//!
//! ASCII keeps full precision (`%.17g` for double, `%.9g` for float), so every mode round-trips
//! exactly. Connectivity is Int32 (op2's map values); offsets are Int32 unless the connectivity
//! has more than 2^31-1 entries (then Int64).

use crate::context::Context;
use crate::context::Rows;
use crate::core::{DatId, ElemType, MapId};
use crate::error::Result;
use crate::{op2_bail, op2_err};
use std::borrow::Cow;
use std::io::Write;

/// `flags` of `op_write_vtk`.
pub const OP_VTK_BINARY: i32 = 0;
pub const OP_VTK_ASCII: i32 = 1;
pub const OP_VTK_BASE64: i32 = 2;

/// How array values are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `.vtu` appended raw; `.vtk` big-endian binary.
    Binary,
    Ascii,
    /// `.vtu` only: appended base64.
    Base64,
}

/// Which file layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Xml,
    Legacy,
}

/// One array: `ncomp` components of `ty` per tuple, native byte order.
pub struct Array<'a> {
    pub name: String,
    pub ty: ElemType,
    pub ncomp: usize,
    pub data: Cow<'a, [u8]>,
}

impl Array<'_> {
    fn tuples(&self) -> usize {
        self.data.len() / (self.ncomp * self.ty.size()).max(1)
    }
}

/// An unstructured grid with one cell type.
pub struct Grid<'a> {
    /// 3 components per point (2-D coordinates padded with z = 0), double or float.
    pub points: Array<'a>,
    /// Nodes per cell.
    pub nodes_per_cell: usize,
    /// VTK cell type: 3 line, 5 triangle, 9 quad, 10 tetrahedron, 12 hexahedron.
    pub cell_type: u8,
    /// `ncells * nodes_per_cell` 0-based point indices.
    pub connectivity: &'a [i32],
    pub point_data: Vec<Array<'a>>,
    pub cell_data: Vec<Array<'a>>,
}

impl Grid<'_> {
    fn npoints(&self) -> usize {
        self.points.tuples()
    }
    fn ncells(&self) -> usize {
        self.connectivity.len() / self.nodes_per_cell.max(1)
    }
}

/// The VTK cell type for `nodes` nodes per cell in `space_dim` dimensions.
pub fn cell_type(nodes: usize, space_dim: usize) -> Option<u8> {
    match (nodes, space_dim) {
        (2, _) => Some(3),
        (3, _) => Some(5),
        (4, 2) => Some(9),
        (4, 3) => Some(10),
        (8, 3) => Some(12),
        _ => None,
    }
}

/// Builds the grid from op2 objects and writes it; `call` names the C function in errors.
/// Under MPI (collective): each process writes its piece `<stem>_<rank>.vtu` (its owned cells
/// and the nodes they use) and process 0 writes `<stem>.pvtu` naming the pieces; see
/// `write_pieces`.
pub fn write_vtk(
    ctx: &mut Context,
    path: &str,
    cells: MapId,
    coords: DatId,
    dats: &[DatId],
    flags: i32,
    call: &str,
) -> Result<()> {
    let encoding = match flags {
        OP_VTK_BINARY => Encoding::Binary,
        OP_VTK_ASCII => Encoding::Ascii,
        OP_VTK_BASE64 => Encoding::Base64,
        _ => op2_bail!(
            BadSize,
            "{call} '{path}': flags {flags} is not OP_VTK_BINARY (0), OP_VTK_ASCII (1) or OP_VTK_BASE64 (2)"
        ),
    };
    let lower = path.to_ascii_lowercase();
    if ctx.comm.distributed() {
        return write_pieces(ctx, path, cells, coords, dats, encoding, call);
    }
    let format = if lower.ends_with(".vtu") {
        Format::Xml
    } else if lower.ends_with(".vtk") {
        Format::Legacy
    } else {
        op2_bail!(BadName, "{call} '{path}': the file name must end in .vtu (XML) or .vtk (legacy)");
    };
    if format == Format::Legacy && encoding == Encoding::Base64 {
        op2_bail!(BadSize, "{call} '{path}': OP_VTK_BASE64 is for .vtu files only (legacy .vtk is binary or ASCII)");
    }
    let ctype = check_grid(ctx, path, cells, coords, dats, call, format)?;
    let map = &ctx.maps[cells.0 as usize];
    let cx = &ctx.dats[coords.0 as usize];
    // Everything in the declared order (points, cells, their values, node numbers), whatever
    // storage order op_renumber chose: the file is the same with or without it.
    let mut point_data = Vec::new();
    let mut cell_data = Vec::new();
    for &d in dats {
        let dv = &ctx.dats[d.0 as usize];
        let data = ctx.all_declared_rows(Rows::Dat(d), call)?;
        let arr = Array { name: dv.name.clone(), ty: dv.ty, ncomp: dv.dim, data };
        if dv.set == map.to {
            point_data.push(arr);
        } else {
            cell_data.push(arr);
        }
    }
    let points = pad_points(&ctx.all_declared_rows(Rows::Dat(coords), call)?, cx.ty, cx.dim);
    let conn_bytes = ctx.all_declared_rows(Rows::Map(cells), call)?;
    let mut connectivity: Vec<i32> = crate::core::alloc::with_capacity(conn_bytes.len() / 4, call)?;
    connectivity.extend(conn_bytes.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])));
    let grid = Grid {
        points: Array { name: "Points".into(), ty: cx.ty, ncomp: 3, data: Cow::Owned(points) },
        nodes_per_cell: map.dim,
        cell_type: ctype,
        connectivity: &connectivity,
        point_data,
        cell_data,
    };
    let file = std::fs::File::create(path).map_err(|e| op2_err!(Io, "{call}: cannot create '{path}': {e}"))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, &file);
    let written = match format {
        Format::Xml => write_vtu(&mut out, &grid, encoding),
        Format::Legacy => write_legacy(&mut out, &grid, encoding),
    };
    let written = written.and_then(|_| out.flush());
    drop(out);
    // Nothing half-written stays behind under the name asked for (a symlink there is kept:
    // the file it leads to goes).
    written.map_err(|e| {
        op2_err!(Io, "{call}: cannot write '{path}': {e}{}", crate::core::file::discard_note(path, Some(&file)))
    })
}

/// Checks the arguments of `op_write_vtk` (sets, dims, types) and returns the VTK cell type.
fn check_grid(
    ctx: &Context,
    path: &str,
    cells: MapId,
    coords: DatId,
    dats: &[DatId],
    call: &str,
    format: Format,
) -> Result<u8> {
    let map = &ctx.maps[cells.0 as usize];
    let cx = &ctx.dats[coords.0 as usize];
    let set_name = |s: crate::core::SetId| ctx.sets[s.0 as usize].name.as_str();
    if cx.set != map.to {
        op2_bail!(
            ArgSet,
            "{call} '{path}': coordinates '{}' live on set '{}' but map '{}' targets set '{}'",
            cx.name,
            set_name(cx.set),
            map.name,
            set_name(map.to)
        );
    }
    if cx.dim != 2 && cx.dim != 3 {
        op2_bail!(BadSize, "{call} '{path}': coordinates '{}' have dim {}; 2 or 3 needed", cx.name, cx.dim);
    }
    if cx.ty != ElemType::Double && cx.ty != ElemType::Float {
        op2_bail!(
            BadType,
            "{call} '{path}': coordinates '{}' are '{}'; double or float needed",
            cx.name,
            cx.ty.api_name()
        );
    }
    let Some(ctype) = cell_type(map.dim, cx.dim) else {
        op2_bail!(
            BadSize,
            "{call} '{path}': map '{}' has dim {} with {}-D coordinates; VTK cells need 2 (line), 3 (triangle), 4 (quad in 2-D, tetrahedron in 3-D) or 8 (hexahedron, 3-D)",
            map.name,
            map.dim,
            cx.dim
        );
    };
    for (i, &d) in dats.iter().enumerate() {
        let dv = &ctx.dats[d.0 as usize];
        if dv.set != map.to && dv.set != map.from {
            op2_bail!(
                ArgSet,
                "{call} '{path}': dats[{i}] '{}' lives on set '{}', neither the cell set '{}' nor the node set '{}' of map '{}'",
                dv.name,
                set_name(dv.set),
                set_name(map.from),
                set_name(map.to),
                map.name
            );
        }
        // Two arrays of one name in one section of the file: a reader keeps one of them.
        let written = |dv: &crate::core::Dat| match format {
            Format::Legacy => legacy_name(&dv.name),
            Format::Xml => dv.name.clone(),
        };
        let section = |dv: &crate::core::Dat| if dv.set == map.to { "point" } else { "cell" };
        if let Some((j, &e)) = dats[..i].iter().enumerate().find(|&(_, &e)| {
            let ev = &ctx.dats[e.0 as usize];
            section(ev) == section(dv) && written(ev) == written(dv)
        }) {
            let ev = &ctx.dats[e.0 as usize];
            op2_bail!(
                FileFormat,
                "{call} '{path}': dats[{j}] '{}' and dats[{i}] '{}' would both be the {} data array '{}' (array names in one section of a VTK file must differ); nothing was written",
                ev.name,
                dv.name,
                section(dv),
                written(dv)
            );
        }
    }
    Ok(ctype)
}

/// `op_write_vtk` under MPI (collective, after `op_partition`): process r writes the piece
/// `<stem>_<r>.vtu` (`path` ends in `.vtu` or `.pvtu`): its owned cells, the nodes they use
/// (owned or halo copies, refreshed first when a loop has changed them), point data of those
/// nodes and cell data of its cells; process 0 then writes `<stem>.pvtu`, which names the
/// pieces (by file name, so the set of files can move together) and declares the arrays.
/// Legacy `.vtk` has no multi-piece form and is refused by name. Every outcome is agreed
/// among the processes, so an error anywhere is an error everywhere.
fn write_pieces(
    ctx: &mut Context,
    path: &str,
    cells: MapId,
    coords: DatId,
    dats: &[DatId],
    encoding: Encoding,
    call: &str,
) -> Result<()> {
    let lower = path.to_ascii_lowercase();
    let stem = if lower.ends_with(".pvtu") {
        &path[..path.len() - 5]
    } else if lower.ends_with(".vtu") {
        &path[..path.len() - 4]
    } else if lower.ends_with(".vtk") {
        op2_bail!(
            BadName,
            "{call} '{path}': legacy .vtk holds one piece; under MPI ({} processes) name a .vtu (or .pvtu) file: each process writes <stem>_<rank>.vtu and process 0 <stem>.pvtu, which ParaView opens as one mesh",
            ctx.comm.size()
        );
    } else {
        op2_bail!(BadName, "{call} '{path}': the file name must end in .vtu or .pvtu under MPI");
    };
    if !ctx.comm.partitioned {
        op2_bail!(
            BadConfig,
            "{call} '{path}': under MPI call op_partition first (\"BLOCK\" keeps the declared distribution): a piece needs the halo nodes of its cells"
        );
    }
    let ctype = check_grid(ctx, path, cells, coords, dats, call, Format::Xml)?;
    let node_set = ctx.maps[cells.0 as usize].to;
    // Point values of halo nodes must be current: refresh those a loop has changed.
    let mut stale: Vec<DatId> = Vec::new();
    for &d in std::iter::once(&coords).chain(dats) {
        let dv = &ctx.dats[d.0 as usize];
        if dv.set == node_set && dv.halo_dirty && !stale.contains(&d) {
            stale.push(d);
        }
    }
    for &d in &stale {
        ctx.host_data(d, true)?;
    }
    if !stale.is_empty() {
        let ex = ctx.comm.halo_exchange_begin(&mut ctx.dats, stale, None)?;
        for d in ctx.comm.halo_exchange_end(ex, None)? {
            ctx.dats[d.0 as usize].halo_dirty = false;
        }
    }
    let rank = ctx.comm.rank();
    let piece = format!("{stem}_{rank}.vtu");
    let written = (|| -> Result<()> {
        let map = &ctx.maps[cells.0 as usize];
        let cx = &ctx.dats[coords.0 as usize];
        let owned = ctx.sets[map.from.0 as usize].size;
        let nodes_total = ctx.sets[map.to.0 as usize].total;
        // The nodes of the owned cells, in local order, renumbered 0..
        let mut local = vec![-1i32; nodes_total];
        let conn_local = &map.values[..owned * map.dim];
        for &t in conn_local {
            local[t as usize] = 0;
        }
        let mut used: Vec<usize> = Vec::new();
        for (i, l) in local.iter_mut().enumerate() {
            if *l == 0 {
                *l = used.len() as i32;
                used.push(i);
            }
        }
        let connectivity: Vec<i32> = conn_local.iter().map(|&t| local[t as usize]).collect();
        let rows = |d: DatId, which: &[usize]| -> Vec<u8> {
            let dv = &ctx.dats[d.0 as usize];
            let eb = dv.elem_bytes();
            let data = dv.data.as_slice();
            let mut out = Vec::with_capacity(which.len() * eb);
            for &i in which {
                out.extend_from_slice(&data[i * eb..(i + 1) * eb]);
            }
            out
        };
        let mut point_data = Vec::new();
        let mut cell_data = Vec::new();
        for &d in dats {
            let dv = &ctx.dats[d.0 as usize];
            if dv.set == map.to {
                let data = Cow::Owned(rows(d, &used));
                point_data.push(Array { name: dv.name.clone(), ty: dv.ty, ncomp: dv.dim, data });
            } else {
                let data = Cow::Borrowed(&dv.data.as_slice()[..owned * dv.elem_bytes()]);
                cell_data.push(Array { name: dv.name.clone(), ty: dv.ty, ncomp: dv.dim, data });
            }
        }
        let points = pad_points(&rows(coords, &used), cx.ty, cx.dim);
        let grid = Grid {
            points: Array { name: "Points".into(), ty: cx.ty, ncomp: 3, data: Cow::Owned(points) },
            nodes_per_cell: map.dim,
            cell_type: ctype,
            connectivity: &connectivity,
            point_data,
            cell_data,
        };
        let file = std::fs::File::create(&piece).map_err(|e| op2_err!(Io, "{call}: cannot create '{piece}': {e}"))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        write_vtu(&mut out, &grid, encoding)
            .and_then(|_| out.flush())
            .map_err(|e| op2_err!(Io, "{call}: cannot write '{piece}': {e}"))
    })();
    ctx.comm.agree(written)?;
    let index = if rank == 0 { write_pvtu(ctx, stem, cells, coords, dats, call) } else { Ok(()) };
    ctx.comm.agree(index)
}

/// `<stem>.pvtu`: the arrays every piece holds and the pieces `<stem>_<r>.vtu` (file names
/// relative to the .pvtu's directory).
fn write_pvtu(ctx: &Context, stem: &str, cells: MapId, coords: DatId, dats: &[DatId], call: &str) -> Result<()> {
    let map = &ctx.maps[cells.0 as usize];
    let byte_order = if cfg!(target_endian = "little") { "LittleEndian" } else { "BigEndian" };
    let mut h = String::new();
    h.push_str("<?xml version=\"1.0\"?>\n");
    h.push_str(&format!(
        "<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"{byte_order}\" header_type=\"UInt64\">\n"
    ));
    h.push_str("  <PUnstructuredGrid GhostLevel=\"0\">\n");
    let decl = |d: DatId| {
        let dv = &ctx.dats[d.0 as usize];
        let comps = if dv.dim > 1 { format!(" NumberOfComponents=\"{}\"", dv.dim) } else { String::new() };
        format!("      <PDataArray type=\"{}\" Name=\"{}\"{comps}/>\n", xml_type(dv.ty), xml_escape(&dv.name))
    };
    for (tag, set) in [("PPointData", map.to), ("PCellData", map.from)] {
        let on: Vec<DatId> = dats.iter().copied().filter(|&d| ctx.dats[d.0 as usize].set == set).collect();
        if on.is_empty() {
            continue;
        }
        h.push_str(&format!("    <{tag}>\n"));
        for d in on {
            h.push_str(&decl(d));
        }
        h.push_str(&format!("    </{tag}>\n"));
    }
    h.push_str("    <PPoints>\n");
    h.push_str(&format!(
        "      <PDataArray type=\"{}\" NumberOfComponents=\"3\"/>\n",
        xml_type(ctx.dats[coords.0 as usize].ty)
    ));
    h.push_str("    </PPoints>\n");
    let base = std::path::Path::new(stem).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    for r in 0..ctx.comm.size() {
        h.push_str(&format!("    <Piece Source=\"{}_{r}.vtu\"/>\n", xml_escape(&base)));
    }
    h.push_str("  </PUnstructuredGrid>\n</VTKFile>\n");
    let path = format!("{stem}.pvtu");
    crate::core::file::write_whole(&path, h.as_bytes()).map_err(|e| op2_err!(Io, "{call}: cannot write '{path}': {e}"))
}

/// Coordinates of `dim` (2 or 3) components padded to 3, in the same element type.
pub fn pad_points(src: &[u8], ty: ElemType, dim: usize) -> Vec<u8> {
    let ts = ty.size();
    if dim == 3 {
        return src.to_vec();
    }
    let n = src.len() / (dim * ts);
    let mut out = vec![0u8; n * 3 * ts];
    for (o, i) in out.chunks_exact_mut(3 * ts).zip(src.chunks_exact(dim * ts)) {
        o[..dim * ts].copy_from_slice(i);
    }
    out
}

fn xml_type(ty: ElemType) -> &'static str {
    match ty {
        ElemType::Double => "Float64",
        ElemType::Float => "Float32",
        ElemType::Int => "Int32",
        ElemType::Uint => "UInt32",
        ElemType::Ll => "Int64",
        ElemType::Ull => "UInt64",
        ElemType::Bool => "UInt8",
    }
}

fn legacy_type(ty: ElemType) -> &'static str {
    match ty {
        ElemType::Double => "double",
        ElemType::Float => "float",
        ElemType::Int => "int",
        ElemType::Uint => "unsigned_int",
        // "long" is 64-bit on the LP64 systems op2 runs on; meshio's legacy reader knows no
        // "vtktypeint64"
        ElemType::Ll => "long",
        ElemType::Ull => "unsigned_long",
        ElemType::Bool => "unsigned_char",
    }
}

fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

/// Legacy names cannot hold white space; empty names become `unnamed`.
fn legacy_name(s: &str) -> String {
    if s.is_empty() {
        return "unnamed".into();
    }
    s.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect()
}

/// The bytes of an i32 slice (native order).
fn i32_bytes(v: &[i32]) -> &[u8] {
    // SAFETY: i32 has no padding and any byte view of it is valid; u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// The three cell arrays: connectivity, offsets, types.
fn cell_arrays<'a>(g: &Grid<'a>) -> [Array<'a>; 3] {
    let n = g.ncells();
    let npc = g.nodes_per_cell;
    let total = n * npc;
    let offsets = if total <= i32::MAX as usize {
        let mut v = Vec::with_capacity(n * 4);
        for c in 1..=n {
            v.extend_from_slice(&((c * npc) as i32).to_ne_bytes());
        }
        Array { name: "offsets".into(), ty: ElemType::Int, ncomp: 1, data: Cow::Owned(v) }
    } else {
        let mut v = Vec::with_capacity(n * 8);
        for c in 1..=n {
            v.extend_from_slice(&((c * npc) as i64).to_ne_bytes());
        }
        Array { name: "offsets".into(), ty: ElemType::Ll, ncomp: 1, data: Cow::Owned(v) }
    };
    [
        Array {
            name: "connectivity".into(),
            ty: ElemType::Int,
            ncomp: 1,
            data: Cow::Borrowed(i32_bytes(g.connectivity)),
        },
        offsets,
        Array { name: "types".into(), ty: ElemType::Bool, ncomp: 1, data: Cow::Owned(vec![g.cell_type; n]) },
    ]
}

/// ASCII values of an array, `per_line` tuples per line, each line indented by `indent`.
fn write_ascii_values(w: &mut dyn Write, a: &Array, indent: &str, tuples_per_line: usize) -> std::io::Result<()> {
    let ts = a.ty.size();
    let per_line = (a.ncomp * tuples_per_line).max(1);
    let mut line = String::new();
    for chunk in a.data.chunks(per_line * ts) {
        line.clear();
        line.push_str(indent);
        for (k, v) in chunk.chunks_exact(ts).enumerate() {
            if k > 0 {
                line.push(' ');
            }
            if a.ty == ElemType::Bool {
                // UInt8 / unsigned_char: the byte's value (cell types are 1..=12)
                line.push_str(&v[0].to_string());
            } else {
                line.push_str(&a.ty.format_value(v));
            }
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

/// Standard base64 (with padding) of `parts` concatenated.
fn base64_write(w: &mut dyn Write, parts: &[&[u8]]) -> std::io::Result<()> {
    let mut carry = [0u8; 3];
    let mut nc = 0;
    let mut out = Vec::with_capacity(1 << 16);
    let emit = |b: &[u8; 3], n: usize, out: &mut Vec<u8>| {
        let v = ((b[0] as u32) << 16) | ((b[1] as u32) << 8) | b[2] as u32;
        out.push(B64[(v >> 18) as usize & 63]);
        out.push(B64[(v >> 12) as usize & 63]);
        out.push(if n > 1 { B64[(v >> 6) as usize & 63] } else { b'=' });
        out.push(if n > 2 { B64[v as usize & 63] } else { b'=' });
    };
    for p in parts {
        for &byte in p.iter() {
            carry[nc] = byte;
            nc += 1;
            if nc == 3 {
                emit(&carry, 3, &mut out);
                nc = 0;
                if out.len() >= 1 << 16 {
                    w.write_all(&out)?;
                    out.clear();
                }
            }
        }
    }
    if nc > 0 {
        carry[nc..].fill(0);
        emit(&carry, nc, &mut out);
    }
    w.write_all(&out)
}

/// Writes a `.vtu` file.
pub fn write_vtu(w: &mut dyn Write, g: &Grid, enc: Encoding) -> std::io::Result<()> {
    let cells = cell_arrays(g);
    let byte_order = if cfg!(target_endian = "little") { "LittleEndian" } else { "BigEndian" };
    // The arrays in header order: point data, cell data, points, cells. The appended section
    // holds them in the reverse order (the last header array at offset 0): any order is valid
    // VTK, and this one keeps meshio's raw reader (which rewrites offsets while it searches
    // them, meshio issue #1135) from matching an already rewritten offset.
    let ordered: Vec<&Array> =
        g.point_data.iter().chain(g.cell_data.iter()).chain(std::iter::once(&g.points)).chain(cells.iter()).collect();
    let mut offsets = vec![0usize; ordered.len()];
    let mut off = 0usize;
    for (k, a) in ordered.iter().enumerate().rev() {
        offsets[k] = off;
        off += match enc {
            Encoding::Binary => 8 + a.data.len(),
            Encoding::Base64 => base64_len(8 + a.data.len()),
            Encoding::Ascii => 0,
        };
    }
    let mut h = String::new();
    h.push_str("<?xml version=\"1.0\"?>\n");
    h.push_str(&format!(
        "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"{byte_order}\" header_type=\"UInt64\">\n"
    ));
    h.push_str("  <UnstructuredGrid>\n");
    h.push_str(&format!("    <Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">\n", g.npoints(), g.ncells()));
    w.write_all(h.as_bytes())?;
    let mut idx = 0usize;
    let section = |w: &mut dyn Write, tag: &str, arrays: &[&Array], idx: &mut usize| -> std::io::Result<()> {
        if (tag == "PointData" || tag == "CellData") && arrays.is_empty() {
            return Ok(());
        }
        w.write_all(format!("      <{tag}>\n").as_bytes())?;
        for a in arrays {
            let comps = if a.ncomp > 1 || tag == "Points" {
                format!(" NumberOfComponents=\"{}\"", a.ncomp)
            } else {
                String::new()
            };
            let head =
                format!("        <DataArray type=\"{}\" Name=\"{}\"{comps}", xml_type(a.ty), xml_escape(&a.name));
            match enc {
                Encoding::Ascii => {
                    w.write_all(format!("{head} format=\"ascii\">\n").as_bytes())?;
                    let per_line = if a.ncomp == 1 { 6 } else { 1 };
                    write_ascii_values(w, a, "          ", per_line)?;
                    w.write_all(b"        </DataArray>\n")?;
                }
                _ => w.write_all(format!("{head} format=\"appended\" offset=\"{}\"/>\n", offsets[*idx]).as_bytes())?,
            }
            *idx += 1;
        }
        w.write_all(format!("      </{tag}>\n").as_bytes())
    };
    let pd: Vec<&Array> = g.point_data.iter().collect();
    let cd: Vec<&Array> = g.cell_data.iter().collect();
    section(w, "PointData", &pd, &mut idx)?;
    section(w, "CellData", &cd, &mut idx)?;
    section(w, "Points", &[&g.points], &mut idx)?;
    section(w, "Cells", &[&cells[0], &cells[1], &cells[2]], &mut idx)?;
    w.write_all(b"    </Piece>\n  </UnstructuredGrid>\n")?;
    match enc {
        Encoding::Ascii => {}
        Encoding::Binary => {
            w.write_all(b"  <AppendedData encoding=\"raw\">\n   _")?;
            for a in ordered.iter().rev() {
                w.write_all(&(a.data.len() as u64).to_ne_bytes())?;
                w.write_all(&a.data)?;
            }
            w.write_all(b"\n  </AppendedData>\n")?;
        }
        Encoding::Base64 => {
            w.write_all(b"  <AppendedData encoding=\"base64\">\n   _")?;
            for a in ordered.iter().rev() {
                base64_write(w, &[&(a.data.len() as u64).to_ne_bytes(), &a.data])?;
            }
            w.write_all(b"\n  </AppendedData>\n")?;
        }
    }
    w.write_all(b"</VTKFile>\n")
}

/// Big-endian bytes of native-order values of `ts` bytes each.
fn write_be(w: &mut dyn Write, data: &[u8], ts: usize) -> std::io::Result<()> {
    if cfg!(target_endian = "big") || ts == 1 {
        return w.write_all(data);
    }
    let mut buf = Vec::with_capacity((1 << 16) + ts);
    for v in data.chunks_exact(ts) {
        buf.extend(v.iter().rev());
        if buf.len() >= 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)
}

fn legacy_array(w: &mut dyn Write, a: &Array, enc: Encoding) -> std::io::Result<()> {
    if enc == Encoding::Ascii {
        let per_line = if a.ncomp == 1 { 6 } else { 1 };
        write_ascii_values(w, a, "", per_line)
    } else {
        write_be(w, &a.data, a.ty.size())?;
        w.write_all(b"\n")
    }
}

/// Writes a legacy `.vtk` file (version 3.0).
pub fn write_legacy(w: &mut dyn Write, g: &Grid, enc: Encoding) -> std::io::Result<()> {
    let n = g.ncells();
    let npc = g.nodes_per_cell;
    w.write_all(b"# vtk DataFile Version 3.0\nop2 output\n")?;
    w.write_all(if enc == Encoding::Ascii { b"ASCII\n" } else { b"BINARY\n" })?;
    w.write_all(b"DATASET UNSTRUCTURED_GRID\n")?;
    w.write_all(format!("POINTS {} {}\n", g.npoints(), legacy_type(g.points.ty)).as_bytes())?;
    legacy_array(w, &g.points, enc)?;
    w.write_all(format!("CELLS {n} {}\n", n * (npc + 1)).as_bytes())?;
    let mut cells = Vec::with_capacity(n * (npc + 1) * 4);
    for row in g.connectivity.chunks_exact(npc.max(1)) {
        cells.extend_from_slice(&(npc as i32).to_ne_bytes());
        cells.extend_from_slice(i32_bytes(row));
    }
    let cells = Array { name: String::new(), ty: ElemType::Int, ncomp: npc + 1, data: Cow::Owned(cells) };
    legacy_array(w, &cells, enc)?;
    w.write_all(format!("CELL_TYPES {n}\n").as_bytes())?;
    let types: Vec<u8> = (0..n).flat_map(|_| (g.cell_type as i32).to_ne_bytes()).collect();
    legacy_array(w, &Array { name: String::new(), ty: ElemType::Int, ncomp: 1, data: Cow::Owned(types) }, enc)?;
    for (head, count, arrays) in [("CELL_DATA", n, &g.cell_data), ("POINT_DATA", g.npoints(), &g.point_data)] {
        if arrays.is_empty() {
            continue;
        }
        w.write_all(format!("{head} {count}\nFIELD FieldData {}\n", arrays.len()).as_bytes())?;
        for a in arrays.iter() {
            w.write_all(
                format!("{} {} {} {}\n", legacy_name(&a.name), a.ncomp, a.tuples(), legacy_type(a.ty)).as_bytes(),
            )?;
            legacy_array(w, a, enc)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2x2 quad mesh of the golden files: 9 nodes on [0,2]^2 (x = i*1.0, y = j*0.5 + 0.1),
    /// 4 cells; point data `u` (1 double per node), cell data `q` (2 doubles per cell) and
    /// `flag` (1 int per cell).
    type Mesh = (Vec<f64>, Vec<i32>, Vec<f64>, Vec<f64>, Vec<i32>);

    fn mesh_2x2() -> Mesh {
        let mut x = Vec::new();
        for j in 0..3 {
            for i in 0..3 {
                x.push(i as f64);
                x.push(j as f64 * 0.5 + 0.1);
            }
        }
        let mut cells = Vec::new();
        for j in 0..2 {
            for i in 0..2 {
                let n0 = j * 3 + i;
                cells.extend_from_slice(&[n0, n0 + 1, n0 + 4, n0 + 3]);
            }
        }
        let u: Vec<f64> = (0..9).map(|k| 1.0 / (k as f64 + 3.0)).collect();
        let q: Vec<f64> = (0..8).map(|k| (k as f64) * 0.25 - 1.0e-7).collect();
        let flag = vec![1, -2, 30, 400];
        (x, cells, u, q, flag)
    }

    fn bytes_f64(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    fn grid<'a>(x: &[f64], cells: &'a [i32], u: &[f64], q: &[f64], flag: &[i32]) -> Grid<'a> {
        Grid {
            points: Array {
                name: "Points".into(),
                ty: ElemType::Double,
                ncomp: 3,
                data: Cow::Owned(pad_points(&bytes_f64(x), ElemType::Double, 2)),
            },
            nodes_per_cell: 4,
            cell_type: 9,
            connectivity: cells,
            point_data: vec![Array {
                name: "u".into(),
                ty: ElemType::Double,
                ncomp: 1,
                data: Cow::Owned(bytes_f64(u)),
            }],
            cell_data: vec![
                Array { name: "q".into(), ty: ElemType::Double, ncomp: 2, data: Cow::Owned(bytes_f64(q)) },
                Array {
                    name: "flag".into(),
                    ty: ElemType::Int,
                    ncomp: 1,
                    data: Cow::Owned(flag.iter().flat_map(|v| v.to_ne_bytes()).collect()),
                },
            ],
        }
    }

    fn render(format: Format, enc: Encoding) -> Vec<u8> {
        let (x, cells, u, q, flag) = mesh_2x2();
        let g = grid(&x, &cells, &u, &q, &flag);
        let mut out = Vec::new();
        match format {
            Format::Xml => write_vtu(&mut out, &g, enc).unwrap(),
            Format::Legacy => write_legacy(&mut out, &g, enc).unwrap(),
        }
        out
    }

    const GOLDEN: [(&str, Format, Encoding); 5] = [
        ("mesh2x2-binary.vtu", Format::Xml, Encoding::Binary),
        ("mesh2x2-ascii.vtu", Format::Xml, Encoding::Ascii),
        ("mesh2x2-base64.vtu", Format::Xml, Encoding::Base64),
        ("mesh2x2-binary.vtk", Format::Legacy, Encoding::Binary),
        ("mesh2x2-ascii.vtk", Format::Legacy, Encoding::Ascii),
    ];

    /// Byte-exact golden files (tests/golden/vtk; `OP2_BLESS=1` rewrites them). The C test
    /// t500-vtk writes the same mesh through `op_write_vtk` and compares with the same files.
    #[test]
    fn golden_files() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/vtk");
        for (name, f, e) in GOLDEN {
            let got = render(f, e);
            let path = dir.join(name);
            if std::env::var_os("OP2_BLESS").is_some() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &got).unwrap();
                continue;
            }
            let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(got == want, "{name} differs from the golden file (OP2_BLESS=1 to rewrite after checking)");
        }
    }

    /// A minimal reader of the appended sections: (name, type, components, bytes) per array.
    fn read_appended(file: &[u8]) -> Vec<(String, String, usize, Vec<u8>)> {
        let start = find(file, b"<AppendedData").expect("AppendedData");
        let head = std::str::from_utf8(&file[..start]).unwrap();
        let enc_raw = find(&file[start..], b"encoding=\"raw\"").is_some();
        let us = start + find(&file[start..], b"_").unwrap() + 1;
        let attr = |tag: &str, key: &str| -> Option<String> {
            let k = format!(" {key}=\"");
            let i = tag.find(&k)? + k.len();
            Some(tag[i..i + tag[i..].find('"')?].to_string())
        };
        let mut out = Vec::new();
        for tag in head.split("<DataArray").skip(1) {
            let tag = &tag[..tag.find('>').unwrap()];
            let off: usize = attr(tag, "offset").unwrap().parse().unwrap();
            let bytes = if enc_raw {
                let len = u64::from_le_bytes(file[us + off..us + off + 8].try_into().unwrap()) as usize;
                file[us + off + 8..us + off + 8 + len].to_vec()
            } else {
                let text = &file[us + off..];
                let end = text.iter().position(|&c| c == b'=' || c == b'\n').unwrap();
                let mut d = b64_decode(&text[..end.min(text.len())]);
                // a block without padding runs into the next one: cut at the length header
                let len = u64::from_le_bytes(d[..8].try_into().unwrap()) as usize;
                d.truncate(8 + len);
                d.split_off(8)
            };
            let ncomp = attr(tag, "NumberOfComponents").map(|s| s.parse().unwrap()).unwrap_or(1);
            out.push((attr(tag, "Name").unwrap(), attr(tag, "type").unwrap(), ncomp, bytes));
        }
        out
    }

    fn b64_decode(s: &[u8]) -> Vec<u8> {
        let val = |c: u8| B64.iter().position(|&b| b == c).unwrap() as u32;
        let mut out = Vec::new();
        let mut acc = 0u32;
        let mut bits = 0;
        for &c in s {
            acc = (acc << 6) | val(c);
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
                acc &= (1 << bits) - 1;
            }
        }
        out
    }

    fn find(h: &[u8], n: &[u8]) -> Option<usize> {
        h.windows(n.len()).position(|w| w == n)
    }

    #[test]
    fn appended_arrays_decode_to_the_inputs() {
        let (x, cells, u, q, flag) = mesh_2x2();
        let mut pts = Vec::new();
        for p in x.chunks(2) {
            pts.extend_from_slice(&[p[0], p[1], 0.0]);
        }
        for enc in [Encoding::Binary, Encoding::Base64] {
            let arrays = read_appended(&render(Format::Xml, enc));
            let names: Vec<&str> = arrays.iter().map(|a| a.0.as_str()).collect();
            assert_eq!(names, ["u", "q", "flag", "Points", "connectivity", "offsets", "types"], "{enc:?}");
            let f64s =
                |b: &[u8]| -> Vec<f64> { b.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect() };
            let i32s =
                |b: &[u8]| -> Vec<i32> { b.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect() };
            assert_eq!(f64s(&arrays[0].3), u);
            assert_eq!((arrays[1].1.as_str(), arrays[1].2), ("Float64", 2));
            assert_eq!(f64s(&arrays[1].3), q);
            assert_eq!(i32s(&arrays[2].3), flag);
            assert_eq!((arrays[3].1.as_str(), arrays[3].2), ("Float64", 3));
            assert_eq!(f64s(&arrays[3].3), pts);
            assert_eq!(i32s(&arrays[4].3), cells);
            assert_eq!(i32s(&arrays[5].3), [4, 8, 12, 16]);
            assert_eq!(arrays[6].3, [9u8; 4]);
        }
    }

    #[test]
    fn ascii_round_trips_exactly() {
        let text = String::from_utf8(render(Format::Xml, Encoding::Ascii)).unwrap();
        let (_, _, _, q, _) = mesh_2x2();
        let block = text.split("Name=\"q\"").nth(1).unwrap();
        let block = &block[block.find('>').unwrap() + 1..block.find("</DataArray>").unwrap()];
        let vals: Vec<f64> = block.split_whitespace().map(|s| s.parse().unwrap()).collect();
        assert_eq!(vals, q);
    }

    #[test]
    fn base64_matches_known_vectors() {
        for (input, want) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")] {
            let mut out = Vec::new();
            base64_write(&mut out, &[input.as_bytes()]).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want);
            assert_eq!(b64_decode(want.trim_end_matches('=').as_bytes()), input.as_bytes());
        }
    }

    #[test]
    fn cell_types() {
        assert_eq!(cell_type(2, 2), Some(3));
        assert_eq!(cell_type(3, 3), Some(5));
        assert_eq!(cell_type(4, 2), Some(9));
        assert_eq!(cell_type(4, 3), Some(10));
        assert_eq!(cell_type(8, 3), Some(12));
        assert_eq!(cell_type(8, 2), None);
        assert_eq!(cell_type(5, 2), None);
    }
}
