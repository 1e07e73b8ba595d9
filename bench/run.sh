#!/bin/sh
# bench/run.sh: the Airfoil benchmark in one command (make bench).
#
#   1. generates the standard 720K-cell NACA0012 mesh with op2-meshgen (BENCH_CELLS), or takes
#      BENCH_MESH (a mesh in new_grid.dat format: make bench passes OP2's own 720K mesh when
#      ../shared has it)
#   2. measures STREAM-triad bandwidth (bench/stream.c): 1 thread and all threads
#   3. runs airfoil-plain (plain C, -O3 -march=native) for BENCH_ITERS iterations
#   4. runs airfoil on each backend (BENCH_BACKENDS, else TEST_BACKENDS, else "seq threads"
#      where available) for BENCH_ITERS iterations, after a 2-iteration warm-up that fills the
#      JIT cache; then, with BENCH_CHAIN=1 (the default), each host backend again with --chain
#      (each iteration one sparse-tiled loop chain)
#   5. with BENCH_BOUND=1 (the default) and seq among the backends, runs seq again on a mesh of
#      BENCH_BOUND_CELLS cells (4000: its data fits in a core's L2 cache) to measure each loop's
#      time an element when memory is not in the way, and prints what the machine allows: per
#      loop, the larger of that compute time (scaled to the big mesh; divided by the threads for
#      threads, which assumes perfect scaling) and the loop's own traffic at the triad rate;
#      their sum is the iteration's bound, to set beside the floor (traffic alone)
#   6. prints a markdown table (ms/iteration over the whole run and after the first iteration,
#      which holds the one-time costs: JIT cache loads, first touch of the work arrays; ratio
#      to plain C and to the floor; and per loop, from
#      op_timing_output: GB/s and fraction of stream bandwidth; seq is compared with the
#      1-thread stream figure, parallel backends with the all-threads one) and writes JSON to
#      bench/results.json (BENCH_JSON)
#
# Environment: BIN (build/bin), BUILD (build), BENCH_ITERS (200), BENCH_CELLS (720000),
# BENCH_MESH, BENCH_BACKENDS, TEST_BACKENDS, BENCH_CHAIN (1), BENCH_BOUND (1), BENCH_BOUND_CELLS
# (4000), BENCH_JSON (bench/results.json), STREAM (BUILD/bench/stream).
set -eu
BIN=${BIN:-build/bin}
BUILD=${BUILD:-build}
ITERS=${BENCH_ITERS:-200}
CELLS=${BENCH_CELLS:-720000}
JSON=${BENCH_JSON:-bench/results.json}
STREAM=${STREAM:-$BUILD/bench/stream}
BACKENDS=${BENCH_BACKENDS:-${TEST_BACKENDS:-seq threads}}
CHAIN=${BENCH_CHAIN:-1}
BOUND=${BENCH_BOUND:-1}
BCELLS=${BENCH_BOUND_CELLS:-4000}

dir=$BUILD/bench
mkdir -p "$dir"
for p in "$BIN/op2-meshgen" "$BIN/airfoil-plain" "$BIN/airfoil" "$STREAM"; do
  [ -x "$p" ] || { echo "bench: missing $p (make examples $STREAM)" >&2; exit 1; }
done

if [ -n "${BENCH_MESH:-}" ]; then
  mesh=$BENCH_MESH
  meshname="$mesh"
else
  mesh=$dir/mesh-$CELLS.dat
  if [ ! -f "$mesh" ] || [ "$BIN/op2-meshgen" -nt "$mesh" ]; then
    "$BIN/op2-meshgen" --cells "$CELLS" -o "$mesh"
  fi
  meshname="op2-meshgen --cells $CELLS"
fi
read nnode ncell nedge nbedge < "$mesh"
# Compulsory memory traffic of one Airfoil iteration on the 720K mesh (shared/airfoil.md),
# scaled by the number of cells for other sizes.
MB_PER_ITER=$(awk -v c="$ncell" 'BEGIN { printf "%.1f", 565.0 * c / 720000 }')

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)

echo "bench: stream triad ..." >&2
"$STREAM" > "$dir/stream.out"
s1=$(awk '/triad 1 thread:/ { print $(NF-1) }' "$dir/stream.out")
sn=$(awk '/triad [0-9]+ threads:/ { print $(NF-1) }' "$dir/stream.out")
sthreads=$(awk '/triad [0-9]+ threads:/ { print $3 }' "$dir/stream.out")

