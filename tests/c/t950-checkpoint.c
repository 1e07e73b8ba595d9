/* Checkpoint and restart (op_checkpointing_init, op_checkpoint_now), in one process: session 1
 * runs 10 steps (each a loop with OP_INC and OP_MAX globals and an op_arg_info) and asks for a
 * checkpoint after step 4; session 2, the same program with the same data, replays it: steps
 * 0-4 do not run but hand back session 1's global results (the caller's globals hold garbage
 * before each), op_fetch_data during the replay is skipped (the buffer is untouched), and at
 * step 5 the dat is loaded (were it not, steps 5-9 would start from the declared values): the
 * final dat and every result equal session 1's exactly. (A restart whose data differ is refused:
 * t953.) Refusals: another loop sequence (OP2_ERR_CHECKPOINT at the first loop that differs),
 * a truncated, a byte-flipped and a non-checkpoint file, and bad arguments. */
#include "test.h"

#include <unistd.h>

#define N 100
#define STEPS 10

static const char *src =
    "void step(double *d, double *sum, double *mx, int *loc, const int *idx) {\n"
    "  *d = *d * scale + 1.0;\n"
    "  *sum += *d;\n"
    "  if (*d > *mx) { *mx = *d; *loc = *idx; }\n"
    "}\n";

static const char *other_src = "void other(double *d) { *d = 0.0; }\n";

typedef struct {
  double sum[STEPS], mx[STEPS];
  int loc[STEPS];
  double final_d[N];
} results;

/* One session. `start`: the dat's initial values; `fetch_at`: fetch the dat after that step
 * into `fetched` (-1: never). Returns op_checkpointing_init's value. */
