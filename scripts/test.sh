#!/usr/bin/env bash
# The whole test suite: installs what it needs, then builds and runs every suite over every
# backend this build can run here. Usage (as root on a fresh Debian machine): bash scripts/test.sh
# Every suite runs even when an earlier one failed; the last line is the verdict, naming each
# suite that passed and each that failed. Exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
make lib
backends=$(bash scripts/backends.sh)
echo "test.sh: backends under test: $backends"
suites=$(make -s list-suites)
passed=()
failed=()
start=$SECONDS
for s in $suites; do
  t0=$SECONDS
  if make "$s" TEST_BACKENDS="$backends"; then
    passed+=("$s($((SECONDS - t0))s)")
  else
    failed+=("$s")
    echo "test.sh: suite $s FAILED"
  fi
done
echo "test.sh: backends $backends; $((SECONDS - start)) s"
echo "test.sh: passed: ${passed[*]:-none}"
echo "test.sh: failed: ${failed[*]:-none}"
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
