//! Running the C compiler as a child process when the program has set `SIGCHLD` to `SIG_IGN`.
//!
//! With `SIGCHLD` ignored (or `SA_NOCLDWAIT` set), the kernel reaps children as they exit, so
//! `waitpid` fails with `ECHILD` and `std::process::Command` cannot report how the compiler
//! exited. While op2 runs a child it sets the default disposition (children become waitable
//! again) and afterwards restores the program's own. Nested and concurrent uses share one
//! switch (counted under a lock): the program's disposition is saved by the first and restored
//! by the last. Children of the program that exit while the default is in place would have been
//! reaped by the kernel; they are reaped when the program's disposition is restored.

use std::process::{Command, Output};
use std::sync::Mutex;

/// How many children op2 is running, and the program's `SIGCHLD` action if op2 replaced it.
static STATE: Mutex<(usize, Option<libc::sigaction>)> = Mutex::new((0, None));

/// While alive, children of this process are waitable.
pub struct Reaping(());

impl Reaping {
    pub fn begin() -> Reaping {
        let mut st = STATE.lock().unwrap_or_else(|e| e.into_inner());
        if st.0 == 0 {
            // SAFETY: an all-zero sigaction is a valid value; sigaction only reads `new` and
            // writes `old`.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGCHLD, std::ptr::null(), &mut old) == 0
                    && (old.sa_sigaction == libc::SIG_IGN || old.sa_flags & libc::SA_NOCLDWAIT != 0)
                {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigemptyset(&mut dfl.sa_mask);
                    if libc::sigaction(libc::SIGCHLD, &dfl, std::ptr::null_mut()) == 0 {
                        st.1 = Some(old);
                    }
                }
            }
        }
        st.0 += 1;
        Reaping(())
    }
}

impl Drop for Reaping {
    fn drop(&mut self) {
        let mut st = STATE.lock().unwrap_or_else(|e| e.into_inner());
        st.0 -= 1;
        if st.0 == 0 {
            if let Some(old) = st.1.take() {
                // SAFETY: restores the action saved in `begin`; waitpid with WNOHANG only reaps
                // children that have already exited (those the kernel would have reaped).
                unsafe {
                    libc::sigaction(libc::SIGCHLD, &old, std::ptr::null_mut());
                    while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
                }
            }
        }
    }
}

/// `cmd.output()`, with children waitable whatever the program did to `SIGCHLD`.
pub fn output(cmd: &mut Command) -> std::io::Result<Output> {
    let _reaping = Reaping::begin();
    cmd.output()
}
