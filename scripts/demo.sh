#!/usr/bin/env bash
# The main job: build op2 and its examples, generate an Airfoil mesh, run Airfoil.
# Usage (as root on a fresh Debian machine): bash scripts/demo.sh [cells] [iterations]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cells=${1:-720000}
iters=${2:-1000}
make examples
mesh=build/meshes/airfoil-$cells.dat
if [ ! -s "$mesh" ]; then
  mkdir -p build/meshes
  build/bin/op2-meshgen --cells "$cells" -o "$mesh"
fi
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$PWD/build/cache}
build/bin/airfoil --mesh "$mesh" --iters "$iters" OP2_BACKEND="${OP2_BACKEND:-seq}"
