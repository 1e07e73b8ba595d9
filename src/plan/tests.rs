//! Property tests of plans on random and adversarial meshes.
//!
//! Every plan built here goes through [`check`], an independent checker written with plain hash
//! sets (nothing shared with the builder): blocks partition the range, no two blocks of one
//! colour and no two elements of one thread colour in a block share a coloured (dat, target),
//! colours are dense and within the greedy bound (max conflict degree + 1), and staging maps
//! round-trip (`ind_map[loc_map[e][j]] == map[e][j]`). A small xorshift generator keeps the
//! crate free of dependencies and the tests reproducible.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::*;

/// xorshift64* (Vigna): tiny, deterministic, good enough for test inputs.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

struct TMap {
    id: u64,
    dim: usize,
    target: usize,
    values: Vec<i32>,
}

struct TArg {
    dat: u64,
    map: usize, // index into Case::maps
    idx: MapIdx,
    colour: bool,
    elem_bytes: usize,
}

struct Case {
    set_size: usize,
    start: usize,
    end: usize,
    part_size: usize,
    maps: Vec<TMap>,
    args: Vec<TArg>,
}

impl Case {
    /// A loop over the whole set.
    fn whole(set_size: usize, part_size: usize, maps: Vec<TMap>, args: Vec<TArg>) -> Case {
        Case { set_size, start: 0, end: set_size, part_size, maps, args }
    }

    fn bound(&self) -> Vec<IndirectArg<'_>> {
        self.args
            .iter()
            .map(|a| {
                let m = &self.maps[a.map];
                IndirectArg {
                    desc: IndirectDesc {
                        dat: a.dat,
                        elem_bytes: a.elem_bytes,
                        map: m.id,
                        map_dim: m.dim,
                        idx: a.idx,
                        target_size: m.target,
                        colour: a.colour,
                    },
                    map_values: &m.values,
                }
            })
            .collect()
    }

    fn try_build(&self, staging: bool) -> Result<Plan, PlanError> {
        let args = self.bound();
        Plan::build(&self.request(&args, staging))
    }

    fn request<'a>(&self, args: &'a [IndirectArg<'a>], staging: bool) -> PlanRequest<'a> {
        PlanRequest {
            set: 7,
            set_size: self.set_size,
            start: self.start,
            end: self.end,
            part_size: self.part_size,
            staging,
            args,
        }
    }

    /// Builds the plan (staged) and checks every property.
    fn plan(&self) -> Plan {
        let plan = self.try_build(true).expect("plan builds");
        check(self, &plan);
        plan
    }

    /// Targets (dat, target) element `e` touches through coloured args.
    fn coloured_targets(&self, e: usize) -> HashSet<(u64, i32)> {
        let mut s = HashSet::new();
        for a in self.args.iter().filter(|a| a.colour) {
            let m = &self.maps[a.map];
            for j in 0..a.idx.ncols(m.dim) {
                s.insert((a.dat, m.values[e * m.dim + a.idx.column(j)]));
            }
        }
        s
    }
}

/// Number of distinct other members sharing a target with each member.
fn conflict_degrees(members: &[HashSet<(u64, i32)>]) -> Vec<usize> {
    let mut by_target: HashMap<(u64, i32), Vec<usize>> = HashMap::new();
    for (i, s) in members.iter().enumerate() {
        for t in s {
            by_target.entry(*t).or_default().push(i);
        }
    }
    members
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut nb: HashSet<usize> = HashSet::new();
            for t in s {
                nb.extend(by_target[t].iter().copied().filter(|&j| j != i));
            }
            nb.len()
        })
        .collect()
}

/// Asserts that members of one colour share no target.
fn assert_colour_disjoint(members: &[HashSet<(u64, i32)>], colour: &[i32], what: &str) {
    let mut owner: HashMap<(i32, u64, i32), usize> = HashMap::new();
    for (i, s) in members.iter().enumerate() {
        for &(dat, t) in s {
            if let Some(j) = owner.insert((colour[i], dat, t), i) {
                panic!("{what} {j} and {i} both have colour {} and touch dat {dat} target {t}", colour[i]);
            }
        }
    }
}

