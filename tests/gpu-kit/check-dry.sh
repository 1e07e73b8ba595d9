#!/usr/bin/env bash
# check-dry.sh KIT WORKDIR: the GPU kit without a GPU (make test-gpu-kit). Checks the kit's
# layout and size, runs `run.sh --dry` and checks its report: the steps that need no GPU ran
# and passed (the probe names the missing CUDA driver, Airfoil on seq agrees with the kit's
# reference, C tests run from the kit, op2_copy and the per-loop analysis work), and every GPU
# step is listed as not run. Then a run stopped from outside (SIGTERM, what the watchdog sends)
# must still leave a report that lists the steps it did not reach.
set -u
kit=$1
dir=$2
fails=0
fail() { echo "test-gpu-kit: FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$dir"
mkdir -p "$dir"

# layout
for f in run.sh kit-info.txt lib/libop2.so bin/airfoil bin/cmp_rms bin/op2_copy bin/op2-gpu-probe \
  packs/host.op2pack meshes/new_grid_45k.dat.gz meshes/new_grid.dat.gz ref/rms-45k-1000.log ref/rms-720k-200.log \
  ref/reference_720k.txt tests/c/list.txt tests/c/bin/t380-cuda tests/c/op2-style/jac_res.h \
  tests/golden/vtk/mesh2x2-binary.vtu; do
  [ -s "$kit/$f" ] || fail "the kit has no $f"
done
kib=$(du -sk "$kit" | cut -f 1)
[ "$kib" -le $((48 * 1024)) ] || fail "the kit is $kib KiB, over 48 MiB"
[ "$(wc -l < "$kit/ref/rms-45k-1000.log")" -eq 1000 ] || fail "ref/rms-45k-1000.log has not 1000 lines"
[ "$(wc -l < "$kit/ref/rms-720k-200.log")" -eq 200 ] || fail "ref/rms-720k-200.log has not 200 lines"
grep -q 'needs glibc >= 2\.[0-9]' "$kit/kit-info.txt" || fail "kit-info.txt names no glibc version"
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
expect bandwidth-seq INFO "op2 copy loop"
expect analysis-seq PASS "furthest loop"
for s in halo-cuda ctest-cuda af45k-cuda af45k-cuda-validate bandwidth af720k-cuda af720k-cuda-sync af720k-cuda-colour af720k-cuda-blocks af720k-cuda-soa; do
  expect "$s" "NOT RUN" "cuda unavailable: dry run"
done
for s in opencl-ctest opencl-af45k opencl-af45k-validate; do
  expect "$s" "NOT RUN" "no NVIDIA OpenCL device"
done
grep -q '^cuda: unavailable: no CUDA driver (' "$r" || fail "the report does not show the probe's output"
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

# stopped by the watchdog (here after 2 s, in whatever step it is in): exit 124, and the report
# lists what was not reached
KIT_WATCHDOG_S=2 "$kit/run.sh" --dry --out "$dir/stopped" > "$dir/stopped.txt" 2>&1
rc=$?
[ $rc -eq 124 ] || fail "run.sh stopped by its watchdog exited $rc, expected 124"
grep -q '^| af720k-cuda-soa | NOT RUN (stopped by the watchdog' "$dir/stopped/gpu-report.md" ||
  fail "a stopped run's report does not list the steps it did not reach"

if [ $fails -ne 0 ]; then
  echo "test-gpu-kit: $fails check(s) failed (report: $r)"
  exit 1
fi
echo "test-gpu-kit: passed (kit $((kib / 1024)) MiB; report: $r)"
