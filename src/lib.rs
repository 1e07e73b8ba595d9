//! op2: the OP2 active library for unstructured-mesh computations, in Rust, behind a C ABI.
//!
//! Layers, top down (arrows point down or sideways only; `doc/internals.md` has the map and
//! `tools/module_graph.py --layers` the check): `api` (the C boundary); the driver: `exec`
//! (running loops and chains), `context` (the one `Context`), `checkpoint`, `mpi`, `mat`, `io`;
//! `backend` (one trait, one folder per backend with its code generation); `jit` (compilers and
//! caches); `codegen` (what every target's code generation shares) and `plan` (mini-partitions
//! and colouring); `core` (sets, maps, dats, constants, kernels), `arg` (descriptors and
//! bindings) and `config`; `error`.

pub mod api;
pub mod arg;
pub mod backend;
pub mod checkpoint;
pub mod codegen;
pub mod config;
pub mod context;
pub mod core;
pub mod error;
pub mod exec;
pub mod io;
pub mod jit;
pub mod mat;
pub mod mpi;
pub mod plan;

pub use context::Context;
pub use error::{ErrorCode, Op2Error, Result};
