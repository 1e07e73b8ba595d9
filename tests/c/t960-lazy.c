/* Issue 23, points 4 and 7: lazy evaluation (OP2_LAZY=1) and loop chains.
 * - a queued loop runs before anything observes its data: op_fetch_data, op_fetch_data_idx,
 *   op_print_dat_to_txtfile, op_decl_const with a new value (the queued loop keeps the old one),
 *   op_flush, op_free_dat_temp, op_exit;
 * - a READ global is copied at the call (changing it afterwards changes nothing);
 * - a loop with a global reduction returns with the result in the caller's memory;
 * - inside a chain, reductions land at op_loop_chain_end (and not before: the variables hold
 *   op2's placeholder, a NaN, until then), in loop order, adding up as eagerly, and a
 *   fetch inside the chain runs what is queued; chains do not nest (OP2_ERR_CHAIN), and ending
 *   none is OP2_ERR_CHAIN;
 * - a queued loop that fails is the error of the call that ran it, naming the loop (check
 *   backend: a kernel that writes its OP_READ argument);
 * - without OP2_LAZY, outside chains, loops run at once.
 * Every value is exact. */
#include "test.h"

#include <unistd.h>

#define N 64

static const char *src_set = "void set(double *x, const double *a) { *x = *a; }\n";
static const char *src_addc = "void addc(double *x) { *x += c; }\n";
static const char *src_sum = "void sum(const double *x, double *s) { *s += *x; }\n";
static const char *src_twice = "void twice(const double *x, double *y) { *y = 2.0 * *x; }\n";
static const char *src_bad = "void bad(double *x) { x[0] = 7.0; }\n";
static const char *src_spread = "void spread(const double *x, double *a, double *b) { *a += *x; *b += *x; }\n";

static void all_equal(op_dat d, double want)
{
  double v[N];
  int i;
  op_fetch_data(d, v);
  for (i = 0; i < N; i++) CHECK_DBL(v[i], want);
}

