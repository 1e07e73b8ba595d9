//! The checking backend: runs every loop exactly as `seq` does, and checks what the access
//! descriptors promise, reporting a broken promise as an op2 error (`OP2_ERR_CHECK`) that names
//! the loop, the argument and the data:
//! - an indirect OP_WRITE / OP_RW argument promises that no two elements reach the same target
//!   (other backends run such loops uncoloured, so a broken promise is a race there);
//! - an OP_WRITE matrix argument (`op_arg_mat`) promises that no two elements store the same
//!   matrix entry;
//! - an OP_READ dat must not be modified by the kernel. (OP_READ globals reach kernels as
//!   private copies in generated code, so the caller's value cannot change.)
//! - an indirect OP_INC argument must not be read (its value is undefined in OP2's model):
//!   the driver refuses a kernel whose source reads one (`crate::exec::validate::inc_read`).
//!
//! Every check works from one run and copies of the data (before/after snapshots), so the
//! kernel runs once per element, as on every backend, and its side effects (`printf`) happen
//! once. A kernel that reads an OP_WRITE-only argument needs a second run to be seen (from
//! poisoned inputs): `OP2_VALIDATE=1` adds it, on `check` as anywhere (`crate::exec::validate`).
//!
//! Use it to debug a program before running it on `threads` or a GPU; it costs a copy of the
//! read data per loop.

use crate::arg::{Access, ArgDesc, DatAccess};
use crate::backend::{Backend, LoopCall};
use crate::config::BackendKind;
use crate::error::Result;
use crate::op2_bail;

pub struct Check;

/// A read-only argument's bytes before the kernel ran.
struct Snapshot {
    arg: usize,
    ptr: *const u8,
    before: Vec<u8>,
}

impl Check {
    /// Indirect WRITE/RW: no two elements of `[start, end)` may reach the same target of a dat,
    /// through any of the loop's WRITE/RW arguments on that dat.
    fn check_exclusive_writes(call: &LoopCall, start: usize, end: usize) -> Result<()> {
        let exclusive = |arg: usize| matches!(call.descs[arg], ArgDesc::Dat { acc: Access::Write | Access::Rw, .. });
        let mut checked = Vec::new();
        for a in call.indirect.iter().filter(|a| exclusive(a.arg)) {
            if checked.contains(&a.dat) {
                continue;
            }
            checked.push(a.dat);
            let what = format!("op_par_loop '{}': check backend's target owners", call.name);
            let mut owner = crate::core::alloc::filled(a.to_size, u32::MAX, &what)?;
            for b in call.indirect.iter().filter(|b| b.dat == a.dat && exclusive(b.arg)) {
                for e in start..end {
                    let row = &b.map_values[e * b.map_dim..(e + 1) * b.map_dim];
                    let cols: &[i32] = match b.idx {
                        Some(i) => &row[i..i + 1],
                        None => row,
                    };
                    for &t in cols {
                        let o = &mut owner[t as usize];
                        if *o != u32::MAX && *o != e as u32 {
                            let ArgDesc::Dat { acc, .. } = call.descs[b.arg] else { continue };
                            op2_bail!(
                                Check,
                                "op_par_loop '{}', arg {} (dat '{}'): {} through a map promises that no two elements reach the same target, but elements {} and {e} both reach element {t} (check backend)",
                                call.name,
                                b.arg,
                                call.dat_names[b.arg],
                                acc.c_name(),
                                *o
                            );
                        }
                        *o = e as u32;
                    }
                }
            }
        }
        Ok(())
    }

