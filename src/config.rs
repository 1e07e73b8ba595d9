//! Configuration: environment variables, overridden by the same tokens in `op_init`'s argv.

use crate::error::Result;
use crate::op2_bail;
use std::path::PathBuf;

/// Backends selectable at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Seq,
    Threads,
    OpenCl,
    Cuda,
    Check,
}

impl BackendKind {
    /// Every kind, in the order messages list them (the backend registry's order).
    pub const ALL: [BackendKind; 5] =
        [BackendKind::Seq, BackendKind::Threads, BackendKind::OpenCl, BackendKind::Cuda, BackendKind::Check];

    /// Parses a backend name or alias (`openmp` is OP2's name for the host-threaded backend),
    /// case and surrounding blanks ignored.
    pub fn parse(s: &str) -> Option<BackendKind> {
        let n = s.trim().to_ascii_lowercase();
        BackendKind::ALL.into_iter().find(|k| k.name() == n || k.aliases().contains(&n.as_str()))
    }

    /// Other names accepted for it (OP2's own, e.g. `openmp`).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            BackendKind::Seq => &["sequential"],
            BackendKind::Threads => &["openmp", "omp"],
            BackendKind::OpenCl | BackendKind::Cuda | BackendKind::Check => &[],
        }
    }

    /// Every accepted name, for messages: "seq (sequential), threads (openmp, omp), ...".
    pub fn names() -> String {
        BackendKind::ALL
            .iter()
            .map(|k| {
                if k.aliases().is_empty() {
                    k.name().to_string()
                } else {
                    format!("{} ({})", k.name(), k.aliases().join(", "))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Seq => "seq",
            BackendKind::Threads => "threads",
            BackendKind::OpenCl => "opencl",
            BackendKind::Cuda => "cuda",
            BackendKind::Check => "check",
        }
    }
}

/// How indirect increments avoid races (`OP2_INC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncChoice {
    /// The measured rule (doc/devices.md): on CPU devices (PoCL) the plan's blocks
    /// (`Blocks`: a block's elements run in order on one core, as `threads` runs them, which
    /// keeps the indirect data in cache; an element colouring scatters each launch over the
    /// whole mesh); on other devices element colouring (OpenCL 1.2 has no floating-point
    /// atomics, so atomics are compare-and-swap loops).
    Auto,
    /// Element colouring: one launch per colour of a colouring of single elements.
    Colour,
    Atomics,
    /// The plan's blocks (mini-partitions of `OP_PART_SIZE` elements), block-coloured: each
    /// work-item runs whole blocks in element order, one launch per block colour.
    Blocks,
    /// `Blocks`, with each block's indirect data staged in shared memory (`cuda`; OP2's own
    /// scheme); `opencl` runs it as `Blocks`.
    Stage,
    /// By measure, per loop: its first calls try each strategy that can run it (two calls
    /// each, the second timed: the first may build the code), the fastest is kept for the
    /// loop's later calls and, in the JIT cache, for later runs on the same device
    /// (`backend::device::IncTuner`). `cuda`'s default.
    Measure,
}

impl IncChoice {
    /// The name `parse` reads back.
    pub fn name(self) -> &'static str {
        match self {
            IncChoice::Auto => "auto",
            IncChoice::Measure => "measure",
            IncChoice::Colour => "colour",
            IncChoice::Atomics => "atomics",
            IncChoice::Blocks => "blocks",
            IncChoice::Stage => "stage",
        }
    }

    pub fn parse(s: &str) -> Option<IncChoice> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "auto" => IncChoice::Auto,
            "measure" => IncChoice::Measure,
            "colour" | "color" => IncChoice::Colour,
            "atomics" | "atomic" => IncChoice::Atomics,
            "blocks" | "block" => IncChoice::Blocks,
            "stage" => IncChoice::Stage,
            _ => return None,
        })
    }
}

/// A code target of static generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Host,
    OpenCl,
    Cuda,
}

impl Target {
    pub fn parse(s: &str) -> Option<Target> {
        match s.trim().to_ascii_lowercase().as_str() {
            "host" | "seq" | "threads" | "check" => Some(Target::Host),
            "opencl" => Some(Target::OpenCl),
            "cuda" => Some(Target::Cuda),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Target::Host => "host",
            Target::OpenCl => "opencl",
            Target::Cuda => "cuda",
        }
    }

