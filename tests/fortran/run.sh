#!/usr/bin/env bash
# Fortran tests, run by `make test-fortran` against the installed package in OP2_PREFIX:
#   1. configure and build tests/fortran and examples-fortran with CMake (find_package(OP2));
#   2. run every tests/fortran/tNNN-*-f test on every backend of TEST_BACKENDS (a test passes
#      when it exits 0 and prints nothing);
#   3. check every C function of op2.h has a Fortran binding (check_bindings.sh);
#   4. run the Fortran Airfoil and the C Airfoil on a small generated mesh and compare their rms
#      logs: identical bytes on seq, 1e-12 relative on the other backends;
#   5. OP2's Fortran API: tools/gen_fortran_loops.py --check (op2_fortran_reference.F90 is what
#      the script writes), build tests/fortran/op2-style with its Makefile against the installed
#      package, run reduction and jac (each checks its own results) and the OP2-style Airfoil
#      (rms within 1e-12 of the C Airfoil's) on every host backend of TEST_BACKENDS, again on the
#      JIT tier (OP2_FORTRAN_PATH names the kernels' sources: all 5 loops compile them), and check
#      that opencl refuses a compiled Fortran kernel with OP2_ERR_BACKEND_UNAVAILABLE (104).
# Ends with "N passed, N failed"; exits non-zero if anything failed.
#
# Environment: OP2_PREFIX (installed op2), OP2_BUILD (build directory), OP2_BIN (C examples:
# airfoil, op2-meshgen), TEST_BACKENDS, CMAKE, AIRFOIL_CELLS (mesh size, default 2400),
# AIRFOIL_ITERS (default 30), TEST_TIMEOUT (seconds per run, default 120).
set -u
# Hang guards scale with the machine's load (tests/lib/budget.sh).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../lib" && pwd)/budget.sh"

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
    if (cd "$work" && timeout "$(budget "$to")" "$exe" "$backend") >"$log" 2>&1; then
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
if ! timeout "$(budget "$to")" "$bin/op2-meshgen" --cells "$cells" -o "$mesh" >"$log" 2>&1; then
  fail "op2-meshgen --cells $cells" "$log"
  finish
fi
if ! (cd "$work" && OP2_BACKEND=seq timeout "$(budget "$to")" "$bin/airfoil" --mesh "$mesh" --iters "$iters" \
        --rms-log "$work/rms_c_seq.txt") >"$log" 2>&1; then
  fail "C airfoil (seq), the reference" "$log"
  finish
