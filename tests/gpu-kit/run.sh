#!/usr/bin/env bash
# op2 GPU kit: one command that proves the cuda backend (and opencl on NVIDIA's OpenCL driver)
# on a GPU machine in one short run, and measures Airfoil against the device's copy bandwidth.
#
#   run.sh [--dry] [--out DIR]
#
# Writes DIR/gpu-report.md (markdown) and DIR/gpu-kit.log (every step's full output); DIR is
# --out, else $OUT, else ./gpu-kit-out. The report is rewritten after every step, so a run cut
# off from outside still reports every step finished before; DIR/work (replaced) keeps each
# step's output. Meshes and JIT caches go to a temporary folder, removed at the end. Steps,
# most important first:
#   device      nvidia-smi, glibc, cc, nvcc, where NVRTC was found
#   probe       op2-gpu-probe: the CUDA driver, NVRTC, device op2 uses (or why none); OpenCL devices
#   seq         Airfoil 45K, 20 iterations on seq against the reference (the JIT works here)
#   seq-pack    the same from the kit's loop pack with OP2_JIT=off (what a machine without a C
#               compiler uses: there every later step takes its loops from the pack, and the C
#               suite, whose loops are not in it, is not run)
#   halo-cuda   the device halo rows of MPI exchanges on cuda (op2-gpu-probe halo): export rows
#               gathered, import rows, and the staging a CUDA-aware MPI exchange uses (rows
#               packed on the device, moved area to area as MPI would, unpacked by the scatter
#               kernel), each row checked, in both device layouts (no MPI needed)
#   ctest-cuda  the C suite on cuda (in parallel)
#   af45k-cuda  Airfoil 45K, 1000 iterations on cuda with each OP2_INC (stage too) and OP_AUTO_SOA=0 and 1, each
#               within 1e-12 of the reference at every iteration
#   af45k-cuda-validate  OP2_VALIDATE=1 (every loop checked against seq), 10 iterations
#   mpi-cuda    Airfoil 45K and the MPI C tests under mpiexec -n 2 on cuda with the OpenMPI the
#               kit carries, halos through host memory: 1e-12 of one process, exact
#               op_dat_transfers, whether the MPI is CUDA-aware (step-mpi.sh; KIT_MPI_S, 150 s)
#   opencl-*    the same three on NVIDIA's OpenCL driver, if the machine has one, then
#               opencl-profile: Airfoil 45K, 100 iterations with OP2_DEVICE_PROFILE=1 (per loop
#               the kernels' time by the device's clock against the loop's time in op2)
#   bandwidth   cuMemcpyDtoD (op2-gpu-probe copy) and a direct op2 copy loop (op2_copy), 1 GiB
#   af720k-cuda Airfoil on OP2's 720K mesh, 200 iterations: rms against the reference, ms per
#               iteration and per loop, GB/s per loop, each against the measured copy bandwidth
#   op2common-cuda  OP2-Common's own CUDA Airfoil (in kits built with OP2_COMMON_DIR) and op2's,
#               720K, 1000 iterations each: both times, both rms traces, op2 / OP2-Common
#               (step-op2common.sh)
#   af720k-*    the same with OP2_DEVICE_SYNC=1 (each loop waited for: exact per-loop times),
#               OP2_INC=colour, OP2_INC=blocks and OP_AUTO_SOA=0 (array-of-structures), if time is left
# --dry (no GPU, e.g. CI): every step that needs no GPU runs (device, probe, seq, a C-suite
# smoke test on seq, Airfoil and two MPI C tests under the kit's mpiexec on seq, op2_copy on
# seq, the per-loop analysis on the seq run); the GPU steps are
# listed as not run. Exit status: 0 when every step that ran passed, 1 otherwise, 124 when the
# watchdog stopped the run.
#
# Environment: KIT_BUDGET_S (seconds before the run stops itself, default 510: 8.5 minutes),
# KIT_WATCHDOG_S (seconds before the watchdog stops the run: the budget plus 20 s of grace),
# KIT_RESERVE_720K_S (seconds the opencl steps leave for the bandwidth and 720K steps, 150),
# KIT_JOBS (parallel C tests, default: CPUs / 2, at most 8), KIT_NO_OPENCL=1 (leave out the
# opencl steps, for a rerun that needs the time for cuda), KIT_MPI_S and KIT_MPI_ITERS (the
# mpi-cuda step: step-mpi.sh), OP2_CUDA_DEVICE. For testing this
# script without a GPU: KIT_SIMULATE=BACKEND (e.g. threads) runs every cuda step on that
# backend instead (no cuMemcpyDtoD), reported as simulated.
set -u

KIT=$(cd "$(dirname "$0")" && pwd) || exit 2
DRY=0
OUTDIR=${OUT:-}
while [ $# -gt 0 ]; do
  case $1 in
    --dry) DRY=1 ;;
    --out) shift; OUTDIR=${1:-} ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (run.sh [--dry] [--out DIR])" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$OUTDIR" ] || OUTDIR=$PWD/gpu-kit-out
