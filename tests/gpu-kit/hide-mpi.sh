#!/usr/bin/env bash
# hide-mpi.sh CMD...: runs CMD with this machine's OpenMPI hidden, for check-dry.sh to show that
# the kit's carried OpenMPI needs none of it. Run it inside a private mount namespace
# (`unshare -m hide-mpi.sh CMD...`, as root): empty folders are mounted over OpenMPI's and
# PMIx's folders (MCA components, help texts, /etc/openmpi) and /dev/null over each of their
# libraries and programs, so anything that still reaches for them fails to load.
set -eu
a=/usr/lib/x86_64-linux-gnu
for d in "$a/openmpi" "$a/pmix2" /usr/share/openmpi /etc/openmpi; do
  [ -d "$d" ] && mount -t tmpfs -o ro,size=4k none "$d"
done
for f in "$a"/libmpi.so* "$a"/libopen-rte.so* "$a"/libopen-pal.so* "$a"/libpmix.so* "$a"/libhwloc.so* \
  "$a"/libevent_core-2.1.so* "$a"/libevent_pthreads-2.1.so* "$a"/libmunge.so* "$a"/libptscotch*.so* \
  /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info; do
  [ -e "$f" ] && mount --bind /dev/null "$(readlink -f "$f")"
done
exec "$@"
