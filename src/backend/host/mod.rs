//! The host backends, which run loops on this process's CPUs through C compiled by the JIT:
//! `seq` (the reference), `threads` (OP2's "openmp", on a rayon pool) and `check` (`seq` that
//! checks what the access descriptors promise), and the host C they run (`codegen`).

pub mod check;
pub mod codegen;
pub mod seq;
pub mod threads;
