//! The MPI library itself, through rsmpi's raw bindings (`mpi::ffi`): initialisation, the
//! communicator op2 runs on, collectives on bytes, and non-blocking point-to-point messages whose
//! buffers live in op2's own structures (an exchange spans the driver's compute of the core
//! section, so it cannot sit inside one rsmpi request scope).

use crate::core::alloc;
use crate::error::{ErrorCode, Op2Error, Result};
use crate::op2_bail;
use mpi::ffi;
use std::ffi::c_int;

/// The communicator op2 runs on (a duplicate of the one given, so op2's messages never match
/// the application's).
pub struct World {
    comm: ffi::MPI_Comm,
    rank: i32,
    size: i32,
    /// op2 called MPI_Init (so op_exit calls MPI_Finalize).
    owns_init: bool,
}

/// Receive buffers above this many bytes are allocated fallibly, with the outcome agreed (see
/// `World::status`); smaller ones are not worth a collective.
const BIG: usize = 1 << 20;

fn check(rc: c_int, what: &str) -> Result<()> {
    if rc != 0 {
        op2_bail!(Mpi, "{what} failed with MPI error code {rc}");
    }
    Ok(())
}

/// A message's byte count as MPI takes it (an `int`).
fn message_len(len: usize, what: &str) -> Result<c_int> {
    c_int::try_from(len)
        .map_err(|_| crate::op2_err!(Mpi, "{what}: a message of {len} bytes is larger than MPI's int count allows"))
}

/// Whether MPI is initialised (and not finalised) in this process.
pub fn is_initialized() -> bool {
    let (mut init, mut fin) = (0, 0);
    // SAFETY: MPI_Initialized/MPI_Finalized may be called at any time.
    unsafe {
        ffi::MPI_Initialized(&mut init);
        ffi::MPI_Finalized(&mut fin);
    }
    init != 0 && fin == 0
}

/// What the launcher says the job's size is (OpenMPI, MPICH/PMI, Slurm), if started by one.
pub fn launcher_size() -> Option<(String, i32)> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|k| std::env::var(k).ok().and_then(|v| v.trim().parse::<i32>().ok()).map(|n| (k.to_string(), n)))
}

/// Whether the program itself (the executable, not a library it loads) names an MPI library
/// among its `DT_NEEDED` entries (`libmpi*`: OpenMPI's `libmpi.so`, its Fortran and C++
/// bindings, MPICH's `libmpich.so`, `libmpifort.so`): such a program calls MPI itself, so
/// `op_init` initialises MPI for it even without a launcher. libop2's own dependency on MPI
/// does not count (it is not the executable's).
pub fn program_links_mpi() -> bool {
    program_needed().iter().any(|n| {
        let base = n.rsplit('/').next().unwrap_or(n);
        base.starts_with("libmpi")
    })
}

