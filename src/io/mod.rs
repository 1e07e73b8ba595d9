//! Files: VTK output for ParaView (`vtk`) and OP2's HDF5 mesh files (`hdf5`, feature `hdf5`).
//!
//! Plain Rust over a `Context`; the C functions are in `api::io`, which first make the host
//! bytes of the dats involved current (`Context::sync_to_host`, the residency choke point).
//! Dat values are then read through `host_dat` (one process) or, under MPI, through
//! `mpi::dist::dat_block` (HDF5: the declared block in original order) and the local rows
//! (VTK pieces).

pub mod hdf5;
pub mod vtk;

use crate::context::Context;
use crate::core::DatId;
use std::borrow::Cow;

/// The host values of a dat's elements (`set.size * dim` values, element-major, native byte
/// order). The one place I/O reads dat data: a device-resident dat will be downloaded here.
pub(crate) fn host_dat(ctx: &Context, d: DatId) -> Cow<'_, [u8]> {
    let dat = &ctx.dats[d.0 as usize];
    let n = ctx.sets[dat.set.0 as usize].size;
    Cow::Borrowed(&dat.data.as_slice()[..n * dat.elem_bytes()])
}
