#!/bin/sh
# bench/hybrid.sh: Airfoil under MPI + threads (make bench-hybrid; issue 25, point 7). Runs,
# interleaved (one of each per round, BENCH_REPS rounds, so load from other jobs hits all alike):
#   seq-1       mpiexec -n 1 --bind-to none, seq
#   seq-2       mpiexec -n 2 --bind-to none, seq
#   thr-2x1     mpiexec -n 2 --bind-to none, threads, OP2_NUM_THREADS=1
#   thr-1x2     mpiexec -n 1 --bind-to none, threads, OP2_NUM_THREADS=2
#   thr-2x2     mpiexec -n 2 --bind-to none, threads, OP2_NUM_THREADS=2 (4 threads: on a 2-core
#               machine, oversubscribed)
#   thr-1x2-bound  thr-1x2 without --bind-to none: OpenMPI binds each process to one core when
#               there are no more processes than cores, so the process's 2 threads share a core
# The figure is airfoil's steady ms/iter (rank 0's wall clock after the first iteration, which
# holds JIT compilation). Prints each run, then per configuration the median, range and the
# median's ratio to seq-1; `uptime` before and after. Every run's rms trace must match seq-1's
# first run within 1e-12 (CMP_RMS, when executable), or the script fails.
#
# Environment: BIN (build/bin), MESH (OP2's 720K new_grid.dat, else the generated 720K mesh),
# BENCH_ITERS (100), BENCH_REPS (3), BENCH_PARTITION (METIS:KWAY), CMP_RMS
# (build/test-airfoil/cmp_rms), OP2_CACHE_DIR (build/bench/cache-hybrid).
set -eu
BIN=${BIN:-build/bin}
ITERS=${BENCH_ITERS:-100}
REPS=${BENCH_REPS:-3}
PART=${BENCH_PARTITION:-METIS:KWAY}
CMP=${CMP_RMS:-build/test-airfoil/cmp_rms}
if [ -z "${MESH:-}" ]; then
  for m in build/test-airfoil/new_grid.dat build/bench/mesh-720000.dat; do
    [ -f "$m" ] && { MESH=$m; break; }
  done
fi
[ -n "${MESH:-}" ] && [ -f "$MESH" ] || { echo "bench/hybrid.sh: no mesh (set MESH=...)" >&2; exit 1; }
[ -x "$BIN/airfoil" ] || { echo "bench/hybrid.sh: missing $BIN/airfoil" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$PWD/build/bench/cache-hybrid}
mkdir -p "$OP2_CACHE_DIR"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

CONFIGS="seq-1 seq-2 thr-2x1 thr-1x2 thr-2x2 thr-1x2-bound"
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
echo "bench/hybrid.sh: $MESH, $ITERS iterations, partition $PART, $REPS rounds of: $CONFIGS"
echo "machine: $cpu, $(getconf _NPROCESSORS_ONLN) cores; $(mpiexec --version 2>/dev/null | head -n 1)"
echo "before: $(uptime)"

run() { # config round
  case $1 in
    seq-1) set -- "$1" "$2" 1 --bind-to none -- OP2_BACKEND=seq ;;
    seq-2) set -- "$1" "$2" 2 --bind-to none -- OP2_BACKEND=seq ;;
    thr-2x1) set -- "$1" "$2" 2 --bind-to none -- OP2_BACKEND=threads OP2_NUM_THREADS=1 ;;
    thr-1x2) set -- "$1" "$2" 1 --bind-to none -- OP2_BACKEND=threads OP2_NUM_THREADS=2 ;;
    thr-2x2) set -- "$1" "$2" 2 --bind-to none -- OP2_BACKEND=threads OP2_NUM_THREADS=2 ;;
    thr-1x2-bound) set -- "$1" "$2" 1 -- OP2_BACKEND=threads OP2_NUM_THREADS=2 ;;
  esac
  c=$1 r=$2 n=$3
  shift 3
  launch=""
  while [ "$1" != "--" ]; do launch="$launch $1"; shift; done
  shift
  # shellcheck disable=SC2086 # launch: words
  mpiexec -n "$n" $launch "$BIN/airfoil" --mesh "$MESH" --iters "$ITERS" --partition "$PART" \
    --rms-log "$out/rms.$c.$r" "$@" >"$out/$c.$r" 2>&1 ||
    { echo "bench/hybrid.sh: $c run $r failed:" >&2; tail -n 20 "$out/$c.$r" >&2; exit 1; }
  ms=$(sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$out/$c.$r")
  echo "$ms" >>"$out/times.$c"
  printf 'round %d %-14s %9s ms/iter   mpiexec -n %s%s airfoil %s\n' "$r" "$c" "$ms" "$n" "$launch" "$*"
}

# Untimed: fills the JIT cache for both backends.
"$BIN/airfoil" --mesh "$MESH" --iters 1 OP2_BACKEND=seq >/dev/null 2>&1
"$BIN/airfoil" --mesh "$MESH" --iters 1 OP2_BACKEND=threads >/dev/null 2>&1
r=1
while [ "$r" -le "$REPS" ]; do
  for c in $CONFIGS; do run "$c" "$r"; done
  r=$((r + 1))
done
echo "after: $(uptime)"
echo
echo "| configuration | median ms/iter | range | median / seq-1 |"
echo "|---|---:|---:|---:|"
base=$(sort -n "$out/times.seq-1" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
for c in $CONFIGS; do
  sort -n "$out/times.$c" | awk -v c="$c" -v b="$base" '{ a[NR] = $1 }
    END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
          printf "| %s | %.1f | %.1f-%.1f | %.2f |\n", c, m, a[1], a[NR], m / b }'
done
# Threads per process, from the last round's op_timing_output (blocks run by each thread).
echo
for c in $CONFIGS; do
  case $c in thr-*) sed -n "s/^op2 threads backend: \(.*\)/  $c: process 0: \1/p; s/^  \(process [0-9]*: .*threads*, blocks.*\)/  $c: \1/p" "$out/$c.$REPS" ;; esac
done
if [ -x "$CMP" ]; then
  fails=0
  for f in "$out"/rms.*; do
    "$CMP" --rel 1e-12 "$f" "$out/rms.seq-1.1" >/dev/null || { echo "FAIL: $f differs from seq-1 beyond 1e-12"; fails=$((fails + 1)); }
  done
  [ $fails -eq 0 ] && echo "every run's rms within 1e-12 of seq-1's at every iteration"
  [ $fails -eq 0 ]
fi
