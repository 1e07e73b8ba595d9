//! Plans on random and adversarial meshes, each checked by the harness's `check`: one target
//! for everyone, stars and hubs forcing more than 32 (and 100) colours, empty and one-element
//! sets, blocks larger than the set, repeated map entries, conflicts keyed by dat.

use super::*;

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

/// `n` elements, element `e` touching hub `e % hubs` and its own target `hubs + e`.
fn hubs(n: usize, hubs: usize, part_size: usize) -> Case {
    let values = (0..n).flat_map(|e| [(e % hubs) as i32, (hubs + e) as i32]).collect();
    Case::whole(n, part_size, vec![map(1, 2, n + hubs, values)], vec![arg(5, 0, MapIdx::All, true)])
}

#[test]
fn hubs_exceed_32_colours_at_each_level() {
    // 40 blocks of 10, each touching all 3 hubs: 40 block colours (two passes), 4 thread colours.
    let plan = hubs(400, 3, 10).plan();
    assert_eq!((plan.nblocks, plan.ncolours, plan.max_nthrcol), (40, 40, 4));
    // 3 blocks of 120: 40 elements per hub in a block, so 40 thread colours (two passes).
    let plan = hubs(360, 3, 120).plan();
    assert_eq!((plan.nblocks, plan.ncolours), (3, 3));
    assert_eq!(plan.nthrcol, vec![40, 40, 40]);
    // Both at once: 40 blocks of 40 on one hub.
    let plan = hubs(1600, 1, 40).plan();
    assert_eq!((plan.nblocks, plan.ncolours), (40, 40));
    assert!(plan.nthrcol.iter().all(|&k| k == 40));
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
