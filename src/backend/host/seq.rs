//! The sequential backend: one call of the generated range wrapper per section; reductions
//! accumulate straight into the scratch buffers (initialised from the caller's values), so the
//! result is exactly what a plain C loop over the elements in order would compute.

use crate::backend::{Backend, LoopCall};
use crate::config::BackendKind;
use crate::error::Result;

pub struct Seq;

impl Backend for Seq {
    fn kind(&self) -> BackendKind {
        BackendKind::Seq
    }

    fn compute(&mut self, call: &mut LoopCall, start: usize, end: usize) -> Result<()> {
        let mut slots = std::mem::take(&mut call.slots);
        // SAFETY: the driver built `slots` for this loop and the range lies in the set.
        let r = unsafe { call.run_range(start, end, &mut slots) };
        call.slots = slots;
        r
    }
}