fn check(case: &Case, plan: &Plan) {
    let (start, end, ps) = (case.start, case.end, case.part_size);
    let n = end - start;
    let nb = plan.nblocks;
    let coloured = case.args.iter().any(|a| a.colour);

    // Blocks: contiguous, ascending, every element in exactly one block.
    assert_eq!(nb, n.div_ceil(ps));
    assert_eq!((plan.offset.len(), plan.nelems.len()), (nb, nb));
    let mut seen = vec![0u8; n];
    for b in 0..nb {
        let r = plan.block_range(b);
        assert_eq!(r.start, start + b * ps, "block {b} offset");
        assert!(!r.is_empty() && r.len() <= ps);
        if b + 1 < nb {
            assert_eq!(r.len(), ps, "only the last block may be short");
        }
        for e in r {
            seen[e - start] += 1;
        }
    }
    assert!(seen.iter().all(|&s| s == 1), "every element in exactly one block");

    // Block colours: dense, grouped in blkmap ascending per colour.
    assert_eq!(plan.block_colour.len(), nb);
    assert_eq!(plan.ncolours == 0, nb == 0);
    if !coloured && nb > 0 {
        assert_eq!(plan.ncolours, 1, "no coloured arg: one colour");
    }
    assert_eq!(plan.colour_offsets.len(), plan.ncolours + 1);
    assert_eq!(plan.colour_offsets[0], 0);
    assert_eq!(plan.colour_offsets[plan.ncolours], nb);
    let mut in_blkmap = vec![false; nb];
    for c in 0..plan.ncolours {
        let bs = plan.colour_blocks(c);
        assert!(!bs.is_empty(), "colour {c} is unused: colours must be dense");
        assert_eq!(plan.ncolblk[c] as usize, bs.len());
        assert!(bs.windows(2).all(|w| w[0] < w[1]), "colour {c} blocks ascending");
        for &b in bs {
            assert_eq!(plan.block_colour[b as usize] as usize, c);
            assert!(!in_blkmap[b as usize]);
            in_blkmap[b as usize] = true;
        }
    }
    assert!(in_blkmap.iter().all(|&x| x));

    // No two blocks of one colour share a coloured target; greedy bound.
    let block_targets: Vec<HashSet<(u64, i32)>> =
        (0..nb).map(|b| plan.block_range(b).flat_map(|e| case.coloured_targets(e)).collect()).collect();
    assert_colour_disjoint(&block_targets, &plan.block_colour, "blocks");
    if nb > 0 {
        let maxdeg = conflict_degrees(&block_targets).into_iter().max().unwrap();
        assert!(plan.ncolours <= maxdeg + 1, "{} block colours > max degree {maxdeg} + 1", plan.ncolours);
    }

    // Thread colours within each block.
    assert_eq!(plan.thrcol.len(), n);
    assert_eq!(plan.nthrcol.len(), nb);
    for b in 0..nb {
        let r = plan.block_range(b);
        let cols: Vec<i32> = r.clone().map(|e| plan.thrcol[e - start]).collect();
        let k = plan.nthrcol[b];
        assert!(cols.iter().all(|&c| c >= 0 && c < k), "block {b}: thrcol in 0..{k}");
        let used: HashSet<i32> = cols.iter().copied().collect();
        assert_eq!(used.len(), k as usize, "block {b}: thread colours dense");
        if !coloured {
            assert_eq!((k, used.contains(&0)), (1, true));
        }
        let elems: Vec<HashSet<(u64, i32)>> = r.map(|e| case.coloured_targets(e)).collect();
        assert_colour_disjoint(&elems, &cols, &format!("block {b}: elements"));
        let maxdeg = conflict_degrees(&elems).into_iter().max().unwrap();
        assert!(k as usize <= maxdeg + 1, "block {b}: {k} thread colours > {maxdeg} + 1");
    }
    assert_eq!(plan.max_nthrcol, plan.nthrcol.iter().copied().max().unwrap_or(0) as usize);

    check_staging(case, plan);
}