fi
for backend in $backends; do
  out=$work/rms_f_$backend.txt
  if ! (cd "$work" && timeout "$(budget "$to")" "$work/examples/airfoil/airfoil_f" --mesh "$mesh" --iters "$iters" \
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


# 5. OP2's Fortran API (op2_fortran_* modules, op_par_loop_N with compiled Fortran kernels).
if python3 "$root/tools/gen_fortran_loops.py" --check >"$log" 2>&1; then
  pass "gen_fortran_loops.py --check (op2_fortran_reference.F90 is current)"
else
  fail "gen_fortran_loops.py --check" "$log"
fi
style=$work/op2-style
cp "$mesh" "$work/new_grid.dat"               # OP2's programs read this name
if make -C "$root/tests/fortran/op2-style" OP2_PREFIX="$prefix" BUILD="$style" >"$log" 2>&1; then
  pass "make tests/fortran/op2-style (OP2's Fortran API)"
  for backend in $backends; do
    case $backend in opencl | cuda) continue ;; esac    # refused: checked below
    for prog in reduction jac; do
      if (cd "$work" && OP2_BACKEND=$backend timeout "$(budget "$to")" "$style/$prog") >"$log" 2>&1 &&
         grep -q "^Test PASSED" "$log"; then
        pass "op2-style $prog $backend"
      else
        fail "op2-style $prog $backend" "$log"
      fi
    done
    out=$work/rms_op2style_$backend.txt
    if ! (cd "$work" && OP2_BACKEND=$backend timeout "$(budget "$to")" "$style/airfoil" "$iters" "$out") >"$log" 2>&1; then
      fail "op2-style airfoil $backend" "$log"
    elif [ "$(wc -l <"$out")" -ne "$iters" ]; then
      echo "rms log has $(wc -l <"$out") lines, expected $iters" >"$log"
      fail "op2-style airfoil $backend" "$log"
    elif ! grep -q "^  res_calc " "$log"; then
      echo "(the timing table does not name the loop res_calc after its Fortran kernel)" >>"$log"
      fail "op2-style airfoil $backend: loops named after their kernels" "$log"
    elif awk 'NR == FNR { ref[$1] = $2; next }
              { d = $2 - ref[$1]; if (d < 0) d = -d; r = ref[$1] < 0 ? -ref[$1] : ref[$1];
                if (!($1 in ref) || d > 1e-12 * r) { print "iteration " $1 ": " $2 " vs " ref[$1]; bad = 1 } }
              END { exit bad }' "$work/rms_c_seq.txt" "$out" >"$log" 2>&1; then
      pass "op2-style airfoil $backend: rms within 1e-12 of the C airfoil on seq"
    else
      fail "op2-style airfoil $backend: rms differs from the C airfoil on seq" "$log"
    fi
  done
  # The JIT tier (issue #24 point 5): with the kernels' sources on OP2_FORTRAN_PATH, every loop
  # of the OP2-style Airfoil compiles its Fortran kernel into the loop (OP2_DIAGNOSTICS=1 says
  # so) and the rms stays within 1e-12 of the C Airfoil's.
  for backend in $backends; do
    case $backend in opencl | cuda) continue ;; esac
    out=$work/rms_op2style_jit_$backend.txt
    if ! (cd "$work" && OP2_BACKEND=$backend OP2_DIAGNOSTICS=1 OP2_FORTRAN_PATH="$root/tests/fortran/op2-style" \
          timeout "$(budget "$to")" "$style/airfoil" "$iters" "$out") >"$log" 2>&1; then
      fail "op2-style airfoil JIT tier $backend" "$log"
    elif [ "$(grep -c "^op2: Fortran kernel '.*': JIT tier: compiled from" "$log")" -ne 5 ] ||
         grep -q "call-per-element tier" "$log"; then
      echo "(expected the 5 kernels on the JIT tier)" >>"$log"
      fail "op2-style airfoil JIT tier $backend: every kernel on the JIT tier" "$log"
    elif awk 'NR == FNR { ref[$1] = $2; next }
              { d = $2 - ref[$1]; if (d < 0) d = -d; r = ref[$1] < 0 ? -ref[$1] : ref[$1];
                if (!($1 in ref) || d > 1e-12 * r) { print "iteration " $1 ": " $2 " vs " ref[$1]; bad = 1 } }
              END { exit bad }' "$work/rms_c_seq.txt" "$out" >"$log" 2>&1; then
      pass "op2-style airfoil JIT tier $backend: rms within 1e-12 of the C airfoil on seq"
    else
      fail "op2-style airfoil JIT tier $backend: rms differs from the C airfoil on seq" "$log"
    fi
  done
  # The JIT tier without OP2_FORTRAN_PATH (issue #35 point 3): the executable is built in the
  # work directory, away from its sources, with -g; op2 finds the kernels' module source through
  # the program's debug information and says so (OP2_DIAGNOSTICS=1).
  out=$work/rms_op2style_dwarf.txt
  if ! (cd "$work" && env -u OP2_FORTRAN_PATH OP2_BACKEND=seq OP2_DIAGNOSTICS=1 timeout "$(budget "$to")" "$style/airfoil" "$iters" "$out") >"$log" 2>&1; then
    fail "op2-style airfoil, sources from the debug information" "$log"
  elif [ "$(grep -c "^op2: Fortran kernel '.*': JIT tier: compiled from '$root/tests/fortran/op2-style/.*' (found through the program's debug information)" "$log")" -ne 5 ]; then
    echo "(expected the 5 kernels on the JIT tier, their module found through the debug information)" >>"$log"
    fail "op2-style airfoil: every kernel's source found through the debug information" "$log"
  elif ! cmp -s "$out" "$work/rms_op2style_jit_seq.txt"; then
    echo "(the rms differs from the run with OP2_FORTRAN_PATH)" >>"$log"
    fail "op2-style airfoil: sources from the debug information give the OP2_FORTRAN_PATH run's rms" "$log"
  else
    pass "op2-style airfoil: the 5 kernels' module found through the debug information (JIT tier, the OP2_FORTRAN_PATH run's rms bit for bit)"
  fi
  # The mesh from HDF5 (OP2's layout, written by op2-h5convert; op_decl_*_hdf5 of
  # op2_fortran_hdf5_declarations): the same rms as the C Airfoil from the text file.
  if [ -x "$bin/op2-h5convert" ] && timeout "$(budget "$to")" "$bin/op2-h5convert" "$mesh" "$work/airfoil_mesh.h5" >"$log" 2>&1; then
    out=$work/rms_op2style_h5.txt
    if ! (cd "$work" && OP2_BACKEND=seq timeout "$(budget "$to")" "$style/airfoil" "$iters" "$out" "$work/airfoil_mesh.h5") >"$log" 2>&1; then
      fail "op2-style airfoil from HDF5 (seq)" "$log"
    elif awk 'NR == FNR { ref[$1] = $2; next }
              { d = $2 - ref[$1]; if (d < 0) d = -d; r = ref[$1] < 0 ? -ref[$1] : ref[$1];
                if (!($1 in ref) || d > 1e-12 * r) { print "iteration " $1 ": " $2 " vs " ref[$1]; bad = 1 }; n++ }
              END { exit bad || n == 0 }' "$work/rms_c_seq.txt" "$out" >"$log" 2>&1; then
      pass "op2-style airfoil from HDF5 (seq): rms within 1e-12 of the C airfoil's"
    else
      fail "op2-style airfoil from HDF5 (seq): rms differs from the C airfoil's" "$log"
    fi
  else
    echo "(op2-h5convert missing or failed: a build without HDF5?)" >>"$log"
    fail "op2-style airfoil from HDF5: convert the mesh" "$log"
  fi
  # op_arg_idx on the JIT tier (an adapter adds OP2's Fortran index base): update's errloc,
  # printed at iteration 100, is the call-per-element tier's (1-based, proven by t970).
  # The call-per-element run uses a copy without debug information in the work directory, so
  # that op2 finds no source of the kernels' module.
  objcopy --strip-debug "$style/airfoil" "$work/airfoil-nodebug" 2>"$log" || fail "objcopy --strip-debug" "$log"
  for tier in jit element; do
    fp= exe=$work/airfoil-nodebug
    [ "$tier" = jit ] && fp=$root/tests/fortran/op2-style exe=$style/airfoil
    (cd "$work" && OP2_BACKEND=seq OP2_DIAGNOSTICS=1 OP2_FORTRAN_PATH="$fp" timeout "$(budget "$to")" "$exe" 100 "$work/rms_idx_$tier.txt") \
      >"$work/idx_$tier.log" 2>&1
    grep "max err" "$work/idx_$tier.log" >"$work/errloc_$tier.txt"
  done
  if [ "$(grep -c "JIT tier: compiled from" "$work/idx_jit.log")" -ne 5 ] ||
     [ "$(grep -c "call-per-element tier: no source of module" "$work/idx_element.log")" -ne 5 ]; then
    cat "$work/idx_jit.log" "$work/idx_element.log" >"$log" 2>/dev/null
    fail "op2-style airfoil: the op_arg_idx runs take the JIT tier (sources on OP2_FORTRAN_PATH) and the call-per-element tier (no debug information)" "$log"
  fi
  if [ -s "$work/errloc_jit.txt" ] && cmp -s "$work/errloc_jit.txt" "$work/errloc_element.txt"; then
    pass "op2-style airfoil: op_arg_idx on the JIT tier gives the call-per-element tier's errloc ($(awk '{ print $NF }' "$work/errloc_jit.txt"))"
  else
    cat "$work/errloc_jit.txt" "$work/errloc_element.txt" "$work/idx_jit.log" >"$log" 2>/dev/null
    fail "op2-style airfoil: op_arg_idx on the JIT tier gives the call-per-element tier's errloc" "$log"
  fi
  # A device backend refuses a compiled host kernel, saying why.
  if (cd "$work" && OP2_BACKEND=opencl timeout "$(budget "$to")" "$style/reduction") >"$log" 2>&1; then
    echo "(it ran)" >>"$log"
    fail "op2-style reduction opencl: refused with [104]" "$log"
  elif grep -q "^op2 error \[104\]: op_par_loop_fptr .*no Fortran device compiler" "$log"; then
    pass "op2-style reduction opencl: refused with [104]"
  elif grep -q "^op2 error \[104\]: op_init" "$log"; then
    pass "op2-style reduction opencl: skipped (opencl unavailable here)"
  else
    fail "op2-style reduction opencl: refused with [104]" "$log"
  fi
else
  fail "make tests/fortran/op2-style" "$log"
fi

finish
