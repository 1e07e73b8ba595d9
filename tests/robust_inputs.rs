//! Files are read as files (issue 21, point 2): crafted HDF5 files that lie about their types,
//! dataspaces and sizes, or are not files at all, are named errors, never an overflow, a hang,
//! an invalid `bool` or an allocation the file cannot back.
//!
//! Each case below crashed, hung or misread before the checks it names: the `type` attribute
//! of 2^20 strings overflowed a heap buffer (H5Aread before the size check), a FIFO hung the
//! open, the byte 2 came back as a Rust `bool`, a null dataspace declared an empty set, and an
//! extent of INT_MAX x 16 doubles that the file never stores aborted the process in `vec!`.

#![cfg(feature = "hdf5")]

use hdf5::types::FixedAscii;
use hdf5::{Extents, File};
use op2::config::Config;
use op2::context::Context;
use op2::core::ElemType;
use op2::error::ErrorCode;
use op2::io::hdf5::{decl_dat, decl_map, decl_set, get_const};
use std::path::{Path, PathBuf};

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("op2-robust-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ctx(dir: &Path) -> Context {
    let cache = dir.join("cache").to_string_lossy().into_owned();
    let env = move |k: &str| if k == "OP2_CACHE_DIR" { Some(cache.clone()) } else { None };
    Context::new(Config::resolve(&env, &[], 0).unwrap()).unwrap()
}

/// A constant as OP2 writes it: `[dim]` doubles with an int `dim` attribute.
fn constant(f: &File, name: &str, values: &[f64]) -> hdf5::Dataset {
    let c = f.new_dataset::<f64>().shape([values.len()]).create(name).unwrap();
    c.write_raw(values).unwrap();
    c.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[values.len() as i32]).unwrap();
    c
}

fn expect_err<T: std::fmt::Debug>(r: op2::Result<T>, code: ErrorCode, words: &[&str]) {
    let e = r.unwrap_err();
    assert_eq!(e.code, code, "{}", e.message);
    for w in words {
        assert!(e.message.contains(w), "'{w}' not in: {}", e.message);
    }
}

