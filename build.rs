// Gives the C library a SONAME so consumers (CMake, pkg-config users) record `libop2.so`, not
// the absolute path of the build tree. With the `petsc` feature, compiles op2's PETSc shim
// (src/mat/petsc_shim.c) against `pkg-config PETSc` and links PETSc (and OpenMPI, whose headers
// PETSc's .pc does not name: `pkg-config ompi-c`).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libop2.so");
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "petsc")]
    petsc();
}

#[cfg(feature = "petsc")]
fn petsc() {
    println!("cargo:rerun-if-changed=src/mat/petsc_shim.c");
    let petsc = match pkg_config::Config::new().cargo_metadata(true).probe("PETSc") {
        Ok(l) => l,
        Err(e) => panic!(
            "op2's `petsc` feature (on by default) needs PETSc's development files (Debian: apt-get install petsc-dev), \
             found through `pkg-config PETSc`: {e}. Build with `--no-default-features --features hdf5` to leave PETSc out."
        ),
    };
    let mut build = cc::Build::new();
    build.file("src/mat/petsc_shim.c").warnings(true);
    for p in &petsc.include_paths {
        build.include(p);
    }
    // PETSc's headers include <mpi.h>; Debian's PETSc.pc does not say where it is.
    if let Ok(mpi) = pkg_config::Config::new().cargo_metadata(true).probe("ompi-c") {
        for p in &mpi.include_paths {
            build.include(p);
        }
    }
    build.compile("op2_petsc_shim");
}
