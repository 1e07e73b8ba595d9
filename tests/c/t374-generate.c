/* Issue 10, point 5: OP2_GENERATE=DIR with OP2_GENERATE_TARGETS=host,opencl writes each new loop
 * shape's code for both targets plus manifest.json (loop, kernel, target, file, hash, argument
 * descriptors), from a run on any backend; a second session adds no duplicate entries. */
#include "test.h"
#include <unistd.h>

static int count(const char *hay, const char *needle)
{
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static void session(const char *prog, const char *backend, const char *gen)
{
  double xs[4] = {1, 2, 3, 4}, s = 0;
  test_init_tokens(prog, backend, gen, "OP2_GENERATE_TARGETS=host,opencl", (const char *)NULL);
  {
    op_set set = op_decl_set(4, "s");
    op_dat x = op_decl_dat(set, 1, "double", xs, "x");
    op_kernel k1 = op_decl_kernel("void twice(double *x) { x[0] *= 2.0; }\n", "twice");
    op_kernel k2 = op_decl_kernel("void total(const double *x, double *s) { *s += x[0]; }\n", "total");
    PAR_LOOP(k1, "twice", set, op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW));
    PAR_LOOP(k2, "total", set, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC));
    CHECK_DBL(s, 20.0);
  }
  op_exit();
}

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t374-XXXXXX", gen[256], backend[64], path[512];
  char *manifest;
  if (argc < 2) return 2;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(gen, sizeof gen, "OP2_GENERATE=%s/gen", dir);
  snprintf(backend, sizeof backend, "OP2_BACKEND=%s", argv[1]);
  session(argv[0], backend, gen);
  session(argv[0], backend, gen);
  snprintf(path, sizeof path, "%s/gen/manifest.json", dir);
  manifest = test_read_file(path);
  CHECK(manifest != NULL);
  CHECK(manifest[0] == '[');
  CHECK_INT(count(manifest, "\"loop\": \"twice\""), 2);
  CHECK_INT(count(manifest, "\"loop\": \"total\""), 2);
  CHECK_INT(count(manifest, "\"target\": \"host\""), 2);
  CHECK_INT(count(manifest, "\"target\": \"opencl\""), 2);
  CHECK(strstr(manifest, "\"args\": [\"dat double[1] OP_READ direct\", \"global double[1] OP_INC\"]") != NULL);
  {
    /* Every listed file exists and holds the kernel. */
    const char *p = manifest;
    int files = 0;
    while ((p = strstr(p, "\"file\": \"")) != NULL) {
      char name[256], *code;
      const char *q = p + 9, *e = strchr(q, '"');
      CHECK(e != NULL && e - q < 200);
      snprintf(path, sizeof path, "%s/gen/%.*s", dir, (int)(e - q), q);
      code = test_read_file(path);
      CHECK(code != NULL);
      snprintf(name, sizeof name, "%.*s", (int)(e - q), q);
      CHECK(strstr(code, strncmp(name, "twice", 5) == 0 ? "void twice(double *x)" : "void total(") != NULL);
      free(code);
      files++;
      p = e;
    }
    CHECK_INT(files, 4);
  }
  free(manifest);
  return 0;
}
