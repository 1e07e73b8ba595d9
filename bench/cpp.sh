#!/bin/sh
# bench/cpp.sh: the C Airfoil against the OP2-style C++ Airfoil (tests/cpp/op2-style/airfoil.cpp,
# OP2's op_seq.h API, kernels as C functions in their headers) on both tiers: the JIT tier (op2
# finds <kernel>.h beside the source and compiles it into the loop) and the call-per-element
# tier (the same program built from a copy whose headers were then deleted: op2 calls the
# compiled kernels once per element). make bench-cpp (issue 32). For each backend the
# three programs run interleaved, BENCH_REPS times each, on the same mesh, so load from other
# jobs hits all alike; `uptime` is printed before and after. The figure is the total of op2's
# loop timing table (op_timing_output; op_profile_output in the C++ program prints it too): the
# sum of every loop's time divided by the iterations, the same measure for every program. Prints
# a markdown table: median ms/iter per program and the ratios to the C Airfoil's median.
#
# Environment: BIN (build/bin: airfoil), CXXBIN (build/cpp-op2-style: airfoil built by
# tests/cpp/op2-style's Makefile), EBIN (build/cpp-op2-style-element: the copy without kernel
# headers, tests/cpp/op2-style/element.sh), MESH (OP2's 720K new_grid.dat, else the generated
# 720K mesh), BENCH_ITERS (200), BENCH_REPS (3), BENCH_THREADS (2), BENCH_BACKENDS (seq threads),
# OP2_CACHE_DIR (build/bench/cache-cpp), OP2_LIBDIR (the directory of the libop2.so the C++
# builds link, make bench-cpp: build/prefix/lib; the C Airfoil then loads it too, through
# LD_LIBRARY_PATH, so that every program runs the same library).
set -eu
BIN=${BIN:-build/bin}
CXXBIN=${CXXBIN:-build/cpp-op2-style}
EBIN=${EBIN:-build/cpp-op2-style-element}
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
[ -n "${MESH:-}" ] && [ -f "$MESH" ] || { echo "bench/cpp.sh: no mesh (set MESH=...)" >&2; exit 1; }
MESH=$(cd "$(dirname "$MESH")" && pwd)/$(basename "$MESH")
for p in "$BIN/airfoil" "$CXXBIN/airfoil" "$EBIN/airfoil"; do
  [ -x "$p" ] || { echo "bench/cpp.sh: missing $p" >&2; exit 1; }
done
for k in save_soln adt_calc res_calc bres_calc update; do
  [ ! -e "$EBIN/$k.h" ] || { echo "bench/cpp.sh: $EBIN/$k.h exists: that build would be on the JIT tier" >&2; exit 1; }
done
BIN=$(cd "$BIN" && pwd)
CXXBIN=$(cd "$CXXBIN" && pwd)
EBIN=$(cd "$EBIN" && pwd)
unset OP2_KERNEL_PATH
if [ -n "${OP2_LIBDIR:-}" ]; then
  export LD_LIBRARY_PATH=$OP2_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$root/build/bench/cache-cpp}
mkdir -p "$OP2_CACHE_DIR"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
echo "bench/cpp.sh: $MESH, $ITERS iterations, $REPS runs per program, interleaved; $cpu, $(getconf _NPROCESSORS_ONLN) cores"
echo "library: C Airfoil $(ldd "$BIN/airfoil" | awk '$1 == "libop2.so" { print $3 }'), C++ $(ldd "$CXXBIN/airfoil" | awk '$1 == "libop2.so" { print $3 }')"
echo "before: $(uptime)"

run() { # backend program
  b=$1 p=$2
  case $p in
    c) exe=$BIN/airfoil ;;
    jit) exe=$CXXBIN/airfoil ;;
    element) exe=$EBIN/airfoil ;;
  esac
  (cd "$out" && OP2_BACKEND=$b OP2_NUM_THREADS=$THREADS OP2_DIAGNOSTICS=1 "$exe" --mesh "$MESH" --iters "$ITERS") \
    >"$out/log" 2>&1 || { echo "bench/cpp.sh: $p on $b failed:" >&2; tail -5 "$out/log" >&2; exit 1; }
  # the tier each C++ build must be on
  case $p in
    jit) ! grep -q "call-per-element tier" "$out/log" && [ "$(grep -c ": JIT tier: " "$out/log")" -eq 5 ] ;;
    element) ! grep -q ": JIT tier: " "$out/log" && [ "$(grep -c "call-per-element tier" "$out/log")" -eq 5 ] ;;
  esac || { echo "bench/cpp.sh: $p on $b is not on its tier:" >&2; grep "C kernel" "$out/log" >&2; exit 1; }
  awk -v n="$ITERS" '$1 == "total" && NF == 2 { t = $2 } END { if (t == "") exit 1; printf "%.3f\n", 1000 * t / n }' "$out/log" ||
    { echo "bench/cpp.sh: $p on $b: no timing table:" >&2; tail -5 "$out/log" >&2; exit 1; }
}
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| backend | program | median ms/iter | / C | runs (ms/iter) |"
echo "|---|---|---:|---:|---|"
for b in $BACKENDS; do
  for p in c jit element; do run "$b" "$p" >/dev/null; : >"$out/t.$b.$p"; done   # fills the cache
  r=1
  while [ "$r" -le "$REPS" ]; do
    for p in c jit element; do run "$b" "$p" >>"$out/t.$b.$p"; done
    r=$((r + 1))
  done
  c=$(median "$out/t.$b.c")
  for p in c jit element; do
    m=$(median "$out/t.$b.$p")
    case $p in c) name="C Airfoil" ;; jit) name="C++ (OP2 style), JIT tier" ;; element) name="C++ (OP2 style), call-per-element tier" ;; esac
    echo "| $b | $name | $m | $(awk -v a="$m" -v c="$c" 'BEGIN { printf "%.3f", a / c }') | $(tr '\n' ' ' <"$out/t.$b.$p") |"
  done
done
echo "after: $(uptime)"
