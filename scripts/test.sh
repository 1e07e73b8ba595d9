#!/usr/bin/env bash
# The whole test suite: installs what it needs, then builds and runs every suite over every
# backend this build can run here. Usage (as root on a fresh Debian machine): bash scripts/test.sh
# Every suite runs even when an earlier one failed; the last line is the verdict, naming each
# suite that passed and each that failed, after the failure lines of each failed suite (so that
# the tail of the output says what failed). Each suite's output is also kept in
# build/test-logs/SUITE.log. Exits non-zero if any failed.
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
mkdir -p build/test-logs
for s in $suites; do
  t0=$SECONDS
  if make "$s" TEST_BACKENDS="$backends" 2>&1 | tee "build/test-logs/$s.log"; then
    passed+=("$s($((SECONDS - t0))s)")
  else
    failed+=("$s")
    echo "test.sh: suite $s FAILED"
  fi
done
for s in "${failed[@]}"; do
  echo "test.sh: what $s printed on failing (build/test-logs/$s.log):"
  grep -E 'FAIL|[Ee]rror|panicked|failed|mismatch|differ' "build/test-logs/$s.log" | tail -n 25 | sed 's/^/  /' || true
done
echo "test.sh: backends $backends; $((SECONDS - start)) s"
echo "test.sh: passed: ${passed[*]:-none}"
echo "test.sh: failed: ${failed[*]:-none}"
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
