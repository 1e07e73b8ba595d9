#!/bin/sh
# element.sh OP2_PREFIX DEST: the plain Airfoil (airfoil.cpp) built from a copy of its sources in
# DEST by this directory's Makefile, after which the copy's kernel headers are deleted: at run
# time op2 finds no <kernel>.h beside the source (DEST) and, unless OP2_KERNEL_PATH names a
# directory holding them, calls the compiled kernels once per element (the call-per-element
# tier). Used by run.sh (make test-cpp) and make bench-cpp.
set -eu
prefix=$1
dest=$2
here=$(cd "$(dirname "$0")" && pwd)
kernels="save_soln.h adt_calc.h res_calc.h bres_calc.h update.h"
unset MAKE MAKEFLAGS MFLAGS MAKELEVEL
rm -rf "$dest"
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
for f in Makefile airfoil.cpp airfoil_grid.h $kernels; do cp "$here/$f" "$dest/"; done
make -C "$dest" OP2_PREFIX="$prefix" BUILD="$dest" "$dest/airfoil"
for f in $kernels; do rm "$dest/$f"; done