mkdir -p "$OUTDIR" || { echo "run.sh: cannot create $OUTDIR" >&2; exit 2; }
OUTDIR=$(cd "$OUTDIR" && pwd)
REPORT=$OUTDIR/gpu-report.md
LOG=$OUTDIR/gpu-kit.log
W=$OUTDIR/work
rm -rf "$W"
mkdir -p "$W/sections"
# Large files (unpacked meshes, JIT caches) stay out of OUTDIR, which may be copied back.
BIG=$(mktemp -d "${TMPDIR:-/tmp}/op2-gpu-kit.XXXXXX") || { echo "run.sh: mktemp failed" >&2; exit 2; }
mkdir -p "$BIG/cache"
: > "$LOG"
: > "$W/status.tsv"

START=$(date +%s)
BUDGET=${KIT_BUDGET_S:-510}
DEADLINE=$((START + BUDGET))
# The last steps need this much time left (seconds) when the opencl steps start.
RESERVE_720K=${KIT_RESERVE_720K_S:-150}

export LD_LIBRARY_PATH="$KIT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OP2_CACHE_DIR=$BIG/cache
export POCL_CACHE_DIR=$BIG/pocl-cache
unset OP2_BACKEND OP2_INC OP_AUTO_SOA OP2_VALIDATE OP2_STREAM_GBS OP2_LOOP_PACK OP2_JIT

BIN=$KIT/bin
HAVE_CC=1
# the backend of the "cuda" steps (another only under KIT_SIMULATE)
SIM=${KIT_SIMULATE:-}
CB=${SIM:-cuda}
REF=$KIT/ref
NCPU=$(nproc 2>/dev/null || echo 2)
JOBS=${KIT_JOBS:-$(((NCPU + 1) / 2))}
[ "$JOBS" -gt 8 ] && JOBS=8
[ "$JOBS" -lt 1 ] && JOBS=1

# ---- steps and the report -------------------------------------------------------------------

STEPS="device probe seq seq-pack halo-cuda ctest-cuda af45k-cuda af45k-cuda-validate mpi-cuda opencl-ctest opencl-af45k opencl-af45k-validate opencl-profile bandwidth af720k-cuda op2common-cuda af720k-cuda-sync af720k-cuda-colour af720k-cuda-blocks af720k-cuda-stage af720k-cuda-aos"
[ "$DRY" = 1 ] && STEPS="device probe seq seq-pack ctest-seq-smoke halo-cuda ctest-cuda af45k-cuda af45k-cuda-validate mpi-seq-smoke mpi-cuda opencl-ctest opencl-af45k opencl-af45k-validate opencl-profile bandwidth-seq bandwidth analysis-seq af720k-cuda op2common-cuda af720k-cuda-sync af720k-cuda-colour af720k-cuda-blocks af720k-cuda-stage af720k-cuda-aos"

now() { date +%s; }
left() { echo $((DEADLINE - $(now))); }
log() { printf '%s\n' "$*" >> "$LOG"; }
section() { cat >> "$W/sections/$CUR.md"; } # append markdown to the current step's section
# record STEP RESULT NOTE: RESULT is PASS, FAIL, INFO or NOT RUN
# (the note on one line, without the table's '|')
record() {
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${STEP_T:-0}" "$(printf '%s' "$3" | tr '|\t\n' '/  ' | cut -c1-600)" >> "$W/status.tsv"
  write_report
}

write_report() {
  local tmp=$REPORT.tmp s line
  {
    echo "# op2 GPU kit report"
    echo
    echo "- kit: $(head -n 1 "$KIT/kit-info.txt" 2>/dev/null || echo unknown)"
    echo "- machine: $(hostname 2>/dev/null), $(uname -srm), $NCPU CPUs"
    echo "- started: $(date -u -d "@$START" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || date -u), $(($(now) - START)) s so far (budget ${BUDGET} s)"
    echo "- mode: $([ "$DRY" = 1 ] && echo 'dry run (no GPU steps)' || echo 'GPU run')"
    [ -f "$W/device-line" ] && echo "- device: $(cat "$W/device-line")"
    echo
    echo "## Summary"
    echo
    echo "| step | result | seconds | note |"
    echo "|---|---|---:|---|"
    for s in $STEPS; do
      line=$(awk -F '\t' -v s="$s" '$1 == s { print "| " $1 " | " $2 " | " $3 " | " $4 " |" }' "$W/status.tsv" | tail -n 1)
      if [ -n "$line" ]; then echo "$line"; else echo "| $s | ${PENDING:-pending} | | |"; fi
    done
    echo
    for s in $STEPS; do
      [ -f "$W/sections/$s.md" ] || continue
      echo "## $s"
      echo
      cat "$W/sections/$s.md"
      echo
    done
  } > "$tmp" 2>/dev/null && mv "$tmp" "$REPORT"
}

# run_to FILE SECONDS CMD...: runs CMD (output to FILE) for at most SECONDS, and never past the
# deadline; returns CMD's status, 124 on timeout. The child is remembered for the watchdog.
CHILD=
run_to() {
  local file=$1 secs=$2 l
  shift 2
  l=$(($(left) - 3))
  [ "$secs" -gt "$l" ] && secs=$l
  if [ "$secs" -le 0 ]; then
    echo "(not started: no time left)" > "$file"
    return 124
  fi
  timeout -k 5 "$secs" "$@" > "$file" 2>&1 &
  CHILD=$!
  echo "$CHILD" > "$W/child.pid"
  wait "$CHILD"
  local rc=$?
  rm -f "$W/child.pid"
  CHILD=
  { echo "---- $* (exit $rc)"; cat "$file"; } >> "$LOG"
  return $rc
}

