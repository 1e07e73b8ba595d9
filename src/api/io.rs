//! Files: VTK output (`op_write_vtk`) and OP2's HDF5 functions (`op_*_hdf5`).

use super::c_str;
use super::handle::{op_dat, op_map, op_set, Kind};
use super::{boundary, boundary_probe};
use crate::core::ElemType;
use crate::op2_bail;
use std::ffi::{c_char, c_int};
use std::ptr::null_mut;

/// Writes an unstructured grid for ParaView: points from `coords` (dim 2 or 3, double or float,
/// on the to-set of `cells`), one cell per element of `cells`' from-set with `cells.dim` nodes
/// (2 line, 3 triangle, 4 quad with 2-D coordinates or tetrahedron with 3-D ones, 8
/// hexahedron), and each of the `ndats` dats as point data (dat on the node set) or cell data
/// (dat on the cell set), named by the dat's name, its dim as vector components. The extension
/// picks the format: `.vtu` XML or `.vtk` legacy. `flags`: OP_VTK_BINARY (`.vtu` appended raw,
/// `.vtk` big-endian binary), OP_VTK_ASCII (full precision: 17 significant digits for double,
/// 9 for float), OP_VTK_BASE64 (`.vtu` appended base64). Every mode round-trips exactly.
/// Errors: OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_BAD_NAME (extension),
/// OP2_ERR_BAD_SIZE (flags, ndats < 0, coordinate or map dim), OP2_ERR_BAD_TYPE (coordinates
/// not double/float), OP2_ERR_ARG_SET (coordinates or a dat on another set),
/// OP2_ERR_FILE_FORMAT (two dats that would be arrays of one name in the point or the cell
/// data, names as written: legacy `.vtk` turns white space into `_`; nothing is written),
/// OP2_ERR_IO (an incomplete one-process file is removed). Points, cells, values and node
/// numbers are in the declared order, also after op_renumber. Under MPI (collective, after op_partition): each process writes `<stem>_<rank>.vtu` with
/// its owned cells and the nodes they use (`file` ends in `.vtu` or `.pvtu`; halo copies of
/// point data are refreshed first) and process 0 writes `<stem>.pvtu` naming the pieces, which
/// ParaView opens as one mesh. Legacy `.vtk` holds one piece only: under MPI it is
/// OP2_ERR_BAD_NAME (write `.vtu`); before op_partition OP2_ERR_BAD_CONFIG. Any process's error
/// is reported on every process.
#[no_mangle]
pub extern "C" fn op_write_vtk(
    file: *const c_char,
    cells: op_map,
    coords: op_dat,
    ndats: c_int,
    dats: *const op_dat,
    flags: c_int,
) {
    const CALL: &str = "op_write_vtk";
    boundary(CALL, (), |st| {
        if super::checkpoint::replaying(st, CALL) {
            return Ok(());
        }
        let ready = (|| {
            let file = c_str(file, CALL, "file")?;
            let label = format!("{CALL} '{file}'");
            let m = st.map(cells, &label, &"cells map")?;
            let c = st.dat(coords, &label, &"coords")?;
            if ndats < 0 {
                op2_bail!(BadSize, "{label}: ndats {ndats} is negative");
            }
            let handles: &[op_dat] = if ndats == 0 {
                &[]
            } else if dats.is_null() {
                op2_bail!(NullArgument, "{label}: dats is NULL with ndats {ndats}");
            } else {
                // SAFETY: the caller provides ndats handles.
                unsafe { std::slice::from_raw_parts(dats, ndats as usize) }
            };
            let mut ids = Vec::with_capacity(handles.len());
            for (i, &h) in handles.iter().enumerate() {
                ids.push(st.dat(h, &label, &format!("dats[{i}]"))?);
            }
            Ok((file, m, c, ids))
        })();
        let ctx = st.ctx(CALL)?;
        let (file, m, c, ids) = ctx.comm.enter(CALL, ready)?;
        for &d in std::iter::once(&c).chain(&ids) {
            ctx.sync_to_host(d)?;
        }
        crate::io::vtk::write_vtk(ctx, file, m, c, &ids, flags, CALL)
    })
}

