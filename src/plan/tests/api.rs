//! The plan module's interface: cache keys and reuse, refused requests, OP2's `idx` convention
//! and the colouring rule.

use std::sync::Arc;

use super::*;

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
    assert!(needs_colouring(Inc, true), "indirect increments are coloured");
    for acc in [Read, Write, Rw, Min, Max] {
        assert!(!needs_colouring(acc, true), "indirect {acc:?} is not coloured");
    }
}
