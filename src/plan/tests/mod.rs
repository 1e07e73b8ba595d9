//! Property tests of plans on random and adversarial meshes: the shared harness.
//!
//! Every plan built here goes through [`check`], an independent checker written with plain hash
//! sets (nothing shared with the builder): blocks partition the range, no two blocks of one
//! colour and no two elements of one thread colour in a block share a coloured (dat, target),
//! colours are dense and within the greedy bound (max conflict degree + 1), and staging maps
//! round-trip (`ind_map[loc_map[e][j]] == map[e][j]`). A small xorshift generator keeps the
//! crate free of dependencies and the tests reproducible.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::*;

mod api;
mod meshes;

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
