# step-op2common.sh: the GPU kit's op2common-cuda step (issue 34 point 3), sourced by run.sh,
# whose helpers it uses (begin, finish, skip, run_to, section, fence, airfoil_check).
#
# OP2-Common's own CUDA Airfoil (op2-common/airfoil_cuda: OP2-Common's translator output and
# CUDA library, built by build-op2common.sh from the tree `make gpu-kit OP2_COMMON_DIR=...` was
# pointed at) and op2's Airfoil on cuda, one after the other on the same GPU and OP2's 720K mesh,
# 1000 iterations each (OP2-Common's Airfoil always runs 1000):
#   - OP2-Common: its printed rms (iterations 100, 200, ..., 1000, %10.5e) against the kit's
#     reference (ref/rms-720k-1000.log at those iterations, printed the same way) and its own
#     720K check (PASSED/FAILED); its time is its profile's "Airfoil" total (the time-marching
#     loop, mesh reading and output not included), per iteration over the 1000
#   - op2: every iteration's rms within 1e-12 of ref/rms-720k-1000.log (cmp_rms); its time over
#     the same 1000 iterations (the first included, as OP2-Common's; its loops are already
#     compiled by af720k-cuda) and per iteration after the first
#   - the ratio op2 / OP2-Common of the times over the 1000 iterations; target: at most 0.8.
# PASS when both rms traces agree with the reference and the ratio is at most 0.8; INFO when they
# agree and the ratio is over 0.8; FAIL otherwise. NOT RUN (with the reason) when the kit has no
# OP2-Common Airfoil (built without OP2_COMMON_DIR), in --dry, or without cuda. Under
# KIT_SIMULATE=BACKEND it runs OP2-Common's sequential Airfoil (op2-common/airfoil_seq) and op2 on
# BACKEND: the same checks and report, with no GPU (times and ratio then say nothing of a GPU).

OC_DIR=$KIT/op2-common
OC_STEP=op2common-cuda

# op2common_rms OUTPUT: "iter rms" of the rms lines OP2-Common's Airfoil printed
op2common_rms() { sed -n 's/^ *\([0-9][0-9]*\)  *\([0-9.eE+-]*\), max err:.*/\1 \2/p' "$1"; }

