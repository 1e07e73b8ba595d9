#!/usr/bin/env bash
# Loop packs (op2-pack, OP2_LOOP_PACK, OP2_JIT=off) as a compute node without a compiler uses
# them. Run from the repository root by `make test-pack`:
#   tests/pack/run.sh OP2_PACK AIRFOIL MESH WORKDIR 'BACKENDS' [NVRTC_LIBDIR]
# 1. Airfoil: a run with OP2_GENERATE, op2-pack, then runs on each backend with no C compiler
#    on PATH (a `cc` there that records any call), OP2_JIT=off and an empty JIT cache: the rms
#    history equals the compiled run's bit for bit, and the compiler was never called.
# 2. An edited kernel (--kernel-dir) is refused with OP2_JIT=off (OP2_ERR_COMPILE naming the
#    loop), and compiled as usual with the JIT on.
# 3. A pack that was modified, is writable by others or is missing is refused at op_init.
# 4. op2-pack fails on a kernel that does not compile (naming the loop) and writes no pack;
#    --skip-broken leaves that loop out.
# 5. The C suite runs from a pack of its own generated loops, without a compiler, except the
#    tests whose subject is the compiler or the JIT cache (listed below, with why).
# 6. With NVRTC (NVRTC_LIBDIR, the pip wheel's library directory): Airfoil's CUDA code goes into
#    the pack as a CUBIN (an ELF image) per variant and architecture of OP2_CUDA_ARCH; without
#    NVRTC, op2-pack refuses CUDA code by name. (Loading them needs a GPU: not tested here.)
set -u
PACK=$1 AIRFOIL=$2 MESH=$3 WORK=$4 BACKENDS=$5 NVRTC_LIBDIR=${6:-}
fails=0
fail() { echo "test-pack: FAIL: $*"; fails=$((fails + 1)); }

rm -rf "$WORK"
mkdir -p "$WORK" && chmod 700 "$WORK" || exit 2
WORK=$(cd "$WORK" && pwd)

# A PATH with every tool of /usr/bin and /bin except C compilers, plus a `cc`/`gcc` that logs.
NOCC=$WORK/nocc-bin
mkdir -p "$NOCC"
for d in /usr/bin /bin; do
  # One ln for all (a process per tool costs a minute on a small VM).
  ls "$d" | grep -v -E '^(cc|c89.*|c99.*|gcc.*|clang.*|tcc|cpp.*|.*-gcc.*|.*-cc|.*-g\+\+.*|g\+\+.*|c\+\+.*)$' |
    while read -r n; do [ -e "$NOCC/$n" ] || printf '%s\n' "$d/$n"; done | xargs -d '\n' ln -s -t "$NOCC" 2>/dev/null
done
CCLOG=$WORK/cc-called.log
for n in cc gcc; do
  printf '#!/bin/sh\necho "$0 $*" >> %s\nexit 1\n' "$CCLOG" > "$NOCC/$n"
  chmod 755 "$NOCC/$n"
done
nocc_env=(env "PATH=$NOCC" OP2_JIT=off)

# 1. Airfoil from a pack.
KD=$WORK/kernels
cp -r examples-c/airfoil/kernels "$KD"
ITERS=5
OP2_CACHE_DIR=$WORK/cache-gen OP2_GENERATE=$WORK/gen-airfoil \
  "$AIRFOIL" --mesh "$MESH" --iters $ITERS --kernel-dir "$KD" --rms-log "$WORK/rms-jit" >/dev/null ||
  fail "airfoil with OP2_GENERATE"