# begin STEP: returns 1 (and records NOT RUN) when there is no time left for it.
begin() {
  stop_if_asked
  CUR=$1
  STEP_START=$(now)
  STEP_T=0
  log "==== step $CUR ($(left) s left)"
  if [ "$(left)" -le 5 ]; then
    STEP_T=0
    record "$CUR" "NOT RUN" "no time left"
    return 1
  fi
  return 0
}
finish() { # RESULT NOTE
  STEP_T=$(($(now) - STEP_START))
  record "$CUR" "$1" "$2"
}
skip() { # STEP REASON
  stop_if_asked
  STEP_T=0
  record "$1" "NOT RUN" "$2"
}
fence() { printf '```\n'; cat; printf '```\n'; }

# The watchdog: at the deadline plus a grace period (20 s, for the last step's own timeout;
# KIT_WATCHDOG_S sets the whole wait) it stops the run: it marks the run stopped ($W/stopped) and stops the running child;
# the run then writes what there is and exits 124 at its next step (stop_if_asked). The main
# shell traps no signal: bash 5.2 aborted now and then (exit 134, no report) when a TERM trap
# ran while it waited for a child, so a stop from outside (SIGTERM) just ends the run, and its
# report shows the steps not reached as pending.
stop_if_asked() {
  [ -f "$W/stopped" ] || return 0
  PENDING="NOT RUN (stopped by the watchdog after $(($(now) - START)) s)"
  log "watchdog: stopped after $(($(now) - START)) s"
  write_report
  exit 124
}
(
  trap 'kill "$SLEEPER" 2>/dev/null; exit 0' TERM
  sleep "${KIT_WATCHDOG_S:-$((BUDGET + 20))}" &
  SLEEPER=$!
  if wait "$SLEEPER"; then
    : > "$W/stopped"
    [ -f "$W/child.pid" ] && kill -TERM "$(cat "$W/child.pid")" 2>/dev/null
  fi
  exit 0
) &
WATCHDOG=$!
trap 'kill "$WATCHDOG" 2>/dev/null; rm -rf "$BIG"' EXIT

write_report

# ---- device -----------------------------------------------------------------------------------

# NVRTC: on the loader's path, else in a CUDA toolkit (nvcc's, CUDA_HOME, /usr/local/cuda*),
# whose library folder is then added to LD_LIBRARY_PATH (for every later step). Sets NVRTC_AT.
NVRTC_AT="not looked for"
find_nvrtc() {
  if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
    NVRTC_AT="on the loader's path: $(ldconfig -p | grep -o '/[^ ]*libnvrtc\.so[^ ]*' | head -n 1)"
    return
  fi
  local d c nv
  nv=$(command -v nvcc 2>/dev/null)
  for c in ${nv:+$(dirname "$(dirname "$nv")")} ${CUDA_HOME:-} ${CUDA_PATH:-} /usr/local/cuda /usr/local/cuda-* /opt/cuda; do
    for d in "$c/lib64" "$c/lib" "$c/targets/x86_64-linux/lib" "$c/targets/sbsa-linux/lib"; do
      if ls "$d"/libnvrtc.so* > /dev/null 2>&1; then
        export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
        NVRTC_AT="$d (added to LD_LIBRARY_PATH)"
        return
      fi
    done
  done
  NVRTC_AT="not found (op2's cuda backend will say so)"
}

if begin device; then
  find_nvrtc
  {
    echo "== nvidia-smi"
    if command -v nvidia-smi > /dev/null 2>&1; then
      timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory,clocks.max.sm,pcie.link.gen.max --format=csv 2>&1
      timeout 20 nvidia-smi 2>&1
    else
      echo "nvidia-smi: not found"
    fi
    echo "== glibc: $(ldd --version 2>&1 | head -n 1)"
    if command -v cc > /dev/null 2>&1; then echo "== cc: $(cc --version 2>&1 | head -n 1)"; else echo "== cc: not found"; fi
    if command -v nvcc > /dev/null 2>&1; then echo "== nvcc: $(nvcc --version 2>&1 | tail -n 2 | tr '\n' ' ')"; else echo "== nvcc: not found"; fi
    echo "== NVRTC: $NVRTC_AT"
    echo "== CPU: $(grep -m 1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2-)"
  } > "$W/device.txt" 2>&1
  cat "$W/device.txt" >> "$LOG"
  command -v cc > /dev/null 2>&1 || HAVE_CC=0
  fence < "$W/device.txt" | section
  gpu=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)
  [ -n "$gpu" ] && echo "$gpu (nvidia-smi)" > "$W/device-line"
  # the glibc the kit was built against (kit-info.txt) against this machine's
  need=$(sed -n 's/.*needs glibc >= \([0-9.]*\).*/\1/p' "$KIT/kit-info.txt" 2>/dev/null)
  have=$(ldd --version 2>&1 | head -n 1 | grep -o '[0-9][0-9]*\.[0-9][0-9]*$')
  if [ -n "$need" ] && [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -t . -k 1,1n -k 2,2n | head -n 1)" != "$need" ]; then
    finish FAIL "glibc $have here; the kit needs $need or newer"
  elif [ "$HAVE_CC" = 0 ]; then
    finish INFO "${gpu:-no nvidia-smi}; no C compiler 'cc': loops from the kit's pack, C suite not run"
  else
    finish INFO "${gpu:-no nvidia-smi}; NVRTC ${NVRTC_AT%% (*}"
  fi