# ms/iter from the final line "airfoil: N iterations, T s, X ms/iter"
msiter() { awk '/^airfoil: [0-9]+ iterations, / { v = $(NF-1) } END { print v }' "$1"; }
# ms/iter after the first iteration ("then X ms/iter"); the whole run's figure where there is
# none (airfoil-plain)
steady() { awk '/^airfoil: first iteration .* then [0-9.]+ ms\/iter/ { v = $(NF-1) }
  /^airfoil: [0-9]+ iterations, / { w = $(NF-1) } END { print (v != "" ? v : w) }' "$1"; }

echo "bench: airfoil-plain, $ITERS iterations on $ncell cells ..." >&2
"$BIN/airfoil-plain" --mesh "$mesh" --iters "$ITERS" > "$dir/plain.out"
plain_ms=$(msiter "$dir/plain.out")

ran=""
for b in $BACKENDS; do
  if ! "$BIN/airfoil" --mesh "$mesh" --iters 2 "OP2_BACKEND=$b" > "$dir/warmup-$b.out" 2>&1; then
    echo "bench: backend $b unavailable or failing: $(grep -m1 'error' "$dir/warmup-$b.out" || tail -n 1 "$dir/warmup-$b.out")" >&2
    continue
  fi
  echo "bench: airfoil $b, $ITERS iterations ..." >&2
  "$BIN/airfoil" --mesh "$mesh" --iters "$ITERS" "OP2_BACKEND=$b" > "$dir/$b.out" 2>&1
  ran="$ran $b"
done
# The same backends with each iteration one loop chain (host backends tile it).
if [ "$CHAIN" = 1 ]; then
  for b in $ran; do
    case $b in seq | threads) ;; *) continue ;; esac
    echo "bench: airfoil $b --chain, $ITERS iterations ..." >&2
    "$BIN/airfoil" --mesh "$mesh" --iters "$ITERS" --chain "OP2_BACKEND=$b" > "$dir/$b-chain.out" 2>&1
    ran="$ran $b-chain"
  done
fi

# The bound: seq on a mesh small enough for a core's L2 cache, many iterations (about 3x10^7
# cell updates in all), so that each loop's time an element is its compute alone.
bound=0
case " $ran " in *" seq "*) [ "$BOUND" = 1 ] && bound=1 ;; esac
if [ $bound = 1 ]; then
  bmesh=$dir/mesh-bound-$BCELLS.dat
  if [ ! -f "$bmesh" ] || [ "$BIN/op2-meshgen" -nt "$bmesh" ]; then
    "$BIN/op2-meshgen" --cells "$BCELLS" -o "$bmesh" > /dev/null
  fi
  read bnnode bncell bnedge bnbedge < "$bmesh"
  biters=$(awk -v c="$bncell" 'BEGIN { n = int(3e7 / c); print (n < 100 ? 100 : n) }')
  echo "bench: airfoil seq on $bncell cells (in cache), $biters iterations ..." >&2
  "$BIN/airfoil" --mesh "$bmesh" --iters "$biters" OP2_BACKEND=seq > "$dir/bound.out" 2>&1
fi

# per-loop rows of op_timing_output: "name calls total_s mean_ms GB/s [jit_s]", after the
# header line that names the columns; prints "name calls total mean gbs"
loops() {
  awk '/calls/ && /GB\/s/ { t = 1; next }
       t && NF >= 5 && $2 ~ /^[0-9]+$/ && $5 ~ /^[0-9.eE+-]+$/ { print $1, $2, $3, $4, $5 }' "$1"
}

# The set each Airfoil loop runs over: its elements on the big mesh and on the bound's mesh.
setsize() { # loop, cells, edges, bedges
  case $1 in res_calc) echo "$3" ;; bres_calc) echo "$4" ;; *) echo "$2" ;; esac
}
# Per loop: name, ns/element in cache, ns/element on the big mesh (seq), traffic MB a call,
# bound and measured ms an iteration for seq, then for threads ("-" where threads did not run),
# and the compute ms an iteration on one thread (the in-cache time scaled to the big mesh).
boundrows() {
  loops "$dir/bound.out" | while read -r name calls total mean gbs; do
    big=$(setsize "$name" "$ncell" "$nedge" "$nbedge")
    small=$(setsize "$name" "$bncell" "$bnedge" "$bnbedge")
    seqrow=$(loops "$dir/seq.out" | awk -v n="$name" '$1 == n { print $2, $4, $5 }')
    thrrow=""
    case " $ran " in *" threads "*) thrrow=$(loops "$dir/threads.out" | awk -v n="$name" '$1 == n { print $4 }') ;; esac
    awk -v n="$name" -v m="$mean" -v big="$big" -v small="$small" -v row="$seqrow" -v tm="${thrrow:--}" \
        -v it="$ITERS" -v s1="$s1" -v sn="$sn" -v p="$sthreads" 'BEGIN {
      split(row, r, " "); calls = r[1] / it; sm = r[2]; mb = r[3] * r[2];
      comp = m * big / small; mem1 = mb / s1; memn = mb / sn;
      b1 = (comp > mem1 ? comp : mem1) * calls; bn = (comp / p > memn ? comp / p : memn) * calls;
      printf "%s %.6f %.6f %.3f %.6f %.6f %s %s %.6f\n", n, m * 1e6 / small, sm * 1e6 / big, mb, b1, sm * calls,
        (tm == "-" ? "-" : sprintf("%.3f", bn)), (tm == "-" ? "-" : sprintf("%.3f", tm * calls)), comp * calls }'
  done
}
# The bound of run $1 (ms an iteration): the sum of its loops' bounds; for a chain the larger
# of the floor and the sum of compute times alone (divided by the threads for threads).
iterbound() {
  case $1 in seq | seq-chain) col=5 s=$s1 p=1 ;; *) col=7 s=$sn p=$sthreads ;; esac
  case $1 in *-chain) chain=1 ;; *) chain=0 ;; esac
  boundrows | awk -v c="$col" -v p="$p" -v chain="$chain" -v fl="$(awk -v mb="$MB_PER_ITER" -v s="$s" 'BEGIN { print mb / s }')" '
    { t += chain ? $9 / p : $c } END { printf "%.4f", (chain && fl > t ? fl : t) }'
}

