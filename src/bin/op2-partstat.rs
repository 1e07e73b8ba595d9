//! `op2-partstat --mesh FILE`: partition quality of an Airfoil mesh (the `new_grid.dat` text
//! format that `examples-c/airfoil` reads, e.g. from `op2-meshgen`) for many process counts,
//! without running them. For each P (default 2, 4, ..., 4096) and method it partitions the way
//! `op_partition` does in Airfoil (the same pure functions, `op2::mpi::partition` and
//! `op2::mpi::layout`): METIS k-way on the cell graph of `pecell`, RCB on the node coordinates
//! `p_x`, or BLOCK (every set keeps its declared blocks); the other sets follow through the maps,
//! then the halos are built. It prints, per P and method: the edge cut (interior edges whose two
//! cells have different owners), the halo rows of cells (exec + non-exec) per process, the
//! neighbours each process sends to, the bytes and messages a process sends per Airfoil
//! iteration, and the redundant work (exec-halo edges that `res_calc` runs on top of the owned).
//!
//! What Airfoil exchanges (measured with `op_timing_output`): before each of its two `res_calc`
//! calls an iteration exchanges `p_q` (4 doubles) and `p_adt` (1 double) on the cell halo, one
//! message per neighbour; so per iteration a process sends `2 x 40` bytes per exported cell row
//! and `2 x` (its cell neighbours) messages. Nothing else is exchanged in a steady iteration
//! (`p_x` is never written; `p_res` is incremented through the exec halo, not exchanged).
//!
//! `--json FILE` also writes the rows as JSON lines, for `doc/scaling.md`'s model.
//!
//! `mpiexec -n P op2-partstat --mesh FILE --dist`: the distributed partitioner instead, for the
//! one P that runs. Process 0 reads the mesh and sends every process its declared block of every
//! map and of `p_x` (Airfoil's `[n r / P, n (r + 1) / P)`); the processes partition the way
//! `op_partition` does under MPI (`distpart::graph` + `parmetis::part_kway`, or `distpart::rcb`,
//! then `distpart::derive`); every set's parts are gathered to process 0, which computes the same
//! statistics as the serial mode and prints rows in its format (method PTSCOTCH, PARMETIS,
//! GEOMKWAY or RCB-DIST; s = the distributed partition and derivation, slowest process).

// Without MPI, --dist's machinery is used only by the tests.
#![cfg_attr(not(feature = "mpi"), allow(dead_code))]

use op2::mpi::distpart::{self, Coll, DMap};
use op2::mpi::layout::{self, Halos};
use op2::mpi::partition::{self, GMap};
use std::collections::HashSet;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: op2-partstat --mesh FILE [--procs P,P,...] [--methods metis,rcb,block] [--json FILE]\n\
       mpiexec -n P op2-partstat --mesh FILE --dist [--methods ptscotch,parmetis,geomkway,rcb] [--json FILE]\n\
  --mesh FILE   Airfoil mesh in new_grid.dat text format (op2-meshgen writes one of any size)\n\
  --procs       process counts (default 2,4,8,...,4096)\n\
  --methods     partitioners: metis (k-way on the cell graph), rcb (node coordinates), block;\n\
                with --dist (default ptscotch,rcb): ptscotch or parmetis (PT-Scotch's k-way on the\n\
                distributed cell graph), geomkway (ParMETIS_V3_PartGeomKway on the node graph of\n\
                pedge with p_x), rcb (distributed RCB)\n\
  --dist        partition on the MPI processes (P = their number) from their declared blocks, as\n\
                op_partition does; process 0 gathers the parts and prints the rows\n\
  --json FILE   also write one JSON object per row to FILE";

/// Set numbers of Airfoil's declarations, in its order (the derivation's tie-breaks follow it).
const NODES: usize = 0;
const EDGES: usize = 1;
const BEDGES: usize = 2;
const CELLS: usize = 3;

/// Bytes a process sends per Airfoil iteration per exported cell row: two exchanges of
/// `p_q` (4 doubles) and `p_adt` (1 double).
const AIRFOIL_CELL_BYTES_PER_ITER: usize = 2 * (4 + 1) * 8;
/// Halo exchanges per Airfoil iteration (one per `res_calc` call).
const AIRFOIL_EXCHANGES_PER_ITER: usize = 2;

/// An Airfoil mesh in global numbering: sets nodes, edges, bedges, cells; maps pedge, pecell,
/// pbedge, pbecell, pcell (Airfoil's declaration order); node coordinates.
struct Mesh {
    sizes: [usize; 4],
    maps: Vec<(usize, usize, usize, Vec<i32>)>,
    x: Vec<f64>,
}

impl Mesh {
    fn gmaps(&self) -> Vec<GMap<'_>> {
        self.maps.iter().map(|(f, t, d, v)| GMap { from: *f, to: *t, dim: *d, values: v }).collect()
    }
}