fi

# ---- probe ------------------------------------------------------------------------------------

# Without a C compiler op2 takes every loop's host code from the kit's pack.
PACK=$KIT/packs/host.op2pack
if [ "$HAVE_CC" = 0 ]; then
  export OP2_LOOP_PACK=$PACK OP2_JIT=off
fi

CUDA_OK=0
CUDA_WHY="not probed"
NV_OPENCL=
if begin probe; then
  run_to "$W/probe.txt" 30 "$BIN/op2-gpu-probe" probe
  rc=$?
  fence < "$W/probe.txt" | section
  CUDA_WHY=$(sed -n 's/^cuda: unavailable: //p' "$W/probe.txt" | head -n 1)
  # NVIDIA's OpenCL device (under KIT_SIMULATE: any with fp64, to test these steps)
  pat=NVIDIA
  [ -n "$SIM" ] && pat=.
  NV_OPENCL=$(grep -m 1 "^opencl device .*$pat.*fp64 yes" "$W/probe.txt" | sed 's/^opencl device \([0-9]*:[0-9]*\):.*/\1/')
  if [ $rc -eq 0 ]; then
    CUDA_OK=1
    dev=$(sed -n "s/^cuda device: [0-9]* //p" "$W/probe.txt")
    cc=$(sed -n 's/^cuda compute capability: \([0-9.]*\).*/\1/p' "$W/probe.txt")
    [ -f "$W/device-line" ] || echo "$dev" > "$W/device-line"
    finish PASS "cuda: $dev, compute capability $cc; NVIDIA OpenCL: ${NV_OPENCL:-none}"
  elif [ $rc -eq 3 ] && [ "$DRY" = 1 ]; then
    # Here without a GPU, what is missing must be said by name.
    if grep -q '^cuda: unavailable: no CUDA driver (' "$W/probe.txt"; then
      finish PASS "dry run: cuda unavailable, as expected: no CUDA driver"
    else
      finish FAIL "dry run: expected 'cuda: unavailable: no CUDA driver (...)'"
    fi
  elif [ $rc -eq 3 ]; then
    finish FAIL "cuda unavailable: $CUDA_WHY"
  else
    finish FAIL "op2-gpu-probe exit $rc"
  fi
fi
[ "$DRY" = 1 ] && CUDA_OK=0 && CUDA_WHY="dry run"
if [ -n "$SIM" ] && [ "$DRY" = 0 ]; then
  CUDA_OK=1
  echo "SIMULATED: the cuda steps run on $SIM (KIT_SIMULATE)" > "$W/device-line"
fi

MESH720=$BIG/new_grid.dat
UNPACK720=
if [ "$CUDA_OK" = 1 ]; then
  # OP2's 720K mesh (80 MB of text) unpacked while the first steps run
  (gunzip -c "$KIT/meshes/new_grid.dat.gz" > "$MESH720.tmp" && mv "$MESH720.tmp" "$MESH720") 2>> "$LOG" &
  UNPACK720=$!
fi

# ---- Airfoil helpers --------------------------------------------------------------------------

MESH45=$BIG/new_grid_45k.dat
gunzip -c "$KIT/meshes/new_grid_45k.dat.gz" > "$MESH45" 2>> "$LOG" || log "cannot unpack the 45K mesh"

# airfoil_check TAG MESH ITERS REFLOG SECONDS ENV...: runs Airfoil and compares its rms log with
# the first ITERS lines of REFLOG (1e-12 relative at every iteration). Prints one line.
airfoil_check() {
  local tag=$1 mesh=$2 iters=$3 ref=$4 secs=$5
  shift 5
  head -n "$iters" "$ref" > "$W/ref-$tag.log"
  run_to "$W/af-$tag.out" "$secs" "$BIN/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$W/rms-$tag.log" "$@"
  local rc=$?
  if [ $rc -eq 124 ]; then echo "FAIL $tag: timed out"; return 1; fi
  if [ $rc -ne 0 ]; then echo "FAIL $tag: exit $rc: $(tail -n 3 "$W/af-$tag.out" | tr '\n' ' ')"; return 1; fi
  local v
  v=$("$BIN/cmp_rms" --rel 1e-12 "$W/rms-$tag.log" "$W/ref-$tag.log" 2>&1)
  local c=$?
  local ms
  ms=$(sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$W/af-$tag.out" | head -n 1)
  if [ $c -eq 0 ]; then echo "PASS $tag: $v (${ms:-?} ms/iter)"; return 0; fi
  echo "FAIL $tag: $v"
  return 1
}

# ---- seq: the kit, the JIT and the reference agree -----------------------------------------------

if begin seq; then
  r=$(airfoil_check seq "$MESH45" 20 "$REF/rms-45k-1000.log" 90 OP2_BACKEND=seq)
  echo "$r" | fence | section
  case $r in PASS*) finish PASS "Airfoil 45K, 20 iterations on seq: within 1e-12 of the reference" ;; *) finish FAIL "$r" ;; esac
fi

if begin seq-pack; then
  # an empty cache: the loops can only come from the pack
  mkdir -p "$BIG/cache-pack"
  r=$(export OP2_LOOP_PACK=$PACK OP2_JIT=off OP2_CACHE_DIR=$BIG/cache-pack; airfoil_check seq-pack "$MESH45" 20 "$REF/rms-45k-1000.log" 60 OP2_BACKEND=seq)
  echo "$r" | fence | section
  case $r in PASS*) finish PASS "the same from the kit's loop pack, OP2_JIT=off" ;; *) finish FAIL "$r" ;; esac
