/* Whatever sits in a JIT cache entry's place is used only if it is a regular file of this user
 * that nobody else can write; anything else is rebuilt, never read or run, and never blocks:
 * a symlink to a valid entry of another kernel, a FIFO, a directory, a group-writable file and
 * (as root) a file of another user. The planted files hold a valid entry compiled from another
 * kernel, so running one would give a wrong result. Each session runs in a fresh process. */
#include "test.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[] = "/tmp/op2-t321-XXXXXX";
static char cache[200];
static const char *backend;

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", base);
}

/* One op2 session in a child process: a loop whose kernel writes k; returns what it wrote
 * (255 on an op2 error, 254 if it hung: its alarm is a load-scaled hang guard). */
static int session(int k)
{
  pid_t pid = fork();
  int status = 0;
  CHECK(pid >= 0);
  if (pid == 0) {
    char token[64], src[128], *args[2];
    int out[4];
    alarm(test_budget(30));
    snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
    args[0] = (char *)"t321";
    args[1] = token;
    op_set_error_handler(OP_ERRORS_RETURN);
    op_init(2, args, 0);
    op_set s = op_decl_set(4, "s");
    op_dat y = op_decl_dat(s, 1, "int", NULL, "y");
    snprintf(src, sizeof src, "void t321_fill(int *y) { *y = %d; }\n", k);
    op_kernel kern = op_decl_kernel(src, "t321_fill");
    PAR_LOOP(kern, "t321_fill", s, op_arg_dat(y, -1, OP_ID, 1, "int", OP_WRITE));
    if (op_last_error_code() != 0) {
      fprintf(stderr, "t321 session %d: %s\n", k, op_last_error_message());
      _exit(255);
    }
    op_fetch_data(y, out);
    op_exit();
    _exit(out[0] == out[3] ? out[0] : 253);
  }
  CHECK(waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return 254;
  CHECK(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* The name of the one "*.so" entry in the cache directory that is not `except`. */
static void find_entry(char *out, const char *except)
{
  DIR *d = opendir(cache);
  struct dirent *e;
  int n = 0;
  CHECK(d != NULL);
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0 && strcmp(e->d_name, except) != 0) {
      snprintf(out, 600, "%s/%s", cache, e->d_name);
      n++;
    }
  }
  closedir(d);
  CHECK_INT(n, 1);
}

static void copy_file(const char *from, const char *to)
{
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  char buf[4096];
  size_t n;
  CHECK(in != NULL && out != NULL);
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) CHECK(fwrite(buf, 1, n, out) == n);
  fclose(in);
  CHECK(fclose(out) == 0);
}

/* After a session, the entry is again a private regular file of this user. */
static void check_rebuilt(const char *entry)
{
  struct stat st;
  CHECK(lstat(entry, &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK_INT(st.st_uid, geteuid());
  CHECK_INT(st.st_mode & 022, 0);
}

int main(int argc, char **argv)
{
  char entry5[600], entry7[600], name7[600], planted[300];
  const char *slash;

  if (argc < 2) return 2;
  backend = argv[1];
  CHECK(mkdtemp(base) != NULL);
  atexit(cleanup);
  snprintf(cache, sizeof cache, "%s/cache", base);
  CHECK(mkdir(cache, 0700) == 0);
  setenv("OP2_CACHE_DIR", cache, 1);

  /* Two kernels, two entries; a copy of kernel 7's entry is the attacker's "library". */
  CHECK_INT(session(7), 7);
  find_entry(entry7, "");
  slash = strrchr(entry7, '/');
  snprintf(name7, sizeof name7, "%s", slash + 1);
  CHECK_INT(session(5), 5);
  find_entry(entry5, name7);
  snprintf(planted, sizeof planted, "%s/planted.so", base);
  copy_file(entry7, planted);
  CHECK(chmod(planted, 0644) == 0);

  /* A symlink to a valid entry. */
  CHECK(unlink(entry5) == 0 && symlink(planted, entry5) == 0);
  CHECK_INT(session(5), 5);
  check_rebuilt(entry5);

  /* A FIFO: not opened for a blocking read. */
  CHECK(unlink(entry5) == 0 && mkfifo(entry5, 0600) == 0);
  CHECK_INT(session(5), 5);
  check_rebuilt(entry5);

  /* A directory. */
  CHECK(unlink(entry5) == 0 && mkdir(entry5, 0700) == 0);
  CHECK_INT(session(5), 5);
  check_rebuilt(entry5);

  /* A valid entry of another kernel, writable by the group. */
  copy_file(planted, entry5);
  CHECK(chmod(entry5, 0664) == 0);
  CHECK_INT(session(5), 5);
  check_rebuilt(entry5);

  /* The same, owned by another user (only root can make one). */
  if (geteuid() == 0) {
    copy_file(planted, entry5);
    CHECK(chmod(entry5, 0644) == 0 && chown(entry5, 65534, 65534) == 0);
    CHECK_INT(session(5), 5);
    check_rebuilt(entry5);
  }

  /* A good entry is still used as it is (kernel 7's, untouched). */
  CHECK_INT(session(7), 7);
  return 0;
}
