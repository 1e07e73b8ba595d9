#!/usr/bin/env bash
# Airfoil's first iteration (its five loops' code found or made, then run once) and the whole
# process, three ways: cold (empty JIT cache: five compiles), warm (the disk cache of the cold
# run), and from a loop pack (empty cache, OP2_JIT=off). Three runs each; the median is shown.
#   bench/coldstart.sh OP2_PACK AIRFOIL MESH WORKDIR
set -eu
PACK=$1 AIRFOIL=$2 MESH=$3 WORK=$4
rm -rf "$WORK"; mkdir -p "$WORK"; chmod 700 "$WORK"
first() { sed -n 's/.*first iteration \([0-9.]*\) s.*/\1/p' "$1"; }
median() { sort -g | sed -n 2p; }
OP2_CACHE_DIR=$WORK/gen-cache OP2_GENERATE=$WORK/gen "$AIRFOIL" --mesh "$MESH" --iters 1 >/dev/null
"$PACK" "$WORK/gen" -o "$WORK/airfoil.op2pack" >/dev/null
for mode in cold warm pack; do
  : > "$WORK/$mode.first"; : > "$WORK/$mode.wall"
  for i in 1 2 3; do
    case $mode in
      cold) rm -rf "$WORK/cache"; envs=(OP2_CACHE_DIR="$WORK/cache") ;;
      warm) envs=(OP2_CACHE_DIR="$WORK/cache") ;;
      pack) rm -rf "$WORK/cache-pack"; envs=(OP2_CACHE_DIR="$WORK/cache-pack" OP2_JIT=off OP2_LOOP_PACK="$WORK/airfoil.op2pack") ;;
    esac
    s=$(date +%s.%N)
    env "${envs[@]}" "$AIRFOIL" --mesh "$MESH" --iters 2 > "$WORK/$mode.$i.log" 2>&1
    e=$(date +%s.%N)
    first "$WORK/$mode.$i.log" >> "$WORK/$mode.first"
    echo "$e - $s" | bc -l >> "$WORK/$mode.wall"
  done
  # The warm runs follow the last cold run, which left a complete cache.
  printf '%-5s first iteration %8.4f s   whole process %8.4f s\n' "$mode" \
    "$(median < "$WORK/$mode.first")" "$(median < "$WORK/$mode.wall")"
done
