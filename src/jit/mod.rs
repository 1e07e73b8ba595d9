//! Just-in-time compilation of generated host C: compile with the system C compiler, load with
//! libloading, cache in memory and on disk (`cache`).

pub mod cache;

use crate::error::Result;
use crate::op2_bail;
use cache::DiskCache;
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Flags every host JIT compile needs: ISO C11, not a GNU dialect (so `gamma`, `index`, `y1`,
/// `j0` are the user's names, not libc's); position-independent shared object; hidden
/// visibility so the kernel is not interposable and the compiler inlines it into the wrapper;
/// GNU89 inline semantics so a kernel written `inline void k(...)` (as OP2 kernels often are)
/// still gets a definition under ISO C's rules for `inline`.
pub const REQUIRED_FLAGS: &[&str] = &["-std=c11", "-fPIC", "-shared", "-fvisibility=hidden", "-fgnu89-inline"];
/// Default optimisation flags; no FP contraction so results are reproducible across backends.
/// On x86-64 also `-mno-fma -mno-avx512f`: GCC 12's SLP vectorizer emits fused multiply-adds
/// (`vfmsubadd231pd`) even under `-ffp-contract=off`, which changes the last bits of results.
/// AVX-512F carries its own (EVEX) FMA instructions that `-mno-fma` does not remove, so on an
/// AVX-512 CPU the same pattern comes back unless AVX-512 is off too (measured on a Xeon with
/// AVX-512: plain C differed from seq in the 16th digit of Airfoil's rms at iteration 145).
/// Without contraction no legitimate FMA is lost.
/// `-fno-math-errno` lets `sqrt` compile to the instruction alone (GCC's default `-fmath-errno`
/// makes every `sqrt` call "clobber memory", which blocks vectorisation of kernels using it);
/// `-fopenmp-simd` honours `#pragma omp simd` without the OpenMP runtime. Neither changes a
/// result: IEEE `sqrt` is correctly rounded either way (Airfoil's rms history is bitwise the
/// same with and without them).
#[cfg(target_arch = "x86_64")]
pub const DEFAULT_FLAGS: &[&str] =
    &["-O3", "-march=native", "-ffp-contract=off", "-mno-fma", "-mno-avx512f", "-fno-math-errno", "-fopenmp-simd"];
#[cfg(not(target_arch = "x86_64"))]
pub const DEFAULT_FLAGS: &[&str] = &["-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fopenmp-simd"];

/// `void op2_loop(int start, int end, void *const *slots)`
pub type LoopFn = unsafe extern "C" fn(i32, i32, *const *mut c_void);
/// `void op2_set_constants(void *const *src)`
pub type ConstsFn = unsafe extern "C" fn(*const *const c_void);

/// The host C compiler and its flags.
#[derive(Debug)]
pub struct Compiler {
    pub cc: String,
    /// All flags in order: required, defaults, then the user's `OP2_CFLAGS` (later flags win).
    pub flags: Vec<String>,
    identity: Option<String>,
}

impl Compiler {
    pub fn new(cc: &str, extra_flags: &str) -> Compiler {
        let mut flags: Vec<String> = REQUIRED_FLAGS.iter().chain(DEFAULT_FLAGS).map(|s| s.to_string()).collect();
        flags.extend(extra_flags.split_whitespace().map(str::to_string));
        Compiler { cc: cc.to_string(), flags, identity: None }
    }

    /// The compiler's identity for cache keys: its command and `--version` banner.
    pub fn identity(&mut self) -> Result<&str> {
        if self.identity.is_none() {
            let out = Command::new(&self.cc).arg("--version").output();
            let banner = match out {
                Ok(o) if o.status.success() => {
                    String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").to_string()
                }
                Ok(o) => op2_bail!(
                    Compile,
                    "the C compiler '{}' failed to report its version: {}",
                    self.cc,
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
                Err(e) => op2_bail!(Compile, "cannot run the C compiler '{}' (set OP2_CC): {e}", self.cc),
            };
            self.identity = Some(format!("{} | {banner}", self.cc));
        }
        Ok(self.identity.as_deref().unwrap_or(""))
    }

    /// Compiles `src` to the shared object `out`; returns the compiler's warnings (empty when
    /// there are none), or on failure its output.
    fn compile(&self, src: &Path, out: &Path) -> std::result::Result<String, String> {
        let res = Command::new(&self.cc).args(&self.flags).arg("-o").arg(out).arg(src).arg("-lm").output();
        match res {
            Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stderr).trim_end().to_string()),
            Ok(o) => {
                let mut msg = format!("{} exited with {}", self.cc, o.status);
                let text = String::from_utf8_lossy(&o.stderr);
                if !text.trim().is_empty() {
                    msg.push_str(":\n");
                    msg.push_str(text.trim_end());
                }
                Err(msg)
            }
            Err(e) => Err(format!("cannot run the C compiler '{}': {e}", self.cc)),
        }
    }
}

