#!/usr/bin/env bash
# build-mpi.sh KIT LIBDIR DEBS: adds the MPI part to a GPU kit that build.sh has made (run by
# `make gpu-kit`, mk/gpukit.mk): what the mpi-cuda step (step-mpi.sh) needs on a GPU machine
# that may have no MPI at all.
#
#   KIT     the kit build.sh made, e.g. build/gpu-kit
#   LIBDIR  cargo's release folder of the MPI build of the library (libop2.so linked against
#           libmpi.so.40), built with --no-default-features --features mpi
#   DEBS    a folder for Debian's packages (kept between builds)
#
# Adds
#   lib-mpi/libop2.so   the MPI library (the same program runs on it: run.sh puts it first on
#                       LD_LIBRARY_PATH for the MPI step only)
#   mpi/                Debian's OpenMPI run time (mpiexec, orted, ompi_info, libmpi and its
#                       libraries, PMIx, hwloc, libevent, the MCA components a one-node job
#                       uses, the help texts) and PT-Scotch's ParMETIS interface, unpacked with
#                       `dpkg -x` from the packages `apt-get download` fetches (the versions
#                       installed here, which mpicc compiled against; without a network, the
#                       same packages' installed files, `dpkg -L`). step-mpi.sh points
#                       OPAL_PREFIX, PMIX_PREFIX, LD_LIBRARY_PATH and PATH into it.
#   mpi/compat/         arc4random for Debian 12's libevent on a glibc before 2.36 (below)
#   bin/airfoil-mpi     Airfoil reporting op_dat_transfers and op_diagnostic_output (airfoil_mpi.c)
#   tests/mpi/bin/      the MPI C tests of tests/mpi/list.txt, compiled with mpicc
#   step-mpi.sh         the step, sourced by run.sh
# and a line "mpi: ..." in kit-info.txt with the glibc the MPI part needs (2.34, as the kit's
# library: libevent_core's arc4random, glibc 2.36's, is made optional and provided by
# mpi/compat/ on an older glibc). Fails when a carried file needs a library that is neither
# carried nor glibc's and libgcc_s, or when the kit is over KIT_MAX_MIB (48).
#
# Environment: MPICC (mpicc), KIT_MAX_MIB.
set -eu
kit=$1
libdir=$2
debs=$3
MPICC=${MPICC:-mpicc}
max_mib=${KIT_MAX_MIB:-48}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
arch=x86_64-linux-gnu

[ -f "$kit/kit-info.txt" ] || { echo "gpu-kit-mpi: $kit is not a kit (run build.sh first)" >&2; exit 1; }
[ -f "$libdir/libop2.so" ] || { echo "gpu-kit-mpi: $libdir/libop2.so is missing (cargo build --features mpi first)" >&2; exit 1; }
readelf -d "$libdir/libop2.so" | grep -q 'NEEDED.*\[libmpi\.so\.40\]' ||
  { echo "gpu-kit-mpi: $libdir/libop2.so is not linked against libmpi.so.40 (built without --features mpi?)" >&2; exit 1; }

# The run time of OpenMPI 4.1 as Debian 12 packages it, what a minimal machine lacks of it
# (PMIx's libmunge, hwloc's libudev, zlib), and PT-Scotch's ParMETIS interface (with bzip2 and
# xz), which op_partition's PARMETIS and PTSCOTCH load at run time (t800 uses both). Left out,
# with the MCA components that need them (see below): UCX, libfabric, PSM/PSM2, verbs, netlink,
# OpenSHMEM, MPI-IO (ompio), monitoring, Java, Fortran and C++ bindings: a one-node job runs on
# the self and vader (shared memory) BTLs with pml ob1.
pkgs="openmpi-bin libopenmpi3 openmpi-common libpmix2 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libmunge2 libudev1 zlib1g libptscotch-7.0 libbz2-1.0 liblzma5"
tree=$kit/.mpi-tree
rm -rf "$tree"
mkdir -p "$tree" "$debs"
debs=$(cd "$debs" && pwd)
how=
for p in $pkgs; do
  v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null) ||
    { echo "gpu-kit-mpi: package $p is not installed here (scripts/setup.sh installs OpenMPI and PT-Scotch)" >&2; exit 1; }
  deb=$(ls "$debs/${p}_"*.deb 2>/dev/null | while read -r f; do
    [ "$(dpkg-deb -f "$f" Version)" = "$v" ] && echo "$f"; done | head -n 1)
  if [ -z "$deb" ]; then
    (cd "$debs" && apt-get download "$p=$v" > /dev/null 2>&1) || true
    deb=$(ls "$debs/${p}_"*.deb 2>/dev/null | while read -r f; do
      [ "$(dpkg-deb -f "$f" Version)" = "$v" ] && echo "$f"; done | head -n 1)
  fi
  if [ -n "$deb" ]; then
    dpkg -x "$deb" "$tree"
    how="$how $p $v (deb);"
  else
    # no network: the installed package's files, the same bytes
    dpkg -L "$p" | while read -r f; do
      [ -f "$f" ] || [ -L "$f" ] || continue
      mkdir -p "$tree$(dirname "$f")"
      cp -a "$f" "$tree$f"
    done
    how="$how $p $v (installed files);"
  fi