"$PACK" "$WORK/gen-airfoil" -o "$WORK/airfoil.op2pack" >"$WORK/pack.log" 2>&1 || fail "op2-pack: $(cat "$WORK/pack.log")"
grep -q "^op2-pack: 5 loops into" "$WORK/pack.log" || fail "op2-pack did not pack Airfoil's 5 loops: $(cat "$WORK/pack.log")"
"$PACK" --list "$WORK/airfoil.op2pack" | grep -q "loop 'res_calc' kernel 'res_calc'" || fail "op2-pack --list lacks res_calc"
for b in $BACKENDS; do
  rm -rf "$WORK/cache-$b"
  # Threads and opencl are deterministic run to run (fixed colouring, ordered partials), so
  # the pack's code must give each backend's compiled results exactly.
  OP2_CACHE_DIR=$WORK/cache-gen "$AIRFOIL" --mesh "$MESH" --iters $ITERS --kernel-dir "$KD" \
    --rms-log "$WORK/rms-jit-$b" OP2_BACKEND="$b" >/dev/null 2>&1 || fail "airfoil on $b"
  if ! "${nocc_env[@]}" OP2_CACHE_DIR="$WORK/cache-$b" OP2_LOOP_PACK="$WORK/airfoil.op2pack" \
      "$AIRFOIL" --mesh "$MESH" --iters $ITERS --kernel-dir "$KD" --rms-log "$WORK/rms-pack-$b" \
      OP2_BACKEND="$b" >"$WORK/run-$b.log" 2>&1; then
    fail "airfoil from the pack on $b: $(tail -n 3 "$WORK/run-$b.log")"
  elif ! cmp -s "$WORK/rms-jit-$b" "$WORK/rms-pack-$b"; then
    fail "airfoil from the pack on $b: rms history differs from the compiled run"
  fi
done

# 1b. Airfoil with one loop chain per iteration (--chain): the fused units of its loops
# (save_soln+adt_calc, update+adt_calc) are generated and packed like loops, and run from the
# pack without a compiler, with the compiled run's rms history.
OP2_CACHE_DIR=$WORK/cache-gen OP2_GENERATE=$WORK/gen-chain OP2_BACKEND=seq OP2_FUSE=1 \
  "$AIRFOIL" --mesh "$MESH" --iters $ITERS --kernel-dir "$KD" --chain --rms-log "$WORK/rms-chain-jit" >/dev/null ||
  fail "airfoil --chain with OP2_GENERATE"
"$PACK" "$WORK/gen-chain" -o "$WORK/chain.op2pack" >"$WORK/pack-chain.log" 2>&1 || fail "op2-pack (chain): $(cat "$WORK/pack-chain.log")"
"$PACK" --list "$WORK/chain.op2pack" | grep -q "loop 'save_soln+adt_calc'" || fail "op2-pack --list lacks the fused save_soln+adt_calc"
if ! "${nocc_env[@]}" OP2_CACHE_DIR="$WORK/cache-chain" OP2_LOOP_PACK="$WORK/chain.op2pack" OP2_BACKEND=seq OP2_FUSE=1 \
    "$AIRFOIL" --mesh "$MESH" --iters $ITERS --kernel-dir "$KD" --chain --rms-log "$WORK/rms-chain-pack" \
    >"$WORK/run-chain.log" 2>&1; then
  fail "airfoil --chain from the pack: $(tail -n 3 "$WORK/run-chain.log")"
elif ! cmp -s "$WORK/rms-chain-jit" "$WORK/rms-chain-pack"; then
  fail "airfoil --chain from the pack: rms history differs from the compiled run"
elif ! grep -q "save_soln+adt_calc res_calc bres_calc update+adt_calc" "$WORK/run-chain.log"; then
  fail "airfoil --chain from the pack did not run the fused units: $(grep 'chain:' "$WORK/run-chain.log")"
fi

# 2. An edited kernel: refused without the JIT, compiled with it.
echo "/* edited */" >> "$KD/res_calc.c"
out=$("${nocc_env[@]}" OP2_CACHE_DIR="$WORK/cache-edit" OP2_LOOP_PACK="$WORK/airfoil.op2pack" \
  "$AIRFOIL" --mesh "$MESH" --iters 1 --kernel-dir "$KD" 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "an edited kernel ran from the pack"
case $out in
  *"op2 error [501]: op_par_loop 'res_calc' (kernel 'res_calc'): not compiled: OP2_JIT=off and the loop pack"*"has a loop 'res_calc' compiled from other code"*) ;;
  *) fail "edited kernel: unexpected message: $out" ;;
