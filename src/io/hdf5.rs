//! OP2's HDF5 files, both ways, in OP2's layout (feature `hdf5`; without it every function
//! answers `BackendUnavailable`, "built without feature hdf5").
//!
//! Layout (OP2-Common `op_hdf5.cpp`, quirks included so that files move both ways):
//! - a set is a 1-D dataset of one integer, its size;
//! - a map is a 2-D `[from.size][dim]` int dataset with int attributes `size` (the from-set size)
//!   and `dim`, and a string attribute `type` ("int");
//! - a dat is a 2-D `[set.size][dim]` dataset of its type with int attributes `size` (**bytes per
//!   element**, OP2's quirk) and `dim`, and a string attribute `type` as long as the type name;
//! - a constant is a 1-D `[dim]` dataset with attributes `dim` and `type` (both required).
//!
//! Reading takes sizes, dims and types from the dataspace and datatype, never from attributes
//! (as OP2 does since its PR #105); a rank-1 dataset is dim 1. Every count is compared with the
//! declared set before anything is allocated, so a file that lies about its sizes cannot make
//! op2 allocate or read out of bounds. Type conversions are allowed only when lossless.
//!
//! MPI (not in this build): reads go through `read_rows`, which takes the row range a process
//! owns; a distributed build passes its block there and opens the file with the MPI-IO driver.

#[cfg(feature = "hdf5")]
pub use imp::*;
#[cfg(not(feature = "hdf5"))]
pub use none::*;

#[cfg(not(feature = "hdf5"))]
mod none {
    use crate::context::Context;
    use crate::core::{DatId, ElemType, MapId, SetId};
    use crate::error::Result;
    use crate::op2_bail;

