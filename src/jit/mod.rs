//! Just-in-time compilation of generated host C: compile with the system C compiler, load with
//! libloading, cache in memory and on disk (`cache`).

pub mod cache;
pub(crate) mod child;
pub mod fortran;
pub mod nvrtc;
pub mod pack;
pub mod simd_choice;

use crate::error::Result;
use crate::op2_bail;
use cache::{Dep, DiskCache, Entry, Lookup};
use std::collections::HashMap;
use std::ffi::c_void;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
/// `void op2_loop_list(int start, int end, const int *list, void *const *slots)`
pub type ListFn = unsafe extern "C" fn(i32, i32, *const i32, *const *mut c_void);
/// `void op2_set_constants(void *const *src)`
pub type ConstsFn = unsafe extern "C" fn(*const *const c_void);

/// The host C compiler and its flags.
#[derive(Debug)]
pub struct Compiler {
    pub cc: String,
    /// All flags in order: required, defaults, then the user's `OP2_CFLAGS` (later flags win).
    pub flags: Vec<String>,
    identity: Option<String>,
    target: Option<String>,
}

/// Whether a flag asks the compiler to detect the CPU it runs on.
fn is_native_flag(f: &str) -> bool {
    ["-march=native", "-mcpu=native", "-mtune=native"].contains(&f)
}

impl Compiler {
    pub fn new(cc: &str, extra_flags: &str) -> Compiler {
        let mut flags: Vec<String> = REQUIRED_FLAGS.iter().chain(DEFAULT_FLAGS).map(|s| s.to_string()).collect();
        flags.extend(extra_flags.split_whitespace().map(str::to_string));
        Compiler { cc: cc.to_string(), flags, identity: None, target: None }
    }

    /// The compiler's identity for cache keys: its command and version banner.
    pub fn identity(&mut self) -> Result<&str> {
        if self.identity.is_none() {
            self.probe()?;
        }
        Ok(self.identity.as_deref().unwrap_or(""))
    }

    /// The concrete target that the flags select, for cache keys: empty unless a flag says
    /// `native` (`-march=native`, `-mcpu=native`, `-mtune=native`); then the CPU name and
    /// feature flags the compiler's driver passes to its compiler proper for these flags
    /// (GCC: `-march=rocketlake -mavx2 ... --param l1-cache-size=48`; Clang: `-target-cpu`,
    /// `-target-feature`), so an entry built on one CPU is never loaded on another (a `$HOME`
    /// shared by different machines). Computed once, on first use.
    pub fn target(&mut self) -> Result<&str> {
        if self.target.is_none() {
            self.probe()?;
        }
        Ok(self.target.as_deref().unwrap_or(""))
    }

    /// Asks the compiler once for its identity and, when a flag says `native`, the target: one
    /// `cc FLAGS -### -E -x c /dev/null` (whose output has both) or, without `native`, one
    /// `cc --version`.
    fn probe(&mut self) -> Result<()> {
        let cannot_run = |cc: &str, e: std::io::Error| {
            crate::op2_err!(Compile, "cannot run the C compiler '{cc}' (set OP2_CC): {e}")
        };
        let mut banner = None;
        let mut target = String::new();
        if self.flags.iter().any(|f| is_native_flag(f)) {
            let out =
                child::output(Command::new(&self.cc).args(&self.flags).args(["-###", "-E", "-x", "c", "/dev/null"]))
                    .map_err(|e| cannot_run(&self.cc, e))?;
            let text = String::from_utf8_lossy(&out.stderr);
            if !out.status.success() {
                op2_bail!(
                    Compile,
                    "the C compiler '{}' cannot resolve the target CPU of {}: {}",
                    self.cc,
                    self.flags.join(" "),
                    text.trim()
                );
            }
            target = resolved_target(&text).unwrap_or_else(|| text.to_string());
            banner = text.lines().find(|l| l.contains(" version ")).map(str::to_string);
        }
        let banner = match banner {
            Some(b) => b,
            None => {
                let o = child::output(Command::new(&self.cc).arg("--version")).map_err(|e| cannot_run(&self.cc, e))?;
                if !o.status.success() {
                    op2_bail!(
                        Compile,
                        "the C compiler '{}' failed to report its version: {}",
                        self.cc,
                        String::from_utf8_lossy(&o.stderr).trim()
                    );
                }
                String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").to_string()
            }
        };
        self.identity = Some(format!("{} | {banner}", self.cc));
        self.target = Some(target);
        Ok(())
    }

