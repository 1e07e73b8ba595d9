#!/bin/sh
# rms.sh BIN CMP_RMS WORKDIR MESH ITERS "BACKENDS"
#
# Runs airfoil-plain and airfoil on every backend for ITERS iterations with --rms-log and
# requires: op2's seq backend bit-identical to plain C at every iteration; every other backend
# within 1e-12 relative of seq at every iteration; OP2_SIMD=on (and off for seq) bit-identical
# to the same backend's default (auto) run; with --chain (one loop chain per iteration), seq
# bit-identical to eager seq (rms and final q), every backend within 1e-12 of seq.
set -u
bin=$1
cmp=$2
dir=$3
mesh=$4
iters=$5
backends=$6
mkdir -p "$dir"
fails=0

if ! "$bin/airfoil-plain" --mesh "$mesh" --iters "$iters" --rms-log "$dir/rms-plain.log" \
     > "$dir/plain.out" 2>&1; then
  echo "rms: FAIL: airfoil-plain:"; cat "$dir/plain.out"; exit 1
fi
echo "rms: airfoil-plain: $(tail -n 1 "$dir/plain.out")"

for b in seq $(echo " $backends " | sed 's/ seq / /g'); do
  rm -f "$dir/rms-$b.log"
  if ! "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$dir/rms-$b.log" \
       "OP2_BACKEND=$b" > "$dir/$b.out" 2>&1; then
    echo "rms: FAIL: airfoil on $b:"; tail -n 20 "$dir/$b.out"; fails=$((fails + 1)); continue
  fi
  echo "rms: airfoil $b: $(tail -n 1 "$dir/$b.out")"
  if [ "$b" = seq ]; then
    "$cmp" --exact "$dir/rms-plain.log" "$dir/rms-seq.log" || fails=$((fails + 1))
  else
    "$cmp" --rel 1e-12 "$dir/rms-$b.log" "$dir/rms-seq.log" || fails=$((fails + 1))
  fi
done
# Vectorised wrappers change no bit: OP2_SIMD=on and off (default: auto) give seq's history
# exactly, and every other backend's own history with OP2_SIMD=on.
for b in seq $(echo " $backends " | sed 's/ seq / /g'); do
  for mode in on off; do
    [ "$b" != seq ] && [ "$mode" = off ] && continue
    [ -f "$dir/rms-$b.log" ] || continue
    rm -f "$dir/rms-$b-simd-$mode.log"
    if ! "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$dir/rms-$b-simd-$mode.log" \
         "OP2_BACKEND=$b" "OP2_SIMD=$mode" > "$dir/$b-simd-$mode.out" 2>&1; then
      echo "rms: FAIL: airfoil on $b with OP2_SIMD=$mode:"; tail -n 20 "$dir/$b-simd-$mode.out"
      fails=$((fails + 1)); continue
    fi
    echo "rms: airfoil $b OP2_SIMD=$mode: $(tail -n 1 "$dir/$b-simd-$mode.out")"
    "$cmp" --exact "$dir/rms-$b.log" "$dir/rms-$b-simd-$mode.log" || fails=$((fails + 1))
  done
done
# Device strategies: opencl and cuda (where under test) with each OP2_INC strategy and with the
# structure-of-arrays layout, each within 1e-12 relative of seq at every iteration.
for dev in opencl cuda; do
  case " $backends " in
    *" $dev "*)
      for cfg in OP2_INC=colour OP2_INC=atomics OP2_INC=blocks OP_AUTO_SOA=1; do
        tag=$(echo "$cfg" | tr '=' '-')
        if ! "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$dir/rms-$dev-$tag.log" \
             OP2_BACKEND=$dev "$cfg" > "$dir/$dev-$tag.out" 2>&1; then
          echo "rms: FAIL: airfoil on $dev with $cfg:"; tail -n 20 "$dir/$dev-$tag.out"
          fails=$((fails + 1)); continue
        fi
        echo "rms: airfoil $dev $cfg: $(tail -n 1 "$dir/$dev-$tag.out")"
        "$cmp" --rel 1e-12 "$dir/rms-$dev-$tag.log" "$dir/rms-seq.log" || fails=$((fails + 1))
      done
      ;;
  esac
done
# Loop chains (--chain: each iteration one chain, sparse-tiled on seq and threads): seq's rms
# history and final q bit-identical to its eager run; every backend within 1e-12 of seq.
if [ -f "$dir/rms-seq.log" ]; then
  "$bin/airfoil" --mesh "$mesh" --iters "$iters" --save "$dir/q-seq.bin" OP2_BACKEND=seq \
    > "$dir/seq-save.out" 2>&1 || { echo "rms: FAIL: airfoil seq --save"; fails=$((fails + 1)); }
  for b in seq $(echo " $backends " | sed 's/ seq / /g'); do
    rm -f "$dir/rms-$b-chain.log" "$dir/q-$b-chain.bin"
    if ! "$bin/airfoil" --mesh "$mesh" --iters "$iters" --chain --rms-log "$dir/rms-$b-chain.log" \
         --save "$dir/q-$b-chain.bin" "OP2_BACKEND=$b" > "$dir/$b-chain.out" 2>&1; then
      echo "rms: FAIL: airfoil --chain on $b:"; tail -n 20 "$dir/$b-chain.out"; fails=$((fails + 1)); continue
    fi
    echo "rms: airfoil $b --chain: $(grep 'ms/iter' "$dir/$b-chain.out" | tail -n 1)"
    if [ "$b" = seq ]; then
      "$cmp" --exact "$dir/rms-seq.log" "$dir/rms-seq-chain.log" || fails=$((fails + 1))
      if cmp -s "$dir/q-seq.bin" "$dir/q-seq-chain.bin"; then
        echo "rms: ok: seq --chain final q bit-identical to eager seq"
      else
        echo "rms: FAIL: seq --chain final q differs from eager seq"; fails=$((fails + 1))
      fi
    else
      "$cmp" --rel 1e-12 "$dir/rms-$b-chain.log" "$dir/rms-seq.log" || fails=$((fails + 1))
    fi
  done
fi
# the rms lines printed every 100 iterations agree with the log
if [ "$iters" -ge 100 ] && [ -f "$dir/rms-seq.log" ]; then
  awk '$1 % 100 == 0 { printf " %d  %10.5e\n", $1, $2 }' "$dir/rms-seq.log" > "$dir/printed-expected.txt"
  grep -E '^ [0-9]+  ' "$dir/seq.out" > "$dir/printed-seq.txt"
  if cmp -s "$dir/printed-expected.txt" "$dir/printed-seq.txt"; then
    echo "rms: ok: printed rms lines of seq match its --rms-log"
  else
    echo "rms: FAIL: printed rms lines of seq do not match its --rms-log"; fails=$((fails + 1))
  fi
fi
if [ $fails -ne 0 ]; then
  echo "rms: $fails check(s) failed"
  exit 1
fi
echo "rms: all backends agree (seq bit-identical to plain C)"