// ---- HDF5 (OP2's op_*_hdf5 functions and file layout) --------------------------------------

/// Declares a set whose size is the one integer stored in dataset `name` of HDF5 file `file`
/// (OP2's layout). Under MPI (collective) that is the global size, and each process declares
/// its block `[size*rank/P, size*(rank+1)/P)` (OP2's distribution; then op_partition). Returns
/// NULL on error with `OP_ERRORS_RETURN`; under MPI an error on any process (a file missing on
/// one) is reported on every process. A dataset the file does not hold is OP2_ERR_NO_DATASET
/// (naming dataset and file): NULL is returned and the program goes on whatever the error
/// handler, so a program may probe for an optional dataset as with OP2 (said at diagnostics
/// level 1; under MPI agreed: absent on every process, else OP2_ERR_FILE_FORMAT naming the
/// processes that lack it). Errors: OP2_ERR_NO_DATASET, OP2_ERR_IO (missing or unreadable
/// file, or not a regular file: a FIFO, a device, a directory), OP2_ERR_FILE_FORMAT (not HDF5,
/// a group rather than a dataset, not one integer, a null dataspace, a value the file does not
/// store, a soft or external link, negative or too large), OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_BACKEND_UNAVAILABLE (op2 built without feature hdf5).
#[no_mangle]
pub extern "C" fn op_decl_set_hdf5(file: *const c_char, name: *const c_char) -> op_set {
    const CALL: &str = "op_decl_set_hdf5";
    boundary_probe(CALL, null_mut(), |st| {
        let ready = c_str(file, CALL, "file").and_then(|f| Ok((f, c_str(name, CALL, "name")?)));
        let ctx = st.ctx(CALL)?;
        let (file, name) = ctx.comm.enter(CALL, ready)?;
        let r = crate::io::hdf5::decl_set(ctx, file, name, CALL);
        let id = say_absent(ctx, r)?;
        Ok(st.publish(Kind::Set, id.0))
    })
}

/// At diagnostics level 1, process 0 says that a dataset absent from the file made an
/// `op_decl_*_hdf5` call return NULL (the program goes on, as with OP2, which prints it).
fn say_absent<T>(ctx: &crate::context::Context, r: crate::error::Result<T>) -> crate::error::Result<T> {
    if let Err(e) = &r {
        if e.code == crate::error::ErrorCode::NoDataset && ctx.config.diags >= 1 && ctx.comm.rank() == 0 {
            crate::core::output::print_after_c_stdio(&format!("op2: {}: returned NULL\n", e.message));
        }
    }
    r
}

/// Declares a map from `from` to `to` with `dim` entries per element, read from the
/// `[from.size][dim]` integer dataset `name` of HDF5 file `file` (a rank-1 dataset is dim 1;
/// 64-bit maps are narrowed with a range check). Entries must lie in `[0, to.size)`. Under MPI
/// (collective) each process reads only the rows of its declared block of `from` (one
/// collective hyperslab with parallel HDF5), values stay global indices until op_partition;
/// any process's error is reported on every process. A dataset the file does not hold is
/// OP2_ERR_NO_DATASET: NULL is returned whatever the error handler (see op_decl_set_hdf5).
/// Errors: OP2_ERR_NO_DATASET, OP2_ERR_IO, OP2_ERR_FILE_FORMAT (wrong dim, row count other than
/// from.size, non-integer type, an extent the file does not store; the message names file,
/// dataset, expected and found), OP2_ERR_MAP_OUT_OF_RANGE, OP2_ERR_BAD_SIZE,
/// OP2_ERR_OUT_OF_MEMORY, OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE,
/// OP2_ERR_BACKEND_UNAVAILABLE.
#[no_mangle]
pub extern "C" fn op_decl_map_hdf5(
    from: op_set,
    to: op_set,
    dim: c_int,
    file: *const c_char,
    name: *const c_char,
) -> op_map {
    const CALL: &str = "op_decl_map_hdf5";
    boundary_probe(CALL, null_mut(), |st| {
        let ready = (|| {
            let file = c_str(file, CALL, "file")?;
            let name = c_str(name, CALL, "name")?;
            let label = format!("{CALL} '{name}'");
            let from = st.set(from, &label, &"from set")?;
            let to = st.set(to, &label, &"to set")?;
            Ok((file, name, from, to))
        })();
        let ctx = st.ctx(CALL)?;
        let (file, name, from, to) = ctx.comm.enter(CALL, ready)?;
        let r = crate::io::hdf5::decl_map(ctx, from, to, dim, file, name, CALL);
        let id = say_absent(ctx, r)?;
        Ok(st.publish(Kind::Map, id.0))
    })
}

