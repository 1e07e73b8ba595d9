//! Handles. A kernel, sparsity or matrix handle is not a pointer to our memory: it encodes the
//! object kind, the session serial and the index. A set, map or dat handle points to a record
//! whose first fields are OP2's public prefix of `op_set_core`, `op_map_core` and
//! `op_dat_core` (`include/op_lib_core.h`), kept current by op2, so that OP2 programs can read
//! `set->size` or `dat->name`; op2 itself never reads a record through a caller's pointer: it
//! looks the address up among the records it made (`Records`). Either way a stale handle
//! (after `op_exit`), a handle of the wrong kind or a forged value is an error, never
//! undefined behaviour.

use super::ApiState;
use crate::core::{DatId, KernelId, MapId, SetId};
use crate::error::Result;
use crate::op2_bail;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CString};
use std::fmt::Display;
use std::ptr::{null, null_mut};

/// Opaque type behind `op_set`.
#[allow(non_camel_case_types)]
pub struct op_set_core {
    _private: [u8; 0],
}
/// Opaque type behind `op_map`.
#[allow(non_camel_case_types)]
pub struct op_map_core {
    _private: [u8; 0],
}
/// Opaque type behind `op_dat`.
#[allow(non_camel_case_types)]
pub struct op_dat_core {
    _private: [u8; 0],
}
/// Opaque type behind `op_kernel`.
#[allow(non_camel_case_types)]
pub struct op_kernel_core {
    _private: [u8; 0],
}

/// A set of mesh elements (nodes, edges, cells, ...).
#[allow(non_camel_case_types)]
pub type op_set = *mut op_set_core;
/// A map from each element of one set to `dim` elements of another.
#[allow(non_camel_case_types)]
pub type op_map = *mut op_map_core;
/// Data on a set: `dim` values of one type per element.
#[allow(non_camel_case_types)]
pub type op_dat = *mut op_dat_core;
/// A user kernel (C source) that loops apply to each element.
#[allow(non_camel_case_types)]
pub type op_kernel = *mut op_kernel_core;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Set = 1,
    Map = 2,
    Dat = 3,
    Kernel = 4,
    Sparsity = 5,
    Mat = 6,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Set => "set",
            Kind::Map => "map",
            Kind::Dat => "dat",
            Kind::Kernel => "kernel",
            Kind::Sparsity => "sparsity",
            Kind::Mat => "mat",
        }
    }
}

const KIND_SHIFT: u32 = 56;
const SERIAL_SHIFT: u32 = 32;

/// OP2's `op_set_core` as op2 fills it (`include/op_lib_core.h` declares the same fields in
/// the same order): the public prefix, then op2's own.
#[repr(C)]
pub(crate) struct SetRecord {
    index: c_int,
    size: c_int,
    name: *const c_char,
    core_size: c_int,
    exec_size: c_int,
    nonexec_size: c_int,
    stride: c_int,
    name_text: CString,
}

/// OP2's `op_map_core` as op2 fills it: `map`, `map_gbl` and `map_d` stay NULL (op2 copies
/// maps at declaration and keeps them in its own layout; `op_fetch`-style calls read them).
#[repr(C)]
pub(crate) struct MapRecord {
    index: c_int,
    from: *mut SetRecord,
    to: *mut SetRecord,
    dim: c_int,
    map: *mut c_int,
    map_gbl: *mut i64,
    map_d: *mut c_int,
    name: *const c_char,
    user_managed: c_int,
    force_part: bool,
    name_text: CString,
}

/// OP2's `op_dat_core` as op2 fills it: `data` and the device and MPI buffers stay NULL (op2
/// copies a dat's values at declaration; `op_fetch_data` reads them).
#[repr(C)]
pub(crate) struct DatRecord {
    index: c_int,
    set: *mut SetRecord,
    dim: c_int,
    size: c_int,
    data: *mut c_char,
    data_d: *mut c_char,
    type_name: *const c_char,
    name: *const c_char,
    buffer_d: *mut c_char,
    buffer_d_r: *mut c_char,
    dirtybit: c_int,
    dirty_hd: c_int,
    user_managed: c_int,
    mpi_buffer: *mut c_void,
    name_text: CString,
    type_text: CString,
}

/// Every set, map and dat record made in this process, by address, with what its handle
/// means; the records of earlier sessions stay (their handles are stale, not unknown). The
/// current session's, by index, are kept current by `refresh`.
#[allow(clippy::vec_box)] // boxed: a record's address is its handle and must not move
pub(crate) struct Records {
    known: BTreeMap<usize, (Kind, u32, u32)>,
    sets: Vec<Box<SetRecord>>,
    maps: Vec<Box<MapRecord>>,
    dats: Vec<Box<DatRecord>>,
    /// Records of ended sessions, kept so that their addresses are never reused.
    old: Vec<Old>,
    /// Whether the session was partitioned when the records were last brought up to date.
    partitioned: bool,
}

