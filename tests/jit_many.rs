//! Many loaded libraries in one process do not use up file descriptors: with the descriptor
//! limit lowered to 40, 70 distinct libraries load and each still runs its own code (the loader
//! knows each by a `/proc/self/fd/N` name, so names are reused only when no library holds them).
//! Its own test binary: it changes the process's descriptor limit.

use op2::jit::{cache::DiskCache, Compiler, Jit};

fn source(k: i32) -> String {
    format!(
        "__attribute__((visibility(\"default\"))) void op2_loop(int start, int end, void *const *slots) {{\n\
           int *y = (int *)slots[0];\n\
           for (int i = start; i < end; i++) y[i] = {k} + i;\n\
         }}\n"
    )
}

fn call(lib: &op2::jit::HostLibrary) -> Vec<i32> {
    let mut y = vec![0i32; 2];
    let slots = [y.as_mut_ptr() as *mut std::ffi::c_void];
    // SAFETY: the library's op2_loop writes slots[0][start..end] as ints.
    unsafe { (lib.loop_fn)(0, 2, slots.as_ptr()) };
    y
}

#[test]
fn seventy_libraries_under_a_limit_of_forty_descriptors() {
    let dir = std::env::temp_dir().join(format!("op2-jit-many-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: plain getrlimit/setrlimit on valid structs.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut old), 0);
        let lim = libc::rlimit { rlim_cur: 40, rlim_max: old.rlim_max };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
    let mut jit = Jit::new(Compiler::new("cc", "-O0"), DiskCache::open(&dir).unwrap(), None);
    let libs: Vec<_> = (0..70).map(|k| jit.host_library(&source(k), "t", "t").unwrap()).collect();
    for (k, lib) in libs.iter().enumerate() {
        assert_eq!(call(lib), vec![k as i32, k as i32 + 1]);
    }
    // Drop every other one, then load them again from disk in a new session.
    let kept: Vec<_> = libs.into_iter().step_by(2).collect();
    drop(jit);
    let mut again = Jit::new(Compiler::new("cc", "-O0"), DiskCache::open(&dir).unwrap(), None);
    for k in 0..70 {
        assert_eq!(call(&again.host_library(&source(k), "t", "t").unwrap()), vec![k, k + 1]);
    }
    assert_eq!((again.stats.compiles, again.stats.disk_hits), (0, 70));
    for (i, lib) in kept.iter().enumerate() {
        assert_eq!(call(lib), vec![2 * i as i32, 2 * i as i32 + 1]);
    }
    // SAFETY: restores the limit read above.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &old) };
    let _ = std::fs::remove_dir_all(&dir);
}