    pub(crate) fn ext(self) -> &'static str {
        match self {
            Target::Host => "c",
            Target::OpenCl => "cl",
            Target::Cuda => "cu",
        }
    }
}

/// Parses `OP2_GENERATE_TARGETS` (comma or space separated).
pub fn parse_targets(s: &str) -> Result<Vec<Target>> {
    let mut out = Vec::new();
    for t in s.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()) {
        match Target::parse(t) {
            Some(x) if !out.contains(&x) => out.push(x),
            Some(_) => {}
            None => op2_bail!(
                BadConfig,
                "op_init: OP2_GENERATE_TARGETS: unknown target '{t}' (expected host, opencl or cuda)"
            ),
        }
    }
    Ok(out)
}

/// `OP2_SIMD`: whether loops whose kernel the rewriter accepts run through the vectorised
/// wrapper (`backend::host::codegen::simd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimdMode {
    /// Time both wrappers on the first calls of each loop and keep the faster.
    Auto,
    On,
    Off,
}

impl SimdMode {
    pub fn name(self) -> &'static str {
        match self {
            SimdMode::Auto => "auto",
            SimdMode::On => "on",
            SimdMode::Off => "off",
        }
    }
}

/// Largest `OP2_SIMD_LEN` accepted.
pub const MAX_SIMD_LEN: usize = 64;

/// Whether device backends fuse a chain's direct loops into one launch when `OP2_FUSE` is not
/// set (doc/lazy.md: measured on PoCL).
pub const DEVICE_FUSE_DEFAULT: bool = true;

/// Everything configurable, resolved once at `op_init`.
#[derive(Debug, Clone)]
pub struct Config {
    pub backend: BackendKind,
    /// Threads for `threads`: OP2_NUM_THREADS, else OMP_NUM_THREADS, else all cores.
    pub num_threads: usize,
    pub part_size: Option<usize>,
    pub block_size: Option<usize>,
    pub cache_dir: PathBuf,
    pub cc: String,
    pub cflags: String,
    /// `OP2_FC`: the Fortran compiler for Fortran kernel files (default `gfortran`).
    pub fc: String,
    /// `OP2_FFLAGS`: flags added to the Fortran compiler's defaults.
    pub fflags: String,
    /// `OP2_FORTRAN_PATH`: directories (`:`-separated) searched for the modules Fortran kernels use.
    pub fortran_path: Vec<PathBuf>,
    /// `OP2_KERNEL_PATH`: directories (`:`-separated) searched for OP2-style kernel headers
    /// (`<kernel>.h`) after the calling source's directory.
    pub kernel_path: Vec<PathBuf>,
    pub dump_source: Option<PathBuf>,
    /// `OP2_ERROR_HANDLER=return` (None: leave the handler as it is).
    pub errors_return: Option<bool>,
    pub diags: i32,
    /// `OP2_OPENCL_DEVICE`: `P:D` or a name substring.
    pub opencl_device: Option<String>,
    /// `OP2_CUDA_DEVICE`: the index of the CUDA device (default 0).
    pub cuda_device: Option<usize>,
    /// `OP2_INC`: how device backends keep indirect increments race-free.
    pub inc: IncChoice,
    /// `OP_AUTO_SOA`: structure-of-arrays device layout for dats of dim > 1 (`1`), or
    /// array-of-structures (`0`); unset, each device backend takes its own default
    /// (`cuda`: structure-of-arrays, `opencl`: array-of-structures).
    pub auto_soa: Option<bool>,
    /// `OP2_VALIDATE=1`: run every loop also on seq and compare.
    pub validate: bool,
    /// `OP2_DEVICE_SYNC=1`: `cuda` waits for each loop's launches before the loop returns
    /// (exact per-loop times, a failed launch named with its loop); by default a loop with
    /// nothing to bring back returns once launched and the next transfer down waits for it.
    pub device_sync: bool,
    /// `OP2_DEVICE_PROFILE=1`: `opencl` times each launch with the device's own clock
    /// (profiling events) and `op_timing_output` adds, per loop, the kernels' time against the
    /// loop's whole time in the backend.
    pub device_profile: bool,
    /// `OP2_LAZY=1`: `op_par_loop` queues loops; the queue runs at the next flush point.
    pub lazy: bool,
    /// `OP2_PARTITION_REREAD` (on by default; `0` off): under MPI, `op_partition` releases the
    /// dats declared from HDF5 that still hold what was read and reads them again into their
    /// new layout instead of migrating them (`mpi::dist`).
    pub partition_reread: bool,
    /// `OP2_TILE_SIZE`: elements of a chain's seed loop per sparse tile (0: chains run loop
    /// after loop, untiled; default `exec::chain::DEFAULT_TILE_SIZE`).
    pub tile_size: Option<usize>,
    /// `OP2_TILE_VERIFY=1`: every new tiling is checked by simulation before it runs (slow; a
    /// wrong tiling is OP2_ERR_INTERNAL).
    pub debug_tiling: bool,
    /// `OP2_FUSE=1`: a chain's loops over one set with only direct dependencies between them
    /// run as one generated loop (off by default: fused units have no vectorised wrappers).
    pub fuse: bool,
    /// Device backends (`opencl`, `cuda`): a chain's consecutive loops over one set with only
    /// direct dependencies and nothing to colour or reduce run as one kernel launch
    /// (`exec::device`). `OP2_FUSE=0`/`1` sets it; unset, `DEVICE_FUSE_DEFAULT`.
    pub fuse_device: bool,
    /// `OP2_GENERATE`: directory to write each new loop shape's code to (static generation).
    pub generate_dir: Option<PathBuf>,
    /// `OP2_GENERATE_TARGETS` (default: the running backend's target).
    pub generate_targets: Vec<Target>,
    /// `OP2_VALIDATE_RTOL`: relative tolerance for increments and reductions (None: 1e-12
    /// for double, 1e-5 for float).
    pub validate_rtol: Option<f64>,
    /// `OP2_SIMD` (auto, on, off).
    pub simd: SimdMode,
    /// `OP2_SIMD_LEN`: lanes per vectorised block, a power of two from 2 to `MAX_SIMD_LEN`;
    /// None: each loop's own (`backend::host::codegen::simd::default_lanes`).
    pub simd_len: Option<usize>,
    /// `OP2_LOOP_PACK`: loop packs (`op2-pack`) searched before the compiler.
    pub loop_packs: Vec<PathBuf>,
    /// `OP2_JIT` (on by default): `off` never runs the compiler; loops come from packs.
    pub jit: bool,
}

