#!/usr/bin/env bash
# Consumer tests: op2 as a user outside this repository gets it.
#   1. `make install PREFIX=<tmp>/stage`, then move the tree to <tmp>/elsewhere/op2 (the
#      package must be relocatable: nothing in it may name the staging path or this repository);
#   2. copy cmake-c, cmake-cxx, cmake-fortran and cmake-op2-style (a C++ program written for
#      OP2: op_seq.h, a kernel function from its header) out of the repository and build each
#      with CMake find_package(OP2) from the moved prefix; build cmake-c/main.c with plain
#      `cc $(pkg-config --cflags --libs op2)`, and the OP2-style program with OP2's own link
#      line (-lop2_seq -lop2_hdf5); check the OP2-style kernel takes the JIT tier;
#   3. run each program on every backend of TEST_BACKENDS (it checks its own values);
#   4. check with readelf that the executables need libop2.so by its SONAME and record no path
#      of this repository or of the staging prefix.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
#
# Environment: MAKE, CMAKE, CC, TEST_BACKENDS, TEST_TIMEOUT (seconds per run, default 120);
# KEEP=1 keeps the temporary directory.
set -u
# Hang guards scale with the machine's load (tests/lib/budget.sh).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../lib" && pwd)/budget.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
make=${MAKE:-make}
cmake=${CMAKE:-cmake}
cc=${CC:-cc}
backends=${TEST_BACKENDS:-seq}
jobs=$(nproc 2>/dev/null || echo 2)
to=${TEST_TIMEOUT:-120}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/op2-consumer.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "consumer: keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
log=$tmp/log.txt

. "$root/tests/lib/report.sh"

# 1. Install, then move the tree.
stage=$tmp/stage
prefix=$tmp/elsewhere/op2
# $make may carry options (MAKE="make -f ..."): split it on purpose.
# shellcheck disable=SC2086
if $make -C "$root" --no-print-directory install PREFIX="$stage" >"$log" 2>&1; then
  pass "make install PREFIX=$stage"
else
  fail "make install" "$log"
  finish
fi
mkdir -p "$tmp/elsewhere"
mv "$stage" "$prefix"
# From here on we are a user outside this repository: nothing of the calling make leaks into the
# CMake builds (MAKE, MAKEFLAGS with its command-line variables).
unset MAKE MAKEFLAGS MFLAGS MAKELEVEL

expected_files="lib/libop2.so bin/op2-pack include/op2.h share/op2/fortran/op2.F90 share/op2/fortran/op2_fortran.F90
share/op2/fortran/op2_fortran_reference.F90 lib/cmake/OP2/OP2Config.cmake
lib/cmake/OP2/OP2ConfigVersion.cmake lib/pkgconfig/op2.pc include/op_seq.h include/op_lib_core.h
include/op_lib_c.h include/op_lib_cpp.h include/op_lib_mpi.h include/op_hdf5.h include/op_profile.h
lib/libop2_seq.so lib/libop2_mpi.so lib/libop2_hdf5.so"
missing=""
for f in $expected_files; do [ -f "$prefix/$f" ] || missing="$missing $f"; done
if [ -z "$missing" ]; then pass "installed tree complete"; else
  echo "missing:$missing" >"$log"
  fail "installed tree complete" "$log"
fi
# The two binaries carry their source paths in debug information (release profile, debug = 1).
if grep -rlF -e "$stage" -e "$root" "$prefix" --exclude=libop2.so --exclude=op2-pack >"$log" 2>&1; then
  fail "installed text files name neither the staging prefix nor the repository" "$log"
else
  pass "installed text files name neither the staging prefix nor the repository"
fi
if readelf -d "$prefix/lib/libop2.so" >"$log" 2>&1 && grep -q 'SONAME.*\[libop2\.so\]' "$log" &&
   ! grep -E 'R(UN)?PATH' "$log" | grep -qF -e "$root" -e "$stage"; then
  pass "libop2.so: SONAME libop2.so, no build-tree run path"
else
  fail "libop2.so: SONAME libop2.so, no build-tree run path" "$log"
fi

# 2-4. Build out of tree, run, inspect.
mkdir -p "$tmp/src" "$tmp/build"
cp -R "$root/tests/consumer/cmake-c" "$root/tests/consumer/cmake-cxx" \
      "$root/tests/consumer/cmake-fortran" "$root/tests/consumer/cmake-op2-style" "$tmp/src/"

