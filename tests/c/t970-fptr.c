/* op_par_loop_fptr: compiled C functions as kernels (the per-element tier of OP2's Fortran
 * op_par_loop_N; twin of tests/fortran/t970-fptr-f.f90). A direct loop (READ, WRITE, an INC
 * global, op_arg_idx in the index base), an indirect OP_INC ring, a second function of the same
 * shape (the address is run-time data: the same compiled loop calls whichever it is given),
 * MIN/MAX with an op_arg_info payload, the name derived from the function's symbol (seen in an
 * error message), errors (NULL function, a map from another set), and a loop chain of two
 * compiled kernels fused with OP2_FUSE=1 (seq, threads). Device backends refuse
 * with OP2_ERR_BACKEND_UNAVAILABLE and leave the globals untouched. */
#include "test.h"

#define N 500

static void scale(const double *a, double *b, int *count, const int *i)
{
  *b = 3.0 * a[0] + a[1] + *i;
  *count += 1;
}

static void spread(double *x1, double *x2, const double *w)
{
  *x1 += *w;
  *x2 += *w;
}

static void spread_neg(double *x1, double *x2, const double *w)
{
  *x1 -= 10.0 * *w;
  *x2 -= 10.0 * *w;
}

static void extremes(const double *v, double *lo, double *hi, const int *i, int *where)
{
  if (*v < *lo) *lo = *v;
  if (*v > *hi) {
    *hi = *v;
    *where = *i;
  }
}

static void add_one(double *x) { *x += 1.0; }

static void twice(const double *x, double *y) { *y = 2.0 * *x; }

typedef void (*fn_t)(void);

/* A loop chain of two compiled kernels of different shapes (fused with OP2_FUSE=1: their
 * stand-in kernels must have different names to be defined in one unit). */
static op_dat chain_x, chain_y;
static op_set chain_s;
static char chain_token[64];
static void start_chain(void)
{
  test_init_tokens("t970-fptr", chain_token, "OP2_FUSE=1", "OP2_DIAGNOSTICS=2", (const char *)NULL);
  chain_s = op_decl_set(N, "s");
  chain_x = op_decl_dat(chain_s, 1, "double", NULL, "x");
  chain_y = op_decl_dat(chain_s, 1, "double", NULL, "y");
}
static void run_chain(void)
{
  op_arg a1[] = {op_arg_dat(chain_x, -1, OP_ID, 1, "double", OP_RW)};
  op_arg a2[] = {op_arg_dat(chain_x, -1, OP_ID, 1, "double", OP_READ),
                 op_arg_dat(chain_y, -1, OP_ID, 1, "double", OP_WRITE)};
  op_loop_chain_begin("fptr");
  op_par_loop_fptr((fn_t)add_one, "add_one", chain_s, 1, a1);
  op_par_loop_fptr((fn_t)twice, "twice", chain_s, 2, a2);
  op_loop_chain_end();
}

