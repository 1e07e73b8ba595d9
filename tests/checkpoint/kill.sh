#!/usr/bin/env bash
# kill.sh BIN CMP_RMS WORKDIR MESH ITERS TRIALS "MODES"
#
# Checkpoint and restart under SIGKILL (make test-checkpoint). For each mode (seq, threads,
# mpi2 = seq under mpiexec -n 2): an uninterrupted Airfoil run is the reference; then TRIALS
# trials, each from no checkpoint: Airfoil with --checkpoint/--every is started, killed with
# SIGKILL at a random moment (every other trial with OP2_CHECKPOINT_TEST_DELAY_MS, and killed
# inside a checkpoint write), CKPT_KILLS (2) times, and started again until it finishes; the run
# that finishes must say (OP2_DIAGNOSTICS=1) that it resumed from the checkpoint the last kill
# left at the path, or that there was none (a present checkpoint is never ignored). Its final
# q (--save) and rms history (--rms-log) must equal the reference's: byte for byte on seq,
# within 1e-12 relative on threads and mpi2. Then the refusals: a truncated, a byte-flipped,
# another program's (another mesh: other declarations), other data's (the same mesh with one
# node moved: its p_x digest differs) and another process count's checkpoint each make Airfoil
# exit non-zero with OP2_ERR_CHECKPOINT [840] naming why.
set -u
bin=$1
cmp=$2
dir=$3
mesh=$4
iters=$5
trials=$6
modes=$7
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
fails=0
RANDOM=${CKPT_SEED:-4242}
KILLS=${CKPT_KILLS:-2} # SIGKILLs per trial

launch() { # mode args... (in the background; sets pid)
  local mode=$1
  shift
  case $mode in
    seq) "$bin/airfoil" "$@" OP2_BACKEND=seq & ;;
    threads) "$bin/airfoil" "$@" OP2_BACKEND=threads OP2_NUM_THREADS=2 & ;;
    mpi2) mpiexec -n 2 "$bin/airfoil" "$@" OP2_BACKEND=seq & ;;
  esac
  pid=$!
}

# SIGKILL to the program's processes: airfoil itself, or under mpiexec its ranks (the
# launcher's children), as a node failure would.
kill9() {
  local victims=$1 c
  if [ "$2" = mpi2 ]; then
    for c in $(pgrep -P "$1" 2>/dev/null); do victims="$victims $c"; done
  fi
  kill -9 $victims 2>/dev/null
}

# Whether process $1 is running: not gone and not a zombie (kill -0 succeeds on a zombie, so a
# finished run not yet reaped would look alive until a wait's cap).
alive() {
  local st
  # (stderr first: redirections apply left to right, and a reaped process has no stat file)
  { read -r _ _ st _ < "/proc/$1/stat"; } 2>/dev/null || return 1
  [ "$st" != Z ]
}

same_q() { # a.bin b.bin exact|rel
  if [ "$3" = exact ]; then cmp -s "$1" "$2"; return; fi
  python3 - "$1" "$2" <<'PY'
import struct, sys
a = open(sys.argv[1], 'rb').read(); b = open(sys.argv[2], 'rb').read()
if len(a) != len(b) or a[:8] != b[:8]:
    sys.exit(1)
n = (len(a) - 8) // 8
x = struct.unpack('%dd' % n, a[8:]); y = struct.unpack('%dd' % n, b[8:])
bad = [i for i in range(n) if abs(x[i] - y[i]) > 1e-12 * max(abs(y[i]), 1e-300)]
if bad:
    print("q differs at value %d: %r vs %r" % (bad[0], x[bad[0]], y[bad[0]]))
    sys.exit(1)
PY
}