check_elf() { # label exe
  if readelf -d "$2" >"$log" 2>&1 && grep -q 'NEEDED.*\[libop2\.so\]' "$log" &&
     ! grep -qF -e "$root" -e "$stage" "$log"; then
    pass "$1: NEEDED libop2.so, no path of the repository or the staging prefix"
  else
    fail "$1: NEEDED libop2.so, no path of the repository or the staging prefix" "$log"
  fi
}

run_everywhere() { # label exe [env assignments...]
  local label=$1 exe=$2 backend
  shift 2
  for backend in $backends; do
    if (cd "$tmp" && env -u LD_LIBRARY_PATH "$@" timeout "$(budget "$to")" "$exe" "$backend") >"$log" 2>&1; then
      if [ -s "$log" ]; then fail "$label $backend (passed but was not silent)" "$log"; else
        pass "$label $backend"
      fi
    else
      echo "(exit status $?)" >>"$log"
      fail "$label $backend" "$log"
    fi
  done
}

for project in cmake-c cmake-cxx cmake-fortran cmake-op2-style; do
  exe=$tmp/build/$project/consumer_${project#cmake-}
  if "$cmake" -S "$tmp/src/$project" -B "$tmp/build/$project" -DCMAKE_PREFIX_PATH="$prefix" \
       -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$log" 2>&1 &&
     "$cmake" --build "$tmp/build/$project" -j "$jobs" >>"$log" 2>&1; then
    if grep -q "^OP2_DIR:PATH=$prefix/lib/cmake/OP2\$" "$tmp/build/$project/CMakeCache.txt"; then
      pass "$project: find_package(OP2) from the moved prefix, build"
    else
      grep '^OP2_DIR' "$tmp/build/$project/CMakeCache.txt" >"$log"
      fail "$project: find_package(OP2) found another op2" "$log"
    fi
  else
    fail "$project: configure and build" "$log"
    continue
  fi
  check_elf "$project" "$exe"
  run_everywhere "$project" "$exe"
done

# pkg-config, exactly as the man page says: flags from op2.pc, nothing else.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pc_exe=$tmp/build/pkgconfig-c
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
if [ "$(pkg-config --modversion op2 2>"$log")" = "$version" ]; then
  pass "pkg-config --modversion op2 is $version"
else
  fail "pkg-config --modversion op2 is $version" "$log"
fi
libdir=$(pkg-config --variable=libdir op2)
if [ "$(cd "$libdir" 2>/dev/null && pwd -P)" = "$(cd "$prefix/lib" && pwd -P)" ]; then
  pass "pkg-config libdir resolves to the moved prefix"
else
  echo "libdir=$libdir, prefix=$prefix" >"$log"
  fail "pkg-config libdir resolves to the moved prefix" "$log"
fi
# shellcheck disable=SC2046 # word splitting of pkg-config's output is the point
if (cd "$tmp" && "$cc" -o "$pc_exe" "$tmp/src/cmake-c/main.c" $(pkg-config --cflags --libs op2)) \
     >"$log" 2>&1; then
  pass "pkg-config: cc \$(pkg-config --cflags --libs op2)"
  check_elf "pkg-config" "$pc_exe"
  run_everywhere "pkg-config" "$pc_exe" LD_LIBRARY_PATH="$libdir"
else
  fail "pkg-config: cc \$(pkg-config --cflags --libs op2)" "$log"
fi

# The OP2-style program with OP2's own link line (OP2-Common's c_app.mk: -lop2_seq -lop2_hdf5),
# compiled as OP2's makefiles do (a relative source name, the program beside its source) and
# run from elsewhere: its kernel header beside its source (relative __FILE__, resolved against
# the program's directory) must give the JIT tier.
src=$tmp/src/cmake-op2-style
op2_exe=$src/op2-style-seq
if (cd "$src" && c++ -O2 -I. -I"$prefix/include" main.cpp -L"$prefix/lib" -lop2_seq -lop2_hdf5 \
      -Wl,-rpath,"$prefix/lib" -o "$op2_exe") >"$log" 2>&1; then
  pass "OP2's link line: c++ ... -lop2_seq -lop2_hdf5"
  run_everywhere "op2-style (OP2's link line)" "$op2_exe"
  if (cd "$tmp" && OP2_DIAGNOSTICS=1 timeout "$(budget "$to")" "$op2_exe" seq) >"$log" 2>&1 &&
     grep -qF "op2: C kernel 'ring_flux': JIT tier: compiled from '$src/ring_flux.h'" "$log"; then
    pass "op2-style: ring_flux takes the JIT tier from the header beside its source"
  else
    fail "op2-style: ring_flux takes the JIT tier from the header beside its source" "$log"
  fi
else
  fail "OP2's link line: c++ ... -lop2_seq -lop2_hdf5" "$log"
fi

finish
