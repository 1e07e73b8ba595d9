#!/bin/sh
# hybrid.sh BIN CMP_RMS WORKDIR MESH ITERS
#
# MPI + threads (issue 25, point 7): every process runs the threads backend. One process on seq
# is the reference; then, launched as `mpiexec -n P --bind-to none` with OP2_NUM_THREADS=T,
#   -n 2 x 1 thread, -n 1 x 2 threads, -n 2 x 2 threads (4 threads on this 2-core machine:
#   oversubscribed), and -n 3 x 2 threads with RCB,
# must match the reference within 1e-12 relative at every iteration (cmp_rms). Each run must
# also show that every process used its threads: op_timing_output ends, on threads, with the
# blocks each thread ran ("op2 threads backend: T threads, blocks run by each: ..."; under MPI
# "  process R: T threads, ..." for every process R), and every one of the T counts must be
# above 0. Fails if any comparison or check fails.
set -u
# Hang guards scale with the machine's load (tests/lib/budget.sh).
. "$(cd "$(dirname "$0")/../lib" && pwd)/budget.sh"
bin=$1
cmp=$2
dir=$3
mesh=$4
iters=$5
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
# HYBRID_REF: the rms log to compare against (default: the one-process seq run made here); set
# it to another run's log to see the comparisons fail.
ref=${HYBRID_REF:-$dir/rms-ref.log}
fails=0
if ! "$bin/airfoil" --mesh "$mesh" --iters "$iters" --rms-log "$dir/rms-ref.log" OP2_BACKEND=seq \
     > "$dir/ref.out" 2>&1; then
  echo "mpi-hybrid: FAIL: one-process reference:"; tail -n 20 "$dir/ref.out"; exit 1
fi

# Every process of the run in $1 (n processes, t threads each) reports t threads that all ran
# blocks.
threads_used() { # out n t
  awk -v n="$2" -v t="$3" '
    function check(r, line,   f, k, m) {
      # line: "T thread(s), blocks run by each: c1 ... cT (one-block loops ...)"
      m = split(line, f, " ")
      if (f[1] != t) { print "process " r " reports " f[1] " threads, not " t; bad = 1; return }
      for (k = 1; k <= m && f[k] != "each:"; k++) ;
      for (i = 1; i <= t; i++) {
        if (f[k + i] !~ /^[0-9]+$/ || f[k + i] + 0 == 0) {
          print "process " r ": thread " i - 1 " ran no blocks (" line ")"; bad = 1
        }
      }
      seen[r] = 1
    }
    n == 1 && /^op2 threads backend: / { sub(/^op2 threads backend: /, ""); check(0, $0) }
    n > 1 && /^  process [0-9]+: [0-9]+ threads?, blocks run by each:/ {
      r = $2; sub(/:$/, "", r); sub(/^  process [0-9]+: /, ""); check(r, $0)
    }
    END {
      for (r = 0; r < n; r++) if (!(r in seen)) { print "no thread report for process " r; bad = 1 }
      exit bad
    }' "$1"
}

run() { # n threads partition
  tag=threads-$1x$2-$(echo "$3" | tr -d ':')
  out="$dir/$tag.out"
  log="$dir/rms-$tag.log"
  rm -f "$log"
  if ! timeout "$(budget 300)" mpiexec -n "$1" --bind-to none "$bin/airfoil" --mesh "$mesh" --iters "$iters" \
       --rms-log "$log" --partition "$3" OP2_BACKEND=threads "OP2_NUM_THREADS=$2" > "$out" 2>&1; then
    echo "mpi-hybrid: FAIL: -n $1 x $2 threads $3:"; tail -n 20 "$out"; fails=$((fails + 1)); return
  fi
  printf 'mpi-hybrid: -n %s x %s threads %-11s ' "$1" "$2" "$3"
  "$cmp" --rel 1e-12 "$log" "$ref" || fails=$((fails + 1))
  if why=$(threads_used "$out" "$1" "$2"); then
    echo "mpi-hybrid: -n $1 x $2 threads $3: every process ran blocks on all $2 of its threads"
  else
    echo "mpi-hybrid: FAIL: -n $1 x $2 threads $3: $why (see $out)"
    fails=$((fails + 1))
  fi
}
run 2 1 METIS:KWAY
run 1 2 METIS:KWAY
run 2 2 METIS:KWAY
run 3 2 RCB
[ $fails -eq 0 ] && echo "mpi-hybrid: passed" && exit 0
echo "mpi-hybrid: $fails failed"
exit 1
