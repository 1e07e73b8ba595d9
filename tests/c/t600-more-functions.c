/* More of OP2's functions: op_timers, op_rank / op_num_ranks / op_mpi_barrier /
 * op_get_global_set_offset (one process), op_upload_all / op_upload_dat / op_download_dat
 * (no-ops on host backends that still validate handles), op_printf (root prints),
 * op_print_dat_to_binfile (int count, int dim, raw rows), op_decl_dat_temp_char /
 * op_free_dat_temp_char (zeros; freeing makes the handle stale, other dats keep working, a loop
 * with an op_arg of the freed dat is a named error). */
#include "test.h"

#include <fcntl.h>
#include <unistd.h>

static char dir[] = "/tmp/op2-t600-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static const char *add_src = "void add1(double *x) { x[0] += 1.0; x[1] += 2.0; }\n";

int main(int argc, char **argv)
{
  char path[300];
  test_init(argc, argv);
  CHECK(mkdtemp(dir) != NULL);
  atexit(cleanup);

  /* op_timers: wall clock advances, CPU time is non-negative, cpu may be NULL. */
  {
    double c1, e1, c2, e2;
    volatile double sink = 0;
    op_timers(&c1, &e1);
    CHECK_OK();
    for (int i = 0; i < 2000000; i++) sink += i * 0.5;
    op_timers(&c2, &e2);
    CHECK(e2 >= e1 && e1 > 1e9); /* seconds since the epoch */
    CHECK(c1 >= 0.0 && c2 >= c1);
    op_timers(NULL, &e2);
    CHECK_OK();
    op_set_error_handler(OP_ERRORS_RETURN);
    op_timers(&c1, NULL);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_timers", "et");
    op_set_error_handler(OP_ERRORS_ABORT);
  }

  op_set cells = op_decl_set(3, "cells");
  double xv[6] = {1, 2, 3, 4, 5, 6};
  op_dat x = op_decl_dat(cells, 2, "double", xv, "x");

  /* One process: rank 0 of 1, offset 0; barrier and transfers succeed. */
  {
    int rank = -1;
    op_rank(&rank);
    CHECK_INT(rank, 0);
    CHECK_INT(op_num_ranks(), 1);
    op_mpi_barrier();
    CHECK_OK();
    CHECK_INT(op_get_global_set_offset(cells), 0);
    op_upload_all();
    CHECK_OK();
    op_upload_dat(x);
    CHECK_OK();
    op_download_dat(x);
    CHECK_OK();
    op_set_error_handler(OP_ERRORS_RETURN);
    op_rank(NULL);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_rank", "rank");
    CHECK_INT(op_get_global_set_offset(NULL), -1);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_get_global_set_offset", "set");
    op_upload_dat(NULL);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_upload_dat", "dat");
    op_download_dat((op_dat)cells);
    CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_download_dat", "not an op_dat");
    op_set_error_handler(OP_ERRORS_ABORT);
  }

  /* op_printf prints on the root process: capture stdout in a file. */
  {
    int saved, fd;
    char *got;
    snprintf(path, sizeof path, "%s/printf.txt", dir);
    fflush(stdout);
    saved = dup(1);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(saved >= 0 && fd >= 0);
    CHECK(dup2(fd, 1) == 1);
    close(fd);
    op_printf("iter %d rms %.3f %s\n", 7, 0.25, "ok");
    fflush(stdout);
    CHECK(dup2(saved, 1) == 1);
    close(saved);
    got = test_read_file(path);
    CHECK(got != NULL);
    CHECK_STR(got, "iter 7 rms 0.250 ok\n");
    free(got);
  }

  /* Binary file: int count, int dim, then the rows. */
  {
    FILE *f;
    int hdr[2];
    double back[6];
    snprintf(path, sizeof path, "%s/x.bin", dir);
    op_print_dat_to_binfile(x, path);
    CHECK_OK();
    f = fopen(path, "rb");
    CHECK(f != NULL);
    CHECK(fread(hdr, sizeof(int), 2, f) == 2);
    CHECK_INT(hdr[0], 3);
    CHECK_INT(hdr[1], 2);
    CHECK(fread(back, sizeof(double), 6, f) == 6);
    CHECK(fgetc(f) == EOF);
    fclose(f);
    for (int i = 0; i < 6; i++) CHECK_DBL(back[i], xv[i]);
    op_set_error_handler(OP_ERRORS_RETURN);
    snprintf(path, sizeof path, "%s/no/such/x.bin", dir);
    op_print_dat_to_binfile(x, path);
    CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_binfile", "'x'", "no/such");
    op_print_dat_to_binfile(x, NULL);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_print_dat_to_binfile", "file");
    op_set_error_handler(OP_ERRORS_ABORT);
  }

  /* Temporary dats: zeros, usable in loops, freed; stale afterwards. */
  {
    op_kernel add = op_decl_kernel(add_src, "add1");
    op_dat t = op_decl_dat_temp_char(cells, 2, "double", (int)sizeof(double), "tmp");
    op_dat after;
    op_arg stale;
    double v[6];
    CHECK(t != NULL);
    op_fetch_data(t, v);
    for (int i = 0; i < 6; i++) CHECK_DBL(v[i], 0.0);
    PAR_LOOP(add, "add_tmp", cells, op_arg_dat(t, -1, OP_ID, 2, "double", OP_RW));
    op_fetch_data(t, v);
    CHECK_DBL(v[4], 1.0);
    CHECK_DBL(v[5], 2.0);
    stale = op_arg_dat(t, -1, OP_ID, 2, "double", OP_RW);
    CHECK_INT(op_free_dat_temp_char(t), 1);
    CHECK_OK();

    op_set_error_handler(OP_ERRORS_RETURN);
    op_fetch_data(t, v);
    CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_fetch_data", "'tmp'", "freed");
    op_par_loop(add, "add_freed", cells, 1, &stale);
    CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_par_loop 'add_freed'", "arg 0", "'tmp'", "freed");
    CHECK_INT(op_free_dat_temp_char(t), 0);
    CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_free_dat_temp_char", "'tmp'", "freed");
    CHECK_INT(op_free_dat_temp_char(x), 0);
    CHECK_ERR(OP2_ERR_BAD_NAME, "op_free_dat_temp_char", "'x'", "only temporary dats");
    CHECK(op_decl_dat_temp_char(cells, 2, "double", 4, "bad") == NULL);
    CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat_temp_char", "'bad'", "element size 4");
    op_set_error_handler(OP_ERRORS_ABORT);

    /* Other dats, old and new, are untouched and keep working. */
    after = op_decl_dat_temp_char(cells, 2, "double", (int)sizeof(double), "tmp2");
    PAR_LOOP(add, "add_x", cells, op_arg_dat(x, -1, OP_ID, 2, "double", OP_RW));
    PAR_LOOP(add, "add_tmp2", cells, op_arg_dat(after, -1, OP_ID, 2, "double", OP_RW));
    op_fetch_data(x, v);
    for (int i = 0; i < 6; i++) CHECK_DBL(v[i], xv[i] + (i % 2 ? 2.0 : 1.0));
    op_fetch_data(after, v);
    CHECK_DBL(v[0], 1.0);
    CHECK_DBL(v[1], 2.0);
    CHECK_INT(op_free_dat_temp_char(after), 1);
  }

  op_exit();
  /* Outside a session: the queries answer for one process, transfers need a session. */
  CHECK_INT(op_num_ranks(), 1);
  op_set_error_handler(OP_ERRORS_RETURN);
  op_upload_all();
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_upload_all");
  op_mpi_barrier();
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_mpi_barrier");
  return 0;
}
