//! Files: VTK output for ParaView (`vtk`) and OP2's HDF5 mesh files (`hdf5`, feature `hdf5`).
//!
//! Plain Rust over a `Context`; the C functions are in `api::io`, which first make the host
//! bytes of the dats involved current (`Context::sync_to_host`, the residency choke point).
//! Dat rows and map values are then read through `Context::declared_rows` (one process: the
//! declared order whatever `op_renumber` did to the storage) or, under MPI, through
//! `mpi::dist::dat_block` / `map_block` (HDF5: the declared block in original order) and the
//! local rows (VTK pieces).
//!
//! Names: every object an output file holds has a name of its own in that file; a collision
//! is `OP2_ERR_FILE_FORMAT` naming both objects, found before anything is written.

pub mod dwarf;
pub mod elf;
pub mod hdf5;
pub mod vtk;

// Reading input files safely and writing output files whole are `core::file`'s (the JIT and
// code generation read files too, below this layer).
