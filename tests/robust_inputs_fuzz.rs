//! Seeded mutation fuzzing of the HDF5 readers (issue 21, point 2), on a file op2 wrote and a
//! file in OP2-Common's layout (10-byte type strings, a `long long` map, rank-1 dats, a
//! variable-length type string). Deterministic seed, bounded count and time (30 s). Every
//! reader call on every mutant must return a value or a named error (`FILE_FORMAT`, `IO`,
//! `MAP_OUT_OF_RANGE`, `BAD_SIZE`, `OUT_OF_MEMORY`): never a crash, a hang (a watchdog aborts
//! naming the mutant), a `bool` other than 0 or 1 or a map entry outside its target set. The
//! process runs under an address-space limit, so a mutant that makes a reader allocate what
//! the file cannot back fails instead of swapping.
//!
//! Two kinds of mutants, alternating:
//! - bytes: 1-4 byte edits (random, 0, 0xff, a flipped bit, an "interesting" integer) inside the
//!   bytes op2 interprets: every dataset's stored values (located with H5Dget_offset), i.e.
//!   set sizes, map entries, bools, numbers;
//! - structure: the file rewritten through the HDF5 API with one object changed: its datatype,
//!   its extent (null, scalar, rank 3, 0, INT_MAX, 2^40 rows: never written), its storage
//!   (unwritten, chunked and partly written), its `dim`/`type` attributes (missing, null,
//!   many values, other classes, long strings), or the object replaced by a soft link, an
//!   external link or an external link to a FIFO.
//!
//! Byte edits anywhere in HDF5's own metadata (object headers, B-trees, heaps) crash libhdf5
//! 1.10.8 itself within a few thousand mutants (H5O_msg_read, H5HG_read, datatype decoding: the
//! library's parser trusts the file), which op2 cannot guard against; `OP2_FUZZ_METADATA=1`
//! adds such mutants, for a libhdf5 that is hardened. `OP2_FUZZ_ITERS` (default 3000) and
//! `OP2_FUZZ_SEED` change the run; a failing mutant is kept as `target/fuzz-failure.h5`.

#![cfg(feature = "hdf5")]

use hdf5::types::{FixedAscii, VarLenUnicode};
use hdf5::File;
use op2::config::Config;
use op2::context::Context;
use op2::core::ElemType;
use op2::error::ErrorCode;
use op2::io::hdf5::{decl_dat, decl_map, decl_set, dump, get_const, write_const};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn ctx(dir: &Path) -> Context {
    let cache = dir.join("cache").to_string_lossy().into_owned();
    let env = move |k: &str| if k == "OP2_CACHE_DIR" { Some(cache.clone()) } else { None };
    Context::new(Config::resolve(&env, &[], 0).unwrap()).unwrap()
}

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// What a reader call of the fuzz may answer besides success (a mutated link name is a
/// dataset the file no longer holds: `NoDataset`).
const ALLOWED: [ErrorCode; 6] = [
    ErrorCode::FileFormat,
    ErrorCode::NoDataset,
    ErrorCode::Io,
    ErrorCode::MapOutOfRange,
    ErrorCode::BadSize,
    ErrorCode::OutOfMemory,
];

/// The readers' view of a base file: sets, maps (name, from, to, dim), dats (name, set, dim,
/// type) and constants (name, dim, type).
struct Layout {
    sets: &'static [&'static str],
    maps: &'static [(&'static str, usize, usize, i32)],
    dats: &'static [(&'static str, usize, i32, ElemType)],
    consts: &'static [(&'static str, usize, ElemType)],
}

const OP2_WRITTEN: Layout = Layout {
    sets: &["nodes", "edges", "cells"],
    maps: &[("pedge", 1, 0, 2), ("pcell", 2, 0, 3)],
    dats: &[
        ("p_x", 0, 2, ElemType::Double),
        ("p_flag", 1, 1, ElemType::Bool),
        ("p_id", 2, 1, ElemType::Int),
        ("p_f", 0, 3, ElemType::Float),
        ("p_u", 1, 1, ElemType::Ull),
    ],
    consts: &[("gam", 1, ElemType::Double), ("qinf", 4, ElemType::Double), ("on", 2, ElemType::Bool)],
};

const OP2_COMMON: Layout = Layout {
    sets: &["nodes", "edges"],
    maps: &[("pedge", 1, 0, 2)],
    dats: &[("p_bound", 1, 1, ElemType::Int), ("p_x", 0, 2, ElemType::Double)],
    consts: &[("qinf", 4, ElemType::Double), ("gam", 1, ElemType::Double)],
};