#[allow(dead_code)] // held only to keep the records' addresses allocated
enum Old {
    Set(Box<SetRecord>),
    Map(Box<MapRecord>),
    Dat(Box<DatRecord>),
}

// SAFETY: the records' raw pointers point into other records owned by the same `Records` (or
// are NULL / point into the records' own strings); they are only written under the API lock.
unsafe impl Send for Records {}

fn text(s: &str) -> CString {
    CString::new(s.replace('\0', "?")).unwrap_or_default()
}

fn c(v: usize) -> c_int {
    c_int::try_from(v).unwrap_or(c_int::MAX)
}

impl Records {
    pub(crate) const fn new() -> Records {
        Records {
            known: BTreeMap::new(),
            sets: Vec::new(),
            maps: Vec::new(),
            dats: Vec::new(),
            old: Vec::new(),
            partitioned: false,
        }
    }

    /// A new session: the records so far become stale.
    pub(crate) fn end_session(&mut self) {
        let sets = std::mem::take(&mut self.sets).into_iter().map(Old::Set);
        let maps = std::mem::take(&mut self.maps).into_iter().map(Old::Map);
        let dats = std::mem::take(&mut self.dats).into_iter().map(Old::Dat);
        self.old.extend(sets.chain(maps).chain(dats));
        self.partitioned = false;
    }

    fn set_ptr(&mut self, id: usize) -> *mut SetRecord {
        self.sets.get_mut(id).map_or(null_mut(), |r| &mut **r as *mut SetRecord)
    }

    /// Brings every record of the session up to date with `ctx` (sizes change at
    /// `op_partition`), making the records of objects declared since.
    pub(crate) fn refresh(&mut self, ctx: &crate::context::Context, serial: u32) {
        self.partitioned = ctx.comm.partitioned;
        for (i, s) in ctx.sets.iter().enumerate() {
            if i == self.sets.len() {
                let name_text = text(&s.name);
                let mut r = Box::new(SetRecord {
                    index: c(i),
                    size: 0,
                    name: null(),
                    core_size: 0,
                    exec_size: 0,
                    nonexec_size: 0,
                    stride: 0,
                    name_text,
                });
                r.name = r.name_text.as_ptr();
                self.known.insert(&*r as *const SetRecord as usize, (Kind::Set, serial, i as u32));
                self.sets.push(r);
            }
            let r = &mut self.sets[i];
            r.size = c(s.size);
            r.core_size = c(s.core_end.min(s.size));
            r.exec_size = c(s.exec_end.saturating_sub(s.size));
            r.nonexec_size = c(s.total.saturating_sub(s.exec_end.max(s.size)));
            r.stride = c(s.total);
        }
        for (i, m) in ctx.maps.iter().enumerate() {
            let from = self.set_ptr(m.from.0 as usize);
            let to = self.set_ptr(m.to.0 as usize);
            if i == self.maps.len() {
                let name_text = text(&m.name);
                let mut r = Box::new(MapRecord {
                    index: c(i),
                    from,
                    to,
                    dim: c(m.dim),
                    map: null_mut(),
                    map_gbl: null_mut(),
                    map_d: null_mut(),
                    name: null(),
                    user_managed: 0,
                    force_part: false,
                    name_text,
                });
                r.name = r.name_text.as_ptr();
                self.known.insert(&*r as *const MapRecord as usize, (Kind::Map, serial, i as u32));
                self.maps.push(r);
            }
        }
        for (i, d) in ctx.dats.iter().enumerate() {
            let set = self.set_ptr(d.set.0 as usize);
            if i == self.dats.len() {
                let name_text = text(&d.name);
                let type_text = text(d.ty.api_name());
                let mut r = Box::new(DatRecord {
                    index: c(i),
                    set,
                    dim: c(d.dim),
                    size: c(d.elem_bytes()),
                    data: null_mut(),
                    data_d: null_mut(),
                    type_name: null(),
                    name: null(),
                    buffer_d: null_mut(),
                    buffer_d_r: null_mut(),
                    dirtybit: 0,
                    dirty_hd: 0,
                    user_managed: 0,
                    mpi_buffer: null_mut(),
                    name_text,
                    type_text,
                });
                r.name = r.name_text.as_ptr();
                r.type_name = r.type_text.as_ptr();
                self.known.insert(&*r as *const DatRecord as usize, (Kind::Dat, serial, i as u32));
                self.dats.push(r);
            }
            self.dats[i].dirtybit = c_int::from(d.halo_dirty);
        }
    }

