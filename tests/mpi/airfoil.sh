#!/bin/sh
# airfoil.sh BIN CMP_RMS WORKDIR MESH ITERS "BACKENDS"
#
# Airfoil as an OP2 MPI program: one process on seq is the reference; then mpiexec -n 1..4 with
# METIS, RCB and BLOCK partitioning on seq, and -n 2 on threads and opencl when BACKENDS has
# them, must match it within 1e-12 relative at every iteration (cmp_rms).
set -u
bin=$1
cmp=$2
dir=$3
mesh=$4
iters=$5
backends=$6
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
fails=0
if ! "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$dir/rms-ref.log" OP2_BACKEND=seq \
     > "$dir/ref.out" 2>&1; then
  echo "mpi-airfoil: FAIL: one-process reference:"; tail -n 20 "$dir/ref.out"; exit 1
fi
run() { # backend n partition
  log="$dir/rms-$1-$2-$3.log"
  rm -f "$log"
  if ! timeout 300 mpiexec -n "$2" "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$log" \
       --partition "$3" "OP2_BACKEND=$1" > "$dir/$1-$2-$3.out" 2>&1; then
    echo "mpi-airfoil: FAIL: -n $2 $1 $3:"; tail -n 20 "$dir/$1-$2-$3.out"; fails=$((fails + 1)); return
  fi
  printf 'mpi-airfoil: -n %s %-8s %-11s ' "$2" "$1" "$3"
  "$cmp" --rel 1e-12 "$log" "$dir/rms-ref.log" || fails=$((fails + 1))
}
for n in 1 2 3 4; do
  for p in METIS:KWAY RCB BLOCK; do run seq "$n" "$p"; done
done
for b in $backends; do
  case $b in threads | opencl) run "$b" 2 METIS:KWAY ;; esac
done
[ $fails -eq 0 ] && echo "mpi-airfoil: passed" && exit 0
echo "mpi-airfoil: $fails failed"
exit 1