md=$dir/results.md
{
  echo "## Airfoil benchmark"
  echo
  echo "Machine: $cpu, $ncpu cores. Mesh: $meshname ($nnode nodes, $ncell cells, $nedge edges, $nbedge boundary edges), $ITERS iterations."
  echo "STREAM triad: $s1 GB/s (1 thread), $sn GB/s ($sthreads threads). Compulsory traffic about $MB_PER_ITER MB/iteration."
  echo "ms/iter: the whole run's; after the first: without the first iteration's one-time costs (JIT cache loads, first touch of the work arrays). Over the floor: after the first, against the floor."
  echo
  echo "| run | ms/iter | after the first | vs plain C | stream GB/s used | floor ms/iter | over the floor | achieved GB/s (floor traffic) | fraction of stream |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk -v ms="$plain_ms" -v s="$s1" -v mb="$MB_PER_ITER" 'BEGIN {
    fl = mb / s; printf "| plain C (1 thread) | %.2f | %.2f | 1.00 | %.2f | %.2f | %.2f | %.2f | %.2f |\n", ms, ms, s, fl, ms / fl, mb / ms, mb / ms / s }'
  for b in $ran; do
    ms=$(msiter "$dir/$b.out")
    st=$(steady "$dir/$b.out")
    case $b in seq | seq-chain) s=$s1 ;; *) s=$sn ;; esac
    name=$(echo "$b" | sed 's/-chain$/ --chain/')
    awk -v b="$name" -v ms="$ms" -v st="$st" -v p="$plain_ms" -v s="$s" -v mb="$MB_PER_ITER" 'BEGIN {
      fl = mb / s; printf "| op2 %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", b, ms, st, ms / p, s, fl, st / fl, mb / st, mb / st / s }'
  done
  loops "$dir/plain.out" > "$dir/plain.loops"
  echo
  echo "plain C, per loop:"
  echo
  echo "| loop | calls | total s | mean ms | GB/s | fraction of stream ($s1 GB/s) |"
  echo "|---|---:|---:|---:|---:|---:|"
  awk -v s="$s1" '{ printf "| %s | %d | %.3f | %.3f | %.2f | %.2f |\n", $1, $2, $3, $4, $5, $5 / s }' "$dir/plain.loops"
  for b in $ran; do
    case $b in *-chain) continue ;; seq) s=$s1 ;; *) s=$sn ;; esac
    echo
    echo "op2 $b, per loop (op_timing_output):"
    echo
    echo "| loop | calls | total s | mean ms | GB/s | fraction of stream ($s GB/s) | time vs plain C |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    loops "$dir/$b.out" | awk -v s="$s" 'FILENAME != "-" { pm[$1] = $4; next }
      { r = ($1 in pm && pm[$1] > 0) ? sprintf("%.2f", $4 / pm[$1]) : "-";
        printf "| %s | %d | %.3f | %.3f | %.2f | %.2f | %s |\n", $1, $2, $3, $4, $5, $5 / s, r }' "$dir/plain.loops" -
  done
  if [ $bound = 1 ]; then
    echo
    echo "What this machine allows: each loop's bound is the larger of its compute time (seq on $bncell cells, in cache, $biters iterations; per element, times the big mesh's elements; for threads divided by $sthreads, as if it scaled perfectly) and its own traffic (op2's count) at the triad rate; the iteration's bound is their sum. A loop chain saves traffic, never compute: its bound is the larger of the floor and the compute times' sum."
    echo
    echo "| loop | ns/element in cache | ns/element (seq) | traffic MB a call | bound ms/iter (seq) | seq ms/iter | bound ms/iter (threads) | threads ms/iter |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    boundrows | awk '{ printf "| %s | %.2f | %.2f | %.1f | %.3f | %.3f | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
    echo
    echo "| run | floor ms/iter | bound ms/iter | bound / floor | after the first | over the bound |"
    echo "|---|---:|---:|---:|---:|---:|"
    for b in $ran; do
      case $b in seq | seq-chain | threads | threads-chain) ;; *) continue ;; esac
      case $b in seq | seq-chain) s=$s1 ;; *) s=$sn ;; esac
      name=$(echo "$b" | sed 's/-chain$/ --chain/')
      awk -v b="$name" -v st="$(steady "$dir/$b.out")" -v s="$s" -v mb="$MB_PER_ITER" -v bd="$(iterbound "$b")" 'BEGIN {
        fl = mb / s; printf "| op2 %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", b, fl, bd, bd / fl, st, st / bd }'
    done
  fi
} > "$md"
cat "$md"