    /// The instruction-set extensions the flags let the compiler use (`cc FLAGS -dM -E`), by
    /// their `/proc/cpuinfo` names (`pack::ISA_MACROS`).
    pub fn isa(&self) -> Result<Vec<String>> {
        let out = child::output(Command::new(&self.cc).args(&self.flags).args(["-dM", "-E", "-x", "c", "/dev/null"]))
            .map_err(|e| crate::op2_err!(Compile, "cannot run the C compiler '{}' (set OP2_CC): {e}", self.cc))?;
        if !out.status.success() {
            op2_bail!(
                Compile,
                "the C compiler '{}' cannot preprocess with {}: {}",
                self.cc,
                self.flags.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(pack::isa_of_macros(&String::from_utf8_lossy(&out.stdout)))
    }

    /// Compiles `src` to the shared object `out`, writing the list of user (non-system) files
    /// it read to `deps` as a make rule; returns the compiler's warnings (empty when there are
    /// none), or on failure its output.
    /// `objects` (Fortran kernels' link-time-optimisation objects) are linked in, with `-flto`
    /// and the Fortran runtime.
    pub fn compile(
        &self,
        src: &Path,
        out: &Path,
        deps: &Path,
        objects: &[String],
    ) -> std::result::Result<String, String> {
        let mut cmd = Command::new(&self.cc);
        cmd.args(&self.flags);
        if !objects.is_empty() {
            cmd.args(["-flto", "-flto-partition=one", "-fno-semantic-interposition"]);
        }
        cmd.args(["-MMD", "-MT", "op2_entry", "-MF"]).arg(deps).arg("-o").arg(out).arg(src);
        if !objects.is_empty() {
            cmd.args(objects).arg("-lgfortran");
        }
        let res = child::output(cmd.arg("-lm"));
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

/// The target options in a compiler driver's `-###` output (the compiler-proper command line),
/// or None if there are none or `native` is still among them.
fn resolved_target(text: &str) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for line in text.lines().filter(|l| l.starts_with(' ')) {
        let toks: Vec<&str> = line.split_whitespace().map(|t| t.trim_matches('"')).collect();
        let mut i = 0;
        while i < toks.len() {
            let t = toks[i];
            if ["--param", "-target-cpu", "-target-feature", "-tune-cpu"].contains(&t) && i + 1 < toks.len() {
                parts.push(format!("{t} {}", toks[i + 1]));
                i += 1;
            } else if t.starts_with("-m") {
                parts.push(t.to_string());
            }
            i += 1;
        }
    }
    let concrete = parts.iter().any(|p| {
        (p.starts_with("-march=") || p.starts_with("-mcpu=") || p.starts_with("-target-cpu ")) && !p.ends_with("native")
    });
    (concrete && !parts.iter().any(|p| p.ends_with("=native"))).then(|| parts.join(" "))
}

/// A library as the dynamic loader holds it.
///
/// The library is loaded through the descriptor its checks were made on, by a name such as
/// `/proc/self/fd/N`; the loader keeps that name with the library until it is unloaded and
/// answers any later `dlopen` of the same name with it, whatever descriptor N then is. So every
/// library op2 loads gets a name no other library op2 holds loaded has (`LOADED` reserves it from
/// `dlopen` until after `dlclose`): descriptor numbers are reused, so the name varies the number
/// of slashes before N (`/proc/self/fd//N`: the same file to the kernel, another name to the
/// loader). An inode already loaded is shared instead of being loaded again (which would attach a
/// second name to it). The descriptor is closed once the library is loaded: one descriptor per
/// loop shape would run into the process's descriptor limit.
struct Loaded {
    lib: std::mem::ManuallyDrop<libloading::Library>,
    name: String,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        let mut all = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: `lib` is not used again; unloading it under the lock keeps its name reserved
        // until the loader has forgotten it.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.lib) };
        all.retain(|r| r.name != self.name);
    }
}

/// One library in `LOADED`: its entry's (device, inode), its name to the loader, and a handle
/// that does not keep it loaded.
struct LoadedRecord {
    id: (u64, u64),
    name: String,
    lib: std::sync::Weak<Loaded>,
}

/// Libraries op2 has loaded (or is unloading) in this process.
static LOADED: std::sync::Mutex<Vec<LoadedRecord>> = std::sync::Mutex::new(Vec::new());

/// The loader name for descriptor `fd` that no record in `all` has.
fn fresh_name(fd: i32, all: &[LoadedRecord]) -> String {
    let mut name = format!("/proc/self/fd/{fd}");
    let mut slashes = 1;
    while all.iter().any(|r| r.name == name) {
        slashes += 1;
        name = format!("/proc/self/fd{}{fd}", "/".repeat(slashes));
    }
    name
}

/// A loaded host library for one loop.
pub struct HostLibrary {
    pub loop_fn: LoopFn,
    pub consts_fn: Option<ConstsFn>,
    /// `op2_loop_simd`, the vectorised wrapper (`backend::host::codegen::simd`), when the library has one.
    pub simd_fn: Option<LoopFn>,
    /// `op2_loop_list` and `op2_loop_simd_list`, the wrappers over a list of elements (loops
    /// with a map: `backend::host::codegen::has_list`), when the library has them.
    pub list_fn: Option<ListFn>,
    pub simd_list_fn: Option<ListFn>,
    /// Which wrapper runs (`OP2_SIMD`), shared by every call of this library.
    pub simd: Arc<simd_choice::SimdChooser>,
    /// The constant epoch whose values were last loaded into this library (u64::MAX: none).
    pub consts_epoch: AtomicU64,
    /// The cache entry's path (for messages; the library was loaded through its descriptor).
    pub path: PathBuf,
    /// Files the library was compiled from, with their contents' hashes.
    pub deps: Vec<Dep>,
    _loaded: Arc<Loaded>,
}

impl HostLibrary {
    /// Loads exactly the file the entry was verified through.
    fn load(entry: Entry, path: PathBuf) -> std::result::Result<HostLibrary, String> {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        use std::os::unix::fs::MetadataExt;
        let meta = entry.file.metadata().map_err(|e| e.to_string())?;
        let id = (meta.dev(), meta.ino());
        let loaded = loop {
            let mut all = LOADED.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(r) = all.iter().find(|r| r.id == id) {
                match r.lib.upgrade() {
                    Some(l) => break l,
                    None => {
                        // Being unloaded by another thread: wait until the loader forgot it.
                        drop(all);
                        std::thread::yield_now();
                        continue;
                    }
                }
            }
            let name = fresh_name(entry.file.as_raw_fd(), &all);
            // SAFETY: the file is a library we compiled from generated code (verified by its
            // trailer, owned by this user and writable by nobody else); its initialisers are
            // the C compiler's defaults.
            let lib = unsafe { Library::open(Some(&name), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| e.to_string())?;
            let l = Arc::new(Loaded { lib: std::mem::ManuallyDrop::new(lib.into()), name: name.clone() });
            all.push(LoadedRecord { id, name, lib: Arc::downgrade(&l) });
            break l;
        };
        // SAFETY: the symbols have exactly these signatures in every generated host library.
        let loop_fn = unsafe { loaded.lib.get::<LoopFn>(b"op2_loop\0") }.map_err(|e| e.to_string())?;
        let loop_fn = *loop_fn;
        let consts_fn = unsafe { loaded.lib.get::<ConstsFn>(b"op2_set_constants\0") }.ok().map(|s| *s);
        // SAFETY: as above; op2_simd_mode is a `const int` and op2_simd_refused a
        // NUL-terminated `const char[]` wherever they exist (backend::host::codegen::simd).
        let simd_fn = unsafe { loaded.lib.get::<LoopFn>(b"op2_loop_simd\0") }.ok().map(|s| *s);
        let list_fn = unsafe { loaded.lib.get::<ListFn>(b"op2_loop_list\0") }.ok().map(|s| *s);
        let simd_list_fn = unsafe { loaded.lib.get::<ListFn>(b"op2_loop_simd_list\0") }.ok().map(|s| *s);
        let forced =
            unsafe { loaded.lib.get::<*const i32>(b"op2_simd_mode\0") }.ok().is_some_and(|p| unsafe { **p } == 1);
        let refused = unsafe { loaded.lib.get::<*const std::ffi::c_char>(b"op2_simd_refused\0") }
            .ok()
            .map(|p| unsafe { std::ffi::CStr::from_ptr(*p) }.to_string_lossy().into_owned());
        let simd = Arc::new(simd_choice::SimdChooser::new(simd_fn.is_some(), forced, refused));
        Ok(HostLibrary {
            loop_fn,
            consts_fn,
            simd_fn,
            list_fn,
            simd_list_fn,
            simd,
            consts_epoch: AtomicU64::new(u64::MAX),
            path,
            deps: entry.deps,
            _loaded: loaded,
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
    /// Entries rebuilt because something unusable was in their place (corrupt, truncated, not a
    /// private regular file).
    pub rebuilt_corrupt: u64,
    /// Libraries rebuilt because a file they include changed.
    pub rebuilt_stale: u64,
    /// Loops loaded from loop packs (`OP2_LOOP_PACK`), and the time that took.
    pub pack_loads: u64,
    pub pack_load_time: Duration,
}

/// The file name under `OP2_DUMP_SOURCE` for a loop named `tag` with cache key `key`: only
/// `[A-Za-z0-9_.-]`, no leading dot, at most 64 characters of the name, then the key's first
/// 12 hex digits, so the name never leaves the dump directory, never hides, and fits NAME_MAX.
pub fn dump_file_name(tag: &str, key: &str) -> String {
    let mut name: String = tag
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' { c } else { '_' })
        .take(64)
        .collect();
    if name.starts_with('.') {
        name.replace_range(..1, "_");
    }
    if name.is_empty() {
        name.push_str("loop");
    }
    format!("{name}-{}.c", &key[..key.len().min(12)])
}

/// Writes `source` to `dir/name` through a temporary file and a rename, so whatever was there
/// (a symlink, a FIFO) is replaced, never followed.
fn dump_source(dir: &Path, name: &str, source: &str) -> std::io::Result<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::create_dir_all(dir)?;
    let dest = dir.join(name);
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&tmp)
        .and_then(|mut f| f.write_all(source.as_bytes()))
        .and_then(|_| std::fs::rename(&tmp, &dest));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|_| dest)
}

/// Set once a dump has failed (the warning is printed once per process).
static DUMP_WARNED: AtomicBool = AtomicBool::new(false);

/// Writes a dump; a failure warns once per process and never fails the loop.
fn dump_named(dir: &Path, name: &str, source: &str, what: &str) {
    if let Err(e) = dump_source(dir, name, source) {
        if !DUMP_WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "op2 warning: {what}: cannot dump generated source to '{}' (OP2_DUMP_SOURCE): {e}; the loop runs anyway, and further dump failures are not reported",
                dir.join(name).display()
            );
        }
    }
}

/// A device backend's generated source under `OP2_DUMP_SOURCE` (`dir`): named as host dumps
/// are (the loop's sanitised name, then the first hex digits of the source's SHA-256), with the
/// target's extension (`cl`, `cu`). Called once per distinct source a backend builds.
pub fn dump_device_source(dir: &Path, tag: &str, ext: &str, source: &str, what: &str) {
    use sha2::Digest;
    let key = crate::codegen::hex(&sha2::Sha256::digest(source.as_bytes()));
    let mut name = dump_file_name(tag, &key);
    name.truncate(name.len() - 1);
    name.push_str(ext);
    dump_named(dir, &name, source, what);
}

/// The JIT: compiler, disk cache, in-memory cache, optional source dump.
pub struct Jit {
    pub compiler: Compiler,
    pub cache: DiskCache,
    pub dump_dir: Option<PathBuf>,
    memory: HashMap<String, Arc<HostLibrary>>,
    pub stats: JitStats,
    /// Loop packs (`OP2_LOOP_PACK`), searched before the compiler, in order.
    pub packs: Vec<pack::Pack>,
    /// `OP2_JIT=off`: a loop not found in a pack is an error; the compiler is never run.
    pub jit_off: bool,
}

impl Jit {
    pub fn new(compiler: Compiler, cache: DiskCache, dump_dir: Option<PathBuf>) -> Jit {
        Jit {
            compiler,
            cache,
            dump_dir,
            memory: HashMap::new(),
            stats: JitStats::default(),
            packs: Vec::new(),
            jit_off: false,
        }
    }

