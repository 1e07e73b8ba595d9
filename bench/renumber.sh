#!/bin/sh
# bench/renumber.sh: what a random element order costs Airfoil, and what op_renumber recovers.
#
#   sh bench/renumber.sh        (after `make lib examples`)
#
#   1. generates the standard 720K-cell mesh with op2-meshgen (RN_CELLS), or takes RN_MESH
#   2. numbers its nodes, cells, edges and boundary edges at random (tools/op2-permute-mesh,
#      seed RN_SEED; compiled here if build/bin has none)
#   3. runs airfoil RN_ITERS iterations on each backend of RN_BACKENDS: the original mesh, the
#      random one, the random one with --renumber (op_renumber(pedge)), and the original one
#      with --renumber; RN_REPEAT rounds of the four, interleaved, the best ms/iter of each kept
#      (the machine may be shared)
#   4. checks the final rms of every run against the original's (1e-12 relative: the meshes
#      are the same, only sums run in another order) and prints a markdown table of ms/iter and
#      the ratio to the original order
#
# Environment: BIN (build/bin), BUILD (build), RN_CELLS (720000), RN_MESH, RN_ITERS (100),
# RN_SEED (1), RN_BACKENDS (seq), RN_REPEAT (2).
set -eu
BIN=${BIN:-build/bin}
BUILD=${BUILD:-build}
CELLS=${RN_CELLS:-720000}
ITERS=${RN_ITERS:-100}
SEED=${RN_SEED:-1}
BACKENDS=${RN_BACKENDS:-seq}
REPEAT=${RN_REPEAT:-2}
dir=$BUILD/bench/renumber
mkdir -p "$dir" "$BUILD/meshes"
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$PWD/$BUILD/cache}

[ -x "$BIN/airfoil" ] || { echo "renumber.sh: no $BIN/airfoil (run make lib examples)" >&2; exit 2; }
if [ ! -x "$BIN/op2-permute-mesh" ] || [ tools/op2-permute-mesh.c -nt "$BIN/op2-permute-mesh" ]; then
  ${CC:-cc} -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Iexamples-c/airfoil \
    -o "$BIN/op2-permute-mesh" tools/op2-permute-mesh.c
fi
if [ -n "${RN_MESH:-}" ]; then
  mesh=$RN_MESH
else
  mesh=$BUILD/meshes/airfoil-$CELLS.dat
  [ -s "$mesh" ] || "$BIN/op2-meshgen" --cells "$CELLS" -o "$mesh"
fi
shuffled=$dir/$(basename "$mesh" .dat)-random-$SEED.dat
[ -s "$shuffled" ] && [ "$shuffled" -nt "$mesh" ] || "$BIN/op2-permute-mesh" --seed "$SEED" "$mesh" "$shuffled"

# once NAME MESH BACKEND [--renumber]: one run; keeps the best ms/iter in $dir/NAME-BACKEND.ms
once() {
  name=$1 m=$2 b=$3
  shift 3
  out=$dir/$name-$b.out
  "$BIN/airfoil" --mesh "$m" --iters "$ITERS" --rms-log "$dir/$name-$b.rms" "$@" \
    "OP2_BACKEND=$b" > "$out" 2>&1 || { echo "renumber.sh: airfoil failed:" >&2; tail "$out" >&2; exit 1; }
  ms=$(sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$out")
  best=$(cat "$dir/$name-$b.ms" 2>/dev/null || true)
  awk -v a="$best" -v b="$ms" 'BEGIN { print (a == "" || b < a) ? b : a }' > "$dir/$name-$b.ms"
}

last_rms() { tail -n 1 "$1" | awk '{ print $2 }'; }

echo "Airfoil, $(basename "$mesh") ($CELLS cells), $ITERS iterations, best of $REPEAT; random order seed $SEED"
echo
echo "| backend | order | ms/iter | vs original | final rms |"
echo "|---|---|---:|---:|---|"
fail=0
for b in $BACKENDS; do
  rm -f "$dir"/*-"$b".ms
  # interleaved, so a busy spell on a shared machine hits every variant alike
  i=0
  while [ "$i" -lt "$REPEAT" ]; do
    once original "$mesh" "$b"
    once random "$shuffled" "$b"
    once random-renumbered "$shuffled" "$b" --renumber
    once original-renumbered "$mesh" "$b" --renumber
    i=$((i + 1))
  done
  ref=$(cat "$dir/original-$b.ms")
  ref_rms=$(last_rms "$dir/original-$b.rms")
  for v in original random random-renumbered original-renumbered; do
    ms=$(cat "$dir/$v-$b.ms")
    rms=$(last_rms "$dir/$v-$b.rms")
    ok=$(awk -v a="$rms" -v r="$ref_rms" 'BEGIN { d = a - r; if (d < 0) d = -d; print (d <= 1e-12 * r) ? "ok" : "DIFFERS" }')
    [ "$ok" = ok ] || fail=1
    printf '| %s | %s | %.2f | %.2fx | %s (%s) |\n' "$b" "$v" "$ms" "$(awk -v a="$ms" -v r="$ref" 'BEGIN { print a / r }')" "$rms" "$ok"
  done
done
[ "$fail" = 0 ] || { echo "renumber.sh: a final rms differs from the original order's by more than 1e-12" >&2; exit 1; }
