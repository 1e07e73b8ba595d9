// Gives the C library a SONAME so consumers (CMake, pkg-config users) record `libop2.so`, not
// the absolute path of the build tree.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libop2.so");
    println!("cargo:rerun-if-changed=build.rs");
}