static void lazy(const char *backend)
{
  char token[64];
  double zero[N], a, s, s2, c = 1.0, v[N];
  int i, e2n[2 * N];
  /* The check backend (like OP2_VALIDATE=1) runs every loop at its call, so that what it finds
   * is the loop's own error. */
  int queues = strcmp(backend, "check") != 0 && getenv("OP2_VALIDATE") == NULL;
  for (i = 0; i < N; i++) {
    zero[i] = 0.0;
    e2n[2 * i] = i;
    e2n[2 * i + 1] = (i + 1) % N;
  }
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens("t960", token, "OP2_LAZY=1", (const char *)NULL);
  {
    op_set cells = op_decl_set(N, "cells"), edges = op_decl_set(N, "edges");
    op_map pe = op_decl_map(edges, cells, 2, e2n, "pe");
    op_dat x = op_decl_dat(cells, 1, "double", zero, "x");
    op_dat y = op_decl_dat(cells, 1, "double", zero, "y");
    op_kernel kset = op_decl_kernel(src_set, "set"), kadd = op_decl_kernel(src_addc, "addc");
    op_kernel ksum = op_decl_kernel(src_sum, "sum"), ktwice = op_decl_kernel(src_twice, "twice");
    op_kernel kspread = op_decl_kernel(src_spread, "spread");
    op_decl_const(1, "double", &c, "c");

    /* READ global copied at the call: x = 3 although a is 5 when the loop runs. */
    a = 3.0;
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_WRITE), op_arg_gbl(&a, 1, "double", OP_READ)};
      op_par_loop(kset, "set", cells, 2, args);
    }
    a = 5.0;
    /* A new value of c runs the queue first (the loop queued below sees c = 1, not 2). */
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW)};
      op_par_loop(kadd, "addc", cells, 1, args);
    }
    c = 2.0;
    op_decl_const(1, "double", &c, "c");
    all_equal(x, 4.0);
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW)};
      op_par_loop(kadd, "addc", cells, 1, args);
    }
    /* op_fetch_data_idx runs the queue. */
    op_fetch_data_idx(x, v, 0, N - 1);
    for (i = 0; i < N; i++) CHECK_DBL(v[i], 6.0);

    /* A reduction returns with its result: y = 2x = 12, sum 12 N (after two queued loops). */
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_dat(y, -1, OP_ID, 1, "double", OP_WRITE)};
      op_par_loop(ktwice, "twice", cells, 2, args);
    }
    s = 0.0;
    {
      op_arg args[] = {op_arg_dat(y, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC)};
      op_par_loop(ksum, "sum", cells, 2, args);
    }
    CHECK_DBL(s, 12.0 * N);

    /* A print runs the queue: y += x through both ends of every edge (y = 12 + 2 * 6). */
    {
      op_arg args[] = {op_arg_dat(x, 0, pe, 1, "double", OP_READ), op_arg_dat(y, 0, pe, 1, "double", OP_INC),
                       op_arg_dat(y, 1, pe, 1, "double", OP_INC)};
      op_par_loop(kspread, "spread", edges, 3, args);
    }
    {
      char path[64], line[256];
      FILE *f;
      snprintf(path, sizeof path, "/tmp/op2-t960-%d-%s.txt", (int)getpid(), backend);
      op_print_dat_to_txtfile(y, path);
      f = fopen(path, "r");
      CHECK(f != NULL);
      CHECK(fgets(line, sizeof line, f) != NULL); /* header: size dim type */
      CHECK(fgets(line, sizeof line, f) != NULL);
      CHECK_DBL(strtod(line, NULL), 24.0);
      fclose(f);
      remove(path);
    }

    /* A chain: the reductions land at its end, in loop order; a fetch inside runs the queue. */
    op_loop_chain_begin("iteration");
    s = -1.0;
    s2 = -1.0;
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW)};
      op_par_loop(kadd, "addc", cells, 1, args); /* x = 8 */
    }
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC)};
      op_par_loop(ksum, "sum", cells, 2, args);
    }
    if (queues) CHECK(isnan(s)); /* not yet: op2's placeholder until the chain runs */
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW)};
      op_par_loop(kadd, "addc", cells, 1, args); /* x = 10 */
    }
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s2, 1, "double", OP_INC)};
      op_par_loop(ksum, "sum", cells, 2, args);
    }
    if (queues) CHECK(isnan(s2));
    /* Nesting is refused and leaves the open chain as it was. */
    op_set_error_handler(OP_ERRORS_RETURN);
    op_loop_chain_begin("inner");
    CHECK_ERR(OP2_ERR_CHAIN, "op_loop_chain_begin", "'inner'", "'iteration'");
    op_set_error_handler(OP_ERRORS_ABORT);
    op_loop_chain_end();
    CHECK_DBL(s, -1.0 + 8.0 * N);
    CHECK_DBL(s2, -1.0 + 10.0 * N);
    op_set_error_handler(OP_ERRORS_RETURN);
    op_loop_chain_end();
    CHECK_ERR(OP2_ERR_CHAIN, "op_loop_chain_end", "no loop chain is open");
    op_set_error_handler(OP_ERRORS_ABORT);

    /* Each reduction in a chain starts from its variable's value at its call, as eagerly: a
     * reset between two loops of the chain (Airfoil's rms = 0 before each update) counts. */
    op_loop_chain_begin("resets");
    s = 100.0;
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC)};
      op_par_loop(ksum, "sum", cells, 2, args); /* 100 + 10 N, then overwritten */
    }
    s = 0.0;
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC)};
      op_par_loop(ksum, "sum", cells, 2, args); /* 0 + 10 N */
    }
    op_loop_chain_end();
    CHECK_DBL(s, 10.0 * N);
    /* Without a reset, the second loop starts from the first loop's result, as eagerly:
     * 100 + 20 N (issue #37 point 10; t962 has more cases). */
    op_loop_chain_begin("no-reset");
    s = 100.0;
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC)};
      op_par_loop(ksum, "sum", cells, 2, args);
      op_par_loop(ksum, "sum", cells, 2, args);
    }
    op_loop_chain_end();
    CHECK_DBL(s, 100.0 + 20.0 * N);

    op_loop_chain_begin("with-fetch");
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW)};
      op_par_loop(kadd, "addc", cells, 1, args); /* x = 12 */
    }
    all_equal(x, 12.0);
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW)};
      op_par_loop(kadd, "addc", cells, 1, args); /* x = 14 */
    }
    op_flush(); /* runs the chain's queue; the chain stays open */
    {
      op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW)};
      op_par_loop(kadd, "addc", cells, 1, args); /* x = 16 */
    }
    op_loop_chain_end();
    all_equal(x, 16.0);

    /* A temporary dat's loop runs before the dat is freed. */
    {
      op_dat t = op_decl_dat_temp_char(cells, 1, "double", sizeof(double), "t");
      a = 9.0;
      {
        op_arg args[] = {op_arg_dat(t, -1, OP_ID, 1, "double", OP_WRITE), op_arg_gbl(&a, 1, "double", OP_READ)};
        op_par_loop(kset, "set", cells, 2, args);
      }
      {
        op_arg args[] = {op_arg_dat(t, -1, OP_ID, 1, "double", OP_READ), op_arg_dat(y, -1, OP_ID, 1, "double", OP_WRITE)};
        op_par_loop(ktwice, "twice", cells, 2, args);
      }
      CHECK_INT(op_free_dat_temp_char(t), 1);
      all_equal(y, 18.0);
    }

    /* The check backend's findings are the loop's own error, also with OP2_LAZY=1 (a queued
     * loop's failure at a later call is in t216, under make test-c-lazy). */
    if (!queues && strcmp(backend, "check") == 0) {
      op_kernel kbad = op_decl_kernel(src_bad, "bad");
      op_set_error_handler(OP_ERRORS_RETURN);
      PAR_LOOP(kbad, "bad", cells, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ));
      CHECK_ERR(OP2_ERR_CHECK, "op_par_loop 'bad'");
      op_set_error_handler(OP_ERRORS_ABORT);
    }
  }
  op_exit();
}

/* Without OP2_LAZY and outside a chain, loops run before op_par_loop returns (a reduction
 * that is not handed back early would show), and op_flush does nothing. */
static void eager(const char *backend)
{
  char token[64];
  double zero[N], a = 2.0, s = 0.0;
  int i;
  for (i = 0; i < N; i++) zero[i] = 0.0;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens("t960", token, (const char *)NULL);
  {
    op_set cells = op_decl_set(N, "cells");
    op_dat x = op_decl_dat(cells, 1, "double", zero, "x");
    op_kernel kset = op_decl_kernel(src_set, "set"), ksum = op_decl_kernel(src_sum, "sum");
    op_arg args[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_WRITE), op_arg_gbl(&a, 1, "double", OP_READ)};
    op_arg sargs[] = {op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC)};
    op_par_loop(kset, "set", cells, 2, args);
    op_flush();
    CHECK_OK();
    op_par_loop(ksum, "sum", cells, 2, sargs);
    CHECK_DBL(s, 2.0 * N);
  }
  op_exit();
}

int main(int argc, char **argv)
{
  const char *backend;
  if (argc < 2) return 2;
  backend = argv[1];
  lazy(backend);
  eager(backend);
  return 0;
}
