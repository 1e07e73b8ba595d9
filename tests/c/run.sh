#!/usr/bin/env bash
# Builds every tests/c/t*.c against libop2 and runs it over each backend given as an argument
# (default: seq). Prints one line per failure and ends with "N passed, N failed"; exits non-zero
# if anything failed. Run from the repository root.
#
# Environment: CC (cc), LIBDIR (target/release), INC (include), OP2_CACHE_DIR (build/cache),
# TEST_TIMEOUT (hang guard per run, 120 s on an idle machine, scaled by the load: tests/lib/budget.sh), TESTS (a space-separated subset of test names, optional),
# TEST_CFLAGS (extra flags for the test programs, e.g. sanitizers), TEST_OUT (build directory,
# build/tests/c), TEST_RUN_ENV (NAME=VALUE words set for the test runs only, not for their
# builds: e.g. a PATH without a C compiler). The JIT'd code takes its extra flags from
# OP2_CFLAGS, as in any op2 program.
set -u

cd "$(dirname "$0")/../.." || exit 2

CC=${CC:-cc}
LIBDIR=${LIBDIR:-target/release}
INC=${INC:-include}
OUT=${TEST_OUT:-build/tests/c}
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
. tests/lib/budget.sh
OP2_CACHE_DIR=${OP2_CACHE_DIR:-build/cache}
mkdir -p "$OUT" "$OP2_CACHE_DIR" || exit 2
# The cache must be absolute: the tests do not run from the directory the path is relative to.
OP2_CACHE_DIR=$(cd "$OP2_CACHE_DIR" && pwd) || exit 2
export OP2_CACHE_DIR
LIBDIR_ABS=$(cd "$LIBDIR" 2>/dev/null && pwd) || { echo "run.sh: no library directory $LIBDIR" >&2; exit 2; }

backends=("$@")
[ ${#backends[@]} -eq 0 ] && backends=(seq)

if [ -n "${TESTS:-}" ]; then
  sources=()
  for t in $TESTS; do sources+=("tests/c/${t%.c}.c"); done
else
  sources=(tests/c/t*.c)
fi

passed=0
failed=0

fail() { # test backend what detail...
  local t=$1 b=$2 what=$3
  shift 3
  failed=$((failed + 1))
  printf 'FAIL %s [%s]: %s' "$t" "$b" "$what"
  [ $# -gt 0 ] && [ -n "$*" ] && printf ' | %s' "$*"
  printf '\n'
}

for src in "${sources[@]}"; do
  name=$(basename "$src" .c)
  exe="$OUT/$name"
  log="$OUT/$name.build.log"
  # shellcheck disable=SC2086 # TEST_CFLAGS is a list of flags
  if ! $CC -std=c99 -Wall -Wextra -Werror -g ${TEST_CFLAGS:-} -I"$INC" -Itests/c "$src" -o "$exe" \
      -L"$LIBDIR" -lop2 -Wl,-rpath,"$LIBDIR_ABS" -lm >"$log" 2>&1; then
    for b in "${backends[@]}"; do
      fail "$name" "$b" "does not compile" "$(tail -n 5 "$log" | tr '\n' ' ')"
    done
    continue
  fi
  for b in "${backends[@]}"; do
    err="$OUT/$name.$b.stderr"
    # shellcheck disable=SC2086 # TEST_RUN_ENV is a list of NAME=VALUE words
    # The hang guard grows with the machine's load (tests/lib/budget.sh).
    guard=$(budget "$TEST_TIMEOUT")
    timeout "$guard" env ${TEST_RUN_ENV:-} "$exe" "$b" >"$OUT/$name.$b.stdout" 2>"$err"
    rc=$?
    if [ $rc -eq 0 ] && [ ! -s "$OUT/$name.$b.stdout" ] && [ ! -s "$err" ]; then
      passed=$((passed + 1))
    elif [ $rc -eq 0 ]; then
      fail "$name" "$b" "exit 0 but not silent" "$(cat "$OUT/$name.$b.stdout" "$err" | tail -n 5 | tr '\n' ' ')"
    elif [ $rc -eq 124 ]; then
      fail "$name" "$b" "timed out after ${guard}s (hang guard: ${TEST_TIMEOUT}s scaled by the load)" "$(tail -n 5 "$err" | tr '\n' ' ')"
    else
      fail "$name" "$b" "exit $rc" "$(tail -n 5 "$err" | tr '\n' ' ')"
    fi
  done
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
