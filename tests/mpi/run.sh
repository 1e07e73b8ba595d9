#!/usr/bin/env bash
# MPI tests: builds every tests/mpi/t8*.c with mpicc (and t8*-f.f90 with mpif90 against the
# module fortran/op2.F90) and runs each under `mpiexec -n N` for every N its "mpi-n:" line
# lists (0: without a launcher), on each backend given as an argument (default: seq) that its
# "mpi-backends:" line
# (default: all) allows. A test passes when every process exits 0 and prints nothing; a test
# with an "mpi-expect-fail: TEXT" line passes when the job exits non-zero, within the timeout,
# and its output contains TEXT. Prints one line per failure and "N passed, N failed".
#
# Environment: MPICC (mpicc), MPIFC (mpif90), MPIEXEC (mpiexec), LIBDIR (target/release),
# INC (include), OP2_CACHE_DIR (build/cache), TEST_TIMEOUT (seconds per run, 120), TESTS (a
# subset of test names), TEST_OUT (build/tests/mpi).
set -u

cd "$(dirname "$0")/../.." || exit 2

MPICC=${MPICC:-mpicc}
MPIFC=${MPIFC:-mpif90}
MPIEXEC=${MPIEXEC:-mpiexec}
LIBDIR=${LIBDIR:-target/release}
INC=${INC:-include}
OUT=${TEST_OUT:-build/tests/mpi}
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
. tests/lib/budget.sh
OP2_CACHE_DIR=${OP2_CACHE_DIR:-build/cache}
mkdir -p "$OUT" "$OP2_CACHE_DIR" || exit 2
OP2_CACHE_DIR=$(cd "$OP2_CACHE_DIR" && pwd) || exit 2
export OP2_CACHE_DIR
LIBDIR_ABS=$(cd "$LIBDIR" 2>/dev/null && pwd) || { echo "run.sh: no library directory $LIBDIR" >&2; exit 2; }
# mpiexec as root (CI containers) and on more processes than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Oversubscribed processes must yield instead of spinning (2-core CI).
export OMPI_MCA_mpi_yield_when_idle=1

backends=("$@")
[ ${#backends[@]} -eq 0 ] && backends=(seq)

if [ -n "${TESTS:-}" ]; then
  sources=()
  for t in $TESTS; do
    for f in tests/mpi/"$t".c tests/mpi/"$t".f90; do [ -f "$f" ] && sources+=("$f"); done
  done
else
  sources=(tests/mpi/t8*.c tests/mpi/t8*.f90)
fi

passed=0
failed=0
fail() { # test what detail
  failed=$((failed + 1))
  printf 'FAIL %s: %s' "$1" "$2"
  [ -n "${3:-}" ] && printf ' | %s' "$3"
  printf '\n'
}

# The Fortran module, built once for the Fortran tests.
fmod=$OUT/fmod
build_fmod() {
  [ -f "$fmod/op2.o" ] && [ "$fmod/op2.o" -nt fortran/op2.F90 ] && return 0
  mkdir -p "$fmod"
  (cd "$fmod" && $MPIFC -c -O1 "$OLDPWD/fortran/op2.F90" -o op2.o) >"$OUT/fmod.log" 2>&1 &&
    (cd "$fmod" && $MPIFC -c -O1 -I. "$OLDPWD/tests/fortran/op2_test.f90" -o op2_test.o) >>"$OUT/fmod.log" 2>&1
}

for src in "${sources[@]}"; do
  [ -f "$src" ] || continue
  name=$(basename "$src"); name=${name%.c}; name=${name%.f90}
  exe="$OUT/$name"
  log="$OUT/$name.build.log"
  case $src in
    *.c) $MPICC -std=c99 -Wall -Wextra -Werror -g -I"$INC" -Itests/c -Itests/mpi "$src" -o "$exe" \
           -L"$LIBDIR" -lop2 -Wl,-rpath,"$LIBDIR_ABS" -lm >"$log" 2>&1 ;;
    *.f90) build_fmod && $MPIFC -g -I"$fmod" "$src" "$fmod/op2.o" "$fmod/op2_test.o" -o "$exe" \
           -L"$LIBDIR" -lop2 -Wl,-rpath,"$LIBDIR_ABS" >"$log" 2>&1 ;;
  esac
  if [ $? -ne 0 ]; then
    fail "$name" "does not compile" "$(tail -n 5 "$log" "$OUT/fmod.log" 2>/dev/null | tr '\n' ' ')"
    continue
  fi
  ns=$(sed -n 's/.*mpi-n: *\([0-9 ]*\).*/\1/p' "$src" | head -1)
  [ -z "$ns" ] && ns="1 2"
  allowed=$(sed -n 's/.*mpi-backends: *\([a-z ]*\).*/\1/p' "$src" | head -1)
  expect=$(sed -n 's/.*mpi-expect-fail: *\(.*[^ ]\) *\*\/.*/\1/p; s/.*mpi-expect-fail: *\([^*]*[^ *]\) *$/\1/p' "$src" | head -1)
  for b in "${backends[@]}"; do
    if [ -n "$allowed" ] && ! echo " $allowed " | grep -q " $b "; then continue; fi
    for n in $ns; do
      out="$OUT/$name.$b.$n.out"
      start=$(date +%s)
      # The hang guard grows with the machine's load (tests/lib/budget.sh).
      guard=$(budget "$TEST_TIMEOUT")
      if [ "$n" = 0 ]; then # without a launcher
        (cd "$OUT" && timeout "$guard" "./$name" "$b") >"$out" 2>&1
      else
        (cd "$OUT" && timeout "$guard" "$MPIEXEC" -n "$n" "./$name" "$b") >"$out" 2>&1
      fi
      rc=$?
      secs=$(( $(date +%s) - start ))
      if [ -n "$expect" ]; then
        if [ $rc -eq 124 ]; then
          fail "$name [$b, n=$n]" "hung (timeout ${guard}s) instead of failing"
        elif [ $rc -eq 0 ]; then
          fail "$name [$b, n=$n]" "exited 0, expected a failure"
        elif ! grep -qF "$expect" "$out"; then
          fail "$name [$b, n=$n]" "failed without '$expect'" "$(head -c 400 "$out" | tr '\n' ' ')"
        else
          passed=$((passed + 1))
        fi
      elif [ $rc -ne 0 ]; then
        fail "$name [$b, n=$n]" "exit $rc after ${secs}s" "$(head -c 600 "$out" | tr '\n' ' ')"
      elif [ -s "$out" ]; then
        fail "$name [$b, n=$n]" "printed output" "$(head -c 400 "$out" | tr '\n' ' ')"
      else
        passed=$((passed + 1))
      fi
    done
  done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
