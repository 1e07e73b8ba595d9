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

use op2::mpi::layout::{self, Halos};
use op2::mpi::partition::{self, GMap};
use std::collections::HashSet;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: op2-partstat --mesh FILE [--procs P,P,...] [--methods metis,rcb,block] [--json FILE]\n\
  --mesh FILE   Airfoil mesh in new_grid.dat text format (op2-meshgen writes one of any size)\n\
  --procs       process counts (default 2,4,8,...,4096)\n\
  --methods     partitioners: metis (k-way on the cell graph), rcb (node coordinates), block\n\
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
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Metis => "METIS",
            Method::Rcb => "RCB",
            Method::Block => "BLOCK",
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
    let g = m.gmaps();
    let h = layout::halos(&m.sizes, &g, &parts, p);
    let cells = set_stats(&h, &parts, CELLS, p);
    let edges = set_stats(&h, &parts, EDGES, p);
    let bedges = set_stats(&h, &parts, BEDGES, p);
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
    Ok(Row {
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
        secs: t.elapsed().as_secs_f64(),
    })
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

fn run(args: Vec<String>) -> Result<(), String> {
    let mut mesh = None;
    let mut procs: Vec<usize> = (1..=12).map(|k| 1usize << k).collect();
    let mut methods = vec![Method::Metis, Method::Rcb, Method::Block];
    let mut json_path = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            "--mesh" => mesh = Some(it.next().ok_or("--mesh needs a file")?),
            "--json" => json_path = Some(it.next().ok_or("--json needs a file")?),
            "--procs" => {
                let v = it.next().ok_or("--procs needs a list")?;
                procs = v
                    .split(',')
                    .map(|s| s.trim().parse::<usize>().ok().filter(|&p| p >= 1))
                    .collect::<Option<Vec<_>>>()
                    .ok_or(format!("--procs '{v}': not a list of positive numbers"))?;
            }
            "--methods" => {
                let v = it.next().ok_or("--methods needs a list")?;
                methods = v
                    .split(',')
                    .map(|s| match s.trim().to_ascii_lowercase().as_str() {
                        "metis" | "kway" => Ok(Method::Metis),
                        "rcb" => Ok(Method::Rcb),
                        "block" => Ok(Method::Block),
                        o => Err(format!("--methods: unknown '{o}' (metis, rcb, block)")),
                    })
                    .collect::<Result<_, _>>()?;
            }
            o => return Err(format!("unknown argument '{o}'\n{USAGE}")),
        }
    }
    let path = mesh.ok_or(format!("--mesh is required\n{USAGE}"))?;
    let t = Instant::now();
    let m = read_mesh(&path)?;
    println!(
        "op2-partstat: mesh '{path}': {} nodes, {} cells, {} edges, {} boundary edges (read in {:.2} s)",
        m.sizes[NODES],
        m.sizes[CELLS],
        m.sizes[EDGES],
        m.sizes[BEDGES],
        t.elapsed().as_secs_f64()
    );
    println!("per process; halo = cell rows in the exec + non-exec halo; nbrs = processes it sends cell rows to;");
    println!("bytes and msgs = what it sends per Airfoil iteration (2 exchanges of p_q and p_adt);");
    println!("edges run = owned + exec-halo edges (res_calc's work), excess over edges/P.");
    println!();
    println!("| P | method | edge cut | cells max | halo max / mean | nbrs max / mean | bytes/iter max / mean | msgs/iter max | edges run max (excess) | core cells min | s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut out = match &json_path {
        Some(f) => Some(std::fs::File::create(f).map_err(|e| format!("cannot write '{f}': {e}"))?),
        None => None,
    };
    for &p in &procs {
        for &method in &methods {
            let r = table_row(&m, method, p)?;
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
            if let Some(f) = out.as_mut() {
                writeln!(f, "{}", json(&r)).map_err(|e| format!("writing JSON: {e}"))?;
            }
            let _ = std::io::stdout().flush();
        }
    }
    Ok(())
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

    /// The statistics agree with `layout::set_layout` (what op_partition builds per process) on
    /// every set for METIS, RCB and BLOCK on a 12 x 9 grid at P = 2, 3, 5, 8.
    #[test]
    fn stats_agree_with_the_per_process_layouts() {
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