/// A loaded host library for one loop.
pub struct HostLibrary {
    pub loop_fn: LoopFn,
    pub consts_fn: Option<ConstsFn>,
    /// `op2_loop_simd`, the vectorised wrapper (`codegen::simd`), when the library has one.
    pub simd_fn: Option<LoopFn>,
    /// Which wrapper runs (`OP2_SIMD`), shared by every call of this library.
    pub simd: Arc<crate::backend::simd_choice::SimdChooser>,
    /// The constant epoch whose values were last loaded into this library (u64::MAX: none).
    pub consts_epoch: AtomicU64,
    pub path: PathBuf,
    _lib: libloading::Library,
}

impl HostLibrary {
    fn load(path: &Path) -> std::result::Result<HostLibrary, String> {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: the file is a library we compiled from generated code (verified by its
        // trailer); its initialisers are the C compiler's defaults.
        let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| e.to_string())?;
        // SAFETY: the symbols have exactly these signatures in every generated host library.
        let loop_fn = unsafe { lib.get::<LoopFn>(b"op2_loop\0") }.map_err(|e| e.to_string())?;
        let loop_fn = *loop_fn;
        let consts_fn = unsafe { lib.get::<ConstsFn>(b"op2_set_constants\0") }.ok().map(|s| *s);
        // SAFETY: as above; op2_simd_mode is a `const int` and op2_simd_refused a
        // NUL-terminated `const char[]` wherever they exist (codegen::simd).
        let simd_fn = unsafe { lib.get::<LoopFn>(b"op2_loop_simd\0") }.ok().map(|s| *s);
        let forced = unsafe { lib.get::<*const i32>(b"op2_simd_mode\0") }.ok().is_some_and(|p| unsafe { **p } == 1);
        let refused = unsafe { lib.get::<*const std::ffi::c_char>(b"op2_simd_refused\0") }
            .ok()
            .map(|p| unsafe { std::ffi::CStr::from_ptr(*p) }.to_string_lossy().into_owned());
        let simd = Arc::new(crate::backend::simd_choice::SimdChooser::new(simd_fn.is_some(), forced, refused));
        Ok(HostLibrary {
            loop_fn,
            consts_fn,
            simd_fn,
            simd,
            consts_epoch: AtomicU64::new(u64::MAX),
            path: path.to_path_buf(),
            _lib: lib.into(),
        })
    }

    /// Loads constant values into the library if `epoch` is newer than what it holds.
    pub fn ensure_constants(&self, epoch: u64, values: &[*const c_void]) {
        if let Some(f) = self.consts_fn {
            if self.consts_epoch.load(Ordering::Acquire) != epoch {
                // SAFETY: `values` holds one pointer per constant the library declares, in the
                // same order, each to a buffer of that constant's full size.
                unsafe { f(values.as_ptr()) };
                self.consts_epoch.store(epoch, Ordering::Release);
            }
        }
    }
}

/// Counters and times of the JIT, for diagnostics and the measurements in our reports.
#[derive(Debug, Default, Clone)]
pub struct JitStats {
    pub compiles: u64,
    pub compile_time: Duration,
    pub disk_hits: u64,
    pub disk_load_time: Duration,
    pub memory_hits: u64,
    pub rebuilt_corrupt: u64,
}

