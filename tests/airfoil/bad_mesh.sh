#!/bin/sh
# bad_mesh.sh PROGRAM GOOD_MESH WORKDIR [extra args for PROGRAM...]
#
# Damages a valid mesh in several ways and checks that PROGRAM (airfoil or airfoil-plain)
# refuses each one with a non-zero exit status and a message that says what is wrong.
set -u
prog=$1
good=$2
dir=$3
shift 3
extra="$*"   # e.g. OP2_BACKEND=seq (no spaces)
mkdir -p "$dir"
fails=0

read nnode ncell nedge nbedge < "$good"
lines=$(wc -l < "$good")
cell0=$((2 + nnode))            # line of cell 0
edge0=$((cell0 + ncell))        # line of edge 0
bedge0=$((edge0 + nedge))       # line of boundary edge 0

# expect NAME FILE PATTERN: PROGRAM must fail and print PATTERN (grep -E) on stderr
expect() {
  name=$1
  file=$2
  pattern=$3
  # shellcheck disable=SC2086
  "$prog" --mesh "$file" --iters 1 $extra > "$dir/$name.out" 2> "$dir/$name.err"
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "bad_mesh: FAIL: $name: $(basename "$prog") accepted $file (exit 0)"
    fails=$((fails + 1))
  elif [ $rc -gt 128 ]; then
    echo "bad_mesh: FAIL: $name: $(basename "$prog") crashed (exit $rc)"
    fails=$((fails + 1))
  elif ! grep -Eq "$pattern" "$dir/$name.err"; then
    echo "bad_mesh: FAIL: $name: message does not match /$pattern/:"
    sed 's/^/    /' "$dir/$name.err"
    fails=$((fails + 1))
  else
    echo "bad_mesh: ok: $name (exit $rc): $(head -n 1 "$dir/$name.err")"
  fi
}

# missing file
expect missing "$dir/does-not-exist.dat" "cannot open.*(No such file|does-not-exist)"

# empty file
: > "$dir/empty.dat"
expect empty "$dir/empty.dat" "empty"

# truncated in the middle of the edges, and in the middle of a line
head -n $((edge0 + nedge / 2)) "$good" > "$dir/truncated.dat"
expect truncated "$dir/truncated.dat" "truncated"
head -c $(($(wc -c < "$good") - 7)) "$good" > "$dir/truncated2.dat"
expect truncated-mid-line "$dir/truncated2.dat" "truncated|should have 4 values"

# node index out of range in a cell, cell index out of range in an edge and a boundary edge
awk -v L=$((cell0 + 3)) -v N="$nnode" 'NR==L {$2 = N} {print}' "$good" > "$dir/cell-index.dat"
expect cell-node-index "$dir/cell-index.dat" "cell 3: node index $nnode .*outside \[0, $nnode\)"
awk -v L=$((edge0 + 5)) 'NR==L {$3 = -1} {print}' "$good" > "$dir/edge-index.dat"
expect edge-cell-index "$dir/edge-index.dat" "edge 5: cell index -1 .*outside \[0, $ncell\)"
awk -v L=$((bedge0 + 1)) -v N=$((ncell + 7)) 'NR==L {$3 = N} {print}' "$good" > "$dir/bedge-index.dat"
expect bedge-cell-index "$dir/bedge-index.dat" "boundary edge 1: cell index $((ncell + 7)) .*outside"

# counts that disagree: with each other, with the file (too few / too many lines)
awk -v n=$((nedge - 1)) 'NR==1 {$3 = n} {print}' "$good" > "$dir/counts1.dat"
expect counts-nedge "$dir/counts1.dat" "counts disagree"
awk -v n=$((nnode - 1)) 'NR==1 {$1 = n} {print}' "$good" > "$dir/counts2.dat"
expect counts-nnode-small "$dir/counts2.dat" "disagree"
awk -v n=$((nnode + 1)) 'NR==1 {$1 = n} {print}' "$good" > "$dir/counts3.dat"
expect counts-nnode-large "$dir/counts3.dat" "disagree"
{ cat "$good"; echo "1 2 3 1"; } > "$dir/counts4.dat"
expect trailing-data "$dir/counts4.dat" "disagree"

# not a number
awk -v L=$((edge0 + 2)) 'NR==L {$1 = "x7"} {print}' "$good" > "$dir/nan.dat"
expect not-a-number "$dir/nan.dat" "expected an integer, found 'x7'"

if [ $fails -ne 0 ]; then
  echo "bad_mesh: $fails case(s) failed for $prog"
  exit 1
fi
echo "bad_mesh: all cases refused with a clear message by $(basename "$prog")"