esac
OP2_CACHE_DIR=$WORK/cache-edit OP2_LOOP_PACK=$WORK/airfoil.op2pack \
  "$AIRFOIL" --mesh "$MESH" --iters $ITERS --kernel-dir "$KD" --rms-log "$WORK/rms-edit" >/dev/null 2>&1 ||
  fail "an edited kernel with the JIT on did not compile and run"
cmp -s "$WORK/rms-jit" "$WORK/rms-edit" || fail "edited kernel (a comment) changed the results"

# 3. Packs refused whole at op_init.
refused() { # what pack expected-substring
  local out
  out=$("${nocc_env[@]}" OP2_CACHE_DIR="$WORK/cache-x" OP2_LOOP_PACK="$2" \
    "$AIRFOIL" --mesh "$MESH" --iters 1 2>&1)
  if [ $? -eq 0 ]; then
    fail "$1: accepted"
  else
    case $out in *"$3"*) ;; *) fail "$1: message lacks '$3': $out" ;; esac
  fi
}
cp "$WORK/airfoil.op2pack" "$WORK/bad.op2pack"
printf 'X' | dd of="$WORK/bad.op2pack" bs=1 seek=4000 conv=notrunc status=none
refused "a modified pack" "$WORK/bad.op2pack" "op2 error [502]: OP2_LOOP_PACK: the loop pack '$WORK/bad.op2pack' is refused: its checksum does not match"
cp "$WORK/airfoil.op2pack" "$WORK/open.op2pack"
chmod 666 "$WORK/open.op2pack"
refused "a pack writable by others" "$WORK/open.op2pack" "is writable by group or others (mode 666)"
refused "a missing pack" "$WORK/none.op2pack" "op2 error [602]: OP2_LOOP_PACK: cannot open the loop pack"
head -c 100 "$WORK/airfoil.op2pack" > "$WORK/short.op2pack"
refused "a truncated pack" "$WORK/short.op2pack" "checksum does not match"
refused "not a pack" "$MESH" "it is not an op2 loop pack"

# 4. op2-pack on a kernel that does not compile.
cp -r "$WORK/gen-airfoil" "$WORK/gen-broken"
broken=$(ls "$WORK"/gen-broken/update-*.c)
echo "#error deliberately broken" >> "$broken"
grep -q "deliberately broken" "$broken" || fail "could not break $broken"
if "$PACK" "$WORK/gen-broken" -o "$WORK/broken.op2pack" >"$WORK/broken.log" 2>&1; then
  fail "op2-pack accepted a loop that does not compile"
fi
grep -q "1 of 5 loops do not compile; no pack written" "$WORK/broken.log" || fail "op2-pack: $(cat "$WORK/broken.log")"
grep -q "loop 'update' (kernel 'update'" "$WORK/broken.log" || fail "op2-pack does not name the broken loop"
[ ! -e "$WORK/broken.op2pack" ] || fail "op2-pack wrote a pack despite a broken loop"
"$PACK" "$WORK/gen-broken" -o "$WORK/broken.op2pack" --skip-broken >"$WORK/broken.log" 2>&1 ||
  fail "op2-pack --skip-broken: $(cat "$WORK/broken.log")"
grep -q "^op2-pack: 4 loops into" "$WORK/broken.log" || fail "--skip-broken: $(cat "$WORK/broken.log")"

# 5. The C suite from a pack. Left out, because their subject is the compiler or the cache:
#    t240/t245/t611 compile errors and their messages, t348 compiler warnings, t250/t300/t320/
#    t321/t325/t702 disk cache entries and notes, t630 "compiled"/"disk cache hit" diagnostics,
#    t322/t610 loops whose names or kernel files live in fresh temporary paths (new code each
#    run), t374 and t380 their own OP2_GENERATE directories, t971 and t972 Fortran kernel files
#    (gfortran compiles them; packs hold no Fortran objects yet).
JIT_TESTS="t240 t245 t250 t300 t320 t321 t322 t325 t348 t374 t380 t610 t611 t630 t702 t971 t972"
tests=""
for f in tests/c/t*.c; do
  n=$(basename "$f" .c)
  case " $JIT_TESTS " in *" ${n%%-*} "*) continue ;; esac
  tests="$tests $n"
