# step-mpi.sh: the GPU kit's MPI steps, sourced by run.sh (tests/gpu-kit/step-mpi.sh, copied
# into the kit by build-mpi.sh with the MPI part it runs: mpi/, lib-mpi/, bin/airfoil-mpi,
# tests/mpi/).
#
#   mpi-cuda       op2 under `mpiexec -n 2` on cuda with Debian's OpenMPI carried in the kit
#                  (mpi/env.sh relocates it; the machine needs no MPI of its own), device halos
#                  staged through host memory (OP2_MPI_CUDA_AWARE=0):
#                  - Airfoil 45K, KIT_MPI_ITERS (1000) iterations, within 1e-12 of the kit's
#                    one-process reference at every iteration;
#                  - op_dat_transfers of every Airfoil dat on each process exactly what the
#                    partition implies: each dat with data uploaded once (p_res, first
#                    incremented, too), then at every exchange only the halo rows, the imported
#                    ones up and the exported ones down (p_adt at every res_calc, p_q at every
#                    one but the first: read after declaration it needs none);
#                  - the MPI C tests of tests/mpi/list.txt at -n 2 (t800 loops over every
#                    partitioner, t805 grouped exchanges, t830 device halos, t835 exact
#                    op_dat_transfers counts of halo rows and OP2_MPI_CUDA_AWARE, t880 and
#                    t881 loop chains with exchanges and reductions);
#                  - every MPI library the processes and mpiexec loaded is the kit's (LD_DEBUG);
#                  - whether the MPI library is CUDA-aware (ompi_info, and op_diagnostic_output's
#                    'CUDA-aware MPI: yes|no|unknown'): where it is, Airfoil again with
#                    OP2_MPI_CUDA_AWARE=1 (device to device: no host staging); where not, the
#                    step says the direct path was not run and why.
#                  NOT RUN, with why, where the machine's glibc is older than the MPI part
#                  needs (2.34, as the rest of the kit; below 2.36 mpi/env.sh preloads the
#                  kit's arc4random for Debian 12's libevent) or the kit has no MPI part.
#   mpi-seq-smoke  (--dry only) the same on seq, 20 iterations: the carried MPI works here.
#
# Environment: KIT_MPI_S (seconds for the step, 150), KIT_MPI_ITERS (1000).

KIT_MPI_S=${KIT_MPI_S:-150}
KIT_MPI_ITERS=${KIT_MPI_ITERS:-1000}

# mpi_why_not: prints why the MPI part cannot run on this machine (nothing when it can).
mpi_why_not() {
  if [ ! -f "$KIT/mpi/env.sh" ] || [ ! -x "$KIT/bin/airfoil-mpi" ]; then
    echo "this kit has no MPI part (tests/gpu-kit/build-mpi.sh did not run)"
    return
  fi
  local need have
  need=$(sed -n 's/^mpi: .*requires glibc \([0-9.]*\);.*/\1/p' "$KIT/kit-info.txt")
  have=$(ldd --version 2>&1 | head -n 1 | grep -o '[0-9][0-9]*\.[0-9][0-9]*$')
  if [ -z "$have" ]; then
    echo "cannot tell this machine's glibc version (ldd --version); the carried OpenMPI needs ${need:-?}"
  elif [ -n "$need" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -t . -k 1,1n -k 2,2n | head -n 1)" != "$need" ]; then
    echo "glibc $have here; the kit's MPI part (Debian 12's OpenMPI) needs glibc $need or newer"
  fi
}

# mpi_loaded FILES...: the LD_DEBUG=files logs of a job; prints the MPI libraries (OpenMPI, its
# components, PMIx, hwloc, libevent, PT-Scotch, op2) loaded from outside the kit, one per line.
mpi_loaded_outside() {
  grep -h 'calling init: ' "$@" 2>/dev/null | awk '{ print $NF }' | sort -u |
    grep -E '(libmpi|libopen-rte|libopen-pal|libpmix|pmix_mca|openmpi|mca_|libhwloc|libevent|libmunge|scotch|libop2)' |
    grep -v "^$KIT/" || true
}

