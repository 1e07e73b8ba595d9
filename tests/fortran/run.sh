#!/usr/bin/env bash
# Fortran tests, run by `make test-fortran` against the installed package in OP2_PREFIX:
#   1. configure and build tests/fortran and examples-fortran with CMake (find_package(OP2));
#   2. run every tests/fortran/tNNN-*-f test on every backend of TEST_BACKENDS (a test passes
#      when it exits 0 and prints nothing);
#   3. check every C function of op2.h has a Fortran binding (check_bindings.sh);
#   4. run the Fortran Airfoil and the C Airfoil on a small generated mesh and compare their rms
#      logs: identical bytes on seq, 1e-12 relative on the other backends.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
#
# Environment: OP2_PREFIX (installed op2), OP2_BUILD (build directory), OP2_BIN (C examples:
# airfoil, op2-meshgen), TEST_BACKENDS, CMAKE, AIRFOIL_CELLS (mesh size, default 2400),
# AIRFOIL_ITERS (default 30), TEST_TIMEOUT (seconds per run, default 120).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OP2_BUILD:-$root/build}
prefix=${OP2_PREFIX:-$build/prefix}
bin=${OP2_BIN:-$build/bin}
backends=${TEST_BACKENDS:-seq}
cmake=${CMAKE:-cmake}
cells=${AIRFOIL_CELLS:-2400}
iters=${AIRFOIL_ITERS:-30}
work=$build/fortran
jobs=$(nproc 2>/dev/null || echo 2)
to=${TEST_TIMEOUT:-120}

. "$root/tests/lib/report.sh"

# The CMake builds must not inherit the calling make (MAKE, MAKEFLAGS with its variables).
unset MAKE MAKEFLAGS MFLAGS MAKELEVEL

mkdir -p "$work"
log=$work/log.txt

# 1. Build through the installed package.
build_project() { # name source-dir build-dir
  if "$cmake" -S "$2" -B "$3" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$log" 2>&1 &&
     "$cmake" --build "$3" -j "$jobs" >>"$log" 2>&1; then
    if grep -q "^OP2_DIR:PATH=$prefix/lib/cmake/OP2\$" "$3/CMakeCache.txt"; then
      pass "cmake build $1 (find_package(OP2) from $prefix)"
      return 0
    fi
    echo "OP2 was found elsewhere: $(grep '^OP2_DIR' "$3/CMakeCache.txt")" >"$log"
  fi
  fail "cmake build $1" "$log"
  return 1
}
build_project tests/fortran "$root/tests/fortran" "$work/tests" || finish
build_project examples-fortran "$root/examples-fortran" "$work/examples" || finish

# 2. Every test on every backend.
for exe in "$work"/tests/t[0-9][0-9][0-9]-*-f; do
  [ -x "$exe" ] || continue
  name=$(basename "$exe")
  for backend in $backends; do
    if (cd "$work" && timeout "$to" "$exe" "$backend") >"$log" 2>&1; then
      if [ -s "$log" ]; then
        fail "$name $backend (passed but was not silent)" "$log"
      else
        pass "$name $backend"
      fi
    else
      echo "(exit status $?)" >>"$log"
      fail "$name $backend" "$log"
    fi
  done
done

# 3. Bindings.
if bash "$root/tests/fortran/check_bindings.sh" >"$log" 2>&1; then
  pass "check_bindings.sh"
else
  fail "check_bindings.sh" "$log"
fi

# 4. Airfoil: Fortran driver against the C one.
mesh=$work/airfoil_mesh.dat
if [ ! -x "$bin/op2-meshgen" ] || [ ! -x "$bin/airfoil" ]; then
  echo "missing $bin/op2-meshgen or $bin/airfoil (make examples)" >"$log"
  fail "airfoil (Fortran vs C)" "$log"
  finish
fi
if ! timeout "$to" "$bin/op2-meshgen" --cells "$cells" -o "$mesh" >"$log" 2>&1; then
  fail "op2-meshgen --cells $cells" "$log"
  finish
fi
if ! (cd "$work" && OP2_BACKEND=seq timeout "$to" "$bin/airfoil" --mesh "$mesh" --iters "$iters" \
        --rms-log "$work/rms_c_seq.txt") >"$log" 2>&1; then
  fail "C airfoil (seq), the reference" "$log"
  finish
fi
for backend in $backends; do
  out=$work/rms_f_$backend.txt
  if ! (cd "$work" && timeout "$to" "$work/examples/airfoil/airfoil_f" --mesh "$mesh" --iters "$iters" \
          --rms-log "$out" --backend "$backend") >"$log" 2>&1; then
    fail "airfoil_f $backend" "$log"
    continue
  fi
  if [ "$(wc -l <"$out")" -ne "$iters" ]; then
    echo "rms log has $(wc -l <"$out") lines, expected $iters" >"$log"
    fail "airfoil_f $backend" "$log"
  elif [ "$backend" = seq ]; then
    if cmp -s "$out" "$work/rms_c_seq.txt"; then
      pass "airfoil_f seq: rms log identical to the C airfoil's"
    else
      diff "$work/rms_c_seq.txt" "$out" | head -n 10 >"$log"
      fail "airfoil_f seq: rms log differs from the C airfoil's" "$log"
    fi
  elif awk 'NR == FNR { ref[$1] = $2; next }
            { d = $2 - ref[$1]; if (d < 0) d = -d; r = ref[$1] < 0 ? -ref[$1] : ref[$1];
              if (!($1 in ref) || d > 1e-12 * r) { print "iteration " $1 ": " $2 " vs " ref[$1]; bad = 1 } }
            END { exit bad }' "$work/rms_c_seq.txt" "$out" >"$log" 2>&1; then
    pass "airfoil_f $backend: rms within 1e-12 of the C airfoil on seq"
  else
    fail "airfoil_f $backend: rms differs from the C airfoil on seq" "$log"
  fi
done

finish
