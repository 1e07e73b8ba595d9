/* OP2_SIMD=auto's verdict is kept with the compiled code: a run that decides writes it beside
 * the cache entry (<key>.simd), a later run (a new session, here in the same process) takes it
 * without timing again and op_timing_output says so; a verdict file anyone else could have
 * written (group-writable) is ignored, as cache entries are. Host backends only (device backends
 * run their own code): elsewhere the test checks nothing more than the results. */
#include "test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 100000

static char cache[] = "/tmp/op2-t702-XXXXXX";

/* One session: `calls` calls of the vectorisable loop; returns op_timing_output's text. */
static char *session(const char *prog, const char *backend, int calls)
{
  static double qv[2 * N], a[N];
  char tok_b[64], tok_c[128], *out;
  int e;
  for (e = 0; e < N; e++) qv[2 * e] = 1.0 + 0.001 * (e % 89), qv[2 * e + 1] = 0.5 - 0.002 * (e % 13);
  snprintf(tok_b, sizeof tok_b, "OP2_BACKEND=%s", backend);
  snprintf(tok_c, sizeof tok_c, "OP2_CACHE_DIR=%s", cache);
  test_init_tokens(prog, tok_b, tok_c, "OP2_SIMD=auto", (const char *)NULL);
  {
    op_set cells = op_decl_set(N, "cells");
    op_dat q = op_decl_dat(cells, 2, "double", qv, "q");
    op_dat da = op_decl_dat(cells, 1, "double", NULL, "a");
    op_kernel k = op_decl_kernel("void hyp(const double *q, double *a) { *a = sqrt(q[0] * q[0] + q[1] * q[1]) / q[0]; }\n",
                                 "hyp");
    for (e = 0; e < calls; e++)
      PAR_LOOP(k, "hyp", cells, op_arg_dat(q, -1, OP_ID, 2, "double", OP_READ),
               op_arg_dat(da, -1, OP_ID, 1, "double", OP_WRITE));
    op_fetch_data(da, a);
    for (e = 0; e < N; e++)
      if (a[e] != sqrt(qv[2 * e] * qv[2 * e] + qv[2 * e + 1] * qv[2 * e + 1]) / qv[2 * e])
        test_fail_(__FILE__, __LINE__, "element %d", e);
  }
  out = test_stdout_of(op_timing_output);
  op_exit();
  return out;
}

/* The path of the one verdict file in the cache directory, or "" if there is none. */
static void verdict_file(char *path, size_t cap)
{
  DIR *d = opendir(cache);
  struct dirent *e;
  path[0] = '\0';
  CHECK(d != NULL);
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n > 5 && strcmp(e->d_name + n - 5, ".simd") == 0 && e->d_name[0] != '.')
      snprintf(path, cap, "%s/%s", cache, e->d_name);
  }
  closedir(d);
}

int main(int argc, char **argv)
{
  char path[512], *out;
  int host;
  if (argc < 2) return 2;
  host = strcmp(argv[1], "opencl") != 0 && strcmp(argv[1], "cuda") != 0;
  CHECK(mkdtemp(cache) != NULL);

  out = session(argv[0], argv[1], 10);
  if (host) {
    CHECK(strstr(out, "  simd: hyp: ") != NULL && strstr(out, "(auto: scalar ") != NULL);
    verdict_file(path, sizeof path);
    CHECK(path[0] != '\0');
  }
  free(out);

  out = session(argv[0], argv[1], 1);
  if (host && strstr(out, "  simd: hyp: ") == NULL)
    test_fail_(__FILE__, __LINE__, "no wrapper line:\n%s", out);
  if (host && strstr(out, "(auto, measured by an earlier run: kept with the compiled code)") == NULL)
    test_fail_(__FILE__, __LINE__, "the kept verdict was not used:\n%s", out);
  free(out);

  if (host) {
    /* A verdict file others could have written is not trusted. */
    CHECK(chmod(path, 0664) == 0);
    out = session(argv[0], argv[1], 1);
    CHECK(strstr(out, "measured by an earlier run") == NULL);
    free(out);
  }
  return 0;
}