    fn unavailable<T>(call: &str) -> Result<T> {
        op2_bail!(
            BackendUnavailable,
            "{call}: op2 was built without feature hdf5 (rebuild with the default features and libhdf5-dev installed)"
        )
    }
    pub fn decl_set(_: &mut Context, _: &str, _: &str, call: &str) -> Result<SetId> {
        unavailable(call)
    }
    pub fn decl_map(_: &mut Context, _: SetId, _: SetId, _: i32, _: &str, _: &str, call: &str) -> Result<MapId> {
        unavailable(call)
    }
    pub fn decl_dat(_: &mut Context, _: SetId, _: i32, _: ElemType, _: &str, _: &str, call: &str) -> Result<DatId> {
        unavailable(call)
    }
    pub fn get_const(_: &str, _: usize, _: ElemType, _: &mut [u8], _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn write_const(_: &str, _: usize, _: ElemType, _: &[u8], _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn fetch_dat_to_file(_: &Context, _: DatId, _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn dump(_: &Context, _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }

    #[test]
    fn answers_a_named_error() {
        let e = get_const("gam", 1, ElemType::Double, &mut [0u8; 8], "f.h5", "op_get_const_hdf5").unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::BackendUnavailable);
        assert!(e.message.starts_with("op_get_const_hdf5: op2 was built without feature hdf5"));
    }
}

#[cfg(feature = "hdf5")]
mod imp {
    use super::super::host_dat;
    use crate::context::Context;
    use crate::core::{DatId, ElemType, MapId, SetId};
    use crate::error::{Op2Error, Result};
    use crate::{op2_bail, op2_err};
    use hdf5::types::{FloatSize, IntSize, TypeDescriptor};
    use hdf5::{Dataset, Datatype, File, H5Type, Location};

    /// Longest `type` attribute accepted on read (OP2's longest is "unsigned long long:soa").
    const MAX_TYPE_ATTR: usize = 32;

    fn h5err(call: &str, file: &str, what: &str, e: hdf5::Error) -> Op2Error {
        op2_err!(FileFormat, "{call}: file '{file}': {what}: {e}")
    }

    /// Opens an existing file for reading: a missing or unreadable file is `Io`, a file that is
    /// not HDF5 is `FileFormat`.
    fn open_read(path: &str, call: &str) -> Result<File> {
        if let Err(e) = std::fs::File::open(path) {
            op2_bail!(Io, "{call}: cannot open '{path}': {e}");
        }
        File::open(path).map_err(|e| op2_err!(FileFormat, "{call}: '{path}' is not a readable HDF5 file: {e}"))
    }

    /// Opens a file for writing, creating it if missing (`truncate`: always start empty).
    fn open_write(path: &str, truncate: bool, call: &str) -> Result<File> {
        let exists = std::path::Path::new(path).exists();
        let r = if truncate || !exists { File::create(path) } else { File::open_rw(path) };
        r.map_err(|e| {
            if exists && !truncate {
                op2_err!(FileFormat, "{call}: cannot open '{path}' for writing as HDF5: {e}")
            } else {
                op2_err!(Io, "{call}: cannot create '{path}': {e}")
            }
        })
    }

    fn dataset(f: &File, name: &str, path: &str, call: &str) -> Result<Dataset> {
        if !link_exists(f, name) {
            op2_bail!(FileFormat, "{call}: file '{path}' has no dataset '{name}'");
        }
        f.dataset(name).map_err(|e| h5err(call, path, &format!("'{name}' is not a dataset"), e))
    }

    /// Whether every component of a `/`-separated path exists (HDF5 errors on a missing parent).
    fn link_exists(f: &File, name: &str) -> bool {
        let mut prefix = String::new();
        for part in name.trim_start_matches('/').split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            if !f.link_exists(&prefix) {
                return false;
            }
        }
        true
    }

    /// (rows, cols) of a rank-1 (cols = 1) or rank-2 dataset.
    fn rows_cols(ds: &Dataset, name: &str, path: &str, call: &str) -> Result<(usize, usize)> {
        let shape = ds.shape();
        match shape.as_slice() {
            [n] => Ok((*n, 1)),
            [n, d] => Ok((*n, *d)),
            s => op2_bail!(
                FileFormat,
                "{call}: dataset '{name}' in '{path}' has rank {} (shape {s:?}); 1 or 2 expected",
                s.len()
            ),
        }
    }

    fn descriptor(ds: &Dataset, name: &str, path: &str, call: &str) -> Result<TypeDescriptor> {
        ds.dtype().and_then(|t| t.to_descriptor()).map_err(|e| h5err(call, path, &format!("datatype of '{name}'"), e))
    }

    fn describe(t: &TypeDescriptor) -> String {
        match t {
            TypeDescriptor::Integer(s) => format!("{}-bit signed integer", *s as usize * 8),
            TypeDescriptor::Unsigned(s) => format!("{}-bit unsigned integer", *s as usize * 8),
            TypeDescriptor::Float(s) => format!("{}-bit float", *s as usize * 8),
            TypeDescriptor::Boolean => "bool".into(),
            other => format!("{other}"),
        }
    }

    /// Whether values of the file's type convert to `want` without loss.
    fn lossless(t: &TypeDescriptor, want: ElemType) -> bool {
        use TypeDescriptor::*;
        match want {
            ElemType::Double => matches!(
                t,
                Float(FloatSize::U4 | FloatSize::U8)
                    | Integer(IntSize::U1 | IntSize::U2 | IntSize::U4)
                    | Unsigned(IntSize::U1 | IntSize::U2 | IntSize::U4)
            ),
            ElemType::Float => matches!(
                t,
                Float(FloatSize::U4) | Integer(IntSize::U1 | IntSize::U2) | Unsigned(IntSize::U1 | IntSize::U2)
            ),
            ElemType::Int => {
                matches!(t, Integer(IntSize::U1 | IntSize::U2 | IntSize::U4) | Unsigned(IntSize::U1 | IntSize::U2))
            }
            ElemType::Uint => matches!(t, Unsigned(IntSize::U1 | IntSize::U2 | IntSize::U4)),
            ElemType::Ll => matches!(t, Integer(_) | Unsigned(IntSize::U1 | IntSize::U2 | IntSize::U4)),
            ElemType::Ull => matches!(t, Unsigned(_)),
            ElemType::Bool => matches!(t, Boolean),
        }
    }

    /// Reads rows `[start, start + count)` of a `[rows][cols]` dataset into `out` (exactly
    /// `count * cols` values), converting to `T`. The whole dataset in one call when the range
    /// covers it; a hyperslab otherwise (the per-process block of a distributed read).
    fn read_rows<T: H5Type + Copy>(
        ds: &Dataset,
        start: usize,
        count: usize,
        rows: usize,
        out: &mut [T],
    ) -> hdf5::Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        if start == 0 && count == rows {
            ds.read_into_raw(out)?;
            return Ok(());
        }
        let arr: Vec<T> = if ds.ndim() == 1 {
            ds.read_slice_1d::<T, _>(start..start + count)?.to_vec()
        } else {
            ds.read_slice_2d::<T, _>((start..start + count, ..))?.iter().copied().collect()
        };
        out.copy_from_slice(&arr);
        Ok(())
    }

