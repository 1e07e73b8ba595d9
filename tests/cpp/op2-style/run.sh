#!/usr/bin/env bash
# run.sh OP2_PREFIX BIN CMP_RMS WORKDIR MESH ITERS "BACKENDS": make test-cpp.
#
# OP2's C++ API: the programs of this directory, built by its Makefile against the installed op2
# in OP2_PREFIX, run on every backend of BACKENDS among seq, threads, check and opencl:
#   - airfoil: every kernel on the JIT tier, compiled from its header here (OP2_DIAGNOSTICS=1
#     says so, once per kernel); rms history the C Airfoil's (BIN/airfoil, seq) bit for bit on
#     seq, within 1e-12 relative at every iteration on the others (CMP_RMS, tests/airfoil/cmp_rms);
#   - airfoil_hdf5 (mesh converted to OP2's HDF5 layout by BIN/op2-h5convert; q written back to
#     HDF5 and read again) and airfoil_tempdats: the plain airfoil's rms history on the same
#     backend, bit for bit;
#   - jac and reduction: their own checks against plain loops (silent, status 0);
#   - the call-per-element tier: airfoil built from a copy whose kernel headers are then deleted
#     (element.sh): every kernel called per element (OP2_DIAGNOSTICS=1), rms the C Airfoil's bit
#     for bit on seq, within 1e-12 on threads and check; opencl refuses it
#     (OP2_ERR_BACKEND_UNAVAILABLE, 104); with OP2_KERNEL_PATH naming this directory the same
#     executable is on the JIT tier again.
# Ends with "N passed, N failed"; exits non-zero if anything failed. TEST_TIMEOUT (300 s): the
# hang guard of each run, scaled with the machine's load (tests/lib/budget.sh).
set -u
prefix=$1
bin=$2
cmp=$3
work=$4
mesh=$5
iters=$6
backends=$7
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../../.." && pwd)
kernels="save_soln adt_calc res_calc bres_calc update"

. "$root/tests/lib/report.sh"
. "$root/tests/lib/budget.sh"
to=${TEST_TIMEOUT:-300}

# The sub-make must not inherit the calling make's variables; the JIT tier must come from the
# sources' directory, not from a path the caller set.
unset MAKE MAKEFLAGS MFLAGS MAKELEVEL OP2_KERNEL_PATH
mkdir -p "$work"
work=$(cd "$work" && pwd)
mesh=$(cd "$(dirname "$mesh")" && pwd)/$(basename "$mesh")
log=$work/log.txt
build=$work/build

# tiers OUTPUT TIER [PATH-DIR]: every Airfoil kernel named once on TIER ("JIT tier", compiled
# from PATH-DIR/<kernel>.h, or "call-per-element tier") and none on the other.
tiers() {
  local k n
  for k in $kernels; do
    if [ "$2" = "JIT tier" ]; then
      n=$(grep -cF "op2: C kernel '$k': JIT tier: compiled from '$3/$k.h'" "$1")
    else
      n=$(grep -c "^op2: C kernel '$k': call-per-element tier: " "$1")
    fi
    [ "$n" -eq 1 ] || { echo "(kernel $k: $n lines saying '$2', expected 1)"; return 1; }
  done
  if [ "$2" = "JIT tier" ]; then
    ! grep -q "call-per-element tier" "$1" || { echo "(a kernel on the call-per-element tier)"; return 1; }
  else
    ! grep -q "JIT tier" "$1" || { echo "(a kernel on the JIT tier)"; return 1; }
  fi
}

# 1. Build, as an OP2 application is built.
if make -C "$here" OP2_PREFIX="$prefix" BUILD="$build" >"$log" 2>&1; then
  pass "make tests/cpp/op2-style (OP2's C++ API, against $prefix)"
else
  fail "make tests/cpp/op2-style" "$log"
  finish
fi

# 2. References: the C Airfoil on seq, the mesh in HDF5.
if ! timeout "$(budget "$to")" "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$work/rms-c.log" \
     OP2_BACKEND=seq >"$log" 2>&1; then
  fail "C airfoil (seq), the reference" "$log"
  finish
fi
if ! timeout "$(budget "$to")" "$bin/op2-h5convert" "$mesh" "$work/mesh.h5" >"$log" 2>&1; then
  fail "op2-h5convert (the HDF5 mesh)" "$log"
fi

