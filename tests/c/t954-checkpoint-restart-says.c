/* A restart says what it does with the checkpoint path (issue 37, point 9): with
 * OP2_DIAGNOSTICS=1, op_checkpointing_init prints whether it resumes from a checkpoint (which
 * one: its path, the loop it was written at, the process count) or finds none and starts from
 * loop 0, and then whether an unfinished write (PATH.tmp, left by a run stopped before its
 * first checkpoint was complete) was there; before, a fresh start said nothing, so a restart
 * that found no checkpoint could not be told from one that ignored it. (A file at the path that
 * cannot be used is an error, never a fresh start: t950, t951.) */
#include "test.h"

#include <unistd.h>

static const char *src = "void inc(double *d) { *d += 1.0; }\n";
static const char *backend;
static char path[256], tmp[256];
static int on;

/* One session with diagnostics: checkpointing on, a checkpoint after the first loop. */
static void session(void)
{
  char prog[] = "t954", tok[64];
  double d0[4] = {1, 2, 3, 4};
  snprintf(tok, sizeof tok, "OP2_BACKEND=%s", backend);
  test_init_tokens(prog, tok, "OP2_DIAGNOSTICS=1", (const char *)NULL);
  op_set s = op_decl_set(4, "s");
  op_dat d = op_decl_dat(s, 1, "double", d0, "d");
  op_kernel k = op_decl_kernel(src, "inc");
  op_set_error_handler(OP_ERRORS_RETURN);
  on = op_checkpointing_init(path, 1e9, 0);
  op_set_error_handler(OP_ERRORS_ABORT);
  if (!on) {
    op_exit();
    return;
  }
  PAR_LOOP(k, "inc", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
  op_checkpoint_now();
  PAR_LOOP(k, "inc", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
  op_exit();
}

static void expect(const char *out, const char *want, int present)
{
  if ((strstr(out, want) != NULL) != present)
    test_fail_(__FILE__, __LINE__, "the diagnostics %s \"%s\":\n%s", present ? "lack" : "have", want, out);
}

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t954-XXXXXX", want[1024];
  char *out;
  if (argc < 2) return 2;
  backend = argv[1];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/run.ck", dir);
  snprintf(tmp, sizeof tmp, "%s/run.ck.tmp", dir);

  /* nothing there: says so */
  out = test_stdout_of(session);
  if (!on) { /* built without HDF5 */
    free(out);
    rmdir(dir);
    return 0;
  }
  snprintf(want, sizeof want, "op2: checkpoint: no checkpoint at '%s': the run starts from loop 0", path);
  expect(out, want, 1);
  expect(out, "unfinished write", 0);
  expect(out, "resuming", 0);
  free(out);
  CHECK(access(path, R_OK) == 0);

  /* a checkpoint there: which one, and what is replayed */
  out = test_stdout_of(session);
  snprintf(want, sizeof want, "op2: checkpoint: resuming from '%s': written at loop 1 by 1 process(es); replaying 1 loop(s)",
           path);
  expect(out, want, 1);
  expect(out, "no checkpoint", 0);
  snprintf(want, sizeof want, "op2: checkpoint: restored '%s' at loop 1", path);
  expect(out, want, 1);
  free(out);

  /* only an unfinished write: not a checkpoint, and said so */
  CHECK(rename(path, tmp) == 0);
  out = test_stdout_of(session);
  snprintf(want, sizeof want, "op2: checkpoint: no checkpoint at '%s': the run starts from loop 0 ('%s' is the unfinished write",
           path, tmp);
  expect(out, want, 1);
  free(out);
  CHECK(access(tmp, F_OK) != 0); /* replaced by the write */
  CHECK(access(path, R_OK) == 0);

  unlink(path);
  rmdir(dir);
  return 0;
}
