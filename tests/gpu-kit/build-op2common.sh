#!/usr/bin/env bash
# build-op2common.sh OP2_COMMON_DIR DEST WORK VENV: OP2-Common's own CUDA Airfoil for the GPU kit
# (issue 34 point 3), built here from the user's OP2-Common source tree: nothing of OP2-Common
# is in this repository. Run by tests/gpu-kit/build.sh when `make gpu-kit OP2_COMMON_DIR=...`.
#
#   OP2_COMMON_DIR  an OP2-Common checkout (op2/, apps/c/airfoil/airfoil_plain/dp/, translator-v2/)
#   DEST            where the programs go (the kit's op2-common/)
#   WORK            a scratch folder (replaced): generated code, objects, build.log
#   VENV            a Python venv with OP2-Common's translator's packages (jinja2, fparser, pcpp,
#                   sympy, libclang) and NVIDIA's CUDA 13.0 compiler wheels (nvidia-cuda-nvcc,
#                   -nvvm, -crt, -runtime, -cccl, -nvrtc for nvrtc.h): mk/gpukit.mk makes it
#
# What it does (the steps of OP2-Common's makefiles for airfoil_cuda and airfoil_seq, with our
# flags):
#   1. OP2-Common's translator (translator-v2/op2-translator) on airfoil_plain/dp/airfoil.cpp,
#      targets cuda and seq, run by the venv's Python (not by op2-translator.sh, which unpacks a
#      Python bundled in the tree). Two fixes are applied from outside, in memory: the ctypes
#      result types of libclang's clang_Cursor_Evaluate / clang_EvalResult_* (the translator
#      calls them through the bindings unregistered, so a 64-bit pointer is cut to an int and
#      the translator crashes on a PIE Python), and <...> includes are left to libclang instead
#      of pcpp (pcpp keeps comments in macro bodies, which breaks op_profile.h's
#      <extern/json.hpp>: the translator's own choice for system includes it does not find).
#   2. libop2_cuda's sources (op2/src: core op_lib_core op_rt_support SafeLong, cuda
#      op_cuda_decl op_cuda_rt_support with -DOP2_CUDA, cuda/op2_cuda_rt_wrappers.cu with nvcc,
#      externlib op_profile) and the generated airfoil.cpp (g++) and cuda/op2_kernels.cu (nvcc),
#      linked into airfoil_cuda: nvcc -O3 --expt-relaxed-constexpr for sm_80 and sm_90 plus
#      compute_90 PTX, g++ -O3 -std=c++17 (no -march=native: the kit runs elsewhere), cudart
#      and libstdc++ static, so it needs only glibc (>= 2.34), libgcc_s and the NVIDIA driver.
#   3. airfoil_seq, OP2-Common's sequential Airfoil (libop2_seq's sources and airfoil.cpp as
#      written), which run.sh uses under KIT_SIMULATE, where there is no GPU.
# Both read ./new_grid.dat and run 1000 iterations (OP2-Common's niter). DEST/info.txt says what
# was built from which commit.
set -eu
oc=$(cd "$1" && pwd)
# our wrapper of OP2-Common's translator (tools/op2common_translate.py)
tools=$(cd "$(dirname "$0")/../../tools" && pwd)
dest=$2
rm -rf "$3" "$dest"
mkdir -p "$3/gen" "$3/obj" "$dest"
work=$(cd "$3" && pwd)
venv=$(cd "$4" && pwd)
app=$oc/apps/c/airfoil/airfoil_plain/dp
inc=$oc/op2/include
src=$oc/op2/src
for d in "$inc" "$src/cuda" "$app" "$oc/translator-v2/op2-translator"; do
  [ -d "$d" ] || { echo "build-op2common: OP2_COMMON_DIR=$1 has no $d (an OP2-Common checkout?)" >&2; exit 1; }
