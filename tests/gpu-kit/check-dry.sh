#!/usr/bin/env bash
# check-dry.sh KIT WORKDIR: the GPU kit without a GPU (make test-gpu-kit). Checks the kit's
# layout and size, runs `run.sh --dry` and checks its report: the steps that need no GPU ran
# and passed (the probe names the missing CUDA driver, Airfoil on seq agrees with the kit's
# reference, C tests run from the kit, op2_copy and the per-loop analysis work), and every GPU
# step is listed as not run (the MPI smoke test runs on seq under the kit's own OpenMPI; then
# again with this machine's OpenMPI hidden, where unshare -m works). Then a run stopped from
# outside (SIGTERM, what the watchdog sends) must still leave a report that lists the steps it
# did not reach. In a kit with OP2-Common's
# Airfoil (make gpu-kit OP2_COMMON_DIR=...): its CUDA build fails cleanly here (no driver) and
# its sequential build's printed rms on the 45K mesh agree with the kit's reference.
set -u
kit=$1
dir=$2
fails=0
fail() { echo "test-gpu-kit: FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$dir"
mkdir -p "$dir"

# layout
for f in run.sh step-op2common.sh kit-info.txt lib/libop2.so bin/airfoil bin/cmp_rms bin/op2_copy bin/op2-gpu-probe \
  packs/host.op2pack meshes/new_grid_45k.dat.gz meshes/new_grid.dat.gz ref/rms-45k-1000.log ref/rms-720k-200.log ref/rms-720k-1000.log \
  ref/reference_720k.txt tests/c/list.txt tests/c/bin/t380-cuda tests/c/op2-style/jac_res.h \
  tests/golden/vtk/mesh2x2-binary.vtu step-mpi.sh lib-mpi/libop2.so bin/airfoil-mpi mpi/env.sh mpi/usr/bin/orterun \
  mpi/usr/lib/x86_64-linux-gnu/libmpi.so.40 mpi/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so \
  mpi/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix/pmix_mca_pcompress_zlib.so tests/mpi/list.txt \
  tests/mpi/bin/t835-mpi-device-halo; do
  [ -s "$kit/$f" ] || fail "the kit has no $f"
done
kib=$(du -sk "$kit" | cut -f 1)
[ "$kib" -le $((48 * 1024)) ] || fail "the kit is $kib KiB, over 48 MiB"
[ "$(wc -l < "$kit/ref/rms-45k-1000.log")" -eq 1000 ] || fail "ref/rms-45k-1000.log has not 1000 lines"
[ "$(wc -l < "$kit/ref/rms-720k-200.log")" -eq 200 ] || fail "ref/rms-720k-200.log has not 200 lines"
[ "$(wc -l < "$kit/ref/rms-720k-1000.log")" -eq 1000 ] || fail "ref/rms-720k-1000.log has not 1000 lines"
grep -q 'needs glibc >= 2\.[0-9]' "$kit/kit-info.txt" || fail "kit-info.txt names no glibc version"
grep -q '^mpi: .*requires glibc 2\.[0-9]' "$kit/kit-info.txt" || fail "kit-info.txt names no glibc version for the MPI part"
n=$(wc -l < "$kit/tests/c/list.txt")
[ "$n" -ge 60 ] || fail "only $n C tests in the kit"
if readelf -d "$kit/lib/libop2.so" | grep NEEDED | grep -Ev 'lib(c|m|gcc_s)\.so|ld-linux' > "$dir/needed.txt"; then
  fail "the kit's libop2.so needs more than glibc: $(tr '\n' ' ' < "$dir/needed.txt")"
fi

# the dry run
t0=$(date +%s)
"$kit/run.sh" --dry --out "$dir/out" > "$dir/run.txt" 2>&1
rc=$?
echo "test-gpu-kit: run.sh --dry: exit $rc in $(($(date +%s) - t0)) s"
[ $rc -eq 0 ] || fail "run.sh --dry exited $rc: $(tail -n 3 "$dir/run.txt")"
r=$dir/out/gpu-report.md
[ -s "$r" ] || { fail "no report"; exit 1; }
[ -s "$dir/out/gpu-kit.log" ] || fail "no log"
row() { grep "^| $1 | " "$r" | head -n 1; }
expect() { # STEP RESULT [TEXT]
  local line
  line=$(row "$1")
  case $line in
    "| $1 | $2 |"*) ;;
    *) fail "step $1: expected $2, got: ${line:-no row}"; return ;;
  esac
  [ -z "${3:-}" ] || case $line in *"$3"*) ;; *) fail "step $1: expected '$3' in: $line" ;; esac
}
expect device INFO
expect probe PASS "no CUDA driver"
expect seq PASS "within 1e-12"
expect seq-pack PASS "OP2_JIT=off"
expect ctest-seq-smoke PASS "7 of 7 tests pass on seq"
expect mpi-seq-smoke PASS "MPI C tests 2 of 2 pass"
expect mpi-cuda "NOT RUN" "cuda unavailable: dry run"
expect bandwidth-seq INFO "op2 copy loop"
expect analysis-seq PASS "furthest loop"
for s in halo-cuda ctest-cuda af45k-cuda af45k-cuda-validate bandwidth af720k-cuda af720k-cuda-sync af720k-cuda-colour af720k-cuda-blocks af720k-cuda-stage af720k-cuda-aos; do
  expect "$s" "NOT RUN" "cuda unavailable: dry run"
