//! Renumbering for locality (`op_renumber`): pure algorithms on plain arrays.
//!
//! A mesh read in a poor order (e.g. numbered at random by a mesh generator or partitioner)
//! makes every indirect access a cache miss. `op_renumber(base)` reorders storage: the target
//! set of `base` (typically the nodes) by reverse Cuthill–McKee on the graph "two nodes are
//! neighbours when one element of `base` touches both"; then, set by set through the maps, every
//! set linked to an ordered one: a set with a map into an ordered set is sorted by the ordered
//! indices it touches (so consecutive edges/cells touch nearby nodes), and a set only reached as
//! the target of a map from an ordered set is numbered in order of first use. Only storage
//! changes: op2 keeps each set's permutation and shows users the declared numbering.

use super::alloc;
use crate::error::Result;

/// What `op_renumber`'s allocations are called in messages (all are sized by the mesh and
/// fallible: a refused one is `OP2_ERR_OUT_OF_MEMORY` and nothing has changed).
const WHAT: &str = "op_renumber: scratch for reordering";

/// A permutation of one set's elements: storage position `new` holds declared element
/// `old_of_new[new]`, and declared element `old` is stored at `new_of_old[old]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub old_of_new: Vec<i32>,
    pub new_of_old: Vec<i32>,
}

impl Order {
    /// The permutation with storage order `old_of_new` (a permutation of `0..n`).
    pub fn from_old_of_new(old_of_new: Vec<i32>) -> Result<Order> {
        let mut new_of_old = alloc::zeroed::<i32>(old_of_new.len(), WHAT)?;
        for (new, &old) in old_of_new.iter().enumerate() {
            new_of_old[old as usize] = new as i32;
        }
        Ok(Order { old_of_new, new_of_old })
    }

    /// `self` followed by `next` (a permutation of `self`'s storage positions): the order from
    /// the declared numbering to `next`'s storage.
    pub fn then(&self, next: &Order) -> Result<Order> {
        let mut v = alloc::with_capacity(next.old_of_new.len(), WHAT)?;
        v.extend(next.old_of_new.iter().map(|&p| self.old_of_new[p as usize]));
        Order::from_old_of_new(v)
    }

    /// Whether the permutation is the identity.
    pub fn is_identity(&self) -> bool {
        self.old_of_new.iter().enumerate().all(|(i, &o)| i as i32 == o)
    }
}

/// Permutes rows of `row_bytes` bytes: row `new` of the result is row `old_of_new[new]` of
/// `data`.
pub fn permute_rows(data: &[u8], row_bytes: usize, order: &Order, out: &mut [u8]) {
    if row_bytes == 0 {
        return;
    }
    for (dst, &old) in out.chunks_exact_mut(row_bytes).zip(&order.old_of_new) {
        let o = old as usize * row_bytes;
        dst.copy_from_slice(&data[o..o + row_bytes]);
    }
}