# JSON
{
  printf '{\n'
  printf '  "machine": {"cpu": "%s", "cores": %s},\n' "$(echo "$cpu" | sed 's/["\\]/ /g')" "$ncpu"
  printf '  "mesh": {"source": "%s", "nodes": %s, "cells": %s, "edges": %s, "bedges": %s},\n' \
    "$meshname" "$nnode" "$ncell" "$nedge" "$nbedge"
  printf '  "iterations": %s,\n' "$ITERS"
  printf '  "compulsory_mb_per_iter": %s,\n' "$MB_PER_ITER"
  printf '  "stream_triad_gbs": {"1_thread": %s, "all_threads": %s, "threads": %s},\n' "$s1" "$sn" "$sthreads"
  printf '  "plain_c": {"ms_per_iter": %s, "loops": [' "$plain_ms"
  awk -v s="$s1" 'BEGIN { sep = "" }
    { printf "%s\n    {\"name\": \"%s\", \"calls\": %d, \"total_s\": %s, \"mean_ms\": %s, \"gbs\": %s, \"fraction_of_stream\": %.3f}", sep, $1, $2, $3, $4, $5, $5 / s; sep = "," }' "$dir/plain.loops"
  printf '\n  ]},\n'
  printf '  "op2": ['
  first=1
  for b in $ran; do
    case $b in seq | seq-chain) s=$s1 ;; *) s=$sn ;; esac
    ms=$(msiter "$dir/$b.out")
    st=$(steady "$dir/$b.out")
    [ $first = 1 ] || printf ','
    first=0
    printf '\n    {"backend": "%s", "ms_per_iter": %s, "ms_per_iter_after_first": %s, "ratio_to_plain_c": %s, "stream_gbs": %s, "loops": [' \
      "$b" "$ms" "$st" "$(awk -v a="$ms" -v p="$plain_ms" 'BEGIN { printf "%.3f", a / p }')" "$s"
    loops "$dir/$b.out" | awk -v s="$s" 'BEGIN { sep = "" }
      { printf "%s\n      {\"name\": \"%s\", \"calls\": %d, \"total_s\": %s, \"mean_ms\": %s, \"gbs\": %s, \"fraction_of_stream\": %.3f}", sep, $1, $2, $3, $4, $5, $5 / s; sep = "," }'
    printf '\n    ]}'
  done
  printf '\n  ]'
  if [ $bound = 1 ]; then
    printf ',\n  "bound": {"mesh_cells": %s, "iterations": %s, "loops": [' "$bncell" "$biters"
    boundrows | awk 'BEGIN { sep = "" } {
      printf "%s\n    {\"name\": \"%s\", \"ns_per_element_in_cache\": %.3f, \"traffic_mb\": %.1f, \"bound_ms_per_iter_seq\": %.3f, \"bound_ms_per_iter_threads\": %s}", sep, $1, $2, $4, $5, ($7 == "-" ? "null" : $7); sep = "," }'
    printf '\n  ], "runs": ['
    first=1
    for b in $ran; do
      case $b in seq | seq-chain | threads | threads-chain) ;; *) continue ;; esac
      [ $first = 1 ] || printf ','
      first=0
      printf '\n    {"backend": "%s", "bound_ms_per_iter": %s}' "$b" "$(iterbound "$b")"
    done
    printf '\n  ]}'
  fi
  printf '\n}\n'
} > "$JSON"
echo
echo "bench: wrote $JSON and $md"