done
for s in opencl-ctest opencl-af45k opencl-af45k-validate; do
  expect "$s" "NOT RUN" "no NVIDIA OpenCL device"
done
if [ -x "$kit/op2-common/airfoil_cuda" ]; then
  expect op2common-cuda "NOT RUN" "dry run (the kit has OP2-Common's CUDA Airfoil"
  # OP2-Common's programs here: the CUDA one stops with CUDA's error (no driver), not a signal;
  # the sequential one (what KIT_SIMULATE runs) prints the reference's rms on the 45K mesh
  mkdir -p "$dir/oc"
  oc=$(cd "$dir/oc" && pwd)
  ocbin=$(cd "$kit/op2-common" && pwd)
  gunzip -c "$kit/meshes/new_grid_45k.dat.gz" > "$oc/new_grid.dat"
  (cd "$oc" && timeout 60 "$ocbin/airfoil_cuda" > "$oc/cuda.txt" 2>&1)
  rc=$?
  # (OP2-Common exits -1, 255; 124 is timeout's, 129-159 a signal's)
  { [ $rc -ne 0 ] && [ $rc -ne 124 ] && { [ $rc -lt 129 ] || [ $rc -gt 159 ]; } && grep -qi 'cuda' "$oc/cuda.txt"; } ||
    fail "OP2-Common's airfoil_cuda without a GPU: exit $rc, expected a CUDA error: $(tail -n 2 "$oc/cuda.txt")"
  (cd "$oc" && timeout 120 "$ocbin/airfoil_seq" > "$oc/seq.txt" 2>&1) || fail "OP2-Common's airfoil_seq exited $?"
  sed -n 's/^ *\([0-9][0-9]*\)  *\([0-9.eE+-]*\), max err:.*/\1 \2/p' "$oc/seq.txt" > "$oc/rms.txt"
  awk '$1 % 100 == 0 { printf "%d %.5e\n", $1, $2 }' "$kit/ref/rms-45k-1000.log" > "$oc/expect.txt"
  cmp -s "$oc/rms.txt" "$oc/expect.txt" ||
    fail "OP2-Common's airfoil_seq on 45K: printed rms differ from the reference: $(diff "$oc/rms.txt" "$oc/expect.txt" | head -n 4 | tr '\n' ' ')"
  echo "test-gpu-kit: OP2-Common's airfoil_cuda here: exit $rc, '$(grep -i -m 1 cuda "$oc/cuda.txt" | cut -c1-160)'; airfoil_seq 45K: $(wc -l < "$oc/rms.txt") printed rms as the reference"
  rm -f "$oc/new_grid.dat" "$oc"/out_grid_seq.*
else
  expect op2common-cuda "NOT RUN" "built without OP2_COMMON_DIR"
fi
grep -q '^cuda: unavailable: no CUDA driver (' "$r" || fail "the report does not show the probe's output"
grep -q '^PASS loaded: mpiexec and both processes loaded every MPI library from the kit' "$r" ||
  fail "the MPI smoke test does not show that every MPI library came from the kit"
grep -q '^| update | 40 |' "$r" || fail "the per-loop table of the seq run has no row for update (40 calls)"

# the halo rows check of the kit's probe, on PoCL here (the same checks the GPU step runs on cuda,
# less the CUDA-aware staging, which OpenCL has not): every one must pass
if "$kit/bin/op2-gpu-probe" halo --backend opencl > "$dir/halo-opencl.txt" 2>&1; then
  grep -q '^halo_passed=6 halo_failed=0$' "$dir/halo-opencl.txt" || fail "op2-gpu-probe halo on opencl: $(tail -n 1 "$dir/halo-opencl.txt")"
  grep -q 'device staging (opencl has none: its halos go through host memory): not run' "$dir/halo-opencl.txt" ||
    fail "op2-gpu-probe halo on opencl does not say why the staging check did not run"