    /// OP_WRITE matrix arguments: no two elements of `[start, end)` may store the same entry.
    fn check_mat_writes(call: &LoopCall, start: usize, end: usize) -> Result<()> {
        for (i, d) in call.descs.iter().enumerate() {
            let (ArgDesc::Mat { ty, rows, cols, acc: Access::Write }, crate::arg::BoundArg::Mat { values_bytes, .. }) =
                (*d, call.bound[i])
            else {
                continue;
            };
            let n = rows * cols;
            // SAFETY: the driver put the argument's slot table (set size x n entries) in its slot.
            let table = unsafe { std::slice::from_raw_parts(call.slots[2 * i + 1] as *const i32, call.set_size * n) };
            let what = format!("op_par_loop '{}': check backend's matrix entry owners", call.name);
            let mut owner = crate::core::alloc::filled(values_bytes / ty.size(), u32::MAX, &what)?;
            for e in start..end {
                for &s in &table[e * n..(e + 1) * n] {
                    let o = &mut owner[s as usize];
                    if *o != u32::MAX && *o != e as u32 {
                        op2_bail!(
                            Check,
                            "op_par_loop '{}', arg {i} (matrix): OP_WRITE promises that no two elements store the same entry, but elements {} and {e} both store stored value {s} (check backend; use OP_INC to add)",
                            call.name,
                            *o
                        );
                    }
                    *o = e as u32;
                }
            }
        }
        Ok(())
    }

    /// Copies of every read-only argument that no other argument of the loop may write.
    fn snapshot_reads(call: &LoopCall) -> Result<Vec<Snapshot>> {
        let written_dats: Vec<*mut std::ffi::c_void> = call
            .descs
            .iter()
            .enumerate()
            .filter(|(_, d)| matches!(d, ArgDesc::Dat { acc, .. } if acc.writes()))
            .map(|(i, _)| call.slots[2 * i])
            .collect();
        let mut snaps = Vec::new();
        for (i, d) in call.descs.iter().enumerate() {
            let ptr = call.slots[2 * i];
            if ptr.is_null() || written_dats.contains(&ptr) {
                continue;
            }
            let bytes = match *d {
                ArgDesc::Dat { acc: Access::Read, ty, dim, how: DatAccess::Direct, .. } => {
                    call.set_size * dim * ty.size()
                }
                ArgDesc::Dat { acc: Access::Read, .. } => match call.indirect.iter().find(|a| a.arg == i) {
                    Some(a) => a.to_size * a.elem_bytes,
                    None => continue,
                },
                _ => continue,
            };
            // SAFETY: the slot points at the argument's whole data (`bytes` long).
            let read = unsafe { std::slice::from_raw_parts(ptr as *const u8, bytes) };
            let before = crate::core::alloc::copy_of(
                read,
                &format!("op_par_loop '{}': check backend's copy of arg {i}", call.name),
            )?;
            snaps.push(Snapshot { arg: i, ptr: ptr as *const u8, before });
        }
        Ok(snaps)
    }
}

impl Backend for Check {
    fn kind(&self) -> BackendKind {
        BackendKind::Check
    }

    fn compute(&mut self, call: &mut LoopCall, start: usize, end: usize) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        Check::check_exclusive_writes(call, start, end)?;
        Check::check_mat_writes(call, start, end)?;
        let snaps = Check::snapshot_reads(call)?;
        let mut slots = std::mem::take(&mut call.slots);
        // SAFETY: the driver built `slots` for this loop and the range lies in the set.
        let r = unsafe { call.run_range(start, end, &mut slots) };
        call.slots = slots;
        r?;
        for s in snaps {
            // SAFETY: same pointer and length as when the snapshot was taken.
            let after = unsafe { std::slice::from_raw_parts(s.ptr, s.before.len()) };
            if after != s.before.as_slice() {
                let what = format!("dat '{}'", call.dat_names[s.arg]);
                let first = after.iter().zip(&s.before).position(|(a, b)| a != b).unwrap_or(0);
                op2_bail!(
                    Check,
                    "op_par_loop '{}', arg {} ({what}): declared OP_READ but the kernel modified it (first changed byte {first}) (check backend)",
                    call.name,
                    s.arg
                );
            }
        }
        Ok(())
    }
}
