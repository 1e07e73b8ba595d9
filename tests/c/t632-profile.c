/* OP2's profiling calls (op_profile.h): op_profile_start opens the root region, enter/exit
 * nest, next closes a region and enters its sibling, enter_kernel names its region
 * name/target/variant, end closes everything; op_profile_output prints the tree (captured
 * from stdout here): the regions in the order first entered, indented by depth, with their
 * calls; every time non-negative, min <= mean <= max, a child's total within its parent's and
 * the children's sum too; then op2's per-loop report. Unbalanced calls (exit or enter before
 * start, exit with only the root open, a second end, start while open) change nothing, are no
 * errors, and at diagnostics level 1 say why. */
#include "test.h"

#include <unistd.h>

static const char *k_spin =
    "void spin(double *x) { double s = x[0]; for (int i = 0; i < 2000; i++) s = s * 0.5 + 1.0; x[0] = s; }\n";

static char text[65536];

/* Runs f with stdout going to a file; the text it printed lands in `text`. */
static void capture(void (*f)(void))
{
  char path[] = "/tmp/op2-t632-XXXXXX";
  int fd = mkstemp(path), saved;
  ssize_t n;
  CHECK(fd >= 0);
  fflush(stdout);
  saved = dup(1);
  CHECK(saved >= 0 && dup2(fd, 1) == 1);
  f();
  fflush(stdout);
  CHECK(dup2(saved, 1) == 1);
  close(saved);
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
  n = read(fd, text, sizeof text - 1);
  CHECK(n >= 0);
  text[n] = '\0';
  close(fd);
  unlink(path);
}

static op_set cells;
static op_dat x;
static op_kernel k;

static void loop(void)
{
  PAR_LOOP(k, "spin", cells, op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW));
}

static void session(void)
{
  int i;
  op_profile_exit(); /* before start: ignored */
  op_profile_enter("early");
  op_profile_end();
  CHECK_OK();
  op_profile_start("app");
  op_profile_start("app2"); /* while open: ignored */
  op_profile_exit();        /* only the root open: ignored */
  CHECK_OK();
  op_profile_enter("setup");
  loop();
  op_profile_exit();
  for (i = 0; i < 3; i++) {
    op_profile_enter("step");
    op_profile_enter("inner");
    loop();
    op_profile_next("other");
    loop();
    loop();
    op_profile_exit();
    op_profile_exit();
  }
  op_profile_enter_kernel("spin", "seq", "plain");
  loop();
  op_profile_exit();
  op_profile_end();
  op_profile_end(); /* nothing open: ignored */
  op_profile_exit();
  CHECK_OK();
}

static void output(void)
{
  op_profile_output();
}

static char token[64];

static void init_diags(void)
{
  test_init_tokens("t632", token, "OP2_DIAGNOSTICS=1", (const char *)NULL);
}

struct row {
  int depth;
  char name[64];
  long calls;
  double total, mean, min, max;
};

int main(int argc, char **argv)
{
  static const char *names[] = {"app", "setup", "step", "inner", "other", "spin/seq/plain"};
  static const int depths[] = {0, 1, 1, 2, 2, 1}, calls[] = {1, 1, 3, 3, 3, 1};
  struct row rows[16];
  int nrows = 0, i, j;
  double xs[64];
  char *p, *line;
  for (i = 0; i < 64; i++) xs[i] = i;

  test_init(argc, argv);
  cells = op_decl_set(64, "cells");
  x = op_decl_dat(cells, 1, "double", xs, "x");
  k = op_decl_kernel(k_spin, "spin");
  capture(session);
  CHECK_STR(text, ""); /* diagnostics level 0: the ignored calls say nothing */
  capture(output);

  /* the tree: between the column line and the loop report */
  p = strstr(text, "op2 profile (wall time in seconds)\n  region ");
  if (p == NULL) test_fail_(__FILE__, __LINE__, "no profile header in:\n%s", text);
  CHECK(strstr(text, "op2 timing (") > p); /* then op_timing_output's report */
  CHECK(strstr(strstr(text, "op2 timing ("), "  spin ") != NULL);
  p = strchr(p, '\n') + 1;
  p = strchr(p, '\n') + 1; /* past the column line */
  while (p && strncmp(p, "  ", 2) == 0 && nrows < 16) {
    struct row *r = &rows[nrows];
    int spaces = 0;
    line = p;
    p = strchr(p, '\n');
    if (p) *p++ = '\0';
    while (line[spaces] == ' ') spaces++;
    CHECK((spaces - 2) % 2 == 0);
    r->depth = (spaces - 2) / 2;
    if (sscanf(line + spaces, "%63s %ld %lf %lf %lf %lf", r->name, &r->calls, &r->total, &r->mean,
               &r->min, &r->max) != 6)
      test_fail_(__FILE__, __LINE__, "unparsed row \"%s\"", line);
    nrows++;
  }
  CHECK_INT(nrows, 6);
  for (i = 0; i < nrows; i++) {
    CHECK_STR(rows[i].name, names[i]);
    CHECK_INT(rows[i].depth, depths[i]);
    CHECK_INT(rows[i].calls, calls[i]);
    CHECK(rows[i].min >= 0 && rows[i].min <= rows[i].mean + 1e-6 && rows[i].mean <= rows[i].max + 1e-6);
    CHECK(rows[i].total >= rows[i].max - 1e-6);
  }
  CHECK(rows[0].total > 0);
  /* each child within its parent, and the children together too (6 decimals printed) */
  for (i = 0; i < nrows; i++) {
    double sum = 0;
    for (j = i + 1; j < nrows && rows[j].depth > rows[i].depth; j++) {
      if (rows[j].depth != rows[i].depth + 1) continue;
      CHECK(rows[j].total <= rows[i].total + 1e-6);
      sum += rows[j].total;
    }
    CHECK(sum <= rows[i].total + 1e-5);
  }
  op_exit();

  /* diagnostics level 1: the ignored calls say why; an output without regions is the loop
   * report alone */
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  capture(init_diags); /* op_init says what it runs on at level 1 */
  capture(output);
  CHECK(strstr(text, "op2 profile") == NULL);
  CHECK(strstr(text, "op2 timing (") != NULL);
  cells = op_decl_set(64, "cells");
  x = op_decl_dat(cells, 1, "double", xs, "x");
  k = op_decl_kernel(k_spin, "spin");
  capture(session);
  CHECK(strstr(text, "op2: op_profile_exit with no region open: ignored") != NULL);
  CHECK(strstr(text, "op2: op_profile_enter 'early' with no region open") != NULL);
  CHECK(strstr(text, "op2: op_profile_start 'app2' while 'app' is open") != NULL);
  CHECK(strstr(text, "op2: op_profile_exit with no op_profile_enter open below 'app'") != NULL);
  CHECK(strstr(text, "op2: op_profile_end with no region open: ignored") != NULL);
  op_exit();
  return 0;
}
