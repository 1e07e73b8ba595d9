#!/usr/bin/env bash
# bench/op2common-fortran.sh: OP2-Common's Fortran Airfoil (apps/fortran/airfoil, the PLAIN
# variant) on op2's JIT tier against OP2-Common's own generated Fortran code (its translator's
# `seq` target: the "genseq" program of OP2-Common's makefiles), both sequential. Issue 35's last
# target: op2 at most 0.8x OP2-Common's time. make bench-fortran-op2common OP2_COMMON_DIR=...
#
# Nothing of OP2-Common is in this repository: the script builds from the user's checkout.
#   1. The app's three sources (airfoil_constants.F90, airfoil_kernels.F90, airfoil.F90) are
#      copied, with one edit for both programs: `niter = 1000` becomes BENCH_ITERS (left alone
#      at 1000).
#   2. OP2-Common's translator (translator-v2/op2-translator, run by VENV's Python, with the two
#      in-memory fixes of tests/gpu-kit/build-op2common.sh: libclang's result types and <...>
#      includes) translates them for `-t seq` with the Makefile's flags (-DPLAIN
#      --consts-module airfoil_constants.F90).
#   3. OP2-Common's libop2_for_seq objects (op2/src: core, sequential/op_seq, externlib/op_profile,
#      fortran/*: the op2/Makefile's OP2_FOR_SEQ list) and the generated program, with its
#      makefiles' GNU flags: gfortran/g++ -g -O3 -march=native (TARGET_HOST=true, its default),
#      -DOP_PART_SIZE_1=128.
#   4. The same (edited) sources against op2: op2's Fortran modules (fortran/*.F90) and libop2
#      (target/release), with the same gfortran flags. The kernels take op2's JIT tier: the
#      program's debug information names airfoil_kernels.F90's directory (checked with
#      OP2_DIAGNOSTICS=1: the run fails if a loop is left on the call-per-element tier).
#   5. Both run on MESH (OP2's new_grid.dat, linked as ./new_grid.dat, the name the program
#      reads), interleaved, BENCH_REPS times each after one warm-up run each (fills op2's JIT
#      cache). The figure is the program's "Main computation" region (op_profile_output: both
#      libraries print it, wall time of the iterations) divided by the iterations. Prints a
#      markdown table (median ms/iter, the ratio op2 / OP2-Common, the runs), the rms lines of
#      each (every 100 iterations), and the per-loop times of the last run of each (OP2-Common's
#      with OP_PROFILE_LEVEL=2, its per-kernel profile; op2's op_profile_output adds its loop
#      timings).
#   With BENCH_OP2_FLAGS (e.g. '-mfma -ffp-contract=fast') a third program runs: op2 with
#   OP2_CFLAGS and OP2_FFLAGS set to it (its own JIT cache), to show what op2's default
#   no-fused-multiply-add flags cost against OP2-Common's -march=native build, which contracts.
#
# Environment: OP2_COMMON_DIR (required: an OP2-Common checkout), VENV (required: a Python venv
# with the translator's packages jinja2, fparser, pcpp, sympy and libclang; make
# bench-fortran-op2common makes one), MESH (required: new_grid.dat), BENCH_ITERS (200), BENCH_REPS
# (3), BENCH_OP2_FLAGS (unset), WORK (scratch, replaced; build/bench/op2common-fortran),
# OP2_CACHE_DIR (WORK/cache), FC (gfortran), CXX (g++), OC_FLAGS (-g -O3 -march=native:
# OP2-Common's optimisation flags, for both compilers and both programs).
set -eu
root=$(pwd)
: "${OP2_COMMON_DIR:?set OP2_COMMON_DIR to an OP2-Common checkout}"
oc=$(cd "$OP2_COMMON_DIR" && pwd)
: "${VENV:?set VENV to a Python venv with the translator packages (make bench-fortran-op2common makes one)}"
[ -x "$VENV/bin/python" ] || { echo "op2common-fortran: no Python in VENV=$VENV (a venv with OP2-Common's translator's packages)" >&2; exit 1; }
VENV=$(cd "$VENV" && pwd)
: "${MESH:?set MESH to new_grid.dat, the mesh of OP2}"
[ -f "$MESH" ] || { echo "op2common-fortran: MESH=$MESH not found" >&2; exit 1; }
MESH=$(cd "$(dirname "$MESH")" && pwd)/$(basename "$MESH")
ITERS=${BENCH_ITERS:-200}
REPS=${BENCH_REPS:-3}
FC=${FC:-gfortran}
[ "$FC" = f77 ] && FC=gfortran
CXX=${CXX:-g++}
OC_FLAGS=${OC_FLAGS:--g -O3 -march=native}
WORK=${WORK:-build/bench/op2common-fortran}
rm -rf "$WORK"
mkdir -p "$WORK"
work=$(cd "$WORK" && pwd)
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-$work/cache}
app=$oc/apps/fortran/airfoil
inc=$oc/op2/include
src=$oc/op2/src
for d in "$app" "$inc" "$src/fortran" "$oc/translator-v2/op2-translator"; do
  [ -e "$d" ] || { echo "op2common-fortran: OP2_COMMON_DIR=$oc has no $d (an OP2-Common checkout?)" >&2; exit 1; }