fi

# ---- device halo rows -------------------------------------------------------------------------

if [ "$CUDA_OK" = 1 ] && [ -z "$SIM" ]; then
  if begin halo-cuda; then
    run_to "$W/halo.txt" 60 "$BIN/op2-gpu-probe" halo
    rc=$?
    fence < "$W/halo.txt" | section
    if [ $rc -eq 0 ]; then
      finish PASS "$(sed -n 's/^halo_passed=\([0-9]*\).*/\1/p' "$W/halo.txt") checks of halo rows on cuda (gather, import rows, CUDA-aware MPI staging) pass"
    else
      finish FAIL "op2-gpu-probe halo exit $rc: $(grep -m 3 -E 'FAILED|error|halo:' "$W/halo.txt" | tr '\n' ';' | cut -c1-300)"
    fi
  fi
elif [ -n "$SIM" ] && [ "$DRY" = 0 ]; then
  skip halo-cuda "needs a CUDA device (KIT_SIMULATE runs the other cuda steps on $SIM)"
else
  skip halo-cuda "cuda unavailable: $CUDA_WHY"
fi

# ---- the C suite ------------------------------------------------------------------------------

# One C test on one backend, from the kit's root (tests read tests/golden and tests/c/op2-style):
# PASS when it exits 0 and prints nothing, as tests/c/run.sh requires.
run_one() { # NAME BACKEND DIR TIMEOUT [ENV...]
  local t=$1 b=$2 d=$3 to=$4
  shift 4
  (cd "$KIT" && timeout -k 5 "$to" env "$@" "$KIT/tests/c/bin/$t" "$b" > "$d/$t.out" 2> "$d/$t.err")
  local rc=$?
  if [ $rc -eq 0 ] && [ ! -s "$d/$t.out" ] && [ ! -s "$d/$t.err" ]; then
    echo "PASS $t"
  elif [ $rc -eq 0 ]; then
    echo "FAIL $t: exit 0 but not silent: $(cat "$d/$t.out" "$d/$t.err" | tail -n 3 | tr '\n' ' ' | cut -c1-300)"
  elif [ $rc -eq 124 ]; then
    echo "FAIL $t: timed out after ${to}s"
  else
    echo "FAIL $t: exit $rc: $(tail -n 3 "$d/$t.err" | tr '\n' ' ' | cut -c1-300)"
  fi
}
export -f run_one
export KIT

# ctest_leave_out BACKEND: "NAME<TAB>reason" for each C test that cannot run on this machine:
# those compiling Fortran kernels when there is no Fortran compiler, and on NVIDIA's OpenCL
# t376, which needs PoCL's POCL_MEMORY_LIMIT to make a device allocation fail.
ctest_leave_out() {
  local t
  if ! command -v "${OP2_FC:-gfortran}" > /dev/null 2>&1; then
    for t in $(cat "$KIT/tests/c/needs-fortran.txt" 2> /dev/null); do
      printf '%s\tno Fortran compiler (%s)\n' "$t" "${OP2_FC:-gfortran}"
    done
  fi
  [ "$1" = opencl ] && printf 't376-device-oom\tneeds PoCL (POCL_MEMORY_LIMIT)\n'
  return 0
}

# ctest STEP BACKEND SECONDS TESTS [ENV...]: the given tests (all when empty) in parallel.
ctest() {
  local step=$1 b=$2 secs=$3 tests=$4
  shift 4
  local d=$W/$step
  mkdir -p "$d"
  [ -n "$tests" ] || tests=$(cat "$KIT/tests/c/list.txt")
  # Tests that cannot run here are left out, named with the reason (not counted as passed).
  local out t why left=
  out=$(ctest_leave_out "$b")
  for t in $tests; do
    why=$(printf '%s\n' "$out" | awk -F '\t' -v t="$t" '$1 == t { print $2 }')
    if [ -n "$why" ]; then left="$left$t ($why); "; else echo "$t"; fi
  done > "$d/tests.txt"
  run_to "$d/results.raw" "$secs" xargs -a "$d/tests.txt" -P "$JOBS" -I '{}' bash -c 'run_one "$@"' _ '{}' "$b" "$d" 90 "$@"
  local rc=$?
  sort "$d/results.raw" | grep -E '^(PASS|FAIL)' > "$d/results.txt"
  local pass fail ran total
  pass=$(grep -c '^PASS' "$d/results.txt")
  fail=$(grep -c '^FAIL' "$d/results.txt")
  total=$(wc -l < "$d/tests.txt")
  ran=$((pass + fail))
  {
    echo "$pass passed, $fail failed, $((total - ran)) not run of $total (backend $b, $JOBS in parallel)"
    echo
    [ -n "$left" ] && { echo "left out: $left"; echo; }
    [ "$fail" -gt 0 ] && grep '^FAIL' "$d/results.txt" | fence
    [ "$ran" -lt "$total" ] && echo "not finished: $(comm -23 <(sort "$d/tests.txt") <(awk '{ print $2 }' "$d/results.txt" | tr -d ':' | sort) | tr '\n' ' ')"
  } | section
  if [ "$fail" -eq 0 ] && [ "$ran" -eq "$total" ]; then
    finish PASS "$pass of $total tests pass on $b"
  else
    finish FAIL "$pass passed, $fail failed, $((total - ran)) not run (of $total) on $b$([ $rc -eq 124 ] && echo ', step timed out')"
  fi
}