fn read_mesh(path: &str) -> Result<Mesh, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read mesh '{path}': {e}"))?;
    let mut it = text.split_ascii_whitespace();
    let mut next = |what: &str| it.next().ok_or_else(|| format!("mesh '{path}': truncated (reading {what})"));
    let mut counts = [0usize; 4];
    for c in counts.iter_mut() {
        let s = next("counts")?;
        *c = s.parse().map_err(|_| format!("mesh '{path}': bad count '{s}'"))?;
    }
    let [nnode, ncell, nedge, nbedge] = counts;
    let mut x = Vec::with_capacity(2 * nnode);
    for _ in 0..2 * nnode {
        let s = next("coordinates")?;
        x.push(s.parse::<f64>().map_err(|_| format!("mesh '{path}': bad coordinate '{s}'"))?);
    }
    let mut index = |what: &str, n: usize| -> Result<i32, String> {
        let s = next(what)?;
        match s.parse::<i32>() {
            Ok(v) if v >= 0 && (v as usize) < n => Ok(v),
            _ => Err(format!("mesh '{path}': {what} index '{s}' not in 0..{n}")),
        }
    };
    let mut pcell = Vec::with_capacity(4 * ncell);
    for _ in 0..4 * ncell {
        pcell.push(index("cell node", nnode)?);
    }
    let (mut pedge, mut pecell) = (Vec::with_capacity(2 * nedge), Vec::with_capacity(2 * nedge));
    for _ in 0..nedge {
        pedge.extend([index("edge node", nnode)?, index("edge node", nnode)?]);
        pecell.extend([index("edge cell", ncell)?, index("edge cell", ncell)?]);
    }
    let (mut pbedge, mut pbecell) = (Vec::with_capacity(2 * nbedge), Vec::with_capacity(nbedge));
    for _ in 0..nbedge {
        pbedge.extend([index("bedge node", nnode)?, index("bedge node", nnode)?]);
        pbecell.push(index("bedge cell", ncell)?);
        index("bedge bound", i32::MAX as usize)?;
    }
    Ok(Mesh {
        sizes: [nnode, nedge, nbedge, ncell],
        maps: vec![
            (EDGES, NODES, 2, pedge),
            (EDGES, CELLS, 2, pecell),
            (BEDGES, NODES, 2, pbedge),
            (BEDGES, CELLS, 1, pbecell),
            (CELLS, NODES, 4, pcell),
        ],
        x,
    })
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Method {
    Metis,
    Rcb,
    Block,
    /// `--dist`: PT-Scotch's k-way (ParMETIS interface) on the distributed cell graph of
    /// `pecell`, as `op_partition("PTSCOTCH", "KWAY")` (or `"PARMETIS"`, the same library).
    Ptscotch,
    Parmetis,
    /// `--dist`: `ParMETIS_V3_PartGeomKway` on the node graph of `pedge` with `p_x`, as
    /// `op_partition("PARMETIS", "GEOMKWAY", nodes, pedge, p_x)`.
    GeomKway,
    /// `--dist`: `distpart::rcb` on the node coordinates (parallel medians).
    RcbDist,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Metis => "METIS",
            Method::Rcb => "RCB",
            Method::Block => "BLOCK",
            Method::Ptscotch => "PTSCOTCH",
            Method::Parmetis => "PARMETIS",
            Method::GeomKway => "GEOMKWAY",
            Method::RcbDist => "RCB-DIST",
        }
    }

    /// A `--methods` name: the serial partitioners, or with `--dist` the distributed ones
    /// (`rcb` is then the distributed RCB).
    fn parse(s: &str, dist: bool) -> Result<Method, String> {
        match (s.trim().to_ascii_lowercase().as_str(), dist) {
            ("metis" | "kway", false) => Ok(Method::Metis),
            ("rcb", false) => Ok(Method::Rcb),
            ("block", false) => Ok(Method::Block),
            ("ptscotch", true) => Ok(Method::Ptscotch),
            ("parmetis" | "kway", true) => Ok(Method::Parmetis),
            ("geomkway" | "geom", true) => Ok(Method::GeomKway),
            ("rcb", true) => Ok(Method::RcbDist),
            (o, false) => {
                Err(format!("--methods: unknown '{o}' (metis, rcb, block; ptscotch, parmetis, geomkway need --dist)"))
            }
            (o, true) => Err(format!("--methods: unknown '{o}' with --dist (ptscotch, parmetis, geomkway, rcb)")),
        }
    }
}

/// The owner of every element of every set, as `op_partition(lib, routine, cells, pecell, p_x)`
/// computes it in Airfoil.
fn airfoil_parts(m: &Mesh, method: Method, p: usize) -> Result<Vec<Vec<i32>>, String> {
    let g = m.gmaps();
    let sizes = m.sizes;
    let block = |s: usize| {
        let offs: Vec<usize> = (0..=p).map(|r| sizes[s] * r / p).collect();
        partition::block_parts(&offs)
    };
    let mut parts: Vec<Option<Vec<i32>>> = vec![None; 4];
    match method {
        Method::Metis => {
            let (xadj, adjncy) = partition::target_graph(&g[1], sizes[CELLS]);
            parts[CELLS] = Some(partition::kway_parts(&xadj, &adjncy, p).map_err(|e| e.message)?);
        }
        Method::Rcb => parts[NODES] = Some(partition::rcb_parts(&m.x, 2, p)),
        Method::Block => {
            for (s, q) in parts.iter_mut().enumerate() {
                *q = Some(block(s));
            }
        }
        d => return Err(format!("{} runs only with --dist (under mpiexec)", d.name())),
    }
    partition::derive(&sizes, &g, &mut parts, &block);
    Ok(parts.into_iter().map(|q| q.unwrap_or_default()).collect())
}

/// Per-process halo statistics of one set: rows each process imports (exec, non-exec), rows
/// it exports (the union of its neighbours' import lists that it owns, counted once per
/// neighbour: what it sends for one exchange of a one-byte dat), the processes it sends to and
/// receives from, its owned and core rows.
#[derive(Debug, Default, Clone, PartialEq)]
struct SetStats {
    owned: Vec<usize>,
    core: Vec<usize>,
    exec: Vec<usize>,
    nonexec: Vec<usize>,
    export_rows: Vec<usize>,
    sends_to: Vec<usize>,
    recvs_from: Vec<usize>,
}