    /// Returns the compiled library for `source`, compiling on a cold cache or when a file the
    /// source includes has changed. `what` names the call for error messages
    /// (`op_par_loop 'res_calc' (kernel 'res_calc')`); `tag` names dumped files.
    pub fn host_library(&mut self, source: &str, what: &str, tag: &str) -> Result<Arc<HostLibrary>> {
        if !self.packs.is_empty() || self.jit_off {
            if let Some(lib) = self.in_packs(source, what, tag)? {
                return Ok(lib);
            }
        }
        let identity = match self.compiler.identity() {
            Ok(id) => id.to_string(),
            Err(e) => op2_bail!(Compile, "{what}: {}", e.message),
        };
        let target = match self.compiler.target() {
            Ok(t) => t.to_string(),
            Err(e) => op2_bail!(Compile, "{what}: {}", e.message),
        };
        let key = cache::key(source, &identity, &target, &self.compiler.flags);
        if let Some(lib) = self.memory.get(&key) {
            if cache::stale_dep(&lib.deps).is_none() {
                self.stats.memory_hits += 1;
                return Ok(lib.clone());
            }
            // An included file changed: look again (another process may have rebuilt it).
            self.memory.remove(&key);
        }
        if let Some(dir) = &self.dump_dir {
            dump_named(dir, &dump_file_name(tag, &key), source, what);
        }
        let t = Instant::now();
        match self.cache.lookup(&key) {
            Lookup::Hit(entry) => {
                if cache::stale_dep(&entry.deps).is_some() {
                    self.stats.rebuilt_stale += 1;
                } else {
                    match HostLibrary::load(entry, self.cache.lib_path(&key)) {
                        Ok(lib) => {
                            self.stats.disk_hits += 1;
                            self.stats.disk_load_time += t.elapsed();
                            self.keep_simd_verdict(&key, &lib);
                            let lib = Arc::new(lib);
                            self.memory.insert(key, lib.clone());
                            return Ok(lib);
                        }
                        Err(_) => self.stats.rebuilt_corrupt += 1,
                    }
                }
            }
            Lookup::Rebuild(_) => self.stats.rebuilt_corrupt += 1,
            Lookup::Missing => {}
        }
        let lib = self.compile(&key, source, what)?;
        self.keep_simd_verdict(&key, &lib);
        let lib = Arc::new(lib);
        self.stats.compiles += 1;
        self.stats.compile_time += t.elapsed();
        self.memory.insert(key, lib.clone());
        Ok(lib)
    }

