//! Matrices under MPI: what the matrix operations need from the distributed layer.
//!
//! The cut: each process holds the rows of the row set's elements it owns after `op_partition`
//! (one CSR, local numbering), with columns in the column set's local numbering (owned, then
//! exec halo, then non-exec halo). That is PETSc's MPIAIJ split (diagonal block: owned columns,
//! off-diagonal block: halo columns, `garray`: the halo's global numbers) kept as one CSR,
//! because SpMV then reads `x` straight from the dat, whose halo rows the dat exchange already
//! fills. Assembly needs no communication: every element touching an owned row is owned or in
//! the exec halo, so loops with matrix arguments run the exec halo and add halo-row entries to
//! discard slots (PyOP2's "ignore off-process entries", with the exec halo computed
//! redundantly). The global numbering PETSc needs (rows of rank r after those of ranks < r, in
//! local order) is made on demand by one halo exchange of owned numbers.

use crate::error::Result;
use crate::mpi::layout::SetLayout;
use crate::mpi::Comm;

/// The tag of the exchanges here (distinct from the loops' grouped halo exchange).
#[cfg(feature = "mpi")]
const MAT_TAG: i32 = 7003;

/// Fills the halo rows of `buf` (one row of `eb` bytes per local element of the set with
/// layout `l`) with their owners' values. Collective over the neighbours.
pub fn exchange(comm: &Comm, l: &SetLayout, buf: &mut [u8], eb: usize) -> Result<()> {
    #[cfg(feature = "mpi")]
    if let Some(w) = &comm.world {
        use crate::mpi::transport::World;
        let sends: Vec<(i32, Vec<u8>)> = l
            .exports
            .iter()
            .map(|(q, idx)| {
                let mut v = Vec::with_capacity(idx.len() * eb);
                for &i in idx {
                    v.extend_from_slice(&buf[i as usize * eb..(i as usize + 1) * eb]);
                }
                (*q, v)
            })
            .collect();
        let mut recvs: Vec<(i32, Vec<u8>)> = l.imports.iter().map(|(q, pos)| (*q, vec![0u8; pos.len() * eb])).collect();
        let mut reqs = vec![World::null_request(); sends.len() + recvs.len()];
        let mut k = 0;
        let mut posted = Ok(());
        for (q, b) in recvs.iter_mut() {
            if posted.is_ok() {
                posted = w.irecv(b, *q, MAT_TAG, &mut reqs[k]);
            }
            k += 1;
        }
        for (q, b) in &sends {
            if posted.is_ok() {
                posted = w.isend(b, *q, MAT_TAG, &mut reqs[k]);
            }
            k += 1;
        }
        // Wait for whatever was posted, even after an error (buffers die at return).
        let waited = w.wait_all(&mut reqs);
        posted?;
        waited?;
        for ((_, pos), (_, b)) in l.imports.iter().zip(&recvs) {
            for (j, &p) in pos.iter().enumerate() {
                buf[p as usize * eb..(p as usize + 1) * eb].copy_from_slice(&b[j * eb..(j + 1) * eb]);
            }
        }
        return Ok(());
    }
    let _ = (comm, l, buf, eb);
    Ok(())
}

/// Every process's `u64`, in rank order (one collective).
pub fn gather_u64(comm: &Comm, v: u64) -> Result<Vec<u64>> {
    #[cfg(feature = "mpi")]
    if let Some(w) = &comm.world {
        let all = w.all_gather_same(&v.to_ne_bytes())?;
        return Ok(all.chunks_exact(8).map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8]))).collect());
    }
    let _ = comm;
    Ok(vec![v])
}

/// Sums `v` over the processes in place, each entry added in rank order (the same on every
/// process; one collective).
pub fn sum_f64s(comm: &Comm, v: &mut [f64]) -> Result<()> {
    #[cfg(feature = "mpi")]
    if let Some(w) = &comm.world {
        let mine: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let all = w.all_gather_same(&mine)?;
        v.iter_mut().for_each(|x| *x = 0.0);
        for part in all.chunks_exact(mine.len().max(1)) {
            for (x, c) in v.iter_mut().zip(part.chunks_exact(8)) {
                *x += f64::from_ne_bytes(c.try_into().unwrap_or([0; 8]));
            }
        }
        return Ok(());
    }
    let _ = (comm, v);
    Ok(())
}

/// The partition-order global number of every local element of a set (owned elements of rank
/// r numbered after every owned element of ranks below r, in local order; halo elements get
/// their owner's numbers), and the first number of this process.
pub fn partition_numbers(comm: &Comm, l: &SetLayout) -> Result<(Vec<i64>, i64)> {
    let counts = gather_u64(comm, l.owned as u64)?;
    let me = comm.rank() as usize;
    let first: u64 = counts[..me].iter().sum();
    let mut g = vec![0i64; l.total()];
    for (i, v) in g[..l.owned].iter_mut().enumerate() {
        *v = first as i64 + i as i64;
    }
    // SAFETY: i64 values viewed as bytes; any bit pattern is a valid i64.
    let bytes = unsafe { std::slice::from_raw_parts_mut(g.as_mut_ptr() as *mut u8, g.len() * 8) };
    exchange(comm, l, bytes, 8)?;
    Ok((g, first as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One process: nothing to exchange, sums are the values.
    #[test]
    fn one_process() {
        let comm = Comm::default();
        let l =
            SetLayout { owned: 3, core: 3, gids: crate::mpi::layout::Gids::new(vec![0, 1, 2]), ..Default::default() };
        let (g, first) = partition_numbers(&comm, &l).unwrap();
        assert_eq!((g, first), (vec![0, 1, 2], 0));
        let mut v = [2.5, -1.0];
        sum_f64s(&comm, &mut v).unwrap();
        assert_eq!(v, [2.5, -1.0]);
        assert_eq!(gather_u64(&comm, 7).unwrap(), vec![7]);
    }
}
