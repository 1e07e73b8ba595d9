#!/bin/sh
# bench/lazy.sh: Airfoil eager, lazy (OP2_LAZY=1, the unchanged program) and chained (--chain,
# one loop chain per iteration), on seq and on threads (make bench-lazy; issue 23, point 12).
# For each backend the three modes run interleaved, BENCH_REPS times each, on the same mesh, so
# load from other jobs hits all alike; `uptime` is printed before and after. The figure is
# airfoil's steady ms/iter (after its first iteration, which holds JIT compilation and the
# chains' inspection). Prints a markdown table: median and best ms/iter per mode, and the
# ratios lazy / eager and chain / eager of the medians (and of the bests); then the traffic
# model op_timing_output prints for the chains; then whether the final q of lazy and chain runs
# is bit for bit eager's on seq (it must be: the script fails otherwise).
#
# Environment: BIN (build/bin), MESH (OP2's 720K new_grid.dat, else the generated 720K mesh of
# make bench), BENCH_ITERS (200), BENCH_REPS (5), BENCH_THREADS (2), BENCH_BACKENDS (seq threads),
# OP2_CACHE_DIR (build/bench/cache-lazy); tokens such as OP2_TILE_SIZE=8192 as arguments are
# passed to every run.
set -eu
BIN=${BIN:-build/bin}
ITERS=${BENCH_ITERS:-200}
REPS=${BENCH_REPS:-5}
THREADS=${BENCH_THREADS:-2}
BACKENDS=${BENCH_BACKENDS:-seq threads}
if [ -z "${MESH:-}" ]; then
  for m in build/test-airfoil/new_grid.dat build/bench/mesh-720000.dat; do
    [ -f "$m" ] && { MESH=$m; break; }
  done
fi
[ -n "${MESH:-}" ] && [ -f "$MESH" ] || { echo "bench/lazy.sh: no mesh (set MESH=...)" >&2; exit 1; }
[ -x "$BIN/airfoil" ] || { echo "bench/lazy.sh: missing $BIN/airfoil" >&2; exit 1; }
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$PWD/build/bench/cache-lazy}
mkdir -p "$OP2_CACHE_DIR"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
echo "bench/lazy.sh: $MESH, $ITERS iterations, $REPS runs per mode, interleaved; $cpu, $(getconf _NPROCESSORS_ONLN) cores; extra tokens: $*"
echo "before: $(uptime)"

run() { # backend mode rep
  b=$1 mode=$2 r=$3
  case $mode in
    eager) set -- ;;
    lazy) set -- OP2_LAZY=1 ;;
    chain) set -- --chain ;;
  esac
  "$BIN/airfoil" --mesh "$MESH" --iters "$ITERS" --save "$out/q.$b.$mode.$r" "$@" OP2_BACKEND="$b" \
    OP2_NUM_THREADS="$THREADS" $EXTRA >"$out/$b.$mode.$r" 2>&1
  sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$out/$b.$mode.$r"
}
EXTRA="$*"

echo "| backend | mode | median ms/iter | best ms/iter | median / eager | best / eager | runs (ms/iter) |"
echo "|---|---|---:|---:|---:|---:|---|"
fails=0
for b in $BACKENDS; do
  # Untimed: fills the JIT cache.
  "$BIN/airfoil" --mesh "$MESH" --iters 2 OP2_BACKEND="$b" $EXTRA >/dev/null 2>&1
  for mode in eager lazy chain; do : >"$out/times.$b.$mode"; done
  r=1
  while [ "$r" -le "$REPS" ]; do
    for mode in eager lazy chain; do
      run "$b" "$mode" "$r" >>"$out/times.$b.$mode"
    done
    r=$((r + 1))
  done
  em=$(sort -n "$out/times.$b.eager" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
  eb=$(sort -n "$out/times.$b.eager" | head -n 1)
  for mode in eager lazy chain; do
    med=$(sort -n "$out/times.$b.$mode" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
    best=$(sort -n "$out/times.$b.$mode" | head -n 1)
    all=$(tr '\n' ' ' <"$out/times.$b.$mode")
    echo "| $b | $mode | $med | $best | $(awk -v a="$med" -v e="$em" 'BEGIN { printf "%.3f", a / e }') | $(awk -v a="$best" -v e="$eb" 'BEGIN { printf "%.3f", a / e }') | $all|"
  done
done
echo
echo "Traffic model (op_timing_output of the last runs: bytes a chain moves if each tile stays in cache, against the eager loops' own counts):"
for b in $BACKENDS; do
  for mode in lazy chain; do
    grep -E '^  chain:' "$out/$b.$mode.$REPS" | grep 'traffic model' | sed "s/^/  $b $mode: /" || true
  done
done
echo
for mode in lazy chain; do
  r=1
  while [ "$r" -le "$REPS" ]; do
    if [ -f "$out/q.seq.$mode.$r" ]; then
      if cmp -s "$out/q.seq.eager.1" "$out/q.seq.$mode.$r"; then :; else
        echo "FAIL: seq $mode run $r: final q differs from eager"; fails=$((fails + 1))
      fi
    fi
    r=$((r + 1))
  done
done
case " $BACKENDS " in *" seq "*) [ $fails -eq 0 ] && echo "seq: final q of every lazy and chain run bit for bit eager's" ;; esac
echo "after: $(uptime)"
[ $fails -eq 0 ]