done
py=$venv/bin/python
cuda=$($py -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
nvcc=$cuda/bin/nvcc
[ -x "$nvcc" ] || { echo "build-op2common: no nvcc in $cuda (the venv lacks nvidia-cuda-nvcc)" >&2; exit 1; }

log=$work/build.log
: > "$log"
run() { echo "+ $*" >> "$log"; "$@" >> "$log" 2>&1 || { tail -n 30 "$log" >&2; echo "build-op2common: failed: $* (log: $log)" >&2; exit 1; }; }

# 1. the translator
(cd "$app" && run "$py" "$tools/op2common_translate.py" "$oc/translator-v2/op2-translator" -v -I. -I"$inc" -t cuda -t seq airfoil.cpp -o "$work/gen")
[ -f "$work/gen/cuda/op2_kernels.cu" ] && [ -f "$work/gen/airfoil.cpp" ] ||
  { tail -n 30 "$log" >&2; echo "build-op2common: the translator wrote no cuda/op2_kernels.cu (log: $log)" >&2; exit 1; }

# 2. and 3.: compiled two at a time (the objects are independent)
cxx="g++ -O3 -std=c++17 -I$inc -I$cuda/include"
nv="$nvcc -O3 -m64 --expt-relaxed-constexpr -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 -I$inc -DOP2_CUDA"
o=$work/obj
# arc4random from getrandom: the static libstdc++ refers to glibc 2.36's arc4random
# (std::random_device); with this one the program needs no glibc newer than the kit's.
printf '%s\n' '#include <stdint.h>' '#include <sys/random.h>' \
  'uint32_t arc4random(void) { uint32_t v = 0; while (getrandom(&v, sizeof v, 0) != (long)sizeof v) {} return v; }' > "$work/arc4random.c"
jobs=(
  "$cxx -c $src/core/op_lib_core.cpp -o $o/op_lib_core.o"
  "$cxx -c $src/core/op_rt_support.cpp -o $o/op_rt_support.o"
  "$cxx -c $src/core/SafeLong.cpp -o $o/SafeLong.o"
  "$cxx -c $src/externlib/op_profile.cpp -o $o/op_profile.o"
  "$cxx -DOP2_CUDA -c $src/cuda/op_cuda_decl.cpp -o $o/op_cuda_decl.o"
  "$cxx -DOP2_CUDA -c $src/cuda/op_cuda_rt_support.cpp -o $o/op_cuda_rt_support.o"
  "$nv -c $src/cuda/op2_cuda_rt_wrappers.cu -o $o/op2_cuda_rt_wrappers.o"
  "$cxx -I$app -c $work/gen/airfoil.cpp -o $o/airfoil_cuda.o"
  "$nv -I$app -c $work/gen/cuda/op2_kernels.cu -o $o/op2_kernels.o"
  "$cxx -c $src/core/op_dummy_singlenode.cpp -o $o/op_dummy_singlenode.o"
  "$cxx -c $src/sequential/op_seq.cpp -o $o/op_seq.o"
  "$cxx -I$app -c $app/airfoil.cpp -o $o/airfoil_seq.o"
  "gcc -O2 -c $work/arc4random.c -o $o/arc4random.o"
)
printf '%s\n' "${jobs[@]}" > "$work/jobs.txt"
echo "+ compiling (log of each: obj/*.log): $(wc -l < "$work/jobs.txt") files, 2 at a time" >> "$log"
if ! xargs -a "$work/jobs.txt" -d '\n' -P 2 -I '{}' sh -c 'o=$(echo "$1" | sed "s/.* -o \([^ ]*\)$/\1/"); $1 > "$o.log" 2>&1 || { echo "failed: $1"; tail -n 20 "$o.log"; exit 1; }' _ '{}' >> "$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "build-op2common: compilation failed (log: $log)" >&2
  exit 1
fi
core="$o/op_lib_core.o $o/op_rt_support.o $o/SafeLong.o $o/op_profile.o $o/arc4random.o"
# shellcheck disable=SC2086 # lists of objects
run g++ -o "$work/airfoil_cuda" $o/airfoil_cuda.o $o/op2_kernels.o $core $o/op_cuda_decl.o $o/op_cuda_rt_support.o \
  $o/op2_cuda_rt_wrappers.o -L"$cuda/lib" -lcudart_static -ldl -lpthread -lrt -static-libstdc++
# shellcheck disable=SC2086
run g++ -o "$work/airfoil_seq" $o/airfoil_seq.o $core $o/op_dummy_singlenode.o $o/op_seq.o -static-libstdc++
strip -o "$dest/airfoil_cuda" "$work/airfoil_cuda"
strip -o "$dest/airfoil_seq" "$work/airfoil_seq"

commit=$(git -C "$oc" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$oc" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo "+changes" || true)
nvv=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
{
  echo "OP2-Common commit $commit$dirty ($oc): apps/c/airfoil/airfoil_plain/dp, translator-v2 (targets cuda, seq)"
  echo "airfoil_cuda: nvcc $nvv -O3 sm_80 sm_90 compute_90, g++ $(g++ -dumpfullversion) -O3, cudart and libstdc++ static"
  echo "airfoil_seq: libop2_seq's sources, airfoil.cpp as written (for KIT_SIMULATE)"
} > "$dest/info.txt"
cat "$dest/info.txt"