/// The heap overflow: a `type` attribute of 2^20 8-byte strings (8 MiB) was read whole into a
/// buffer of 8 bytes. Now its dataspace is checked first.
#[test]
fn type_attribute_of_many_strings_is_refused_before_reading() {
    let dir = tmpdir("attr");
    let path = dir.join("c.h5");
    let p = path.to_str().unwrap();
    {
        // dense attribute storage (HDF5 1.8+) holds an attribute of more than 64 KiB
        let f = File::with_options().with_fapl(|p| p.libver_v18()).create(&path).unwrap();
        let c = constant(&f, "gam", &[1.4]);
        let a = c.new_attr::<FixedAscii<8>>().shape([1usize << 20]).create("type").unwrap();
        let v = vec![FixedAscii::<8>::from_ascii("double").unwrap(); 1 << 20];
        a.write_raw(&v).unwrap();
        // a null-dataspace type attribute, and a dim attribute that is a string
        let c = constant(&f, "nulltype", &[1.0]);
        c.new_attr::<FixedAscii<8>>().shape(Extents::Null).create("type").unwrap();
        let c = f.new_dataset::<f64>().shape([1]).create("strdim").unwrap();
        c.write_raw(&[1.0]).unwrap();
        c.new_attr::<FixedAscii<8>>()
            .create("dim")
            .unwrap()
            .write_scalar(&FixedAscii::<8>::from_ascii("1").unwrap())
            .unwrap();
        // a dim attribute with a null dataspace
        let c = f.new_dataset::<f64>().shape([1]).create("nulldim").unwrap();
        c.write_raw(&[1.0]).unwrap();
        c.new_attr::<i32>().shape(Extents::Null).create("dim").unwrap();
    }
    let c = ctx(&dir);
    let mut out = [0u8; 8];
    let r = get_const(&c.comm, "gam", 1, ElemType::Double, &mut out, p, "op_get_const_hdf5");
    expect_err(r, ErrorCode::FileFormat, &["op_get_const_hdf5", "'gam'", "'type' attribute has shape [1048576]"]);
    let r = get_const(&c.comm, "nulltype", 1, ElemType::Double, &mut out, p, "op_get_const_hdf5");
    expect_err(r, ErrorCode::FileFormat, &["'nulltype'", "null dataspace"]);
    let r = get_const(&c.comm, "strdim", 1, ElemType::Double, &mut out, p, "op_get_const_hdf5");
    expect_err(r, ErrorCode::FileFormat, &["'strdim'", "no integer 'dim' attribute"]);
    let r = get_const(&c.comm, "nulldim", 1, ElemType::Double, &mut out, p, "op_get_const_hdf5");
    expect_err(r, ErrorCode::FileFormat, &["'nulldim'", "no integer 'dim' attribute"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bool dataset holding the byte 2 (written through the dataset's own enum type, so HDF5
/// copies it unconverted): not a valid `_Bool`/`bool`, so `FileFormat` naming where.
#[test]
fn bool_dataset_with_other_bytes_is_refused() {
    let dir = tmpdir("bool");
    let path = dir.join("b.h5");
    let p = path.to_str().unwrap();
    {
        let f = File::create(&path).unwrap();
        f.new_dataset::<i32>().shape([1]).create("cells").unwrap().write_raw(&[4]).unwrap();
        let good = f.new_dataset::<bool>().shape([4, 1]).create("p_ok").unwrap();
        good.write_raw(&[true, false, true, true]).unwrap();
        let bad = f.new_dataset::<bool>().shape([4, 1]).create("p_flag").unwrap();
        let bytes: [u8; 4] = [1, 0, 2, 1];
        // SAFETY: 4 bytes in the dataset's own 1-byte type, the whole dataspace.
        let rc = unsafe {
            hdf5_sys::h5d::H5Dwrite(
                bad.id(),
                bad.dtype().unwrap().id(),
                hdf5_sys::h5s::H5S_ALL,
                hdf5_sys::h5s::H5S_ALL,
                hdf5_sys::h5p::H5P_DEFAULT,
                bytes.as_ptr().cast(),
            )
        };
        assert!(rc >= 0);
        let c = f.new_dataset::<bool>().shape([2]).create("flags").unwrap();
        // SAFETY: as above, 2 values.
        let rc = unsafe {
            hdf5_sys::h5d::H5Dwrite(
                c.id(),
                c.dtype().unwrap().id(),
                hdf5_sys::h5s::H5S_ALL,
                hdf5_sys::h5s::H5S_ALL,
                hdf5_sys::h5p::H5P_DEFAULT,
                [0u8, 255].as_ptr().cast(),
            )
        };
        assert!(rc >= 0);
        c.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[2]).unwrap();
        c.new_attr::<FixedAscii<4>>()
            .create("type")
            .unwrap()
            .write_scalar(&FixedAscii::<4>::from_ascii("bool").unwrap())
            .unwrap();
    }
    let mut c = ctx(&dir);
    let cells = decl_set(&mut c, p, "cells", "t").unwrap();
    let ok = decl_dat(&mut c, cells, 1, ElemType::Bool, p, "p_ok", "op_decl_dat_hdf5").unwrap();
    assert_eq!(c.dats[ok.0 as usize].data.as_slice(), [1, 0, 1, 1]);
    let r = decl_dat(&mut c, cells, 1, ElemType::Bool, p, "p_flag", "op_decl_dat_hdf5");
    expect_err(
        r,
        ErrorCode::FileFormat,
        &["op_decl_dat_hdf5", "'p_flag'", "the byte 2 at value 2 (element 2, component 0)"],
    );
    let mut out = [0u8; 2];
    let r = get_const(&c.comm, "flags", 2, ElemType::Bool, &mut out, p, "op_get_const_hdf5");
    expect_err(r, ErrorCode::FileFormat, &["'flags'", "the byte 255 at value 1"]);
    // the session goes on: a good read after the bad ones
    assert!(decl_dat(&mut c, cells, 1, ElemType::Bool, p, "p_ok", "t").is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Null dataspaces hold no values: never an empty set, map or dat.
#[test]
fn null_dataspaces_are_refused() {
    let dir = tmpdir("null");
    let path = dir.join("n.h5");
    let p = path.to_str().unwrap();
    {
        let f = File::create(&path).unwrap();
        f.new_dataset::<i32>().shape(Extents::Null).create("empty").unwrap();
        f.new_dataset::<i32>().shape(()).create("scalar").unwrap().write_scalar(&3).unwrap();
        f.new_dataset::<f64>().shape(Extents::Null).create("p_null").unwrap();
        f.new_dataset::<i32>().shape(Extents::Null).create("m_null").unwrap();
        // a set whose value was never written (storage unallocated: it would read as 0)
        f.new_dataset::<i32>().shape([1]).create("unwritten").unwrap();
    }
    let mut c = ctx(&dir);
    expect_err(decl_set(&mut c, p, "empty", "op_decl_set_hdf5"), ErrorCode::FileFormat, &["'empty'", "null dataspace"]);
    expect_err(
        decl_set(&mut c, p, "unwritten", "op_decl_set_hdf5"),
        ErrorCode::FileFormat,
        &["'unwritten'", "file stores 0 bytes of it"],
    );
    let s = decl_set(&mut c, p, "scalar", "op_decl_set_hdf5").unwrap();
    assert_eq!(c.sets[s.0 as usize].size, 3);
    expect_err(decl_dat(&mut c, s, 1, ElemType::Double, p, "p_null", "t"), ErrorCode::FileFormat, &["null dataspace"]);
    expect_err(decl_map(&mut c, s, s, 1, p, "m_null", "t"), ErrorCode::FileFormat, &["null dataspace"]);
    assert_eq!(c.sets.len(), 1, "no set was declared by the refused calls");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A FIFO, a directory and a device are not files: `Io` at once, never a hang.
#[test]
fn non_regular_files_are_refused_without_blocking() {
    let dir = tmpdir("fifo");
    let fifo = dir.join("mesh.h5");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let mut c = ctx(&dir);
    let r = decl_set(&mut c, fifo.to_str().unwrap(), "nodes", "op_decl_set_hdf5");
    expect_err(r, ErrorCode::Io, &["op_decl_set_hdf5", "is a FIFO", "only regular files"]);
    let mut out = [0u8; 8];
    let r = get_const(&c.comm, "gam", 1, ElemType::Double, &mut out, fifo.to_str().unwrap(), "op_get_const_hdf5");
    // (A blocking open would never return: the test would hang, not be slow; no time limit here
    // may depend on the machine being idle.)
    expect_err(r, ErrorCode::Io, &["is a FIFO"]);
    let d = dir.to_str().unwrap();
    expect_err(decl_set(&mut c, d, "nodes", "t"), ErrorCode::Io, &["is a directory"]);
    expect_err(decl_set(&mut c, "/dev/zero", "nodes", "t"), ErrorCode::Io, &["is a character device"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Extents the file does not store: INT_MAX x 16 doubles never written (256 GiB), a map of
/// INT_MAX x 2, a contiguous dataset whose declared storage is larger than the file. All are
/// `FileFormat` before any allocation; nothing is declared.
#[test]
fn extents_the_file_cannot_hold_are_refused_before_allocating() {
    let dir = tmpdir("huge");
    let path = dir.join("h.h5");
    let p = path.to_str().unwrap();
    let n = i32::MAX as usize;
    {
        let f = File::create(&path).unwrap();
        f.new_dataset::<i32>().shape([1]).create("huge").unwrap().write_raw(&[i32::MAX]).unwrap();
        f.new_dataset::<i32>().shape([1]).create("small").unwrap().write_raw(&[2]).unwrap();
        f.new_dataset::<f64>().shape([n, 16]).create("p_x").unwrap();
        f.new_dataset::<i32>().shape([n, 2]).create("pmap").unwrap();
        let k = f.new_dataset::<f64>().shape([4]).create("unwritten_const").unwrap();
        k.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[4]).unwrap();
        k.new_attr::<FixedAscii<6>>()
            .create("type")
            .unwrap()
            .write_scalar(&FixedAscii::<6>::from_ascii("double").unwrap())
            .unwrap();
        // chunked, only the first chunk written
        let ch = f.new_dataset::<f64>().shape([1000]).chunk([10]).create("p_part").unwrap();
        ch.write_slice(&[1.0f64; 10], 0..10).unwrap();
    }
    let mut c = ctx(&dir);
    let huge = decl_set(&mut c, p, "huge", "t").unwrap();
    let small = decl_set(&mut c, p, "small", "t").unwrap();
    assert_eq!(c.sets[huge.0 as usize].size, n);
    let r = decl_dat(&mut c, huge, 16, ElemType::Double, p, "p_x", "op_decl_dat_hdf5");
    expect_err(r, ErrorCode::FileFormat, &["'p_x'", "declares 34359738352 values of 8 bytes (274877906816 bytes)"]);
    let r = decl_map(&mut c, huge, small, 2, p, "pmap", "op_decl_map_hdf5");
    expect_err(r, ErrorCode::FileFormat, &["'pmap'", "file stores 0 bytes"]);
    let mut out = [0u8; 32];
    let r = get_const(&c.comm, "unwritten_const", 4, ElemType::Double, &mut out, p, "t");
    expect_err(
        r,
        ErrorCode::FileFormat,
        &["'unwritten_const'", "declares 4 values of 8 bytes (32 bytes), but the file stores 0 bytes"],
    );
    let part = c.decl_set(1000, "part").unwrap();
    let r = decl_dat(&mut c, part, 1, ElemType::Double, p, "p_part", "t");
    expect_err(
        r,
        ErrorCode::FileFormat,
        &["'p_part'", "declares 1000 values of 8 bytes (8000 bytes), but the file stores 80 bytes"],
    );
    assert!(c.dats.is_empty() && c.maps.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Values that live outside the file: an external link (to another file, which could be a
/// FIFO), a soft link, and a dataset with external storage (raw bytes of any file).
#[test]
fn values_outside_the_file_are_refused() {
    let dir = tmpdir("ext");
    let path = dir.join("e.h5");
    let other = dir.join("other.h5");
    let raw = dir.join("raw.bin");
    std::fs::write(&raw, [0u8; 32]).unwrap();
    let p = path.to_str().unwrap();
    {
        let o = File::create(&other).unwrap();
        o.new_dataset::<i32>().shape([1]).create("nodes").unwrap().write_raw(&[4]).unwrap();
        let f = File::create(&path).unwrap();
        f.new_dataset::<i32>().shape([1]).create("nodes").unwrap().write_raw(&[4]).unwrap();
        f.link_external(other.to_str().unwrap(), "nodes", "ext_nodes").unwrap();
        f.link_soft("/nodes", "soft_nodes").unwrap();
        let e = f.new_dataset::<f64>().shape([4, 1]).external(raw.to_str().unwrap(), 0, 32).create("p_ext").unwrap();
        drop(e);
    }
    let mut c = ctx(&dir);
    expect_err(decl_set(&mut c, p, "ext_nodes", "t"), ErrorCode::FileFormat, &["external link 'ext_nodes'"]);
    expect_err(decl_set(&mut c, p, "soft_nodes", "t"), ErrorCode::FileFormat, &["soft link 'soft_nodes'"]);
    let nodes = decl_set(&mut c, p, "nodes", "t").unwrap();
    let r = decl_dat(&mut c, nodes, 1, ElemType::Double, p, "p_ext", "t");
    expect_err(r, ErrorCode::FileFormat, &["'p_ext'", "external file"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