int main(int argc, char **argv)
{
  static double av[2 * N], bout[N], xout[N], wv[N];
  static int emap[2 * N];
  int count, where, i;
  double lo, hi, one = 1.0;
  op_set nodes, edges;
  op_map ring;
  op_dat a, b, x, w;
  const char *backend = test_init(argc, argv);

  for (i = 0; i < N; i++) {
    av[2 * i] = i;
    av[2 * i + 1] = 0.5 * i;
    emap[2 * i] = i;
    emap[2 * i + 1] = (i + 1) % N;
    wv[i] = 1.0;
  }
  nodes = op_decl_set(N, "nodes");
  edges = op_decl_set(N, "edges");
  ring = op_decl_map(edges, nodes, 2, emap, "ring");
  a = op_decl_dat(nodes, 2, "double", (char *)av, "a");
  b = op_decl_dat(nodes, 1, "double", NULL, "b");
  x = op_decl_dat(nodes, 1, "double", NULL, "x");
  w = op_decl_dat(edges, 1, "double", (char *)wv, "w");

  op_arg direct[] = {op_arg_dat(a, -1, OP_ID, 2, "double", OP_READ),
                     op_arg_dat(b, -1, OP_ID, 1, "double", OP_WRITE),
                     op_arg_gbl(&count, 1, "int", OP_INC), op_arg_idx(-1, OP_ID)};
  if (!strcmp(backend, "opencl") || !strcmp(backend, "cuda")) {
    op_set_error_handler(OP_ERRORS_RETURN);
    count = 7;
    op_par_loop_fptr((fn_t)scale, "scale", nodes, 4, direct);
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop_fptr 'scale'", "runs loops on a device",
              "no Fortran device compiler");
    CHECK_INT(count, 7);
    op_exit();
    return 0;
  }

  count = 0;
  op_par_loop_fptr((fn_t)scale, "scale", nodes, 4, direct);
  CHECK_INT(count, N);
  op_fetch_data(b, bout);
  for (i = 0; i < N; i++) CHECK_DBL(bout[i], 3.0 * i + 0.5 * i + i);

  op_arg inc[] = {op_arg_dat(x, 0, ring, 1, "double", OP_INC), op_arg_dat(x, 1, ring, 1, "double", OP_INC),
                  op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ)};
  op_par_loop_fptr((fn_t)spread, NULL, edges, 3, inc);
  op_par_loop_fptr((fn_t)spread, NULL, edges, 3, inc);
  op_fetch_data(x, xout);
  for (i = 0; i < N; i++) CHECK_DBL(xout[i], 4.0);
  op_par_loop_fptr((fn_t)spread_neg, "spread_neg", edges, 3, inc);
  op_fetch_data(x, xout);
  for (i = 0; i < N; i++) CHECK_DBL(xout[i], -16.0);

  lo = 1e300;
  hi = -1e300;
  where = -1;
  op_arg ext[] = {op_arg_dat(b, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&lo, 1, "double", OP_MIN),
                  op_arg_gbl(&hi, 1, "double", OP_MAX), op_arg_idx(-1, OP_ID), op_arg_info(&where, 1, "int", 2)};
  op_par_loop_fptr((fn_t)extremes, "extremes", nodes, 5, ext);
  CHECK_DBL(lo, 0.0);
  CHECK_DBL(hi, 4.5 * (N - 1));
  CHECK_INT(where, N - 1);

  /* errors; the loop's name comes from the function's symbol when NULL is given */
  op_set_error_handler(OP_ERRORS_RETURN);
  op_arg g[] = {op_arg_gbl(&one, 1, "double", OP_READ)};
  op_par_loop_fptr(NULL, "none", nodes, 1, g);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_par_loop_fptr", "fn is NULL");
  op_par_loop_fptr((fn_t)spread, NULL, nodes, 3, inc);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_par_loop 'spread'", "ring");
  op_exit();

  /* fusion of compiled kernels (seq and threads: check runs every loop at its call) */
  if (!strcmp(backend, "seq") || !strcmp(backend, "threads")) {
    char *out;
    snprintf(chain_token, sizeof chain_token, "OP2_BACKEND=%s", backend);
    free(test_stdout_of(start_chain));
    out = test_stdout_of(run_chain);
    /* OP2_VALIDATE=1 runs every loop at its call: nothing to fuse then (values still checked) */
    const char *validate = getenv("OP2_VALIDATE");
    int validating = validate != NULL && strcmp(validate, "0") != 0;
    if (!validating && (strstr(out, "not fused") != NULL || strstr(out, "'add_one+twice'") == NULL)) {
      fprintf(stderr, "chain of compiled kernels not fused:\n%s", out);
      return 1;
    }
    free(out);
    op_fetch_data(chain_y, bout);
    for (i = 0; i < N; i++) CHECK_DBL(bout[i], 2.0);
    op_exit();
  }
  return 0;
}