done
[ -f "$root/target/release/libop2.so" ] || { echo "op2common-fortran: build op2 first (cargo build --release)" >&2; exit 1; }

log=$work/build.log
: > "$log"
run() { echo "+ $*" >> "$log"; "$@" >> "$log" 2>&1 || { tail -n 30 "$log" >&2; echo "op2common-fortran: failed: $* (log: $log)" >&2; exit 1; }; }

# 1. the sources, edited alike
mkdir -p "$work/src" "$work/gen" "$work/oc/obj" "$work/oc/mod" "$work/op2/mod" "$work/op2/obj"
cp "$app/airfoil_constants.F90" "$app/airfoil_kernels.F90" "$app/airfoil.F90" "$work/src/"
sed -i "s/integer(4), parameter :: niter = 1000/integer(4), parameter :: niter = $ITERS/" "$work/src/airfoil.F90"
grep -q "niter = $ITERS\$" "$work/src/airfoil.F90" || { echo "op2common-fortran: no 'niter = 1000' in $app/airfoil.F90" >&2; exit 1; }

# 2. OP2-Common's translator
(cd "$work/src" && run "$VENV/bin/python" "$root/tools/op2common_translate.py" "$oc/translator-v2/op2-translator" -v -DPLAIN \
  --consts-module airfoil_constants.F90 -t seq airfoil_constants.F90 airfoil_kernels.F90 airfoil.F90 -o "$work/gen")
[ -f "$work/gen/seq/op2_kernels.F90" ] || { tail -n 30 "$log" >&2; echo "op2common-fortran: the translator wrote no seq/op2_kernels.F90 (log: $log)" >&2; exit 1; }