/// The JIT: compiler, disk cache, in-memory cache, optional source dump.
pub struct Jit {
    pub compiler: Compiler,
    pub cache: DiskCache,
    pub dump_dir: Option<PathBuf>,
    memory: HashMap<String, Arc<HostLibrary>>,
    pub stats: JitStats,
}

impl Jit {
    pub fn new(compiler: Compiler, cache: DiskCache, dump_dir: Option<PathBuf>) -> Jit {
        Jit { compiler, cache, dump_dir, memory: HashMap::new(), stats: JitStats::default() }
    }

    /// Returns the compiled library for `source`, compiling on a cold cache. `what` names the
    /// call for error messages (`op_par_loop 'res_calc' (kernel 'res_calc')`); `tag` names
    /// dumped files.
    pub fn host_library(&mut self, source: &str, what: &str, tag: &str) -> Result<Arc<HostLibrary>> {
        let identity = match self.compiler.identity() {
            Ok(id) => id.to_string(),
            Err(e) => op2_bail!(Compile, "{what}: {}", e.message),
        };
        let key = cache::key(source, &identity, &self.compiler.flags);
        if let Some(lib) = self.memory.get(&key) {
            self.stats.memory_hits += 1;
            return Ok(lib.clone());
        }
        if let Some(dir) = &self.dump_dir {
            let _ = std::fs::create_dir_all(dir);
            let p = dir.join(format!("{tag}-{}.c", &key[..12]));
            if let Err(e) = std::fs::write(&p, source) {
                op2_bail!(Io, "{what}: cannot dump generated source to '{}' (OP2_DUMP_SOURCE): {e}", p.display());
            }
        }
        let t = Instant::now();
        if let Some(path) = self.cache.lookup(&key) {
            if let Ok(lib) = HostLibrary::load(&path) {
                self.stats.disk_hits += 1;
                self.stats.disk_load_time += t.elapsed();
                let lib = Arc::new(lib);
                self.memory.insert(key, lib.clone());
                return Ok(lib);
            }
        }
        if self.cache.lib_path(&key).exists() {
            self.stats.rebuilt_corrupt += 1;
        }
        let lib = Arc::new(self.compile(&key, source, what)?);
        self.stats.compiles += 1;
        self.stats.compile_time += t.elapsed();
        self.memory.insert(key, lib.clone());
        Ok(lib)
    }

    fn compile(&self, key: &str, source: &str, what: &str) -> Result<HostLibrary> {
        let src_tmp = self.cache.temp_path(key, ".c");
        let so_tmp = self.cache.temp_path(key, ".so");
        if let Err(e) = std::fs::write(&src_tmp, source) {
            op2_bail!(Io, "{what}: cannot write generated source '{}': {e}", src_tmp.display());
        }
        let kept_src = self.cache.src_path(key);
        let compiled = self.compiler.compile(&src_tmp, &so_tmp);
        // Keep the source beside the entry under its final name (atomically, like the entry).
        let _ = std::fs::rename(&src_tmp, &kept_src);
        if let Err(diag) = compiled {
            let _ = std::fs::remove_file(&so_tmp);
            op2_bail!(
                Compile,
                "{what}: kernel does not compile (generated source: {}; kernel lines are numbered as in the kernel's own source)\n{diag}",
                kept_src.display()
            );
        }
        if let Ok(warnings) = &compiled {
            if !warnings.is_empty() {
                // Once per loop shape (later runs load the entry and stay quiet); kernel lines
                // are numbered as in the kernel's own source ("kernel:NAME:LINE").
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "op2: warnings compiling {what}:\n{warnings}");
            }
        }
        let path = self.cache.commit(key, &so_tmp).map_err(|e| crate::op2_err!(Io, "{what}: {}", e.message))?;
        HostLibrary::load(&path)
            .map_err(|e| crate::op2_err!(Load, "{what}: cannot load compiled loop '{}': {e}", path.display()))
    }
}