/// The statistics of set `s` over `nranks` processes, from the halos `layout::halos` built. The
/// same numbers as `layout::set_layout` for every process (a test checks it), in O(halo + set)
/// time instead of O(P x set).
fn set_stats(h: &Halos, parts: &[Vec<i32>], s: usize, nranks: usize) -> SetStats {
    let mut st = SetStats {
        owned: vec![0; nranks],
        core: vec![0; nranks],
        exec: vec![0; nranks],
        nonexec: vec![0; nranks],
        export_rows: vec![0; nranks],
        sends_to: vec![0; nranks],
        recvs_from: vec![0; nranks],
    };
    for &o in &parts[s] {
        st.owned[o as usize] += 1;
    }
    let mut noncore = vec![0usize; nranks];
    for &e in h.others[s].keys() {
        noncore[parts[s][e as usize] as usize] += 1;
    }
    st.core = st.owned.iter().zip(&noncore).map(|(o, n)| o - n).collect();
    let mut pairs: HashSet<(i32, i32)> = HashSet::new();
    for q in 0..nranks {
        st.exec[q] = h.exec[s][q].len();
        st.nonexec[q] = h.nonexec[s][q].len();
        for &e in h.exec[s][q].iter().chain(&h.nonexec[s][q]) {
            let o = parts[s][e as usize];
            st.export_rows[o as usize] += 1;
            pairs.insert((o, q as i32));
        }
    }
    for (o, q) in pairs {
        st.sends_to[o as usize] += 1;
        st.recvs_from[q as usize] += 1;
    }
    st
}

/// Interior edges (rows of `pecell`) whose two cells have different owners.
fn edge_cut(pecell: &[i32], cell_parts: &[i32]) -> usize {
    pecell.chunks_exact(2).filter(|e| cell_parts[e[0] as usize] != cell_parts[e[1] as usize]).count()
}

/// One row of the table.
#[derive(Debug, Clone)]
struct Row {
    p: usize,
    method: Method,
    edge_cut: usize,
    cells_max: usize,
    halo_max: usize,
    halo_mean: f64,
    nbrs_max: usize,
    nbrs_mean: f64,
    bytes_max: usize,
    bytes_mean: f64,
    msgs_max: usize,
    /// Largest owned + exec-halo edges of a process (what `res_calc` runs) and its excess over
    /// a perfect share of the edges.
    edges_run_max: usize,
    edges_excess_pct: f64,
    bedges_run_max: usize,
    core_cells_min_pct: f64,
    secs: f64,
}

fn max_mean(v: &[usize]) -> (usize, f64) {
    (v.iter().copied().max().unwrap_or(0), v.iter().sum::<usize>() as f64 / v.len().max(1) as f64)
}

fn table_row(m: &Mesh, method: Method, p: usize) -> Result<Row, String> {
    let t = Instant::now();
    let parts = airfoil_parts(m, method, p)?;
    let mut r = stats_row(m, method, p, &parts);
    r.secs = t.elapsed().as_secs_f64();
    Ok(r)
}

/// The row of `parts` (the owner of every element of every set) on `p` processes (`secs` 0).
fn stats_row(m: &Mesh, method: Method, p: usize, parts: &[Vec<i32>]) -> Row {
    let g = m.gmaps();
    let h = layout::halos(&m.sizes, &g, parts, p);
    let cells = set_stats(&h, parts, CELLS, p);
    let edges = set_stats(&h, parts, EDGES, p);
    let bedges = set_stats(&h, parts, BEDGES, p);
    let halo: Vec<usize> = (0..p).map(|r| cells.exec[r] + cells.nonexec[r]).collect();
    let bytes: Vec<usize> = cells.export_rows.iter().map(|&x| x * AIRFOIL_CELL_BYTES_PER_ITER).collect();
    let (halo_max, halo_mean) = max_mean(&halo);
    let (nbrs_max, nbrs_mean) = max_mean(&cells.sends_to);
    let (bytes_max, bytes_mean) = max_mean(&bytes);
    let edges_run: Vec<usize> = (0..p).map(|r| edges.owned[r] + edges.exec[r]).collect();
    let bedges_run: Vec<usize> = (0..p).map(|r| bedges.owned[r] + bedges.exec[r]).collect();
    let edges_run_max = edges_run.iter().copied().max().unwrap_or(0);
    let share = m.sizes[EDGES] as f64 / p as f64;
    let core_cells_min_pct = (0..p)
        .map(|r| if cells.owned[r] == 0 { 100.0 } else { 100.0 * cells.core[r] as f64 / cells.owned[r] as f64 })
        .fold(f64::INFINITY, f64::min);
    Row {
        p,
        method,
        edge_cut: edge_cut(&m.maps[1].3, &parts[CELLS]),
        cells_max: cells.owned.iter().copied().max().unwrap_or(0),
        halo_max,
        halo_mean,
        nbrs_max,
        nbrs_mean,
        bytes_max,
        bytes_mean,
        msgs_max: AIRFOIL_EXCHANGES_PER_ITER * nbrs_max,
        edges_run_max,
        edges_excess_pct: 100.0 * (edges_run_max as f64 / share - 1.0),
        bedges_run_max: bedges_run.iter().copied().max().unwrap_or(0),
        core_cells_min_pct,
        secs: 0.0,
    }
}