done
CB=$(for b in $BACKENDS; do case $b in seq | threads | check) printf '%s ' "$b" ;; esac; done)
TESTS="$tests" TEST_OUT=$WORK/c-gen OP2_CACHE_DIR=$WORK/cache-cgen OP2_GENERATE=$WORK/gen-c \
  bash tests/c/run.sh $CB >"$WORK/c-gen.log" 2>&1 || fail "C suite with OP2_GENERATE: $(tail -n 5 "$WORK/c-gen.log")"
"$PACK" "$WORK/gen-c" -o "$WORK/c.op2pack" >"$WORK/c-pack.log" 2>&1 || fail "op2-pack of the C suite: $(tail -n 5 "$WORK/c-pack.log")"
TESTS="$tests" TEST_OUT=$WORK/c-pack OP2_CACHE_DIR=$WORK/cache-cpack \
  TEST_RUN_ENV="PATH=$NOCC OP2_JIT=off OP2_LOOP_PACK=$WORK/c.op2pack" \
  bash tests/c/run.sh $CB >"$WORK/c-run.log" 2>&1 || fail "C suite from the pack: $(grep FAIL "$WORK/c-run.log" | head -n 5)"
echo "test-pack: C suite from a pack without a compiler: $(tail -n 1 "$WORK/c-run.log") ($CB)"

# 6. CUDA code in packs.
if [ -n "$NVRTC_LIBDIR" ]; then
  OP2_CACHE_DIR=$WORK/cache-gen OP2_GENERATE=$WORK/gen-cuda OP2_GENERATE_TARGETS=host,cuda \
    "$AIRFOIL" --mesh "$MESH" --iters 2 >/dev/null || fail "airfoil with OP2_GENERATE_TARGETS=host,cuda"
  ncuda=$(grep -c '"target": "cuda"' "$WORK/gen-cuda/manifest.jsonl")
  [ "$ncuda" -ge 5 ] || fail "only $ncuda cuda entries generated for Airfoil"
  LD_LIBRARY_PATH=$NVRTC_LIBDIR OP2_CUDA_ARCH=sm_80,sm_90 "$PACK" "$WORK/gen-cuda" -o "$WORK/cuda.op2pack" \
    >"$WORK/cuda-pack.log" 2>&1 || fail "op2-pack with CUDA code: $(tail -n 5 "$WORK/cuda-pack.log")"
  "$PACK" --list "$WORK/cuda.op2pack" >"$WORK/cuda-list.log" 2>&1 || fail "op2-pack --list: $(cat "$WORK/cuda-list.log")"
  for a in sm_80 sm_90; do
    n=$(grep -c "^  cuda-$a .*(ELF, " "$WORK/cuda-list.log")
    [ "$n" -eq "$ncuda" ] || fail "$n CUBINs for $a in the pack, want $ncuda"
  done
  grep -q "^  host .*loop 'res_calc'" "$WORK/cuda-list.log" || fail "the host code is missing beside the CUDA code"
  if env -u LD_LIBRARY_PATH "$PACK" "$WORK/gen-cuda" -o "$WORK/cuda2.op2pack" >"$WORK/cuda2.log" 2>&1; then
    fail "op2-pack packed CUDA code without NVRTC"
  fi
  grep -q "CUDA code needs NVRTC" "$WORK/cuda2.log" || fail "op2-pack without NVRTC: $(cat "$WORK/cuda2.log")"
  echo "test-pack: $ncuda CUDA variants of Airfoil's loops packed for sm_80 and sm_90"
fi

if [ -s "$CCLOG" ]; then
  fail "the C compiler was called: $(head -n 3 "$CCLOG")"
fi
if [ $fails -ne 0 ]; then
  echo "test-pack: $fails failures"
  exit 1
fi
echo "test-pack: passed"
