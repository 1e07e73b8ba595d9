# mpi/env.sh in the GPU kit (from tests/gpu-kit/mpi-env.sh), sourced with the kit's folder as
# KIT: points Debian's OpenMPI, carried in $KIT/mpi and unpacked there from its packages,
# at itself instead of /usr (OpenMPI 4.1: OPAL_PREFIX and, for what Debian configured outside
# the prefix, OPAL_SYSCONFDIR; PMIx 4: PMIX_PREFIX, PMIX_PKGLIBDIR, PMIX_PKGDATADIR), puts its
# libraries and op2's MPI library first on LD_LIBRARY_PATH and its mpiexec first on PATH. A
# one-node job: shared memory (vader) and self, pml ob1, no ssh; allowed as root and on more
# processes than cores; vader without CMA. Any OMPI_/OPAL_/PMIX_ settings from the machine's own MPI are dropped.
for v in $(env | sed -n 's/^\(\(OMPI\|OPAL\|PMIX\|ORTE\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
KIT_MPI=$KIT/mpi
export OPAL_PREFIX=$KIT_MPI/usr
export OPAL_SYSCONFDIR=$KIT_MPI/etc/openmpi
export OPAL_PKGDATADIR=$KIT_MPI/usr/share/openmpi
export OPAL_PKGLIBDIR=$KIT_MPI/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
export OPAL_LIBDIR=$KIT_MPI/usr/lib/x86_64-linux-gnu/openmpi/lib
export PMIX_PREFIX=$KIT_MPI/usr/lib/x86_64-linux-gnu/pmix2
export PMIX_PKGLIBDIR=$PMIX_PREFIX/lib/pmix
export PMIX_PKGDATADIR=$PMIX_PREFIX/share/pmix
export LD_LIBRARY_PATH=$KIT/lib-mpi:$KIT_MPI/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$KIT_MPI/usr/bin:$PATH
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_plm_rsh_agent=false
# vader's single copies (CMA) fail in containers that forbid ptrace; copy through shared memory
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# processes that wait yield (more processes than free cores in a KIT_SIMULATE run)
export OMPI_MCA_mpi_yield_when_idle=1
# hwloc: no plugins from the machine's own hwloc (another version; its OpenCL and GL plugins
# would load those drivers in every process)
export HWLOC_PLUGINS_PATH=$KIT_MPI/no-hwloc-plugins
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# glibc older than 2.36 (Ubuntu 22.04: 2.35): the arc4random Debian 12's libevent_core calls
# comes from the kit's compat library (build-mpi.sh); KIT_MPI_COMPAT=1 preloads it anyway (to
# test it on a newer glibc)
KIT_GLIBC=$(getconf GNU_LIBC_VERSION 2> /dev/null | awk '{ print $2 }')
if [ "${KIT_MPI_COMPAT:-0}" = 1 ] || awk -v v="${KIT_GLIBC:-0.0}" 'BEGIN { split(v, a, "."); exit !(a[1] < 2 || (a[1] == 2 && a[2] < 36)) }'; then
  export LD_PRELOAD=$KIT_MPI/compat/libkit-arc4random.so${LD_PRELOAD:+:$LD_PRELOAD}
fi
# PT-Scotch's ParMETIS interface, carried (op_partition's PARMETIS and PTSCOTCH)
export OP2_PARMETIS_LIB=$KIT_MPI/usr/lib/x86_64-linux-gnu/libptscotchparmetisv3-7.0.so
