//! The ParMETIS interface (`ParMETIS_V3_PartKway`, `ParMETIS_V3_PartGeomKway`), loaded at run
//! time: Debian's is PT-Scotch's (`libptscotchparmetisv3`, package `libptscotch-7.0`, which
//! PETSc already pulls in; headers in `libscotchparmetis-dev`), so `"PARMETIS"` and `"PTSCOTCH"`
//! both run PT-Scotch's distributed k-way partitioner on the distributed graph. Loading it at run
//! time keeps it off the link line (a program that never partitions with it needs nothing);
//! `OP2_PARMETIS_LIB` names another library with the same interface (32-bit `idx_t`, `float`
//! `real_t`, as Debian builds both).

use crate::error::Result;
use crate::op2_bail;
use mpi::ffi;
use std::ffi::c_int;

type PartKway = unsafe extern "C" fn(
    *const i32, // vtxdist
    *const i32, // xadj
    *const i32, // adjncy
    *const i32, // vwgt
    *const i32, // adjwgt
    *const i32, // wgtflag
    *const i32, // numflag
    *const i32, // ncon
    *const i32, // nparts
    *const f32, // tpwgts
    *const f32, // ubvec
    *const i32, // options
    *mut i32,   // edgecut
    *mut i32,   // part
    *mut ffi::MPI_Comm,
) -> c_int;

type PartGeomKway = unsafe extern "C" fn(
    *const i32, // vtxdist
    *const i32, // xadj
    *const i32, // adjncy
    *const i32, // vwgt
    *const i32, // adjwgt
    *const i32, // wgtflag
    *const i32, // numflag
    *const i32, // ndims
    *const f32, // xyz
    *const i32, // ncon
    *const i32, // nparts
    *const f32, // tpwgts
    *const f32, // ubvec
    *const i32, // options
    *mut i32,   // edgecut
    *mut i32,   // part
    *mut ffi::MPI_Comm,
) -> c_int;

/// The names tried when `OP2_PARMETIS_LIB` is not set (Debian's PT-Scotch, then a `-dev` link).
const NAMES: [&str; 4] =
    ["libptscotchparmetisv3-7.0.so", "libptscotchparmetisv3.so", "libparmetis.so", "libptscotchparmetisv3-7.1.so"];

fn load() -> std::result::Result<(libloading::Library, String), String> {
    let mut tried = Vec::new();
    let names: Vec<String> = match std::env::var("OP2_PARMETIS_LIB") {
        Ok(p) if !p.is_empty() => vec![p],
        _ => NAMES.iter().map(|s| s.to_string()).collect(),
    };
    for n in &names {
        // SAFETY: loading the library runs its initialisers, which have no preconditions of ours.
        match unsafe { libloading::Library::new(n) } {
            Ok(l) => return Ok((l, n.clone())),
            Err(e) => tried.push(format!("{e}")),
        }
    }
    Err(format!(
        "no ParMETIS interface library could be loaded (tried {}; Debian: apt install libptscotch-7.0, or set OP2_PARMETIS_LIB): {}",
        names.join(", "),
        tried.join("; ")
    ))
}

/// Whether the ParMETIS interface library loads on this process and has the routine
/// `op_partition` will call (`ParMETIS_V3_PartGeomKway` for `geom`): checked, and agreed,
/// before the collective partitioning starts, so a process without it makes the call
/// OP2_ERR_BACKEND_UNAVAILABLE on every process instead of aborting the job.
pub fn available(geom: bool) -> Result<()> {
    let (lib, name) = match load() {
        Ok(x) => x,
        Err(e) => op2_bail!(BackendUnavailable, "op_partition: {e}"),
    };
    let routine: &[u8] = if geom { b"ParMETIS_V3_PartGeomKway\0" } else { b"ParMETIS_V3_PartKway\0" };
    // SAFETY: looking a symbol up runs nothing; the pointer is not called here.
    if let Err(e) = unsafe { lib.get::<unsafe extern "C" fn()>(routine) } {
        let r = String::from_utf8_lossy(&routine[..routine.len() - 1]).into_owned();
        op2_bail!(BackendUnavailable, "op_partition: {name} has no {r} ({e})");
    }
    Ok(())
}

/// PT-Scotch runs its mapping in threads that call MPI at the same time (two processes' halves
/// in `_SCOTCHthreadLaunch` -> `dgraphInducePart`, each with its collectives): under an MPI
/// initialised below `MPI_THREAD_MULTIPLE` (op2 asks for SERIALIZED; `MPI_Init` gives SINGLE)
/// that deadlocks or crashes inside MPI (seen: about 4 runs in 10 of a 40-vertex graph on 4
/// processes hung, and a segfault in ob1's receive path). Below MULTIPLE, PT-Scotch is told to
/// use one thread (`SCOTCH_PTHREAD_NUMBER=1`, which it reads when it starts a mapping), unless
/// the user set that variable.
fn single_threaded_scotch_unless_multiple() {
    let mut provided: std::ffi::c_int = 0;
    // SAFETY: MPI is initialised (op_partition runs only on a communicator); plain query.
    unsafe { ffi::MPI_Query_thread(&mut provided) };
    if provided < ffi::MPI_THREAD_MULTIPLE as std::ffi::c_int && std::env::var_os("SCOTCH_PTHREAD_NUMBER").is_none() {
        // op_partition is collective and called from the program's MPI thread; op2 starts no
        // thread that reads the environment meanwhile.
        std::env::set_var("SCOTCH_PTHREAD_NUMBER", "1");
    }
}

