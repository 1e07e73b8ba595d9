/* opencl: program binaries in op2's disk cache (issue 10, point 6). A program built from source
 * is stored as `<key>.clbin` in OP2_CACHE_DIR; the next process loads that binary instead of
 * building the source (diags 2 says which, per program). An entry that cannot be used is rebuilt
 * from source and replaced, and the loop gives the right result: a corrupt or truncated entry, a
 * sealed entry of another program moved into its place (which would compute the wrong value),
 * a symlink, a FIFO (never blocked on) and a group-writable file. Each session runs in a fresh
 * process. On other backends no program binary is written. */
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[] = "/tmp/op2-t390-XXXXXX";
static char cache[200], outfile[220];
static const char *backend;

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", base);
}

/* One op2 session (diags 2, stdout to `outfile`) in a child process: a direct loop whose kernel
 * writes k; returns what it wrote (255 on an op2 error, 254 if it took over 30 s). */
static int session(int k)
{
  pid_t pid = fork();
  int status = 0;
  CHECK(pid >= 0);
  if (pid == 0) {
    char token[64], src[128], *args[2];
    int out[4];
    alarm(test_budget(30));
    if (freopen(outfile, "w", stdout) == NULL) _exit(252);
    snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
    args[0] = (char *)"t390";
    args[1] = token;
    op_set_error_handler(OP_ERRORS_RETURN);
    op_init(2, args, 2);
    op_set s = op_decl_set(4, "s");
    op_dat y = op_decl_dat(s, 1, "int", NULL, "y");
    snprintf(src, sizeof src, "void t390_fill(int *y) { *y = %d; }\n", k);
    op_kernel kern = op_decl_kernel(src, "t390_fill");
    PAR_LOOP(kern, "t390_fill", s, op_arg_dat(y, -1, OP_ID, 1, "int", OP_WRITE));
    if (op_last_error_code() != 0) {
      fprintf(stderr, "t390 session %d: %s\n", k, op_last_error_message());
      _exit(255);
    }
    op_fetch_data(y, out);
    op_exit();
    fflush(stdout);
    _exit(out[0] == out[3] ? out[0] : 253);
  }
  CHECK(waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return 254;
  CHECK(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* What the last session printed. */
static const char *output(void)
{
  static char text[8192];
  FILE *f = fopen(outfile, "r");
  size_t n;
  CHECK(f != NULL);
  n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  return text;
}

#define CHECK_SAID(what)                                                                           \
  do {                                                                                             \
    const char *said_ = output();                                                                  \
    if (strstr(said_, what) == NULL) test_fail_(__FILE__, __LINE__, "expected '%s' in:\n%s", what, said_); \
  } while (0)

/* The number of "*.clbin" entries; the path of one that is not `except` in `out`. */
static int find_entry(char *out, const char *except)
{
  DIR *d = opendir(cache);
  struct dirent *e;
  int n = 0;
  CHECK(d != NULL);
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > 6 && strcmp(e->d_name + len - 6, ".clbin") == 0) {
      n++;
      if (out && strcmp(e->d_name, except) != 0) snprintf(out, 600, "%s/%s", cache, e->d_name);
    }
  }
  closedir(d);
  return n;
}

static long file_size(const char *path)
{
  struct stat st;
  CHECK(stat(path, &st) == 0);
  return (long)st.st_size;
}

/* Replaces `to` by a new private file with the first `keep` bytes of `from` (all if < 0), byte
 * `flip` (if >= 0) inverted. */
static void copy_file(const char *from, const char *to, long keep, long flip)
{
  static unsigned char buf[1 << 22];
  FILE *in = fopen(from, "rb");
  size_t n;
  CHECK(in != NULL);
  n = fread(buf, 1, sizeof buf, in);
  CHECK(n > 0 && n < sizeof buf);
  fclose(in);
  if (keep >= 0 && (size_t)keep < n) n = (size_t)keep;
  if (flip >= 0 && (size_t)flip < n) buf[flip] ^= 0xff;
  unlink(to);
  FILE *out = fopen(to, "wb");
  CHECK(out != NULL);
  CHECK(fwrite(buf, 1, n, out) == n);
  CHECK(fclose(out) == 0);
  CHECK(chmod(to, 0600) == 0);
}

/* The entry is again a private regular file of this user, and the next session loads it. */
static void check_rebuilt(const char *entry, int k)
{
  struct stat st;
  CHECK(lstat(entry, &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK_INT(st.st_uid, geteuid());
  CHECK_INT(st.st_mode & 022, 0);
  CHECK_INT(session(k), k);
  CHECK_SAID("binary loaded from the disk cache");
}

int main(int argc, char **argv)
{
  char entry5[600], entry7[600], name7[600], planted[300];

  if (argc < 2) return 2;
  backend = argv[1];
  CHECK(mkdtemp(base) != NULL);
  atexit(cleanup);
  snprintf(cache, sizeof cache, "%s/cache", base);
  snprintf(outfile, sizeof outfile, "%s/out.txt", base);
  CHECK(mkdir(cache, 0700) == 0);
  setenv("OP2_CACHE_DIR", cache, 1);

  if (strcmp(backend, "opencl") != 0) {
    CHECK_INT(session(7), 7);
    CHECK_INT(find_entry(NULL, ""), 0);
    return 0;
  }

  /* Built and stored; then loaded by the next process. */
  CHECK_INT(session(7), 7);
  CHECK_SAID("op2: opencl program for loop 't390_fill' (kernel 't390_fill'): built from source, binary stored in the disk cache");
  CHECK_INT(find_entry(entry7, ""), 1);
  CHECK_INT(session(7), 7);
  CHECK_SAID("op2: opencl program for loop 't390_fill' (kernel 't390_fill'): binary loaded from the disk cache");
  CHECK(strstr(output(), "built from source") == NULL);

  /* Another kernel, another entry. */
  snprintf(name7, sizeof name7, "%s", strrchr(entry7, '/') + 1);
  CHECK_INT(session(5), 5);
  CHECK_SAID("built from source, binary stored");
  CHECK_INT(find_entry(entry5, name7), 2);
  snprintf(planted, sizeof planted, "%s/planted.clbin", base);
  copy_file(entry7, planted, -1, -1);

  /* A byte of the binary flipped: the checksum trailer no longer matches. */
  copy_file(entry5, entry5, -1, file_size(entry5) / 2);
  CHECK_INT(session(5), 5);
  CHECK_SAID("built from source (disk cache entry rebuilt: is truncated or corrupt");
  check_rebuilt(entry5, 5);

  /* Truncated. */
  copy_file(entry5, entry5, file_size(entry5) / 3, -1);
  CHECK_INT(session(5), 5);
  CHECK_SAID("disk cache entry rebuilt: is truncated or corrupt");
  check_rebuilt(entry5, 5);

  /* A complete, sealed entry of the other kernel in its place: loading it would write 7. */
  copy_file(planted, entry5, -1, -1);
  CHECK_INT(session(5), 5);
  CHECK_SAID("disk cache entry rebuilt: holds no program binary for this source and device");
  check_rebuilt(entry5, 5);

  /* A symlink to a valid entry. */
  CHECK(unlink(entry5) == 0 && symlink(planted, entry5) == 0);
  CHECK_INT(session(5), 5);
  CHECK_SAID("disk cache entry rebuilt: is a symbolic link");
  check_rebuilt(entry5, 5);

  /* A FIFO: never opened for a blocking read. */
  CHECK(unlink(entry5) == 0 && mkfifo(entry5, 0600) == 0);
  CHECK_INT(session(5), 5);
  CHECK_SAID("disk cache entry rebuilt: is a FIFO");
  check_rebuilt(entry5, 5);

  /* Writable by the group. */
  CHECK(chmod(entry5, 0660) == 0);
  CHECK_INT(session(5), 5);
  CHECK_SAID("disk cache entry rebuilt: is writable by group or others (mode 660)");
  check_rebuilt(entry5, 5);

  /* The first kernel's entry was never touched. */
  CHECK_INT(session(7), 7);
  CHECK_SAID("binary loaded from the disk cache");
  return 0;
}
