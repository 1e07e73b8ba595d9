//! op2: the OP2 active library for unstructured-mesh computations, in Rust, behind a C ABI.
//!
//! Layers (nothing depends on `api`): `core` (sets, maps, dats, constants, kernels), `arg`
//! (descriptors and bindings), `plan` (mini-partitions and colouring), `codegen` (source text),
//! `jit` (compilers and caches), `backend` (one trait, one module per backend), `exec` (the loop
//! driver), `mpi` (the distributed hooks the driver calls), and `api` (the C boundary).

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
