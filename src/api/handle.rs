//! Opaque handles. A handle is not a pointer to our memory: it encodes the object kind, the
//! session serial and the index, so a stale handle (after `op_exit`), a handle of the wrong
//! kind or a forged value is an error, never undefined behaviour.

use super::ApiState;
use crate::core::{DatId, KernelId, MapId, SetId};
use crate::error::Result;
use crate::op2_bail;
use std::fmt::Display;

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

pub(crate) fn encode<T>(kind: Kind, serial: u32, index: u32) -> *mut T {
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
    let k = v >> KIND_SHIFT;
    let serial = ((v >> SERIAL_SHIFT) & 0xff_ffff) as u32;
    let index = (v & 0xffff_ffff) as usize;
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
