/* bench/pingpong.c: MPI ping-pong between ranks 0 and 1 (run with exactly 2 processes).
 *
 *   mpicc -O2 -o pingpong bench/pingpong.c && mpiexec -n 2 ./pingpong [--reps N] [--rounds R]
 *
 * For each message size (8 B to 4 MiB, powers of 4, and 1 MiB) rank 0 sends, rank 1 sends it
 * back, N times (after N/10 warm-up exchanges); the one-way time is half the round trip. R
 * rounds of the whole sweep are taken and the median of each size's per-round time is printed,
 * as a table and as two summary lines the scaling model reads:
 *
 *   pingpong: latency_us 0.42 (8 B one way, median of R rounds)
 *   pingpong: bandwidth_GBps 9.8 (1 MiB one way, median of R rounds)
 *
 * Blocking MPI_Send/MPI_Recv, the same buffer each time (cache-warm: what a halo exchange of a
 * recently written dat sees), MPI_BYTE. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* one-way seconds per message of n bytes, averaged over reps round trips */
static double pingpong(int rank, char *buf, int n, int reps) {
  int warm = reps / 10 + 1;
  double t0 = 0.0;
  for (int i = 0; i < warm + reps; i++) {
    if (i == warm) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    if (rank == 0) {
      MPI_Send(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
      MPI_Recv(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - t0) / (2.0 * reps);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reps = 2000, rounds = 5;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else {
      if (rank == 0) fprintf(stderr, "usage: pingpong [--reps N] [--rounds R]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (size != 2 || reps < 1 || rounds < 1 || rounds > 101) {
    if (rank == 0) fprintf(stderr, "pingpong: needs exactly 2 processes, reps >= 1, 1 <= rounds <= 101\n");
    MPI_Finalize();
    return 2;
  }
  enum { NSIZES = 11 };
  const int sizes[NSIZES] = {8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288, 1048576, 4194304};
  char *buf = malloc(4194304);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(buf, 1, 4194304);
  double t[NSIZES][101];
  for (int r = 0; r < rounds; r++)
    for (int s = 0; s < NSIZES; s++) {
      /* fewer repetitions for big messages: about the same time per size */
      int n = sizes[s] >= 65536 ? reps / 20 + 1 : reps;
      t[s][r] = pingpong(rank, buf, sizes[s], n);
    }
  if (rank == 0) {
    printf("pingpong: 2 processes, %d rounds, median one-way time per message\n", rounds);
    printf("%10s %12s %12s\n", "bytes", "us", "GB/s");
    double lat = 0.0, bw = 0.0;
    for (int s = 0; s < NSIZES; s++) {
      qsort(t[s], (size_t)rounds, sizeof(double), cmp_double);
      double med = t[s][rounds / 2];
      printf("%10d %12.3f %12.3f\n", sizes[s], med * 1e6, sizes[s] / med * 1e-9);
      if (sizes[s] == 8) lat = med;
      if (sizes[s] == 1048576) bw = sizes[s] / med;
    }
    printf("pingpong: latency_us %.3f (8 B one way, median of %d rounds)\n", lat * 1e6, rounds);
    printf("pingpong: bandwidth_GBps %.3f (1 MiB one way, median of %d rounds)\n", bw * 1e-9, rounds);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