/// Declares a dat on `set` with `dim` values of `type` per element, read from the
/// `[set.size][dim]` dataset `name` of HDF5 file `file`. The file's type must convert to `type`
/// without loss (float to double, int to ll, ...). Under MPI (collective) each process reads
/// only the rows of its declared block of `set` (before or after op_partition); any process's
/// error is reported on every process. A dataset the file does not hold is OP2_ERR_NO_DATASET:
/// NULL is returned whatever the error handler (see op_decl_set_hdf5). Errors:
/// OP2_ERR_NO_DATASET, OP2_ERR_IO, OP2_ERR_FILE_FORMAT (wrong dim, row count other than
/// set.size, lossy type, an extent the file does not store, a bool value other than 0 or 1),
/// OP2_ERR_BAD_TYPE, OP2_ERR_BAD_SIZE,
/// OP2_ERR_OUT_OF_MEMORY, OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE,
/// OP2_ERR_BACKEND_UNAVAILABLE.
#[no_mangle]
pub extern "C" fn op_decl_dat_hdf5(
    set: op_set,
    dim: c_int,
    r#type: *const c_char,
    file: *const c_char,
    name: *const c_char,
) -> op_dat {
    const CALL: &str = "op_decl_dat_hdf5";
    boundary_probe(CALL, null_mut(), |st| {
        let ready = (|| {
            let file = c_str(file, CALL, "file")?;
            let name = c_str(name, CALL, "name")?;
            let set = st.set(set, &format!("{CALL} '{name}'"), &"set")?;
            let ty = ElemType::parse(c_str(r#type, CALL, "type")?, CALL, &format!(" '{name}'"))?;
            Ok((file, name, set, ty))
        })();
        let ctx = st.ctx(CALL)?;
        let (file, name, set, ty) = ctx.comm.enter(CALL, ready)?;
        let r = crate::io::hdf5::decl_dat(ctx, set, dim, ty, file, name, CALL);
        let id = say_absent(ctx, r)?;
        Ok(st.publish(Kind::Dat, id.0))
    })
}

fn const_args<'a>(
    call: &str,
    name: *const c_char,
    dim: c_int,
    r#type: *const c_char,
    data: *const c_char,
    file: *const c_char,
) -> crate::error::Result<(&'a str, usize, ElemType, &'a str)> {
    let name = c_str(name, call, "name")?;
    let file = c_str(file, call, "file")?;
    let ty = ElemType::parse(c_str(r#type, call, "type")?, call, &format!(" '{name}'"))?;
    if dim < 1 {
        op2_bail!(BadSize, "{call} '{name}': dim {dim} is less than 1");
    }
    if data.is_null() {
        op2_bail!(NullArgument, "{call} '{name}': const_data is NULL");
    }
    Ok((name, dim as usize, ty, file))
}

/// Reads constant `name` (`dim` values of `type`) from HDF5 file `file` into `const_data`,
/// which the caller provides; the dataset must carry OP2's `dim` and `type` attributes and
/// agree with them. Does not declare the constant (call `op_decl_const` after). Under MPI
/// every process reads it (collective; an error on one is reported on all). Errors:
/// OP2_ERR_IO, OP2_ERR_FILE_FORMAT (missing dataset or attribute, dim or type differing, a
/// type attribute longer than 32 bytes or of more than one string, lossy type, a bool value
/// other than 0 or 1; a variable-length type string is not read: the dataset's datatype
/// decides), OP2_ERR_BAD_TYPE, OP2_ERR_BAD_SIZE, OP2_ERR_OUT_OF_MEMORY,
/// OP2_ERR_NULL_ARGUMENT, OP2_ERR_BACKEND_UNAVAILABLE.
#[no_mangle]
pub extern "C" fn op_get_const_hdf5(
    name: *const c_char,
    dim: c_int,
    r#type: *const c_char,
    const_data: *mut c_char,
    file: *const c_char,
) {
    const CALL: &str = "op_get_const_hdf5";
    boundary(CALL, (), |st| {
        let ready = const_args(CALL, name, dim, r#type, const_data, file);
        let one = crate::mpi::Comm::default();
        let comm = st.ctx_lazy(CALL).map(|c| &c.comm).unwrap_or(&one);
        let (name, dim, ty, file) = comm.enter(CALL, ready)?;
        let mut buf = crate::core::alloc::zeroed::<u8>(
            crate::core::alloc::bytes(dim, ty.size(), &format!("{CALL} '{name}'"))?,
            &format!("{CALL} '{name}'"),
        )?;
        crate::io::hdf5::get_const(comm, name, dim, ty, &mut buf, file, CALL)?;
        // SAFETY: the caller provides room for dim values of `type`.
        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), const_data as *mut u8, buf.len()) };
        Ok(())
    })
}

/// Writes constant `name` (`dim` values of `type` from `const_data`) to HDF5 file `file` in
/// OP2's layout (a `[dim]` dataset with attributes `dim` and `type`); the file is created if
/// missing, an existing constant of that name is replaced. Under MPI (collective) process 0
/// writes the value it was given. Errors: OP2_ERR_IO,
/// OP2_ERR_FILE_FORMAT (an existing file that is not HDF5; a set, map or dat of that name in the
/// file, which is left as it was), OP2_ERR_BAD_TYPE, OP2_ERR_BAD_SIZE,
/// OP2_ERR_NULL_ARGUMENT, OP2_ERR_BACKEND_UNAVAILABLE.
#[no_mangle]
pub extern "C" fn op_write_const_hdf5(
    name: *const c_char,
    dim: c_int,
    r#type: *const c_char,
    const_data: *mut c_char,
    file: *const c_char,
) {
    const CALL: &str = "op_write_const_hdf5";
    boundary(CALL, (), |st| {
        let ready = const_args(CALL, name, dim, r#type, const_data, file);
        let one = crate::mpi::Comm::default();
        let comm = st.ctx_lazy(CALL).map(|c| &c.comm).unwrap_or(&one);
        let (name, dim, ty, file) = comm.enter(CALL, ready)?;
        // SAFETY: the caller provides dim values of `type`.
        let data = unsafe { std::slice::from_raw_parts(const_data as *const u8, dim * ty.size()) };
        crate::io::hdf5::write_const(comm, name, dim, ty, data, file, CALL)
    })
}

/// Writes a dat (all elements, declared order, also after op_renumber) to HDF5 file `file` as
/// dataset `<dat name>` in OP2's layout (attributes size = bytes per element, dim, type). The
/// file is created if missing; an existing dataset of that name must have the dat's shape and
/// type and is overwritten, unless it is a map or constant (OP2's attributes) or another live
/// dat of this session fetched into this file before (OP2_ERR_FILE_FORMAT naming both; the file
/// is left as it was). Under MPI (collective) the file is the same as one process's: each process
/// writes its declared block of rows in the original numbering (the owners send the rows there;
/// nothing is gathered on one process), collectively through parallel HDF5 (with a serial
/// HDF5 build: OP2_ERR_BACKEND_UNAVAILABLE); any process's error is reported on every process.
/// Errors: OP2_ERR_IO, OP2_ERR_FILE_FORMAT (an existing dataset of another shape or type, or of
/// another object), OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE, OP2_ERR_BACKEND_UNAVAILABLE.
#[no_mangle]
pub extern "C" fn op_fetch_data_hdf5_file(dat: op_dat, file: *const c_char) {
    const CALL: &str = "op_fetch_data_hdf5_file";
    boundary(CALL, (), |st| {
        if super::checkpoint::replaying(st, CALL) {
            return Ok(());
        }
        let ready = st.dat(dat, &CALL, &"dat").and_then(|d| Ok((d, c_str(file, CALL, "file")?)));
        let ctx = st.ctx(CALL)?;
        let (d, file) = ctx.comm.enter(CALL, ready)?;
        ctx.sync_to_host(d)?;
        crate::io::hdf5::fetch_dat_to_file(ctx, d, file, CALL)
    })
}

/// OP2's `op_fetch_data_hdf5_file_path`: writes a dat (all elements, declared order, also
/// after op_renumber; under MPI the whole global dat, in the original numbering) to HDF5 file
/// `file` as the dataset `path_name`, in OP2's layout (`[set size][dim]` of the dat's type,
/// attributes size = bytes per element, dim, type), so that `op_decl_dat_hdf5(set, dim, type,
/// file, path_name)` reads it back. The file is created if missing; groups on the path
/// (`"results/step10/q"`) are created; a dataset already at the path is replaced, whatever its
/// shape or type. Leading, doubled and trailing `/` are ignored (`"/a//b/"` is `"a/b"`). A
/// later `op_fetch_data_hdf5_file` of another dat whose name is this path refuses to overwrite
/// it, as for two dats of one name. Under MPI (collective) as `op_fetch_data_hdf5_file`: each
/// process writes its declared block through parallel HDF5; any process's error is reported on
/// every process. Errors: OP2_ERR_BAD_NAME (a path naming no dataset: empty or only `/`),
/// OP2_ERR_FILE_FORMAT (an existing file that is not HDF5; a group, not a dataset, at the path;
/// a component of the path that is a dataset or a soft or external link; the file is left as
/// it was), OP2_ERR_IO, OP2_ERR_NULL_ARGUMENT, OP2_ERR_INVALID_HANDLE,
/// OP2_ERR_BACKEND_UNAVAILABLE.
#[no_mangle]
pub extern "C" fn op_fetch_data_hdf5_file_path(dat: op_dat, file: *const c_char, path_name: *const c_char) {
    const CALL: &str = "op_fetch_data_hdf5_file_path";
    boundary(CALL, (), |st| {
        if super::checkpoint::replaying(st, CALL) {
            return Ok(());
        }
        let ready = (|| {
            let d = st.dat(dat, &CALL, &"dat")?;
            let file = c_str(file, CALL, "file")?;
            let path = c_str(path_name, CALL, "path_name")?;
            if !path.split('/').any(|p| !p.is_empty() && p != ".") {
                op2_bail!(BadName, "{CALL} '{file}': path_name '{path}' names no dataset");
            }
            Ok((d, file, path))
        })();
        let ctx = st.ctx(CALL)?;
        let (d, file, path) = ctx.comm.enter(CALL, ready)?;
        ctx.sync_to_host(d)?;
        crate::io::hdf5::fetch_dat_to_path(ctx, d, file, path, CALL)
    })
}

/// Writes every set, map and dat to a new HDF5 file `file` (truncated if it exists), in OP2's
/// layout, so that `op_decl_*_hdf5` (op2's or OP2's) read them back. Under MPI (collective)
/// the file is the same as one process's (global set sizes; maps and dats whole, in the
/// original numbering, map values as global indices), each process writing its declared block
/// as `op_fetch_data_hdf5_file` does (unlike OP2, whose MPI dump holds the partitioned
/// state). Rows are in the declared order and map values in the declared numbering of their
/// target set, also after op_renumber. Errors: OP2_ERR_FILE_FORMAT (two sets, maps or live dats
/// of one name, or a name inside another's groups: `a` and `a/b`; found before the file is
/// touched), OP2_ERR_IO (the incomplete file is removed), OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_NOT_INITIALISED, OP2_ERR_BACKEND_UNAVAILABLE.
#[no_mangle]
pub extern "C" fn op_dump_to_hdf5(file: *const c_char) {
    const CALL: &str = "op_dump_to_hdf5";
    boundary(CALL, (), |st| {
        if super::checkpoint::replaying(st, CALL) {
            return Ok(());
        }
        let ready = c_str(file, CALL, "file");
        let ctx = st.ctx(CALL)?;
        let file = ctx.comm.enter(CALL, ready)?;
        ctx.sync_all_to_host()?;
        crate::io::hdf5::dump(ctx, file, CALL)
    })
}
