//! The distributed layer, seen by the loop driver: halo exchanges and global reductions. This
//! build runs as one process (no MPI library is linked), so every set is all core, exchanges
//! move nothing and reductions are already global; the driver calls these hooks in the order
//! of `mpi-halos.txt` so an MPI implementation plugs in here without reshaping it.

use crate::core::DatId;

/// The communicator seen by the driver.
#[derive(Debug, Default)]
pub struct Comm {
    /// Halo exchanges started (counted even when there is nothing to send: tests check that
    /// exchanges happen only for dirty halos that a loop reads).
    pub exchanges: u64,
}

/// An exchange in flight.
#[must_use]
pub struct Exchange {
    pending: Vec<DatId>,
}

impl Comm {
    pub fn rank(&self) -> i32 {
        0
    }

    pub fn size(&self) -> i32 {
        1
    }

    /// Starts exchanging the halos of `dats` (those the loop reads indirectly and whose halos
    /// are out of date).
    pub fn halo_exchange_begin(&mut self, dats: Vec<DatId>) -> Exchange {
        if !dats.is_empty() {
            self.exchanges += 1;
        }
        Exchange { pending: dats }
    }

    /// Waits for an exchange; returns the dats whose halos are now current.
    pub fn halo_exchange_end(&mut self, ex: Exchange) -> Vec<DatId> {
        ex.pending
    }

    /// Combines reduction partials across ranks (one rank: nothing to combine).
    pub fn reduce_begin(&mut self) {}

    pub fn reduce_end(&mut self) {}
}
