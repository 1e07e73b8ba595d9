#!/bin/sh
# mesh.sh MESHGEN CHECK_MESH WORKDIR [SHARED_MESH_DIR]
#
# Generates meshes of several shapes with op2-meshgen and validates them with check_mesh;
# validates OP2's reference meshes when SHARED_MESH_DIR has them; and checks that check_mesh
# itself rejects broken meshes (flipped edge, clockwise cell, edge naming the wrong cell,
# boundary edge pointing inwards, missing wall flags).
set -u
gen=$1
check=$2
dir=$3
shared=${4:-}
mkdir -p "$dir"
fails=0
fail() { echo "mesh: FAIL: $*"; fails=$((fails + 1)); }

# valid meshes
for spec in "std:--cells 20000" "tiny:--ni 10 --nj 2" "op2-1800:--ni 60 --nj 30" \
            "near:--ni 64 --nj 40 --far 3" "far:--ni 90 --nj 20 --far 40" "odd:--cells 3333"; do
  name=${spec%%:*}
  args=${spec#*:}
  # shellcheck disable=SC2086
  if ! "$gen" $args -o "$dir/gen-$name.dat" 2> "$dir/gen-$name.err"; then
    fail "op2-meshgen $args"; cat "$dir/gen-$name.err"; continue
  fi
  if "$check" "$dir/gen-$name.dat" > "$dir/check-$name.out" 2>&1; then
    echo "mesh: ok: op2-meshgen $args: $(sed 's/^check_mesh: [^:]*: //' "$dir/check-$name.out")"
  else
    fail "op2-meshgen $args gives an invalid mesh:"; cat "$dir/check-$name.out"
  fi
done

# the requested sizes
read nn nc ne nb < "$dir/gen-std.dat"
[ "$nc" -ge 19000 ] && [ "$nc" -le 21000 ] || fail "--cells 20000 gave $nc cells"
read nn nc ne nb < "$dir/gen-op2-1800.dat"
[ "$nn $nc $ne $nb" = "1891 1800 3530 140" ] ||
  fail "--ni 60 --nj 30 gave counts '$nn $nc $ne $nb', OP2's 1800-cell mesh has '1891 1800 3530 140'"
if "$gen" --ni 7 --nj 3 -o "$dir/bad.dat" 2> "$dir/bad.err"; then
  fail "op2-meshgen accepted an odd --ni"
else
  echo "mesh: ok: op2-meshgen refuses --ni 7: $(cat "$dir/bad.err")"
fi

# the reference meshes made by OP2's generator
if [ -n "$shared" ] && [ -d "$shared" ]; then
  for m in new_grid_1800.dat new_grid_45k.dat; do
    [ -f "$shared/$m" ] || continue
    if "$check" "$shared/$m" > "$dir/check-ref.out" 2>&1; then
      echo "mesh: ok: reference $(sed 's/^check_mesh: //' "$dir/check-ref.out")"
    else
      fail "reference mesh $m rejected by check_mesh:"; cat "$dir/check-ref.out"
    fi
  done
else
  echo "mesh: reference meshes not found (${shared:-none given}): skipped"
fi

# check_mesh must reject broken meshes
src=$dir/gen-op2-1800.dat
read nn nc ne nb < "$src"
cell0=$((2 + nn)); edge0=$((cell0 + nc)); bedge0=$((edge0 + ne))
mutate() { # NAME AWK-PROGRAM PATTERN
  awk -v C0=$cell0 -v E0=$edge0 -v B0=$bedge0 "$2" "$src" > "$dir/neg-$1.dat"
  if "$check" "$dir/neg-$1.dat" > "$dir/neg-$1.out" 2>&1; then
    fail "check_mesh accepted a mesh with $1"
  elif ! grep -Eq "$3" "$dir/neg-$1.out"; then
    fail "check_mesh rejected $1 without saying /$3/:"; cat "$dir/neg-$1.out"
  else
    echo "mesh: ok: check_mesh rejects $1: $(grep -E "$3" "$dir/neg-$1.out" | head -n 1 | sed 's/^check_mesh: [^:]*: //')"
  fi
}
mutate "a-flipped-edge" 'NR==E0+100 {t=$1; $1=$2; $2=t} {print}' "wrong orientation"
mutate "a-clockwise-cell" 'NR==C0+50 {t=$2; $2=$4; $4=t} {print}' "not counter-clockwise"
mutate "an-edge-naming-the-wrong-cell" 'NR==E0+10 {$4=($4+7)%'"$nc"'} {print}' "not a side of cell|claimed twice"
mutate "an-inward-boundary-edge" 'NR==B0+3 {t=$1; $1=$2; $2=t} {print}' "wrong orientation"
mutate "no-wall-flags" 'NR>=B0 {$4=2} {print}' "no wall boundary edges"
mutate "moved-node" 'NR==2+200 {$1=$1+5} {print}' "not convex|counter-clockwise|normal"

if [ $fails -ne 0 ]; then
  echo "mesh: $fails check(s) failed"
  exit 1
fi
echo "mesh: all checks passed"