/// A file op2 writes: op_dump_to_hdf5 of sets, maps and dats of several types, then
/// op_write_const_hdf5 of three constants.
fn op2_written(dir: &Path) -> Vec<u8> {
    let path = dir.join("op2.h5");
    let p = path.to_str().unwrap();
    let mut c = ctx(dir);
    let nodes = c.decl_set(5, "nodes").unwrap();
    let edges = c.decl_set(4, "edges").unwrap();
    let cells = c.decl_set(2, "cells").unwrap();
    c.decl_map(edges, nodes, 2, &[0, 1, 1, 2, 2, 3, 3, 4], "pedge").unwrap();
    c.decl_map(cells, nodes, 3, &[0, 1, 2, 2, 3, 4], "pcell").unwrap();
    let x: Vec<u8> = (0..10).flat_map(|i| (i as f64 * 0.5).to_ne_bytes()).collect();
    c.decl_dat(nodes, 2, ElemType::Double, Some(&x), "p_x", "t").unwrap();
    c.decl_dat(edges, 1, ElemType::Bool, Some(&[1, 0, 1, 1]), "p_flag", "t").unwrap();
    let id: Vec<u8> = [7i32, -3].iter().flat_map(|v| v.to_ne_bytes()).collect();
    c.decl_dat(cells, 1, ElemType::Int, Some(&id), "p_id", "t").unwrap();
    c.decl_dat(nodes, 3, ElemType::Float, None, "p_f", "t").unwrap();
    let u: Vec<u8> = [1u64, u64::MAX, 3, 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
    c.decl_dat(edges, 1, ElemType::Ull, Some(&u), "p_u", "t").unwrap();
    dump(&c, p, "t").unwrap();
    write_const(&c.comm, "gam", 1, ElemType::Double, &1.4f64.to_ne_bytes(), p, "t").unwrap();
    let q: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    write_const(&c.comm, "qinf", 4, ElemType::Double, &q, p, "t").unwrap();
    write_const(&c.comm, "on", 2, ElemType::Bool, &[1, 0], p, "t").unwrap();
    std::fs::read(&path).unwrap()
}

/// A file the way OP2-Common (and older OP2) writes them, through the raw HDF5 API.
fn op2_common(dir: &Path) -> Vec<u8> {
    let path = dir.join("common.h5");
    {
        let f = File::create(&path).unwrap();
        let str10 = |ds: &hdf5::Dataset, s: &str| {
            let a = ds.new_attr::<FixedAscii<10>>().create("type").unwrap();
            a.write_scalar(&FixedAscii::<10>::from_ascii(s).unwrap()).unwrap();
        };
        f.new_dataset::<i32>().shape([1]).create("nodes").unwrap().write_raw(&[4]).unwrap();
        f.new_dataset::<i32>().shape([1]).create("edges").unwrap().write_raw(&[3]).unwrap();
        let m = f.new_dataset::<i64>().shape([3, 2]).create("pedge").unwrap();
        m.write_raw(&[0i64, 1, 1, 2, 2, 3]).unwrap();
        m.new_attr::<i32>().shape(1).create("size").unwrap().write_raw(&[3]).unwrap();
        str10(&m, "long long");
        let b = f.new_dataset::<i32>().shape([3]).create("p_bound").unwrap();
        b.write_raw(&[1, 2, 3]).unwrap();
        b.new_attr::<i32>().shape(1).create("size").unwrap().write_raw(&[4]).unwrap();
        str10(&b, "int");
        let x = f.new_dataset::<f64>().shape([4, 2]).create("p_x").unwrap();
        x.write_raw(&[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]).unwrap();
        let q = f.new_dataset::<f64>().shape([4]).create("qinf").unwrap();
        q.write_raw(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        q.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[4]).unwrap();
        let t: VarLenUnicode = "double".parse().unwrap();
        q.new_attr::<VarLenUnicode>().create("type").unwrap().write_scalar(&t).unwrap();
        let g = f.new_dataset::<f64>().shape([1]).create("gam").unwrap();
        g.write_raw(&[1.4]).unwrap();
        g.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[1]).unwrap();
        str10(&g, "double");
    }
    std::fs::read(&path).unwrap()
}

