/* Concurrent processes compiling the same loops on a cold JIT cache: 4 processes at once,
 * 10 rounds (4 on device backends, whose cold compiles are PoCL's or NVRTC's and far heavier:
 * the cache races under test are the same), each round on a fresh cache directory; every
 * process must get correct results (never a truncated or foreign library), and no temporary
 * files may be left behind. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "op2.h"

#define NPROC 4
#define ROUNDS 10
#define DEVICE_ROUNDS 4
#define NKERNELS 3

static int child(const char *backend, int round, int gate) {
  char token[64], c;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  char *argv[] = {"t300", token, NULL};
  /* Wait until the parent opens the gate, so all processes compile at the same moment. */
  if (read(gate, &c, 1) < 0) return 10;
  op_set_error_handler(OP_ERRORS_RETURN);
  op_init(2, argv, 0);
  if (op_last_error_code() != 0) return 11;
  op_set set = op_decl_set(100, "s");
  op_dat y = op_decl_dat(set, 1, "int", NULL, "y");
  for (int k = 0; k < NKERNELS; k++) {
    char src[256];
    /* A different kernel per round and per k: a cold key each time. */
    snprintf(src, sizeof src, "void fill(int *y, const int *i) { *y = *i * %d + %d; }\n", k + 2, round);
    op_kernel kern = op_decl_kernel(src, "fill");
    OP_PAR_LOOP(kern, "fill", set, op_arg_dat(y, -1, OP_ID, 1, "int", OP_WRITE), op_arg_idx(-1, OP_ID));
    if (op_last_error_code() != 0) {
      fprintf(stderr, "round %d kernel %d: %s\n", round, k, op_last_error_message());
      return 12;
    }
    int out[100];
    op_fetch_data(y, out);
    for (int i = 0; i < 100; i++)
      if (out[i] != i * (k + 2) + round) return 13;
  }
  op_exit();
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int failures = 0;
  int device = strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0;
  int rounds = device ? DEVICE_ROUNDS : ROUNDS;
  for (int round = 0; round < rounds; round++) {
    char dir[] = "/tmp/op2-t300-XXXXXX";
    if (!mkdtemp(dir)) return 3;
    chmod(dir, 0700);
    setenv("OP2_CACHE_DIR", dir, 1);
    int gate[2];
    if (pipe(gate) != 0) return 4;
    pid_t pids[NPROC];
    for (int p = 0; p < NPROC; p++) {
      pids[p] = fork();
      if (pids[p] == 0) {
        close(gate[1]);
        _exit(child(argv[1], round, gate[0]));
      }
    }
    close(gate[0]);
    close(gate[1]); /* opens the gate: every read returns */
    for (int p = 0; p < NPROC; p++) {
      int status = 0;
      waitpid(pids[p], &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "t300: round %d process %d failed (status %d)\n", round, p, status);
        failures++;
      }
    }
    /* Exactly one library and one source per kernel; no temporaries left. */
    DIR *d = opendir(dir);
    struct dirent *e;
    int libs = 0, tmps = 0;
    char path[512];
    while (d && (e = readdir(d))) {
      if (strstr(e->d_name, ".tmp")) tmps++;
      size_t n = strlen(e->d_name);
      if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0) libs++;
      if (e->d_name[0] != '.') {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
      }
    }
    if (d) closedir(d);
    rmdir(dir);
    if (libs != NKERNELS || tmps != 0) {
      fprintf(stderr, "t300: round %d: %d libraries (want %d), %d temporaries\n", round, libs, NKERNELS, tmps);
      failures++;
    }
  }
  return failures != 0;
}
