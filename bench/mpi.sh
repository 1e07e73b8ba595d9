#!/bin/sh
# bench/mpi.sh: Airfoil under MPI at -n 1 and -n 2, op2 against OP2-Common (make bench-mpi;
# issue 25, point 8). op2's examples-c/airfoil runs on seq with op_partition METIS KWAY (its
# default); when OP2_COMMON_DIR names an OP2-Common source tree (never downloaded: the user
# points at one), its MPI Airfoil (apps/c/airfoil/airfoil_plain/dp) is built from that tree and
# runs the same mesh at the same process counts. Runs are interleaved (round r runs every
# program at every -n before round r+1), BENCH_REPS rounds, so load from other jobs hits all
# alike; `uptime` is printed before and after. Prints a markdown table: median and best
# ms/iteration per program and -n, the -n 2 / -n 1 ratio of the medians, and op2 / OP2-Common.
#
# Figures: op2's is airfoil's steady ms/iter (after its first iteration, which holds JIT
# compilation), over BENCH_ITERS iterations; OP2-Common's Airfoil always runs 1000 iterations and
# prints "Max total runtime = S" (seconds over its 1000 iterations, after partitioning): S
# seconds / 1000 iterations = S ms/iter. Both include halo exchanges and reductions.
#
# Building OP2-Common (only with OP2_COMMON_DIR; log in $BUILD/bench/op2-common-build.log):
#   library: make -C $OP2_COMMON_DIR/op2 OP2_COMPILER=gnu mpi (trees with makefiles/common.mk:
#            their MPI library needs a parallel HDF5, HDF5_INSTALL_PATH), else mpi_seq (older);
#   app:     make OP2_COMPILER=gnu airfoil_mpi_seq in the app directory (c_app.mk: the app's
#            source with -DUSE_MPI, op_seq.h's loops, no code generator needed), else airfoil_mpi
#            (older trees: airfoil_mpi.cpp, OP2_INSTALL_PATH=$OP2_COMMON_DIR/op2).
# Only what the MPI Airfoil needs is built (the MPI library and one app variant; no translator,
# no CUDA). PTSCOTCH_INSTALL_PATH / PARMETIS_INSTALL_PATH in the environment reach OP2-Common's
# makefiles: its Airfoil asks op_partition for PTSCOTCH KWAY; built without PT-Scotch, OP2-Common
# keeps its block distribution and says so (the table then compares different partitions).
# OP2_COMMON_AIRFOIL=path skips the build and runs that executable (it must read new_grid.dat
# from its working directory, as OP2-Common's Airfoil does).
#
# Environment: BIN (build/bin), BUILD (build), MESH (OP2's 720K new_grid.dat), BENCH_ITERS (200),
# BENCH_REPS (3), BENCH_NPROCS (1 2), MPIEXEC (mpiexec --oversubscribe), OP2_COMMON_DIR,
# OP2_COMMON_AIRFOIL, OP2_CACHE_DIR (build/bench/cache-mpi).
set -eu
BIN=${BIN:-build/bin}
BUILD=${BUILD:-build}
ITERS=${BENCH_ITERS:-200}
REPS=${BENCH_REPS:-3}
NPROCS=${BENCH_NPROCS:-1 2}
MPIEXEC=${MPIEXEC:-mpiexec --oversubscribe}
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
[ -n "${MESH:-}" ] && [ -f "$MESH" ] || { echo "bench/mpi.sh: no mesh (set MESH=new_grid.dat)" >&2; exit 1; }
[ -x "$BIN/airfoil" ] || { echo "bench/mpi.sh: missing $BIN/airfoil" >&2; exit 1; }
MESH=$(cd "$(dirname "$MESH")" && pwd)/$(basename "$MESH")
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$PWD/$BUILD/bench/cache-mpi}
mkdir -p "$OP2_CACHE_DIR" "$BUILD/bench"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# OP2-Common's MPI Airfoil, built from the user's tree.
oc=""
if [ -n "${OP2_COMMON_AIRFOIL:-}" ]; then
  [ -x "$OP2_COMMON_AIRFOIL" ] || { echo "bench/mpi.sh: OP2_COMMON_AIRFOIL=$OP2_COMMON_AIRFOIL is not an executable" >&2; exit 1; }
  oc=$(cd "$(dirname "$OP2_COMMON_AIRFOIL")" && pwd)/$(basename "$OP2_COMMON_AIRFOIL")
