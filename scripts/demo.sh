#!/usr/bin/env bash
# The main job: build op2 and its examples, generate an Airfoil mesh, run Airfoil, and say
# whether the result is right. Run `bash scripts/demo.sh --help` for the arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: bash scripts/demo.sh [CELLS] [ITERATIONS]

Builds op2 and its examples (installing what is missing on a Debian machine, as root: see
scripts/setup.sh), generates a NACA0012 Airfoil mesh of about CELLS cells with op2-meshgen,
runs the Airfoil benchmark for ITERATIONS iterations, writes the final solution, and ends
with one verdict line:

  PASS rms <got> expected <value> (...)    or    FAIL rms <got> expected <value> (...)

  CELLS       mesh size (default 720000: the standard 1200 x 600 mesh)
  ITERATIONS  time steps (default 1000, at most 1000 for the stored expected values)

The expected rms comes from scripts/demo-expected/airfoil-CELLS.rms (the seq backend's trace
on that generated mesh, cross-checked as described in that directory's README); for a mesh
size without a stored trace, from airfoil-plain (the same numerics in plain C, no op2) run on
the same mesh. PASS means the final rms agrees to 1e-12 relative (the seq backend agrees
bit for bit; other backends add increments in another order).

Environment:
  OP2_BACKEND    backend to run on: seq (default), threads, check
  OP2_CACHE_DIR  JIT cache (default build/cache)
  DEMO_OUT       where the final solution goes (default build/demo/airfoil-q.bin): q, the
                 4 conserved variables per cell, as op_print_dat_to_binfile writes it (int
                 ncell, int 4, then ncell x 4 doubles in the mesh's cell order); a name
                 ending in .txt gives OP2's text format instead
EOF
}

case "${1:-}" in
  -h | --help) usage; exit 0 ;;
esac
cells=${1:-720000}
iters=${2:-1000}
for v in "$cells" "$iters"; do
  case "$v" in
    '' | *[!0-9]*) echo "demo: CELLS and ITERATIONS must be positive integers (got '$v'); see --help" >&2; exit 2 ;;
  esac
done
if [ "$iters" -lt 1 ] || [ "$cells" -lt 200 ]; then
  echo "demo: at least 1 iteration and 200 cells; see --help" >&2
  exit 2
fi

bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
make examples
mesh=build/meshes/airfoil-$cells.dat
if [ ! -s "$mesh" ]; then
  mkdir -p build/meshes
  build/bin/op2-meshgen --cells "$cells" -o "$mesh"
fi
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$PWD/build/cache}
backend=${OP2_BACKEND:-seq}
out=${DEMO_OUT:-build/demo/airfoil-q.bin}
mkdir -p build/demo "$(dirname "$out")"
log=build/demo/rms-$cells-$iters-$backend.log
build/bin/airfoil --mesh "$mesh" --iters "$iters" --rms-log "$log" --save "$out" \
  OP2_BACKEND="$backend"

got=$(awk -v n="$iters" '$1 == n { print $2 }' "$log")
expected_file=scripts/demo-expected/airfoil-$cells.rms
if [ -f "$expected_file" ] && [ "$iters" -le "$(tail -n 1 "$expected_file" | awk '{ print $1 }')" ]; then
  expected=$(awk -v n="$iters" '$1 == n { print $2 }' "$expected_file")
  source="stored trace $expected_file"
else
  echo "demo: no stored expected rms for $cells cells and $iters iterations; running airfoil-plain for it"
  build/bin/airfoil-plain --mesh "$mesh" --iters "$iters" --rms-log build/demo/rms-plain.log >/dev/null
  expected=$(awk -v n="$iters" '$1 == n { print $2 }' build/demo/rms-plain.log)
  source="airfoil-plain on the same mesh"
fi
echo "demo: final solution (q, $cells cells x 4 doubles) written to $out"
verdict=$(awk -v g="$got" -v e="$expected" 'BEGIN {
  if (g == "" || e == "") { print "FAIL"; exit }
  d = g - e; if (d < 0) d = -d; a = e < 0 ? -e : e
  print (d <= 1e-12 * a) ? "PASS" : "FAIL" }')
echo "$verdict rms ${got:-none} expected ${expected:-none} ($cells cells, $iters iterations, $backend backend; expected from $source, 1e-12 relative)"
[ "$verdict" = PASS ]
