#!/usr/bin/env bash
# mpi.sh OP2_PREFIX BIN CMP_RMS WORKDIR MESH ITERS: make test-mpi-cpp.
#
# The OP2-style MPI Airfoil (airfoil_mpi.cpp: the root process reads the mesh and scatters
# blocks with MPI_Scatterv, op_partition distributes them), built with mpicxx -DUSE_MPI by this
# directory's Makefile against the installed op2 in OP2_PREFIX, run under mpiexec:
#   - -n 1 on seq: within 1e-12 relative, at every iteration, of the C Airfoil (BIN/airfoil) on
#     one process; it is the reference of the runs below;
#   - -n 2 on seq and on threads (2 threads per process, --bind-to none) with PTSCOTCH KWAY, and
#     on seq with PARMETIS KWAY and PARMETIS GEOM (OP2's geometric partition: op2's RCB): within
#     1e-12 of -n 1 at every iteration, every kernel on the JIT tier (OP2_DIAGNOSTICS=1).
# Prints a line per run; exits non-zero if anything failed. TEST_TIMEOUT (300 s): the hang guard
# of each run, scaled with the machine's load (tests/lib/budget.sh).
set -u
prefix=$1
bin=$2
cmp=$3
work=$4
mesh=$5
iters=$6
here=$(cd "$(dirname "$0")" && pwd -P)
. "$here/../../lib/budget.sh"
to=${TEST_TIMEOUT:-300}
kernels="save_soln adt_calc res_calc bres_calc update"
mkdir -p "$work"
work=$(cd "$work" && pwd)
mesh=$(cd "$(dirname "$mesh")" && pwd)/$(basename "$mesh")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
unset MAKE MAKEFLAGS MFLAGS MAKELEVEL OP2_KERNEL_PATH
if ! make -C "$here" MPICXX="${MPICXX:-mpicxx}" OP2_PREFIX="$prefix" BUILD="$work/build" mpi \
     >"$work/build.log" 2>&1; then
  echo "mpi-cpp: FAIL: build:"; tail -n 20 "$work/build.log"; exit 1
fi
if ! timeout "$(budget "$to")" "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$work/rms-c.log" \
     OP2_BACKEND=seq >"$work/c.out" 2>&1; then
  echo "mpi-cpp: FAIL: C Airfoil, one process:"; tail -n 20 "$work/c.out"; exit 1
fi
fails=0
# run NPROCS BACKEND PARTITION: the rms log in $work/rms-NPROCS-BACKEND-PARTITION.log
run() {
  local tag="$1-$2-$(echo "$3" | tr ':' '-')" k
  local log=$work/rms-$tag.log out=$work/$tag.out
  rm -f "$log"
  if ! (cd "$work" && OP2_DIAGNOSTICS=1 OP2_NUM_THREADS=2 timeout "$(budget "$to")" \
        mpiexec --oversubscribe --bind-to none -n "$1" "$work/build/airfoil_mpi" --mesh "$mesh" --iters "$iters" \
        --rms-log "$log" --partition "$3" "OP2_BACKEND=$2") >"$out" 2>&1; then
    echo "mpi-cpp: FAIL: -n $1 $2 $3:"; tail -n 20 "$out"; fails=$((fails + 1)); return 1
  fi
  for k in $kernels; do
    if ! grep -qF "op2: C kernel '$k': JIT tier: compiled from '$here/$k.h'" "$out" ||
       grep -q "call-per-element tier" "$out"; then
      echo "mpi-cpp: FAIL: -n $1 $2 $3: kernel $k not on the JIT tier:"; grep "^op2: C kernel" "$out"
      fails=$((fails + 1)); return 1
    fi
  done
}
if run 1 seq PTSCOTCH:KWAY; then
  printf 'mpi-cpp: -n 1 seq     PTSCOTCH:KWAY against the C Airfoil: '
  "$cmp" --rel 1e-12 "$work/rms-1-seq-PTSCOTCH-KWAY.log" "$work/rms-c.log" || fails=$((fails + 1))
  for cfg in "seq PTSCOTCH:KWAY" "threads PTSCOTCH:KWAY" "seq PARMETIS:KWAY" "seq PARMETIS:GEOM"; do
    set -- $cfg
    run 2 "$1" "$2" || continue
    printf 'mpi-cpp: -n 2 %-7s %-13s against -n 1: ' "$1" "$2"
    "$cmp" --rel 1e-12 "$work/rms-2-$1-$(echo "$2" | tr ':' '-').log" "$work/rms-1-seq-PTSCOTCH-KWAY.log" ||
      fails=$((fails + 1))
  done
fi
[ "$fails" -eq 0 ] || { echo "mpi-cpp: $fails failed"; exit 1; }
echo "mpi-cpp: passed"
