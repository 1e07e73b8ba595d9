# Hang guards that a busy machine cannot trip. Source it; `budget SECONDS` prints SECONDS scaled
# by how loaded the machine is when it is called: SECONDS * (1 + the 1-minute load average per
# core), at least SECONDS. A guard only tells a hang from a slow run (no test asserts a time),
# so it grows with the load instead of failing a correct test on a machine running other jobs
# (at load 8 on 2 cores a 120 s guard is 600 s). OP2_TEST_TIME_SCALE multiplies it further.
budget() {
  local cores
  cores=$(nproc 2>/dev/null || echo 1)
  awk -v b="$1" -v n="$cores" -v x="${OP2_TEST_TIME_SCALE:-1}" \
    '{ s = 1 + $1 / n; printf "%d\n", b * s * x + 0.5 }' /proc/loadavg 2>/dev/null || echo "$1"
}