done
# Debian 12 puts zlib, bzip2 and xz in /lib, the rest in /usr/lib: one folder
if [ -d "$tree/lib/$arch" ]; then
  mkdir -p "$tree/usr/lib/$arch"
  cp -a "$tree/lib/$arch"/* "$tree/usr/lib/$arch/"
fi

# What the kit keeps of that tree: mpi/usr (OPAL_PREFIX) and mpi/etc/openmpi (OPAL_SYSCONFDIR).
m=$kit/mpi
rm -rf "$m"
mkdir -p "$m/usr/bin" "$m/usr/lib/$arch/openmpi/lib/openmpi3" "$m/usr/share" "$m/etc"
for b in orterun orted ompi_info; do cp -a "$tree/usr/bin/$b" "$m/usr/bin/"; done
ln -s orterun "$m/usr/bin/mpiexec"
ln -s orterun "$m/usr/bin/mpirun"
L=$tree/usr/lib/$arch
for l in libmpi.so.40 libopen-rte.so.40 libopen-pal.so.40 libpmix.so.2 libhwloc.so.15 libevent_core-2.1.so.7 \
  libevent_pthreads-2.1.so.7 libmunge.so.2 libudev.so.1 libz.so.1 libbz2.so.1.0 liblzma.so.5 \
  libptscotchparmetisv3-7.0.so libptscotch-7.0.so libptscotcherr-7.0.so; do
  [ -e "$L/$l" ] || { echo "gpu-kit-mpi: $l is not in the packages" >&2; exit 1; }
  cp -L "$L/$l" "$m/usr/lib/$arch/$l"
done
# PMIx: its prefix is /usr/lib/x86_64-linux-gnu/pmix2 (plugins in lib/pmix, help in share/pmix)
mkdir -p "$m/usr/lib/$arch/pmix2/lib"
cp -a "$L/pmix2/lib/pmix" "$m/usr/lib/$arch/pmix2/lib/"
cp -a "$L/pmix2/share" "$m/usr/lib/$arch/pmix2/"
# The MCA components, less those that need a library the kit does not carry.
ncomp=0
for c in "$L/openmpi/lib/openmpi3"/mca_*.so; do
  needs=$(readelf -d "$c" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  keep=1
  for n in $needs; do
    case $n in
      libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | ld-linux-x86-64.so.2 | libmpi.so.40 | libopen-rte.so.40 | \
        libopen-pal.so.40 | libpmix.so.2 | libhwloc.so.15 | libevent_core-2.1.so.7 | libevent_pthreads-2.1.so.7 | libz.so.1) ;;
      *) keep=0 ;;
    esac
  done
  [ $keep = 1 ] || continue
  cp "$c" "$m/usr/lib/$arch/openmpi/lib/openmpi3/"
  ncomp=$((ncomp + 1))
done
mkdir -p "$m/usr/share/openmpi"
cp "$tree/usr/share/openmpi"/help-*.txt "$m/usr/share/openmpi/"
cp -a "$tree/etc/openmpi" "$m/etc/"
# Debian 12's libevent_core calls arc4random and arc4random_buf, glibc 2.36's, and nothing else
# in the part needs more than glibc 2.34 (as the kit's libop2): its need of GLIBC_2.36 is made
# weak and those two references unversioned (glibc's own where it has them), and a compat
# library provides them, which env.sh preloads on an older glibc (Ubuntu 22.04 has 2.35).
python3 "$here/elf_weak_version.py" "$m/usr/lib/$arch/libevent_core-2.1.so.7" GLIBC_2.36 arc4random arc4random_buf > /dev/null
mkdir -p "$m/compat"
${CC:-cc} -O2 -std=c99 -Wall -Wextra -Werror -shared -fPIC -o "$m/compat/libkit-arc4random.so" "$here/arc4random.c"
strip --strip-unneeded "$m/usr/bin/orterun" "$m/usr/bin/orted" "$m/usr/bin/ompi_info" "$m/usr/lib/$arch"/*.so* \
  "$m/usr/lib/$arch/openmpi/lib/openmpi3"/*.so "$m/usr/lib/$arch/pmix2/lib/pmix"/*.so 2>/dev/null || true
rm -rf "$tree"

mkdir -p "$kit/lib-mpi"
strip -o "$kit/lib-mpi/libop2.so" "$libdir/libop2.so"

# Airfoil with a report of op_dat_transfers and op_diagnostic_output (airfoil_mpi.c), built as
# build.sh builds the kit's airfoil, against the MPI library (the program needs no MPI itself)
cflags="-O2 -ffp-contract=off -fno-math-errno -std=c99 -D_POSIX_C_SOURCE=200809L -Wall"
gen=$kit/.gen-mpi
mkdir -p "$gen"
bash "$here/kernels-header.sh" "$root" "$gen/airfoil_kernels.h"
# shellcheck disable=SC2086 # cflags is a list of flags
${CC:-cc} $cflags -I"$root/include" -I"$gen" -I"$root/examples-c/airfoil" -o "$kit/bin/airfoil-mpi" \
  "$here/airfoil_mpi.c" -L"$kit/lib-mpi" -lop2 -Wl,-rpath,'$ORIGIN/../lib-mpi' -lm
strip "$kit/bin/airfoil-mpi"
rm -rf "$gen"

# The MPI C tests the step runs: those about device halos and exchanges (t830, t835: exact
# op_dat_transfers counts, the CUDA-aware path), loops over every partitioner (t800),
# grouped exchanges (t805) and loop chains with exchanges and reductions (t880, t881).
# Compiled as tests/mpi/run.sh compiles them (warnings are errors).
mkdir -p "$kit/tests/mpi/bin"
printf '%s\n' t800-mpi-loops t805-mpi-dirty t830-mpi-device t835-mpi-device-halo t880-mpi-chain \
  t881-mpi-chain-reductions > "$kit/tests/mpi/list.txt"
while read -r t; do
  $MPICC -std=c99 -Wall -Wextra -Werror -O1 -I"$root/include" -I"$root/tests/c" -I"$root/tests/mpi" \
    "$root/tests/mpi/$t.c" -o "$kit/tests/mpi/bin/$t" -L"$kit/lib-mpi" -lop2 -Wl,-rpath,'$ORIGIN/../../../lib-mpi' -lm
  strip "$kit/tests/mpi/bin/$t"
done < "$kit/tests/mpi/list.txt"
cp "$here/step-mpi.sh" "$kit/step-mpi.sh"
cp "$here/mpi-env.sh" "$m/env.sh"

# Every file carried needs only glibc, libgcc_s and what the kit carries.
carried=" $(cd "$m/usr/lib/$arch" && ls | tr '\n' ' ') libop2.so "
bad=
for f in "$kit/lib-mpi/libop2.so" "$kit/bin/airfoil-mpi" "$kit"/tests/mpi/bin/* "$m/usr/bin/orterun" "$m/usr/bin/orted" "$m/usr/bin/ompi_info" \
  "$m/usr/lib/$arch"/*.so* "$m/usr/lib/$arch/openmpi/lib/openmpi3"/*.so "$m/usr/lib/$arch/pmix2/lib/pmix"/*.so "$m/compat"/*.so; do
  for n in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case $n in
      libc.so.6 | libm.so.6 | libgcc_s.so.1 | ld-linux-x86-64.so.2 | libpthread.so.0 | libdl.so.2) ;;
      *) case $carried in *" $n "*) ;; *) bad="$bad $(basename "$f"):$n" ;; esac ;;
    esac
  done
done
[ -z "$bad" ] || { echo "gpu-kit-mpi: files need libraries the kit does not carry:$bad" >&2; exit 1; }
glibc=$(find "$m" "$kit/lib-mpi" "$kit/tests/mpi/bin" "$kit/bin/airfoil-mpi" -type f \( -name '*.so*' -o -perm -u+x \) -exec objdump -T {} + 2>/dev/null |
  grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t . -k 1,1n -k 2,2n -k 3,3n -u | tail -n 1)
sed -i '/^mpi[: ]/d' "$kit/kit-info.txt"
ompi=$(dpkg-query -W -f='${Version}' libopenmpi3)
# Whether the carried OpenMPI was built with CUDA support, from its own ompi_info (relocated as
# step-mpi.sh relocates it, which this also tries out)
cuda=$(KIT=$(cd "$kit" && pwd) && . "$m/env.sh" && ompi_info --parsable --all 2>&1 |
  sed -n 's/^mca:opal:base:param:opal_built_with_cuda_support:value://p')
case $cuda in
  true) cuda="CUDA-aware: built with CUDA support" ;;
  false) cuda="not CUDA-aware: built without CUDA support" ;;
  *) echo "gpu-kit-mpi: the carried ompi_info does not run or does not say whether it has CUDA support" >&2; exit 1 ;;
esac
mkib=$(du -sk "$m" "$kit/lib-mpi" "$kit/tests/mpi" | awk '{ s += $1 } END { print s }')
echo "mpi: Debian's OpenMPI $ompi ($cuda), $ncomp MCA components; lib-mpi/libop2.so (--features mpi); $(wc -l < "$kit/tests/mpi/list.txt") MPI C tests; requires glibc $glibc; $((mkib / 1024)) MiB ($mkib KiB)" >> "$kit/kit-info.txt"
echo "mpi packages:$how" >> "$kit/kit-info.txt"
kib=$(du -sk "$kit" | cut -f 1)
sed -i "s/^size: .*/size: $((kib / 1024)) MiB ($kib KiB)/" "$kit/kit-info.txt"
if [ "$kib" -gt $((max_mib * 1024)) ]; then
  echo "gpu-kit-mpi: the kit is $kib KiB with its MPI part, over the $max_mib MiB it may be" >&2
  exit 1
fi
grep -E '^(size|mpi):' "$kit/kit-info.txt"