    /// Reads a whole dat-shaped dataset as `ty` and hands its native-order bytes to `f` (no
    /// copy beyond the read itself).
    fn read_as<R>(ds: &Dataset, ty: ElemType, rows: usize, n: usize, f: impl FnOnce(&[u8]) -> R) -> hdf5::Result<R> {
        fn go<T: H5Type + Copy + Default, R>(
            ds: &Dataset,
            rows: usize,
            n: usize,
            f: impl FnOnce(&[u8]) -> R,
        ) -> hdf5::Result<R> {
            let mut v = vec![T::default(); n];
            read_rows(ds, 0, rows, rows, &mut v)?;
            // SAFETY: T is a plain numeric type (or bool); its bytes are its native representation.
            let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(&v[..])) };
            Ok(f(bytes))
        }
        match ty {
            ElemType::Double => go::<f64, R>(ds, rows, n, f),
            ElemType::Float => go::<f32, R>(ds, rows, n, f),
            ElemType::Int => go::<i32, R>(ds, rows, n, f),
            ElemType::Uint => go::<u32, R>(ds, rows, n, f),
            ElemType::Ll => go::<i64, R>(ds, rows, n, f),
            ElemType::Ull => go::<u64, R>(ds, rows, n, f),
            ElemType::Bool => go::<bool, R>(ds, rows, n, f),
        }
    }

    /// `op_decl_set_hdf5`: the set's size is the one integer of dataset `name`.
    pub fn decl_set(ctx: &mut Context, path: &str, name: &str, call: &str) -> Result<SetId> {
        let f = open_read(path, call)?;
        let ds = dataset(&f, name, path, call)?;
        let t = descriptor(&ds, name, path, call)?;
        if !matches!(t, TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_)) {
            op2_bail!(
                FileFormat,
                "{call}: set dataset '{name}' in '{path}' holds {}; an integer expected",
                describe(&t)
            );
        }
        if ds.size() != 1 {
            op2_bail!(
                FileFormat,
                "{call}: set dataset '{name}' in '{path}' has {} elements (shape {:?}); expected 1 (the set size)",
                ds.size(),
                ds.shape()
            );
        }
        let mut v = [0i64; 1];
        ds.read_into_raw(&mut v).map_err(|e| h5err(call, path, &format!("reading '{name}'"), e))?;
        let Ok(size) = i32::try_from(v[0]) else {
            op2_bail!(FileFormat, "{call}: set '{name}' in '{path}' has size {}, outside [0, 2^31)", v[0]);
        };
        if size < 0 {
            op2_bail!(FileFormat, "{call}: set '{name}' in '{path}' has negative size {size}");
        }
        ctx.decl_set(size, name)
    }

    /// Checks a `[rows][cols]` dataset against the declared set size and dim.
    fn check_shape(ds: &Dataset, name: &str, path: &str, call: &str, set: (&str, usize), dim: usize) -> Result<()> {
        let (rows, cols) = rows_cols(ds, name, path, call)?;
        if cols != dim {
            op2_bail!(FileFormat, "{call}: dataset '{name}' in '{path}' has dim {cols}; the call expects dim {dim}");
        }
        if rows != set.1 {
            op2_bail!(
                FileFormat,
                "{call}: dataset '{name}' in '{path}' has {rows} rows; set '{}' has {} elements",
                set.0,
                set.1
            );
        }
        Ok(())
    }

    /// `op_decl_map_hdf5`: a `[from.size][dim]` integer dataset; entries range-checked into
    /// `[0, to.size)` as `op_decl_map` does.
    pub fn decl_map(
        ctx: &mut Context,
        from: SetId,
        to: SetId,
        dim: i32,
        path: &str,
        name: &str,
        call: &str,
    ) -> Result<MapId> {
        if dim < 1 {
            op2_bail!(BadSize, "{call} '{name}': dim {dim} is less than 1");
        }
        let dim = dim as usize;
        let f = open_read(path, call)?;
        let ds = dataset(&f, name, path, call)?;
        let fs = &ctx.sets[from.0 as usize];
        let n = fs.size;
        check_shape(&ds, name, path, call, (&fs.name, n), dim)?;
        let t = descriptor(&ds, name, path, call)?;
        let total = n * dim; // both declared: no overflow beyond what op_decl_map allows
        let values: Vec<i32> = match t {
            TypeDescriptor::Integer(IntSize::U1 | IntSize::U2 | IntSize::U4)
            | TypeDescriptor::Unsigned(IntSize::U1 | IntSize::U2) => {
                let mut v = vec![0i32; total];
                read_rows(&ds, 0, n, n, &mut v).map_err(|e| h5err(call, path, &format!("reading '{name}'"), e))?;
                v
            }
            TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) => {
                // long / long long / unsigned maps: read as 64-bit, narrow with a range check
                let mut v = vec![0i64; total];
                read_rows(&ds, 0, n, n, &mut v).map_err(|e| h5err(call, path, &format!("reading '{name}'"), e))?;
                let to_size = ctx.sets[to.0 as usize].size as i64;
                if let Some((pos, &x)) = v.iter().enumerate().find(|(_, &x)| x < 0 || x >= to_size) {
                    op2_bail!(
                        MapOutOfRange,
                        "{call} '{name}': entry {pos} (element {}, position {}) is {x}, outside [0, {to_size}) of set '{}'",
                        pos / dim,
                        pos % dim,
                        ctx.sets[to.0 as usize].name
                    );
                }
                v.into_iter().map(|x| x as i32).collect()
            }
            other => op2_bail!(
                FileFormat,
                "{call}: map dataset '{name}' in '{path}' holds {}; integers expected",
                describe(&other)
            ),
        };
        ctx.decl_map(from, to, dim as i32, &values, name)
            .map_err(|e| Op2Error::new(e.code, e.message.replacen("op_decl_map", call, 1)))
    }

    /// `op_decl_dat_hdf5`: a `[set.size][dim]` dataset whose type converts to `ty` without loss.
    pub fn decl_dat(
        ctx: &mut Context,
        set: SetId,
        dim: i32,
        ty: ElemType,
        path: &str,
        name: &str,
        call: &str,
    ) -> Result<DatId> {
        if dim < 1 {
            op2_bail!(BadSize, "{call} '{name}': dim {dim} is less than 1");
        }
        let dim = dim as usize;
        let f = open_read(path, call)?;
        let ds = dataset(&f, name, path, call)?;
        let s = &ctx.sets[set.0 as usize];
        let n = s.size;
        check_shape(&ds, name, path, call, (&s.name, n), dim)?;
        let t = descriptor(&ds, name, path, call)?;
        if !lossless(&t, ty) {
            op2_bail!(
                FileFormat,
                "{call}: dataset '{name}' in '{path}' holds {}, which does not convert to '{}' without loss",
                describe(&t),
                ty.api_name()
            );
        }
        let Some(total) = n.checked_mul(dim) else {
            op2_bail!(BadSize, "{call} '{name}': {n} elements x dim {dim} overflows");
        };
        read_as(&ds, ty, n, total, |bytes| ctx.decl_dat(set, dim as i32, ty, Some(bytes), name, call))
            .map_err(|e| h5err(call, path, &format!("reading '{name}'"), e))?
    }

    fn read_int_attr(loc: &Location, attr: &str) -> Option<i64> {
        let a = loc.attr(attr).ok()?;
        if a.size() != 1 {
            return None;
        }
        let mut v = [0i64; 1];
        a.read_into_raw(&mut v).ok()?;
        Some(v[0])
    }

    /// A fixed- or variable-length string attribute, at most `MAX_TYPE_ATTR` bytes.
    fn read_type_attr(loc: &Location, name: &str, path: &str, call: &str) -> Result<String> {
        let Ok(a) = loc.attr("type") else {
            op2_bail!(FileFormat, "{call}: constant '{name}' in '{path}' has no 'type' attribute (OP2 requires it)");
        };
        let t = a.dtype().and_then(|t| t.to_descriptor()).map_err(|e| h5err(call, path, "type attribute", e))?;
        let s = match t {
            TypeDescriptor::FixedAscii(len) | TypeDescriptor::FixedUnicode(len) => {
                if len > MAX_TYPE_ATTR {
                    op2_bail!(
                        FileFormat,
                        "{call}: constant '{name}' in '{path}': 'type' attribute is {len} bytes long; at most {MAX_TYPE_ATTR} expected"
                    );
                }
                let dt = a.dtype().map_err(|e| h5err(call, path, "type attribute", e))?;
                let mut buf = vec![0u8; len];
                // SAFETY: buf holds exactly one value of the attribute's own (fixed string) type.
                let rc =
                    hdf5::sync::sync(|| unsafe { hdf5_sys::h5a::H5Aread(a.id(), dt.id(), buf.as_mut_ptr().cast()) });
                if rc < 0 || a.size() != 1 {
                    op2_bail!(FileFormat, "{call}: constant '{name}' in '{path}': cannot read its 'type' attribute");
                }
                let end = buf.iter().position(|&b| b == 0).unwrap_or(len);
                String::from_utf8_lossy(&buf[..end]).trim().to_string()
            }
            TypeDescriptor::VarLenAscii | TypeDescriptor::VarLenUnicode => {
                let v: hdf5::types::VarLenUnicode =
                    a.read_scalar().map_err(|e| h5err(call, path, "type attribute", e))?;
                let s = v.as_str().to_string();
                if s.len() > MAX_TYPE_ATTR {
                    op2_bail!(
                        FileFormat,
                        "{call}: constant '{name}' in '{path}': 'type' attribute is {} bytes long; at most {MAX_TYPE_ATTR} expected",
                        s.len()
                    );
                }
                s
            }
            other => op2_bail!(
                FileFormat,
                "{call}: constant '{name}' in '{path}': 'type' attribute is {}, not a string",
                describe(&other)
            ),
        };
        Ok(s)
    }

    /// OP2's spellings of type names in files ("double", "long long", "int:soa", ...).
    fn parse_file_type(s: &str) -> Option<ElemType> {
        let base = s.strip_suffix(":soa").unwrap_or(s);
        match base {
            "double" | "real(8)" => Some(ElemType::Double),
            "float" | "real(4)" => Some(ElemType::Float),
            "int" | "integer(4)" => Some(ElemType::Int),
            "uint" | "unsigned int" | "unsigned" => Some(ElemType::Uint),
            "ll" | "long" | "long long" | "integer(8)" => Some(ElemType::Ll),
            "ull" | "unsigned long" | "unsigned long long" => Some(ElemType::Ull),
            "bool" | "_Bool" | "logical" => Some(ElemType::Bool),
            _ => None,
        }
    }

    /// `op_get_const_hdf5`: reads `dim` values of `ty` into `out` from the 1-D dataset `name`,
    /// which must carry OP2's `dim` and `type` attributes.
    pub fn get_const(name: &str, dim: usize, ty: ElemType, out: &mut [u8], path: &str, call: &str) -> Result<()> {
        let f = open_read(path, call)?;
        let ds = dataset(&f, name, path, call)?;
        let Some(adim) = read_int_attr(&ds, "dim") else {
            op2_bail!(
                FileFormat,
                "{call}: constant '{name}' in '{path}' has no integer 'dim' attribute (OP2 requires it)"
            );
        };
        let tname = read_type_attr(&ds, name, path, call)?;
        if adim != dim as i64 {
            op2_bail!(FileFormat, "{call}: constant '{name}' in '{path}' has dim {adim}; the call expects dim {dim}");
        }
        if ds.size() != dim {
            op2_bail!(
                FileFormat,
                "{call}: constant '{name}' in '{path}' holds {} values (shape {:?}) but its dim attribute says {dim}",
                ds.size(),
                ds.shape()
            );
        }
        if parse_file_type(&tname) != Some(ty) {
            op2_bail!(
                FileFormat,
                "{call}: constant '{name}' in '{path}' has type '{tname}'; the call expects '{}'",
                ty.api_name()
            );
        }
        let t = descriptor(&ds, name, path, call)?;
        if !lossless(&t, ty) {
            op2_bail!(
                FileFormat,
                "{call}: constant '{name}' in '{path}' holds {}, which does not convert to '{}' without loss",
                describe(&t),
                ty.api_name()
            );
        }
        read_as(&ds, ty, dim, dim, |bytes| out.copy_from_slice(bytes))
            .map_err(|e| h5err(call, path, &format!("reading '{name}'"), e))
    }

    /// The type name OP2 writes in `type` attributes.
    fn file_type_name(ty: ElemType) -> &'static str {
        match ty {
            ElemType::Bool => "bool",
            t => t.c_name(),
        }
    }

    fn write_int_attr(loc: &Location, attr: &str, v: i32) -> hdf5::Result<()> {
        if loc.attr_names()?.iter().any(|a| a == attr) {
            loc.delete_attr(attr)?;
        }
        loc.new_attr::<i32>().shape(1).create(attr)?.write_raw(&[v])
    }

    /// A scalar fixed-length string attribute exactly as long as `s` (OP2's layout).
    fn write_str_attr(loc: &Location, attr: &str, s: &str) -> hdf5::Result<()> {
        if loc.attr_names()?.iter().any(|a| a == attr) {
            loc.delete_attr(attr)?;
        }
        let dt = Datatype::from_descriptor(&TypeDescriptor::FixedAscii(s.len().max(1)))?;
        // OP2 writes null-terminated C strings (H5T_STR_NULLTERM), as long as the name
        // SAFETY: dt is a transient (modifiable) string type owned here.
        hdf5::sync::sync(|| unsafe {
            hdf5_sys::h5t::H5Tset_strpad(dt.id(), hdf5_sys::h5t::H5T_str_t::H5T_STR_NULLTERM)
        });
        let a = loc.new_attr_builder().empty_as(&dt).create(attr)?;
        let mut bytes = s.as_bytes().to_vec();
        bytes.resize(s.len().max(1), 0);
        // SAFETY: `bytes` is one value of the attribute's fixed string type.
        let rc = hdf5::sync::sync(|| unsafe { hdf5_sys::h5a::H5Awrite(a.id(), dt.id(), bytes.as_ptr().cast()) });
        if rc < 0 {
            return Err(hdf5::Error::Internal(format!("H5Awrite of attribute '{attr}' failed")));
        }
        Ok(())
    }

    /// Creates (or replaces) dataset `name` of `shape` holding native-order `bytes` of `ty`.
    fn write_dataset(f: &File, name: &str, ty: ElemType, shape: &[usize], bytes: &[u8]) -> hdf5::Result<Dataset> {
        if link_exists(f, name) {
            f.unlink(name)?;
        }
        fn go<T: H5Type + Copy>(f: &File, name: &str, shape: &[usize], bytes: &[u8]) -> hdf5::Result<Dataset> {
            let ds = f.new_dataset::<T>().shape(shape.to_vec()).create(name)?;
            write_into(&ds, bytes)?;
            Ok(ds)
        }
        match ty {
            ElemType::Double => go::<f64>(f, name, shape, bytes),
            ElemType::Float => go::<f32>(f, name, shape, bytes),
            ElemType::Int => go::<i32>(f, name, shape, bytes),
            ElemType::Uint => go::<u32>(f, name, shape, bytes),
            ElemType::Ll => go::<i64>(f, name, shape, bytes),
            ElemType::Ull => go::<u64>(f, name, shape, bytes),
            ElemType::Bool => go::<bool>(f, name, shape, bytes),
        }
    }

    /// Writes native-order bytes into an existing dataset of the same type and size.
    fn write_into(ds: &Dataset, bytes: &[u8]) -> hdf5::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let dt = ds.dtype()?;
        // SAFETY: `bytes` holds exactly the dataset's values in its (native) memory type.
        let rc = hdf5::sync::sync(|| unsafe {
            hdf5_sys::h5d::H5Dwrite(
                ds.id(),
                dt.id(),
                hdf5_sys::h5s::H5S_ALL,
                hdf5_sys::h5s::H5S_ALL,
                hdf5_sys::h5p::H5P_DEFAULT,
                bytes.as_ptr().cast(),
            )
        });
        if rc < 0 {
            return Err(hdf5::Error::Internal("H5Dwrite failed".into()));
        }
        Ok(())
    }

    /// `op_write_const_hdf5`: a 1-D `[dim]` dataset with attributes `dim` and `type`, in a file
    /// that is created if missing (an existing dataset of that name is replaced).
    pub fn write_const(name: &str, dim: usize, ty: ElemType, data: &[u8], path: &str, call: &str) -> Result<()> {
        let f = open_write(path, false, call)?;
        let w = || -> hdf5::Result<()> {
            let ds = write_dataset(&f, name, ty, &[dim], data)?;
            write_int_attr(&ds, "dim", dim as i32)?;
            write_str_attr(&ds, "type", file_type_name(ty))?;
            f.flush()
        };
        w().map_err(|e| op2_err!(Io, "{call}: cannot write constant '{name}' to '{path}': {e}"))
    }

    /// One dat as OP2 writes it: `[n][dim]`, attributes size (bytes per element), dim, type.
    fn write_dat(f: &File, ctx: &Context, d: DatId) -> hdf5::Result<()> {
        let dat = &ctx.dats[d.0 as usize];
        let n = ctx.sets[dat.set.0 as usize].size;
        let ds = write_dataset(f, &dat.name, dat.ty, &[n, dat.dim], &host_dat(ctx, d))?;
        write_int_attr(&ds, "size", dat.elem_bytes() as i32)?;
        write_int_attr(&ds, "dim", dat.dim as i32)?;
        write_str_attr(&ds, "type", file_type_name(dat.ty))
    }

    /// `op_fetch_data_hdf5_file`: writes one dat into `path` (created if missing). An existing
    /// dataset of that name must have the dat's shape and type; it is overwritten in place.
    pub fn fetch_dat_to_file(ctx: &Context, d: DatId, path: &str, call: &str) -> Result<()> {
        let dat = &ctx.dats[d.0 as usize];
        let n = ctx.sets[dat.set.0 as usize].size;
        let f = open_write(path, false, call)?;
        let name = dat.name.as_str();
        if link_exists(&f, name) {
            let ds =
                f.dataset(name).map_err(|e| h5err(call, path, &format!("'{name}' exists but is not a dataset"), e))?;
            let (rows, cols) = rows_cols(&ds, name, path, call)?;
            let t = descriptor(&ds, name, path, call)?;
            let want = Datatype::from_descriptor(&elem_descriptor(dat.ty)).and_then(|w| w.to_descriptor()).ok();
            if rows != n || cols != dat.dim || want.as_ref() != Some(&t) {
                op2_bail!(
                    FileFormat,
                    "{call}: dataset '{name}' in '{path}' is [{rows}][{cols}] of {}; dat '{name}' is [{n}][{}] of '{}'",
                    describe(&t),
                    dat.dim,
                    dat.ty.api_name()
                );
            }
            write_into(&ds, &host_dat(ctx, d))
                .and_then(|_| f.flush())
                .map_err(|e| op2_err!(Io, "{call}: cannot write '{name}' to '{path}': {e}"))
        } else {
            write_dat(&f, ctx, d)
                .and_then(|_| f.flush())
                .map_err(|e| op2_err!(Io, "{call}: cannot write '{name}' to '{path}': {e}"))
        }
    }

    fn elem_descriptor(ty: ElemType) -> TypeDescriptor {
        match ty {
            ElemType::Double => f64::type_descriptor(),
            ElemType::Float => f32::type_descriptor(),
            ElemType::Int => i32::type_descriptor(),
            ElemType::Uint => u32::type_descriptor(),
            ElemType::Ll => i64::type_descriptor(),
            ElemType::Ull => u64::type_descriptor(),
            ElemType::Bool => bool::type_descriptor(),
        }
    }

    /// `op_dump_to_hdf5`: a new file with every set, map and dat (OP2's layout).
    pub fn dump(ctx: &Context, path: &str, call: &str) -> Result<()> {
        let f = open_write(path, true, call)?;
        let w = || -> hdf5::Result<()> {
            for s in &ctx.sets {
                let size = s.size as i32;
                write_dataset(&f, &s.name, ElemType::Int, &[1], &size.to_ne_bytes())?;
            }
            for m in &ctx.maps {
                let n = ctx.sets[m.from.0 as usize].size;
                // SAFETY: i32 values viewed as their bytes.
                let bytes = unsafe { std::slice::from_raw_parts(m.values.as_ptr() as *const u8, m.values.len() * 4) };
                let ds = write_dataset(&f, &m.name, ElemType::Int, &[n, m.dim], bytes)?;
                write_int_attr(&ds, "size", n as i32)?;
                write_int_attr(&ds, "dim", m.dim as i32)?;
                write_str_attr(&ds, "type", "int")?;
            }
            for d in 0..ctx.dats.len() {
                write_dat(&f, ctx, DatId(d as u32))?;
            }
            f.flush()
        };
        w().map_err(|e| op2_err!(Io, "{call}: cannot write '{path}': {e}"))
    }
}