# 3. Every program on every backend.
for b in $backends; do
  case $b in seq | threads | check | opencl) ;; *) continue ;; esac
  out=$work/airfoil-$b.out
  rm -f "$work/rms-$b.log"
  if ! (cd "$work" && OP2_BACKEND=$b OP2_DIAGNOSTICS=1 timeout "$(budget "$to")" "$build/airfoil" --mesh "$mesh" \
        --iters "$iters" --rms-log "$work/rms-$b.log") >"$out" 2>&1; then
    fail "airfoil $b" "$out"
  else
    if tiers "$out" "JIT tier" "$here" >"$log"; then
      pass "airfoil $b: the 5 kernels on the JIT tier, compiled from $here"
    else
      cat "$out" >>"$log"
      fail "airfoil $b: the 5 kernels on the JIT tier" "$log"
    fi
    if [ "$b" = seq ]; then
      "$cmp" --exact "$work/rms-c.log" "$work/rms-seq.log" >"$log" 2>&1 &&
        pass "airfoil seq: rms history the C Airfoil's bit for bit" ||
        fail "airfoil seq: rms history the C Airfoil's bit for bit" "$log"
    else
      "$cmp" --rel 1e-12 "$work/rms-$b.log" "$work/rms-c.log" >"$log" 2>&1 &&
        pass "airfoil $b: rms within 1e-12 of the C Airfoil's on seq" ||
        fail "airfoil $b: rms within 1e-12 of the C Airfoil's on seq" "$log"
    fi
  fi
  # the variants against the plain program on the same backend
  for v in hdf5 tempdats; do
    args="--mesh $mesh"
    [ "$v" = hdf5 ] && args="--mesh $work/mesh.h5 --save $work/q-$b.h5"
    rm -f "$work/rms-$v-$b.log" "$work/q-$b.h5"
    # shellcheck disable=SC2086
    if ! (cd "$work" && OP2_BACKEND=$b timeout "$(budget "$to")" "$build/airfoil_$v" $args --iters "$iters" \
          --rms-log "$work/rms-$v-$b.log") >"$log" 2>&1; then
      fail "airfoil_$v $b" "$log"
    elif "$cmp" --exact "$work/rms-$b.log" "$work/rms-$v-$b.log" >"$log" 2>&1; then
      pass "airfoil_$v $b: the plain airfoil's rms history bit for bit"
    else
      fail "airfoil_$v $b: the plain airfoil's rms history bit for bit" "$log"
    fi
  done
  for p in jac reduction; do
    args=
    [ "$p" = reduction ] && args="--mesh $mesh"
    # shellcheck disable=SC2086
    if (cd "$work" && OP2_BACKEND=$b timeout "$(budget "$to")" "$build/$p" $args) >"$log" 2>&1; then
      if [ -s "$log" ]; then
        fail "$p $b (passed but was not silent)" "$log"
      else
        pass "$p $b"
      fi
    else
      echo "(exit status $?)" >>"$log"
      fail "$p $b" "$log"
    fi
  done
done

# 4. The call-per-element tier: no kernel header to be found at run time.
elem=$work/element
if ! sh "$here/element.sh" "$prefix" "$elem" >"$log" 2>&1; then
  fail "build airfoil without its kernel headers (element.sh)" "$log"
  finish
fi
for b in $backends; do
  case $b in seq | threads | check) ;; *) continue ;; esac
  out=$work/element-$b.out
  rm -f "$work/rms-element-$b.log"
  if ! (cd "$elem" && OP2_BACKEND=$b OP2_DIAGNOSTICS=1 timeout "$(budget "$to")" ./airfoil --mesh "$mesh" \
        --iters "$iters" --rms-log "$work/rms-element-$b.log") >"$out" 2>&1; then
    fail "airfoil, call-per-element tier, $b" "$out"
    continue
  fi
  if tiers "$out" "call-per-element tier" >"$log"; then
    pass "airfoil $b without kernel headers: the 5 kernels on the call-per-element tier"
  else
    cat "$out" >>"$log"
    fail "airfoil $b without kernel headers: the 5 kernels on the call-per-element tier" "$log"
  fi
  if [ "$b" = seq ]; then
    "$cmp" --exact "$work/rms-c.log" "$work/rms-element-seq.log" >"$log" 2>&1 &&
      pass "airfoil seq, call-per-element tier: rms history the C Airfoil's bit for bit" ||
      fail "airfoil seq, call-per-element tier: rms history the C Airfoil's bit for bit" "$log"
  else
    "$cmp" --rel 1e-12 "$work/rms-element-$b.log" "$work/rms-c.log" >"$log" 2>&1 &&
      pass "airfoil $b, call-per-element tier: rms within 1e-12 of the C Airfoil's on seq" ||
      fail "airfoil $b, call-per-element tier: rms within 1e-12 of the C Airfoil's on seq" "$log"
  fi
done
# OP2_KERNEL_PATH: the same executable finds the headers in this directory (after a directory
# without them) and is on the JIT tier again.
out=$work/kernel-path.out
rm -f "$work/rms-kernel-path.log"
if ! (cd "$elem" && OP2_BACKEND=seq OP2_DIAGNOSTICS=1 OP2_KERNEL_PATH="$elem:$here" timeout "$(budget "$to")" \
      ./airfoil --mesh "$mesh" --iters "$iters" --rms-log "$work/rms-kernel-path.log") >"$out" 2>&1; then
  fail "airfoil seq with OP2_KERNEL_PATH" "$out"
elif ! tiers "$out" "JIT tier" "$here" >"$log"; then
  cat "$out" >>"$log"
  fail "airfoil seq with OP2_KERNEL_PATH: the 5 kernels on the JIT tier, compiled from $here" "$log"
elif "$cmp" --exact "$work/rms-c.log" "$work/rms-kernel-path.log" >"$log" 2>&1; then
  pass "airfoil seq with OP2_KERNEL_PATH: JIT tier from $here, the C Airfoil's rms bit for bit"
else
  fail "airfoil seq with OP2_KERNEL_PATH: the C Airfoil's rms bit for bit" "$log"
fi
# A device backend cannot call a compiled host function: opencl refuses, with [104].
case " $backends " in
  *" opencl "*)
    out=$work/element-opencl.out
    if (cd "$elem" && OP2_BACKEND=opencl timeout "$(budget "$to")" ./airfoil --mesh "$mesh" --iters 2) >"$out" 2>&1; then
      echo "(it ran)" >>"$out"
      fail "airfoil opencl without kernel headers: refused" "$out"
    elif grep -q "^op2 error \[104\]: .*called per element cannot run" "$out"; then
      pass "airfoil opencl without kernel headers: refused with [104] (a kernel called per element)"
    else
      fail "airfoil opencl without kernel headers: refused with [104] (a kernel called per element)" "$out"
    fi
    ;;
esac

finish
