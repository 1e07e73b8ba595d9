/* The GPU kit's compat library (mpi/compat/libkit-arc4random.so, built by build-mpi.sh):
 * arc4random and arc4random_buf, which Debian 12's libevent_core calls and glibc has only from
 * 2.36 on, from getrandom (glibc 2.25). mpi/env.sh preloads it on an older glibc, where
 * build-mpi.sh has made libevent_core's references to them unversioned and its need of
 * GLIBC_2.36 weak (elf_weak_version.py); on 2.36 and newer glibc's own are used. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

void arc4random_buf(void *buf, size_t n)
{
  unsigned char *p = (unsigned char *)buf;
  while (n > 0) {
    ssize_t r = getrandom(p, n, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      abort();
    }
    p += r;
    n -= (size_t)r;
  }
}

uint32_t arc4random(void)
{
  uint32_t v;
  arc4random_buf(&v, sizeof v);
  return v;
}
