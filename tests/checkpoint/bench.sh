#!/usr/bin/env bash
# bench.sh: the cost of checkpointing (make bench-checkpoint). Airfoil on the 720K mesh
# (SHARED/new_grid.dat.gz, else op2-meshgen --cells 720000) for ITERS iterations on BACKEND:
# a run without checkpoints, one with --checkpoint --every 10, and one without again; prints
# the time of each checkpoint written (OP2_DIAGNOSTICS=1 lines) and the run's slowdown against
# the mean of the two runs without. Targets: one checkpoint <= 0.3 s; <= 3% slower. On a shared
# machine run it more than once: the runs without checkpoints vary by more than 3% under load.
# Environment: BIN (build/bin), DIR (build/test-checkpoint/bench), SHARED (../shared/meshes),
# ITERS (1000), BACKEND (seq), EVERY (10).
set -u
BIN=${BIN:-build/bin}
DIR=${DIR:-build/test-checkpoint/bench}
SHARED=${SHARED:-../shared/meshes}
ITERS=${ITERS:-1000}
BACKEND=${BACKEND:-seq}
EVERY=${EVERY:-10}
mkdir -p "$DIR"
mesh=$DIR/mesh-720k.dat
if [ ! -f "$mesh" ]; then
  if [ -f "$SHARED/new_grid.dat.gz" ]; then
    gunzip -c "$SHARED/new_grid.dat.gz" > "$mesh.tmp" && mv "$mesh.tmp" "$mesh"
  else
    "$BIN/op2-meshgen" --cells 720000 -o "$mesh" > /dev/null
  fi
fi
secs() { sed -n 's/^airfoil: [0-9]* iterations, \([0-9.]*\) s.*/\1/p' "$1"; }
run() { # out [args]
  local out=$1
  shift
  if ! "$BIN/airfoil" --mesh "$mesh" --iters "$ITERS" "OP2_BACKEND=$BACKEND" "$@" > "$out" 2>&1; then
    echo "bench-checkpoint: airfoil failed:"; tail -n 5 "$out"; exit 1
  fi
}
echo "bench-checkpoint: $(uname -n), load $(cut -d' ' -f1-3 /proc/loadavg), $ITERS iterations on $BACKEND, mesh $mesh"
run "$DIR/plain1.out"
rm -f "$DIR/ck.h5" "$DIR/ck.h5.tmp"
run "$DIR/ck.out" --checkpoint "$DIR/ck.h5" --every "$EVERY" OP2_DIAGNOSTICS=1
run "$DIR/plain2.out"
p1=$(secs "$DIR/plain1.out")
p2=$(secs "$DIR/plain2.out")
c=$(secs "$DIR/ck.out")
grep "op2: checkpoint: wrote" "$DIR/ck.out" | sed 's/^/  /'
list=$(sed -n 's/.*MB in \([0-9.]*\) s .*/\1/p' "$DIR/ck.out" | tr '\n' ' ')
pauses=$(sed -n 's/.*(snapshot \([0-9.]*\) s.*/\1/p' "$DIR/ck.out" | tr '\n' ' ')
[ -n "$pauses" ] && echo "bench-checkpoint: the run paused for the snapshots: $pauses s (one process: the rest is written in the background)"
awk -v p1="$p1" -v p2="$p2" -v c="$c" -v every="$EVERY" -v list="$list" 'BEGIN {
  n = split(list, w, " "); max = 0; sum = 0
  for (i = 1; i <= n; i++) { sum += w[i]; if (w[i] > max) max = w[i] }
  base = (p1 + p2) / 2
  printf "bench-checkpoint: %d checkpoint(s): mean %.3f s, max %.3f s (target <= 0.3 s)\n", n, n ? sum / n : 0, max
  printf "bench-checkpoint: without %.3f s and %.3f s (mean %.3f s); with --every %s: %.3f s: %+.2f%% (target <= +3%%)\n", p1, p2, base, every, c, 100 * (c - base) / base
}'