# mpi_transfers_check OUT ITERS: Airfoil's airfoil-transfers lines against what the partition
# (op_partition's lines) implies at -n 2; prints one line, exit 0 when every count is exact.
mpi_transfers_check() {
  awk -v S=$((2 * $2)) '
    /op_partition .* process [0-9]+: / {
      r = $0; sub(/.* process /, "", r); r = r + 0
      n = split($0, part, ";")
      for (i = 1; i <= n; i++) {
        f = part[i]; sub(/.*process [0-9]+: /, "", f); split(f, w, " ")
        if (w[1] == "nodes" || w[1] == "bedges" || w[1] == "cells") {
          own = w[2]; ex = w[6]; nx = w[8]; gsub(/\+/, "", ex); gsub(/\+/, "", nx)
          all[r, w[1]] = own + ex + nx; halo[r, w[1]] = ex + nx
        }
      }
      np++
    }
    /^airfoil-transfers: process / {
      r = $3 + 0; seen[r] = 1
      n = split($0, part, ";")
      for (i = 1; i <= n; i++) {
        f = part[i]; sub(/^airfoil-transfers: process [0-9]+ of [0-9]+:/, "", f); split(f, w, " ")
        if (w[2] == "up") { up[r, w[1]] = w[3]; down[r, w[1]] = w[5] }
      }
    }
    END {
      if (np != 2 || !(0 in seen) || !(1 in seen)) { print "FAIL transfers: expected op_partition and airfoil-transfers lines of 2 processes"; exit 1 }
      bad = ""; msg = ""
      for (r = 0; r < 2; r++) {
        o = 1 - r
        c = all[r, "cells"]; h = halo[r, "cells"]; ho = halo[o, "cells"]
        wu["p_bound"] = 4 * all[r, "bedges"]; wd["p_bound"] = 0
        wu["p_x"] = 16 * all[r, "nodes"]; wd["p_x"] = 0
        wu["p_q"] = 32 * c + (S - 1) * 32 * h; wd["p_q"] = (S - 1) * 32 * ho
        wu["p_qold"] = 0; wd["p_qold"] = 0
        wu["p_adt"] = S * 8 * h; wd["p_adt"] = S * 8 * ho
        wu["p_res"] = 32 * c; wd["p_res"] = 0
        tu = 0; td = 0
        for (d in wu) {
          if (up[r, d] "" != wu[d] "" || down[r, d] "" != wd[d] "")
            bad = bad sprintf(" process %d %s up %s down %s, expected %d %d;", r, d, up[r, d], down[r, d], wu[d], wd[d])
          tu += up[r, d]; td += down[r, d]
        }
        msg = msg sprintf(" process %d: %d up, %d down (halo rows: %d up, %d down, %d halo cells in, %d out);", r, tu, td,
                          (S - 1) * 32 * h + S * 8 * h, (S - 1) * 32 * ho + S * 8 * ho, h, ho)
      }
      if (bad != "") { print "FAIL transfers:" bad; exit 1 }
      print "PASS transfers exact:" msg
    }' "$1"
}

# mpi_one NAME BACKEND DIR SECONDS [ENV...]: one MPI C test at -n 2 (in DIR): PASS when it exits 0
# and prints nothing, as tests/mpi/run.sh requires.
mpi_one() {
  local t=$1 b=$2 d=$3 secs=$4
  shift 4
  run_to "$d/$t.out" "$secs" env "$@" mpiexec -n 2 "$KIT/tests/mpi/bin/$t" "$b"
  local rc=$?
  if [ $rc -eq 0 ] && [ ! -s "$d/$t.out" ]; then
    echo "PASS $t"
  elif [ $rc -eq 0 ]; then
    echo "FAIL $t: exit 0 but not silent: $(tail -n 3 "$d/$t.out" | tr '\n' ' ' | cut -c1-300)"
  elif [ $rc -eq 124 ]; then
    echo "FAIL $t: timed out after ${secs}s"
  else
    echo "FAIL $t: exit $rc: $(tail -n 3 "$d/$t.out" | tr '\n' ' ' | cut -c1-300)"
  fi
}