const KEYS: &[&str] = &[
    "OP2_BACKEND",
    "OP2_NUM_THREADS",
    "OMP_NUM_THREADS",
    "OP_PART_SIZE",
    "OP_BLOCK_SIZE",
    "OP2_CACHE_DIR",
    "OP2_CC",
    "OP2_CFLAGS",
    "OP2_FC",
    "OP2_FFLAGS",
    "OP2_FORTRAN_PATH",
    "OP2_KERNEL_PATH",
    "OP2_DUMP_SOURCE",
    "OP2_ERROR_HANDLER",
    "OP2_OPENCL_DEVICE",
    "OP2_CUDA_DEVICE",
    "OP2_INC",
    "OP2_VALIDATE",
    "OP2_DEVICE_SYNC",
    "OP2_DEVICE_PROFILE",
    "OP2_LAZY",
    "OP2_PARTITION_REREAD",
    "OP2_DIAGNOSTICS",
    "OP2_TILE_SIZE",
    "OP2_TILE_VERIFY",
    "OP2_FUSE",
    "OP2_VALIDATE_RTOL",
    "OP_AUTO_SOA",
    "OP2_GENERATE",
    "OP2_GENERATE_TARGETS",
    "OP2_SIMD",
    "OP2_SIMD_LEN",
    "OP2_LOOP_PACK",
    "OP2_JIT",
];

/// The value of `key` from argv tokens (`KEY=value`, the last one wins) or else the
/// environment; empty values count as unset.
fn lookup(env: &dyn Fn(&str) -> Option<String>, tokens: &[String], key: &str) -> Option<String> {
    let from_argv = tokens.iter().rev().find_map(|t| t.strip_prefix(key).and_then(|r| r.strip_prefix('=')));
    from_argv.map(str::to_string).or_else(|| env(key)).filter(|v| !v.is_empty())
}