elif [ -n "${OP2_COMMON_DIR:-}" ]; then
  app=$OP2_COMMON_DIR/apps/c/airfoil/airfoil_plain/dp
  [ -d "$OP2_COMMON_DIR/op2" ] && [ -d "$app" ] ||
    { echo "bench/mpi.sh: OP2_COMMON_DIR=$OP2_COMMON_DIR has no op2/ and apps/c/airfoil/airfoil_plain/dp/ (an OP2-Common checkout?)" >&2; exit 1; }
  log=$PWD/$BUILD/bench/op2-common-build.log
  echo "bench/mpi.sh: building OP2-Common's MPI library and MPI Airfoil from $OP2_COMMON_DIR (log: $log)"
  : >"$log"
  if ! { make -C "$OP2_COMMON_DIR/op2" OP2_COMPILER=gnu mpi >>"$log" 2>&1 ||
    make -C "$OP2_COMMON_DIR/op2" OP2_COMPILER=gnu mpi_seq >>"$log" 2>&1; }; then
    tail -n 20 "$log" >&2
    echo "bench/mpi.sh: OP2-Common's MPI library did not build (targets mpi and mpi_seq); see $log" >&2
    exit 1
  fi
  for target in airfoil_mpi_seq airfoil_mpi; do
    if (cd "$app" && make OP2_COMPILER=gnu OP2_INSTALL_PATH="$OP2_COMMON_DIR/op2" "$target") >>"$log" 2>&1 &&
      [ -x "$app/$target" ]; then
      oc=$(cd "$app" && pwd)/$target
      break
    fi
  done
  [ -n "$oc" ] || { tail -n 20 "$log" >&2; echo "bench/mpi.sh: OP2-Common's MPI Airfoil did not build (airfoil_mpi_seq, airfoil_mpi); see $log" >&2; exit 1; }
  echo "bench/mpi.sh: OP2-Common's MPI Airfoil: $oc"
fi
[ -n "$oc" ] && { mkdir -p "$out/oc" && ln -s "$MESH" "$out/oc/new_grid.dat"; }

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
echo "bench/mpi.sh: $MESH; op2 seq, METIS KWAY, $ITERS iterations; -n $NPROCS; $REPS rounds, interleaved; $cpu, $(getconf _NPROCESSORS_ONLN) cores"
[ -n "$oc" ] || echo "bench/mpi.sh: OP2-Common skipped (set OP2_COMMON_DIR to an OP2-Common source tree, or OP2_COMMON_AIRFOIL to its MPI Airfoil)"
echo "before: $(uptime)"

run_op2() { # n round
  $MPIEXEC -n "$1" "$BIN/airfoil" --mesh "$MESH" --iters "$ITERS" --partition METIS:KWAY OP2_BACKEND=seq \
    >"$out/op2.$1.$2" 2>&1 || { cat "$out/op2.$1.$2" >&2; echo "bench/mpi.sh: op2 Airfoil -n $1 failed" >&2; exit 1; }
  t=$(sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$out/op2.$1.$2")
  [ -n "$t" ] || { cat "$out/op2.$1.$2" >&2; echo "bench/mpi.sh: no ms/iter in op2's output" >&2; exit 1; }
  echo "$t"
}
run_oc() { # n round
  (cd "$out/oc" && $MPIEXEC -n "$1" "$oc") >"$out/oc.$1.$2" 2>&1 ||
    { cat "$out/oc.$1.$2" >&2; echo "bench/mpi.sh: OP2-Common Airfoil -n $1 failed" >&2; exit 1; }
  t=$(sed -n 's/.*Max total runtime = *\([0-9.eE+-]*\).*/\1/p' "$out/oc.$1.$2" | tail -n 1)
  [ -n "$t" ] || { cat "$out/oc.$1.$2" >&2; echo "bench/mpi.sh: no 'Max total runtime' in OP2-Common's output" >&2; exit 1; }
  awk -v s="$t" 'BEGIN { printf "%.3f\n", s }' # S seconds / 1000 iterations = S ms/iter
}

# Untimed: fills op2's JIT cache.
$MPIEXEC -n 1 "$BIN/airfoil" --mesh "$MESH" --iters 2 OP2_BACKEND=seq >/dev/null 2>&1
progs=op2
[ -n "$oc" ] && progs="op2 oc"
for p in $progs; do for n in $NPROCS; do : >"$out/times.$p.$n"; done; done
r=1
while [ "$r" -le "$REPS" ]; do
  for n in $NPROCS; do
    for p in $progs; do
      "run_$p" "$n" "$r" >>"$out/times.$p.$n"
    done
  done
  r=$((r + 1))
done

median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
first=${NPROCS%% *}
echo
echo "| program | -n | median ms/iter | best ms/iter | median / -n $first | op2 / OP2-Common (medians) | runs (ms/iter) |"
echo "|---|---:|---:|---:|---:|---:|---|"
for p in $progs; do
  base=$(median "$out/times.$p.$first")
  for n in $NPROCS; do
    med=$(median "$out/times.$p.$n")
    best=$(sort -n "$out/times.$p.$n" | head -n 1)
    ratio=$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.3f", a / b }')
    vs=-
    if [ -n "$oc" ]; then
      vs=$(awk -v a="$(median "$out/times.op2.$n")" -v b="$(median "$out/times.oc.$n")" 'BEGIN { printf "%.3f", a / b }')
    fi
    name=op2
    [ "$p" = oc ] && name=OP2-Common
    echo "| $name | $n | $med | $best | $ratio | $vs | $(tr '\n' ' ' <"$out/times.$p.$n")|"
  done
done
echo
echo "op2's halo traffic (op_timing_output, last round):"
for n in $NPROCS; do
  grep -E 'MPI halo exchanges' "$out/op2.$n.$REPS" | sed "s/^ */  -n $n: /" || true
done
if [ -n "$oc" ]; then
  echo "OP2-Common's partitioner (its output, last round):"
  for n in $NPROCS; do
    grep -iE 'partition|scotch|metis' "$out/oc.$n.$REPS" | head -n 3 | sed "s/^/  -n $n: /" || true
  done
fi
echo "after: $(uptime)"
