#!/bin/sh
# reference.sh BIN CMP_RMS WORKDIR MESH "BACKENDS" [PLAIN]
#
# Runs airfoil (and airfoil-plain when PLAIN is 1) for 1000 iterations on OP2's standard 720K
# mesh and checks the published rms lines of shared/airfoil.md (tests/airfoil/reference_720k.txt,
# printed with %10.5e) and the final rms at full precision, 1.0601146375780783e-04, to 1e-12
# relative (reporting whether it is bit-identical).
set -u
bin=$1
cmp=$2
dir=$3
mesh=$4
backends=$5
plain=${6:-0}
here=$(dirname "$0")
final=1.0601146375780783e-04
mkdir -p "$dir"
fails=0

check() { # NAME OUTFILE LOGFILE
  grep -E '^ [0-9]+  ' "$2" > "$dir/printed-$1.txt"
  if cmp -s "$here/reference_720k.txt" "$dir/printed-$1.txt"; then
    echo "reference: ok: $1: the 10 printed rms lines match the published ones"
  else
    echo "reference: FAIL: $1: printed rms lines differ from the published ones:"
    diff "$here/reference_720k.txt" "$dir/printed-$1.txt" | head -n 20
    fails=$((fails + 1))
  fi
  "$cmp" --final "$final" 1e-12 "$3" || fails=$((fails + 1))
}

if [ "$plain" = 1 ]; then
  if "$bin/airfoil-plain" --mesh "$mesh" --iters 1000 --rms-log "$dir/rms-plain.log" > "$dir/plain.out" 2>&1; then
    echo "reference: airfoil-plain: $(tail -n 1 "$dir/plain.out")"
    check plain "$dir/plain.out" "$dir/rms-plain.log"
  else
    echo "reference: FAIL: airfoil-plain:"; tail -n 20 "$dir/plain.out"; fails=$((fails + 1))
  fi
fi
for b in $backends; do
  if "$bin/airfoil" --mesh "$mesh" --iters 1000 --rms-log "$dir/rms-$b.log" "OP2_BACKEND=$b" \
       > "$dir/$b.out" 2>&1; then
    echo "reference: airfoil $b: $(tail -n 1 "$dir/$b.out")"
    check "$b" "$dir/$b.out" "$dir/rms-$b.log"
  else
    echo "reference: FAIL: airfoil on $b:"; tail -n 20 "$dir/$b.out"; fails=$((fails + 1))
  fi
done
if [ $fails -ne 0 ]; then
  echo "reference: $fails check(s) failed"
  exit 1
fi
echo "reference: the published Airfoil rms reproduced on: $([ "$plain" = 1 ] && echo "plain ")$backends"
