#!/bin/sh
# op2_style.sh BIN CMP_RMS WORKDIR MESH ITERS OP2_PREFIX
#
# The OP2-style Fortran Airfoil (tests/fortran/op2-style: OP2's Fortran API, compiled Fortran
# kernels through op_par_loop_N) under MPI: built with mpif90 against the installed op2 in
# OP2_PREFIX, run under mpiexec -n 2 on seq and threads, with its kernels called per element and
# compiled into the loops (JIT tier); its rms must be within 1e-12 (relative, every iteration) of
# the C Airfoil's on one process (cmp_rms).
set -u
# Hang guards scale with the machine's load (tests/lib/budget.sh).
. "$(cd "$(dirname "$0")/../lib" && pwd)/budget.sh"
bin=$1
cmp=$2
dir=$3
mesh=$4
iters=$5
prefix=$6
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
unset MAKE MAKEFLAGS MFLAGS MAKELEVEL
if ! make -C "$root/tests/fortran/op2-style" FC="${MPIFC:-mpif90}" OP2_PREFIX="$prefix" \
     BUILD="$dir/build" "$dir/build/airfoil" > "$dir/build.log" 2>&1; then
  echo "mpi-op2-style: FAIL: build:"; tail -n 20 "$dir/build.log"; exit 1
fi
cp "$mesh" "$dir/new_grid.dat"
if ! "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$dir/rms-ref.log" OP2_BACKEND=seq \
     > "$dir/ref.out" 2>&1; then
  echo "mpi-op2-style: FAIL: C Airfoil, one process:"; tail -n 20 "$dir/ref.out"; exit 1
fi
fails=0
# Both tiers: call-per-element (no kernel source found: a copy of the program without debug
# information, which would name the sources) and JIT (the kernels' module on OP2_FORTRAN_PATH,
# every kernel compiled into its loop on every process: OP2_DIAGNOSTICS=1 says so).
if ! objcopy --strip-debug "$dir/build/airfoil" "$dir/build/airfoil-nodebug"; then
  echo "mpi-op2-style: FAIL: objcopy --strip-debug"; exit 1
fi
for tier in element jit; do
  for b in seq threads; do
    log="$dir/rms-$b-$tier.log"
    rm -f "$log"
    fp= exe=$dir/build/airfoil-nodebug
    [ "$tier" = jit ] && fp=$root/tests/fortran/op2-style exe=$dir/build/airfoil
    if ! (cd "$dir" && OP2_FORTRAN_PATH="$fp" OP2_DIAGNOSTICS=1 timeout "$(budget 300)" mpiexec -n 2 "$exe" "$iters" "$log" \
         "OP2_BACKEND=$b") > "$dir/$b-$tier.out" 2>&1; then
      echo "mpi-op2-style: FAIL: -n 2 $b $tier tier:"; tail -n 20 "$dir/$b-$tier.out"; fails=$((fails + 1)); continue
    fi
    n=$(grep -c "^op2: Fortran kernel '.*': JIT tier" "$dir/$b-$tier.out")
    want=0
    [ "$tier" = jit ] && want=5
    if [ "$n" -ne "$want" ]; then
      echo "mpi-op2-style: FAIL: -n 2 $b $tier tier: $n kernels on the JIT tier, expected $want"; fails=$((fails + 1)); continue
    fi
    printf 'mpi-op2-style: -n 2 %-8s %-8s ' "$b" "$tier"
    "$cmp" --rel 1e-12 "$log" "$dir/rms-ref.log" || fails=$((fails + 1))
  done
done
# The mesh from HDF5 (op_decl_*_hdf5: each process reads its block), -n 2 on seq, JIT tier.
if "$bin/op2-h5convert" "$mesh" "$dir/mesh.h5" > "$dir/h5convert.out" 2>&1; then
  log="$dir/rms-h5.log"
  rm -f "$log"
  if (cd "$dir" && OP2_FORTRAN_PATH="$root/tests/fortran/op2-style" timeout "$(budget 300)" mpiexec -n 2 "$dir/build/airfoil" \
       "$iters" "$log" "$dir/mesh.h5" OP2_BACKEND=seq) > "$dir/h5.out" 2>&1; then
    printf 'mpi-op2-style: -n 2 seq      HDF5 mesh '
    "$cmp" --rel 1e-12 "$log" "$dir/rms-ref.log" || fails=$((fails + 1))
  else
    echo "mpi-op2-style: FAIL: -n 2 seq from HDF5:"; tail -n 20 "$dir/h5.out"; fails=$((fails + 1))
  fi
else
  echo "mpi-op2-style: FAIL: op2-h5convert:"; tail -n 5 "$dir/h5convert.out"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] || { echo "mpi-op2-style: $fails failed"; exit 1; }
echo "mpi-op2-style: passed"