# (t970: loop names from the test program's symbol table, which a stripped program has not)
if [ "$DRY" = 1 ] && begin ctest-seq-smoke; then
  ctest ctest-seq-smoke seq 120 "t000-init-exit t020-direct t040-indirect-inc t070-globals t380-cuda t640-op2-style-kernels t970-fptr"
fi

if [ "$HAVE_CC" = 0 ]; then
  skip ctest-cuda "no C compiler: the C suite's loops are not in the kit's pack"
elif [ "$CUDA_OK" = 1 ]; then
  begin ctest-cuda && ctest ctest-cuda "$CB" 180 ""
else
  skip ctest-cuda "cuda unavailable: $CUDA_WHY"
fi

# ---- Airfoil 45K on cuda ----------------------------------------------------------------------

# af_strategies STEP BACKEND-ENV...: 1000 iterations with each OP2_INC and with each device
# layout (OP_AUTO_SOA=0 and 1; unset, cuda stores dats structure-of-arrays and opencl not).
af_strategies() {
  local step=$1
  shift
  local fails=0 cfg r tag notes=
  for cfg in OP2_INC=atomics OP2_INC=colour OP2_INC=blocks OP2_INC=stage OP_AUTO_SOA=0 OP_AUTO_SOA=1; do
    tag=${cfg#*=}
    [ "$cfg" = OP_AUTO_SOA=0 ] && tag=aos
    [ "$cfg" = OP_AUTO_SOA=1 ] && tag=soa
    r=$(airfoil_check "$step-$tag" "$MESH45" 1000 "$REF/rms-45k-1000.log" 60 "$@" "$cfg")
    echo "$r" >> "$W/$step.txt"
    case $r in PASS*) notes="$notes ${cfg}: $(echo "$r" | sed -n 's/.*(\([0-9.?]*\) ms\/iter).*/\1/p') ms/iter;" ;; *) fails=$((fails + 1)) ;; esac
  done
  fence < "$W/$step.txt" | section
  if [ $fails -eq 0 ]; then finish PASS "1000 iterations within 1e-12 of the reference with each strategy;$notes"; else finish FAIL "$fails of 6 configurations failed"; fi
}

af_validate() { # STEP BACKEND-ENV...
  local step=$1 r
  shift
  r=$(airfoil_check "$step" "$MESH45" 10 "$REF/rms-45k-1000.log" 90 "$@" OP2_VALIDATE=1)
  echo "$r" | fence | section
  case $r in PASS*) finish PASS "10 iterations with OP2_VALIDATE=1: every loop agrees with seq; rms within 1e-12" ;; *) finish FAIL "$r" ;; esac
}

# af_profile STEP BACKEND-ENV...: 100 iterations with OP2_DEVICE_PROFILE=1: per loop, the
# kernels' time by the device's clock against the loop's whole time in the backend.
af_profile() {
  local step=$1 r
  shift
  r=$(airfoil_check "$step" "$MESH45" 100 "$REF/rms-45k-1000.log" 60 "$@" OP2_DEVICE_PROFILE=1)
  { echo "$r"; sed -n '/^op2 timing/,$p' "$W/af-$step.out"; } | fence | section
  case $r in
    PASS*)
      finish INFO "$(awk '/^op2 [a-z]* backend: device profile/ { on = 1; next }
        on && $1 != "loop" && NF >= 6 { k += $4; b += $5 }
        END { if (b > 0) printf "kernels %.1f ms of %.1f ms in the backend (%.0f%%), 100 iterations", k, b, 100 * k / b; else printf "no device profile in the output" }' "$W/af-$step.out")"
      ;;
    *) finish FAIL "$r" ;;
  esac
}

if [ "$CUDA_OK" = 1 ]; then
  begin af45k-cuda && af_strategies af45k-cuda "OP2_BACKEND=$CB"
  begin af45k-cuda-validate && af_validate af45k-cuda-validate "OP2_BACKEND=$CB"
else
  skip af45k-cuda "cuda unavailable: $CUDA_WHY"
  skip af45k-cuda-validate "cuda unavailable: $CUDA_WHY"
fi

# ---- MPI on cuda: Debian's OpenMPI carried in the kit (step-mpi.sh) ----------------------------

# shellcheck source=step-mpi.sh
if [ -f "$KIT/step-mpi.sh" ]; then . "$KIT/step-mpi.sh" && mpi_steps; else skip mpi-cuda "this kit has no step-mpi.sh"; fi

# ---- opencl on NVIDIA's OpenCL driver -----------------------------------------------------------

if [ -n "$NV_OPENCL" ] && [ "$DRY" = 0 ] && [ "$HAVE_CC" = 1 ] && [ "${KIT_NO_OPENCL:-0}" != 1 ]; then
  # These steps leave RESERVE_720K seconds for the bandwidth and 720K steps.
  SAVED_DEADLINE=$DEADLINE
  DEADLINE=$((DEADLINE - RESERVE_720K))
  begin opencl-ctest && ctest opencl-ctest opencl 120 "" "OP2_OPENCL_DEVICE=$NV_OPENCL"
  begin opencl-af45k && af_strategies opencl-af45k OP2_BACKEND=opencl "OP2_OPENCL_DEVICE=$NV_OPENCL"
  begin opencl-af45k-validate && af_validate opencl-af45k-validate OP2_BACKEND=opencl "OP2_OPENCL_DEVICE=$NV_OPENCL"
  begin opencl-profile && af_profile opencl-profile OP2_BACKEND=opencl "OP2_OPENCL_DEVICE=$NV_OPENCL"
  DEADLINE=$SAVED_DEADLINE