fn json(r: &Row) -> String {
    format!(
        "{{\"p\":{},\"method\":\"{}\",\"edge_cut\":{},\"cells_max\":{},\"halo_cells_max\":{},\"halo_cells_mean\":{:.2},\
\"nbrs_max\":{},\"nbrs_mean\":{:.3},\"send_bytes_per_iter_max\":{},\"send_bytes_per_iter_mean\":{:.1},\
\"msgs_per_iter_max\":{},\"edges_run_max\":{},\"edges_excess_pct\":{:.3},\"bedges_run_max\":{},\
\"core_cells_min_pct\":{:.3},\"secs\":{:.3}}}",
        r.p,
        r.method.name(),
        r.edge_cut,
        r.cells_max,
        r.halo_max,
        r.halo_mean,
        r.nbrs_max,
        r.nbrs_mean,
        r.bytes_max,
        r.bytes_mean,
        r.msgs_max,
        r.edges_run_max,
        r.edges_excess_pct,
        r.bedges_run_max,
        r.core_cells_min_pct,
        r.secs
    )
}

fn print_header(m: &Mesh, path: &str, read_secs: f64, dist: bool) {
    println!(
        "op2-partstat: mesh '{path}': {} nodes, {} cells, {} edges, {} boundary edges (read in {:.2} s)",
        m.sizes[NODES], m.sizes[CELLS], m.sizes[EDGES], m.sizes[BEDGES], read_secs
    );
    println!("per process; halo = cell rows in the exec + non-exec halo; nbrs = processes it sends cell rows to;");
    println!("bytes and msgs = what it sends per Airfoil iteration (2 exchanges of p_q and p_adt);");
    println!("edges run = owned + exec-halo edges (res_calc's work), excess over edges/P.");
    if dist {
        println!("--dist: partitioned on P processes from their declared blocks (as op_partition), parts gathered to");
        println!("process 0 for the statistics; s = the distributed partition + derivation (slowest process).");
    }
    println!();
    println!("| P | method | edge cut | cells max | halo max / mean | nbrs max / mean | bytes/iter max / mean | msgs/iter max | edges run max (excess) | core cells min | s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
}

fn print_row(r: &Row, out: Option<&mut std::fs::File>) -> Result<(), String> {
    println!(
        "| {} | {} | {} | {} | {} / {:.1} | {} / {:.2} | {} / {:.0} | {} | {} ({:+.1}%) | {:.1}% | {:.2} |",
        r.p,
        r.method.name(),
        r.edge_cut,
        r.cells_max,
        r.halo_max,
        r.halo_mean,
        r.nbrs_max,
        r.nbrs_mean,
        r.bytes_max,
        r.bytes_mean,
        r.msgs_max,
        r.edges_run_max,
        r.edges_excess_pct,
        r.core_cells_min_pct,
        r.secs
    );
    if let Some(f) = out {
        writeln!(f, "{}", json(r)).map_err(|e| format!("writing JSON: {e}"))?;
    }
    let _ = std::io::stdout().flush();
    Ok(())
}

fn create_json(path: Option<&str>) -> Result<Option<std::fs::File>, String> {
    path.map(|f| std::fs::File::create(f).map_err(|e| format!("cannot write '{f}': {e}"))).transpose()
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut mesh = None;
    let mut procs: Option<Vec<usize>> = None;
    let mut methods: Option<Vec<String>> = None;
    let mut json_path = None;
    let mut dist = false;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            "--mesh" => mesh = Some(it.next().ok_or("--mesh needs a file")?),
            "--json" => json_path = Some(it.next().ok_or("--json needs a file")?),
            "--dist" => dist = true,
            "--procs" => {
                let v = it.next().ok_or("--procs needs a list")?;
                procs = Some(
                    v.split(',')
                        .map(|s| s.trim().parse::<usize>().ok().filter(|&p| p >= 1))
                        .collect::<Option<Vec<_>>>()
                        .ok_or(format!("--procs '{v}': not a list of positive numbers"))?,
                );
            }
            "--methods" => {
                let v = it.next().ok_or("--methods needs a list")?;
                methods = Some(v.split(',').map(str::to_string).collect());
            }
            o => return Err(format!("unknown argument '{o}'\n{USAGE}")),
        }
    }
    let path = mesh.ok_or(format!("--mesh is required\n{USAGE}"))?;
    let default = if dist { "ptscotch,rcb" } else { "metis,rcb,block" };
    let methods: Vec<Method> = methods
        .unwrap_or_else(|| default.split(',').map(str::to_string).collect())
        .iter()
        .map(|s| Method::parse(s, dist))
        .collect::<Result<_, _>>()?;
    if dist {
        if procs.is_some() {
            return Err("--procs and --dist: under --dist P is the number of MPI processes (mpiexec -n P)".into());
        }
        return run_dist(&path, &methods, json_path.as_deref());
    }
    let procs = procs.unwrap_or_else(|| (1..=12).map(|k| 1usize << k).collect());
    let t = Instant::now();
    let m = read_mesh(&path)?;
    print_header(&m, &path, t.elapsed().as_secs_f64(), false);
    let mut out = create_json(json_path.as_deref())?;
    for &p in &procs {
        for &method in &methods {
            print_row(&table_row(&m, method, p)?, out.as_mut())?;
        }
    }
    Ok(())
}

/// What one process holds in `--dist` mode, as Airfoil declares it under MPI: its declared
/// block `[n r / P, n (r + 1) / P)` of every set, with those rows of every map (global
/// targets) and of `p_x`.
#[derive(Debug, PartialEq)]
struct Block {
    sizes: [usize; 4],
    /// Per set, the P + 1 block starts.
    offsets: Vec<Vec<usize>>,
    /// As `Mesh::maps`, this block's rows.
    maps: Vec<(usize, usize, usize, Vec<i32>)>,
    x: Vec<f64>,
}

fn block_offsets(sizes: &[usize; 4], p: usize) -> Vec<Vec<usize>> {
    sizes.iter().map(|&n| (0..=p).map(|r| n * r / p).collect()).collect()
}

fn op2_msg(e: op2::error::Op2Error) -> String {
    e.message
}