/// The graph on `n` target elements in which two targets are adjacent when a row of the map
/// (`values`, `dim` per row) names both. Compressed rows: neighbours of `v` are
/// `adj[xadj[v]..xadj[v + 1]]`, sorted, without duplicates or `v` itself.
pub fn target_graph(values: &[i32], dim: usize, n: usize) -> Result<(Vec<usize>, Vec<i32>)> {
    // Incidence from targets to rows, then neighbours through shared rows.
    let rows = values.len().checked_div(dim).unwrap_or(0);
    let mut count = alloc::zeroed::<usize>(n + 1, WHAT)?;
    for &v in values {
        count[v as usize + 1] += 1;
    }
    for i in 0..n {
        count[i + 1] += count[i];
    }
    let mut fill = alloc::copy_of(&count, WHAT)?;
    let mut inc = alloc::zeroed::<u32>(values.len(), WHAT)?;
    for r in 0..rows {
        for &v in &values[r * dim..(r + 1) * dim] {
            inc[fill[v as usize]] = r as u32;
            fill[v as usize] += 1;
        }
    }
    let mut xadj = alloc::with_capacity(n + 1, WHAT)?;
    let mut adj: Vec<i32> = alloc::with_capacity(values.len(), WHAT)?;
    let mut mark = alloc::filled(n, u32::MAX, WHAT)?;
    xadj.push(0);
    for v in 0..n {
        let start = adj.len();
        mark[v] = v as u32;
        for &r in &inc[count[v]..count[v + 1]] {
            let r = r as usize;
            if adj.capacity() - adj.len() < dim {
                // grown by doubling, fallibly (the graph's size is the mesh's)
                let more = adj.len().max(dim);
                alloc::reserve(&mut adj, more, WHAT)?;
            }
            for &u in &values[r * dim..(r + 1) * dim] {
                if mark[u as usize] != v as u32 {
                    mark[u as usize] = v as u32;
                    adj.push(u);
                }
            }
        }
        adj[start..].sort_unstable();
        xadj.push(adj.len());
    }
    Ok((xadj, adj))
}

/// Breadth-first search from `root`: fills `order` with the visit order and returns the depth
/// (number of levels - 1) and where the deepest level starts in `order`. `seen` marks visited
/// vertices with `stamp`.
fn bfs(xadj: &[usize], adj: &[i32], root: usize, seen: &mut [u32], stamp: u32, order: &mut Vec<i32>) -> (usize, usize) {
    order.clear();
    order.push(root as i32);
    seen[root] = stamp;
    let (mut head, mut depth, mut level_start, mut level_end) = (0, 0, 0, 1);
    while head < order.len() {
        if head == level_end {
            depth += 1;
            level_start = level_end;
            level_end = order.len();
        }
        let v = order[head] as usize;
        head += 1;
        for &u in &adj[xadj[v]..xadj[v + 1]] {
            if seen[u as usize] != stamp {
                seen[u as usize] = stamp;
                order.push(u);
            }
        }
    }
    (depth, level_start)
}

/// Reverse Cuthill–McKee: a storage order of the graph's vertices with a small bandwidth. Each
/// connected component starts from a pseudo-peripheral vertex (George–Liu: repeat the search
/// from a least-degree vertex of the deepest level while the depth grows); neighbours are
/// visited in increasing degree.
pub fn rcm(xadj: &[usize], adj: &[i32]) -> Result<Vec<i32>> {
    let n = xadj.len() - 1;
    let degree = |v: usize| xadj[v + 1] - xadj[v];
    let mut done = alloc::filled(n, false, WHAT)?;
    let mut seen = alloc::filled(n, u32::MAX, WHAT)?;
    let mut stamp = 0u32;
    let mut out: Vec<i32> = alloc::with_capacity(n, WHAT)?;
    let mut level: Vec<i32> = alloc::with_capacity(n, WHAT)?;
    let mut trial: Vec<i32> = alloc::with_capacity(n, WHAT)?;
    // Vertices by degree, so each component's search starts from a low-degree vertex.
    let mut by_degree: Vec<usize> = alloc::with_capacity(n, WHAT)?;
    by_degree.extend(0..n);
    by_degree.sort_by_key(|&v| (degree(v), v));
    let mut nbrs: Vec<i32> = Vec::new();
    for &start in &by_degree {
        if done[start] {
            continue;
        }
        let mut root = start;
        stamp += 1;
        let (mut depth, mut last) = bfs(xadj, adj, root, &mut seen, stamp, &mut level);
        for _ in 0..8 {
            let Some(c) = level[last..].iter().copied().min_by_key(|&v| (degree(v as usize), v)) else { break };
            stamp += 1;
            let (d, l) = bfs(xadj, adj, c as usize, &mut seen, stamp, &mut trial);
            if d <= depth {
                break;
            }
            (depth, last, root) = (d, l, c as usize);
            std::mem::swap(&mut level, &mut trial);
        }
        // Cuthill–McKee from the root, then reversed.
        let first = out.len();
        out.push(root as i32);
        done[root] = true;
        let mut head = first;
        while head < out.len() {
            let v = out[head] as usize;
            head += 1;
            nbrs.clear();
            nbrs.extend(adj[xadj[v]..xadj[v + 1]].iter().copied().filter(|&u| !done[u as usize]));
            nbrs.sort_by_key(|&u| (degree(u as usize), u));
            for &u in &nbrs {
                done[u as usize] = true;
                out.push(u);
            }
        }
        out[first..].reverse();
    }
    Ok(out)
}