for mode in $modes; do
  ref="$dir/ref-$mode"
  t0=$(date +%s%N)
  launch "$mode" --mesh "$mesh" --iters "$iters" --rms-log "$ref.log" --save "$ref.bin" > "$ref.out" 2>&1
  if ! wait $pid; then
    echo "checkpoint: FAIL: $mode: the uninterrupted run failed"; fails=$((fails + 1)); continue
  fi
  wall=$((($(date +%s%N) - t0) / 1000000)) # ms, start-up included
  how=exact
  [ "$mode" = seq ] || how=rel
  kills=0 writes_killed=0 runs=0 restarts=0 resumed=0
  # Checkpoint intervals, from the time the uninterrupted run spent in its loops (Airfoil
  # prints it; start-up, under mpiexec most of the wall time, excluded): an eighth of it, so
  # that a run writes several checkpoints, at least 10 ms apart; with the test delay (150 ms
  # inside each write, which the next checkpoint waits for) a quarter, so that a run makes two
  # or three writes and stays short.
  loops_ms=$(sed -n 's/^airfoil: [0-9]* iterations, \([0-9.]*\) s.*/\1/p' "$ref.out" | awk '{ printf "%d", $1 * 1000 }')
  [ -n "$loops_ms" ] || loops_ms=$wall
  every_ms=$((loops_ms / 8)); [ $every_ms -lt 10 ] && every_ms=10
  every_delay_ms=$((loops_ms / 4)); [ $every_delay_ms -lt 10 ] && every_delay_ms=10
  secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
  for t in $(seq 1 "$trials"); do
    ck="$dir/ck-$mode-$t.h5"
    out="$dir/run-$mode-$t"
    rm -f "$ck" "$ck.tmp" "$out.log" "$out.bin" "$out".out-*
    delay=0 every=$(secs $every_ms)
    [ $((t % 2)) -eq 0 ] && delay=150 every=$(secs $every_delay_ms)
    done_=0
    for attempt in $(seq 1 $((KILLS + 1))); do
      runs=$((runs + 1))
      export OP2_CHECKPOINT_TEST_DELAY_MS=$delay OP2_DIAGNOSTICS=1
      touch "$out.started"
      launch "$mode" --mesh "$mesh" --iters "$iters" --rms-log "$out.log" --save "$out.bin" \
        --checkpoint "$ck" --every "$every" > "$out.out-$attempt" 2>&1
      # KILLS times per trial: without the delay at a random moment 20% to 100% of the
      # uninterrupted run's time after the start (in trial 1: once this run has written a
      # checkpoint, so that a restart has one to resume from); with it, at a random moment
      # inside a checkpoint write, 0-120 ms into the 150 ms pause before its rename: the first
      # time inside a write that follows a complete checkpoint of this run (the restart must
      # resume from that one), then inside any write of the run (the first one if the restart
      # found no checkpoint). Then the run goes to its end.
      if [ "$attempt" -le "$KILLS" ]; then
        if [ "$delay" -gt 0 ]; then
          waited=0
          while [ $waited -lt $((wall * 8 + 5000)) ] && alive $pid; do
            if [ "$attempt" -eq 1 ]; then
              [ -n "$(find "$ck" -newer "$out.started" 2>/dev/null)" ] &&
                [ -n "$(find "$ck.tmp" -newer "$ck" 2>/dev/null)" ] && break
            elif [ -n "$(find "$ck.tmp" -newer "$out.started" 2>/dev/null)" ]; then
              [ ! -e "$ck" ] || [ -n "$(find "$ck.tmp" -newer "$ck" 2>/dev/null)" ] && break
            fi
            sleep 0.01; waited=$((waited + 10))
          done
          sleep "0.$(printf '%03d' $((RANDOM % 120)))"
          in_write=1
        elif [ "$t" -eq 1 ]; then
          waited=0
          while [ $waited -lt $((wall * 4 + 5000)) ] && alive $pid &&
                [ -z "$(find "$ck" -newer "$out.started" 2>/dev/null)" ]; do
            sleep 0.01; waited=$((waited + 10))
          done
          in_write=0
        else
          ms=$((wall / 5 + RANDOM % (wall * 4 / 5 + 1)))
          waited=0
          while [ $waited -lt $ms ] && alive $pid; do sleep 0.02; waited=$((waited + 20)); done
          in_write=0
        fi
        if alive $pid; then
          [ $in_write -eq 1 ] && [ -e "$ck.tmp" ] && writes_killed=$((writes_killed + 1))
          kill9 $pid "$mode"
          kills=$((kills + 1))
        fi
      fi
      if { wait $pid; } 2>/dev/null; then
        done_=1
        # A checkpoint present at the restart is used, never ignored: the run that finished
        # after a kill says (OP2_DIAGNOSTICS=1) it resumed from the file the kill left, or, when
        # there was none, that it found none (or one: under mpiexec a killed rank can finish
        # a rename after the launcher is reaped).
        if [ "$attempt" -gt 1 ]; then
          resuming="op2: checkpoint: resuming from '$ck'"
          if grep -qF "$resuming" "$out.out-$attempt"; then
            resumed=$((resumed + 1))
          elif [ "$left" = yes ] || ! grep -qF "op2: checkpoint: no checkpoint at '$ck'" "$out.out-$attempt"; then
            echo "checkpoint: FAIL: $mode trial $t: the restart after a kill that left $( [ "$left" = yes ] && echo a || echo no) checkpoint at the path does not say it resumed from it$( [ "$left" = yes ] || echo ' or found none'):"
            grep "op2: checkpoint" "$out.out-$attempt" | head -3
            fails=$((fails + 1))
          fi
          restarts=$((restarts + 1))
        fi
        break
      fi
      left=no
      [ -e "$ck" ] && left=yes
      if grep -q "op2 error" "$out.out-$attempt"; then
        echo "checkpoint: FAIL: $mode trial $t: a restart failed:"; grep "op2 error" "$out.out-$attempt" | head -3
        break
      fi
    done
    if [ $done_ -ne 1 ]; then
      echo "checkpoint: FAIL: $mode trial $t never finished"; fails=$((fails + 1)); continue
    fi
    if [ "$how" = exact ]; then
      r=$("$cmp" --exact "$out.log" "$ref.log" 2>&1) || { echo "checkpoint: FAIL: $mode trial $t rms: $r"; fails=$((fails + 1)); }
    else
      r=$("$cmp" --rel 1e-12 "$out.log" "$ref.log" 2>&1) || { echo "checkpoint: FAIL: $mode trial $t rms: $r"; fails=$((fails + 1)); }
    fi
    same_q "$out.bin" "$ref.bin" "$how" || { echo "checkpoint: FAIL: $mode trial $t: final q differs from the uninterrupted run's"; fails=$((fails + 1)); }
  done
  echo "checkpoint: $mode: $trials trials, $runs runs (uninterrupted: $wall ms), $kills SIGKILLs ($writes_killed while a checkpoint was being written), $restarts finishing restarts said what they found ($resumed resumed from a checkpoint the kill left, the others found none): final q and rms history $( [ $how = exact ] && echo 'bit-identical to' || echo 'within 1e-12 of') the uninterrupted run's"