    /// The loop compiled from exactly `source` in the first pack that has it (memoised like
    /// compiled loops); with `OP2_JIT=off`, a loop in no pack is an `OP2_ERR_COMPILE` naming it
    /// and saying why it is missing.
    fn in_packs(&mut self, source: &str, what: &str, tag: &str) -> Result<Option<Arc<HostLibrary>>> {
        let hash = pack::source_hash(source.as_bytes());
        let key = format!("pack:{hash}");
        if let Some(lib) = self.memory.get(&key) {
            self.stats.memory_hits += 1;
            return Ok(Some(lib.clone()));
        }
        let t = Instant::now();
        for p in &self.packs {
            if let Some(e) = p.find(pack::HOST, &hash) {
                let shown = PathBuf::from(format!("{}#{}", p.path.display(), e.loop_name));
                let file = p.library_file(e).map_err(|err| {
                    crate::op2_err!(Load, "{what}: cannot load loop pack entry '{}': {err}", shown.display())
                })?;
                let lib = HostLibrary::load(Entry { file, deps: Vec::new() }, shown.clone()).map_err(|err| {
                    crate::op2_err!(Load, "{what}: cannot load loop pack entry '{}': {err}", shown.display())
                })?;
                let lib = Arc::new(lib);
                self.stats.pack_loads += 1;
                self.stats.pack_load_time += t.elapsed();
                self.memory.insert(key, lib.clone());
                return Ok(Some(lib));
            }
        }
        if !self.jit_off {
            return Ok(None);
        }
        let why = pack::missing(&self.packs, pack::HOST, tag);
        op2_bail!(Compile, "{what}: not compiled: OP2_JIT=off and {why}")
    }

