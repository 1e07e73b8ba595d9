//! Compiled loops by shape: the key of generated code, of the compiled-code cache and of plans
//! (`LoopShape`), what a shape compiles to (`CompiledLoop`), and the session's cache of them
//! (`LoopCache`, held by `Context`, filled by `exec`).

use crate::arg::ArgDesc;
use crate::codegen::ConstDecl;
use crate::core::KernelId;
use crate::jit::HostLibrary;
use std::collections::HashMap;
use std::sync::Arc;

/// A loop's shape: what the loop is without any data. The one key of generated code, of the
/// compiled-code cache and of plans: the kernel, the argument descriptors and the shape of the
/// constant table (which constants exist, their types and sizes; never their values, sizes of
/// sets, handles or addresses).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoopShape {
    pub kernel: KernelId,
    pub args: Vec<ArgDesc>,
    /// `Context::const_shape_epoch` when the shape was taken.
    pub const_shape: u64,
}

/// A compiled loop, the constants it loads, and what the driver needs to know about its shape.
pub struct CompiledLoop {
    /// The host library. Host backends run it; on device backends (which compile their own
    /// code from the signature) it is validation's reference, and compiling it first gives
    /// every backend the host compiler's diagnostics and kernel-type warnings, mapped to the
    /// kernel's lines, before any device compiler sees the kernel.
    pub lib: Arc<HostLibrary>,
    /// The constants the kernel uses, in the order the library loads them.
    pub consts: Vec<ConstDecl>,
    /// The kernel's `#line` origin (device backends generate their own code with it).
    pub origin: String,
    /// Whether some indirect dat is written, so the exec halo must be computed (MPI).
    pub needs_exec_halo: bool,
    /// A read of an indirect OP_INC parameter in the kernel's source, found once per shape
    /// (refused under `OP2_VALIDATE=1` and on the check backend).
    pub inc_read: Option<crate::exec::validate::IncRead>,
    /// Whether a loop of this shape has run to the end in this session (on a device, the
    /// first run compiles the device code: lazy evaluation runs it at its call).
    pub ran: std::sync::atomic::AtomicBool,
}

/// Compiled loops by shape, looked up per kernel by comparing shapes, so a call allocates
/// nothing to find its code.
#[derive(Default)]
pub struct LoopCache {
    map: HashMap<KernelId, Vec<(LoopShape, Arc<CompiledLoop>)>>,
}

impl LoopCache {
    pub fn len(&self) -> usize {
        self.map.values().map(Vec::len).sum()
    }

    pub fn get(&self, shape: &LoopShape) -> Option<&Arc<CompiledLoop>> {
        self.map.get(&shape.kernel)?.iter().find(|(s, _)| s == shape).map(|(_, c)| c)
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Adds a shape's compiled loop (the caller looked it up first).
    pub fn insert(&mut self, shape: LoopShape, compiled: Arc<CompiledLoop>) {
        self.map.entry(shape.kernel).or_default().push((shape, compiled));
    }
}