/// Process 0 (which read the mesh: `mesh` is `Some` there) sends every process its block.
/// Collective; when process 0 could not read the mesh every process returns an error.
fn scatter(c: &dyn Coll, mesh: Option<&Result<Mesh, String>>) -> Result<Block, String> {
    let p = c.size();
    // The set sizes (nothing when the read failed).
    let mine: Vec<u32> = match mesh {
        Some(Ok(m)) if c.rank() == 0 => m.sizes.iter().map(|&n| n as u32).collect(),
        _ => Vec::new(),
    };
    let all = c.all_gather(&distpart::enc_u32(&mine)).map_err(op2_msg)?;
    let got = distpart::dec_u32(&all[0]);
    let [nn, ne, nb, nc] = got[..] else {
        return Err(match mesh {
            Some(Err(e)) => e.clone(),
            _ => "process 0 could not read the mesh".into(),
        });
    };
    let sizes = [nn as usize, ne as usize, nb as usize, nc as usize];
    let offsets = block_offsets(&sizes, p);
    // Airfoil's maps: (from, to, dim), as read_mesh declares them.
    let shape = [(EDGES, NODES, 2), (EDGES, CELLS, 2), (BEDGES, NODES, 2), (BEDGES, CELLS, 1), (CELLS, NODES, 4)];
    let send: Vec<Vec<u8>> = match mesh {
        Some(Ok(m)) if c.rank() == 0 => (0..p)
            .map(|q| {
                let mut b = Vec::new();
                for (f, _, d, v) in &m.maps {
                    for x in &v[offsets[*f][q] * d..offsets[*f][q + 1] * d] {
                        b.extend_from_slice(&x.to_ne_bytes());
                    }
                }
                for x in &m.x[offsets[NODES][q] * 2..offsets[NODES][q + 1] * 2] {
                    b.extend_from_slice(&x.to_ne_bytes());
                }
                b
            })
            .collect(),
        _ => vec![Vec::new(); p],
    };
    let recv = c.all_to_all(&send).map_err(op2_msg)?;
    drop(send);
    let me = c.rank();
    let bytes = &recv[0];
    let mut at = 0usize;
    let mut maps = Vec::new();
    for (f, t, d) in shape {
        let n = (offsets[f][me + 1] - offsets[f][me]) * d;
        let v: Vec<i32> = bytes
            .get(at..at + 4 * n)
            .ok_or("short block from process 0")?
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        at += 4 * n;
        maps.push((f, t, d, v));
    }
    let n = (offsets[NODES][me + 1] - offsets[NODES][me]) * 2;
    let x: Vec<f64> = bytes
        .get(at..at + 8 * n)
        .ok_or("short block from process 0")?
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    if at + 8 * n != bytes.len() {
        return Err(format!("block from process 0 has {} bytes, expected {}", bytes.len(), at + 8 * n));
    }
    Ok(Block { sizes, offsets, maps, x })
}

/// A distributed k-way partitioner: (vertex blocks, this process's graph rows (xadj from 0,
/// adjncy global), coordinates per local vertex and their dimension) -> this block's parts.
type Kway<'a> = dyn Fn(&[usize], &[i32], &[i32], Option<(&[f32], usize)>) -> Result<Vec<i32>, String> + 'a;

/// Every set's parts (process 0 only) and this process's seconds partitioning.
type Gathered = (Option<Vec<Vec<i32>>>, f64);

/// `op_partition` on the blocks, as `dist::partition` runs it in Airfoil (`distpart::graph` +
/// `kway` or `distpart::rcb`, then `distpart::derive`); then every set's parts gathered:
/// `Some(parts of every set)` on process 0, `None` elsewhere. Collective. Returns also this
/// process's seconds in the partitioner and the derivation.
fn dist_parts(c: &dyn Coll, b: &Block, method: Method, kway: &Kway) -> Result<Gathered, String> {
    let me = c.rank();
    let p = c.size();
    let dmaps: Vec<DMap> = b.maps.iter().map(|(f, t, d, v)| DMap { from: *f, to: *t, dim: *d, values: v }).collect();
    let t = Instant::now();
    let mut parts: Vec<Option<Vec<i32>>> = vec![None; 4];
    match method {
        Method::Ptscotch | Method::Parmetis => {
            // The cell graph of pecell.
            let (xadj, adjncy) = distpart::graph(c, &b.offsets[CELLS], &dmaps[1]).map_err(op2_msg)?;
            parts[CELLS] = Some(kway(&b.offsets[CELLS], &xadj, &adjncy, None)?);
        }
        Method::GeomKway => {
            // The node graph of pedge, with p_x on the nodes.
            let (xadj, adjncy) = distpart::graph(c, &b.offsets[NODES], &dmaps[0]).map_err(op2_msg)?;
            let xyz: Vec<f32> = b.x.iter().map(|&v| v as f32).collect();
            parts[NODES] = Some(kway(&b.offsets[NODES], &xadj, &adjncy, Some((&xyz, 2)))?);
        }
        Method::RcbDist => parts[NODES] = Some(distpart::rcb(c, &b.x, 2, b.offsets[NODES][me], p).map_err(op2_msg)?),
        d => return Err(format!("{} is not a distributed method", d.name())),
    }
    distpart::derive(c, &b.offsets, &dmaps, &mut parts).map_err(op2_msg)?;
    let secs = t.elapsed().as_secs_f64();
    let mut whole = Vec::with_capacity(4);
    for (s, q) in parts.iter().enumerate() {
        let q = q.as_deref().unwrap_or(&[]);
        if q.len() != b.offsets[s][me + 1] - b.offsets[s][me] {
            return Err(format!(
                "set {s}: {} parts for a block of {}",
                q.len(),
                b.offsets[s][me + 1] - b.offsets[s][me]
            ));
        }
        let mine: Vec<u32> = q.iter().map(|&x| x as u32).collect();
        let all = c.all_gather(&distpart::enc_u32(&mine)).map_err(op2_msg)?;
        whole.push(all.iter().flat_map(|v| distpart::dec_u32(v)).map(|x| x as i32).collect::<Vec<i32>>());
    }
    Ok(((me == 0).then_some(whole), secs))
}