/// Partitions the distributed graph (`vtxdist`: P + 1 block starts of the vertices; this
/// process's rows `xadj` from 0 and `adjncy` in global indices) into `nparts` parts, with
/// coordinates (`ndims` per local vertex) for the geometric variant. Returns this process's
/// parts. Collective over `comm`.
pub fn part_kway(
    comm: ffi::MPI_Comm,
    vtxdist: &[i32],
    xadj: &[i32],
    adjncy: &[i32],
    nparts: usize,
    geom: Option<(&[f32], usize)>,
) -> Result<Vec<i32>> {
    single_threaded_scotch_unless_multiple();
    let (lib, name) = match load() {
        Ok(x) => x,
        Err(e) => op2_bail!(BackendUnavailable, "op_partition: {e}"),
    };
    let n = xadj.len().saturating_sub(1);
    // ParMETIS reads part[] only when refining; a local array of at least one element keeps
    // the pointer valid on a process with no vertices.
    let mut part = vec![0i32; n.max(1)];
    let tpwgts = vec![1.0f32 / nparts as f32; nparts];
    let ubvec = [1.05f32];
    // options[0] = 1: use options[1] (no output) and options[2] (seed), for repeatable runs.
    let options = [1i32, 0, 1];
    let (wgtflag, numflag, ncon, np) = (0i32, 0i32, 1i32, nparts as i32);
    let mut edgecut = 0i32;
    let mut comm = comm;
    // adjncy may be empty: give a valid pointer.
    let adj: Vec<i32>;
    let adjp = if adjncy.is_empty() {
        adj = vec![0];
        adj.as_ptr()
    } else {
        adjncy.as_ptr()
    };
    let rc = match geom {
        None => {
            // SAFETY: the symbol has the PartKway signature (ParMETIS 3/4 API, PT-Scotch's).
            let f: PartKway = match unsafe { lib.get::<PartKway>(b"ParMETIS_V3_PartKway\0") } {
                Ok(s) => *s,
                Err(e) => op2_bail!(BackendUnavailable, "op_partition: {name} has no ParMETIS_V3_PartKway ({e})"),
            };
            // SAFETY: arrays as ParMETIS documents them, sized above; comm is a valid communicator.
            unsafe {
                f(
                    vtxdist.as_ptr(),
                    xadj.as_ptr(),
                    adjp,
                    std::ptr::null(),
                    std::ptr::null(),
                    &wgtflag,
                    &numflag,
                    &ncon,
                    &np,
                    tpwgts.as_ptr(),
                    ubvec.as_ptr(),
                    options.as_ptr(),
                    &mut edgecut,
                    part.as_mut_ptr(),
                    &mut comm,
                )
            }
        }
        Some((xyz, ndims)) => {
            // SAFETY: as above, the PartGeomKway signature.
            let f: PartGeomKway = match unsafe { lib.get::<PartGeomKway>(b"ParMETIS_V3_PartGeomKway\0") } {
                Ok(s) => *s,
                Err(e) => op2_bail!(BackendUnavailable, "op_partition: {name} has no ParMETIS_V3_PartGeomKway ({e})"),
            };
            let nd = ndims as i32;
            let z: Vec<f32>;
            let xyzp = if xyz.is_empty() {
                z = vec![0.0; ndims.max(1)];
                z.as_ptr()
            } else {
                xyz.as_ptr()
            };
            // SAFETY: as above; xyz holds ndims floats per local vertex.
            unsafe {
                f(
                    vtxdist.as_ptr(),
                    xadj.as_ptr(),
                    adjp,
                    std::ptr::null(),
                    std::ptr::null(),
                    &wgtflag,
                    &numflag,
                    &nd,
                    xyzp,
                    &ncon,
                    &np,
                    tpwgts.as_ptr(),
                    ubvec.as_ptr(),
                    options.as_ptr(),
                    &mut edgecut,
                    part.as_mut_ptr(),
                    &mut comm,
                )
            }
        }
    };
    if rc != 1 {
        op2_bail!(BadConfig, "op_partition: {name} failed (ParMETIS status {rc})");
    }
    part.truncate(n);
    if let Some(&bad) = part.iter().find(|&&q| q < 0 || q as usize >= nparts) {
        op2_bail!(Internal, "op_partition: {name} returned part {bad} for {nparts} parts");
    }
    // The library stays loaded: PT-Scotch keeps state (error handlers) for the process.
    std::mem::forget(lib);
    Ok(part)
}
