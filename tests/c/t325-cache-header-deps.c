/* A kernel that #includes a user header (found through OP2_CFLAGS=-I...): the JIT cache records
 * the header's contents with the entry, so after the header is edited the next process
 * rebuilds and sees the new value; an unchanged header keeps using the entry. A header that
 * disappears also means a rebuild (here: a compile error naming it). */
#include "test.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[] = "/tmp/op2-t325-XXXXXX";
static const char *backend;

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", base);
}

static void write_header(const char *path, int k)
{
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fprintf(f, "#define T325_K %d\n", k);
  CHECK(fclose(f) == 0);
}

/* One session in a new process: returns the value the kernel wrote (255: op2 error, and the
 * message must mention `expect_in_error` if given). */
static int session(const char *expect_in_error)
{
  pid_t pid = fork();
  int status = 0;
  CHECK(pid >= 0);
  if (pid == 0) {
    char token[64], *args[2];
    int out[2];
    snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
    args[0] = (char *)"t325";
    args[1] = token;
    op_set_error_handler(OP_ERRORS_RETURN);
    op_init(2, args, 0);
    op_set s = op_decl_set(2, "s");
    op_dat y = op_decl_dat(s, 1, "int", NULL, "y");
    op_kernel kern = op_decl_kernel("#include \"t325_param.h\"\n"
                                    "void t325_k(int *y) { *y = T325_K; }\n",
                                    "t325_k");
    PAR_LOOP(kern, "t325_k", s, op_arg_dat(y, -1, OP_ID, 1, "int", OP_WRITE));
    if (op_last_error_code() != 0) {
      if (expect_in_error == NULL || strstr(op_last_error_message(), expect_in_error) == NULL)
        fprintf(stderr, "t325: %s\n", op_last_error_message());
      _exit(255);
    }
    op_fetch_data(y, out);
    op_exit();
    _exit(out[0] == out[1] ? out[0] : 254);
  }
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
  char inc[300], header[400], cache[300], flags[400];

  if (argc < 2) return 2;
  backend = argv[1];
  CHECK(mkdtemp(base) != NULL);
  atexit(cleanup);
  snprintf(inc, sizeof inc, "%s/inc", base);
  snprintf(header, sizeof header, "%s/t325_param.h", inc);
  snprintf(cache, sizeof cache, "%s/cache", base);
  CHECK(mkdir(inc, 0700) == 0 && mkdir(cache, 0700) == 0);
  snprintf(flags, sizeof flags, "-I%s", inc);
  setenv("OP2_CFLAGS", flags, 1);
  setenv("OP2_CACHE_DIR", cache, 1);

  write_header(header, 3);
  CHECK_INT(session(NULL), 3);
  CHECK_INT(session(NULL), 3);
  write_header(header, 5);
  CHECK_INT(session(NULL), 5);
  CHECK_INT(session(NULL), 5);
  /* Back to the first contents: right again. */
  write_header(header, 3);
  CHECK_INT(session(NULL), 3);
  /* Gone: the entry is not used; the rebuild fails naming the header. */
  CHECK(unlink(header) == 0);
  CHECK_INT(session("t325_param.h"), 255);
  return 0;
}