op2common_step() {
  if [ ! -x "$OC_DIR/airfoil_cuda" ]; then
    skip "$OC_STEP" "the kit has no OP2-Common Airfoil (built without OP2_COMMON_DIR: make gpu-kit OP2_COMMON_DIR=<an OP2-Common tree>)"
    return
  fi
  if [ "$DRY" = 1 ]; then
    skip "$OC_STEP" "dry run (the kit has OP2-Common's CUDA Airfoil: $(head -n 1 "$OC_DIR/info.txt" 2>/dev/null | cut -c1-120))"
    return
  fi
  if [ "$CUDA_OK" != 1 ]; then
    skip "$OC_STEP" "cuda unavailable: $CUDA_WHY"
    return
  fi
  begin "$OC_STEP" || return
  local prog=$OC_DIR/airfoil_cuda who="OP2-Common cuda" sim=
  if [ -n "$SIM" ]; then
    prog=$OC_DIR/airfoil_seq
    who="OP2-Common seq"
    sim="SIMULATED (KIT_SIMULATE=$SIM: OP2-Common seq, op2 on $SIM): "
  fi
  [ -n "$UNPACK720" ] && wait "$UNPACK720" 2>/dev/null
  UNPACK720=
  if [ ! -s "$MESH720" ]; then
    gunzip -c "$KIT/meshes/new_grid.dat.gz" > "$MESH720.tmp" 2>> "$LOG" && mv "$MESH720.tmp" "$MESH720"
  fi
  # OP2-Common's Airfoil reads ./new_grid.dat and writes out_grid_seq.{dat,bin} there
  local d=$BIG/op2common
  rm -rf "$d"
  mkdir -p "$d"
  ln -s "$MESH720" "$d/new_grid.dat"
  local out=$W/op2common.out rc
  run_to "$out" 180 bash -c 'cd "$1" && exec "$2"' _ "$d" "$prog"
  rc=$?
  rm -rf "$d"
  local fails= oc_s oc_ms printed expect self
  # "Airfoil *1 total: 153.44s": 5 digits, in s, ms, us or ns
  oc_s=$(sed -n 's/^ *Airfoil \*[0-9]* total: *\([0-9.]*\) *\([mun]*s\)\b.*/\1 \2/p' "$out" | head -n 1 |
    awk '{ f = $2 == "ms" ? 1e-3 : $2 == "us" ? 1e-6 : $2 == "ns" ? 1e-9 : 1; printf "%.9g", $1 * f }')
  op2common_rms "$out" > "$W/op2common-rms.txt"
  awk '$1 % 100 == 0 && $1 <= 1000 { printf "%d %10.5e\n", $1, $2 }' "$REF/rms-720k-1000.log" | sed 's/  */ /g' > "$W/op2common-expect.txt"
  printed=$(wc -l < "$W/op2common-rms.txt")
  self=$(grep -o 'This test is considered [A-Z]*' "$out" | awk '{ print $NF }' | head -n 1)
  if [ $rc -ne 0 ]; then
    fails="$fails $who exit $rc$([ $rc -eq 124 ] && echo ' (timed out)'): $(tail -n 2 "$out" | tr '\n' ' ' | cut -c1-200);"
  elif ! cmp -s "$W/op2common-rms.txt" "$W/op2common-expect.txt"; then
    fails="$fails $who's printed rms differ from the reference ($printed lines; first difference: $(diff "$W/op2common-rms.txt" "$W/op2common-expect.txt" | grep -E '^[<>]' | head -n 2 | tr '\n' ' '));"
  elif [ -z "$oc_s" ]; then
    fails="$fails no 'Airfoil ... total: Ns' line in $who's output;"
  fi
  # over 1000 iterations: seconds in all = ms per iteration
  [ -n "$oc_s" ] && oc_ms=$(awk -v s="$oc_s" 'BEGIN { printf "%.4f", s }')

  # op2 on the same mesh, the same 1000 iterations
  local r op2_s op2_ms op2_after
  r=$(airfoil_check "$OC_STEP-op2" "$MESH720" 1000 "$REF/rms-720k-1000.log" 180 "OP2_BACKEND=$CB")
  case $r in PASS*) ;; *) fails="$fails op2: $r;" ;; esac
  op2_s=$(sed -n 's/^airfoil: 1000 iterations, \([0-9.]*\) s,.*/\1/p' "$W/af-$OC_STEP-op2.out" | head -n 1)
  op2_after=$(sed -n 's/.*then \([0-9.]*\) ms\/iter.*/\1/p' "$W/af-$OC_STEP-op2.out" | head -n 1)
  [ -n "$op2_s" ] && op2_ms=$(awk -v s="$op2_s" 'BEGIN { printf "%.4f", s }')
  local ratio=
  [ -n "${op2_ms:-}" ] && [ -n "${oc_ms:-}" ] && ratio=$(awk -v a="$op2_ms" -v b="$oc_ms" 'BEGIN { if (b > 0) printf "%.3f", a / b }')

  {
    echo "${sim}OP2's 720K mesh, 1000 iterations each, one after the other on the same device."
    echo
    echo "| program | ms per iteration (1000, first included) | ms per iteration after the first | rms against ref/rms-720k-1000.log |"
    echo "|---|---:|---:|---|"
    echo "| $who ($(basename "$prog")) | ${oc_ms:-?} | | printed at 100..1000 (%10.5e): $(cmp -s "$W/op2common-rms.txt" "$W/op2common-expect.txt" && echo "all $printed as the reference" || echo "DIFFER ($printed printed)"); its own 720K check: ${self:-none printed} |"
    echo "| op2 $CB | ${op2_ms:-?} | ${op2_after:-?} | ${r%%:*} (every iteration, 1e-12) |"
    echo
    echo "op2 / OP2-Common: ${ratio:-?} (target: at most 0.8)"
    echo
    echo "$who's output (rms lines and profile):"
    grep -v -E '^ *(p_|nodes|edges|bedges|cells|pedge|pecell|pbedge|pbecell|pcell|set |map |dat |-+$)' "$out" | grep -v '^ *$' | head -n 60 | fence
    echo "op2:"
    { echo "$r"; grep -E '^airfoil: (first|1000)' "$W/af-$OC_STEP-op2.out"; grep -A 12 '^op2 timing' "$W/af-$OC_STEP-op2.out"; } | fence
  } | section
  local note="${sim}op2 ${op2_ms:-?} ms/iter, OP2-Common ${oc_ms:-?} ms/iter (720K, 1000 iterations): op2/OP2-Common ${ratio:-?} (target <= 0.8); op2 rms within 1e-12 at every iteration, OP2-Common's printed rms as the reference at 100..1000 (its own check: ${self:-none})"
  if [ -n "$fails" ]; then
    finish FAIL "${sim}${fails# }"
  elif awk -v x="$ratio" 'BEGIN { exit !(x != "" && x <= 0.8) }'; then
    finish PASS "$note"
  else
    finish INFO "$note; target not met"
  fi
}
