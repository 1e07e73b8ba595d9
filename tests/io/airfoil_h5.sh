#!/usr/bin/env bash
# Airfoil from OP2's HDF5 layout: a generated mesh, converted by op2-h5convert, gives the same rms
# history as the text mesh, bit for bit (seq); --vtk writes the final solution, and meshio reads
# it back with the mesh's sizes; op2-h5convert's file has OP2's names (h5py).
# usage: airfoil_h5.sh BIN PYTHON WORKDIR CELLS ITERS
set -eu
bin=$1 py=$2 work=$3 cells=$4 iters=$5
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
"$bin/op2-meshgen" --cells "$cells" -o "$work/mesh.dat" >/dev/null 2>&1
"$bin/op2-h5convert" "$work/mesh.dat" "$work/mesh.h5"
"$bin/airfoil" --mesh "$work/mesh.dat" --iters "$iters" --rms-log "$work/rms-text.txt" OP2_BACKEND=seq >"$work/text.out"
"$bin/airfoil" --mesh "$work/mesh.h5" --iters "$iters" --rms-log "$work/rms-h5.txt" \
  --vtk "$work/airfoil.vtu" --vtk-every $((iters / 2)) OP2_BACKEND=seq >"$work/h5.out"
if ! cmp -s "$work/rms-text.txt" "$work/rms-h5.txt"; then
  echo "airfoil_h5: rms history from HDF5 differs from the text mesh:" >&2
  diff "$work/rms-text.txt" "$work/rms-h5.txt" | head -5 >&2
  exit 1
fi
[ "$(wc -l <"$work/rms-h5.txt")" -eq "$iters" ] || { echo "airfoil_h5: rms log has the wrong length" >&2; exit 1; }
half=$(printf '%06d' $((iters / 2)))
for f in "$work/airfoil.vtu" "$work/airfoil_$half.vtu" "$work/airfoil_$(printf '%06d' "$iters").vtu"; do
  [ -s "$f" ] || { echo "airfoil_h5: $f was not written" >&2; exit 1; }
done
"$py" "$root/tests/io/check_airfoil.py" "$work/mesh.h5" "$work/airfoil.vtu" "$work/airfoil_$(printf '%06d' "$iters").vtu"
echo "airfoil_h5: HDF5 run equals the text run bit for bit over $iters iterations ($cells cells)"