    /// `OP2_SIMD=auto`'s verdict is kept with the compiled code: a verdict an earlier run wrote
    /// beside the entry (`<key>.simd`) is taken; otherwise the one this run makes is written
    /// there. The key covers the CPU, so a verdict is never taken to another machine's CPU.
    fn keep_simd_verdict(&self, key: &str, lib: &HostLibrary) {
        use crate::jit::simd_choice::Variant;
        if !lib.simd.is_auto() {
            return;
        }
        match self.cache.read_note(key, "simd").as_deref().map(str::trim) {
            Some("simd") => lib.simd.remember(Variant::Simd),
            Some("scalar") => lib.simd.remember(Variant::Scalar),
            _ => {
                let cache = self.cache.clone();
                let key = key.to_string();
                lib.simd.on_decided(Box::new(move |v| {
                    let _ = cache.write_note(&key, "simd", if v == Variant::Simd { "simd" } else { "scalar" });
                }));
            }
        }
    }

    fn compile(&self, key: &str, source: &str, what: &str) -> Result<HostLibrary> {
        let scratch = self.cache.scratch(key).map_err(|e| crate::op2_err!(Io, "{what}: {}", e.message))?;
        let src = scratch.path(cache::SCRATCH_SRC);
        if let Err(e) = scratch.write(cache::SCRATCH_SRC, source.as_bytes()) {
            op2_bail!(Io, "{what}: cannot write generated source '{}': {e}", src.display());
        }
        let start = std::time::SystemTime::now();
        let objects = fortran::objects_in(source);
        let compiled = self.compiler.compile(
            &src,
            &scratch.path(cache::SCRATCH_LIB),
            &scratch.path(cache::SCRATCH_DEPS),
            &objects,
        );
        // Keep the source beside the entry under its final name (atomically, like the entry).
        let kept_src = self.cache.src_path(key);
        let _ = scratch.keep(cache::SCRATCH_SRC, &DiskCache::src_name(key));
        if let Err(diag) = compiled {
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
        // The user files the source included, hashed now; the source itself is ours.
        let listed = scratch.read(cache::SCRATCH_DEPS).map(|t| cache::parse_make_deps(&t)).unwrap_or_default();
        let deps = listed.iter().filter(|p| **p != src).map(|p| Dep::of_compiled(p, start)).collect();
        let entry = scratch.commit(key, deps).map_err(|e| crate::op2_err!(Io, "{what}: {}", e.message))?;
        let path = self.cache.lib_path(key);
        HostLibrary::load(entry, path.clone())
            .map_err(|e| crate::op2_err!(Load, "{what}: cannot load compiled loop '{}': {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_names_stay_inside_the_directory() {
        let k = "0123456789abcdef";
        assert_eq!(dump_file_name("res_calc", k), "res_calc-0123456789ab.c");
        assert_eq!(dump_file_name("../x", k), "_._x-0123456789ab.c");
        assert_eq!(dump_file_name("/abs/p", k), "_abs_p-0123456789ab.c");
        assert_eq!(dump_file_name(".hidden", k), "_hidden-0123456789ab.c");
        assert_eq!(dump_file_name("", k), "loop-0123456789ab.c");
        assert_eq!(dump_file_name("é", k), "_-0123456789ab.c");
        let long = dump_file_name(&"a/".repeat(300), k);
        assert!(long.len() <= 64 + 15 && !long.contains('/'), "{long}");
    }

    #[test]
    fn native_target_resolves_to_a_concrete_cpu() {
        let mut c = Compiler::new("cc", "");
        if !c.flags.iter().any(|f| f == "-march=native") {
            c.flags.push("-march=native".to_string());
        }
        let t = c.target().unwrap().to_string();
        assert!(t.contains("-march=") || t.contains("-target-cpu "), "{t}");
        assert!(!t.contains("native"), "{t}");
        // Without `native` nothing is resolved.
        let mut plain = Compiler::new("cc", "");
        plain.flags.retain(|f| !is_native_flag(f));
        assert_eq!(plain.target().unwrap(), "");
    }

    #[test]
    fn resolved_target_parses_gcc_and_clang() {
        let gcc = " /usr/lib/gcc/x86_64-linux-gnu/12/cc1 -E -quiet /dev/null \"-march=rocketlake\" -mmmx -mno-sse4a --param l1-cache-size=48 -mtune=rocketlake -O3\n";
        assert_eq!(
            resolved_target(gcc).unwrap(),
            "-march=rocketlake -mmmx -mno-sse4a --param l1-cache-size=48 -mtune=rocketlake"
        );
        let clang =
            " \"/usr/bin/clang-15\" \"-cc1\" \"-target-cpu\" \"znver3\" \"-target-feature\" \"+avx2\" \"-O3\"\n";
        assert_eq!(resolved_target(clang).unwrap(), "-target-cpu znver3 -target-feature +avx2");
        assert_eq!(resolved_target(" cc1 -march=native\n"), None);
        assert_eq!(resolved_target("no command lines\n"), None);
    }
}
