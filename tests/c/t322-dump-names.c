/* OP2_DUMP_SOURCE: a loop name is not a path. Names such as "../x", "/abs/y", "a/b/c",
 * ".hidden" and one of 300 bytes are dumped inside the dump directory under sanitised names
 * ([A-Za-z0-9_.-], no leading dot, short); a dump that cannot be written never fails the loop:
 * it warns once on stderr. Device backends also dump each program's source (`.cl` for opencl,
 * `.cu` for cuda) under the same names. */
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[] = "/tmp/op2-t322-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", base);
}

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

/* Files in dir whose names end in ext. */
static int count_ext(const char *dir, const char *ext)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  size_t l = strlen(ext);
  if (d == NULL) return -1;
  while ((e = readdir(d)) != NULL) {
    size_t m = strlen(e->d_name);
    if (m > l && strcmp(e->d_name + m - l, ext) == 0) n++;
  }
  closedir(d);
  return n;
}

/* Runs a loop named `name` whose kernel writes k, and checks the result. */
static void run_named(const char *name, int k)
{
  char src[128];
  int out[3];
  op_set s = op_decl_set(3, "s");
  op_dat y = op_decl_dat(s, 1, "int", NULL, "y");
  snprintf(src, sizeof src, "void t322_fill(int *y) { *y = %d; }\n", k);
  op_kernel kern = op_decl_kernel(src, "t322_fill");
  PAR_LOOP(kern, name, s, op_arg_dat(y, -1, OP_ID, 1, "int", OP_WRITE));
  CHECK_OK();
  op_fetch_data(y, out);
  CHECK_INT(out[0], k);
  CHECK_INT(out[2], k);
}

int main(int argc, char **argv)
{
  char dump[200], file[600], errpath[300], longname[301], abs_[300];
  const char *names[5];
  DIR *d;
  struct dirent *e;
  char *text;
  int i, saved, fd;

  if (argc < 2) return 2;
  CHECK(mkdtemp(base) != NULL);
  atexit(cleanup);
  snprintf(dump, sizeof dump, "%s/dump", base);
  snprintf(abs_, sizeof abs_, "%s/abs/y", base);
  memset(longname, 'n', 300);
  longname[300] = '\0';
  names[0] = "../x";
  names[1] = abs_; /* absolute, in a directory that does not exist */
  names[2] = "a/b/c";
  names[3] = ".hidden";
  names[4] = longname;

  op_set_error_handler(OP_ERRORS_RETURN);
  setenv("OP2_DUMP_SOURCE", dump, 1);
  test_init(argc, argv);
  CHECK_OK();
  for (i = 0; i < 5; i++) run_named(names[i], 10 + i);
  op_exit();
  /* Only the dump directory was created next to it, and it holds one host file per loop, plus
   * one device source per loop on a device backend. */
  CHECK_INT(count_all(base), 1);
  CHECK_INT(count_ext(dump, ".c"), 5);
  if (strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0) {
    CHECK_INT(count_ext(dump, strcmp(argv[1], "cuda") == 0 ? ".cu" : ".cl"), 5);
    CHECK_INT(count_all(dump), 10);
  } else {
    CHECK_INT(count_all(dump), 5);
  }
  d = opendir(dump);
  CHECK(d != NULL);
  while ((e = readdir(d)) != NULL) {
    const char *c;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    CHECK(e->d_name[0] != '.');
    CHECK(strlen(e->d_name) <= 100);
    for (c = e->d_name; *c; c++)
      CHECK((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '_' || *c == '.' || *c == '-');
    snprintf(file, sizeof file, "%s/%s", dump, e->d_name);
    text = test_read_file(file);
    CHECK(text != NULL && strstr(text, "t322_fill") != NULL);
    /* The OpenCL source is the program op2 builds: a __kernel with the user's kernel inlined. */
    if (strlen(e->d_name) > 3 && strcmp(e->d_name + strlen(e->d_name) - 3, ".cl") == 0)
      CHECK(strstr(text, "__kernel") != NULL);
    free(text);
  }
  closedir(d);

  /* A dump directory that cannot exist (a regular file is in its place): the loops run and
   * op2 warns once on stderr. */
  snprintf(file, sizeof file, "%s/a-file", base);
  fd = open(file, O_WRONLY | O_CREAT, 0600);
  CHECK(fd >= 0);
  close(fd);
  setenv("OP2_DUMP_SOURCE", file, 1);
  snprintf(errpath, sizeof errpath, "%s/stderr", base);
  fflush(stderr);
  saved = dup(2);
  fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
  close(fd);
  test_init(argc, argv);
  CHECK_OK();
  run_named("first", 20);
  run_named("second", 21);
  op_exit();
  fflush(stderr);
  CHECK(dup2(saved, 2) == 2);
  close(saved);
  text = test_read_file(errpath);
  CHECK(text != NULL);
  {
    const char *w = strstr(text, "cannot dump generated source");
    CHECK(w != NULL);
    CHECK(strstr(w + 1, "cannot dump generated source") == NULL);
  }
  free(text);
  return 0;
}