/// Every reader call over `path`; returns the number of calls that succeeded. Panics (naming
/// the call) on an answer outside `ALLOWED` or a bool that is not 0 or 1.
fn read_all(c: &mut Context, l: &Layout, path: &str) -> usize {
    let mut ok = 0;
    let check = |what: &str, code: Option<ErrorCode>| {
        if let Some(code) = code {
            assert!(ALLOWED.contains(&code), "{what}: unexpected error code {code:?}");
        }
    };
    let mut sets = Vec::new();
    for s in l.sets {
        let r = decl_set(c, path, s, "op_decl_set_hdf5");
        check(s, r.as_ref().err().map(|e| e.code));
        sets.push(r.ok());
        ok += sets.last().unwrap().is_some() as usize;
    }
    for &(name, from, to, dim) in l.maps {
        if let (Some(f), Some(t)) = (sets[from], sets[to]) {
            let r = decl_map(c, f, t, dim, path, name, "op_decl_map_hdf5");
            check(name, r.as_ref().err().map(|e| e.code));
            if let Ok(m) = r {
                let to_size = c.sets[t.0 as usize].size as i32;
                assert!(
                    c.maps[m.0 as usize].values.iter().all(|&v| (0..to_size).contains(&v)),
                    "{name}: entry out of range"
                );
                ok += 1;
            }
        }
    }
    for &(name, set, dim, ty) in l.dats {
        if let Some(s) = sets[set] {
            let r = decl_dat(c, s, dim, ty, path, name, "op_decl_dat_hdf5");
            check(name, r.as_ref().err().map(|e| e.code));
            if let Ok(d) = r {
                if ty == ElemType::Bool {
                    assert!(
                        c.dats[d.0 as usize].data.as_slice().iter().all(|&b| b <= 1),
                        "{name}: a bool that is not 0 or 1"
                    );
                }
                ok += 1;
            }
        }
    }
    for &(name, dim, ty) in l.consts {
        let mut out = vec![0u8; dim * ty.size()];
        let r = get_const(&c.comm, name, dim, ty, &mut out, path, "op_get_const_hdf5");
        check(name, r.as_ref().err().map(|e| e.code));
        if r.is_ok() {
            if ty == ElemType::Bool {
                assert!(out.iter().all(|&b| b <= 1), "{name}: a bool that is not 0 or 1");
            }
            ok += 1;
        }
    }
    ok
}

/// One mutant of `base`: 1-4 byte edits (random, 0, 0xff, a flipped bit, or a 1-8 byte
/// "interesting" integer: sizes, counts and indices live in such fields) at offsets inside
/// `regions`, sometimes (metadata mode only) a truncation.
fn mutate(base: &[u8], regions: &[std::ops::Range<usize>], rng: &mut Rng, truncate: bool) -> Vec<u8> {
    const INTERESTING: [u64; 9] = [0, 1, 2, 255, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 1 << 40, u64::MAX];
    let mut b = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        let r = &regions[rng.below(regions.len())];
        let at = r.start + rng.below(r.len());
        match rng.below(6) {
            0 => b[at] = rng.next() as u8,
            1 => b[at] = 0,
            2 => b[at] = 0xff,
            3 => b[at] ^= 1 << rng.below(8),
            4 => {
                let v = INTERESTING[rng.below(INTERESTING.len())].to_le_bytes();
                let n = [1, 2, 4, 8][rng.below(4)];
                for (k, &x) in v.iter().take(n).enumerate() {
                    if at + k < r.end {
                        b[at + k] = x;
                    }
                }
            }
            _ => b[at] = b[at].wrapping_add(1 + rng.below(3) as u8),
        }
    }
    if truncate && rng.below(40) == 0 {
        b.truncate(rng.below(b.len()));
    }
    b
}

/// The byte ranges of every dataset's stored values in the file at `path` (contiguous
/// storage: H5Dget_offset and the storage size).
fn value_regions(path: &Path, l: &Layout) -> Vec<std::ops::Range<usize>> {
    let f = File::open(path).unwrap();
    let names = l
        .sets
        .iter()
        .chain(l.maps.iter().map(|m| &m.0))
        .chain(l.dats.iter().map(|d| &d.0))
        .chain(l.consts.iter().map(|c| &c.0));
    let mut out = Vec::new();
    for n in names {
        let ds = f.dataset(n).unwrap();
        let off = ds.offset().expect("contiguous storage") as usize;
        out.push(off..off + ds.storage_size() as usize);
    }
    out
}

