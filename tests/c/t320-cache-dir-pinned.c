/* The JIT cache directory is resolved and checked once, at op_init, and then pinned: a symlink
 * repointed after op_init (to a world-writable directory, or to one of another user) and a
 * chdir with a relative OP2_CACHE_DIR do not move where op2 stores and loads libraries. An
 * ancestor writable by others without the sticky bit, an ancestor of another user, and a
 * default location (no OP2_CACHE_DIR) that is a symlink make op_init fail with
 * OP2_ERR_CACHE_DIR. */
#include "test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[] = "/tmp/op2-t320-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", base);
}

/* Number of "*.so" entries in `dir` (-1 if it cannot be read). */
static int count_libs(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  if (d == NULL) return -1;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0) n++;
  }
  closedir(d);
  return n;
}

/* Number of entries other than . and .. in `dir`. */
static int count_all(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  if (d == NULL) return -1;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

/* A loop whose kernel is new (a cold key): every element becomes k. */
static void run_loop(int k)
{
  char src[128];
  int out[4];
  op_set s = op_decl_set(4, "s");
  op_dat y = op_decl_dat(s, 1, "int", NULL, "y");
  snprintf(src, sizeof src, "void t320_fill(int *y) { *y = %d; }\n", k);
  op_kernel kern = op_decl_kernel(src, "t320_fill");
  CHECK_OK();
  PAR_LOOP(kern, "t320_fill", s, op_arg_dat(y, -1, OP_ID, 1, "int", OP_WRITE));
  CHECK_OK();
  op_fetch_data(y, out);
  CHECK_INT(out[0], k);
  CHECK_INT(out[3], k);
}

static void path(char *buf, const char *rel)
{
  snprintf(buf, 512, "%s/%s", base, rel);
}

int main(int argc, char **argv)
{
  char real[512], evil[512], other[512], link_[512], rel[512], sub[512], subrel[512], ww[512],
      wwc[512], foreign[512], foreignc[512], home[512], homecache[512], homelink[512],
      target[512], cwd[512];
  const char *backend;
  int root = geteuid() == 0;

  if (argc < 2) return 2;
  CHECK(mkdtemp(base) != NULL);
  atexit(cleanup);
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  op_set_error_handler(OP_ERRORS_RETURN);

  /* A symlink repointed after op_init, to a world-writable directory and (as root) to a
   * directory of another user: op2 keeps using the directory it checked. */
  path(real, "real");
  path(evil, "evil");
  path(other, "other");
  path(link_, "link");
  CHECK(mkdir(real, 0700) == 0);
  CHECK(mkdir(evil, 0700) == 0 && chmod(evil, 0777) == 0);
  CHECK(mkdir(other, 0700) == 0);
  CHECK(symlink(real, link_) == 0);
  setenv("OP2_CACHE_DIR", link_, 1);
  backend = test_init(argc, argv);
  CHECK_OK();
  CHECK(unlink(link_) == 0 && symlink(evil, link_) == 0);
  run_loop(101);
  CHECK_INT(count_all(evil), 0);
  CHECK_INT(count_libs(real), 1);
  if (root) {
    CHECK(chown(other, 65534, 65534) == 0);
    CHECK(unlink(link_) == 0 && symlink(other, link_) == 0);
    run_loop(102);
    CHECK_INT(count_all(other), 0);
    CHECK_INT(count_libs(real), 2);
  }
  op_exit();

  /* A relative OP2_CACHE_DIR, then chdir: still the directory resolved at op_init. */
  path(rel, "rel");
  path(sub, "sub");
  path(subrel, "sub/rel");
  CHECK(mkdir(rel, 0700) == 0 && mkdir(sub, 0700) == 0);
  CHECK(mkdir(subrel, 0700) == 0 && chmod(subrel, 0777) == 0);
  CHECK(chdir(base) == 0);
  setenv("OP2_CACHE_DIR", "rel", 1);
  test_init(argc, argv);
  CHECK_OK();
  CHECK(chdir(sub) == 0);
  run_loop(103);
  CHECK_INT(count_all(subrel), 0);
  CHECK_INT(count_libs(rel), 1);
  op_exit();
  CHECK(chdir(cwd) == 0);

  /* An ancestor writable by others: refused unless it is sticky (like /tmp). */
  path(ww, "ww");
  path(wwc, "ww/cache");
  CHECK(mkdir(ww, 0700) == 0 && mkdir(wwc, 0700) == 0 && chmod(ww, 0777) == 0);
  setenv("OP2_CACHE_DIR", wwc, 1);
  test_init(argc, argv);
  CHECK_ERR(OP2_ERR_CACHE_DIR, "op_init", ww, "writable by others", "not sticky");
  CHECK(op_decl_set(1, "s") == NULL);
  CHECK(chmod(ww, 01777) == 0);
  test_init(argc, argv);
  CHECK_OK();
  run_loop(104);
  CHECK_INT(count_libs(wwc), 1);
  op_exit();

  /* An ancestor owned by another user (neither root nor us). */
  if (root) {
    path(foreign, "foreign");
    path(foreignc, "foreign/cache");
    CHECK(mkdir(foreign, 0755) == 0 && mkdir(foreignc, 0700) == 0);
    CHECK(chown(foreign, 65534, 65534) == 0);
    setenv("OP2_CACHE_DIR", foreignc, 1);
    test_init(argc, argv);
    CHECK_ERR(OP2_ERR_CACHE_DIR, "op_init", foreign, "owned by uid 65534");
  }

  /* The default location ($HOME/.cache/op2 here) may not be a symlink. */
  path(home, "home");
  path(homecache, "home/.cache");
  path(homelink, "home/.cache/op2");
  path(target, "target");
  CHECK(mkdir(home, 0700) == 0 && mkdir(homecache, 0700) == 0 && mkdir(target, 0700) == 0);
  CHECK(symlink(target, homelink) == 0);
  unsetenv("OP2_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", home, 1);
  test_init(argc, argv);
  CHECK_ERR(OP2_ERR_CACHE_DIR, "op_init", homelink, "symbolic link");
  /* A real directory there is fine. */
  CHECK(unlink(homelink) == 0 && mkdir(homelink, 0700) == 0);
  test_init(argc, argv);
  CHECK_OK();
  run_loop(105);
  CHECK_INT(count_libs(homelink), 1);
  op_exit();
  (void)backend;
  return 0;
}