/// Orders the rows of a map (`values`, `dim` per row) by the storage positions of the targets
/// they touch (`target_new_of_old`): rows are sorted by their targets' sorted positions, so
/// consecutive rows touch nearby targets. Ties keep the current order.
pub fn order_by_targets(values: &[i32], dim: usize, target_new_of_old: &[i32]) -> Result<Order> {
    let rows = values.len().checked_div(dim).unwrap_or(0);
    let mut keys: Vec<i32> = alloc::with_capacity(values.len(), WHAT)?;
    for r in 0..rows {
        let start = keys.len();
        keys.extend(values[r * dim..(r + 1) * dim].iter().map(|&v| target_new_of_old[v as usize]));
        keys[start..].sort_unstable();
    }
    let mut idx: Vec<i32> = alloc::with_capacity(rows, WHAT)?;
    idx.extend(0..rows as i32);
    idx.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        keys[a * dim..(a + 1) * dim].cmp(&keys[b * dim..(b + 1) * dim])
    });
    Order::from_old_of_new(idx)
}

/// Orders a map's target set (`n` elements) by first use when the map's rows are visited in
/// storage order `row_old_of_new`; targets never used keep their relative order at the end.
pub fn order_by_first_use(values: &[i32], dim: usize, row_old_of_new: &[i32], n: usize) -> Result<Order> {
    let mut taken = alloc::filled(n, false, WHAT)?;
    let mut out = alloc::with_capacity(n, WHAT)?;
    for &r in row_old_of_new {
        let r = r as usize;
        for &v in &values[r * dim..(r + 1) * dim] {
            if !taken[v as usize] {
                taken[v as usize] = true;
                out.push(v);
            }
        }
    }
    out.extend((0..n as i32).filter(|&v| !taken[v as usize]));
    Order::from_old_of_new(out)
}

/// A map as the planner sees it: from set, to set, dim, values (in current storage).
pub struct MapView<'a> {
    pub from: usize,
    pub to: usize,
    pub dim: usize,
    pub values: &'a [i32],
}

/// Plans `op_renumber(base)`: a new storage order (relative to current storage) for every set
/// linked to `base` through maps, None for the others. `set_sizes[s]` is set `s`'s size.
pub fn plan(set_sizes: &[usize], maps: &[MapView], base: usize) -> Result<Vec<Option<Order>>> {
    let mut orders: Vec<Option<Order>> = vec![None; set_sizes.len()];
    let b = &maps[base];
    let (xadj, adj) = target_graph(b.values, b.dim, set_sizes[b.to])?;
    let first = rcm(&xadj, &adj)?;
    drop((xadj, adj));
    orders[b.to] = Some(Order::from_old_of_new(first)?);
    loop {
        // Prefer sets that map into an ordered set (sorted by what they touch); the base map
        // first, so its from-set follows its targets.
        let into = std::iter::once(base).chain(0..maps.len()).find(|&m| {
            let mv = &maps[m];
            orders[mv.from].is_none() && orders[mv.to].is_some()
        });
        if let Some(m) = into {
            let mv = &maps[m];
            let t = orders[mv.to].as_ref().map(|o| o.new_of_old.as_slice()).unwrap_or(&[]);
            orders[mv.from] = Some(order_by_targets(mv.values, mv.dim, t)?);
            continue;
        }
        let out_of = (0..maps.len()).find(|&m| orders[maps[m].to].is_none() && orders[maps[m].from].is_some());
        if let Some(m) = out_of {
            let mv = &maps[m];
            let r = orders[mv.from].as_ref().map(|o| o.old_of_new.as_slice()).unwrap_or(&[]);
            orders[mv.to] = Some(order_by_first_use(mv.values, mv.dim, r, set_sizes[mv.to])?);
            continue;
        }
        break;
    }
    Ok(orders)
}

