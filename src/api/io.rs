//! Files: VTK output (`op_write_vtk`) and OP2's HDF5 functions (`op_*_hdf5`).

use super::boundary;
use super::c_str;
use super::handle::{op_dat, op_map};
use crate::op2_bail;
use std::ffi::{c_char, c_int};

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
/// not double/float), OP2_ERR_ARG_SET (coordinates or a dat on another set), OP2_ERR_IO.
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
        st.ctx(CALL)?;
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
        let ctx = st.ctx(CALL)?;
        crate::io::vtk::write_vtk(ctx, file, m, c, &ids, flags, CALL)
    })
}
