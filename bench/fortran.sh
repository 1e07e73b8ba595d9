#!/bin/sh
# bench/fortran.sh: the C Airfoil against the OP2-style Fortran Airfoil (tests/fortran/op2-style,
# OP2's Fortran API, op_par_loop_N) on both tiers of Fortran kernels: the JIT tier (kernels'
# sources on OP2_FORTRAN_PATH, compiled into the loops with LTO) and the call-per-element tier
# (no source found). make bench-fortran; issue 24, point 7. For each backend the three programs
# run interleaved, BENCH_REPS times each, on the same mesh, so load from other jobs hits all
# alike; `uptime` is printed before and after. The figure is the total of op2's loop timing table
# (the sum of every loop's time) divided by the iterations, the same measure for both languages.
# Prints a markdown table: median ms/iter per program and the ratios to the C Airfoil's median;
# the C Airfoil also runs with OP2_SIMD=off (op2 cannot vectorise a Fortran kernel's loop: its
# vector wrappers rewrite C kernel source), the like-for-like scalar comparison.
#
# Environment: BIN (build/bin: airfoil), FBIN (build/op2-style: airfoil built by
# tests/fortran/op2-style's Makefile), MESH (OP2's 720K new_grid.dat, else the generated 720K
# mesh of make bench), BENCH_ITERS (200), BENCH_REPS (3), BENCH_THREADS (2), BENCH_BACKENDS (seq
# threads), OP2_CACHE_DIR (build/bench/cache-fortran).
set -eu
BIN=${BIN:-build/bin}
FBIN=${FBIN:-build/op2-style}
ITERS=${BENCH_ITERS:-200}
REPS=${BENCH_REPS:-3}
THREADS=${BENCH_THREADS:-2}
BACKENDS=${BENCH_BACKENDS:-seq threads}
root=$(pwd)
if [ -z "${MESH:-}" ]; then
  for m in build/test-airfoil/new_grid.dat build/bench/mesh-720000.dat; do
    [ -f "$m" ] && { MESH=$m; break; }
  done
fi
[ -n "${MESH:-}" ] && [ -f "$MESH" ] || { echo "bench/fortran.sh: no mesh (set MESH=...)" >&2; exit 1; }
MESH=$(cd "$(dirname "$MESH")" && pwd)/$(basename "$MESH")
[ -x "$BIN/airfoil" ] || { echo "bench/fortran.sh: missing $BIN/airfoil" >&2; exit 1; }
[ -x "$FBIN/airfoil" ] || { echo "bench/fortran.sh: missing $FBIN/airfoil" >&2; exit 1; }
FBIN=$(cd "$FBIN" && pwd)
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$root/build/bench/cache-fortran}
mkdir -p "$OP2_CACHE_DIR"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ln -s "$MESH" "$out/new_grid.dat"       # the OP2-style program reads this name
kernels=$root/tests/fortran/op2-style

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
echo "bench/fortran.sh: $MESH, $ITERS iterations, $REPS runs per program, interleaved; $cpu, $(getconf _NPROCESSORS_ONLN) cores"
echo "before: $(uptime)"

run() { # backend program
  b=$1 p=$2
  case $p in
    c) "$BIN/airfoil" --mesh "$MESH" --iters "$ITERS" OP2_BACKEND="$b" OP2_NUM_THREADS="$THREADS" >"$out/log" 2>&1 ;;
    cscalar) "$BIN/airfoil" --mesh "$MESH" --iters "$ITERS" OP2_BACKEND="$b" OP2_NUM_THREADS="$THREADS" OP2_SIMD=off \
            >"$out/log" 2>&1 ;;
    jit) (cd "$out" && OP2_BACKEND=$b OP2_NUM_THREADS=$THREADS OP2_FORTRAN_PATH=$kernels \
            "$FBIN/airfoil" "$ITERS" "$out/rms") >"$out/log" 2>&1 ;;
    element) # a copy without debug information, which would name the kernels' sources
            [ -x "$out/airfoil-nodebug" ] || objcopy --strip-debug "$FBIN/airfoil" "$out/airfoil-nodebug"
            (cd "$out" && OP2_BACKEND=$b OP2_NUM_THREADS=$THREADS OP2_FORTRAN_PATH= \
            "$out/airfoil-nodebug" "$ITERS" "$out/rms") >"$out/log" 2>&1 ;;
  esac
  awk -v n="$ITERS" '$1 == "total" && NF == 2 { t = $2 } END { if (t == "") exit 1; printf "%.3f\n", 1000 * t / n }' "$out/log" ||
    { echo "bench/fortran.sh: $p on $b failed:" >&2; tail -5 "$out/log" >&2; exit 1; }
}
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| backend | program | median ms/iter | / C | runs (ms/iter) |"
echo "|---|---|---:|---:|---|"
for b in $BACKENDS; do
  for p in c cscalar jit element; do run "$b" "$p" >/dev/null; : >"$out/t.$b.$p"; done   # fills the cache
  r=1
  while [ "$r" -le "$REPS" ]; do
    for p in c cscalar jit element; do run "$b" "$p" >>"$out/t.$b.$p"; done
    r=$((r + 1))
  done
  c=$(median "$out/t.$b.c")
  for p in c cscalar jit element; do
    m=$(median "$out/t.$b.$p")
    name=$p
    case $p in c) name="C Airfoil" ;; cscalar) name="C Airfoil, OP2_SIMD=off" ;; jit) name="Fortran, JIT tier" ;; element) name="Fortran, call-per-element tier" ;; esac
    echo "| $b | $name | $m | $(awk -v a="$m" -v c="$c" 'BEGIN { printf "%.3f", a / c }') | $(tr '\n' ' ' <"$out/t.$b.$p") |"
  done
done
echo "after: $(uptime)"