/// The executable's `DT_NEEDED` names, read from its dynamic section in memory (the first
/// object `dl_iterate_phdr` reports is the main program).
fn program_needed() -> Vec<String> {
    /// `ElfN_Dyn` (the tag is signed, the value an address or an offset, both word-sized).
    #[repr(C)]
    struct Dyn {
        tag: isize,
        val: usize,
    }
    const DT_NULL: isize = 0;
    const DT_NEEDED: isize = 1;
    const DT_STRTAB: isize = 5;
    unsafe extern "C" fn first(info: *mut libc::dl_phdr_info, _size: libc::size_t, out: *mut libc::c_void) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info for a loaded object and our Vec.
        let (info, out) = unsafe { (&*info, &mut *(out as *mut Vec<String>)) };
        if info.dlpi_phdr.is_null() {
            return 1;
        }
        // SAFETY: dlpi_phdr points at dlpi_phnum program headers of the loaded object.
        let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let base = info.dlpi_addr as usize;
        let Some(dynamic) = phdrs.iter().find(|p| p.p_type == libc::PT_DYNAMIC) else {
            return 1; // a static executable: it needs nothing
        };
        let dyns = base.wrapping_add(dynamic.p_vaddr as usize) as *const Dyn;
        let count = dynamic.p_memsz as usize / std::mem::size_of::<Dyn>();
        let (mut strtab, mut needed) = (0usize, Vec::new());
        for i in 0..count {
            // SAFETY: the dynamic section is mapped (PT_DYNAMIC lies in a loaded segment) and
            // holds `count` entries, ended by DT_NULL.
            let d = unsafe { &*dyns.add(i) };
            match d.tag {
                DT_NULL => break,
                DT_NEEDED => needed.push(d.val),
                DT_STRTAB => strtab = d.val,
                _ => {}
            }
        }
        if strtab == 0 {
            return 1;
        }
        // glibc relocates DT_STRTAB in place on most targets; where it does not (read-only
        // dynamic sections) the value is still relative to the load address.
        if strtab < base {
            strtab = strtab.wrapping_add(base);
        }
        for off in needed {
            // SAFETY: DT_NEEDED values are offsets of NUL-terminated names in the mapped
            // string table.
            let name = unsafe { std::ffi::CStr::from_ptr(strtab.wrapping_add(off) as *const std::ffi::c_char) };
            out.push(name.to_string_lossy().into_owned());
        }
        1 // the main program is the first object: stop here
    }
    let mut out: Vec<String> = Vec::new();
    // SAFETY: the callback only reads the loader's structures and writes our Vec.
    unsafe { libc::dl_iterate_phdr(Some(first), &mut out as *mut Vec<String> as *mut libc::c_void) };
    out
}

extern "C" fn finalize_at_exit() {
    if OP2_INITIALISED_MPI.swap(false, std::sync::atomic::Ordering::AcqRel) && is_initialized() {
        // SAFETY: op2 initialised MPI and no op2 session finalised it; the program is exiting.
        unsafe { ffi::MPI_Finalize() };
    }
}

