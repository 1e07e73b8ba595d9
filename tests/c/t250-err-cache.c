/* An unusable JIT cache directory makes op_init fail with OP2_ERR_CACHE_DIR (world-writable;
 * under a regular file; a regular file), from the environment or from an op_init token; op2
 * stays uninitialised. A usable new directory is created and filled by the first loop. */
#include "test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/op2-t250-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", tmp);
}

static int dir_has_entries(const char *path)
{
  DIR *dir = opendir(path);
  struct dirent *e;
  int n = 0;
  if (dir == NULL) return -1;
  while ((e = readdir(dir)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(dir);
  return n;
}

/* op_init with the backend token and OP2_CACHE_DIR=path in the environment must fail. */
static void expect_cache_error(const char *file, int line, const char *prog, const char *backend,
                               const char *path)
{
  char *args[2];
  setenv("OP2_CACHE_DIR", path, 1);
  args[0] = (char *)prog;
  args[1] = (char *)backend;
  op_init(2, args, 0);
  test_check_err_(file, line, OP2_ERR_CACHE_DIR, "op_init", path, (const char *)NULL);
  CHECK(op_decl_set(1, "s") == NULL);
  test_check_err_(file, line, OP2_ERR_NOT_INITIALISED, "op_decl_set", (const char *)NULL);
}
#define EXPECT_CACHE_ERROR(path) expect_cache_error(__FILE__, __LINE__, argv[0], token, path)

int main(int argc, char **argv)
{
  char token[256], ww[300], file[300], under[300], good[300], ctok[320];
  FILE *f;

  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  CHECK(mkdtemp(tmp) != NULL);
  atexit(cleanup);
  snprintf(ww, sizeof ww, "%s/world-writable", tmp);
  snprintf(file, sizeof file, "%s/a-file", tmp);
  snprintf(under, sizeof under, "%s/a-file/cache", tmp);
  snprintf(good, sizeof good, "%s/new/cache", tmp);
  CHECK(mkdir(ww, 0700) == 0);
  CHECK(chmod(ww, 0777) == 0);
  f = fopen(file, "w");
  CHECK(f != NULL);
  fputs("not a directory\n", f);
  fclose(f);

  op_set_error_handler(OP_ERRORS_RETURN);
  EXPECT_CACHE_ERROR(ww);
  EXPECT_CACHE_ERROR(under);
  EXPECT_CACHE_ERROR(file);

  /* The token form overrides a good environment. */
  setenv("OP2_CACHE_DIR", good, 1);
  snprintf(ctok, sizeof ctok, "OP2_CACHE_DIR=%s", ww);
  test_init_tokens(argv[0], token, ctok, (const char *)NULL);
  CHECK_ERR(OP2_ERR_CACHE_DIR, "op_init", ww);
  CHECK(op_decl_set(1, "s") == NULL);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_set");

  /* A directory that does not exist yet is created; a JIT loop leaves something in it. */
  test_init_tokens(argv[0], token, (const char *)NULL);
  CHECK_OK();
  {
    op_set s = op_decl_set(3, "cells");
    op_dat d = op_decl_dat(s, 1, "int", NULL, "d");
    op_kernel k = op_decl_kernel("void one(int *d) { *d = 1; }\n", "one");
    int out[3];
    PAR_LOOP(k, "one", s, op_arg_dat(d, -1, OP_ID, 1, "int", OP_WRITE));
    CHECK_OK();
    op_fetch_data(d, out);
    CHECK_INT(out[0] + out[1] + out[2], 3);
  }
  op_exit();
  CHECK(dir_has_entries(good) > 0);
  return 0;
}