fn check_staging(case: &Case, plan: &Plan) {
    let start = case.start;
    let nb = plan.nblocks;
    // Pairs: unique (dat, map) in order of first appearance.
    let mut want_pairs: Vec<(u64, u64)> = Vec::new();
    for a in &case.args {
        let key = (a.dat, case.maps[a.map].id);
        if !want_pairs.contains(&key) {
            want_pairs.push(key);
        }
    }
    let got: Vec<(u64, u64)> = plan.pairs.iter().map(|p| (p.dat, p.map)).collect();
    assert_eq!(got, want_pairs);
    let npairs = want_pairs.len();
    assert_eq!(plan.ind_offs.len(), nb * npairs);
    assert_eq!(plan.ind_sizes.len(), nb * npairs);
    assert_eq!(plan.loc_map.len(), plan.nloc_cols * plan.len());
    assert_eq!(plan.staging_bytes.len(), nb);

    for b in 0..nb {
        let mut bytes = 0;
        for (p, &(dat, map)) in want_pairs.iter().enumerate() {
            // The block's targets through every column any arg of this pair uses.
            let mut want = BTreeSet::new();
            for a in case.args.iter().filter(|a| (a.dat, case.maps[a.map].id) == (dat, map)) {
                let m = &case.maps[a.map];
                for e in plan.block_range(b) {
                    for j in 0..a.idx.ncols(m.dim) {
                        want.insert(m.values[e * m.dim + a.idx.column(j)]);
                    }
                }
            }
            let want: Vec<i32> = want.into_iter().collect();
            assert_eq!(plan.ind_block(b, p), want.as_slice(), "block {b} pair {p} ind_map");
            let pair = &plan.pairs[p];
            bytes += (want.len() * pair.elem_bytes).div_ceil(STAGING_ALIGN) * STAGING_ALIGN;
        }
        assert_eq!(plan.staging_bytes[b], bytes, "block {b} staging bytes");
    }
    assert_eq!(plan.max_staging_bytes, plan.staging_bytes.iter().copied().max().unwrap_or(0));

    // Round trip through every arg column.
    for (ai, a) in case.args.iter().enumerate() {
        let m = &case.maps[a.map];
        let p = plan.pair_of_arg[ai];
        assert_eq!(plan.pairs[p].dat, a.dat);
        assert_eq!(plan.arg_col_start[ai + 1] - plan.arg_col_start[ai], a.idx.ncols(m.dim));
        for j in 0..a.idx.ncols(m.dim) {
            let loc = plan.loc(ai, j);
            for b in 0..nb {
                let staged = plan.ind_block(b, p);
                for e in plan.block_range(b) {
                    let l = loc[e - start] as usize;
                    assert_eq!(
                        staged[l],
                        m.values[e * m.dim + a.idx.column(j)],
                        "arg {ai} column {j} element {e}: staged copy is the mapped target"
                    );
                }
            }
        }
    }
}

fn map(id: u64, dim: usize, target: usize, values: Vec<i32>) -> TMap {
    assert_eq!(values.len() % dim, 0);
    TMap { id, dim, target, values }
}

fn arg(dat: u64, map: usize, idx: MapIdx, colour: bool) -> TArg {
    TArg { dat, map, idx, colour, elem_bytes: 8 }
}

/// A random loop: 1-3 target sets, 1-3 maps, 0-5 args, random range and part size.
fn random_case(rng: &mut Rng) -> Case {
    let set_size = match rng.below(10) {
        0 => 0,
        1 => 1,
        _ => rng.below(400),
    };
    let ntargets = 1 + rng.below(3);
    let target_sizes: Vec<usize> =
        (0..ntargets).map(|_| if rng.chance(20) { 1 + rng.below(3) } else { 1 + rng.below(300) }).collect();
    let nmaps = 1 + rng.below(3);
    let maps: Vec<TMap> = (0..nmaps)
        .map(|i| {
            let dim = 1 + rng.below(4);
            let ts = rng.below(ntargets);
            let target = target_sizes[ts];
            let local = rng.chance(50); // mesh-like locality: targets near e * target / set
            let values = (0..set_size * dim)
                .map(|v| {
                    let e = v / dim;
                    let t =
                        if local { (e * target / set_size.max(1) + rng.below(5)) % target } else { rng.below(target) };
                    t as i32
                })
                .collect();
            TMap {
                id: 100 + (ts as u64) * 10 + i as u64, // encodes the target set for dat choice
                dim,
                target,
                values,
            }
        })
        .collect();
    let nargs = rng.below(6);
    let args = (0..nargs)
        .map(|_| {
            let mi = rng.below(nmaps);
            let m = &maps[mi];
            let ts = (m.id - 100) / 10;
            let dat = ts * 2 + rng.below(2) as u64; // two dats per target set
            let idx = if rng.chance(25) { MapIdx::All } else { MapIdx::Col(rng.below(m.dim) as u32) };
            TArg { dat, map: mi, idx, colour: rng.chance(60), elem_bytes: 8 * (1 + dat as usize % 3) }
        })
        .collect();
    let start = if set_size > 0 && rng.chance(30) { rng.below(set_size) } else { 0 };
    let end = if rng.chance(30) { start + rng.below(set_size - start + 1) } else { set_size };
    let part_size = match rng.below(5) {
        0 => 1,
        1 => 1000,
        _ => 1 + rng.below(70),
    };
    Case { set_size, start, end, part_size, maps, args }
}