/// op2 initialised MPI in this process and has not finalised it (kept across an `op_init`
/// that failed after initialising MPI, so the next `op_init` owns it and `op_exit` ends it).
static OP2_INITIALISED_MPI: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl World {
    /// op2 on `MPI_COMM_WORLD` (`fortran_comm` None) or on the communicator with that Fortran
    /// handle; initialises MPI first if the program has not.
    pub fn open(fortran_comm: Option<i32>) -> Result<World> {
        let mut owns_init = false;
        if !is_initialized() {
            let mut fin = 0;
            // SAFETY: plain query.
            unsafe { ffi::MPI_Finalized(&mut fin) };
            if fin != 0 {
                op2_bail!(Mpi, "op_init: MPI was already finalised in this process: op2 cannot run MPI again");
            }
            let mut provided = 0;
            // SAFETY: MPI_Init_thread accepts NULL argc/argv; MPI is not initialised yet.
            let rc = unsafe {
                ffi::MPI_Init_thread(
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    ffi::MPI_THREAD_SERIALIZED as c_int,
                    &mut provided,
                )
            };
            check(rc, "MPI_Init_thread")?;
            owns_init = true;
            OP2_INITIALISED_MPI.store(true, std::sync::atomic::Ordering::Release);
        } else if OP2_INITIALISED_MPI.load(std::sync::atomic::Ordering::Acquire) {
            owns_init = true; // an earlier op_init initialised it and failed
        }
        // SAFETY: MPI is initialised; the handles are valid.
        let base = match fortran_comm {
            None => unsafe { ffi::RSMPI_COMM_WORLD },
            Some(h) => unsafe { ffi::MPI_Comm_f2c(h) },
        };
        let mut comm: ffi::MPI_Comm = base;
        // SAFETY: base is a valid communicator; comm receives the duplicate.
        let rc = unsafe { ffi::MPI_Comm_dup(base, &mut comm) };
        if rc != 0 {
            if owns_init {
                OP2_INITIALISED_MPI.store(false, std::sync::atomic::Ordering::Release);
                // SAFETY: we initialised it.
                unsafe { ffi::MPI_Finalize() };
            }
            op2_bail!(Mpi, "op_mpi_init: MPI_Comm_dup of the given communicator failed with MPI error code {rc}");
        }
        let (mut rank, mut size) = (0, 1);
        // SAFETY: comm is valid.
        unsafe {
            ffi::MPI_Comm_rank(comm, &mut rank);
            ffi::MPI_Comm_size(comm, &mut size);
        }
        let w = World { comm, rank, size, owns_init };
        if size > 1 {
            super::JOB_ABORT.store(true, std::sync::atomic::Ordering::Release);
        }
        // A binary linked against another MPI than the launcher's sees one process everywhere.
        if fortran_comm.is_none() {
            if let Some((var, n)) = launcher_size() {
                if n != size {
                    op2_bail!(
                        Mpi,
                        "op_init: the launcher started {n} processes ({var}={n}) but MPI_COMM_WORLD has {size}: \
                         this program is linked against a different MPI than the launcher's (use that MPI's mpiexec)"
                    );
                }
            }
        }
        Ok(w)
    }

    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// The raw communicator (for libraries that take one: parallel HDF5's MPI-IO driver).
    pub fn raw(&self) -> ffi::MPI_Comm {
        self.comm
    }

    pub fn size(&self) -> i32 {
        self.size
    }

    /// The communicator's Fortran handle (`MPI_Comm_c2f`), for C code built against the same
    /// MPI (the PETSc shim).
    pub fn fortran_handle(&self) -> i32 {
        // SAFETY: comm is valid while self lives.
        unsafe { ffi::MPI_Comm_c2f(self.comm) }
    }

    /// op2 initialised MPI (and finalises it at op_exit).
    pub fn owns_init(&self) -> bool {
        self.owns_init
    }

    /// Closes op2's communicator but leaves MPI running (an `op_init` that failed after
    /// initialising MPI: MPI cannot be initialised twice in a process, so the next `op_init`
    /// takes it over and its `op_exit` finalises it).
    pub fn close_keep_mpi(mut self) {
        if self.owns_init {
            static AT_EXIT: std::sync::Once = std::sync::Once::new();
            // Should no later op_init take MPI over, it is finalised when the program exits
            // (a launcher reports a process that exits with MPI running as a failure).
            // SAFETY: registering a plain extern "C" function.
            AT_EXIT.call_once(|| unsafe {
                libc::atexit(finalize_at_exit);
            });
        }
        self.owns_init = false;
    }

    /// The agreement every collective of this communicator starts with (one `MPI_Allreduce` of
    /// one word): each process says whether it failed (`mine`), and every process learns the
    /// lowest-ranked process that did, with its error code and message (broadcast from it, only
    /// when one failed). So a process that fails between two collectives (an allocation refused,
    /// a count too big for MPI) calls `fail` instead of the next collective, the others meet it
    /// in theirs, and every process returns that error (its own first; the others' with
    /// "(on process r)") instead of one returning while the others wait for it.
    pub fn status(&self, mine: Option<&Op2Error>) -> Result<()> {
        // Lowest failing rank in the high word, its error code in the low word; no failure is
        // i64::MAX, which every failure is below.
        let key: i64 = match mine {
            Some(e) => (i64::from(self.rank) << 32) | i64::from(e.code.as_i32() as u32),
            None => i64::MAX,
        };
        let mut low = i64::MAX;
        // SAFETY: one i64 each way.
        check(
            unsafe {
                ffi::MPI_Allreduce(
                    &key as *const i64 as *const _,
                    &mut low as *mut i64 as *mut _,
                    1,
                    ffi::RSMPI_INT64_T,
                    ffi::RSMPI_MIN,
                    self.comm,
                )
            },
            "MPI_Allreduce (agreement)",
        )?;
        if low == i64::MAX {
            return Ok(());
        }
        let q = (low >> 32) as c_int;
        let code = low as u32 as i32;
        // The failing process's message, from it to every process.
        let mut text = match mine {
            Some(e) if q == self.rank => e.message.clone().into_bytes(),
            _ => Vec::new(),
        };
        text.truncate(4096);
        let mut n = text.len() as c_int;
        // SAFETY: one int from q.
        check(
            unsafe { ffi::MPI_Bcast(&mut n as *mut c_int as *mut _, 1, ffi::RSMPI_INT32_T, q, self.comm) },
            "MPI_Bcast",
        )?;
        text.resize(n.max(0) as usize + 1, 0);
        // SAFETY: text holds n bytes (plus one) on every process.
        check(
            unsafe { ffi::MPI_Bcast(text.as_mut_ptr() as *mut _, n, ffi::RSMPI_UINT8_T, q, self.comm) },
            "MPI_Bcast",
        )?;
        text.truncate(n.max(0) as usize);
        if let Some(e) = mine {
            return Err(e.clone());
        }
        let code = ErrorCode::ALL.iter().copied().find(|c| c.as_i32() == code).unwrap_or(ErrorCode::Internal);
        Err(Op2Error::new(code, format!("{} (on process {q})", String::from_utf8_lossy(&text))))
    }

    /// A local failure `e` between collectives, made collective: takes the place of this
    /// process's next collective (see `status`), so the others return the error from theirs.
    /// Returns the error to pass on.
    pub fn fail(&self, e: Op2Error) -> Op2Error {
        match self.status(Some(&e)) {
            Err(agreed) => agreed,
            Ok(()) => e,
        }
    }

    pub fn barrier(&self) -> Result<()> {
        self.status(None)?;
        // SAFETY: valid communicator.
        check(unsafe { ffi::MPI_Barrier(self.comm) }, "MPI_Barrier")
    }

    /// Every process's bytes, on every process (rank order).
    pub fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let p = self.size as usize;
        let n = i32::try_from(mine.len())
            .map_err(|_| crate::op2_err!(Mpi, "MPI_Allgatherv: {} bytes exceed MPI's 2^31-1 count limit", mine.len()));
        self.status(n.as_ref().err())?;
        let n = n?;
        let mut counts = vec![0i32; p];
        // SAFETY: one int from every process into counts (p ints).
        check(
            unsafe {
                ffi::MPI_Allgather(
                    &n as *const i32 as *const _,
                    1,
                    ffi::RSMPI_INT32_T,
                    counts.as_mut_ptr() as *mut _,
                    1,
                    ffi::RSMPI_INT32_T,
                    self.comm,
                )
            },
            "MPI_Allgather",
        )?;
        let total: i64 = counts.iter().map(|&c| c as i64).sum();
        if total > i32::MAX as i64 {
            // Too big for one call: gather piecewise, one process at a time (broadcast).
            let mut out = Vec::with_capacity(p);
            for (r, &c) in counts.iter().enumerate() {
                let buf = if r == self.rank as usize {
                    alloc::copy_of(mine, "MPI_Bcast: the receive buffer")
                } else {
                    alloc::zeroed(c as usize, "MPI_Bcast: the receive buffer")
                };
                self.status(buf.as_ref().err())?;
                let mut buf = buf?;
                // SAFETY: buf holds c bytes on every process.
                check(
                    unsafe { ffi::MPI_Bcast(buf.as_mut_ptr() as *mut _, c, ffi::RSMPI_UINT8_T, r as c_int, self.comm) },
                    "MPI_Bcast",
                )?;
                out.push(buf);
            }
            return Ok(out);
        }
        let mut displs = vec![0i32; p];
        for r in 1..p {
            displs[r] = displs[r - 1] + counts[r - 1];
        }
        // Distinct, non-dangling buffers even when empty (MPI rejects a send buffer equal to the
        // receive buffer, which two empty Vecs would be). Every process knows `total`, so all
        // agree on whether the buffer is big enough to be refused: then it is allocated
        // fallibly and the outcome agreed before the bytes move.
        let mut all = if total as usize > BIG {
            let all = alloc::zeroed::<u8>(total as usize + 1, "MPI_Allgatherv: the receive buffer");
            self.status(all.as_ref().err())?;
            all?
        } else {
            vec![0u8; total as usize + 1]
        };
        let one = [0u8; 1];
        let send = if mine.is_empty() { &one[..] } else { mine };
        // SAFETY: counts/displs describe `all` (one spare byte); send has at least n bytes.
        check(
            unsafe {
                ffi::MPI_Allgatherv(
                    send.as_ptr() as *const _,
                    n,
                    ffi::RSMPI_UINT8_T,
                    all.as_mut_ptr() as *mut _,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    ffi::RSMPI_UINT8_T,
                    self.comm,
                )
            },
            "MPI_Allgatherv",
        )?;
        Ok((0..p).map(|r| all[displs[r] as usize..(displs[r] + counts[r]) as usize].to_vec()).collect())
    }

    /// Every process's bytes on every process when all send the same number (one collective):
    /// rank r's bytes at `[r * len, (r + 1) * len)`.
    pub fn all_gather_same(&self, mine: &[u8]) -> Result<Vec<u8>> {
        let Ok(n) = i32::try_from(mine.len()) else {
            op2_bail!(Mpi, "MPI_Allgather: {} bytes exceed MPI's 2^31-1 count limit", mine.len());
        };
        let mut all = vec![0u8; mine.len() * self.size as usize + 1];
        let one = [0u8; 1];
        let send = if mine.is_empty() { &one[..] } else { mine };
        // SAFETY: all holds n bytes per process (plus one spare); send has at least n bytes.
        check(
            unsafe {
                ffi::MPI_Allgather(
                    send.as_ptr() as *const _,
                    n,
                    ffi::RSMPI_UINT8_T,
                    all.as_mut_ptr() as *mut _,
                    n,
                    ffi::RSMPI_UINT8_T,
                    self.comm,
                )
            },
            "MPI_Allgather",
        )?;
        all.truncate(mine.len() * self.size as usize);
        Ok(all)
    }

    /// Personalised all-to-all: `send[q]` goes to process q; returns what every process sent
    /// to this one, in rank order (two collectives: the counts, then the bytes).
    pub fn all_to_all(&self, send: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        let scounts = self.send_counts(send.iter().map(Vec::len));
        // SAFETY: reading a constant.
        let dt = unsafe { ffi::RSMPI_UINT8_T };
        let (rbuf, starts) = self.alltoallv(scounts, dt, |sbuf| send.iter().for_each(|b| sbuf.extend_from_slice(b)))?;
        Ok(starts.windows(2).map(|w| rbuf[w[0]..w[1]].to_vec()).collect())
    }

    /// Personalised all-to-all of u32 words: `send[q]` to process q (each buffer released once
    /// copied into the send buffer); returns the words received, in rank order, in one buffer
    /// with P + 1 starts. Holds the words sent once and the words received once.
    pub fn all_to_all_u32(&self, send: Vec<Vec<u32>>) -> Result<(Vec<u32>, Vec<usize>, Vec<u32>)> {
        // SAFETY: reading a constant.
        self.all_to_all_flat(send, unsafe { ffi::RSMPI_UINT32_T })
    }

    /// Personalised all-to-all of bytes written straight into the send buffer: `counts[q]`
    /// bytes go to process q, and `fill` appends them in rank order; returns the bytes received
    /// in rank order in one buffer, with P + 1 starts. The send buffer is the only copy made.
    pub fn all_to_all_fill(&self, counts: &[usize], fill: impl FnOnce(&mut Vec<u8>)) -> Result<(Vec<u8>, Vec<usize>)> {
        let scounts = self.send_counts(counts.iter().copied());
        // SAFETY: reading a constant.
        self.alltoallv(scounts, unsafe { ffi::RSMPI_UINT8_T }, fill)
    }

    /// `all_to_all_u32` for bytes.
    pub fn all_to_all_bytes(&self, send: Vec<Vec<u8>>) -> Result<(Vec<u8>, Vec<usize>, Vec<u8>)> {
        // SAFETY: reading a constant.
        self.all_to_all_flat(send, unsafe { ffi::RSMPI_UINT8_T })
    }

    /// The flat all-to-all of `T` (whose MPI type is `dt`). What a process sends itself is not
    /// copied through MPI: it comes back as the third value, moved (with a mesh numbered with
    /// any locality most of a partitioner's traffic is a process's own), and the received
    /// buffer's range for this process is empty.
    fn all_to_all_flat<T: Copy + Default>(
        &self,
        mut send: Vec<Vec<T>>,
        dt: ffi::MPI_Datatype,
    ) -> Result<(Vec<T>, Vec<usize>, Vec<T>)> {
        if send.len() != self.size as usize {
            op2_bail!(Internal, "MPI_Alltoallv: {} buffers for {} processes", send.len(), self.size);
        }
        let own = std::mem::take(&mut send[self.rank as usize]);
        let scounts = self.send_counts(send.iter().map(Vec::len));
        let (rbuf, starts) = self.alltoallv(scounts, dt, |sbuf| {
            for b in send {
                sbuf.extend_from_slice(&b);
            }
        })?;
        Ok((rbuf, starts, own))
    }

    /// The counts of an all-to-all (one per process), checked against MPI's int counts.
    fn send_counts(&self, lens: impl ExactSizeIterator<Item = usize>) -> Result<Vec<i32>> {
        if lens.len() != self.size as usize {
            op2_bail!(Internal, "MPI_Alltoallv: {} buffers for {} processes", lens.len(), self.size);
        }
        lens.map(|n| {
            i32::try_from(n)
                .map_err(|_| crate::op2_err!(Mpi, "MPI_Alltoallv: {n} elements exceed MPI's 2^31-1 count limit"))
        })
        .collect()
    }

    /// What every all-to-all shares: the counts go round (`MPI_Alltoall`), `fill` writes the
    /// elements to send in rank order (`scounts[q]` for process q) into the send buffer, and
    /// `MPI_Alltoallv` brings every process's elements here; returns them in rank order in one
    /// buffer with P + 1 starts.
    fn alltoallv<T: Copy + Default>(
        &self,
        scounts: Result<Vec<i32>>,
        dt: ffi::MPI_Datatype,
        fill: impl FnOnce(&mut Vec<T>),
    ) -> Result<(Vec<T>, Vec<usize>)> {
        self.status(scounts.as_ref().err())?;
        let scounts = scounts?;
        let p = self.size as usize;
        let mut rcounts = vec![0i32; p];
        // SAFETY: p ints each way.
        check(
            unsafe {
                ffi::MPI_Alltoall(
                    scounts.as_ptr() as *const _,
                    1,
                    ffi::RSMPI_INT32_T,
                    rcounts.as_mut_ptr() as *mut _,
                    1,
                    ffi::RSMPI_INT32_T,
                    self.comm,
                )
            },
            "MPI_Alltoall",
        )?;
        let displs = |c: &[i32]| -> Result<Vec<i32>> {
            let mut d = vec![0i32; p + 1];
            let mut at = 0i64;
            for r in 0..p {
                d[r] = at as i32;
                at += c[r] as i64;
                if at > i32::MAX as i64 {
                    op2_bail!(Mpi, "MPI_Alltoallv: more than 2^31-1 elements in one exchange");
                }
            }
            d[p] = at as i32;
            Ok(d)
        };
        // This process's displacements and buffers, agreed before anything moves: a receive
        // count past MPI's limit or a buffer the allocator refuses on one process is that
        // error on every process.
        let ready = (|| -> Result<_> {
            let (sd, rd) = (displs(&scounts)?, displs(&rcounts)?);
            // Distinct, non-empty buffers (as all_gather).
            let mut sbuf: Vec<T> = alloc::with_capacity(sd[p] as usize + 1, "MPI_Alltoallv: the send buffer")?;
            let rbuf: Vec<T> = alloc::zeroed(rd[p] as usize + 1, "MPI_Alltoallv: the receive buffer")?;
            fill(&mut sbuf);
            if sbuf.len() != sd[p] as usize {
                op2_bail!(Internal, "MPI_Alltoallv: {} elements to send, counts say {}", sbuf.len(), sd[p]);
            }
            sbuf.push(T::default());
            Ok((sd, rd, sbuf, rbuf))
        })();
        self.status(ready.as_ref().err())?;
        let (sd, rd, sbuf, mut rbuf) = ready?;
        // SAFETY: counts and displacements (in elements of dt, which is T) describe sbuf and rbuf.
        check(
            unsafe {
                ffi::MPI_Alltoallv(
                    sbuf.as_ptr() as *const _,
                    scounts.as_ptr(),
                    sd.as_ptr(),
                    dt,
                    rbuf.as_mut_ptr() as *mut _,
                    rcounts.as_ptr(),
                    rd.as_ptr(),
                    dt,
                    self.comm,
                )
            },
            "MPI_Alltoallv",
        )?;
        drop(sbuf);
        rbuf.truncate(rd[p] as usize);
        Ok((rbuf, rd.iter().map(|&d| d as usize).collect()))
    }

    /// Blocking send of `buf` to process `to` (returns once the buffer may be reused).
    pub fn send(&self, buf: &[u8], to: i32, tag: i32) -> Result<()> {
        let Ok(n) = c_int::try_from(buf.len()) else {
            op2_bail!(Mpi, "MPI_Send: {} bytes exceed MPI's 2^31-1 count limit", buf.len());
        };
        let one = [0u8; 1];
        let b = if buf.is_empty() { &one[..] } else { buf };
        // SAFETY: b is valid for n bytes for the duration of the call.
        check(unsafe { ffi::MPI_Send(b.as_ptr() as *const _, n, ffi::RSMPI_UINT8_T, to, tag, self.comm) }, "MPI_Send")
    }

    /// Blocking receive of exactly `buf.len()` bytes from process `from` (a message of
    /// another length is an error).
    pub fn recv(&self, buf: &mut [u8], from: i32, tag: i32) -> Result<()> {
        let Ok(n) = c_int::try_from(buf.len()) else {
            op2_bail!(Mpi, "MPI_Recv: {} bytes exceed MPI's 2^31-1 count limit", buf.len());
        };
        let mut one = [0u8; 1];
        let b: &mut [u8] = if buf.is_empty() { &mut one[..] } else { buf };
        // SAFETY: an all-zero MPI_Status is a valid value to be overwritten by MPI_Recv.
        let mut st: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: b is valid for n bytes; st receives the status.
        check(
            unsafe { ffi::MPI_Recv(b.as_mut_ptr() as *mut _, n, ffi::RSMPI_UINT8_T, from, tag, self.comm, &mut st) },
            "MPI_Recv",
        )?;
        let mut got: c_int = 0;
        // SAFETY: st is the status of the completed receive.
        check(unsafe { ffi::MPI_Get_count(&st, ffi::RSMPI_UINT8_T, &mut got) }, "MPI_Get_count")?;
        if got != n {
            op2_bail!(Mpi, "MPI_Recv: {got} bytes received from process {from}, {n} expected");
        }
        Ok(())
    }

    /// Element-wise sum of u64 values over the processes, in place (`MPI_Allreduce`).
    pub fn sum_u64(&self, v: &mut [u64]) -> Result<()> {
        self.status(None)?;
        let n = c_int::try_from(v.len()).map_err(|_| crate::op2_err!(Mpi, "MPI_Allreduce: {} values", v.len()))?;
        let mine = v.to_vec();
        // SAFETY: mine and v hold n u64 values each.
        check(
            unsafe {
                ffi::MPI_Allreduce(
                    mine.as_ptr() as *const _,
                    v.as_mut_ptr() as *mut _,
                    n,
                    ffi::RSMPI_UINT64_T,
                    ffi::RSMPI_SUM,
                    self.comm,
                )
            },
            "MPI_Allreduce",
        )
    }

    /// Element-wise minimum (or maximum) of f64 values over the processes, in place.
    pub fn min_max_f64(&self, v: &mut [f64], max: bool) -> Result<()> {
        self.status(None)?;
        let n = c_int::try_from(v.len()).map_err(|_| crate::op2_err!(Mpi, "MPI_Allreduce: {} values", v.len()))?;
        let mine = v.to_vec();
        // SAFETY: as sum_u64.
        check(
            unsafe {
                ffi::MPI_Allreduce(
                    mine.as_ptr() as *const _,
                    v.as_mut_ptr() as *mut _,
                    n,
                    ffi::RSMPI_DOUBLE,
                    if max { ffi::RSMPI_MAX } else { ffi::RSMPI_MIN },
                    self.comm,
                )
            },
            "MPI_Allreduce",
        )
    }

    /// Posts a receive of `buf.len()` bytes from `from`; the buffer must stay put until the
    /// request completes (`wait_all`).
    pub fn irecv(&self, buf: &mut [u8], from: i32, tag: i32, req: &mut ffi::MPI_Request) -> Result<()> {
        // SAFETY: buf is valid for its length and outlives the request (caller's contract).
        unsafe { self.irecv_raw(buf.as_mut_ptr(), buf.len(), from, tag, req) }
    }

    /// Posts a send; the buffer must stay put until the request completes.
    pub fn isend(&self, buf: &[u8], to: i32, tag: i32, req: &mut ffi::MPI_Request) -> Result<()> {
        // SAFETY: as irecv.
        unsafe { self.isend_raw(buf.as_ptr(), buf.len(), to, tag, req) }
    }

    /// `irecv` into `len` bytes at `ptr`: host memory, or device memory given to a CUDA-aware
    /// MPI (which tells them apart itself).
    ///
    /// # Safety
    /// `ptr` is valid for writes of `len` bytes until the request completes.
    pub unsafe fn irecv_raw(
        &self,
        ptr: *mut u8,
        len: usize,
        from: i32,
        tag: i32,
        req: &mut ffi::MPI_Request,
    ) -> Result<()> {
        let n = message_len(len, "MPI_Irecv")?;
        // SAFETY: the caller's contract.
        check(unsafe { ffi::MPI_Irecv(ptr as *mut _, n, ffi::RSMPI_UINT8_T, from, tag, self.comm, req) }, "MPI_Irecv")
    }

    /// `isend` of `len` bytes at `ptr` (host or device memory, as `irecv_raw`).
    ///
    /// # Safety
    /// `ptr` is valid for reads of `len` bytes until the request completes.
    pub unsafe fn isend_raw(
        &self,
        ptr: *const u8,
        len: usize,
        to: i32,
        tag: i32,
        req: &mut ffi::MPI_Request,
    ) -> Result<()> {
        let n = message_len(len, "MPI_Isend")?;
        // SAFETY: the caller's contract.
        check(unsafe { ffi::MPI_Isend(ptr as *const _, n, ffi::RSMPI_UINT8_T, to, tag, self.comm, req) }, "MPI_Isend")
    }

    /// Waits for every request (null requests complete at once).
    pub fn wait_all(&self, reqs: &mut [ffi::MPI_Request]) -> Result<()> {
        if reqs.is_empty() {
            return Ok(());
        }
        // SAFETY: reqs are requests from isend/irecv or null.
        check(
            unsafe { ffi::MPI_Waitall(reqs.len() as c_int, reqs.as_mut_ptr(), ffi::RSMPI_STATUSES_IGNORE) },
            "MPI_Waitall",
        )
    }

    pub fn null_request() -> ffi::MPI_Request {
        // SAFETY: reading a constant.
        unsafe { ffi::RSMPI_REQUEST_NULL }
    }

    pub fn wtime() -> f64 {
        // SAFETY: no preconditions once initialised.
        unsafe { ffi::MPI_Wtime() }
    }
}

// SAFETY: the communicator is used only under op2's API lock, so by one thread at a time,
// which MPI_THREAD_SERIALIZED (requested at initialisation) allows.
unsafe impl Send for World {}

impl Drop for World {
    fn drop(&mut self) {
        super::JOB_ABORT.store(false, std::sync::atomic::Ordering::Release);
        if !is_initialized() {
            return;
        }
        // A PETSc that op2 started on this communicator ends before MPI does (a program's own
        // MPI outlives op_exit, and a PETSc started there stays for the next session).
        #[cfg(feature = "petsc")]
        if self.owns_init {
            crate::mat::petsc::finalize();
        }
        // SAFETY: comm is our duplicate; MPI is still running.
        unsafe { ffi::MPI_Comm_free(&mut self.comm) };
        if self.owns_init {
            OP2_INITIALISED_MPI.store(false, std::sync::atomic::Ordering::Release);
            // SAFETY: op2 initialised MPI; every op2 request has completed.
            unsafe { ffi::MPI_Finalize() };
        }
    }
}
