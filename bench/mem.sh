#!/bin/sh
# bench/mem.sh: peak resident memory per process of Airfoil under MPI (make bench-mem; issue 25,
# point 4). Meshes, read from HDF5 (op_decl_*_hdf5: each process reads its block):
#   720k   OP2's new_grid.dat ($AF_SHARED/new_grid.dat.gz, unpacked and converted with
#          op2-h5convert once, kept in $BUILD/bench/mem); skipped, and said so, without it
#   2.88m  op2-meshgen --cells $BENCH_CELLS (2880000), converted once, kept there too
# Each mesh runs at -n 1 (the reference: op_partition does nothing on one process) and at each
# -n of BENCH_NPROCS other than 1 with each partitioner of BENCH_PARTS, BENCH_ITERS iterations,
# seq backend, OP2_DIAGNOSTICS=1 and airfoil --mem. Per run, the maximum over the processes of:
# airfoil --mem's phase peaks (read: mesh read, op_init and declarations; partition:
# op_partition; run: the iterations; each the phase's VmHWM minus its VmRSS at the start, the
# high-water mark reset before each phase), VmHWM (the process's peak), the op_partition line's
# own "peak +M KiB" field when op2 prints one, and VmHWM / VmHWM at -n 1. Prints a markdown
# table (MiB). Oversubscribed on a small machine the figures are still per process: memory, not
# time, is measured, so load does not change them (allocation order can, by a few hundred KiB).
#
# Then, with OP2_STYLE (the OP2-style tests/cpp/op2-style/airfoil_hdf5, which make bench-mem
# builds): the program of issue 36, everything declared from HDF5 as OP2's programs do (its work
# arrays too, zeros in the file), op_partition, BENCH_ITERS iterations and op_fetch_data of each
# process's own block of q, on each mesh at -n 1 and at each -n of BENCH_NPROCS other than 1
# with each partitioner of BENCH_STYLE_PARTS: a second table of VmHWM after each stage (init,
# declarations, op_partition, the iterations, the fetch; max over processes) and the peak
# against -n 1, raw and less the fixed part (the same run on an 1800-cell mesh).
#
# Environment: BIN (build/bin), BUILD (build), AF_SHARED (../shared/meshes), BENCH_NPROCS
# (1 2 4), BENCH_PARTS (METIS:KWAY PARMETIS:KWAY RCB), BENCH_ITERS (5), BENCH_CELLS (2880000),
# BENCH_MESHES (720k 2.88m), MPIEXEC (mpiexec --oversubscribe), OP2_STYLE (unset: no second
# table), BENCH_STYLE_PARTS (RCB PARMETIS:KWAY PTSCOTCH:KWAY).
set -eu
BIN=${BIN:-build/bin}
BUILD=${BUILD:-build}
AF_SHARED=${AF_SHARED:-../shared/meshes}
NPROCS=${BENCH_NPROCS:-1 2 4}
PARTS=${BENCH_PARTS:-METIS:KWAY PARMETIS:KWAY RCB}
ITERS=${BENCH_ITERS:-5}
CELLS=${BENCH_CELLS:-2880000}
MESHES=${BENCH_MESHES:-720k 2.88m}
MPIEXEC=${MPIEXEC:-mpiexec --oversubscribe}
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_mpi_yield_when_idle=1
dir=$BUILD/bench/mem
mkdir -p "$dir"

# mesh_h5 NAME: prints the .h5 path of a mesh (made once), or nothing when it cannot be made.
mesh_h5() {
  case $1 in
    720k)
      h5=$dir/new_grid.h5
      if [ ! -s "$h5" ]; then
        [ -f "$AF_SHARED/new_grid.dat.gz" ] || return 0
        gzip -dc "$AF_SHARED/new_grid.dat.gz" >"$dir/new_grid.dat"
        "$BIN/op2-h5convert" "$dir/new_grid.dat" "$h5.tmp" >/dev/null && mv "$h5.tmp" "$h5"
        rm -f "$dir/new_grid.dat"
      fi ;;
    *)
      h5=$dir/mesh-$CELLS.h5
      if [ ! -s "$h5" ]; then
        "$BIN/op2-meshgen" --cells "$CELLS" -o "$dir/mesh-$CELLS.dat" >/dev/null
        "$BIN/op2-h5convert" "$dir/mesh-$CELLS.dat" "$h5.tmp" >/dev/null && mv "$h5.tmp" "$h5"
        rm -f "$dir/mesh-$CELLS.dat"
      fi ;;
  esac
  echo "$h5"
}

# measure MESH NPROC PART: prints "read part run hwm partline" (KiB, max over processes; partline
# "-" when op_partition prints no memory field).
measure() {
  out=$dir/run-$(basename "$1" .h5)-n$2-$(echo "$3" | tr ':' '-').out
  if ! OP2_DIAGNOSTICS=1 $MPIEXEC -n "$2" "$BIN/airfoil" --mesh "$1" --iters "$ITERS" --partition "$3" --mem \
       OP2_BACKEND=seq >"$out" 2>&1; then
    echo "bench/mem.sh: -n $2 $3 on $1 failed:" >&2
    tail -n 20 "$out" >&2
    return 1
  fi
  n=$(grep -c 'airfoil: memory process .*VmHWM' "$out" || true)
  if [ "$n" -ne "$2" ]; then
    echo "bench/mem.sh: -n $2 $3: $n airfoil --mem lines (see $out)" >&2
    return 1
  fi
  M=$(sed -n 's/.*op_partition.*memory: rss [0-9]* KiB at entry, peak +\([0-9]*\) KiB$/\1/p' "$out" |
    awk '{ if ($1 > m) m = $1; n++ } END { if (n) print m; else print "-" }')
  sed -n 's/.*airfoil: memory process .*: read +\([0-9]*\) KiB, partition +\([0-9]*\) KiB, run +\([0-9]*\) KiB, VmHWM \([0-9]*\) KiB.*/\1 \2 \3 \4/p' "$out" |
    awk -v M="$M" '{ for (i = 1; i <= 4; i++) if ($i > m[i]) m[i] = $i } END { print m[1] + 0, m[2] + 0, m[3] + 0, m[4] + 0, M }'
}