#[test]
fn random_meshes() {
    let mut rng = Rng::new(2024);
    for _ in 0..400 {
        random_case(&mut rng).plan();
    }
}

#[test]
fn unstaged_plan_has_the_same_blocks_and_colours() {
    let mut rng = Rng::new(99);
    for _ in 0..50 {
        let case = random_case(&mut rng);
        let full = case.try_build(true).unwrap();
        let bare = case.try_build(false).unwrap();
        assert!(!bare.staged && bare.ind_map.is_empty() && bare.loc_map.is_empty());
        assert_eq!(bare.max_staging_bytes, 0);
        assert_eq!(
            (&bare.blkmap, &bare.block_colour, &bare.thrcol, &bare.nthrcol),
            (&full.blkmap, &full.block_colour, &full.thrcol, &full.nthrcol)
        );
    }
}

#[test]
fn all_elements_on_one_target() {
    let n = 50;
    let case = Case::whole(n, 4, vec![map(1, 1, 3, vec![0; n])], vec![arg(1, 0, MapIdx::Col(0), true)]);
    let plan = case.plan();
    assert_eq!(plan.nblocks, 13);
    assert_eq!(plan.ncolours, 13, "every block conflicts with every other");
    assert!(plan.nthrcol[..12].iter().all(|&k| k == 4));
    assert_eq!(plan.nthrcol[12], 2);
    assert_eq!(plan.ind_block(3, 0), &[0]);
}

#[test]
fn star_needs_more_than_100_block_colours() {
    // Element e touches the hub 0 and its own target e + 1: with one element per block every
    // block conflicts with every other through the hub.
    let n = 150;
    let values = (0..n).flat_map(|e| [0, e as i32 + 1]).collect();
    let case = Case::whole(n, 1, vec![map(1, 2, n + 1, values)], vec![arg(5, 0, MapIdx::All, true)]);
    let plan = case.plan();
    assert_eq!(plan.ncolours, n);
    assert_eq!(plan.block_colour, (0..n as i32).collect::<Vec<_>>());
    assert_eq!(plan.max_nthrcol, 1);
}

#[test]
fn one_block_needs_more_than_32_thread_colours() {
    // 100 elements in one block all touch the hub: 100 thread colours over four mask passes.
    let n = 100;
    let values = (0..n).flat_map(|e| [e as i32 + 1, 0]).collect();
    let case = Case::whole(n, 128, vec![map(1, 2, n + 1, values)], vec![arg(5, 0, MapIdx::All, true)]);
    let plan = case.plan();
    assert_eq!((plan.nblocks, plan.ncolours), (1, 1));
    assert_eq!(plan.nthrcol, vec![n as i32]);
    let mut cols = plan.thrcol.clone();
    cols.sort_unstable();
    assert_eq!(cols, (0..n as i32).collect::<Vec<_>>());
    assert_eq!(plan.ind_block(0, 0).len(), n + 1);
}

#[test]
fn hub_pattern_with_several_blocks_and_passes() {
    // 3 hubs, 300 elements, blocks of 40: both levels exceed 32 colours.
    let n = 300;
    let values = (0..n).flat_map(|e| [(e % 3) as i32, 3 + e as i32]).collect();
    let case = Case::whole(n, 40, vec![map(1, 2, n + 3, values)], vec![arg(5, 0, MapIdx::All, true)]);
    let plan = case.plan();
    assert_eq!(plan.ncolours, plan.nblocks);
    assert!(plan.nthrcol[..7].iter().all(|&k| k == 14));
}