/// `--dist`: one row per method for P = the number of MPI processes, printed by process 0.
#[cfg(feature = "mpi")]
fn run_dist(path: &str, methods: &[Method], json_path: Option<&str>) -> Result<(), String> {
    use op2::mpi::{parmetis, transport, Comm};
    let comm = Comm { world: Some(transport::World::open(None).map_err(op2_msg)?), ..Default::default() };
    let c: &dyn Coll = &comm;
    let (me, p) = (c.rank(), c.size());
    let raw = comm.world.as_ref().map(|w| w.raw()).ok_or("no MPI communicator")?;
    let t = Instant::now();
    let mesh = (me == 0).then(|| read_mesh(path));
    let read_secs = t.elapsed().as_secs_f64();
    let block = scatter(c, mesh.as_ref())?;
    let mesh = mesh.and_then(Result::ok);
    let mut out = if me == 0 { create_json(json_path)? } else { None };
    if let Some(m) = &mesh {
        print_header(m, path, read_secs, true);
    }
    let kway = |offs: &[usize], xadj: &[i32], adjncy: &[i32], geom: Option<(&[f32], usize)>| {
        let vtxdist: Vec<i32> = offs
            .iter()
            .map(|&o| i32::try_from(o).map_err(|_| "more than 2^31-1 vertices"))
            .collect::<Result<_, _>>()?;
        parmetis::part_kway(raw, &vtxdist, xadj, adjncy, p, geom).map_err(op2_msg)
    };
    for &method in methods {
        let (whole, secs) = dist_parts(c, &block, method, &kway)?;
        let mut slowest = [secs];
        c.min_max_f64(&mut slowest, true).map_err(op2_msg)?;
        if let (Some(m), Some(parts)) = (&mesh, whole) {
            let mut r = stats_row(m, method, p, &parts);
            r.secs = slowest[0];
            print_row(&r, out.as_mut())?;
        }
        // The others wait here while process 0 computes the statistics.
        c.sum_u64(&mut [0]).map_err(op2_msg)?;
    }
    Ok(())
}