/// The bandwidth of a map under storage orders: the largest difference between two targets of
/// one row. A measure of locality for tests and diagnostics.
pub fn row_spread(values: &[i32], dim: usize) -> i32 {
    values
        .chunks_exact(dim.max(1))
        .map(|r| r.iter().max().unwrap_or(&0) - r.iter().min().unwrap_or(&0))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An nx x ny grid of quads: (edges as node pairs, cells as 4 nodes) with node (i, j) at
    /// j * (nx + 1) + i.
    fn grid(nx: usize, ny: usize) -> (Vec<i32>, Vec<i32>, usize) {
        let node = |i: usize, j: usize| (j * (nx + 1) + i) as i32;
        let mut edges = Vec::new();
        let mut cells = Vec::new();
        for j in 0..=ny {
            for i in 0..=nx {
                if i < nx {
                    edges.extend([node(i, j), node(i + 1, j)]);
                }
                if j < ny {
                    edges.extend([node(i, j), node(i, j + 1)]);
                }
                if i < nx && j < ny {
                    cells.extend([node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)]);
                }
            }
        }
        (edges, cells, (nx + 1) * (ny + 1))
    }

    /// A deterministic pseudo-random permutation (LCG-driven Fisher–Yates).
    fn shuffle(n: usize, seed: u64) -> Order {
        let mut v: Vec<i32> = (0..n as i32).collect();
        let mut s = seed;
        for i in (1..n).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            v.swap(i, (s >> 33) as usize % (i + 1));
        }
        Order::from_old_of_new(v).unwrap()
    }

    fn apply_to_values(values: &[i32], o: &Order) -> Vec<i32> {
        values.iter().map(|&v| o.new_of_old[v as usize]).collect()
    }

    fn is_permutation(o: &Order, n: usize) -> bool {
        let mut seen = vec![false; n];
        o.old_of_new.len() == n
            && o.old_of_new
                .iter()
                .all(|&v| (0..n as i32).contains(&v) && !std::mem::replace(&mut seen[v as usize], true))
            && o.old_of_new.iter().enumerate().all(|(i, &v)| o.new_of_old[v as usize] == i as i32)
    }

    #[test]
    fn order_inverse_and_composition() {
        let a = Order::from_old_of_new(vec![2, 0, 1]).unwrap();
        assert_eq!(a.new_of_old, vec![1, 2, 0]);
        let b = Order::from_old_of_new(vec![1, 2, 0]).unwrap();
        // Storage after a: [d2, d0, d1]; b takes positions 1, 2, 0: [d0, d1, d2].
        assert!(a.then(&b).unwrap().is_identity());
        assert!(!a.is_identity());
        let mut out = vec![0u8; 6];
        permute_rows(&[10, 11, 20, 21, 30, 31], 2, &a, &mut out);
        assert_eq!(out, vec![30, 31, 10, 11, 20, 21]);
    }

    #[test]
    fn target_graph_of_a_path() {
        // edges 0-1, 1-2, 2-3 (rows), targets 4 nodes
        let (xadj, adj) = target_graph(&[0, 1, 1, 2, 2, 3], 2, 4).unwrap();
        assert_eq!(xadj, vec![0, 1, 3, 5, 6]);
        assert_eq!(adj, vec![1, 0, 2, 1, 3, 2]);
    }

    #[test]
    fn rcm_restores_a_shuffled_path_and_handles_components() {
        // A path 0-1-...-9 numbered at random: RCM gives bandwidth 1.
        let p = shuffle(10, 7);
        let path: Vec<i32> = (0..9).flat_map(|i| [i, i + 1]).collect();
        let shuffled = apply_to_values(&path, &p);
        let (xadj, adj) = target_graph(&shuffled, 2, 10).unwrap();
        let o = Order::from_old_of_new(rcm(&xadj, &adj).unwrap()).unwrap();
        assert!(is_permutation(&o, 10));
        assert_eq!(row_spread(&apply_to_values(&shuffled, &o), 2), 1);
        // Two components and an isolated vertex are all numbered.
        let (xadj, adj) = target_graph(&[0, 1, 3, 4], 2, 6).unwrap();
        let o = Order::from_old_of_new(rcm(&xadj, &adj).unwrap()).unwrap();
        assert!(is_permutation(&o, 6));
    }

    #[test]
    fn rcm_recovers_grid_bandwidth_after_random_numbering() {
        let (edges, _, n) = grid(40, 12);
        let original = row_spread(&edges, 2); // nx + 1
        let p = shuffle(n, 42);
        let shuffled = apply_to_values(&edges, &p);
        assert!(row_spread(&shuffled, 2) > 10 * original);
        let (xadj, adj) = target_graph(&shuffled, 2, n).unwrap();
        let o = Order::from_old_of_new(rcm(&xadj, &adj).unwrap()).unwrap();
        assert!(is_permutation(&o, n));
        // RCM from a corner sweeps the short side: bandwidth about ny + 1, never worse than
        // the row-by-row numbering.
        assert!(row_spread(&apply_to_values(&shuffled, &o), 2) <= original);
    }

    #[test]
    fn plan_orders_every_linked_set() {
        // sets: 0 nodes, 1 edges, 2 cells, 3 unrelated; maps: edges->nodes (base), cells->nodes
        let (edges, cells, n) = grid(6, 5);
        let ne = edges.len() / 2;
        let nc = cells.len() / 4;
        let pn = shuffle(n, 3);
        let e = apply_to_values(&edges, &pn);
        let c = apply_to_values(&cells, &pn);
        let maps = [MapView { from: 1, to: 0, dim: 2, values: &e }, MapView { from: 2, to: 0, dim: 4, values: &c }];
        let orders = plan(&[n, ne, nc, 5], &maps, 0).unwrap();
        assert!(orders[3].is_none());
        for (s, size) in [(0, n), (1, ne), (2, nc)] {
            assert!(is_permutation(orders[s].as_ref().unwrap(), size), "set {s}");
        }
        // Edges sorted by their nodes' new positions: the smaller endpoints never decrease.
        let on = orders[0].as_ref().unwrap();
        let oe = orders[1].as_ref().unwrap();
        let mins: Vec<i32> = oe
            .old_of_new
            .iter()
            .map(|&r| e[2 * r as usize..2 * r as usize + 2].iter().map(|&v| on.new_of_old[v as usize]).min().unwrap())
            .collect();
        assert!(mins.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn first_use_orders_targets_reached_only_from_ordered_sets() {
        // rows (in storage order 1, 0) touch 3,1 then 2,3: first use 2, 3, 1, then unused 0.
        let o = order_by_first_use(&[2, 3, 3, 1], 2, &[1, 0], 4).unwrap();
        assert_eq!(o.old_of_new, vec![3, 1, 2, 0]);
        let maps = [
            MapView { from: 0, to: 1, dim: 2, values: &[0, 1, 1, 2] },
            MapView { from: 0, to: 2, dim: 1, values: &[1, 0] },
        ];
        let orders = plan(&[2, 3, 2], &maps, 0).unwrap();
        assert!(orders.iter().all(Option::is_some));
    }
}