#[test]
fn empty_and_single_element_sets() {
    let empty = Case::whole(0, 8, vec![map(1, 2, 4, vec![])], vec![arg(1, 0, MapIdx::All, true)]);
    let plan = empty.plan();
    assert_eq!((plan.nblocks, plan.ncolours, plan.max_nthrcol), (0, 0, 0));
    assert!(plan.blkmap.is_empty() && plan.thrcol.is_empty() && plan.ind_map.is_empty());
    assert_eq!(plan.colour_offsets, vec![0]);

    let one = Case::whole(1, 8, vec![map(1, 2, 4, vec![3, 1])], vec![arg(1, 0, MapIdx::All, true)]);
    let plan = one.plan();
    assert_eq!((plan.nblocks, plan.ncolours, plan.max_nthrcol), (1, 1, 1));
    assert_eq!(plan.ind_block(0, 0), &[1, 3]);
    assert_eq!((plan.loc(0, 0)[0], plan.loc(0, 1)[0]), (1, 0));

    // An empty sub-range of a non-empty set.
    let mut mid = Case::whole(10, 4, vec![map(1, 1, 2, vec![0; 10])], vec![arg(1, 0, MapIdx::Col(0), true)]);
    mid.start = 6;
    mid.end = 6;
    assert_eq!(mid.plan().nblocks, 0);
}

#[test]
fn block_larger_than_the_set_gives_one_block() {
    let n = 37;
    let values = (0..n).flat_map(|e| [e as i32, (e as i32 + 1) % n as i32]).collect();
    let case = Case::whole(n, 1000, vec![map(1, 2, n, values)], vec![arg(1, 0, MapIdx::All, true)]);
    let plan = case.plan();
    assert_eq!((plan.nblocks, plan.ncolours), (1, 1));
    assert_eq!(plan.block_range(0), 0..n);
    // A ring of odd length needs 3 colours; greedy in element order finds exactly 3.
    assert_eq!(plan.nthrcol, vec![3]);
}

#[test]
fn repeated_entries_do_not_conflict_with_themselves() {
    // Every element touches its own target twice.
    let n = 20;
    let values = (0..n).flat_map(|e| [e as i32, e as i32]).collect();
    let case = Case::whole(n, 4, vec![map(1, 2, n, values)], vec![arg(1, 0, MapIdx::All, true)]);
    let plan = case.plan();
    assert_eq!((plan.ncolours, plan.max_nthrcol), (1, 1));
    assert_eq!(plan.ind_block(1, 0), &[4, 5, 6, 7]);
    assert_eq!(plan.loc(0, 0), plan.loc(0, 1));
}

#[test]
fn same_dat_through_two_maps_conflicts_but_two_dats_do_not() {
    // Maps A and B both target a set of n; A[e] = e, B[e] = e + 1 mod n.
    let n = 16;
    let a = map(1, 1, n, (0..n as i32).collect());
    let b = map(2, 1, n, (0..n as i32).map(|e| (e + 1) % n as i32).collect());
    let same = Case::whole(n, 1, vec![a, b], vec![arg(9, 0, MapIdx::Col(0), true), arg(9, 1, MapIdx::Col(0), true)]);
    let plan = same.plan();
    assert!(plan.ncolours >= 2, "blocks e and e+1 share dat 9 target e+1");
    for bl in 0..n {
        assert_ne!(plan.block_colour[bl], plan.block_colour[(bl + 1) % n]);
    }
    let different = Case { args: vec![arg(9, 0, MapIdx::Col(0), true), arg(10, 1, MapIdx::Col(0), true)], ..same };
    assert_eq!(different.plan().ncolours, 1, "different dats never conflict");
}

#[test]
fn read_only_args_are_not_coloured() {
    let n = 30;
    let case = Case::whole(n, 4, vec![map(1, 1, 2, vec![0; n])], vec![arg(1, 0, MapIdx::Col(0), false)]);
    let plan = case.plan();
    assert_eq!((plan.ncolours, plan.max_nthrcol), (1, 1));
    assert!(plan.thrcol.iter().all(|&c| c == 0));
}