done

unset OP2_CHECKPOINT_TEST_DELAY_MS OP2_DIAGNOSTICS
# Refusals: each must fail with [840] and the reason.
refuse() { # name expected-text mode file [extra args]
  local name=$1 want=$2 mode=$3 file=$4
  shift 4
  launch "$mode" --mesh "$mesh" --iters "$iters" --checkpoint "$file" "$@" > "$dir/refuse-$name.out" 2>&1
  if wait $pid > /dev/null 2>&1; then
    echo "checkpoint: FAIL: $name checkpoint was accepted"; fails=$((fails + 1)); return
  fi
  if ! grep -q "\[840\].*$want" "$dir/refuse-$name.out"; then
    echo "checkpoint: FAIL: $name checkpoint: no [840] '$want' in:"; head -5 "$dir/refuse-$name.out"; fails=$((fails + 1)); return
  fi
  echo "checkpoint: $name checkpoint refused: $(grep -o '\[840\].*' "$dir/refuse-$name.out" | head -1)"
}
good="$dir/good.h5"
rm -f "$good"
launch seq --mesh "$mesh" --iters 3 --checkpoint "$good" --every 0 > "$dir/good.out" 2>&1
wait $pid || { echo "checkpoint: FAIL: cannot make a checkpoint"; exit 1; }
size=$(stat -c %s "$good")
cp "$good" "$dir/truncated.h5" && truncate -s $((size / 2)) "$dir/truncated.h5"
refuse truncated "is truncated" seq "$dir/truncated.h5"
cp "$good" "$dir/flipped.h5"
printf '\377' | dd of="$dir/flipped.h5" bs=1 seek=$((size * 2 / 3)) conv=notrunc 2> /dev/null
refuse byte-flipped "checksum does not match" seq "$dir/flipped.h5"
small="$dir/other-mesh.dat"
"$bin/op2-meshgen" --cells 2000 -o "$small" > /dev/null
cp "$good" "$dir/other.h5"
launch seq --mesh "$small" --iters "$iters" --checkpoint "$dir/other.h5" > "$dir/refuse-other-program.out" 2>&1
if wait $pid > /dev/null 2>&1 || ! grep -q "\[840\].*of another program.*declarations differ" "$dir/refuse-other-program.out"; then
  echo "checkpoint: FAIL: another program's checkpoint was not refused:"; head -5 "$dir/refuse-other-program.out"; fails=$((fails + 1))
else
  echo "checkpoint: other-program checkpoint refused: $(grep -o '\[840\].*' "$dir/refuse-other-program.out" | head -1)"
fi
# Other data: the same mesh sizes with one node moved (the checkpoint's digest of p_x differs).
moved="$dir/moved-mesh.dat"
awk 'NR == 2 { $1 = $1 + 0.001 } { print }' "$mesh" > "$moved"
cp "$good" "$dir/other-data.h5"
launch seq --mesh "$moved" --iters "$iters" --checkpoint "$dir/other-data.h5" > "$dir/refuse-other-data.out" 2>&1
if wait $pid > /dev/null 2>&1 || ! grep -q "\[840\].*of other data: dat 'p_x' was declared with other values" "$dir/refuse-other-data.out"; then
  echo "checkpoint: FAIL: a checkpoint of other data was not refused:"; head -5 "$dir/refuse-other-data.out"; fails=$((fails + 1))
else
  echo "checkpoint: other-data checkpoint refused: $(grep -o '\[840\].*' "$dir/refuse-other-data.out" | head -1 | cut -c1-160)"
fi
case " $modes " in
  *" mpi2 "*) cp "$good" "$dir/nprocs.h5"; refuse other-process-count "written by 1 process(es); this run has 2" mpi2 "$dir/nprocs.h5" ;;
esac

if [ $fails -ne 0 ]; then
  echo "checkpoint: $fails failure(s)"
  exit 1
fi
echo "checkpoint: passed"