else
  why="no NVIDIA OpenCL device with fp64 (op2-gpu-probe lists: $(grep '^opencl' "$W/probe.txt" 2>/dev/null | cut -c1-120 | tr '\n' ';'))"
  [ "$DRY" = 1 ] && why="dry run; $why"
  [ "$HAVE_CC" = 0 ] && why="no C compiler: the opencl steps are left out; $why"
  [ "${KIT_NO_OPENCL:-0}" = 1 ] && why="left out with KIT_NO_OPENCL=1"
  for s in opencl-ctest opencl-af45k opencl-af45k-validate opencl-profile; do skip "$s" "$why"; done
fi

# ---- bandwidth --------------------------------------------------------------------------------

COPY_GBS=
# bandwidth STEP BACKEND MIB REPS: op2_copy (and on cuda cuMemcpyDtoD); op2_copy's loops wait for
# their kernels (OP2_DEVICE_SYNC=1: it times each loop, and otherwise times launches). Sets COPY_GBS to the
# larger of the two.
bandwidth() {
  local step=$1 b=$2 mib=$3 reps=$4 g1= g2=
  if [ "$b" = cuda ]; then
    run_to "$W/$step-memcpy.txt" 60 "$BIN/op2-gpu-probe" copy --mib "$mib" --reps "$reps"
    g1=$(sed -n 's/^copy_gbs=//p' "$W/$step-memcpy.txt")
    fence < "$W/$step-memcpy.txt" | section
  fi
  run_to "$W/$step-op2.txt" 90 "$BIN/op2_copy" "$mib" "$reps" "OP2_BACKEND=$b" OP2_DEVICE_SYNC=1
  g2=$(sed -n 's/^op2_copy_gbs=//p' "$W/$step-op2.txt")
  fence < "$W/$step-op2.txt" | section
  COPY_GBS=$(awk -v a="${g1:-0}" -v b="${g2:-0}" 'BEGIN { m = a > b ? a : b; if (m > 0) print m }')
  if [ -n "$COPY_GBS" ] && { [ "$b" != cuda ] || [ -n "$g1" ]; } && [ -n "$g2" ]; then
    finish INFO "${g1:+cuMemcpyDtoD $g1 GB/s; }op2 copy loop $g2 GB/s (read + write, $mib MiB)"
  else
    finish FAIL "a copy did not run: cuMemcpyDtoD '${g1}' op2_copy '${g2}' GB/s"
  fi
}