#[test]
fn greedy_bound_on_a_simple_graph() {
    // Edges of a random graph coloured through their two nodes, one edge per block: the block
    // conflict graph is the line graph, and first-fit stays within max degree + 1.
    let mut rng = Rng::new(7);
    for _ in 0..20 {
        let nodes = 2 + rng.below(40);
        let edges = rng.below(200);
        let mut values = Vec::new();
        for _ in 0..edges {
            let a = rng.below(nodes);
            let b = (a + 1 + rng.below(nodes - 1)) % nodes;
            values.extend([a as i32, b as i32]);
        }
        let case = Case::whole(edges, 1, vec![map(1, 2, nodes, values)], vec![arg(1, 0, MapIdx::All, true)]);
        case.plan(); // check() asserts the degree bound at both levels
        let mut one_block = case;
        one_block.part_size = 1000;
        one_block.plan();
    }
}

#[test]
fn pairs_share_renumbering_by_map_and_columns() {
    // Airfoil res_calc shape: x via pedge 0/1, q, adt, res via pecell 0/1.
    let n = 64;
    let mut rng = Rng::new(3);
    let pedge = map(1, 2, 40, (0..2 * n).map(|_| rng.below(40) as i32).collect());
    let pecell = map(2, 2, 30, (0..2 * n).map(|_| rng.below(30) as i32).collect());
    let mut args = Vec::new();
    for (dat, m, colour) in [(10, 0, false), (11, 1, false), (12, 1, false), (13, 1, true)] {
        args.push(arg(dat, m, MapIdx::Col(0), colour));
        args.push(arg(dat, m, MapIdx::Col(1), colour));
    }
    let case = Case::whole(n, 16, vec![pedge, pecell], args);
    let plan = case.plan();
    assert_eq!(plan.pairs.len(), 4);
    let groups: Vec<usize> = plan.pairs.iter().map(|p| p.group).collect();
    assert_eq!(groups, vec![0, 1, 1, 1]);
    assert_eq!(plan.nloc_cols, 4);
    assert_eq!(plan.loc_col, vec![0, 1, 2, 3, 2, 3, 2, 3]);
    for b in 0..plan.nblocks {
        assert_eq!(plan.ind_offs[b * 4 + 1], plan.ind_offs[b * 4 + 3]);
    }
    // A pair using only column 0 of pecell is a different group.
    let mut case = case;
    case.args.push(arg(14, 1, MapIdx::Col(0), false));
    let plan = case.plan();
    assert_eq!(plan.pairs[4].group, 2);
}

#[test]
fn builds_are_deterministic() {
    let mut rng = Rng::new(11);
    for _ in 0..20 {
        let case = random_case(&mut rng);
        assert_eq!(case.try_build(true).unwrap(), case.try_build(true).unwrap());
    }
}

#[test]
fn cache_reuses_plans_by_key() {
    let n = 20;
    let case = Case::whole(
        n,
        4,
        vec![map(1, 2, n, (0..2 * n as i32).map(|v| v % n as i32).collect())],
        vec![arg(1, 0, MapIdx::All, true)],
    );
    let args = case.bound();
    let mut cache = PlanCache::new();
    let req = case.request(&args, true);
    let p1 = cache.get_or_build(&req).unwrap();
    let p2 = cache.get_or_build(&req).unwrap();
    assert!(Arc::ptr_eq(&p1, &p2));
    assert_eq!(cache.len(), 1);

    let other_range = PlanRequest { start: 4, ..req };
    assert!(!Arc::ptr_eq(&p1, &cache.get_or_build(&other_range).unwrap()));
    let unstaged = PlanRequest { staging: false, ..req };
    assert!(!cache.get_or_build(&unstaged).unwrap().staged);
    let other_part = PlanRequest { part_size: 5, ..req };
    cache.get_or_build(&other_part).unwrap();
    assert_eq!(cache.len(), 4);

    // The key is made of ids and sizes: a different idx or colour flag is a different key.
    let mut changed = args.clone();
    changed[0].desc.idx = MapIdx::Col(1);
    assert_ne!(req.key(), case.request(&changed, true).key());
    let mut changed = args.clone();
    changed[0].desc.colour = false;
    assert_ne!(req.key(), case.request(&changed, true).key());
    assert_eq!(req.key(), case.request(&case.bound(), true).key());

    // Failures are reported and not cached.
    let bad = PlanRequest { part_size: 0, ..req };
    assert_eq!(cache.get_or_build(&bad).unwrap_err(), PlanError::ZeroPartSize);
    assert_eq!(cache.len(), 4);
    cache.clear();
    assert!(cache.is_empty());
}

