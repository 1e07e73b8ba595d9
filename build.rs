// Gives the C library a SONAME so consumers (CMake, pkg-config users) record `libop2.so`, not
// the absolute path of the build tree. With the `petsc` feature, compiles op2's PETSc shim
// (src/mat/petsc_shim.c) against `pkg-config PETSc` and links PETSc (and OpenMPI, whose headers
// PETSc's .pc does not name: `pkg-config ompi-c`).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libop2.so");
    println!("cargo:rerun-if-changed=build.rs");
    // Parallel HDF5 (the MPI-IO file driver) when the HDF5 that hdf5-metno-sys links has it
    // (Debian's libhdf5-openmpi-dev): src/io/hdf5.rs then reads and writes collectively.
    println!("cargo:rustc-check-cfg=cfg(op2_hdf5_mpio)");
    if std::env::var("DEP_HDF5_HAVE_PARALLEL").is_ok_and(|v| v == "1") {
        println!("cargo:rustc-cfg=op2_hdf5_mpio");
    }
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
