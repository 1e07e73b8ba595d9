/* Issue 11: the cuda backend. Where it cannot run (no driver, no NVRTC, no GPU),
 * OP2_BACKEND=cuda is OP2_ERR_BACKEND_UNAVAILABLE naming what is missing, never a crash; where it
 * can, an indirect increment and a reduction give the hand-computed values with each OP2_INC
 * strategy. On any backend, OP2_GENERATE_TARGETS=cuda writes one CUDA source per variant
 * (colour/blocks/stage/atomics, each also -soa) with the kernel inlined and the entry point extern "C";
 * OP2_CUDA_DEVICE must be an index. */
#include "test.h"
#include <unistd.h>

static int count(const char *hay, const char *needle)
{
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* edges 0..3 over a ring of 4 nodes, each adding (1, 2) to both ends; sum of the node ids. */
static void run_loops(void)
{
  int ring[8] = {0, 1, 1, 2, 2, 3, 3, 0};
  double acc[8] = {0}, ids[4] = {0, 1, 2, 3}, total = 0.5;
  op_set nodes = op_decl_set(4, "nodes"), edges = op_decl_set(4, "edges");
  op_map e2n = op_decl_map(edges, nodes, 2, ring, "e2n");
  op_dat a = op_decl_dat(nodes, 2, "double", acc, "acc");
  op_dat x = op_decl_dat(nodes, 1, "double", ids, "ids");
  op_kernel inc = op_decl_kernel("void add12(double *p, double *q) { p[0] += 1; p[1] += 2; q[0] += 1; q[1] += 2; }\n",
                                 "add12");
  op_kernel sum = op_decl_kernel("void sum(const double *x, double *t) { *t += *x; }\n", "sum");
  PAR_LOOP(inc, "add12", edges, op_arg_dat(a, 0, e2n, 2, "double", OP_INC), op_arg_dat(a, 1, e2n, 2, "double", OP_INC));
  PAR_LOOP(sum, "sum", nodes, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&total, 1, "double", OP_INC));
  CHECK_OK();
  op_fetch_data(a, acc);
  for (int n = 0; n < 4; n++) {
    CHECK_DBL(acc[2 * n], 2.0);
    CHECK_DBL(acc[2 * n + 1], 4.0);
  }
  CHECK_DBL(total, 6.5);
}

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t380-XXXXXX", gen[256], path[512];
  char *manifest;
  if (argc < 2) return 2;

  /* OP2_CUDA_DEVICE is an index. */
  op_set_error_handler(OP_ERRORS_RETURN);
  test_init_tokens(argv[0], "OP2_BACKEND=seq", "OP2_CUDA_DEVICE=first", (const char *)NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_init", "OP2_CUDA_DEVICE=first");

  if (!op_backend_available("cuda")) {
    test_init_tokens(argv[0], "OP2_BACKEND=cuda", (const char *)NULL);
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_init", "backend 'cuda'");
    /* what is missing is named: the driver, NVRTC, a device, or a recent enough one */
    {
      const char *m = op_last_error_message();
      CHECK(strstr(m, "CUDA driver") != NULL || strstr(m, "NVRTC") != NULL || strstr(m, "CUDA device") != NULL ||
            strstr(m, "compute capability") != NULL);
    }
    CHECK(op_decl_set(1, "x") == NULL);
    CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_set");
    /* and a bad device index is as unavailable, not a crash */
    test_init_tokens(argv[0], "OP2_BACKEND=cuda", "OP2_CUDA_DEVICE=99", (const char *)NULL);
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_init", "backend 'cuda'");
  } else {
    const char *incs[] = {"OP2_INC=auto", "OP2_INC=measure", "OP2_INC=atomics", "OP2_INC=colour", "OP2_INC=blocks", "OP2_INC=stage"};
    for (int i = 0; i < COUNT_OF(incs); i++) {
      test_init_tokens(argv[0], "OP2_BACKEND=cuda", incs[i], (const char *)NULL);
      CHECK_OK();
      run_loops();
      op_exit();
    }
    test_init_tokens(argv[0], "OP2_BACKEND=cuda", "OP_AUTO_SOA=1", (const char *)NULL);
    run_loops();
    op_exit();
  }
  op_set_error_handler(OP_ERRORS_ABORT);

  /* Static generation of the cuda target from a run on the backend under test. */
  CHECK(mkdtemp(dir) != NULL);
  snprintf(gen, sizeof gen, "OP2_GENERATE=%s/gen", dir);
  {
    char backend[64];
    snprintf(backend, sizeof backend, "OP2_BACKEND=%s", argv[1]);
    test_init_tokens(argv[0], backend, gen, "OP2_GENERATE_TARGETS=cuda", (const char *)NULL);
  }
  run_loops();
  op_exit();
  snprintf(path, sizeof path, "%s/gen/manifest.json", dir);
  manifest = test_read_file(path);
  CHECK(manifest != NULL);
  CHECK_INT(count(manifest, "\"target\": \"cuda\""), 9);
  CHECK_INT(count(manifest, "\"loop\": \"add12\""), 8);
  CHECK_INT(count(manifest, "\"variant\": \"colour\""), 1);
  CHECK_INT(count(manifest, "\"variant\": \"atomics-soa\""), 1);
  CHECK_INT(count(manifest, "\"variant\": \"blocks\""), 1);
  CHECK_INT(count(manifest, "\"variant\": \"plain\""), 1);
  CHECK_INT(count(manifest, "\"variant\": \"stage\""), 1);
  CHECK_INT(count(manifest, "\"variant\": \"stage-soa\""), 1);
  CHECK_INT(count(manifest, ".cu\""), 9);
  {
    const char *p = manifest;
    int files = 0, atomic = 0;
    while ((p = strstr(p, "\"file\": \"")) != NULL) {
      char *code;
      const char *q = p + 9, *e = strchr(q, '"');
      CHECK(e != NULL && e - q < 200);
      snprintf(path, sizeof path, "%s/gen/%.*s", dir, (int)(e - q), q);
      code = test_read_file(path);
      CHECK(code != NULL);
      CHECK(strstr(code, "extern \"C\" __global__ void op2_kernel(") != NULL);
      CHECK(strstr(code, "void add12(double *p") != NULL || strstr(code, "void sum(const double *x") != NULL);
      CHECK(strstr(code, "#include") == NULL);
      atomic += strstr(code, "atomicAdd(") != NULL;
      free(code);
      files++;
      p = e;
    }
    CHECK_INT(files, 9);
    CHECK_INT(atomic, 2);
  }
  free(manifest);
  return 0;
}