static int session(const char *backend, const char *path, double start, results *r, int fetch_at, double *fetched)
{
  char prog[] = "t950";
  char tok[64];
  double d0[N], scale = 0.5;
  int i, on;
  snprintf(tok, sizeof tok, "OP2_BACKEND=%s", backend);
  test_init_tokens(prog, tok, (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
  for (i = 0; i < N; i++) d0[i] = start + i;
  op_set cells = op_decl_set(N, "cells");
  op_dat d = op_decl_dat(cells, 1, "double", d0, "d");
  op_decl_const(1, "double", &scale, "scale");
  op_kernel k = op_decl_kernel(src, "step");
  CHECK_OK();
  on = op_checkpointing_init(path, 1e9, 0);
  for (i = 0; i < STEPS; i++) {
    if (i == 3) {
      scale = 0.25; /* a constant changed before the checkpoint */
      op_decl_const(1, "double", &scale, "scale");
    }
    r->sum[i] = 0.0;
    r->mx[i] = -1.0;
    PAR_LOOP(k, "step", cells, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW),
             op_arg_gbl(&r->sum[i], 1, "double", OP_INC), op_arg_gbl(&r->mx[i], 1, "double", OP_MAX),
             op_arg_info(&r->loc[i], 1, "int", 2), op_arg_idx(-1, OP_ID));
    CHECK_OK();
    if (i == 4) op_checkpoint_now(); /* saved before step 5 runs */
    if (i == fetch_at) op_fetch_data(d, fetched);
  }
  op_fetch_data(d, r->final_d);
  CHECK_OK();
  op_exit();
  return on;
}

static void copy_file(const char *from, const char *to, long keep, long flip_at)
{
  FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
  long n = 0;
  int c;
  CHECK(f != NULL && g != NULL);
  while ((c = fgetc(f)) != EOF && (keep < 0 || n < keep)) {
    if (n == flip_at) c ^= 0x10;
    fputc(c, g);
    n++;
  }
  fclose(f);
  fclose(g);
}

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t950-XXXXXX", path[256], bad[256], tmp[256];
  results a, b;
  double fetched[N], expect_sum = 0.0;
  int i;
  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  if (mkdtemp(dir) == NULL) test_fail_(__FILE__, __LINE__, "mkdtemp failed");
  snprintf(path, sizeof path, "%s/run.ck", dir);
  snprintf(bad, sizeof bad, "%s/bad.ck", dir);
  snprintf(tmp, sizeof tmp, "%s/run.ck.tmp", dir);

  /* session 1: no checkpoint yet, so everything runs; one checkpoint is written */
  CHECK_INT(session(argv[1], path, 1.0, &a, -1, NULL), 1);
  CHECK(access(path, R_OK) == 0);
  CHECK(access(tmp, F_OK) != 0); /* renamed, not left behind */
  for (i = 0; i < N; i++) expect_sum += (1.0 + i) * 0.5 + 1.0;
  CHECK_DBL(a.sum[0], expect_sum); /* step 0 of d = d * 0.5 + 1 */
  CHECK_DBL(a.mx[0], (1.0 + N - 1) * 0.5 + 1.0);
  CHECK_INT(a.loc[0], N - 1);

  /* session 2: steps 0-4 replayed, the dat loaded at step 5 */
  for (i = 0; i < N; i++) fetched[i] = -7.0;
  CHECK_INT(session(argv[1], path, 1.0, &b, 2, fetched), 1);
  for (i = 0; i < STEPS; i++) {
    if (a.sum[i] != b.sum[i] || a.mx[i] != b.mx[i] || a.loc[i] != b.loc[i])
      test_fail_(__FILE__, __LINE__, "step %d: session 2 has sum %.17g max %.17g loc %d, session 1 %.17g %.17g %d",
                 i, b.sum[i], b.mx[i], b.loc[i], a.sum[i], a.mx[i], a.loc[i]);
  }
  for (i = 0; i < N; i++) {
    if (a.final_d[i] != b.final_d[i])
      test_fail_(__FILE__, __LINE__, "d[%d]: %.17g after the restart, %.17g uninterrupted", i, b.final_d[i], a.final_d[i]);
    if (fetched[i] != -7.0) test_fail_(__FILE__, __LINE__, "op_fetch_data ran during the replay (d[%d] = %g)", i, fetched[i]);
  }

  /* another program: its first loop differs from the checkpoint's */
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  {
    double d0[N] = {0};
    op_set cells = op_decl_set(N, "cells");
    op_dat d = op_decl_dat(cells, 1, "double", d0, "d");
    op_kernel k = op_decl_kernel(other_src, "other");
    CHECK_INT(op_checkpointing_init(path, 1e9, 0), 1);
    PAR_LOOP(k, "other", cells, op_arg_dat(d, -1, OP_ID, 1, "double", OP_WRITE));
    CHECK_ERR(OP2_ERR_CHECKPOINT, "op_par_loop 'other'", "run.ck", "of another program", "loop 0");
    /* arguments */
    CHECK_INT(op_checkpointing_init(path, 1.0, 0), 0);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_checkpointing_init", "already on");
  }
  op_exit();
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  CHECK_INT(op_checkpointing_init(NULL, 1.0, 0), 0);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_checkpointing_init", "path");
  CHECK_INT(op_checkpointing_init(bad, -1.0, 0), 0);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_checkpointing_init", "interval -1");
  CHECK_INT(op_checkpointing_init(bad, 1.0, 7), 0);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_checkpointing_init", "flags 7");
  copy_file(path, bad, 700, -1);
  CHECK_INT(op_checkpointing_init(bad, 1.0, 0), 0);
  CHECK_ERR(OP2_ERR_CHECKPOINT, "op_checkpointing_init", "bad.ck", "is truncated");
  copy_file(path, bad, -1, 600);
  CHECK_INT(op_checkpointing_init(bad, 1.0, 0), 0);
  CHECK_ERR(OP2_ERR_CHECKPOINT, "op_checkpointing_init", "bad.ck", "corrupted", "SHA-256");
  {
    FILE *f = fopen(bad, "wb");
    CHECK(f != NULL);
    for (i = 0; i < 1000; i++) fputc('x', f);
    fclose(f);
  }
  CHECK_INT(op_checkpointing_init(bad, 1.0, 0), 0);
  CHECK_ERR(OP2_ERR_CHECKPOINT, "op_checkpointing_init", "bad.ck", "not an op2 checkpoint");
  op_checkpoint_now(); /* off: nothing */
  CHECK_OK();
  op_exit();
  unlink(path);
  unlink(bad);
  rmdir(dir);
  return 0;
}
