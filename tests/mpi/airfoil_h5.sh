#!/bin/sh
# airfoil_h5.sh BIN CMP_RMS PYTHON WORKDIR MESH ITERS
#
# Airfoil from OP2's HDF5 layout under MPI: MESH (text) converted by op2-h5convert; one process
# on seq reading the .h5 is the reference (equal to the text run bit for bit, tests/io); then
# mpiexec -n 2 reading it by blocks, partitioned with METIS, must match within 1e-12 relative at
# every iteration, and its --vtk output (two pieces + .pvtu) must hold the one-process .vtu's
# mesh exactly and its solution within 1e-12 (tests/mpi/vtksame.py).
set -eu
# Hang guards scale with the machine's load (tests/lib/budget.sh).
. "$(cd "$(dirname "$0")/../lib" && pwd)/budget.sh"
bin=$1 cmp=$2 py=$3 dir=$4 mesh=$5 iters=$6
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
"$bin/op2-h5convert" "$mesh" "$dir/mesh.h5"
"$bin/airfoil" --mesh "$dir/mesh.h5" --iters "$iters" --rms-log "$dir/rms-1.log" --vtk "$dir/one.vtu" \
  OP2_BACKEND=seq >"$dir/one.out" 2>&1 || { echo "mpi-airfoil-h5: FAIL: one process:"; tail -n 20 "$dir/one.out"; exit 1; }
rm -f "$dir/rms-2.log" "$dir"/two*.vtu "$dir/two.pvtu"
if ! timeout "$(budget 300)" mpiexec -n 2 "$bin/airfoil" --mesh "$dir/mesh.h5" --iters "$iters" --rms-log "$dir/rms-2.log" \
     --vtk "$dir/two.vtu" --partition METIS:KWAY OP2_BACKEND=seq >"$dir/two.out" 2>&1; then
  echo "mpi-airfoil-h5: FAIL: -n 2:"; tail -n 20 "$dir/two.out"; exit 1
fi
printf 'mpi-airfoil-h5: -n 2 seq METIS:KWAY from HDF5 '
"$cmp" --rel 1e-12 "$dir/rms-2.log" "$dir/rms-1.log"
"$py" "$root/tests/mpi/vtksame.py" --rel 1e-12 "$dir/one.vtu" "$dir/two.pvtu"
echo "mpi-airfoil-h5: passed"