#[cfg(all(test, feature = "hdf5"))]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::context::Context;
    use crate::core::ElemType;
    use crate::error::ErrorCode;
    use hdf5::types::{FixedAscii, TypeDescriptor, VarLenUnicode};
    use hdf5::File;

    fn ctx(dir: &std::path::Path) -> Context {
        let cache = dir.join("cache").to_string_lossy().into_owned();
        let env = move |k: &str| if k == "OP2_CACHE_DIR" { Some(cache.clone()) } else { None };
        Context::new(Config::resolve(&env, &[], 0).unwrap()).unwrap()
    }

    fn tmpdir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("op2-h5-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn str10(f: &File, ds: &str, s: &str) {
        // OP2 before PR #105: a 10-byte fixed string
        let a = f.dataset(ds).unwrap().new_attr::<FixedAscii<10>>().create("type").unwrap();
        a.write_scalar(&FixedAscii::<10>::from_ascii(s).unwrap()).unwrap();
    }

    /// A file written the way OP2-Common writes (and older OP2 wrote) them, through the raw
    /// HDF5 API: 10-byte type strings, dat `size` in bytes, a rank-1 dataset for a dim-1 dat,
    /// a `long long` map, a constant with a variable-length type string (as h5py writes).
    #[test]
    fn reads_op2_convention_files() {
        let dir = tmpdir("conv");
        let path = dir.join("op2.h5");
        let p = path.to_str().unwrap();
        {
            let f = File::create(&path).unwrap();
            f.new_dataset::<i32>().shape([1]).create("nodes").unwrap().write_raw(&[4]).unwrap();
            f.new_dataset::<i32>().shape([1]).create("edges").unwrap().write_raw(&[3]).unwrap();
            let m = f.new_dataset::<i64>().shape([3, 2]).create("pedge").unwrap();
            m.write_raw(&[0i64, 1, 1, 2, 2, 3]).unwrap();
            m.new_attr::<i32>().shape(1).create("size").unwrap().write_raw(&[3]).unwrap();
            str10(&f, "pedge", "long long");
            let b = f.new_dataset::<i32>().shape([3]).create("p_bound").unwrap();
            b.write_raw(&[1, 2, 3]).unwrap();
            b.new_attr::<i32>().shape(1).create("size").unwrap().write_raw(&[4]).unwrap();
            str10(&f, "p_bound", "int");
            let x = f.new_dataset::<f64>().shape([4, 2]).create("p_x").unwrap();
            x.write_raw(&[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]).unwrap();
            let c = f.new_dataset::<f64>().shape([4]).create("qinf").unwrap();
            c.write_raw(&[1.0, 2.0, 3.0, 4.0]).unwrap();
            c.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[4]).unwrap();
            let t: VarLenUnicode = "double".parse().unwrap();
            c.new_attr::<VarLenUnicode>().create("type").unwrap().write_scalar(&t).unwrap();
            let g = f.new_dataset::<f64>().shape([1]).create("gam").unwrap();
            g.write_raw(&[1.4]).unwrap();
            g.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[1]).unwrap();
            str10(&f, "gam", "double");
            let long = f.new_dataset::<f64>().shape([1]).create("longtype").unwrap();
            long.write_raw(&[1.0]).unwrap();
            long.new_attr::<i32>().shape(1).create("dim").unwrap().write_raw(&[1]).unwrap();
            let a = long.new_attr::<FixedAscii<40>>().create("type").unwrap();
            a.write_scalar(&FixedAscii::<40>::from_ascii("double_but_with_a_very_long_tail_text").unwrap()).unwrap();
        }
        let mut c = ctx(&dir);
        let nodes = decl_set(&mut c, p, "nodes", "t").unwrap();
        let edges = decl_set(&mut c, p, "edges", "t").unwrap();
        let m = decl_map(&mut c, edges, nodes, 2, p, "pedge", "t").unwrap();
        assert_eq!(c.maps[m.0 as usize].values, [0, 1, 1, 2, 2, 3]);
        let b = decl_dat(&mut c, edges, 1, ElemType::Int, p, "p_bound", "t").unwrap();
        assert_eq!(c.dats[b.0 as usize].data.as_slice(), [1i32, 2, 3].map(i32::to_ne_bytes).concat());
        let x = decl_dat(&mut c, nodes, 2, ElemType::Double, p, "p_x", "t").unwrap();
        assert_eq!(c.dats[x.0 as usize].data.as_slice()[8..16], 0.5f64.to_ne_bytes());
        let mut out = [0u8; 32];
        get_const("qinf", 4, ElemType::Double, &mut out, p, "t").unwrap();
        assert_eq!(out[24..], 4.0f64.to_ne_bytes());
        let mut g = [0u8; 8];
        get_const("gam", 1, ElemType::Double, &mut g, p, "t").unwrap();
        assert_eq!(f64::from_ne_bytes(g), 1.4);
        // the OP2 issue #31 regression: an over-long type string is an error, not an overflow
        let e = get_const("longtype", 1, ElemType::Double, &mut g, p, "t").unwrap_err();
        assert_eq!(e.code, ErrorCode::FileFormat);
        assert!(e.message.contains("40 bytes long"), "{}", e.message);
        // 64-bit map entries beyond the target set are range errors after narrowing
        let few = c.decl_set(2, "few").unwrap();
        let e = decl_map(&mut c, edges, few, 2, p, "pedge", "t").unwrap_err();
        assert_eq!(e.code, ErrorCode::MapOutOfRange);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What op2 writes carries OP2's attributes: size (bytes for dats, set size for maps),
    /// dim, type strings as long as the name; sets are [1] int; dim-1 dats are [n][1].
    #[test]
    fn writes_op2_layout() {
        let dir = tmpdir("layout");
        let path = dir.join("dump.h5");
        let p = path.to_str().unwrap();
        let mut c = ctx(&dir);
        let nodes = c.decl_set(3, "nodes").unwrap();
        let edges = c.decl_set(2, "edges").unwrap();
        c.decl_map(edges, nodes, 2, &[0, 1, 1, 2], "pedge").unwrap();
        c.decl_dat(nodes, 1, ElemType::Double, None, "p_u", "t").unwrap();
        c.decl_dat(edges, 3, ElemType::Float, None, "p_f", "t").unwrap();
        dump(&c, p, "t").unwrap();
        write_const("gam", 1, ElemType::Double, &1.4f64.to_ne_bytes(), p, "t").unwrap();
        let f = File::open(&path).unwrap();
        let int_attr = |ds: &str, a: &str| f.dataset(ds).unwrap().attr(a).unwrap().read_raw::<i32>().unwrap();
        let type_attr = |ds: &str| {
            let a = f.dataset(ds).unwrap().attr("type").unwrap();
            (a.dtype().unwrap().to_descriptor().unwrap(), a.size())
        };
        assert_eq!(f.dataset("nodes").unwrap().shape(), [1]);
        assert_eq!(f.dataset("nodes").unwrap().read_raw::<i32>().unwrap(), [3]);
        assert_eq!(f.dataset("pedge").unwrap().shape(), [2, 2]);
        assert_eq!(int_attr("pedge", "size"), [2]);
        assert_eq!(int_attr("pedge", "dim"), [2]);
        assert_eq!(type_attr("pedge"), (TypeDescriptor::FixedAscii(3), 1));
        assert_eq!(f.dataset("p_u").unwrap().shape(), [3, 1]);
        assert_eq!(int_attr("p_u", "size"), [8]);
        assert_eq!(int_attr("p_f", "size"), [12]);
        assert_eq!(int_attr("p_f", "dim"), [3]);
        assert_eq!(type_attr("p_f"), (TypeDescriptor::FixedAscii(5), 1));
        assert_eq!(f.dataset("gam").unwrap().shape(), [1]);
        assert_eq!(int_attr("gam", "dim"), [1]);
        assert_eq!(type_attr("gam"), (TypeDescriptor::FixedAscii(6), 1));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