# mpi_run STEP BACKEND ITERS TESTS: the step's work (in a subshell: the MPI environment stays
# in it). Records the step.
mpi_run() {
  local step=$1 b=$2 iters=$3 tests=$4
  (
    d=$W/$step
    mkdir -p "$d/ld"
    cd "$d" || exit 1
    # shellcheck source=/dev/null
    . "$KIT/mpi/env.sh"
    fails=0
    notes=
    say() { echo "$*" >> "$d/summary.txt"; }
    : > "$d/summary.txt"

    # the carried OpenMPI, relocated: its prefix, and whether it was built with CUDA support
    run_to "$d/ompi_info.txt" 30 ompi_info --parsable --all
    prefix=$(sed -n 's/^path:prefix://p' "$d/ompi_info.txt")
    built=$(sed -n 's/^mca:opal:base:param:opal_built_with_cuda_support:value://p' "$d/ompi_info.txt")
    version=$(sed -n 's/^ompi:version:full://p' "$d/ompi_info.txt")
    case ${LD_PRELOAD:-} in
      *libkit-arc4random*) say "glibc ${KIT_GLIBC:-?}: the kit's arc4random preloaded for libevent (glibc before 2.36, or KIT_MPI_COMPAT=1)" ;;
      *) say "glibc ${KIT_GLIBC:-?}: libevent uses glibc's arc4random" ;;
    esac
    if [ "$prefix" = "$KIT/mpi/usr" ]; then
      say "PASS ompi_info: Open MPI ${version:-?}, prefix $prefix (relocated), built with CUDA support: ${built:-?}"
    else
      say "FAIL ompi_info: prefix '${prefix}', expected $KIT/mpi/usr: $(tail -n 2 "$d/ompi_info.txt" | tr '\n' ' ' | cut -c1-200)"
      fails=$((fails + 1))
    fi

    # Airfoil at -n 2, halos through host memory; LD_DEBUG=files logs every library loaded
    head -n "$iters" "$REF/rms-45k-1000.log" > "$d/ref.log"
    run_to "$d/airfoil.out" 120 env LD_DEBUG=files LD_DEBUG_OUTPUT="$d/ld/ld" mpiexec -n 2 "$BIN/airfoil-mpi" \
      --mesh "$MESH45" --iters "$iters" --rms-log "$d/rms.log" "OP2_BACKEND=$b" OP2_MPI_CUDA_AWARE=0
    rc=$?
    ms=$(sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$d/airfoil.out" | head -n 1)
    if [ $rc -ne 0 ]; then
      say "FAIL airfoil -n 2: exit $rc: $(grep -v '^ *[0-9]' "$d/airfoil.out" | tail -n 3 | tr '\n' ' ' | cut -c1-300)"
      fails=$((fails + 1))
    elif v=$("$BIN/cmp_rms" --rel 1e-12 "$d/rms.log" "$d/ref.log" 2>&1); then
      say "PASS airfoil 45K -n 2 on $b, $iters iterations, OP2_MPI_CUDA_AWARE=0: $v (${ms:-?} ms/iter)"
      notes="$notes Airfoil 45K -n 2, $iters iterations within 1e-12 of one process (${ms:-?} ms/iter);"
    else
      say "FAIL airfoil -n 2 on $b: $v"
      fails=$((fails + 1))
    fi
    outside=$(mpi_loaded_outside "$d"/ld/ld.*)
    nkit=$(grep -h 'calling init: ' "$d"/ld/ld.* 2>/dev/null | awk '{ print $NF }' | grep -c "^$KIT/mpi/")
    if ls "$d"/ld/ld.* > /dev/null 2>&1 && [ -z "$outside" ] && [ "$nkit" -gt 0 ]; then
      say "PASS loaded: mpiexec and both processes loaded every MPI library from the kit ($nkit loads under $KIT/mpi)"
    elif [ -n "$outside" ]; then
      say "FAIL loaded from outside the kit: $(echo "$outside" | tr '\n' ' ' | cut -c1-300)"
      fails=$((fails + 1))
    else
      say "INFO loaded: no LD_DEBUG log (the loader ignored LD_DEBUG_OUTPUT?)"
    fi
    rm -rf "$d/ld" # (large; what matters is in the summary)
    grep '^airfoil-transfers:' "$d/airfoil.out" >> "$d/summary.txt"
    aware=$(sed -n 's/.*CUDA-aware MPI: \([a-z]*\).*/\1/p' "$d/airfoil.out" | head -n 1)
    halos=$(sed -n 's/.*; device halo exchanges: //p' "$d/airfoil.out" | head -n 1)
    say "op_diagnostic_output: CUDA-aware MPI: ${aware:-not printed}${halos:+; device halo exchanges: $halos}"
    if [ $rc -eq 0 ]; then
      case $b in
        cuda | opencl)
          if r=$(mpi_transfers_check "$d/airfoil.out" "$iters"); then
            notes="$notes op_dat_transfers exact (only halo rows after the first upload);"
          else
            fails=$((fails + 1))
          fi
          say "$r"
          case $halos in
            *"staged through host memory"*) ;;
            *) say "FAIL device halos not staged through host memory with OP2_MPI_CUDA_AWARE=0: '$halos'"; fails=$((fails + 1)) ;;
          esac ;;
        *)
          if grep '^airfoil-transfers:' "$d/airfoil.out" | grep -q 'total up 0 down 0$'; then
            say "PASS transfers: none on the host backend $b"
          else
            say "FAIL transfers on the host backend $b are not 0"
            fails=$((fails + 1))
          fi ;;
      esac
    fi

    # the MPI C tests at -n 2
    pass=0
    ntest=0
    for t in $tests; do
      r=$(mpi_one "$t" "$b" "$d" 90)
      say "$r"
      ntest=$((ntest + 1))
      case $r in PASS*) pass=$((pass + 1)) ;; *) fails=$((fails + 1)) ;; esac
    done
    if [ $ntest -gt 0 ]; then
      notes="$notes MPI C tests $pass of $ntest pass ($(echo $tests));"
    elif [ "$HAVE_CC" = 0 ]; then
      say "MPI C tests not run: no C compiler (their loops are not in the kit's pack)"
      notes="$notes MPI C tests not run (no C compiler);"
    fi

    # the direct path (device buffers to MPI): only with a CUDA-aware MPI, only on cuda
    direct="not run"
    if [ "$b" = cuda ] && [ "$aware" = yes ]; then
      head -n "$iters" "$REF/rms-45k-1000.log" > "$d/ref.log"
      run_to "$d/airfoil-direct.out" 120 mpiexec -n 2 "$BIN/airfoil-mpi" --mesh "$MESH45" --iters "$iters" \
        --rms-log "$d/rms-direct.log" OP2_BACKEND=cuda OP2_MPI_CUDA_AWARE=1
      rc=$?
      ms=$(sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$d/airfoil-direct.out" | head -n 1)
      if [ $rc -eq 0 ] && v=$("$BIN/cmp_rms" --rel 1e-12 "$d/rms-direct.log" "$d/ref.log" 2>&1) &&
        grep -q 'given to MPI in device memory' "$d/airfoil-direct.out"; then
        say "PASS airfoil -n 2 OP2_MPI_CUDA_AWARE=1 (device to device): $v (${ms:-?} ms/iter)"
        grep '^airfoil-transfers:' "$d/airfoil-direct.out" >> "$d/summary.txt"
        direct="run: Airfoil within 1e-12 with OP2_MPI_CUDA_AWARE=1 (${ms:-?} ms/iter)"
      else
        say "FAIL airfoil -n 2 OP2_MPI_CUDA_AWARE=1: exit $rc: ${v:-} $(tail -n 3 "$d/airfoil-direct.out" | tr '\n' ' ' | cut -c1-300)"
        fails=$((fails + 1))
        direct="FAILED"
      fi
    elif [ "$b" != cuda ]; then
      direct="not run: needs cuda (backend $b)"
    elif [ "$built" = false ]; then
      direct="not run: the carried OpenMPI is not CUDA-aware (built without CUDA support; MPIX_Query_cuda_support: ${aware:-?}), so device buffers cannot go to it (t835 checks that op_init refuses OP2_MPI_CUDA_AWARE=1)"
    else
      direct="not run: op_diagnostic_output says CUDA-aware MPI: ${aware:-nothing}"
    fi
    say "direct path (OP2_MPI_CUDA_AWARE=1): $direct"
    notes="$notes CUDA-aware MPI: ${aware:-?}; direct path $direct"

    fence < "$d/summary.txt" | section
    if [ $fails -eq 0 ]; then finish PASS "${notes# }"; else finish FAIL "$fails check(s) failed: $(grep '^FAIL' "$d/summary.txt" | head -n 2 | tr '\n' ' ')"; fi
  )
}

# mpi_steps: run.sh's call, after the 45K cuda steps.
mpi_steps() {
  local why
  why=$(mpi_why_not)
  if [ "$DRY" = 1 ]; then
    if [ -n "$why" ]; then
      skip mpi-seq-smoke "$why"
    elif begin mpi-seq-smoke; then
      mpi_run mpi-seq-smoke seq 20 "t830-mpi-device t835-mpi-device-halo"
    fi
  fi
  if [ "$CUDA_OK" != 1 ]; then
    skip mpi-cuda "cuda unavailable: $CUDA_WHY"
  elif [ -n "$why" ]; then
    skip mpi-cuda "$why"
  elif begin mpi-cuda; then
    # the step's own time limit within the run's
    local saved=$DEADLINE
    [ $(($(now) + KIT_MPI_S)) -lt "$DEADLINE" ] && DEADLINE=$(($(now) + KIT_MPI_S))
    local tests
    tests=$(cat "$KIT/tests/mpi/list.txt")
    [ "$HAVE_CC" = 0 ] && tests=
    mpi_run mpi-cuda "$CB" "$KIT_MPI_ITERS" "$tests"
    DEADLINE=$saved
  fi
}