#[test]
fn bad_requests_are_refused() {
    let base =
        || Case::whole(4, 2, vec![map(1, 2, 3, vec![0, 1, 2, 0, 1, 2, 0, 1])], vec![arg(1, 0, MapIdx::All, true)]);
    let err = |c: &Case| c.try_build(true).unwrap_err();

    let mut c = base();
    c.part_size = 0;
    assert_eq!(err(&c), PlanError::ZeroPartSize);
    let mut c = base();
    c.end = 5;
    assert_eq!(err(&c), PlanError::BadRange { start: 0, end: 5, set_size: 4 });
    let mut c = base();
    c.start = 3;
    c.end = 2;
    assert!(matches!(err(&c), PlanError::BadRange { .. }));
    let mut c = base();
    c.maps[0].values[5] = 3;
    assert_eq!(err(&c), PlanError::MapOutOfRange { arg: 0, element: 2, position: 1, value: 3, target_size: 3 });
    let mut c = base();
    c.maps[0].values[0] = -1;
    assert!(matches!(err(&c), PlanError::MapOutOfRange { element: 0, position: 0, .. }));
    // Out-of-range values outside the planned range are not read, so not refused.
    let mut c = base();
    c.maps[0].values[7] = 99;
    c.end = 3;
    assert!(c.try_build(true).is_ok());
    let mut c = base();
    c.args[0].idx = MapIdx::Col(2);
    assert_eq!(err(&c), PlanError::BadIdx { arg: 0, idx: 2, map_dim: 2 });
    let mut c = base();
    c.maps[0].values.pop();
    c.maps[0].dim = 1; // 7 values for 4 elements of dim 1
    c.args[0].idx = MapIdx::Col(0);
    assert_eq!(err(&c), PlanError::MapLength { arg: 0, expected: 4, got: 7 });
    let mut c = base();
    c.args.push(TArg { elem_bytes: 16, ..arg(1, 0, MapIdx::Col(0), false) });
    assert_eq!(err(&c), PlanError::DatInconsistent { arg: 1, dat: 1 });
    let mut c = base();
    c.maps.push(map(1, 1, 3, vec![0; 4])); // same id, different dim
    c.args.push(arg(2, 1, MapIdx::Col(0), false));
    assert_eq!(err(&c), PlanError::MapInconsistent { arg: 1, map: 1 });
    // The same map given twice as equal copies is accepted.
    let mut c = base();
    let copy = map(1, 2, 3, c.maps[0].values.clone());
    c.maps.push(copy);
    c.args.push(arg(2, 1, MapIdx::Col(0), false));
    assert_eq!(c.plan().pairs.len(), 2);
    assert!(err(&Case { part_size: 0, ..base() }).to_string().contains("part size"));
}

#[test]
fn map_idx_from_op2_convention() {
    assert_eq!(MapIdx::from_op2(0, 4), Some(MapIdx::Col(0)));
    assert_eq!(MapIdx::from_op2(3, 4), Some(MapIdx::Col(3)));
    assert_eq!(MapIdx::from_op2(-4, 4), Some(MapIdx::All));
    assert_eq!(MapIdx::from_op2(-1, 4), None);
    assert_eq!(MapIdx::from_op2(-2, 4), None);
    assert_eq!(MapIdx::All.ncols(4), 4);
    assert_eq!((MapIdx::All.column(2), MapIdx::Col(3).column(0)), (2, 3));
}

#[test]
fn colouring_rule() {
    use Access::*;
    for acc in [Read, Write, Rw, Inc, Min, Max] {
        assert!(!needs_colouring(acc, false), "direct {acc:?} never conflicts");
    }
    assert!(!needs_colouring(Read, true));
    for acc in [Write, Rw, Inc, Min, Max] {
        assert!(needs_colouring(acc, true), "indirect {acc:?} writes through a map");
    }
}
