/*
 * op_hdf5.h: OP2's HDF5 header, as op2 provides it. op2's HDF5 calls (op_decl_set_hdf5,
 * op_decl_map_hdf5, op_decl_dat_hdf5, op_get_const_hdf5, op_write_const_hdf5,
 * op_fetch_data_hdf5_file, op_dump_to_hdf5, ...) are in op2.h, with OP2's names and arguments;
 * this header is here so that programs including it build. See doc/files.md.
 */
#ifndef OP2_OP_HDF5_H
#define OP2_OP_HDF5_H

#include "op_lib_core.h"

#endif /* OP2_OP_HDF5_H */
