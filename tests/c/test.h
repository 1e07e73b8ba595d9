/* Helpers shared by the C tests (tests/c/tNNN-topic.c).
 *
 * Every test takes the backend as argv[1], is silent on success and exits 0; a failed check
 * prints file:line and what was expected to stderr and exits 1. An unexpected op2 error goes
 * through op2's default handler (prints "op2 error [code]: ..." and exits non-zero), so tests
 * switch to OP_ERRORS_RETURN only around the calls that are meant to fail.
 *
 * Include this header first: it selects POSIX 2008 for setenv, mkstemp, fork, pipe, ... */
#ifndef OP2_TEST_H
#define OP2_TEST_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif

#include <op2.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* ---- failing ---------------------------------------------------------------------------- */

static inline void test_fail_(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "%s:%d: check failed: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(1);
}

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (!(cond)) test_fail_(__FILE__, __LINE__, "%s", #cond);                                    \
  } while (0)

/* Integer equality (any integer type up to long long), printing both sides. */
#define CHECK_INT(got, want)                                                                     \
  do {                                                                                           \
    long long g_ = (long long)(got), w_ = (long long)(want);                                     \
    if (g_ != w_)                                                                                \
      test_fail_(__FILE__, __LINE__, "%s == %s: got %lld, want %lld", #got, #want, g_, w_);      \
  } while (0)

/* Unsigned 64-bit equality. */
#define CHECK_U64(got, want)                                                                     \
  do {                                                                                           \
    unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want);          \
    if (g_ != w_)                                                                                \
      test_fail_(__FILE__, __LINE__, "%s == %s: got %llu, want %llu", #got, #want, g_, w_);      \
  } while (0)

/* Exact floating-point equality: for values and sums that are exactly representable. */
#define CHECK_DBL(got, want)                                                                     \
  do {                                                                                           \
    double g_ = (double)(got), w_ = (double)(want);                                              \
    if (!(g_ == w_))                                                                             \
      test_fail_(__FILE__, __LINE__, "%s == %s: got %.17g, want %.17g", #got, #want, g_, w_);    \
  } while (0)

/* |got - want| <= tol. */
#define CHECK_NEAR(got, want, tol)                                                               \
  do {                                                                                           \
    double g_ = (double)(got), w_ = (double)(want);                                              \
    if (!(fabs(g_ - w_) <= (tol)))                                                               \
      test_fail_(__FILE__, __LINE__, "%s ~= %s: got %.17g, want %.17g (tol %g)", #got, #want,    \
                 g_, w_, (double)(tol));                                                         \
  } while (0)

#define CHECK_STR(got, want)                                                                     \
  do {                                                                                           \
    const char *g_ = (got), *w_ = (want);                                                        \
    if (g_ == NULL || strcmp(g_, w_) != 0)                                                       \
      test_fail_(__FILE__, __LINE__, "%s == %s: got \"%s\", want \"%s\"", #got, #want,           \
                 g_ ? g_ : "(null)", w_);                                                        \
  } while (0)

/* ---- op2 errors ------------------------------------------------------------------------- */

/* The most recent op2 call succeeded: code 0 and message "". */
#define CHECK_OK()                                                                               \
  do {                                                                                           \
    int c_ = op_last_error_code();                                                               \
    const char *m_ = op_last_error_message();                                                    \
    if (c_ != 0 || m_ == NULL || m_[0] != '\0')                                                  \
      test_fail_(__FILE__, __LINE__, "expected success, got code %d, message \"%s\"", c_,        \
                 m_ ? m_ : "(null)");                                                            \
  } while (0)

static inline void test_check_err_(const char *file, int line, int want, const char *call, ...)
{
  int got = op_last_error_code();
  const char *msg = op_last_error_message();
  const char *sub;
  va_list ap;
  if (msg == NULL) test_fail_(file, line, "op_last_error_message() is NULL (code %d)", got);
  if (got != want)
    test_fail_(file, line, "expected error code %d, got %d, message \"%s\"", want, got, msg);
  /* Messages start with the C call's name. */
  if (strncmp(msg, call, strlen(call)) != 0)
    test_fail_(file, line, "error %d: message does not start with \"%s\": \"%s\"", got, call, msg);
  va_start(ap, call);
  while ((sub = va_arg(ap, const char *)) != NULL) {
    if (strstr(msg, sub) == NULL) {
      va_end(ap);
      test_fail_(file, line, "error %d: message lacks \"%s\": \"%s\"", got, sub, msg);
    }
  }
  va_end(ap);
}

/* The most recent op2 call failed with `code`; its message starts with the call name and
 * contains every further substring: CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_set", "'nodes'"). */
#define CHECK_ERR(...) test_check_err_(__FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)

/* ---- setting up ------------------------------------------------------------------------- */

/* op_init with the token OP2_BACKEND=<argv[1]> (argv[1] is required). The JIT cache comes from
 * OP2_CACHE_DIR in the environment (the runner sets it). */
static inline const char *test_init(int argc, char **argv)
{
  static char token[256];
  char *args[2];
  if (argc < 2 || argv[1] == NULL || argv[1][0] == '\0') {
    fprintf(stderr, "usage: %s BACKEND\n", argc > 0 ? argv[0] : "test");
    exit(2);
  }
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  args[0] = argv[0];
  args[1] = token;
  op_init(2, args, 0);
  return argv[1];
}

/* op_init with the program name and the given tokens (NULL-terminated list). */
static inline void test_init_tokens(const char *prog, ...)
{
  char *args[16];
  int n = 0;
  const char *t;
  va_list ap;
  args[n++] = (char *)prog;
  va_start(ap, prog);
  while ((t = va_arg(ap, const char *)) != NULL && n < 16) args[n++] = (char *)t;
  va_end(ap);
  op_init(n, args, 0);
}

/* A loop over `set` with the op_args listed (independent of OP_PAR_LOOP, tested in t130). */
#define PAR_LOOP(kernel, name, set, ...)                                                         \
  do {                                                                                           \
    op_arg args_[] = {__VA_ARGS__};                                                              \
    op_par_loop((kernel), (name), (set), (int)(sizeof args_ / sizeof args_[0]), args_);          \
  } while (0)

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Whole file into a malloc'd NUL-terminated string (NULL if it cannot be read). */
static inline char *test_read_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;
  size_t got;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  buf = (char *)malloc((size_t)n + 1);
  if (buf == NULL) {
    fclose(f);
    return NULL;
  }
  got = fread(buf, 1, (size_t)n, f);
  buf[got] = '\0';
  fclose(f);
  return buf;
}

/* What `fn` prints on stdout (e.g. op_timing_output), as a malloc'd string. Needs POSIX dup. */
int dup(int fd);
int dup2(int fd, int fd2);
int close(int fd);
int fileno(FILE *stream);
static inline char *test_stdout_of(void (*fn)(void))
{
  FILE *tf = tmpfile();
  int saved;
  long len;
  char *out;
  if (tf == NULL) test_fail_(__FILE__, __LINE__, "tmpfile failed");
  fflush(stdout);
  saved = dup(1);
  if (saved < 0 || dup2(fileno(tf), 1) < 0) test_fail_(__FILE__, __LINE__, "dup2 failed");
  fn();
  fflush(stdout);
  if (dup2(saved, 1) < 0) test_fail_(__FILE__, __LINE__, "dup2 back failed");
  close(saved);
  fseek(tf, 0, SEEK_END);
  len = ftell(tf);
  fseek(tf, 0, SEEK_SET);
  out = (char *)calloc((size_t)len + 1, 1);
  if (out == NULL || fread(out, 1, (size_t)len, tf) != (size_t)len) test_fail_(__FILE__, __LINE__, "read back failed");
  fclose(tf);
  return out;
}

/* ---- hang guards ------------------------------------------------------------------------ */

/* `seconds` scaled by the machine's load when called: seconds * (1 + the 1-minute load average
 * per online core), times OP2_TEST_TIME_SCALE when set. For alarm() hang guards, which tell a
 * hang from a slow run and must not fire on a busy machine (tests/lib/budget.sh for scripts). */
static inline unsigned test_budget(unsigned seconds)
{
  double load = 0.0, scale = 1.0;
  long cores = 1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = 0.0;
    fclose(f);
  }
#ifdef _SC_NPROCESSORS_ONLN
  cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
#endif
  if (getenv("OP2_TEST_TIME_SCALE")) scale = atof(getenv("OP2_TEST_TIME_SCALE"));
  if (!(scale > 0.0)) scale = 1.0;
  return (unsigned)(seconds * (1.0 + load / (double)cores) * scale + 0.5);
}

/* ---- address-space limits ---------------------------------------------------------------- */

/* Bytes of address space this process uses now (/proc/self/statm's first field, in pages). */
static inline unsigned long long test_vm_bytes(void)
{
  unsigned long long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%llu", &pages) != 1) pages = 0;
    fclose(f);
  }
  return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/* Limits this process's address space (RLIMIT_AS) to what it uses now plus `headroom` bytes, so
 * that an allocation bigger than the headroom is refused; `old` (when not NULL) receives the
 * limit before, for setrlimit to restore. Returns 0, or -1 where the limit cannot be set. */
static inline int test_limit_address_space(unsigned long long headroom, struct rlimit *old)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) != 0) return -1;
  if (old) *old = rl;
  rl.rlim_cur = (rlim_t)(test_vm_bytes() + headroom);
  return setrlimit(RLIMIT_AS, &rl);
}

#endif /* OP2_TEST_H */