/// The layout the structure mutants are made from.
const STRUCT: Layout = Layout {
    sets: &["nodes", "edges"],
    maps: &[("pedge", 1, 0, 2)],
    dats: &[("p_x", 0, 2, ElemType::Double), ("p_flag", 1, 1, ElemType::Bool), ("p_id", 1, 1, ElemType::Int)],
    consts: &[("gam", 1, ElemType::Double), ("on", 2, ElemType::Bool)],
};

/// Datatypes a structure mutant may give an object.
#[derive(Clone, Copy, Debug)]
enum Ty {
    I8,
    I16,
    I32,
    I64,
    U8,
    U32,
    U64,
    F32,
    F64,
    Bool,
    Str,
}

const TYS: [Ty; 11] =
    [Ty::I8, Ty::I16, Ty::I32, Ty::I64, Ty::U8, Ty::U32, Ty::U64, Ty::F32, Ty::F64, Ty::Bool, Ty::Str];

/// Creates dataset `name` of `ty` and `shape` (chunked by `chunk` when given); writes `bytes`
/// (raw values of the dataset's own type, all of them) unless `None`.
fn create(
    f: &File,
    name: &str,
    ty: Ty,
    shape: hdf5::Extents,
    chunk: Option<Vec<usize>>,
    bytes: Option<&[u8]>,
) -> hdf5::Dataset {
    macro_rules! mk {
        ($t:ty) => {{
            let b = f.new_dataset::<$t>().shape(shape);
            match chunk {
                Some(c) => b.chunk(c).create(name),
                None => b.create(name),
            }
        }};
    }
    let ds = match ty {
        Ty::I8 => mk!(i8),
        Ty::I16 => mk!(i16),
        Ty::I32 => mk!(i32),
        Ty::I64 => mk!(i64),
        Ty::U8 => mk!(u8),
        Ty::U32 => mk!(u32),
        Ty::U64 => mk!(u64),
        Ty::F32 => mk!(f32),
        Ty::F64 => mk!(f64),
        Ty::Bool => mk!(bool),
        Ty::Str => mk!(FixedAscii<8>),
    }
    .unwrap();
    if let Some(bytes) = bytes {
        let dt = ds.dtype().unwrap();
        let n = ds.space().unwrap().size();
        let mut v = bytes.to_vec();
        v.resize(n * dt.size(), 0);
        if !v.is_empty() {
            // SAFETY: exactly the dataset's values in its own type, the whole dataspace.
            let rc = unsafe {
                hdf5_sys::h5d::H5Dwrite(
                    ds.id(),
                    dt.id(),
                    hdf5_sys::h5s::H5S_ALL,
                    hdf5_sys::h5s::H5S_ALL,
                    hdf5_sys::h5p::H5P_DEFAULT,
                    v.as_ptr().cast(),
                )
            };
            assert!(rc >= 0, "writing {name}");
        }
    }
    ds
}