#[cfg(not(feature = "mpi"))]
fn run_dist(_: &str, _: &[Method], _: Option<&str>) -> Result<(), String> {
    Err("--dist needs op2 built with the cargo feature mpi".into())
}

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("op2-partstat: {msg}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An nx x ny quad grid as Airfoil declares it: interior edges (2 nodes, 2 cells: the lower
    /// or left cell first), boundary edges on the rim (2 nodes, 1 cell), cells (4 nodes).
    fn grid(nx: usize, ny: usize) -> Mesh {
        let node = |i: usize, j: usize| (j * (nx + 1) + i) as i32;
        let cell = |i: usize, j: usize| (j * nx + i) as i32;
        let (mut pedge, mut pecell, mut pbedge, mut pbecell, mut pcell) = (vec![], vec![], vec![], vec![], vec![]);
        for j in 0..ny {
            for i in 0..nx {
                pcell.extend([node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)]);
            }
        }
        // Vertical lines x = i (between cells (i-1, j) and (i, j)).
        for j in 0..ny {
            for i in 0..=nx {
                if i == 0 || i == nx {
                    pbedge.extend([node(i, j), node(i, j + 1)]);
                    pbecell.push(cell(if i == 0 { 0 } else { nx - 1 }, j));
                } else {
                    pedge.extend([node(i, j), node(i, j + 1)]);
                    pecell.extend([cell(i - 1, j), cell(i, j)]);
                }
            }
        }
        // Horizontal lines y = j (between cells (i, j-1) and (i, j)).
        for j in 0..=ny {
            for i in 0..nx {
                if j == 0 || j == ny {
                    pbedge.extend([node(i, j), node(i + 1, j)]);
                    pbecell.push(cell(i, if j == 0 { 0 } else { ny - 1 }));
                } else {
                    pedge.extend([node(i, j), node(i + 1, j)]);
                    pecell.extend([cell(i, j - 1), cell(i, j)]);
                }
            }
        }
        let x = (0..=ny).flat_map(|j| (0..=nx).flat_map(move |i| [i as f64, j as f64])).collect();
        Mesh {
            sizes: [(nx + 1) * (ny + 1), pedge.len() / 2, pbedge.len() / 2, nx * ny],
            maps: vec![
                (EDGES, NODES, 2, pedge),
                (EDGES, CELLS, 2, pecell),
                (BEDGES, NODES, 2, pbedge),
                (BEDGES, CELLS, 1, pbecell),
                (CELLS, NODES, 4, pcell),
            ],
            x,
        }
    }

    /// A 4 x 4 grid cut between cell rows 1 and 2 (rows 0-1 on process 0, rows 2-3 on process
    /// 1), the other sets derived as op_partition does. By hand: the 4 edges on the line y = 2
    /// are cut (tie: they go to their first cell's owner, 0), so the nodes on y = 2 go to 0
    /// (3 of the 4 edges at an interior one are 0's, the one edge at a rim one is) and those on
    /// y = 3 to 1; the corners, which no interior edge names, keep their blocks (0 for the
    /// bottom ones, 1 for the top ones). Cells of row 2 reach 0's nodes: 0's exec halo (4 cells); 1 runs the 4 cut
    /// edges, which read cells of row 1: 1's non-exec halo (4 cells). So each process has 4 halo
    /// cells and 1 neighbour, sends 4 cell rows per exchange (2 x 4 x 40 = 320 bytes per
    /// iteration), and its core cells are 8 (process 0) and 4 (row 3, process 1).
    #[test]
    fn hand_checked_two_way_split_of_a_4x4_grid() {
        let m = grid(4, 4);
        assert_eq!(m.sizes, [25, 24, 16, 16]);
        let g = m.gmaps();
        let mut parts: Vec<Option<Vec<i32>>> = vec![None; 4];
        parts[CELLS] = Some((0..16).map(|c| if c < 8 { 0 } else { 1 }).collect());
        let sizes = m.sizes;
        // A set element no map reaches keeps its declared block (op_partition's fallback): here
        // the four corner nodes, which no interior edge names.
        let block = |s: usize| partition::block_parts(&[0, sizes[s] / 2, sizes[s]]);
        partition::derive(&sizes, &g, &mut parts, &block);
        let parts: Vec<Vec<i32>> = parts.into_iter().map(|q| q.unwrap()).collect();
        // nodes: rows y = 0..2 (15) on 0, y = 3..4 (10) on 1
        assert_eq!(parts[NODES], (0..25).map(|n| if n < 15 { 0 } else { 1 }).collect::<Vec<_>>());
        assert_eq!(edge_cut(&m.maps[1].3, &parts[CELLS]), 4);
        let h = layout::halos(&m.sizes, &g, &parts, 2);
        let c = set_stats(&h, &parts, CELLS, 2);
        assert_eq!(c.owned, vec![8, 8]);
        assert_eq!(c.core, vec![8, 4]);
        assert_eq!(c.exec, vec![4, 0]);
        assert_eq!(c.nonexec, vec![0, 4]);
        assert_eq!(c.export_rows, vec![4, 4]);
        assert_eq!(c.sends_to, vec![1, 1]);
        assert_eq!(c.recvs_from, vec![1, 1]);
        // Edges: 0 runs the 3 vertical edges of row 2 (owned by 1) that touch its nodes; 1 runs
        // the 4 cut edges (owned by 0) that touch its cells.
        let e = set_stats(&h, &parts, EDGES, 2);
        assert_eq!(e.exec, vec![3, 4]);
        // Nodes: each process reads the other's 5 nodes on the line next to the cut.
        let n = set_stats(&h, &parts, NODES, 2);
        assert_eq!(n.nonexec, vec![5, 5]);
        assert_eq!(n.exec, vec![0, 0]);
        // Bedges: the two rim edges of row 2 (owned by 1) touch node (0|4, 2) of process 0.
        let b = set_stats(&h, &parts, BEDGES, 2);
        assert_eq!(b.exec, vec![2, 0]);
    }

    /// METIS's random generator is global (GKlib): tests that compare METIS partitions take
    /// turns, or concurrent calls change each other's results.
    static METIS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn metis_turn() -> std::sync::MutexGuard<'static, ()> {
        METIS.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The statistics agree with `layout::set_layout` (what op_partition builds per process) on
    /// every set for METIS, RCB and BLOCK on a 12 x 9 grid at P = 2, 3, 5, 8.
    #[test]
    fn stats_agree_with_the_per_process_layouts() {
        let _turn = metis_turn();
        let m = grid(12, 9);
        for method in [Method::Metis, Method::Rcb, Method::Block] {
            for p in [2, 3, 5, 8] {
                let parts = airfoil_parts(&m, method, p).unwrap();
                let h = layout::halos(&m.sizes, &m.gmaps(), &parts, p);
                for s in 0..4 {
                    let st = set_stats(&h, &parts, s, p);
                    for r in 0..p {
                        let l = layout::set_layout(&h, &parts, s, r as i32);
                        let what = format!("{method:?} P={p} set {s} process {r}");
                        assert_eq!(st.owned[r], l.owned, "{what}");
                        assert_eq!(st.core[r], l.core, "{what}");
                        assert_eq!(st.exec[r], l.exec, "{what}");
                        assert_eq!(st.nonexec[r], l.nonexec, "{what}");
                        assert_eq!(st.export_rows[r], l.exports.iter().map(|x| x.1.len()).sum::<usize>(), "{what}");
                        assert_eq!(st.sends_to[r], l.exports.len(), "{what}");
                        assert_eq!(st.recvs_from[r], l.imports.len(), "{what}");
                    }
                }
            }
        }
    }

    /// A table row on the 4 x 4 grid at P = 2 by BLOCK: every set keeps its declared halves.
    #[test]
    fn block_row_on_a_grid() {
        let m = grid(4, 4);
        let r = table_row(&m, Method::Block, 2).unwrap();
        // Cells 0..8 and 8..16: the same cut as the hand-checked split.
        assert_eq!(r.edge_cut, 4);
        assert_eq!(r.cells_max, 8);
        assert_eq!(r.nbrs_max, 1);
        assert_eq!(r.msgs_max, 2);
    }

    /// Processes simulated by threads (all-to-all through shared slots), for `--dist`'s
    /// scatter, partition and gather.
    struct Sim<'a> {
        rank: usize,
        size: usize,
        barrier: &'a std::sync::Barrier,
        slots: &'a std::sync::Mutex<Vec<Vec<Vec<u8>>>>,
    }

    impl Coll for Sim<'_> {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.size
        }
        fn all_to_all(&self, send: &[Vec<u8>]) -> op2::error::Result<Vec<Vec<u8>>> {
            self.slots.lock().unwrap()[self.rank] = send.to_vec();
            self.barrier.wait();
            let out = {
                let slots = self.slots.lock().unwrap();
                (0..self.size).map(|q| slots[q][self.rank].clone()).collect()
            };
            self.barrier.wait();
            Ok(out)
        }
        fn all_gather(&self, mine: &[u8]) -> op2::error::Result<Vec<Vec<u8>>> {
            self.all_to_all(&vec![mine.to_vec(); self.size])
        }
    }

    fn sim<T: Send>(p: usize, f: impl Fn(&dyn Coll) -> T + Sync) -> Vec<T> {
        let barrier = std::sync::Barrier::new(p);
        let slots = std::sync::Mutex::new(vec![Vec::new(); p]);
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..p)
                .map(|rank| {
                    let (barrier, slots, f) = (&barrier, &slots, &f);
                    s.spawn(move || f(&Sim { rank, size: p, barrier, slots }))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    /// `--dist` on simulated processes gives process 0 the parts the serial functions give:
    /// distributed RCB = serial RCB, and the k-way path (graph rows, the partitioner's block,
    /// derivation, gathering) with serial METIS run on the gathered graph = serial METIS.
    /// Every process gets exactly its declared block of every map and of p_x.
    #[test]
    fn dist_mode_on_threads_equals_the_serial_parts() {
        let m = grid(12, 9);
        for p in [1, 2, 3, 5] {
            let offs = block_offsets(&m.sizes, p);
            let got = sim(p, |c| {
                let mesh = (c.rank() == 0).then(|| Ok(grid(12, 9)));
                let b = scatter(c, mesh.as_ref()).unwrap();
                let r = c.rank();
                for (k, (f, t, d, v)) in m.maps.iter().enumerate() {
                    assert_eq!(
                        b.maps[k],
                        (*f, *t, *d, v[offs[*f][r] * d..offs[*f][r + 1] * d].to_vec()),
                        "map {k} P={p}"
                    );
                }
                assert_eq!(b.x, m.x[offs[NODES][r] * 2..offs[NODES][r + 1] * 2].to_vec());
                let serial_kway = |o: &[usize], xadj: &[i32], adjncy: &[i32], _: Option<(&[f32], usize)>| {
                    let enc = |v: &[i32]| distpart::enc_u32(&v.iter().map(|&x| x as u32).collect::<Vec<_>>());
                    let (ax, aa) = (c.all_gather(&enc(xadj)).unwrap(), c.all_gather(&enc(adjncy)).unwrap());
                    let (mut gx, mut ga) = (vec![0i32], Vec::new());
                    for (x, a) in ax.iter().zip(&aa) {
                        let base = ga.len() as i32;
                        gx.extend(distpart::dec_u32(x).iter().skip(1).map(|&v| v as i32 + base));
                        ga.extend(distpart::dec_u32(a).iter().map(|&v| v as i32));
                    }
                    let whole = {
                        let _turn = metis_turn();
                        partition::kway_parts(&gx, &ga, c.size()).map_err(|e| e.message)?
                    };
                    Ok(whole[o[c.rank()]..o[c.rank() + 1]].to_vec())
                };
                let rcb = dist_parts(c, &b, Method::RcbDist, &serial_kway).unwrap().0;
                let kway = dist_parts(c, &b, Method::Ptscotch, &serial_kway).unwrap().0;
                (rcb, kway)
            });
            assert!(got[1..].iter().all(|g| g.0.is_none() && g.1.is_none()), "only process 0 gets the parts");
            let (rcb, kway) = &got[0];
            assert_eq!(rcb.as_ref().unwrap(), &airfoil_parts(&m, Method::Rcb, p).unwrap(), "RCB P={p}");
            let metis = {
                let _turn = metis_turn();
                airfoil_parts(&m, Method::Metis, p).unwrap()
            };
            assert_eq!(kway.as_ref().unwrap(), &metis, "k-way P={p}");
        }
        // Process 0 could not read the mesh: every process returns an error, none waits.
        let errs = sim(3, |c| {
            let mesh = (c.rank() == 0).then(|| Err("cannot read mesh 'x'".to_string()));
            scatter(c, mesh.as_ref()).err().unwrap()
        });
        assert_eq!(errs[0], "cannot read mesh 'x'");
        assert_eq!(errs[2], "process 0 could not read the mesh");
    }

    #[test]
    fn method_names_depend_on_dist() {
        assert_eq!(Method::parse("rcb", false), Ok(Method::Rcb));
        assert_eq!(Method::parse("RCB", true), Ok(Method::RcbDist));
        assert_eq!(Method::parse("ptscotch", true), Ok(Method::Ptscotch));
        assert_eq!(Method::parse("geomkway", true), Ok(Method::GeomKway));
        assert!(Method::parse("ptscotch", false).unwrap_err().contains("need --dist"));
        assert!(Method::parse("metis", true).is_err());
        assert!(airfoil_parts(&grid(2, 2), Method::Ptscotch, 2).unwrap_err().contains("only with --dist"));
    }

    #[test]
    fn bad_meshes_are_errors() {
        let dir = std::env::temp_dir().join(format!("op2-partstat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("m.dat");
        std::fs::write(&f, "3 1 0 0\n0 0 1 0 1 1\n0 1 2 3\n").unwrap();
        let e = read_mesh(f.to_str().unwrap()).err().unwrap();
        assert!(e.contains("cell node index '3' not in 0..3"), "{e}");
        std::fs::write(&f, "3 1 0 0\n0 0 1 0\n").unwrap();
        let e = read_mesh(f.to_str().unwrap()).err().unwrap();
        assert!(e.contains("truncated"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