    fn handle<T>(&self, kind: Kind, index: u32) -> *mut T {
        let i = index as usize;
        let p = match kind {
            Kind::Set => self.sets.get(i).map(|r| &**r as *const SetRecord as usize),
            Kind::Map => self.maps.get(i).map(|r| &**r as *const MapRecord as usize),
            Kind::Dat => self.dats.get(i).map(|r| &**r as *const DatRecord as usize),
            _ => None,
        };
        p.unwrap_or(0) as *mut T
    }
}

impl ApiState {
    /// The handle of a set, map or dat of the session (its record, made or brought up to date
    /// now).
    pub(crate) fn publish<T>(&mut self, kind: Kind, index: u32) -> *mut T {
        if let Some(ctx) = self.ctx.as_ref() {
            self.records.refresh(ctx, self.serial);
        }
        self.records.handle(kind, index)
    }

    /// Brings the records of the session's sets, maps and dats up to date after a call that
    /// partitioned the mesh (`op_partition`, or a first loop's implicit one): their sizes
    /// changed. Nothing to do otherwise.
    pub(crate) fn records_follow(&mut self) {
        if let Some(ctx) = self.ctx.as_ref() {
            if ctx.comm.partitioned != self.records.partitioned {
                self.records.refresh(ctx, self.serial);
            }
        }
    }
}

/// The handle of a kernel, sparsity or matrix (set, map and dat handles are records:
/// `ApiState::publish`).
pub(crate) fn encode<T>(kind: Kind, serial: u32, index: u32) -> *mut T {
    debug_assert!(!matches!(kind, Kind::Set | Kind::Map | Kind::Dat), "set/map/dat handles are records: publish");
    let v = ((kind as u64) << KIND_SHIFT) | (((serial as u64) & 0xff_ffff) << SERIAL_SHIFT) | (index as u64 + 1);
    v as usize as *mut T
}

pub(crate) fn decode<T>(
    st: &ApiState,
    p: *mut T,
    kind: Kind,
    count: usize,
    call: &dyn Display,
    what: &dyn Display,
) -> Result<u32> {
    if p.is_null() {
        op2_bail!(NullArgument, "{call}: {what} is NULL");
    }
    let v = p as usize as u64;
    let (k, serial, index) = match st.records.known.get(&(v as usize)) {
        Some(&(k, serial, index)) => (k as u64, serial & 0xff_ffff, index as usize + 1),
        // A set, map or dat handle is one of op2's records; anything else is not one.
        None if matches!(kind, Kind::Set | Kind::Map | Kind::Dat) => (0, 0, 0),
        None => (v >> KIND_SHIFT, ((v >> SERIAL_SHIFT) & 0xff_ffff) as u32, (v & 0xffff_ffff) as usize),
    };
    if k != kind as u64 {
        op2_bail!(InvalidHandle, "{call}: {what} is not an op_{} handle", kind.name());
    }
    if serial != st.serial & 0xff_ffff || index == 0 || index > count {
        op2_bail!(
            InvalidHandle,
            "{call}: {what} is an op_{} handle from another op2 session (declared before op_exit?)",
            kind.name()
        );
    }
    Ok(index as u32 - 1)
}

impl ApiState {
    pub(crate) fn set(&mut self, p: op_set, call: &dyn Display, what: &dyn Display) -> Result<SetId> {
        let n = self.ctx_named(call)?.sets.len();
        decode(self, p, Kind::Set, n, call, what).map(SetId)
    }

    pub(crate) fn map(&mut self, p: op_map, call: &dyn Display, what: &dyn Display) -> Result<MapId> {
        let n = self.ctx_named(call)?.maps.len();
        decode(self, p, Kind::Map, n, call, what).map(MapId)
    }

    pub(crate) fn dat(&mut self, p: op_dat, call: &dyn Display, what: &dyn Display) -> Result<DatId> {
        let n = self.ctx_named(call)?.dats.len();
        let d = decode(self, p, Kind::Dat, n, call, what).map(DatId)?;
        // Freed temporaries keep their slot (other dats keep their ids); the handle is stale.
        if let Some(dat) = self.ctx.as_ref().map(|c| &c.dats[d.0 as usize]).filter(|d| d.freed) {
            op2_bail!(InvalidHandle, "{call}: {what} is dat '{}', which op_free_dat_temp_char freed", dat.name);
        }
        Ok(d)
    }

    pub(crate) fn kernel(&mut self, p: op_kernel, call: &dyn Display, what: &dyn Display) -> Result<KernelId> {
        let n = self.ctx_named(call)?.kernels.len();
        decode(self, p, Kind::Kernel, n, call, what).map(KernelId)
    }
}