/// An object of the `STRUCT` file: name, type, shape, values, whether it is a constant (with
/// `dim`/`type` attributes).
type Object = (&'static str, Ty, Vec<usize>, Vec<u8>, bool);

/// A structure mutant of the `STRUCT` file: every object as OP2 writes it except one, changed
/// in one way chosen by `rng`.
fn structured(dir: &Path, path: &Path, rng: &mut Rng) {
    let _ = std::fs::remove_file(path);
    let f = File::create(path).unwrap();
    let le = |v: &[i64], w: usize| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()[..w].to_vec()).collect() };
    let objects: Vec<Object> = vec![
        ("nodes", Ty::I32, vec![1], le(&[5], 4), false),
        ("edges", Ty::I32, vec![1], le(&[4], 4), false),
        ("pedge", Ty::I32, vec![4, 2], le(&[0, 1, 1, 2, 2, 3, 3, 4], 4), false),
        ("p_x", Ty::F64, vec![5, 2], (0..10).flat_map(|i| (i as f64).to_le_bytes()).collect(), false),
        ("p_flag", Ty::Bool, vec![4, 1], vec![1, 0, 1, 1], false),
        ("p_id", Ty::I32, vec![4, 1], le(&[7, -3, 0, 9], 4), false),
        ("gam", Ty::F64, vec![1], 1.4f64.to_le_bytes().to_vec(), true),
        ("on", Ty::Bool, vec![2], vec![1, 0], true),
    ];
    let victim = rng.below(objects.len());
    let kind = rng.below(9);
    for (i, (name, ty, shape, bytes, is_const)) in objects.into_iter().enumerate() {
        let (mut ty, mut shape, mut bytes, mut chunk, mut written) =
            (ty, hdf5::Extents::from(shape.clone()), bytes, None, true);
        let mut attrs = is_const;
        if i == victim {
            match kind {
                0 => {
                    ty = TYS[rng.below(TYS.len())];
                    bytes = (0..bytes.len() * 2).map(|_| rng.next() as u8).collect();
                }
                1 => {
                    let rows = [0usize, 1, 2, 5, i32::MAX as usize, 1 << 40][rng.below(6)];
                    shape = match rng.below(5) {
                        0 => hdf5::Extents::Null,
                        1 => hdf5::Extents::Scalar,
                        2 => hdf5::Extents::from([rows]),
                        3 => hdf5::Extents::from([rows, 1 + rng.below(3)]),
                        _ => hdf5::Extents::from([rows, 2, 2]),
                    };
                    written = rows <= 16 && rng.below(2) == 0;
                }
                2 => written = false,
                3 => bytes.iter_mut().for_each(|b| *b = rng.next() as u8),
                4 => {
                    // chunked (one chunk), written or not
                    chunk = Some(shape.dims()).filter(|d| !d.is_empty() && d.iter().all(|&x| x > 0));
                    written = rng.below(2) == 0;
                }
                5 | 6 => attrs = true,
                7 => {
                    match rng.below(3) {
                        0 => f.link_soft("/nodes", name).unwrap(),
                        1 => f.link_external("other.h5", "nodes", name).unwrap(),
                        _ => {
                            let fifo = dir.join("fifo.h5");
                            if !fifo.exists() {
                                let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
                                // SAFETY: a NUL-terminated path.
                                unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
                            }
                            f.link_external(fifo.to_str().unwrap(), "nodes", name).unwrap()
                        }
                    }
                    continue;
                }
                _ => {
                    // values at the edges of their type
                    for b in bytes.iter_mut() {
                        *b = [0u8, 1, 2, 0x7f, 0x80, 0xff][rng.below(6)];
                    }
                }
            }
        }
        let ds = create(&f, name, ty, shape, chunk, if written { Some(&bytes) } else { None });
        if attrs {
            let dim = if is_const { ds.space().map(|s| s.size()).unwrap_or(1) as i32 } else { 1 };
            let tname = match ty {
                Ty::F64 => "double",
                Ty::Bool => "bool",
                _ => "int",
            };
            if i == victim && kind == 5 {
                match rng.below(5) {
                    0 => {}
                    1 => drop(ds.new_attr::<i32>().shape(hdf5::Extents::Null).create("dim").unwrap()),
                    2 => ds
                        .new_attr::<FixedAscii<4>>()
                        .create("dim")
                        .unwrap()
                        .write_scalar(&FixedAscii::<4>::from_ascii("1").unwrap())
                        .unwrap(),
                    3 => ds.new_attr::<i32>().shape([3]).create("dim").unwrap().write_raw(&[dim, dim, dim]).unwrap(),
                    _ => ds
                        .new_attr::<i64>()
                        .shape(1)
                        .create("dim")
                        .unwrap()
                        .write_raw(&[[0, -1, i64::MAX, 1 << 40][rng.below(4)]])
                        .unwrap(),
                }
            } else {
                ds.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[dim]).unwrap();
            }
            if i == victim && kind == 6 {
                match rng.below(6) {
                    0 => {}
                    1 => drop(ds.new_attr::<FixedAscii<8>>().shape(hdf5::Extents::Null).create("type").unwrap()),
                    2 => {
                        let n = [2usize, 100, 4000][rng.below(3)];
                        let v = vec![FixedAscii::<8>::from_ascii(tname).unwrap(); n];
                        ds.new_attr::<FixedAscii<8>>().shape([n]).create("type").unwrap().write_raw(&v).unwrap();
                    }
                    3 => {
                        let t: hdf5::types::VarLenUnicode = tname.parse().unwrap();
                        ds.new_attr::<hdf5::types::VarLenUnicode>().create("type").unwrap().write_scalar(&t).unwrap();
                    }
                    4 => ds.new_attr::<i32>().create("type").unwrap().write_scalar(&7).unwrap(),
                    _ => {
                        let long = "unsigned long long:soa and then some more text";
                        let len = 1 + rng.below(long.len());
                        let a = ds.new_attr::<FixedAscii<64>>().create("type").unwrap();
                        a.write_scalar(&FixedAscii::<64>::from_ascii(&long[..len]).unwrap()).unwrap();
                    }
                }
            } else if is_const {
                ds.new_attr::<FixedAscii<8>>()
                    .create("type")
                    .unwrap()
                    .write_scalar(&FixedAscii::<8>::from_ascii(tname).unwrap())
                    .unwrap();
            }
        }
    }
}