# 3. OP2-Common's libop2_for_seq and its generated Airfoil (flags of makefiles/compilers/*/gnu.mk)
# shellcheck disable=SC2086 # flag lists
{
  ffl="-Wall -pedantic -ffixed-line-length-none -ffree-line-length-none -fcray-pointer $OC_FLAGS"
  cxx="$CXX -std=c++17 $OC_FLAGS -I$inc"
  o=$work/oc/obj m=$work/oc/mod
  jobs=()
  for f in core/op_lib_core core/op_rt_support core/SafeLong core/op_dummy_singlenode sequential/op_seq \
           externlib/op_profile fortran/op2_for_rt_wrappers fortran/op2_C_reference fortran/op2_for_C_wrappers \
           fortran/op_dummy_wrappers; do
    jobs+=("$cxx -c $src/$f.cpp -o $o/$(basename $f).o")
  done
  printf '%s\n' "${jobs[@]}" > "$work/oc/jobs.txt"
  echo "+ compiling OP2-Common's C++ sources, 2 at a time" >> "$log"
  xargs -a "$work/oc/jobs.txt" -d '\n' -P 2 -I '{}' sh -c '$1 || exit 255' _ '{}' >> "$log" 2>&1 ||
    { tail -n 30 "$log" >&2; echo "op2common-fortran: compilation failed (log: $log)" >&2; exit 1; }
  # the +cpp sources: OP2-Common's Makefile's preprocessing (cpp, then ## and @ fixed up)
  for f in op2_for_declarations op2_for_reference; do
    cpp -I"$inc" "$src/fortran/$f.F90" 2>> "$log" | sed 's/##//g' | sed 's/"@"//g' | sed 's#/@/#//#g' | tr "@" "\\n" > "$o/$f+cpp.F90"
  done
  run $FC $ffl -J"$m" -I"$inc" -c "$o/op2_for_declarations+cpp.F90" -o "$o/op2_for_declarations.o"
  run $FC $ffl -J"$m" -I"$inc" -c "$o/op2_for_reference+cpp.F90" -o "$o/op2_for_reference.o"
  run $FC $ffl -J"$m" -I"$inc" -c "$src/fortran/op2_for_rt_support.F90" -o "$o/op2_for_rt_support.o"
  run ar rcs "$work/oc/libop2_for_seq.a" "$o"/*.o
  g=$work/gen
  mkdir -p "$work/oc/app"
  run $FC $ffl -DOP_PART_SIZE_1=128 -DPLAIN -J"$work/oc/app" -I"$m" "$g/seq/op2_consts.F90" "$g"/seq/*_kernel.F90 \
    "$g/seq/op2_kernels.F90" "$g/airfoil_constants.F90" "$g/airfoil_kernels.F90" "$g/airfoil.F90" \
    "$work/oc/libop2_for_seq.a" -lstdc++ -o "$work/airfoil_op2common"
}

# 4. the same sources against op2 (its Fortran modules compiled here, as tests/fortran/op2-style does)
# shellcheck disable=SC2086
{
  ffl="-Wall -pedantic -ffixed-line-length-none -ffree-line-length-none -fcray-pointer $OC_FLAGS"
  m=$work/op2/mod
  for f in op2 op2_fortran op2_fortran_reference; do
    (cd "$m" && run $FC $OC_FLAGS -c "$root/fortran/$f.F90")
  done
  run ar rcs "$m/libop2_fortran.a" "$m/op2.o" "$m/op2_fortran.o" "$m/op2_fortran_reference.o"
  for f in airfoil_constants airfoil_kernels airfoil; do
    (cd "$work/op2/obj" && run $FC $ffl -DPLAIN -I"$m" -c "$work/src/$f.F90")
  done
  run $FC $ffl -o "$work/airfoil_op2" "$work/op2/obj/airfoil_constants.o" "$work/op2/obj/airfoil_kernels.o" \
    "$work/op2/obj/airfoil.o" "$m/libop2_fortran.a" -L"$root/target/release" -lop2 -Wl,-rpath,"$root/target/release"
}

# 5. the runs
rund=$work/run
mkdir -p "$rund"
ln -sf "$MESH" "$rund/new_grid.dat"
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
commit=$(git -C "$oc" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "op2common-fortran: OP2-Common $commit, $MESH, $ITERS iterations, $REPS runs per program, interleaved; $cpu, $(getconf _NPROCESSORS_ONLN) cores"
echo "before: $(uptime)"
one() { # program -> ms/iter on stdout, its output in $rund/log.<program>
  p=$1
  case $p in
    op2common) (cd "$rund" && OP_PROFILE_LEVEL=2 "$work/airfoil_op2common") > "$rund/log.$p" 2>&1 ;;
    op2) (cd "$rund" && OP2_BACKEND=seq OP2_DIAGNOSTICS=1 "$work/airfoil_op2") > "$rund/log.$p" 2>&1 ;;
    op2flags) (cd "$rund" && OP2_BACKEND=seq OP2_DIAGNOSTICS=1 OP2_CACHE_DIR="$OP2_CACHE_DIR/flags" \
                 OP2_CFLAGS="$BENCH_OP2_FLAGS" OP2_FFLAGS="$BENCH_OP2_FLAGS" "$work/airfoil_op2") > "$rund/log.$p" 2>&1 ;;
  esac || { tail -n 20 "$rund/log.$p" >&2; echo "op2common-fortran: $p failed" >&2; exit 1; }
  if [ "$p" != op2common ] && grep -qi "call-per-element\|per-element tier" "$rund/log.$p"; then
    grep -i "element" "$rund/log.$p" >&2; echo "op2common-fortran: a loop took the call-per-element tier" >&2; exit 1
  fi
  # OP2-Common: "Main computation *1 total: 10.93s" (unit s, ms or us); op2: "Main computation  1  10.93 ..." (s)
  awk -v n="$ITERS" '/Main computation/ && t == "" {
      for (i = 1; i <= NF; i++) {
        if ($i == "total:") { v = $(i + 1); u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
                              t = v * (u == "ms" ? 1e-3 : u == "us" ? 1e-6 : 1); break }
        if ($i ~ /^[0-9]+$/ && $(i + 1) ~ /^[0-9.]+$/) { t = $(i + 1); break }
      } }
    END { if (t == "") exit 1; printf "%.2f\n", 1000 * t / n }' "$rund/log.$p" ||
    { tail -n 20 "$rund/log.$p" >&2; echo "op2common-fortran: no 'Main computation' time in $p's output" >&2; exit 1; }
}
progs="op2common op2${BENCH_OP2_FLAGS:+ op2flags}"
for p in $progs; do one "$p" > /dev/null; : > "$rund/t.$p"; done   # warm-up: fills op2's JIT cache
r=1
while [ "$r" -le "$REPS" ]; do
  for p in $progs; do one "$p" >> "$rund/t.$p"; done
  r=$((r + 1))
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
a=$(median "$rund/t.op2common")
b=$(median "$rund/t.op2")
echo "after: $(uptime)"
echo
echo "| program | median ms/iter | / OP2-Common | runs (ms/iter) |"
echo "|---|---:|---:|---|"
echo "| OP2-Common, generated seq Fortran | $a | 1.000 | $(tr '\n' ' ' < "$rund/t.op2common")|"
echo "| op2 seq, JIT tier | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }') | $(tr '\n' ' ' < "$rund/t.op2")|"
if [ -n "${BENCH_OP2_FLAGS:-}" ]; then
  c=$(median "$rund/t.op2flags")
  echo "| op2 seq, JIT tier, OP2_CFLAGS=OP2_FFLAGS='$BENCH_OP2_FLAGS' | $c | $(awk -v a="$a" -v b="$c" 'BEGIN { printf "%.3f", b / a }') | $(tr '\n' ' ' < "$rund/t.op2flags")|"
fi
echo
for p in $progs; do
  echo "$p: rms lines (iteration, rms, max err, at):"
  grep -E '^ +[0-9]+ +[-0-9.E+]+ +max err' "$rund/log.$p" || echo "  (none: the program prints every 100 iterations)"
done
echo
echo "OP2-Common's profile (last run):"
sed -n '/Main computation/,$p' "$rund/log.op2common" | head -40
echo
echo "op2's loop timings (last run):"
sed -n '/Main computation/,$p' "$rund/log.op2" | head -40