/// `OP2_ERROR_HANDLER` alone: `op_init` applies it before anything else is resolved, so that
/// `return` governs the errors of every other configuration value given with it.
pub fn error_handler(env: &dyn Fn(&str) -> Option<String>, tokens: &[String]) -> Result<Option<bool>> {
    match lookup(env, tokens, "OP2_ERROR_HANDLER").as_deref() {
        None => Ok(None),
        Some("return") => Ok(Some(true)),
        Some("abort") => Ok(Some(false)),
        Some(other) => op2_bail!(BadConfig, "op_init: OP2_ERROR_HANDLER={other} (expected abort or return)"),
    }
}

impl Config {
    /// Resolves the configuration from a lookup of environment variables and argv tokens
    /// (`KEY=value`; tokens win over the environment; other tokens are the program's own).
    pub fn resolve(env: &dyn Fn(&str) -> Option<String>, tokens: &[String], diags: i32) -> Result<Config> {
        let get = |k: &str| lookup(env, tokens, k);
        debug_assert!(KEYS.iter().all(|k| k.chars().all(|c| c.is_ascii_uppercase() || c == '_')));

        let backend = match get("OP2_BACKEND") {
            None => BackendKind::Seq,
            Some(b) => match BackendKind::parse(&b) {
                Some(k) => k,
                None => op2_bail!(
                    BadConfig,
                    "op_init: unknown backend '{b}' in OP2_BACKEND (expected one of {})",
                    BackendKind::names()
                ),
            },
        };
        let positive = |k: &str| -> Result<Option<usize>> {
            match get(k) {
                None => Ok(None),
                Some(v) => match v.trim().parse::<usize>() {
                    Ok(n) if n > 0 => Ok(Some(n)),
                    _ => op2_bail!(BadConfig, "op_init: {k}={v} is not a positive integer"),
                },
            }
        };
        let num_threads = match positive("OP2_NUM_THREADS")? {
            Some(n) => n,
            None => match positive("OMP_NUM_THREADS") {
                Ok(Some(n)) => n,
                // OMP_NUM_THREADS may hold an OpenMP list ("4,2"); other runtimes' syntax is
                // not ours to reject: fall back to all cores.
                _ => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            },
        };
        let part_size = positive("OP_PART_SIZE")?;
        let block_size = positive("OP_BLOCK_SIZE")?;
        let cache_dir = match get("OP2_CACHE_DIR") {
            Some(d) => PathBuf::from(d),
            None => match (env("XDG_CACHE_HOME").filter(|s| !s.is_empty()), env("HOME").filter(|s| !s.is_empty())) {
                (Some(x), _) => PathBuf::from(x).join("op2"),
                (None, Some(h)) => PathBuf::from(h).join(".cache").join("op2"),
                (None, None) => std::env::temp_dir().join(format!("op2-cache-{}", unsafe { libc::geteuid() })),
            },
        };
        let errors_return = error_handler(env, tokens)?;
        let inc = match get("OP2_INC") {
            None => IncChoice::Auto,
            Some(v) => match IncChoice::parse(&v) {
                Some(c) => c,
                None => op2_bail!(BadConfig, "op_init: OP2_INC={v} (expected auto, measure, colour, atomics or stage)"),
            },
        };
        let cuda_device = match get("OP2_CUDA_DEVICE") {
            None => None,
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) => Some(n),
                Err(_) => op2_bail!(BadConfig, "op_init: OP2_CUDA_DEVICE={v} is not a device index (0, 1, ...)"),
            },
        };
        let validate = match get("OP2_VALIDATE").as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(v) => op2_bail!(BadConfig, "op_init: OP2_VALIDATE={v} (expected 0 or 1)"),
        };
        let device_sync = match get("OP2_DEVICE_SYNC").as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(v) => op2_bail!(BadConfig, "op_init: OP2_DEVICE_SYNC={v} (expected 0 or 1)"),
        };
        let device_profile = match get("OP2_DEVICE_PROFILE").as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(v) => op2_bail!(BadConfig, "op_init: OP2_DEVICE_PROFILE={v} (expected 0 or 1)"),
        };
        // OP2_DIAGNOSTICS raises op_init's diagnostics level (a program's own level is a floor).
        let diags = match get("OP2_DIAGNOSTICS") {
            None => diags,
            Some(v) => match v.trim().parse::<i32>() {
                Ok(n) if (0..=9).contains(&n) => diags.max(n),
                _ => op2_bail!(BadConfig, "op_init: OP2_DIAGNOSTICS={v} (expected a level from 0 to 9)"),
            },
        };
        let lazy = match get("OP2_LAZY").as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(v) => op2_bail!(BadConfig, "op_init: OP2_LAZY={v} (expected 0 or 1)"),
        };
        let partition_reread = match get("OP2_PARTITION_REREAD").as_deref() {
            None | Some("1") => true,
            Some("0") => false,
            Some(v) => op2_bail!(BadConfig, "op_init: OP2_PARTITION_REREAD={v} (expected 0 or 1)"),
        };
        let tile_size = match get("OP2_TILE_SIZE") {
            None => None,
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if n <= 1 << 30 => Some(n),
                _ => op2_bail!(
                    BadConfig,
                    "op_init: OP2_TILE_SIZE={v} (expected 0, no tiling, or elements per tile up to 2^30)"
                ),
            },
        };
        let debug_tiling = match get("OP2_TILE_VERIFY").as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(v) => op2_bail!(BadConfig, "op_init: OP2_TILE_VERIFY={v} (expected 0 or 1)"),
        };
        let (fuse, fuse_device) = match get("OP2_FUSE").as_deref() {
            Some("1") => (true, true),
            Some("0") => (false, false),
            None => (false, DEVICE_FUSE_DEFAULT),
            Some(v) => op2_bail!(BadConfig, "op_init: OP2_FUSE={v} (expected 0 or 1)"),
        };
        let auto_soa = match get("OP_AUTO_SOA").as_deref() {
            None => None,
            Some("0") => Some(false),
            Some("1") => Some(true),
            Some(v) => op2_bail!(BadConfig, "op_init: OP_AUTO_SOA={v} (expected 0 or 1)"),
        };
        let validate_rtol = match get("OP2_VALIDATE_RTOL") {
            None => None,
            Some(v) => match v.trim().parse::<f64>() {
                Ok(t) if t >= 0.0 && t.is_finite() => Some(t),
                _ => op2_bail!(BadConfig, "op_init: OP2_VALIDATE_RTOL={v} is not a non-negative number"),
            },
        };
        let generate_targets = match get("OP2_GENERATE_TARGETS") {
            Some(t) => parse_targets(&t)?,
            None => vec![match backend {
                BackendKind::OpenCl => Target::OpenCl,
                BackendKind::Cuda => Target::Cuda,
                _ => Target::Host,
            }],
        };
        let simd = match get("OP2_SIMD").as_deref().map(str::trim) {
            None | Some("auto") => SimdMode::Auto,
            Some("on") | Some("1") => SimdMode::On,
            Some("off") | Some("0") => SimdMode::Off,
            Some(other) => op2_bail!(BadConfig, "op_init: OP2_SIMD={other} (expected auto, on or off)"),
        };
        let simd_len = match positive("OP2_SIMD_LEN")? {
            None => None,
            Some(n) if (2..=MAX_SIMD_LEN).contains(&n) && n.is_power_of_two() => Some(n),
            Some(n) => {
                op2_bail!(BadConfig, "op_init: OP2_SIMD_LEN={n} (expected a power of two from 2 to {MAX_SIMD_LEN})")
            }
        };
        let loop_packs = get("OP2_LOOP_PACK")
            .map(|v| v.split(':').filter(|p| !p.is_empty()).map(PathBuf::from).collect())
            .unwrap_or_default();
        let jit = match get("OP2_JIT").as_deref().map(str::trim) {
            None | Some("on") | Some("1") => true,
            Some("off") | Some("0") => false,
            Some(other) => op2_bail!(BadConfig, "op_init: OP2_JIT={other} (expected on or off)"),
        };
        Ok(Config {
            backend,
            num_threads,
            part_size,
            block_size,
            cache_dir,
            cc: get("OP2_CC").unwrap_or_else(|| "cc".to_string()),
            cflags: get("OP2_CFLAGS").unwrap_or_default(),
            fc: get("OP2_FC").filter(|s| !s.trim().is_empty()).unwrap_or_else(|| "gfortran".to_string()),
            fflags: get("OP2_FFLAGS").unwrap_or_default(),
            fortran_path: get("OP2_FORTRAN_PATH")
                .map(|v| v.split(':').filter(|d| !d.is_empty()).map(PathBuf::from).collect())
                .unwrap_or_default(),
            kernel_path: get("OP2_KERNEL_PATH")
                .map(|v| v.split(':').filter(|d| !d.is_empty()).map(PathBuf::from).collect())
                .unwrap_or_default(),
            dump_source: get("OP2_DUMP_SOURCE").map(PathBuf::from),
            errors_return,
            diags,
            opencl_device: get("OP2_OPENCL_DEVICE"),
            cuda_device,
            inc,
            validate,
            device_sync,
            device_profile,
            lazy,
            partition_reread,
            tile_size,
            debug_tiling,
            fuse,
            fuse_device,
            auto_soa,
            validate_rtol,
            generate_dir: get("OP2_GENERATE").map(PathBuf::from),
            generate_targets,
            simd,
            simd_len,
            loop_packs,
            jit,
        })
    }

    /// The configuration from the process environment and `tokens`.
    pub fn from_env(tokens: &[String], diags: i32) -> Result<Config> {
        Config::resolve(&|k| std::env::var(k).ok(), tokens, diags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(a, _)| *a == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn tokens_override_environment() {
        let env = env_of(&[("OP2_BACKEND", "seq"), ("OP2_NUM_THREADS", "3"), ("HOME", "/h")]);
        let c = Config::resolve(&env, &["OP2_BACKEND=openmp".into(), "other".into()], 0).unwrap();
        assert_eq!(c.backend, BackendKind::Threads);
        assert_eq!(c.num_threads, 3);
        assert_eq!(c.cache_dir, PathBuf::from("/h/.cache/op2"));
        assert_eq!(c.cc, "cc");
    }

    #[test]
    fn thread_count_precedence() {
        let c = Config::resolve(&env_of(&[("OMP_NUM_THREADS", "5")]), &[], 0).unwrap();
        assert_eq!(c.num_threads, 5);
        let c = Config::resolve(&env_of(&[("OMP_NUM_THREADS", "5"), ("OP2_NUM_THREADS", "2")]), &[], 0).unwrap();
        assert_eq!(c.num_threads, 2);
    }

    #[test]
    fn bad_values_are_errors() {
        let e = Config::resolve(&env_of(&[("OP2_BACKEND", "fortran")]), &[], 0).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::BadConfig);
        assert!(e.message.contains("unknown backend 'fortran'"));
        assert!(Config::resolve(&env_of(&[("OP_PART_SIZE", "0")]), &[], 0).is_err());
        assert!(Config::resolve(&env_of(&[("OP2_NUM_THREADS", "x")]), &[], 0).is_err());
        let c = Config::resolve(&env_of(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]), &[], 0).unwrap();
        assert_eq!(c.cache_dir, PathBuf::from("/x/op2"));
    }

    #[test]
    fn simd_settings() {
        let c = Config::resolve(&env_of(&[]), &[], 0).unwrap();
        assert_eq!((c.simd, c.simd_len), (SimdMode::Auto, None));
        let c = Config::resolve(&env_of(&[("OP2_SIMD", "off")]), &["OP2_SIMD_LEN=4".into()], 0).unwrap();
        assert_eq!((c.simd, c.simd_len), (SimdMode::Off, Some(4)));
        let e = Config::resolve(&env_of(&[("OP2_SIMD", "yes")]), &[], 0).unwrap_err();
        assert!(e.message.contains("OP2_SIMD=yes (expected auto, on or off)"), "{}", e.message);
        let e = Config::resolve(&env_of(&[("OP2_SIMD_LEN", "6")]), &[], 0).unwrap_err();
        assert!(e.message.contains("OP2_SIMD_LEN=6 (expected a power of two from 2 to 64)"), "{}", e.message);
        assert!(Config::resolve(&env_of(&[("OP2_SIMD_LEN", "128")]), &[], 0).is_err());
    }
}