else
  fail "op2-gpu-probe halo --backend opencl: $(tail -n 2 "$dir/halo-opencl.txt")"
fi

# The carried OpenMPI with this machine's hidden (a private mount namespace, as root: its
# libraries, components, help texts and /etc/openmpi made unreadable; hide-mpi.sh): Airfoil and
# t835 under the kit's mpiexec on seq still run, every MPI library loaded from the kit; with
# KIT_MPI_COMPAT=1, as on a glibc before 2.36, libevent binds the kit's arc4random.
here=$(cd "$(dirname "$0")" && pwd)
if unshare -m true 2> /dev/null; then
  kitabs=$(cd "$kit" && pwd)
  dirabs=$(cd "$dir" && pwd)
  gunzip -c "$kit/meshes/new_grid_45k.dat.gz" > "$dir/m45.dat"
  head -n 5 "$kit/ref/rms-45k-1000.log" > "$dir/ref5.log"
  # shellcheck disable=SC2016 # expanded by the inner shell
  if unshare -m "$here/hide-mpi.sh" env KIT="$kitabs" D="$dirabs" KIT_MPI_COMPAT=1 bash -c '
      set -e
      if head -c 1 /usr/lib/x86_64-linux-gnu/libmpi.so.40 2> /dev/null | grep -q .; then echo "libmpi not hidden"; exit 1; fi
      . "$KIT/mpi/env.sh"
      cd "$D"
      LD_DEBUG=files,bindings LD_DEBUG_OUTPUT="$D/hidden-ld" mpiexec -n 2 "$KIT/bin/airfoil-mpi" --mesh m45.dat --iters 5 \
        --rms-log rms5.log OP2_BACKEND=seq > hidden-airfoil.txt 2>&1
      out=$(mpiexec -n 2 "$KIT/tests/mpi/bin/t835-mpi-device-halo" seq 2>&1)
      if [ -n "$out" ]; then echo "t835: $out"; exit 1; fi
      loaded=$(grep -h "calling init: " "$D"/hidden-ld.* | awk "{ print \$NF }" | grep -E "mpi|open-(rte|pal)|pmix|mca_|hwloc|libevent")
      if ! echo "$loaded" | grep -q "^$KIT/mpi/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so"; then echo "no LD_DEBUG log of the kit libraries"; exit 1; fi
      outside=$(echo "$loaded" | grep -v "^$KIT/" || true)
      if [ -n "$outside" ]; then echo "loaded from outside the kit: $outside"; exit 1; fi
      # the compat arc4random (KIT_MPI_COMPAT=1: preloaded as on a glibc before 2.36) is what libevent binds
      if ! grep -hq "libevent_core-2.1.so.7 \[0\] to $KIT/mpi/compat/libkit-arc4random.so \[0\]: normal symbol .arc4random" "$D"/hidden-ld.*; then
        echo "libevent did not bind the compat arc4random of the kit"; exit 1
      fi
      "$KIT/bin/cmp_rms" --rel 1e-12 rms5.log ref5.log
    ' > "$dir/hidden.txt" 2>&1; then
    echo "test-gpu-kit: the kit's OpenMPI ran with this machine's hidden (unshare -m): $(tail -n 1 "$dir/hidden.txt" | cut -c1-120)"
  else
    fail "the kit's OpenMPI with this machine's hidden: $(tail -n 3 "$dir/hidden.txt" | tr '\n' ' ' | cut -c1-300)"
  fi
else
  echo "test-gpu-kit: the kit's OpenMPI with this machine's hidden: skipped (unshare -m needs root)"
fi

# stopped by the watchdog (here after 2 s, in whatever step it is in): exit 124, and the report
# lists what was not reached
KIT_WATCHDOG_S=2 "$kit/run.sh" --dry --out "$dir/stopped" > "$dir/stopped.txt" 2>&1
rc=$?
[ $rc -eq 124 ] || fail "run.sh stopped by its watchdog exited $rc, expected 124"
grep -q '^| af720k-cuda-aos | NOT RUN (stopped by the watchdog' "$dir/stopped/gpu-report.md" ||
  fail "a stopped run's report does not list the steps it did not reach"

if [ $fails -ne 0 ]; then
  echo "test-gpu-kit: $fails check(s) failed (report: $r)"
  exit 1
fi
echo "test-gpu-kit: passed (kit $((kib / 1024)) MiB; report: $r)"
