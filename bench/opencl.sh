#!/bin/sh
# bench/opencl.sh: Airfoil on `opencl` against `threads` in one run (make bench-opencl; issue 10,
# point 11). The two backends run interleaved, BENCH_REPS times each, on the same mesh, so load
# from other jobs on a shared machine hits both alike; `uptime` is printed before and after.
# Prints, per run, the steady ms/iter (airfoil's figure after its first iteration, which holds
# JIT compilation and the device's first launches) and each loop's mean ms per call from
# op_timing_output; then the median of each figure per backend and the ratio opencl / threads.
#
# Environment: BIN (build/bin), MESH (OP2's 720K new_grid.dat, else the generated 720K mesh of
# make bench), BENCH_ITERS (50), BENCH_REPS (5), BENCH_THREADS (2), OCL_ENV (extra NAME=VALUE
# tokens for the opencl runs, e.g. OP2_INC=colour), OP2_CACHE_DIR (build/bench/cache-opencl).
set -eu
BIN=${BIN:-build/bin}
ITERS=${BENCH_ITERS:-50}
REPS=${BENCH_REPS:-5}
THREADS=${BENCH_THREADS:-2}
OCL_ENV=${OCL_ENV:-}
if [ -z "${MESH:-}" ]; then
  for m in build/test-airfoil/new_grid.dat build/bench/mesh-720000.dat; do
    [ -f "$m" ] && { MESH=$m; break; }
  done
fi
[ -n "${MESH:-}" ] && [ -f "$MESH" ] || { echo "bench/opencl.sh: no mesh (set MESH=...)" >&2; exit 1; }
[ -x "$BIN/airfoil" ] || { echo "bench/opencl.sh: missing $BIN/airfoil" >&2; exit 1; }
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$PWD/build/bench/cache-opencl}
mkdir -p "$OP2_CACHE_DIR"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
echo "bench/opencl.sh: $MESH, $ITERS iterations, $REPS runs each, interleaved; $cpu, $(getconf _NPROCESSORS_ONLN) cores"
echo "before: $(uptime)"
# One untimed run each: fills op2's JIT cache (host code and OpenCL program binaries).
"$BIN/airfoil" --mesh "$MESH" --iters 2 OP2_BACKEND=threads >/dev/null
# shellcheck disable=SC2086 # OCL_ENV is a list of tokens
"$BIN/airfoil" --mesh "$MESH" --iters 2 OP2_BACKEND=opencl $OCL_ENV >/dev/null
r=1
while [ "$r" -le "$REPS" ]; do
  "$BIN/airfoil" --mesh "$MESH" --iters "$ITERS" OP2_BACKEND=threads OP2_NUM_THREADS="$THREADS" \
    >"$out/threads.$r" 2>&1
  # shellcheck disable=SC2086
  "$BIN/airfoil" --mesh "$MESH" --iters "$ITERS" OP2_BACKEND=opencl $OCL_ENV >"$out/opencl.$r" 2>&1
  for b in threads opencl; do
    awk -v b="$b" -v r="$r" '
      /then [0-9.]+ ms\/iter/ { for (i = 1; i <= NF; i++) if ($i == "then") it = $(i + 1) }
      /^  (save_soln|adt_calc|res_calc|bres_calc|update) / { l = l sprintf(" %s %s", $1, $4) }
      END { printf "run %d %-7s iter %s%s\n", r, b, it, l }' "$out/$b.$r"
  done
  r=$((r + 1))
done | tee "$out/table"
echo "after: $(uptime)"
awk '
  function median(key,   n, i, j, t, v) {
    n = cnt[key]
    for (i = 1; i <= n; i++) v[i] = val[key, i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { b = $3; for (i = 4; i < NF; i += 2) { k = b SUBSEP $i; val[k, ++cnt[k]] = $(i + 1); names[$i] = 1 } }
  END {
    printf "median ms        %10s %10s %8s\n", "threads", "opencl", "ratio"
    split("iter save_soln adt_calc res_calc bres_calc update", order, " ")
    for (o = 1; o <= 6; o++) {
      n = order[o]; if (!(n in names)) continue
      t = median("threads" SUBSEP n); c = median("opencl" SUBSEP n)
      printf "%-16s %10.3f %10.3f %8.2f\n", (n == "iter" ? "iteration" : n), t, c, c / t
    }
  }' "$out/table"
