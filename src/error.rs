//! Errors: one type for the whole library, with numbered codes in bands that are never reused.
//!
//! Bands: 1xx lifecycle and configuration, 2xx declarations, 3xx loop arguments, 4xx loops,
//! 5xx code generation and JIT, 6xx data access and I/O, 7xx findings of the `check` backend,
//! 9xx internal. The numbers are part of
//! the C ABI (`OP2_ERR_*` in `op2.h`): never renumber, only add.

use std::fmt;

macro_rules! codes {
    ($( $(#[$doc:meta])* $name:ident = $val:expr, )*) => {
        /// An error code of the C API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $( $(#[$doc])* $name = $val, )* }
        impl ErrorCode {
            /// All codes, in numeric order (for the header check and docs).
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$name, )* ];
        }
    };
}

codes! {
    /// A call made before `op_init` or after `op_exit`.
    NotInitialised = 101,
    /// `op_init` called while op2 is already initialised.
    AlreadyInitialised = 102,
    /// A configuration value (environment or `op_init` token) that cannot be used.
    BadConfig = 103,
    /// The requested backend is not available in this build or on this machine.
    BackendUnavailable = 104,
    /// The JIT cache directory cannot be used (owner, permissions, not creatable).
    CacheDir = 105,
    /// A required pointer or name was NULL.
    NullArgument = 201,
    /// A handle that does not belong to the current op2 session (stale or forged).
    InvalidHandle = 202,
    /// A size, count or dimension out of its allowed range.
    BadSize = 203,
    /// An unknown type string, or an element size that disagrees with the type.
    BadType = 204,
    /// A map entry outside the target set.
    MapOutOfRange = 205,
    /// A kernel whose name is not a C identifier or is not defined in its source.
    BadKernel = 206,
    /// A name that is not usable (for constants: not a C identifier, or reserved).
    BadName = 207,
    /// An argument whose dim or type disagrees with its dat.
    ArgMismatch = 301,
    /// An argument whose map does not connect the loop's set to the dat's set.
    ArgSet = 302,
    /// An `idx` that is out of range for the map (or not -1 for direct access).
    ArgIdx = 303,
    /// An access mode that is not allowed for this kind of argument.
    ArgAccess = 304,
    /// An `op_arg_info` whose `ref` is not a MIN/MAX global of the same loop.
    ArgInfo = 305,
    /// An `op_arg` that was not built by a successful `op_arg_*` call.
    ArgInvalid = 306,
    /// A malformed loop call (negative nargs, NULL args with nargs > 0, ...).
    BadLoop = 401,
    /// An op2 function called from inside a kernel (kernels may not call op2).
    Reentrant = 402,
    /// A kernel that does not compile; the message carries the compiler's diagnostics.
    Compile = 501,
    /// A compiled loop that cannot be loaded.
    Load = 502,
    /// An index range outside a dat (`op_fetch_data_idx`).
    BadRange = 601,
    /// A file that cannot be written or read.
    Io = 602,
    /// A file (HDF5, VTK) whose layout, dim, type or size is not what the call expects.
    FileFormat = 603,
    /// An `op_decl_*_hdf5` dataset that the file does not hold (on any process): the call
    /// returns NULL, as OP2's does for a program probing an optional dataset, and never ends
    /// the program, whatever the error handler.
    NoDataset = 604,
    /// The `check` backend found a broken access promise (an indirect WRITE/RW conflict, or a
    /// kernel that modified OP_READ data).
    Check = 701,
    /// A validated loop (`OP2_VALIDATE=1`) disagrees with the `seq` reference.
    Validate = 702,
    /// A device runtime call failed (names the call and the runtime's code and text).
    Device = 801,
    /// A host or device allocation failed; the dat and its data are unchanged.
    OutOfMemory = 802,
    /// An MPI call failed, or processes called op2 collectively in different orders
    /// (`OP2_MPI_CHECK=1`), or the program runs under a launcher of another MPI.
    Mpi = 810,
    /// A matrix contribution outside its sparsity.
    MatPattern = 820,
    /// A linear solve did not converge (names the solver, iterations and residual).
    Solve = 821,
    /// PETSc returned an error (its code and message).
    Petsc = 822,
    /// A loop chain call out of order: `op_loop_chain_begin` inside a chain, or
    /// `op_loop_chain_end` with no chain open.
    Chain = 830,
    /// A checkpoint cannot be written, or the one found does not belong to this program or
    /// process count, or is corrupt (names the file and the reason).
    Checkpoint = 840,
    /// A bug in op2 (a caught panic); please report it.
    Internal = 901,
}

impl ErrorCode {
    /// The numeric code seen from C.
    pub fn as_i32(self) -> i32 {
        self as i32
    }
}

/// An op2 error: a code and a message naming the call, the objects and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op2Error {
    pub code: ErrorCode,
    pub message: String,
}

impl Op2Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Op2Error { code, message: message.into() }
    }
}

impl fmt::Display for Op2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op2 error [{}]: {}", self.code.as_i32(), self.message)
    }
}

impl std::error::Error for Op2Error {}

pub type Result<T> = std::result::Result<T, Op2Error>;

/// Shorthand: `Err(Op2Error)` from a code and a formatted message.
#[macro_export]
macro_rules! op2_bail {
    ($code:ident, $($fmt:tt)*) => {
        return Err($crate::error::Op2Error::new($crate::error::ErrorCode::$code, format!($($fmt)*)))
    };
}

/// Shorthand: an `Op2Error` value from a code and a formatted message.
#[macro_export]
macro_rules! op2_err {
    ($code:ident, $($fmt:tt)*) => {
        $crate::error::Op2Error::new($crate::error::ErrorCode::$code, format!($($fmt)*))
    };
}