mib() { awk -v k="$1" 'BEGIN { if (k == "-") print "-"; else printf "%.1f", k / 1024 }'; }

echo "bench/mem.sh: $(uname -m), $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Airfoil from HDF5, seq backend, $ITERS iterations; max over processes, MiB"
echo
echo "| mesh | partitioner | -n | read | partition | run | VmHWM | op_partition peak | VmHWM / -n 1 |"
echo "|---|---|---|---|---|---|---|---|---|"
for m in $MESHES; do
  h5=$(mesh_h5 "$m")
  if [ -z "$h5" ]; then
    echo "| $m | skipped: $AF_SHARED/new_grid.dat.gz not found | | | | | | | |"
    continue
  fi
  set -- $(measure "$h5" 1 BLOCK)
  hwm1=$4
  echo "| $m | (one process) | 1 | $(mib "$1") | $(mib "$2") | $(mib "$3") | $(mib "$4") | $(mib "$5") | 1.00 |"
  for part in $PARTS; do
    for n in $NPROCS; do
      [ "$n" -eq 1 ] && continue
      set -- $(measure "$h5" "$n" "$part")
      r=$(awk -v a="$4" -v b="$hwm1" 'BEGIN { printf "%.2f", a / b }')
      echo "| $m | $part | $n | $(mib "$1") | $(mib "$2") | $(mib "$3") | $(mib "$4") | $(mib "$5") | $r |"
    done
  done
done
if [ -n "${OP2_STYLE:-}" ]; then
  tiny=$dir/mesh-1800.h5
  if [ ! -s "$tiny" ]; then
    "$BIN/op2-meshgen" --ni 60 --nj 30 -o "$dir/mesh-1800.dat" >/dev/null
    "$BIN/op2-h5convert" "$dir/mesh-1800.dat" "$tiny.tmp" >/dev/null && mv "$tiny.tmp" "$tiny"
    rm -f "$dir/mesh-1800.dat"
  fi
  # stages MESH NPROC PART: "init declared partitioned run fetched" (KiB, max over processes)
  stages() {
    out=$dir/style-$(basename "$1" .h5)-n$2-$(echo "$3" | tr ':' '-').out
    if ! $MPIEXEC -n "$2" "$OP2_STYLE" --mesh "$1" --iters "$ITERS" --partition "$3" --mem OP2_BACKEND=seq \
         >"$out" 2>&1; then
      echo "bench/mem.sh: OP2-style -n $2 $3 on $1 failed:" >&2
      tail -n 20 "$out" >&2
      return 1
    fi
    sed -n 's/^airfoil_hdf5: memory process .*: VmHWM KiB: init \([0-9]*\), declared \([0-9]*\), partitioned \([0-9]*\), run \([0-9]*\), fetched \([0-9]*\)$/\1 \2 \3 \4 \5/p' "$out" |
      awk '{ for (i = 1; i <= 5; i++) if ($i > m[i]) m[i] = $i } END { print m[1] + 0, m[2] + 0, m[3] + 0, m[4] + 0, m[5] + 0 }'
  }
  style_parts=${BENCH_STYLE_PARTS:-RCB PARMETIS:KWAY PTSCOTCH:KWAY}
  echo
  echo "OP2-style airfoil_hdf5 (everything from op_decl_*_hdf5, op_partition, $ITERS iterations, op_fetch_data"
  echo "of each process's block of q): VmHWM after each stage, max over processes, MiB; '+' what the stage"
  echo "added to the peak; fixed: the same run on an 1800-cell mesh (its final VmHWM)"
  echo
  echo "| mesh | partitioner | -n | init | declarations | op_partition | iterations | fetch | peak / -n 1 | less the fixed part |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for m in $MESHES; do
    h5=$(mesh_h5 "$m")
    [ -n "$h5" ] || continue
    set -- $(stages "$h5" 1 BLOCK)
    f1=$5
    z1=$(stages "$tiny" 1 BLOCK | cut -d' ' -f5)
    row() { # part n init decl part run fetch z
      awk -v p="$1" -v n="$2" -v i="$3" -v d="$4" -v q="$5" -v r="$6" -v f="$7" -v z="$8" -v f1="$f1" -v z1="$z1" -v m="$m" 'BEGIN {
        M = 1024; printf "| %s | %s | %s | %.1f | %.1f | %.1f (+%.1f) | %.1f (+%.1f) | %.1f (+%.1f) | %.2f | %.2f |\n",
          m, p, n, i / M, d / M, q / M, (q - d) / M, r / M, (r - q) / M, f / M, (f - r) / M, f / f1, (f - z) / (f1 - z1) }'
    }
    row "(one process)" 1 "$@" "$z1"
    for part in $style_parts; do
      for n in $NPROCS; do
        [ "$n" -eq 1 ] && continue
        z=$(stages "$tiny" "$n" "$part" | cut -d' ' -f5)
        row "$part" "$n" $(stages "$h5" "$n" "$part") "$z"
      done
    done
  done
fi
echo
echo "read/partition/run: the phase's peak above the resident size at its start (airfoil --mem);"
echo "op_partition peak: the 'peak +M KiB' of op2's OP2_DIAGNOSTICS=1 line ('-' when it has none)."
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