#[test]
fn mutated_files_are_values_or_named_errors() {
    // An address-space limit for this process (its own test binary): a mutant that makes a
    // reader allocate more than the file can back must be an error, never a swapping machine.
    let limit = libc::rlimit { rlim_cur: 8 << 30, rlim_max: libc::RLIM_INFINITY };
    // SAFETY: a valid rlimit struct.
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
    let dir = std::env::temp_dir().join(format!("op2-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let metadata = std::env::var("OP2_FUZZ_METADATA").is_ok_and(|v| v == "1");
    let mut bases = Vec::new();
    for (bytes, layout, what) in
        [(op2_written(&dir), &OP2_WRITTEN, "op2-written"), (op2_common(&dir), &OP2_COMMON, "OP2-Common layout")]
    {
        // The unmutated files read completely.
        let p = dir.join("base.h5");
        std::fs::write(&p, &bytes).unwrap();
        let mut c = ctx(&dir);
        let all = layout.sets.len() + layout.maps.len() + layout.dats.len() + layout.consts.len();
        assert_eq!(read_all(&mut c, layout, p.to_str().unwrap()), all, "{what}");
        let regions = if metadata { std::iter::once(0..bytes.len()).collect() } else { value_regions(&p, layout) };
        bases.push((bytes, layout, regions));
    }
    {
        // the target of the structure mutants' external links (never followed)
        let other = dir.join("other.h5");
        let f = File::create(&other).unwrap();
        f.new_dataset::<i32>().shape([1]).create("nodes").unwrap().write_raw(&[5]).unwrap();
    }

    let iters: usize = std::env::var("OP2_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let seed: u64 = std::env::var("OP2_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_f0b2);
    let budget = Duration::from_secs(30);
    const MIN_MUTANTS: usize = 300;
    // Watchdog: a mutant that hangs a reader aborts the run naming the iteration.
    static CURRENT: AtomicU64 = AtomicU64::new(0);
    static BEAT: AtomicU64 = AtomicU64::new(0);
    let start = Instant::now();
    std::thread::spawn(move || loop {
        let seen = BEAT.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_secs(300));
        if BEAT.load(Ordering::SeqCst) == seen {
            eprintln!(
                "fuzz: iteration {} (seed {seed:#x}) made no progress for 300 s: a hang (mutant kept as target/fuzz-failure.h5)",
                CURRENT.load(Ordering::SeqCst)
            );
            std::process::abort();
        }
    });

    let mut rng = Rng(seed);
    let (mut done, mut fully_read, mut refused) = (0usize, 0usize, 0usize);
    let path: PathBuf = dir.join("mutant.h5");
    let p = path.to_str().unwrap().to_string();
    for i in 0..iters {
        // The time budget bounds the run; the first MIN_MUTANTS always run, however busy the
        // machine (no result may depend on its speed).
        if done >= MIN_MUTANTS && start.elapsed() > budget {
            break;
        }
        CURRENT.store(i as u64, Ordering::SeqCst);
        let layout = if i % 3 == 2 {
            structured(&dir, &path, &mut rng);
            &STRUCT
        } else {
            let (base, layout, regions) = &bases[i % 3];
            std::fs::write(&path, mutate(base, regions, &mut rng, metadata)).unwrap();
            *layout
        };
        let _ = std::fs::copy(&path, "target/fuzz-failure.h5");
        let mut c = ctx(&dir);
        let all = layout.sets.len() + layout.maps.len() + layout.dats.len() + layout.consts.len();
        let ok = read_all(&mut c, layout, &p);
        if ok == all {
            fully_read += 1;
        } else {
            refused += 1;
        }
        done += 1;
        BEAT.fetch_add(1, Ordering::SeqCst);
    }
    let _ = std::fs::remove_file("target/fuzz-failure.h5");
    eprintln!(
        "fuzz: {done} mutants in {:.1} s (seed {seed:#x}): {fully_read} read completely, {refused} refused in part",
        start.elapsed().as_secs_f64()
    );
    assert!(done >= MIN_MUTANTS.min(iters), "only {done} mutants ran");
    assert!(refused > done / 10, "only {refused} of {done} mutants were refused: the mutations miss what op2 checks");
    std::fs::remove_dir_all(&dir).unwrap();
}
