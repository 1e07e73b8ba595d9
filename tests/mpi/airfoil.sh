#!/bin/sh
# airfoil.sh BIN CMP_RMS WORKDIR MESH ITERS "BACKENDS"
#
# Airfoil as an OP2 MPI program: one process on seq is the reference; then mpiexec -n 1..4 with
# METIS (gathered), PARMETIS and PTSCOTCH KWAY and PARMETIS GEOMKWAY (distributed, PT-Scotch's),
# RCB (parallel medians), BLOCK and RANDOM partitioning on seq, and -n 2 on threads and opencl
# when BACKENDS has them, must match it within 1e-12 relative at every iteration (cmp_rms); so must -n 2 with
# OP2_LAZY=1 and with --chain (one loop chain per iteration), and -n 3 RCB with --chain. The
# --chain runs on seq and threads under MPI are sparse-tiled: every process must say so
# (OP2_DIAGNOSTICS=2: "MPI rank R: N elements tiled, M deferred", both N and M above 0).
set -u
# Hang guards scale with the machine's load (tests/lib/budget.sh).
. "$(cd "$(dirname "$0")/../lib" && pwd)/budget.sh"
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
run() { # backend n partition [airfoil options and op2 tokens, one string]
  tag=$1-$2-$3${4:+-$(echo "$4" | tr -d -- '-=' | tr ' ' '_')}
  out="$dir/$tag.out"
  log="$dir/rms-$tag.log"
  rm -f "$log"
  # shellcheck disable=SC2086 # $4: words or none
  if ! timeout "$(budget 300)" mpiexec -n "$2" "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$log" \
       --partition "$3" "OP2_BACKEND=$1" ${4:-} > "$dir/$tag.out" 2>&1; then
    echo "mpi-airfoil: FAIL: -n $2 $1 $3 ${4:-}:"; tail -n 20 "$dir/$tag.out"; fails=$((fails + 1)); return
  fi
  printf 'mpi-airfoil: -n %s %-8s %-11s %-11s ' "$2" "$1" "$3" "${4:-}"
  "$cmp" --rel 1e-12 "$log" "$dir/rms-ref.log" || fails=$((fails + 1))
}
for n in 1 2 3 4; do
  for p in METIS:KWAY PARMETIS:KWAY RCB BLOCK RANDOM; do run seq "$n" "$p"; done
done
for n in 1 2 3 4; do
  for p in PTSCOTCH:KWAY PARMETIS:GEOMKWAY; do run seq "$n" "$p"; done
done
for b in $backends; do
  case $b in threads | opencl) run "$b" 2 METIS:KWAY ;; esac
done
# Lazy evaluation and loop chains under MPI (issue 23, point 10): the same results.
run seq 2 METIS:KWAY OP2_LAZY=1
# A chain under MPI is tiled: a line per process with elements tiled and deferred, both > 0.
tiled() { # n
  got=$(grep -c "MPI rank [0-9]*: [1-9][0-9]* elements tiled, [1-9][0-9]* deferred" "$out")
  if [ "$got" -ne "$1" ]; then
    echo "mpi-airfoil: FAIL: $out: $got of $1 processes say their chain was tiled with deferred elements"
    fails=$((fails + 1))
  fi
}
run seq 2 METIS:KWAY "--chain OP2_DIAGNOSTICS=2" && tiled 2
run seq 3 RCB "--chain OP2_DIAGNOSTICS=2" && tiled 3
for b in $backends; do
  case $b in
    threads) run "$b" 2 METIS:KWAY "--chain OP2_DIAGNOSTICS=2" && tiled 2 ;;
    opencl) run "$b" 2 METIS:KWAY --chain ;;
  esac
done
[ $fails -eq 0 ] && echo "mpi-airfoil: passed" && exit 0
echo "mpi-airfoil: $fails failed"
exit 1
