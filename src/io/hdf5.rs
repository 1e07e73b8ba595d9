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
//! Under MPI (more than one process) every call is collective. Reading: each process reads only
//! its declared block of rows (OP2's `[G*r/P, G*(r+1)/P)`) with one hyperslab; writing: each
//! process writes the declared block of the whole dat in original order (rows sent there from
//! their owners by one all-to-all, `mpi::dist::to_declared_block`), so no process ever holds a
//! whole dataset. With a parallel HDF5 (`op2_hdf5_mpio`, set by build.rs when hdf5-metno-sys
//! finds one: Debian's libhdf5-openmpi-dev) files are opened with the MPI-IO driver and row
//! transfers are collective (`H5FD_MPIO_COLLECTIVE`); with a serial HDF5 reads open the file on
//! every process independently and writes are refused by name. Every outcome is agreed among
//! the processes (`Comm::agree`) before the next collective step, so an error on one process
//! (a missing file, a missing dataset) is the same named error everywhere, never a hang.

#[cfg(feature = "hdf5")]
pub use imp::*;
#[cfg(not(feature = "hdf5"))]
pub use none::*;

#[cfg(not(feature = "hdf5"))]
mod none {
    use crate::context::Context;
    use crate::core::FileSource;
    use crate::core::{DatId, ElemType, MapId, SetId};
    use crate::error::Result;
    use crate::mpi::dist::Reread;
    use crate::mpi::Comm;
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
    pub fn get_const(_: &Comm, _: &str, _: usize, _: ElemType, _: &mut [u8], _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn write_const(_: &Comm, _: &str, _: usize, _: ElemType, _: &[u8], _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn fetch_dat_to_file(_: &mut Context, _: DatId, _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn fetch_dat_to_path(_: &mut Context, _: DatId, _: &str, _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn dump(_: &Context, _: &str, call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn reread(_: &Comm, _: &Reread, _: &[u32], _: &mut [u8], call: &str) -> Result<()> {
        unavailable(call)
    }
    pub fn reread_map(_: &Comm, _: &FileSource, _: usize, _: (usize, usize), call: &str) -> Result<Vec<i32>> {
        unavailable(call)
    }

    #[test]
    fn answers_a_named_error() {
        let e = get_const(&Comm::default(), "gam", 1, ElemType::Double, &mut [0u8; 8], "f.h5", "op_get_const_hdf5")
            .unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::BackendUnavailable);
        assert!(e.message.starts_with("op_get_const_hdf5: op2 was built without feature hdf5"));
    }
}

#[cfg(feature = "hdf5")]
pub(crate) mod imp {
    use crate::context::Context;
    use crate::context::Rows;
    use crate::core::buffer::AlignedBuf;
    use crate::core::{DatId, ElemType, FileSource, MapId, SetId};
    use crate::error::{Op2Error, Result};
    use crate::mpi::dist::Reread;
    use crate::mpi::Comm;
    use crate::{op2_bail, op2_err};
    use hdf5::types::{FloatSize, IntSize, TypeDescriptor};
    use hdf5::{Dataset, Datatype, File, H5Type, Location};

    /// Longest `type` attribute accepted on read (OP2's longest is "unsigned long long:soa").
    const MAX_TYPE_ATTR: usize = 32;

    fn h5err(call: &str, file: &str, what: &str, e: hdf5::Error) -> Op2Error {
        op2_err!(FileFormat, "{call}: file '{file}': {what}: {e}")
    }

    /// Parallel HDF5's MPI-IO driver and collective transfers (declared here: hdf5-metno-sys
    /// declares the first only with its `mpio` feature, which would pull a second MPI binding).
    #[cfg(all(feature = "mpi", op2_hdf5_mpio))]
    pub(crate) mod mpio {
        use hdf5_sys::h5::herr_t;
        use hdf5_sys::h5i::hid_t;
        extern "C" {
            pub fn H5Pset_fapl_mpio(fapl_id: hid_t, comm: mpi::ffi::MPI_Comm, info: mpi::ffi::MPI_Info) -> herr_t;
            pub fn H5Pset_dxpl_mpio(dxpl_id: hid_t, xfer_mode: std::ffi::c_int) -> herr_t;
        }
        /// `H5FD_MPIO_COLLECTIVE`.
        pub const COLLECTIVE: std::ffi::c_int = 1;
    }

    /// Whether this call goes through the MPI-IO driver: more than one process and an HDF5
    /// built with MPI (Debian's libhdf5-openmpi-dev). Then opening, creating datasets and
    /// attributes, and the row transfers are collective: every process makes the same calls.
    pub(crate) fn mpio(comm: &Comm) -> bool {
        cfg!(all(feature = "mpi", op2_hdf5_mpio)) && comm.distributed()
    }

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Mode {
        Read,
        ReadWrite,
        Create,
    }

    /// The MPI-IO collective buffer per aggregating process (MPI-IO's `cb_buffer_size` hint).
    #[cfg(all(feature = "mpi", op2_hdf5_mpio))]
    const CB_BUFFER_BYTES: usize = 1 << 20;

    /// Opens (or creates) a file, through the MPI-IO driver when `mpio(comm)` (collective).
    fn open_mode(path: &str, mode: Mode, comm: &Comm) -> hdf5::Result<File> {
        #[cfg(all(feature = "mpi", op2_hdf5_mpio))]
        if let Some(w) = comm.world.as_ref().filter(|_| mpio(comm)) {
            use hdf5_sys::h5f::{H5F_close_degree_t, H5Fcreate, H5Fopen, H5F_ACC_RDONLY, H5F_ACC_RDWR, H5F_ACC_TRUNC};
            use hdf5_sys::h5p::{H5Pclose, H5Pcreate, H5Pset_fclose_degree, H5P_CLS_FILE_ACCESS, H5P_DEFAULT};
            let c = std::ffi::CString::new(path).map_err(|_| hdf5::Error::from("the file name holds a NUL byte"))?;
            let id = hdf5::sync::sync(|| {
                // SAFETY: plain HDF5 calls on a property list created and closed here; the
                // communicator is op2's, valid while op2 runs.
                unsafe {
                    let fapl = H5Pcreate(*H5P_CLS_FILE_ACCESS);
                    if fapl < 0 {
                        return -1;
                    }
                    // The MPI-IO layer's collective buffer: at most CB_BUFFER_BYTES per
                    // aggregating process (OpenMPI's OMPIO takes 32 MiB by default, which process
                    // 0 held on top of its block through every collective read of a
                    // declaration: #36). HDF5 keeps its own copy of the info object.
                    let mut info = mpi::ffi::RSMPI_INFO_NULL;
                    if mpi::ffi::MPI_Info_create(&mut info) != 0 {
                        info = mpi::ffi::RSMPI_INFO_NULL;
                    } else {
                        let value = std::ffi::CString::new(CB_BUFFER_BYTES.to_string()).unwrap_or_default();
                        mpi::ffi::MPI_Info_set(info, c"cb_buffer_size".as_ptr(), value.as_ptr());
                    }
                    // Weak: the file closes when its last object does, on every process alike.
                    let ok = mpio::H5Pset_fapl_mpio(fapl, w.raw(), info) >= 0
                        && H5Pset_fclose_degree(fapl, H5F_close_degree_t::H5F_CLOSE_WEAK) >= 0;
                    if info != mpi::ffi::RSMPI_INFO_NULL {
                        mpi::ffi::MPI_Info_free(&mut info);
                    }
                    let id = match (ok, mode) {
                        (false, _) => -1,
                        (_, Mode::Read) => H5Fopen(c.as_ptr(), H5F_ACC_RDONLY, fapl),
                        (_, Mode::ReadWrite) => H5Fopen(c.as_ptr(), H5F_ACC_RDWR, fapl),
                        (_, Mode::Create) => H5Fcreate(c.as_ptr(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
                    };
                    H5Pclose(fapl);
                    id
                }
            });
            if id < 0 {
                return Err(hdf5::Error::from("H5Fopen/H5Fcreate with the MPI-IO driver failed"));
            }
            // SAFETY: a new file id from H5Fopen/H5Fcreate, owned by the File from here.
            return unsafe { hdf5::from_id::<File>(id) };
        }
        let _ = comm;
        match mode {
            Mode::Read => File::open(path),
            Mode::ReadWrite => File::open_rw(path),
            Mode::Create => File::create(path),
        }
    }

    /// Opens an existing file for reading: a missing or unreadable file is `Io`, a file that is
    /// not HDF5 is `FileFormat`. Under MPI every process opens it (collectively with the MPI-IO
    /// driver) and all agree first that every process can, so a file missing on one process is
    /// the same named error everywhere, never a hang.
    fn open_read(path: &str, call: &str, comm: &Comm) -> Result<(File, u64)> {
        let len = comm.agree(crate::core::file::regular_file_len(path, call))?;
        let f = open_mode(path, Mode::Read, comm)
            .map_err(|e| op2_err!(FileFormat, "{call}: '{path}' is not a readable HDF5 file: {e}"));
        Ok((comm.agree(f)?, len))
    }

    /// Opens a file for writing, creating it if missing (`truncate`: always start empty). Under
    /// MPI process 0's view of whether it exists decides for all (collective).
    fn open_write(path: &str, truncate: bool, call: &str, comm: &Comm) -> Result<File> {
        let exists = std::path::Path::new(path).exists();
        let exists = if comm.distributed() { comm.all_gather(&[exists as u8])?[0] == [1] } else { exists };
        let mode = if truncate || !exists { Mode::Create } else { Mode::ReadWrite };
        let r = open_mode(path, mode, comm).map_err(|e| {
            if exists && !truncate {
                op2_err!(FileFormat, "{call}: cannot open '{path}' for writing as HDF5: {e}")
            } else {
                op2_err!(Io, "{call}: cannot create '{path}': {e}")
            }
        });
        comm.agree(r)
    }

    fn dataset(f: &File, name: &str, path: &str, call: &str) -> Result<Dataset> {
        if !link_exists(f, name) {
            op2_bail!(FileFormat, "{call}: file '{path}' has no dataset '{name}'");
        }
        if let Some(link) = not_hard_link(f, name) {
            op2_bail!(
                FileFormat,
                "{call}: dataset '{name}' in '{path}' is reached through the {link} link '{}'; op2 reads only datasets stored in the file itself",
                link.1
            );
        }
        f.dataset(name).map_err(|e| h5err(call, path, &format!("'{name}' is not a dataset"), e))
    }

    /// That dataset `name` is in the file, agreed among the processes before anything is read
    /// from it: absent on every process is `NoDataset` (the `op_decl_*_hdf5` call returns NULL
    /// without ending the program, as OP2's does for a program probing an optional dataset);
    /// absent on some processes only (each opened a different file) is `FileFormat` naming them,
    /// so that every process takes the same decision.
    fn agree_present(f: &File, name: &str, path: &str, call: &str, comm: &Comm) -> Result<()> {
        let here = link_exists(f, name);
        let all: Vec<bool> = if comm.distributed() {
            comm.all_gather(&[here as u8])?.iter().map(|b| b.as_slice() == [1]).collect()
        } else {
            vec![here]
        };
        if all.iter().all(|&p| p) {
            return Ok(());
        }
        if all.iter().all(|&p| !p) {
            op2_bail!(NoDataset, "{call}: file '{path}' has no dataset '{name}'");
        }
        let list = |want: bool| {
            all.iter()
                .enumerate()
                .filter(|&(_, &p)| p == want)
                .map(|(r, _)| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        op2_bail!(
            FileFormat,
            "{call}: file '{path}' has the dataset '{name}' on process(es) {} but not on process(es) {} (each opened a different file)",
            list(true),
            list(false)
        )
    }

    /// The first component of `name` that is not a hard link (a soft or external link, which
    /// could lead to another file, a FIFO or a device), as (kind, path so far).
    fn not_hard_link(f: &File, name: &str) -> Option<LinkKind> {
        let mut prefix = String::new();
        for part in name.trim_start_matches('/').split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            if let Some(kind) = link_kind(f, &prefix) {
                return Some(LinkKind(kind, prefix));
            }
        }
        None
    }

    /// What the link `path` (which exists) is when it is not a hard link: "soft", "external"
    /// or "unreadable"; None for a hard link.
    fn link_kind(f: &File, path: &str) -> Option<&'static str> {
        use hdf5_sys::h5l::{H5L_info1_t, H5L_type_t};
        let Ok(c) = std::ffi::CString::new(path) else {
            return Some("unreadable");
        };
        let mut info = H5L_info1_t::default();
        // SAFETY: a NUL-terminated name and an out-struct of the type the call fills.
        #[allow(deprecated)]
        let rc = hdf5::sync::sync(|| unsafe {
            hdf5_sys::h5l::H5Lget_info1(f.id(), c.as_ptr(), &mut info, hdf5_sys::h5p::H5P_DEFAULT)
        });
        if rc < 0 {
            return Some("unreadable");
        }
        match info.type_ {
            H5L_type_t::H5L_TYPE_HARD => None,
            H5L_type_t::H5L_TYPE_SOFT => Some("soft"),
            _ => Some("external"),
        }
    }

    /// A link that op2 does not follow: its kind and its path.
    struct LinkKind(&'static str, String);

    impl std::fmt::Display for LinkKind {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    /// The dims of a dataset's or attribute's dataspace (empty for a scalar). A null dataspace
    /// (no values at all) is `FileFormat`, never an empty extent.
    fn dims_of(space: hdf5::Result<hdf5::Dataspace>, what: &str, path: &str, call: &str) -> Result<Vec<usize>> {
        let sp = space.map_err(|e| h5err(call, path, &format!("dataspace of {what}"), e))?;
        if sp.is_null() {
            op2_bail!(FileFormat, "{call}: {what} in '{path}' has a null dataspace (it holds no values)");
        }
        if sp.is_scalar() {
            return Ok(Vec::new());
        }
        if !sp.is_simple() {
            op2_bail!(FileFormat, "{call}: {what} in '{path}' has a dataspace of unknown class");
        }
        Ok(sp.shape())
    }

    /// The number of values of `dims`, or `FileFormat` when it overflows.
    fn count_of(dims: &[usize], what: &str, path: &str, call: &str) -> Result<usize> {
        dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or_else(|| {
            op2_err!(FileFormat, "{call}: {what} in '{path}' has extent {dims:?}, more values than memory can address")
        })
    }

    /// Checks that the file itself stores the `values` values of `ds` before anything is
    /// allocated for them: a virtual dataset or one in external files (its values elsewhere,
    /// maybe in a FIFO or a device) is refused, and without filters the bytes the extent needs
    /// must be stored (`H5Dget_storage_size`) and fit in the file (`file_len`), so that an
    /// extent the file cannot hold is `FileFormat`, not an allocation. A filtered (compressed)
    /// dataset's size is bounded by the fallible allocation alone.
    fn check_storage(ds: &Dataset, values: usize, file_len: u64, name: &str, path: &str, call: &str) -> Result<()> {
        use hdf5_sys::h5d::{H5D_layout_t, H5Dget_create_plist, H5Dget_storage_size};
        use hdf5_sys::h5p::{H5Pclose, H5Pget_external_count, H5Pget_layout, H5Pget_nfilters};
        let elem = ds.dtype().map(|t| t.size()).map_err(|e| h5err(call, path, &format!("datatype of '{name}'"), e))?;
        let Some(need) = values.checked_mul(elem) else {
            op2_bail!(FileFormat, "{call}: dataset '{name}' in '{path}': {values} values of {elem} bytes overflow");
        };
        // SAFETY: plain queries on a dataset id and the property list created and closed here.
        let (layout, nfilters, nexternal, stored) = hdf5::sync::sync(|| unsafe {
            let dcpl = H5Dget_create_plist(ds.id());
            if dcpl < 0 {
                return None;
            }
            let r = (H5Pget_layout(dcpl), H5Pget_nfilters(dcpl), H5Pget_external_count(dcpl));
            H5Pclose(dcpl);
            Some((r.0, r.1, r.2, H5Dget_storage_size(ds.id())))
        })
        .ok_or_else(|| {
            op2_err!(FileFormat, "{call}: dataset '{name}' in '{path}': cannot read its creation properties")
        })?;
        if layout == H5D_layout_t::H5D_VIRTUAL {
            op2_bail!(
                FileFormat,
                "{call}: dataset '{name}' in '{path}' is a virtual dataset (its values live in other files); op2 reads only values stored in the file itself"
            );
        }
        if nexternal != 0 {
            op2_bail!(
                FileFormat,
                "{call}: dataset '{name}' in '{path}' keeps its values in {nexternal} external file(s); op2 reads only values stored in the file itself"
            );
        }
        if nfilters < 0 {
            op2_bail!(FileFormat, "{call}: dataset '{name}' in '{path}': cannot read its filter pipeline");
        }
        if nfilters == 0 && need > 0 && (stored < need as u64 || need as u64 > file_len) {
            op2_bail!(
                FileFormat,
                "{call}: dataset '{name}' in '{path}' declares {values} values of {elem} bytes ({need} bytes), but the file stores {} bytes of it and is {file_len} bytes long (values never written, or sizes that lie)",
                stored
            );
        }
        Ok(())
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

    /// The HDF5 link path a name becomes (`/a//b/` and `a/b` are one link).
    fn link_key(name: &str) -> String {
        name.split('/').filter(|p| !p.is_empty() && *p != ".").collect::<Vec<_>>().join("/")
    }

    /// Whether two names land on the same link of one file, or one inside the other (a name
    /// with a `/` creates groups: `a/b` and a dataset `a` cannot both exist).
    fn links_collide(a: &str, b: &str) -> bool {
        let (a, b) = (link_key(a), link_key(b));
        a == b || b.starts_with(&format!("{a}/")) || a.starts_with(&format!("{b}/"))
    }

    /// What an existing dataset of an op2-layout file holds, from its attributes (OP2's layout:
    /// a dat has `size` = bytes per element, a map `size` = rows, a constant `dim` without
    /// `size`, a set neither), for messages.
    fn existing_kind(ds: &Dataset) -> &'static str {
        let names = ds.attr_names().unwrap_or_default();
        let has = |a: &str| names.iter().any(|n| n == a);
        match (has("size"), has("dim")) {
            (true, _) => "a dat or map",
            (false, true) => "a constant",
            (false, false) => "a set (or a dataset without op2 attributes)",
        }
    }

    /// (rows, cols) of a rank-1 (cols = 1) or rank-2 dataset.
    fn rows_cols(ds: &Dataset, name: &str, path: &str, call: &str) -> Result<(usize, usize)> {
        let shape = dims_of(ds.space(), &format!("dataset '{name}'"), path, call)?;
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

    /// A transfer property list: collective under the MPI-IO driver, the default otherwise.
    struct Xfer(hdf5_sys::h5i::hid_t);

    impl Xfer {
        fn new(collective: bool) -> Xfer {
            #[cfg(all(feature = "mpi", op2_hdf5_mpio))]
            if collective {
                use hdf5_sys::h5p::{H5Pclose, H5Pcreate, H5P_CLS_DATASET_XFER};
                // SAFETY: a property list created here (closed on drop or on failure).
                let id = hdf5::sync::sync(|| unsafe {
                    let id = H5Pcreate(*H5P_CLS_DATASET_XFER);
                    if id >= 0 && mpio::H5Pset_dxpl_mpio(id, mpio::COLLECTIVE) < 0 {
                        H5Pclose(id);
                        return -1;
                    }
                    id
                });
                if id >= 0 {
                    return Xfer(id);
                }
            }
            let _ = collective;
            Xfer(hdf5_sys::h5p::H5P_DEFAULT)
        }
    }

    impl Drop for Xfer {
        fn drop(&mut self) {
            if self.0 != hdf5_sys::h5p::H5P_DEFAULT {
                // SAFETY: our own property list.
                hdf5::sync::sync(|| unsafe { hdf5_sys::h5p::H5Pclose(self.0) });
            }
        }
    }

    /// Reads (`write` false) or writes rows `[start, start + count)` of a `[rows][cols]` (or
    /// rank-1) dataset from or to `buf` (`count * cols` values of the memory type `mem`): one
    /// hyperslab. Collective under the MPI-IO driver: every process calls it, with count 0 if
    /// it has nothing.
    fn transfer(
        ds: &Dataset,
        mem: &Datatype,
        (start, count, cols): (usize, usize, usize),
        buf: *mut u8,
        write: bool,
        collective: bool,
    ) -> hdf5::Result<()> {
        use hdf5_sys::h5d::{H5Dget_space, H5Dread, H5Dwrite};
        use hdf5_sys::h5s::{H5S_seloper_t, H5Sclose, H5Screate_simple, H5Sget_simple_extent_ndims};
        use hdf5_sys::h5s::{H5Sselect_hyperslab, H5Sselect_none};
        let xfer = Xfer::new(collective);
        let mut dummy = [0u8; 16];
        let buf = if count * cols == 0 { dummy.as_mut_ptr() } else { buf };
        // SAFETY: spaces are created and closed here; `buf` holds count * cols values of `mem`
        // (the caller's contract), or is the dummy with nothing selected.
        let rc = hdf5::sync::sync(|| unsafe {
            let fs = H5Dget_space(ds.id());
            if fs < 0 {
                return Some(hdf5::Error::query().unwrap_or_else(|e| e));
            }
            let n = [(count * cols).max(1) as u64];
            let ms = H5Screate_simple(1, n.as_ptr(), std::ptr::null());
            let rank = H5Sget_simple_extent_ndims(fs);
            let mut rc = if ms < 0 || rank < 1 { -1 } else { 0 };
            if rc == 0 && count * cols == 0 {
                rc = H5Sselect_none(fs).min(H5Sselect_none(ms));
            } else if rc == 0 {
                let st = [start as u64, 0];
                // a rank-1 dataset (dim 1) reads the first entry of each
                let ct = if rank == 1 { [count as u64, 0] } else { [count as u64, cols as u64] };
                rc = H5Sselect_hyperslab(
                    fs,
                    H5S_seloper_t::H5S_SELECT_SET,
                    st.as_ptr(),
                    std::ptr::null(),
                    ct.as_ptr(),
                    std::ptr::null(),
                );
            }
            if rc >= 0 {
                rc = if write {
                    H5Dwrite(ds.id(), mem.id(), ms, fs, xfer.0, buf as *const _)
                } else {
                    H5Dread(ds.id(), mem.id(), ms, fs, xfer.0, buf as *mut _)
                };
            }
            // the library's own account of a failure, taken before anything else runs
            let err = if rc < 0 { Some(hdf5::Error::query().unwrap_or_else(|e| e)) } else { None };
            if ms >= 0 {
                H5Sclose(ms);
            }
            H5Sclose(fs);
            err
        });
        if let Some(e) = rc {
            let what = if write { "H5Dwrite" } else { "H5Dread" };
            return Err(hdf5::Error::from(format!("{what} of rows {start}..{}: {e}", start + count)));
        }
        Ok(())
    }

    /// Reads rows `[start, start + count)` of a `[rows][cols]` dataset into `out` (exactly
    /// `count * cols` values), converting to `T`: the process's block under MPI (collective
    /// with the MPI-IO driver), the whole dataset on one process.
    /// How a map dataset's integers are read: `Some(false)` as 32-bit, `Some(true)` (long,
    /// long long, unsigned) as 64-bit then narrowed; `None`: not integers.
    fn map_is_wide(t: &TypeDescriptor) -> Option<bool> {
        match t {
            TypeDescriptor::Integer(IntSize::U1 | IntSize::U2 | IntSize::U4)
            | TypeDescriptor::Unsigned(IntSize::U1 | IntSize::U2) => Some(false),
            TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) => Some(true),
            _ => None,
        }
    }

    /// Rows `[start, start + count)` of a map dataset of `dim` columns as `i32` (`what` names
    /// the allocations, `err` the read's failure); a `wide` one is read as `i64` and narrowed
    /// once `check` accepts its values. Local (the caller agrees).
    fn read_map_rows(
        ds: &Dataset,
        wide: bool,
        (start, count, dim): (usize, usize, usize),
        coll: bool,
        what: &str,
        err: &dyn Fn(hdf5::Error) -> Op2Error,
        check: &dyn Fn(&[i64]) -> Result<()>,
    ) -> Result<Vec<i32>> {
        let total = count * dim; // both declared: no overflow beyond what op_decl_map allows
        if !wide {
            let mut v = crate::core::alloc::zeroed::<i32>(total, what)?;
            read_rows(ds, start, count, dim, &mut v, coll).map_err(err)?;
            return Ok(v);
        }
        let mut v = crate::core::alloc::zeroed::<i64>(total, what)?;
        read_rows(ds, start, count, dim, &mut v, coll).map_err(err)?;
        check(&v)?;
        let mut narrow = crate::core::alloc::with_capacity::<i32>(total, what)?;
        narrow.extend(v.into_iter().map(|x| x as i32));
        Ok(narrow)
    }

    fn read_rows<T: H5Type + Copy>(
        ds: &Dataset,
        start: usize,
        count: usize,
        cols: usize,
        out: &mut [T],
        collective: bool,
    ) -> hdf5::Result<()> {
        debug_assert_eq!(out.len(), count * cols);
        let mem = Datatype::from_type::<T>()?;
        transfer(ds, &mem, (start, count, cols), out.as_mut_ptr() as *mut u8, false, collective)
    }

    /// `op_decl_set_hdf5`: the set's size is the one integer of dataset `name`. Under MPI it
    /// is the global size: every process reads it and declares its block
    /// `[G*r/P, G*(r+1)/P)` (OP2's distribution; collective).
    pub fn decl_set(ctx: &mut Context, path: &str, name: &str, call: &str) -> Result<SetId> {
        let comm = &ctx.comm;
        let (f, file_len) = open_read(path, call, comm)?;
        agree_present(&f, name, path, call, comm)?;
        let size = (|| -> Result<usize> {
            let ds = dataset(&f, name, path, call)?;
            let t = descriptor(&ds, name, path, call)?;
            if !matches!(t, TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_)) {
                op2_bail!(
                    FileFormat,
                    "{call}: set dataset '{name}' in '{path}' holds {}; an integer expected",
                    describe(&t)
                );
            }
            let dims = dims_of(ds.space(), &format!("set dataset '{name}'"), path, call)?;
            let n = count_of(&dims, &format!("set dataset '{name}'"), path, call)?;
            if n != 1 {
                op2_bail!(
                    FileFormat,
                    "{call}: set dataset '{name}' in '{path}' has {n} elements (shape {dims:?}); expected 1 (the set size)"
                );
            }
            check_storage(&ds, 1, file_len, name, path, call)?;
            let mut v = [0i64; 1];
            ds.read_into_raw(&mut v).map_err(|e| h5err(call, path, &format!("reading '{name}'"), e))?;
            let Ok(size) = i32::try_from(v[0]) else {
                op2_bail!(FileFormat, "{call}: set '{name}' in '{path}' has size {}, outside [0, 2^31)", v[0]);
            };
            if size < 0 {
                op2_bail!(FileFormat, "{call}: set '{name}' in '{path}' has negative size {size}");
            }
            Ok(size as usize)
        })();
        let size = comm.agree(size)?;
        drop(f);
        let (r, p) = (comm.rank() as usize, comm.size() as usize);
        let block = size * (r + 1) / p - size * r / p;
        ctx.decl_set(block as i32, name)
    }

    /// Checks a `[rows][cols]` dataset against the declared (global) set size and dim.
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

    /// The rows a process reads of a set's dataset: (global rows, first row, count): its
    /// declared block under MPI, everything on one process.
    fn block(ctx: &Context, set: SetId) -> (usize, usize, usize) {
        use crate::mpi::dist;
        (dist::global_size(ctx, set), dist::global_offset(ctx, set), dist::declared_size(ctx, set))
    }

    /// `op_decl_map_hdf5`: a `[from.size][dim]` integer dataset; entries range-checked into
    /// `[0, to.size)` as `op_decl_map` does. Under MPI each process reads only its block of
    /// rows (collective hyperslab read); values stay global indices until `op_partition`.
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
        let comm = &ctx.comm;
        let (f, file_len) = open_read(path, call, comm)?;
        agree_present(&f, name, path, call, comm)?;
        let (n, start, count) = block(ctx, from);
        let (to_size, _, _) = block(ctx, to);
        let checked = (|| -> Result<(Dataset, bool)> {
            let ds = dataset(&f, name, path, call)?;
            check_shape(&ds, name, path, call, (&ctx.sets[from.0 as usize].name, n), dim)?;
            check_storage(&ds, n * dim, file_len, name, path, call)?;
            let t = descriptor(&ds, name, path, call)?;
            match map_is_wide(&t) {
                Some(wide) => Ok((ds, wide)),
                None => op2_bail!(
                    FileFormat,
                    "{call}: map dataset '{name}' in '{path}' holds {}; integers expected",
                    describe(&t)
                ),
            }
        })();
        let (ds, wide) = comm.agree(checked)?;
        let coll = mpio(comm);
        let what = format!("{call} '{name}' (reading '{path}')");
        let values = read_map_rows(
            &ds,
            wide,
            (start, count, dim),
            coll,
            &what,
            &|e| h5err(call, path, &format!("reading '{name}'"), e),
            &|v| {
                let to_size = to_size as i64;
                if let Some((pos, &x)) = v.iter().enumerate().find(|(_, &x)| x < 0 || x >= to_size) {
                    op2_bail!(
                    MapOutOfRange,
                    "{call} '{name}': entry {} (element {}, position {}) is {x}, outside [0, {to_size}) of set '{}'",
                    pos + start * dim,
                    pos / dim + start,
                    pos % dim,
                    ctx.sets[to.0 as usize].name
                );
                }
                Ok(())
            },
        );
        drop(ds);
        drop(f);
        let values = ctx.comm.agree(values)?;
        // decl_map agrees before it commits (an entry refused on any process declares nothing);
        // the rows read become the map's storage (no second copy)
        let id = ctx
            .decl_map_vec(from, to, dim as i32, values, name)
            .map_err(|e| Op2Error::new(e.code, e.message.replacen("op_decl_map", call, 1)))?;
        // Under MPI before op_partition: where the rows came from (as decl_dat's).
        if ctx.comm.distributed() && !ctx.comm.partitioned && ctx.config.partition_reread {
            let m = &mut ctx.maps[id.0 as usize];
            m.source =
                file_source(path, name, &[]).map(|s| FileSource { hash: FileSource::values_hash(&m.values), ..s });
        }
        Ok(id)
    }

    /// Where a block came from and a hash of what it held (`FileSource`); None when the path
    /// cannot be made absolute (as UTF-8) or has no identity.
    fn file_source(path: &str, name: &str, block: &[u8]) -> Option<FileSource> {
        let abs = std::fs::canonicalize(path).ok().filter(|p| p.to_str().is_some())?;
        let identity = FileSource::identity_of(&abs)?;
        Some(FileSource { path: abs, dataset: name.to_string(), identity, hash: FileSource::block_hash(block) })
    }

    /// `op_partition`'s second read of a map it released while the partitioner ran
    /// (`mpi::dist`): this process's declared block `[start, start + count)` of rows, as at the
    /// declaration (entries of 64-bit files narrowed; they were range-checked then), checked
    /// against the hash taken then (`FileSource::hash`: a file changed in between is an error).
    /// Collective.
    pub fn reread_map(
        comm: &Comm,
        src: &FileSource,
        dim: usize,
        (start, count): (usize, usize),
        call: &str,
    ) -> Result<Vec<i32>> {
        let Some(path) = src.path.to_str() else {
            op2_bail!(Internal, "{call}: the path of '{}' is not UTF-8", src.dataset)
        };
        let name = src.dataset.as_str();
        let (f, _) = open_read(path, call, comm)?;
        let ds = comm.agree(dataset(&f, name, path, call))?;
        // Its type was checked at the declaration (integers); the hash below catches a change.
        let wide = descriptor(&ds, name, path, call).map(|t| map_is_wide(&t).unwrap_or(true));
        let wide = comm.agree(wide)?;
        let coll = mpio(comm);
        let what = format!("{call}: map '{name}' read again from '{path}'");
        let values = read_map_rows(
            &ds,
            wide,
            (start, count, dim),
            coll,
            &what,
            &|e| h5err(call, path, &format!("reading '{name}' again"), e),
            &|_| Ok(()),
        )
        .and_then(|v| {
            if FileSource::values_hash(&v) != src.hash {
                op2_bail!(FileFormat, "{what}: its rows are not those read at its declaration (the file changed)");
            }
            Ok(v)
        });
        comm.agree(values)
    }

    /// `op_decl_dat_hdf5`: a `[set.size][dim]` dataset whose type converts to `ty` without loss.
    /// Under MPI each process reads only its declared block of rows (collective hyperslab).
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
        let comm = &ctx.comm;
        let (f, file_len) = open_read(path, call, comm)?;
        agree_present(&f, name, path, call, comm)?;
        let (n, start, count) = block(ctx, set);
        let checked = (|| -> Result<Dataset> {
            let ds = dataset(&f, name, path, call)?;
            check_shape(&ds, name, path, call, (&ctx.sets[set.0 as usize].name, n), dim)?;
            let t = descriptor(&ds, name, path, call)?;
            if !lossless(&t, ty) {
                op2_bail!(
                    FileFormat,
                    "{call}: dataset '{name}' in '{path}' holds {}, which does not convert to '{}' without loss",
                    describe(&t),
                    ty.api_name()
                );
            }
            if count.checked_mul(dim).and_then(|v| v.checked_mul(ty.size())).is_none() {
                op2_bail!(BadSize, "{call} '{name}': {count} elements x dim {dim} overflows");
            }
            check_storage(&ds, n * dim, file_len, name, path, call)?;
            Ok(ds)
        })();
        let ds = comm.agree(checked)?;
        // The rows are read into a buffer of the dat's size, which becomes the dat's storage:
        // a process holds one copy of its block, never two (HDF5 reads into it directly; a
        // large buffer is a mapping of zero pages, resident as the read fills it).
        let coll = mpio(comm);
        let data = read_buf(&ds, ty, (start, count, dim), coll, (name, path, call)).map(|mut buf| {
            // Pages the file filled with zeros (work arrays: OP2's files hold Airfoil's qold, adt
            // and res as zeros) go back: resident, like a dat declared without data, only once a
            // loop writes them.
            buf.release_zero_pages();
            buf
        });
        drop(ds);
        drop(f);
        let data = ctx.comm.agree(data)?;
        // decl_dat_buf agrees before it commits
        let id = ctx.decl_dat_buf(set, dim as i32, ty, data, name, call)?;
        // Under MPI before op_partition: where the block came from and what it held, so that
        // op_partition can read it again into the new layout instead of moving it (it checks
        // both first). A path that cannot be made absolute or has no identity: moved as usual.
        if ctx.comm.distributed() && !ctx.comm.partitioned && ctx.config.partition_reread {
            let d = &mut ctx.dats[id.0 as usize];
            d.source = file_source(path, name, d.data.as_slice());
        }
        Ok(id)
    }

    /// The bytes a process reads of a piece of its block in one round of `reread`, over the
    /// number of processes (each may receive a piece's worth from every home in a round).
    const REREAD_PIECE_BYTES: usize = 4 << 20;

    /// `op_partition`'s second read of a dat it released at its entry (`mpi::dist`): the rows
    /// `wanted` (global indices of the dat's set: its new layout) of the dataset into `out`.
    /// Each process reads again the rows it read at the declaration, its declared block, in
    /// pieces of `REREAD_PIECE_BYTES / P`, each home sending each row of its piece to whoever
    /// wants it (`distpart::fetch_rows_from_pieces`): bounded memory whatever the dat's size.
    /// The values are the declaration's, read the same way (memory type, conversion). Collective.
    pub fn reread(comm: &Comm, r: &Reread, wanted: &[u32], out: &mut [u8], call: &str) -> Result<()> {
        let Some(path) = r.source.path.to_str() else {
            op2_bail!(Internal, "{call}: the path of '{}' is not UTF-8", r.source.dataset)
        };
        let name = r.source.dataset.as_str();
        let (f, _) = open_read(path, call, comm)?;
        let ds = comm.agree(dataset(&f, name, path, call))?;
        let mem = comm.agree(mem_type(r.ty).map_err(|e| h5err(call, path, "memory type", e)))?;
        let first = r.offsets[comm.rank() as usize];
        let eb = r.dim * r.ty.size();
        let piece_rows = (REREAD_PIECE_BYTES / (comm.size().max(1) as usize) / eb.max(1)).max(1);
        let coll = mpio(comm);
        let dim = r.dim;
        // The pieces of this process's block, hashed as they come: the block read again must
        // be the block read at the declaration (a file rewritten in between with its size and
        // time kept is caught here, after the fact but before any value is used).
        let mut hash = FileSource::hasher();
        crate::mpi::distpart::fetch_rows_from_pieces(
            comm,
            r.offsets,
            eb,
            wanted,
            out,
            piece_rows,
            &mut |lo, hi, buf| {
                transfer(&ds, &mem, (first + lo, hi - lo, dim), buf.as_mut_ptr(), false, coll)
                    .map_err(|e| h5err(call, path, &format!("reading '{name}' again"), e))?;
                std::hash::Hasher::write(&mut hash, buf);
                Ok(())
            },
        )?;
        let same = if std::hash::Hasher::finish(&hash) == r.source.hash {
            Ok(())
        } else {
            Err(op2_err!(
                FileFormat,
                "{call}: dat '{name}' read again from '{path}': its rows are not those read at its declaration (the file changed)"
            ))
        };
        comm.agree(same)
    }

    /// Reads rows `[start, start + count)` of a dat-shaped dataset as `ty` into a new aligned
    /// buffer (`OutOfMemory` when it cannot be had), with no other copy. Bool values are read
    /// as bytes and each must be 0 or 1 (any other byte is not a valid C `_Bool` or Rust
    /// `bool`): `FileFormat` naming the first other.
    fn read_buf(
        ds: &Dataset,
        ty: ElemType,
        (start, count, cols): (usize, usize, usize),
        collective: bool,
        (name, path, call): (&str, &str, &str),
    ) -> Result<AlignedBuf> {
        let Some(bytes) = count.checked_mul(cols).and_then(|n| n.checked_mul(ty.size())) else {
            op2_bail!(BadSize, "{call} '{name}': {count} x {cols} values overflow");
        };
        let Some(mut buf) = AlignedBuf::zeroed(bytes) else {
            return Err(crate::core::alloc::oom(&format!("{call} '{name}' (reading '{path}')"), bytes));
        };
        let mem = mem_type(ty).map_err(|e| h5err(call, path, "memory type", e))?;
        transfer(ds, &mem, (start, count, cols), buf.as_mut_ptr(), false, collective)
            .map_err(|e| h5err(call, path, &format!("reading '{name}'"), e))?;
        if matches!(ty, ElemType::Bool) {
            let v = buf.as_slice();
            if let Some(pos) = v.iter().position(|&b| b > 1) {
                op2_bail!(
                    FileFormat,
                    "{call}: bool dataset '{name}' in '{path}' holds the byte {} at value {} (element {}, component {}); a bool is 0 or 1",
                    v[pos],
                    start * cols + pos,
                    start + pos / cols.max(1),
                    pos % cols.max(1)
                );
            }
        }
        Ok(buf)
    }

    /// The memory type a dat of `ty` is read as.
    fn mem_type(ty: ElemType) -> hdf5::Result<Datatype> {
        match ty {
            ElemType::Double => Datatype::from_type::<f64>(),
            ElemType::Float => Datatype::from_type::<f32>(),
            ElemType::Int => Datatype::from_type::<i32>(),
            ElemType::Uint => Datatype::from_type::<u32>(),
            ElemType::Ll => Datatype::from_type::<i64>(),
            ElemType::Ull => Datatype::from_type::<u64>(),
            // through the bool type (the file's enum converts to it) into plain bytes, each
            // checked by read_buf before anything reads it as a bool
            ElemType::Bool => Datatype::from_type::<bool>(),
        }
    }

    /// An integer attribute holding exactly one value (scalar or one-element dataspace, an
    /// integer type), checked before anything is read; anything else is `None`.
    fn read_int_attr(loc: &Location, attr: &str) -> Option<i64> {
        let a = loc.attr(attr).ok()?;
        if !one_value(&a) {
            return None;
        }
        if !matches!(
            a.dtype().and_then(|t| t.to_descriptor()).ok()?,
            TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_)
        ) {
            return None;
        }
        let mut v = [0i64; 1];
        a.read_into_raw(&mut v).ok()?;
        Some(v[0])
    }

    /// Whether an attribute's dataspace holds exactly one value (scalar, or simple with one
    /// element); a null dataspace holds none.
    fn one_value(a: &hdf5::Attribute) -> bool {
        match a.space() {
            Ok(sp) if sp.is_scalar() => true,
            Ok(sp) if sp.is_simple() => sp.shape().iter().try_fold(1usize, |n, &d| n.checked_mul(d)) == Some(1),
            _ => false,
        }
    }

    /// A fixed- or variable-length string attribute, at most `MAX_TYPE_ATTR` bytes. Its
    /// dataspace (one value), class and length are checked before anything is read, so an
    /// attribute of many strings or a long one is `FileFormat`, never a read past a buffer.
    /// `None`: a variable-length string, which is not read (see below).
    fn read_type_attr(loc: &Location, name: &str, path: &str, call: &str) -> Result<Option<String>> {
        let Ok(a) = loc.attr("type") else {
            op2_bail!(FileFormat, "{call}: constant '{name}' in '{path}' has no 'type' attribute (OP2 requires it)");
        };
        if !one_value(&a) {
            let shape = dims_of(a.space(), &format!("the 'type' attribute of constant '{name}'"), path, call)?;
            op2_bail!(
                FileFormat,
                "{call}: constant '{name}' in '{path}': 'type' attribute has shape {shape:?}; one string expected"
            );
        }
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
                if dt.size() != len {
                    op2_bail!(
                        FileFormat,
                        "{call}: constant '{name}' in '{path}': 'type' attribute's size disagrees with its type"
                    );
                }
                let mut buf = vec![0u8; len];
                // SAFETY: buf holds exactly one value of the attribute's own (fixed string) type.
                let rc =
                    hdf5::sync::sync(|| unsafe { hdf5_sys::h5a::H5Aread(a.id(), dt.id(), buf.as_mut_ptr().cast()) });
                if rc < 0 {
                    op2_bail!(FileFormat, "{call}: constant '{name}' in '{path}': cannot read its 'type' attribute");
                }
                let end = buf.iter().position(|&b| b == 0).unwrap_or(len);
                String::from_utf8_lossy(&buf[..end]).trim().to_string()
            }
            // A variable-length string (h5py's default) lives in a global heap collection that
            // libhdf5 (1.10.8, Debian 12) copies without checking its object sizes against the
            // collection or the string's length (a crafted file overflows the heap inside
            // H5HG_read: found by tests/robust_inputs_fuzz.rs). op2 does not dereference it:
            // such a constant's type is its dataset's datatype alone (which must convert to
            // the call's type without loss), as for every dat and map.
            TypeDescriptor::VarLenAscii | TypeDescriptor::VarLenUnicode => return Ok(None),
            other => op2_bail!(
                FileFormat,
                "{call}: constant '{name}' in '{path}': 'type' attribute is {}, not a string",
                describe(&other)
            ),
        };
        Ok(Some(s))
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
    /// which must carry OP2's `dim` and `type` attributes. Under MPI every process reads it
    /// (independently, after a collective open) and all agree on the outcome.
    pub fn get_const(
        comm: &Comm,
        name: &str,
        dim: usize,
        ty: ElemType,
        out: &mut [u8],
        path: &str,
        call: &str,
    ) -> Result<()> {
        let (f, file_len) = open_read(path, call, comm)?;
        let r = (|| -> Result<()> {
            let ds = dataset(&f, name, path, call)?;
            let Some(adim) = read_int_attr(&ds, "dim") else {
                op2_bail!(
                    FileFormat,
                    "{call}: constant '{name}' in '{path}' has no integer 'dim' attribute (OP2 requires it)"
                );
            };
            let tname = read_type_attr(&ds, name, path, call)?;
            if adim != dim as i64 {
                op2_bail!(
                    FileFormat,
                    "{call}: constant '{name}' in '{path}' has dim {adim}; the call expects dim {dim}"
                );
            }
            let dims = dims_of(ds.space(), &format!("constant '{name}'"), path, call)?;
            let n = count_of(&dims, &format!("constant '{name}'"), path, call)?;
            if n != dim {
                op2_bail!(
                    FileFormat,
                    "{call}: constant '{name}' in '{path}' holds {n} values (shape {dims:?}) but its dim attribute says {dim}"
                );
            }
            if let Some(tname) = tname.filter(|t| parse_file_type(t) != Some(ty)) {
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
            check_storage(&ds, dim, file_len, name, path, call)?;
            let buf = read_buf(&ds, ty, (0, dim, 1), false, (name, path, call))?;
            out.copy_from_slice(buf.as_slice());
            Ok(())
        })();
        drop(f);
        comm.agree(r)
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

    /// Creates (or replaces) dataset `name` of `shape` and type `ty` (collective under MPI).
    fn create_dataset(f: &File, name: &str, ty: ElemType, shape: &[usize]) -> hdf5::Result<Dataset> {
        if link_exists(f, name) {
            f.unlink(name)?;
        }
        fn go<T: H5Type>(f: &File, name: &str, shape: &[usize]) -> hdf5::Result<Dataset> {
            f.new_dataset::<T>().shape(shape.to_vec()).create(name)
        }
        match ty {
            ElemType::Double => go::<f64>(f, name, shape),
            ElemType::Float => go::<f32>(f, name, shape),
            ElemType::Int => go::<i32>(f, name, shape),
            ElemType::Uint => go::<u32>(f, name, shape),
            ElemType::Ll => go::<i64>(f, name, shape),
            ElemType::Ull => go::<u64>(f, name, shape),
            ElemType::Bool => go::<bool>(f, name, shape),
        }
    }

    /// Writes native-order `bytes` (whole rows of the dataset's own type) at rows
    /// `[start, start + count)`; collective under the MPI-IO driver.
    fn write_rows(ds: &Dataset, start: usize, count: usize, bytes: &[u8], collective: bool) -> hdf5::Result<()> {
        let dt = ds.dtype()?;
        let cols = (bytes.len() / dt.size()).checked_div(count).unwrap_or(0);
        debug_assert_eq!(count * cols * dt.size(), bytes.len());
        transfer(ds, &dt, (start, count, cols), bytes.as_ptr() as *mut u8, true, collective)
    }

    /// `op_write_const_hdf5`: a 1-D `[dim]` dataset with attributes `dim` and `type`, in a file
    /// that is created if missing (an existing dataset of that name is replaced). Under MPI
    /// process 0 writes it (every process passes the same value) and all agree on the outcome.
    pub fn write_const(
        comm: &Comm,
        name: &str,
        dim: usize,
        ty: ElemType,
        data: &[u8],
        path: &str,
        call: &str,
    ) -> Result<()> {
        if comm.distributed() && comm.rank() != 0 {
            return comm.agree(Ok(()));
        }
        let one = Comm::default();
        let r = open_write(path, false, call, &one).and_then(|f| {
            // A constant replaces a constant of its name, never a set, map or dat.
            if link_exists(&f, name) {
                if let Ok(ds) = f.dataset(name) {
                    let names = ds.attr_names().unwrap_or_default();
                    let constant = names.iter().any(|a| a == "dim") && !names.iter().any(|a| a == "size");
                    if !constant {
                        op2_bail!(
                            FileFormat,
                            "{call}: constant '{name}' and the dataset '{name}' already in '{path}' ({}) share a name; the file was left as it was",
                            existing_kind(&ds)
                        );
                    }
                } else {
                    op2_bail!(
                        FileFormat,
                        "{call}: constant '{name}' and the group '{name}' already in '{path}' share a name; the file was left as it was"
                    );
                }
            }
            let w = || -> hdf5::Result<()> {
                let ds = create_dataset(&f, name, ty, &[dim])?;
                write_rows(&ds, 0, dim, data, false)?;
                write_int_attr(&ds, "dim", dim as i32)?;
                write_str_attr(&ds, "type", file_type_name(ty))?;
                f.flush()
            };
            w().map_err(|e| op2_err!(Io, "{call}: cannot write constant '{name}' to '{path}': {e}"))
        });
        comm.agree(r)
    }

    /// One dat as OP2 writes it, as dataset `dataset` (groups on its path created): `[n][dim]`
    /// (n the global size), attributes size (bytes per element), dim, type; `rows` is this
    /// process's declared block (all of it on one process). An existing dataset there is
    /// replaced.
    fn write_dat(f: &File, ctx: &Context, d: DatId, rows: &[u8], dataset: &str) -> hdf5::Result<()> {
        let dat = &ctx.dats[d.0 as usize];
        let (n, start, count) = block(ctx, dat.set);
        let ds = create_dataset(f, dataset, dat.ty, &[n, dat.dim])?;
        write_rows(&ds, start, count, rows, mpio(&ctx.comm))?;
        write_int_attr(&ds, "size", dat.elem_bytes() as i32)?;
        write_int_attr(&ds, "dim", dat.dim as i32)?;
        write_str_attr(&ds, "type", file_type_name(dat.ty))
    }

    /// Distributed writes need the MPI-IO driver (a serial HDF5 cannot share a file between
    /// processes): a named error on every process otherwise.
    fn need_mpio(comm: &Comm, path: &str, call: &str) -> Result<()> {
        if comm.distributed() && !mpio(comm) {
            op2_bail!(
                BackendUnavailable,
                "{call} '{path}': writing HDF5 from {} MPI processes needs a parallel HDF5 (op2 was built against a serial one; install libhdf5-openmpi-dev and rebuild)",
                comm.size()
            );
        }
        Ok(())
    }

    /// A dat's rows of this process's declared block, original order (collective under MPI;
    /// the whole dat in storage order on one process, as ever).
    fn dat_rows<'a>(ctx: &'a Context, d: DatId, call: &str) -> Result<std::borrow::Cow<'a, [u8]>> {
        if ctx.comm.distributed() {
            return crate::mpi::dist::dat_block(ctx, d).map(std::borrow::Cow::Owned);
        }
        ctx.all_declared_rows(Rows::Dat(d), call)
    }

    /// `op_fetch_data_hdf5_file`: writes one dat into `path` (created if missing). An existing
    /// dataset of that name must have the dat's shape and type; it is overwritten in place.
    /// Under MPI every process writes its declared block in original order (rows moved there by
    /// one all-to-all from their owners), collectively.
    pub fn fetch_dat_to_file(ctx: &mut Context, d: DatId, path: &str, call: &str) -> Result<()> {
        let r = fetch_dat_to_file_inner(ctx, d, path, call)?;
        // Remembered per (file, dataset): another dat of the same name fetched into this file
        // later in the session is a collision, not an overwrite.
        if let Some(key) = r {
            ctx.hdf5_fetched.insert(key, d);
        }
        Ok(())
    }

    /// `op_fetch_data_hdf5_file_path`: writes one dat into `path` (created if missing) as the
    /// dataset `dataset` (a `/`-separated path; missing groups on it are created), in OP2's
    /// layout. A dataset already there is replaced, whatever its shape or type; a group there, or
    /// a component of the path that is a dataset or a soft or external link, is `FileFormat` and
    /// the file is left as it was. Under MPI as `fetch_dat_to_file` (collective, each process
    /// writes its declared block).
    pub fn fetch_dat_to_path(ctx: &mut Context, d: DatId, path: &str, dataset: &str, call: &str) -> Result<()> {
        let key = link_key(dataset);
        let comm = &ctx.comm;
        need_mpio(comm, path, call)?;
        let rows = dat_rows(ctx, d, call)?;
        let f = open_write(path, false, call, comm)?;
        let checked = (|| -> Result<()> {
            let parts: Vec<&str> = key.split('/').collect();
            for i in 1..=parts.len() {
                let prefix = parts[..i].join("/");
                if !f.link_exists(&prefix) {
                    break; // from here on the groups are created
                }
                if let Some(kind) = link_kind(&f, &prefix) {
                    op2_bail!(
                        FileFormat,
                        "{call}: '{prefix}' in '{path}' is a {kind} link; op2 writes '{key}' only through groups stored in the file itself (the file was left as it was)"
                    );
                }
                let last = i == parts.len();
                if !last && f.group(&prefix).is_err() {
                    op2_bail!(
                        FileFormat,
                        "{call}: '{prefix}' in '{path}' is not a group, so '{key}' cannot be made inside it (the file was left as it was)"
                    );
                }
                if last && f.dataset(&prefix).is_err() {
                    op2_bail!(
                        FileFormat,
                        "{call}: '{key}' in '{path}' is not a dataset (a group or another object); op2 replaces only a dataset there (the file was left as it was)"
                    );
                }
            }
            Ok(())
        })();
        comm.agree(checked)?;
        let r = write_dat(&f, ctx, d, &rows, &key).and_then(|_| f.flush());
        drop(f);
        drop(rows);
        let name = &ctx.dats[d.0 as usize].name;
        comm.agree(r.map_err(|e| op2_err!(Io, "{call}: cannot write dat '{name}' to '{key}' in '{path}': {e}")))?;
        // A later op_fetch_data_hdf5_file of another dat named as this path is a collision.
        if let Ok(p) = std::fs::canonicalize(path) {
            ctx.hdf5_fetched.insert((p, key), d);
        }
        Ok(())
    }

    fn fetch_dat_to_file_inner(
        ctx: &Context,
        d: DatId,
        path: &str,
        call: &str,
    ) -> Result<Option<(std::path::PathBuf, String)>> {
        let comm = &ctx.comm;
        need_mpio(comm, path, call)?;
        let rows = dat_rows(ctx, d, call)?;
        let dat = &ctx.dats[d.0 as usize];
        let (n, start, count) = block(ctx, dat.set);
        let f = open_write(path, false, call, comm)?;
        let name = dat.name.as_str();
        let key = std::fs::canonicalize(path).ok().map(|p| (p, link_key(name)));
        let existing = (|| -> Result<Option<Dataset>> {
            if !link_exists(&f, name) {
                return Ok(None);
            }
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
            // Same shape: another dat of this name fetched here this session is a collision.
            if let Some(other) =
                key.as_ref().and_then(|k| ctx.hdf5_fetched.get(k)).filter(|&&o| o != d && !ctx.dats[o.0 as usize].freed)
            {
                let ov = &ctx.dats[other.0 as usize];
                op2_bail!(
                    FileFormat,
                    "{call}: dat '{name}' (on set '{}') and dat '{}' (on set '{}', fetched into '{path}' before) would both be the dataset '{name}'; the file was left as it was",
                    ctx.sets[dat.set.0 as usize].name,
                    ov.name,
                    ctx.sets[ov.set.0 as usize].name
                );
            }
            // Same shape, but another kind of object (OP2's attributes say which): a map or
            // constant of the dat's name is not overwritten.
            let size = read_int_attr(&ds, "size");
            let names = ds.attr_names().unwrap_or_default();
            let constant = size.is_none() && names.iter().any(|a| a == "dim");
            if constant || size.is_some_and(|s| s != dat.elem_bytes() as i64) {
                op2_bail!(
                    FileFormat,
                    "{call}: dat '{name}' and the dataset '{name}' in '{path}' ({}{}) share a name; the file was left as it was",
                    existing_kind(&ds),
                    match size {
                        Some(s) => format!(", attribute size {s}, not the dat's {} bytes per element", dat.elem_bytes()),
                        None => String::new(),
                    }
                );
            }
            Ok(Some(ds))
        })();
        let existing = comm.agree(existing)?;
        let r = match existing {
            Some(ds) => write_rows(&ds, start, count, &rows, mpio(comm)).and_then(|_| f.flush()),
            None => write_dat(&f, ctx, d, &rows, name).and_then(|_| f.flush()),
        };
        drop(f);
        comm.agree(r.map_err(|e| op2_err!(Io, "{call}: cannot write '{name}' to '{path}': {e}")))?;
        Ok(key)
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

    /// `op_dump_to_hdf5`: a new file with every set, map and dat (OP2's layout). Under MPI the
    /// file is the same as one process's: global set sizes, maps and dats whole in original
    /// order (global indices), each process writing its declared block collectively.
    pub fn dump(ctx: &Context, path: &str, call: &str) -> Result<()> {
        let comm = &ctx.comm;
        need_mpio(comm, path, call)?;
        // Every object is one dataset named as the object: two of one name (or one inside the
        // other's groups) would leave one of them. Found before the file is touched.
        let mut objects: Vec<(&str, &str)> = Vec::new();
        objects.extend(ctx.sets.iter().map(|s| ("set", s.name.as_str())));
        objects.extend(ctx.maps.iter().map(|m| ("map", m.name.as_str())));
        objects.extend(ctx.dats.iter().filter(|d| !d.freed).map(|d| ("dat", d.name.as_str())));
        for (j, &(kind, name)) in objects.iter().enumerate() {
            if let Some(&(k0, n0)) = objects[..j].iter().find(|&&(_, n0)| links_collide(n0, name)) {
                op2_bail!(
                    FileFormat,
                    "{call} '{path}': {k0} '{n0}' and {kind} '{name}' would both be the dataset '{}' (names in one HDF5 file must differ); nothing was written",
                    link_key(n0)
                );
            }
        }
        let coll = mpio(comm);
        let f = open_write(path, true, call, comm)?;
        let w = || -> Result<()> {
            let io = |e: hdf5::Error| op2_err!(Io, "{call}: cannot write '{path}': {e}");
            for (s, set) in ctx.sets.iter().enumerate() {
                let (n, _, _) = block(ctx, SetId(s as u32));
                let size = (n as i32).to_ne_bytes();
                let ds = create_dataset(&f, &set.name, ElemType::Int, &[1]).map_err(io)?;
                let mine = if comm.rank() == 0 { 1 } else { 0 };
                write_rows(&ds, 0, mine, &size[..4 * mine], coll).map_err(io)?;
            }
            for (m, map) in ctx.maps.iter().enumerate() {
                let (n, start, count) = block(ctx, map.from);
                let block;
                let bytes = if comm.distributed() {
                    block = crate::mpi::dist::map_block(ctx, MapId(m as u32))?;
                    // SAFETY: i32 values viewed as their bytes.
                    std::borrow::Cow::Borrowed(unsafe {
                        std::slice::from_raw_parts(block.as_ptr() as *const u8, block.len() * 4)
                    })
                } else {
                    ctx.all_declared_rows(Rows::Map(MapId(m as u32)), call)?
                };
                let ds = create_dataset(&f, &map.name, ElemType::Int, &[n, map.dim]).map_err(io)?;
                write_rows(&ds, start, count, &bytes, coll).map_err(io)?;
                write_int_attr(&ds, "size", n as i32).map_err(io)?;
                write_int_attr(&ds, "dim", map.dim as i32).map_err(io)?;
                write_str_attr(&ds, "type", "int").map_err(io)?;
            }
            for d in 0..ctx.dats.len() {
                if ctx.dats[d].freed {
                    continue;
                }
                let rows = dat_rows(ctx, DatId(d as u32), call)?;
                write_dat(&f, ctx, DatId(d as u32), &rows, &ctx.dats[d].name).map_err(io)?;
            }
            f.flush().map_err(io)
        };
        let r = w();
        drop(f);
        comm.agree(r).map_err(|mut e| {
            // The file was truncated and is incomplete: it goes, so no half-dump is taken for
            // a whole one.
            use crate::core::file::{discard_written, Discarded};
            let gone = comm.rank() != 0
                || matches!(discard_written(path, None), Ok(Discarded::Removed | Discarded::RemovedTarget(_)));
            if gone {
                e.message.push_str(&format!(" (the incomplete '{path}' was removed)"));
            }
            e
        })
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
        get_const(&c.comm, "qinf", 4, ElemType::Double, &mut out, p, "t").unwrap();
        assert_eq!(out[24..], 4.0f64.to_ne_bytes());
        let mut g = [0u8; 8];
        get_const(&c.comm, "gam", 1, ElemType::Double, &mut g, p, "t").unwrap();
        assert_eq!(f64::from_ne_bytes(g), 1.4);
        // the OP2 issue #31 regression: an over-long type string is an error, not an overflow
        let e = get_const(&c.comm, "longtype", 1, ElemType::Double, &mut g, p, "t").unwrap_err();
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
        write_const(&c.comm, "gam", 1, ElemType::Double, &1.4f64.to_ne_bytes(), p, "t").unwrap();
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
