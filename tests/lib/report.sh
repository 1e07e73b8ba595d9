# Shared by the test runners written in shell: counts outcomes, prints one line per check and
# the closing "N passed, N failed" line. Source it, then call pass/fail and, at the end, finish.
passed=0
failed=0
# pass LABEL
pass() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
# fail LABEL [LOG]: the last 40 lines of LOG, indented, when it is not empty.
fail() {
  failed=$((failed + 1))
  printf 'FAIL  %s\n' "$1"
  [ $# -lt 2 ] || [ ! -s "$2" ] || sed 's/^/      /' "$2" | tail -n 40
}
# finish: the closing line; exits non-zero if anything failed.
finish() {
  printf '%d passed, %d failed\n' "$passed" "$failed"
  [ "$failed" -eq 0 ]
  exit
}