# analysis TAG AIRFOIL-OUTPUT ITERS GBS: per-loop table of an Airfoil run against the copy
# bandwidth GBS: each loop's bytes per iteration (op2's own count), its time, its GB/s and the
# time that many bytes take at GBS; the iteration's floor and the ratio.
analysis() {
  local tag=$1 out=$2 iters=$3 gbs=$4
  local ms
  ms=$(sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$out" | head -n 1)
  awk -v iters="$iters" -v gbs="$gbs" -v ms="${ms:-0}" -v tag="$tag" '
    /^op2 timing/ { on = 1; next }
    on && $1 == "loop" { next }
    on && $1 == "total" { on = 0; next }
    on && NF >= 6 {
      n++; name[n] = $1; calls[n] = $2; tot[n] = $3; mean[n] = $4; g[n] = $5
      bytes[n] = $5 * 1e9 * $3 / iters
    }
    END {
      if (n == 0) { print "no op2 timing table in the output"; exit 1 }
      printf "| loop | calls | ms per iteration | MB per iteration | GB/s | of %.1f GB/s | floor (ms) | time / floor |\n", gbs
      print "|---|---:|---:|---:|---:|---:|---:|---:|"
      worst = 0
      for (i = 1; i <= n; i++) {
        t = 1e3 * tot[i] / iters; f = 1e3 * bytes[i] / (gbs * 1e9)
        r = f > 0 ? t / f : 0
        if (r > worst) { worst = r; wname = name[i] }
        if (t - f > excess) { excess = t - f; xname = name[i] }
        sb += bytes[i]; st += t
        printf "| %s | %d | %.4f | %.2f | %.1f | %.0f%% | %.4f | %.2f |\n", name[i], calls[i], t, bytes[i] / 1e6, g[i], 100 * g[i] / gbs, f, r
      }
      f = 1e3 * sb / (gbs * 1e9)
      printf "| **iteration** | | %.4f (loops) / %.4f (measured) | %.2f | %.1f | %.0f%% | %.4f | %.2f |\n", st, ms, sb / 1e6, sb / (ms > 0 ? ms : st) / 1e6, 100 * sb / (ms > 0 ? ms : st) / 1e6 / gbs, f, (ms > 0 ? ms : st) / f
      printf "\nfloor %.4f ms per iteration (%.2f MB at %.1f GB/s); measured %.4f ms: %.2fx the floor (target: within 2x); furthest from its floor: %s (%.2fx); most time above its floor: %s (%.4f ms per iteration)\n", f, sb / 1e6, gbs, ms, (ms > 0 ? ms : st) / f, wname, worst, xname, excess
      printf "SUMMARY %s: %.4f ms/iter, floor %.4f ms, %.2fx; furthest loop %s %.2fx; most time above floor %s\n", tag, ms, f, (ms > 0 ? ms : st) / f, wname, worst, xname
    }' "$out"
}

if [ "$DRY" = 1 ]; then
  if begin bandwidth-seq; then bandwidth bandwidth-seq seq 16 3; fi
  if begin analysis-seq; then
    if [ -n "$COPY_GBS" ] && analysis seq "$W/af-seq.out" 20 "$COPY_GBS" > "$W/analysis-seq.txt" 2>&1; then
      grep -v '^SUMMARY' "$W/analysis-seq.txt" | section
      finish PASS "$(sed -n 's/^SUMMARY //p' "$W/analysis-seq.txt")"
    else
      section < "$W/analysis-seq.txt"
      finish FAIL "the per-loop analysis of the seq run failed"
    fi
  fi
fi

if [ "$CUDA_OK" = 1 ]; then
  begin bandwidth && bandwidth bandwidth "$CB" 1024 20
else
  skip bandwidth "cuda unavailable: $CUDA_WHY"
fi

# ---- Airfoil 720K on cuda ---------------------------------------------------------------------

af720k() { # STEP ENV...
  local step=$1 r res
  shift
  [ -n "$UNPACK720" ] && wait "$UNPACK720" 2>/dev/null
  UNPACK720=
  if [ ! -s "$MESH720" ]; then
    gunzip -c "$KIT/meshes/new_grid.dat.gz" > "$MESH720.tmp" 2>> "$LOG" && mv "$MESH720.tmp" "$MESH720"
  fi
  r=$(airfoil_check "$step" "$MESH720" 200 "$REF/rms-720k-200.log" 150 "OP2_BACKEND=$CB" ${COPY_GBS:+OP2_STREAM_GBS=$COPY_GBS} "$@")
  res=${r%% *}
  # the printed lines against OP2's published ones (iterations 100 and 200)
  grep -E '^ [0-9]+  ' "$W/af-$step.out" > "$W/printed-$step.txt" 2> /dev/null
  if head -n 2 "$REF/reference_720k.txt" | cmp -s - "$W/printed-$step.txt"; then
    r="$r; printed rms lines of iterations 100 and 200 match OP2's published ones"
  else
    r="$r; FAIL: printed rms lines differ from OP2's published ones"
    res=FAIL
  fi
  echo "$r" | fence | section
  if [ "$res" = PASS ] && [ -n "$COPY_GBS" ]; then
    analysis "$step" "$W/af-$step.out" 200 "$COPY_GBS" > "$W/$step-analysis.txt" 2>&1
    grep -v '^SUMMARY' "$W/$step-analysis.txt" | section
    finish PASS "$(sed -n 's/^SUMMARY [^ ]* //p' "$W/$step-analysis.txt")"
  elif [ "$res" = PASS ]; then
    grep -A 12 '^op2 timing' "$W/af-$step.out" | fence | section
    finish PASS "rms as the reference; no copy bandwidth measured: $(echo "$r" | sed -n 's/.*(\([0-9.?]*\) ms\/iter).*/\1/p') ms/iter"
  else
    finish FAIL "$r"
  fi
}

. "$KIT/step-op2common.sh"
if [ "$CUDA_OK" = 1 ]; then
  # Loops without reductions return once launched, so the per-loop times of af720k-cuda and
  # af720k-cuda-aos are launch times; the -sync run (OP2_DEVICE_SYNC=1, as the colour and
  # blocks runs) gives each loop's own time, and the time per iteration of waiting.
  begin af720k-cuda && af720k af720k-cuda
  op2common_step
  begin af720k-cuda-sync && af720k af720k-cuda-sync OP2_DEVICE_SYNC=1
  begin af720k-cuda-colour && af720k af720k-cuda-colour OP2_INC=colour OP2_DEVICE_SYNC=1
  begin af720k-cuda-blocks && af720k af720k-cuda-blocks OP2_INC=blocks OP2_DEVICE_SYNC=1
  begin af720k-cuda-stage && af720k af720k-cuda-stage OP2_INC=stage OP2_DEVICE_SYNC=1
  begin af720k-cuda-aos && af720k af720k-cuda-aos OP_AUTO_SOA=0
else
  for s in af720k-cuda af720k-cuda-sync af720k-cuda-colour af720k-cuda-blocks af720k-cuda-stage af720k-cuda-aos; do skip "$s" "cuda unavailable: $CUDA_WHY"; done
  op2common_step
  # the 720K mesh the GPU steps would use is whole
  if ! gzip -t "$KIT/meshes/new_grid.dat.gz" 2>> "$LOG"; then
    STEP_T=0
    record af720k-cuda FAIL "the kit's 720K mesh is damaged (gzip -t)"
  fi
fi

stop_if_asked
PENDING="NOT RUN"
write_report
log "done after $(($(now) - START)) s"
if awk -F '\t' '$2 == "FAIL" { bad = 1 } END { exit bad }' "$W/status.tsv"; then
  echo "gpu-kit: every step that ran passed; report: $REPORT"
  exit 0
fi
echo "gpu-kit: some steps failed; report: $REPORT"
exit 1
