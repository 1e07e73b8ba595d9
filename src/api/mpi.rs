//! MPI entry points: `op_mpi_init` and `op_partition`.

use super::handle::{op_dat, op_map, op_set};
use super::{boundary, c_str};
use crate::op2_bail;
use std::ffi::{c_char, c_int};

/// `op_init` on a given communicator: `global_comm` is the Fortran handle of the communicator
/// op2 runs on (`MPI_Comm_c2f(comm)` in C, the integer handle in Fortran); `local_comm` (the
/// node-local communicator in OP2) is accepted and unused. MPI is initialised first if the
/// program has not (then `op_exit` finalises it). Collective over `global_comm`.
/// Errors: those of `op_init`; OP2_ERR_BACKEND_UNAVAILABLE when op2 was built without MPI;
/// OP2_ERR_BAD_CONFIG with `OP2_MPI=0` when MPI is not initialised.
#[no_mangle]
pub extern "C" fn op_mpi_init(
    argc: c_int,
    argv: *mut *mut c_char,
    diags: c_int,
    global_comm: c_int,
    local_comm: c_int,
) {
    let _ = local_comm;
    boundary("op_mpi_init", (), |st| super::lifecycle::init(st, argc, argv, diags, Some(global_comm), "op_mpi_init"))
}

/// Partitions the sets over the MPI processes and builds their halos (collective; call it once,
/// after every set, map and dat is declared and before the first loop). `lib`: `"BLOCK"` keeps
/// the declared blocks; `"PARMETIS"` or `"PTSCOTCH"` with routine `"KWAY"` partitions the
/// target set of `prime_map` by the graph of its rows, distributed (PT-Scotch's ParMETIS
/// interface, loaded at run time: no process holds the graph); `"PARMETIS"` with `"GEOMKWAY"`
/// does the same with the coordinates `coords`, which must be on the target set of
/// `prime_map`; `"METIS"` with `"KWAY"` gathers the graph on every process and runs METIS there
/// (small runs); `"RCB"` (or routine `"GEOM"` of PARMETIS or PTSCOTCH) bisects the set of
/// `coords` by its coordinates with parallel medians; `"RANDOM"` (for tests) scatters
/// `prime_set` at random. Apart from METIS's graph, no process holds more than its share of any
/// set plus its halos at any point. The dats and maps declared from HDF5 whose blocks and files
/// are unchanged are not held while it works: it releases them and reads them again from their
/// files (the maps once the parts are known, the dats straight into their new layout), with
/// the values migration would give (`OP2_PARTITION_REREAD=0`: they migrate like the others).
/// `routine` may be NULL for BLOCK, RCB and RANDOM, and means
/// nothing to BLOCK and RANDOM: any is accepted there (OP2's Airfoil passes `"ANY"`);
/// `prime_map` may be OP_ID (NULL) and `coords` NULL when unused; a k-way routine (METIS,
/// PARMETIS or PTSCOTCH with KWAY, PARMETIS with GEOMKWAY) given no `prime_map` partitions by
/// blocks, as OP2 does, and says so at diagnostics level 1 on process 0 (`op2: op_partition
/// PTSCOTCH KWAY without a map: partitioned by blocks ...`). Every other set follows
/// through the maps (as OP2 does); a set no map reaches keeps its declared blocks. Afterwards
/// fetches, `op_arg_idx` and file output keep the original numbering. On one process it only
/// checks its arguments. A program that never calls it runs on its declared blocks (BLOCK).
/// Errors: OP2_ERR_BAD_CONFIG (an unknown lib/routine, listing the supported ones; RCB or GEOM
/// without coords, GEOMKWAY with a map but without coords, or with coords on another set than
/// the map's to-set; a second call),
/// OP2_ERR_BACKEND_UNAVAILABLE (PARMETIS/PTSCOTCH when no ParMETIS library loads, naming it), OP2_ERR_BAD_LOOP (after the first loop),
/// OP2_ERR_BAD_TYPE (coords not double/float/int), OP2_ERR_BAD_CONFIG also when a dat was
/// uploaded to a device before it (op_upload_*), OP2_ERR_FILE_FORMAT when a file read again no
/// longer holds what was declared from it (rewritten with its size and time kept),
/// OP2_ERR_NULL_ARGUMENT,
/// OP2_ERR_INVALID_HANDLE, OP2_ERR_MPI.
#[no_mangle]
pub extern "C" fn op_partition(
    lib: *const c_char,
    routine: *const c_char,
    prime_set: op_set,
    prime_map: op_map,
    coords: op_dat,
) {
    const CALL: &str = "op_partition";
    boundary(CALL, (), |st| {
        let ready = (|| {
            let lib = c_str(lib, CALL, "lib")?;
            let routine = if routine.is_null() { None } else { Some(c_str(routine, CALL, "routine")?) };
            let set = if prime_set.is_null() { None } else { Some(st.set(prime_set, &CALL, &"prime_set")?) };
            let map = if prime_map.is_null() { None } else { Some(st.map(prime_map, &CALL, &"prime_map")?) };
            let dat = if coords.is_null() { None } else { Some(st.dat(coords, &CALL, &"coords")?) };
            Ok((lib, routine, set, map, dat))
        })();
        let ctx = st.ctx(CALL)?;
        // The arguments travel with the entry: processes given different ones (a routine, a
        // map on one process only) all get the same error instead of hanging in different
        // partitioners.
        let ready = ready.map(|a| {
            let (lib, routine, set, map, dat) = a;
            let key = format!(
                "lib '{lib}', routine {}, prime_set {}, prime_map {}, coords {}",
                routine.map_or("NULL".to_string(), |r| format!("'{r}'")),
                set.map_or("NULL".to_string(), |s| format!("'{}' (#{})", ctx.sets[s.0 as usize].name, s.0)),
                map.map_or("NULL".to_string(), |m| format!("'{}' (#{})", ctx.maps[m.0 as usize].name, m.0)),
                dat.map_or("NULL".to_string(), |d| format!("'{}' (#{})", ctx.dats[d.0 as usize].name, d.0)),
            );
            (a, key.into_bytes())
        });
        let ((lib, routine, set, map, dat), keys) = ctx.comm.enter_with(CALL, ready)?;
        if let Some(r) = keys.iter().position(|k| *k != keys[0]) {
            let show = |k: &[u8]| String::from_utf8_lossy(k).into_owned();
            op2_bail!(
                BadConfig,
                "{CALL}: the processes were given different arguments: rank 0 {}, rank {r} {} (op_partition is collective: every process passes the same)",
                show(&keys[0]),
                show(&keys[r])
            );
        }
        crate::mpi::dist::partition(
            ctx,
            Some(crate::mpi::dist::Readers { dat: crate::io::hdf5::reread, map: crate::io::hdf5::reread_map }),
            lib,
            routine,
            set,
            map,
            dat,
        )
    })
}
