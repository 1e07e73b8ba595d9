/*
 * airfoil_plain.c: Airfoil (2D inviscid Euler, NACA0012) in plain sequential C, no op2.
 *
 * An independent implementation of the numerics of shared/airfoil.md, used as the reference
 * that op2's seq backend must match bit for bit (both compiled with -ffp-contract=off) and as
 * the baseline of the benchmark.
 *
 * usage: airfoil-plain [--mesh FILE] [--iters N] [--rms-log FILE] [NAME=VALUE ...]
 *   NAME=VALUE tokens (op2 configuration such as OP2_BACKEND=seq) are accepted and ignored,
 *   so that airfoil and airfoil-plain take the same command line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airfoil_mesh.h"

/* constants: single-precision literals widened to double */
static double gam, gm1, cfl, eps, qinf[4];

static void set_constants(void) {
  gam = 1.4f;
  gm1 = gam - 1.0;
  cfl = 0.9f;
  eps = 0.05f;
  double mach = 0.4f;
  double p = 1.0, r = 1.0;
  double u = sqrt(gam * p / r) * mach;
  double e = p / (r * gm1) + 0.5 * u * u;
  qinf[0] = r;
  qinf[1] = r * u;
  qinf[2] = 0.0;
  qinf[3] = r * e;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(FILE *f, const char *prog) {
  fprintf(f, "usage: %s [--mesh FILE] [--iters N] [--rms-log FILE] [NAME=VALUE ...]\n", prog);
}

int main(int argc, char **argv) {
  const char *mesh_path = "new_grid.dat";
  const char *log_path = NULL;
  long niter = 1000;

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mesh") && i + 1 < argc) {
      mesh_path = argv[++i];
    } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
      char *e;
      niter = strtol(argv[++i], &e, 10);
      if (*e || e == argv[i] || niter < 0) {
        fprintf(stderr, "airfoil-plain: --iters needs a non-negative integer, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--rms-log") && i + 1 < argc) {
      log_path = argv[++i];
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout, argv[0]);
      return 0;
    } else if (argv[i][0] != '-' && strchr(argv[i], '=')) {
      /* op2 configuration token: nothing to configure here */
    } else {
      fprintf(stderr, "airfoil-plain: unknown or incomplete argument '%s'\n", argv[i]);
      usage(stderr, argv[0]);
      return 2;
    }
  }

  airfoil_mesh m;
  char err[1024];
  if (airfoil_mesh_read(mesh_path, &m, err, sizeof err)) {
    fprintf(stderr, "airfoil-plain: %s\n", err);
    return 1;
  }
  FILE *log = NULL;
  if (log_path && !(log = fopen(log_path, "w"))) {
    fprintf(stderr, "airfoil-plain: cannot write rms log '%s'\n", log_path);
    return 1;
  }
  printf("airfoil-plain: mesh '%s': %d nodes, %d cells, %d edges, %d boundary edges\n", mesh_path,
         m.nnode, m.ncell, m.nedge, m.nbedge);

  set_constants();
  const int ncell = m.ncell, nedge = m.nedge, nbedge = m.nbedge;
  const double *restrict x = m.x;
  const int *restrict cell = m.cell, *restrict edge = m.edge, *restrict ecell = m.ecell;
  const int *restrict bedge = m.bedge, *restrict becell = m.becell, *restrict bound = m.bound;
  double *restrict q = malloc(sizeof(double) * 4 * (size_t)ncell);
  double *restrict qold = malloc(sizeof(double) * 4 * (size_t)ncell);
  double *restrict res = malloc(sizeof(double) * 4 * (size_t)ncell);
  double *restrict adt = malloc(sizeof(double) * (size_t)ncell);
  if (!q || !qold || !res || !adt) {
    fprintf(stderr, "airfoil-plain: out of memory\n");
    return 1;
  }
  for (int c = 0; c < ncell; c++) {
    for (int n = 0; n < 4; n++) {
      q[4 * c + n] = qinf[n];
      res[4 * c + n] = 0.0;
    }
    adt[c] = 0.0;
  }

  double rms = 0.0, maxerr = 0.0;
  int errloc = 0;
  /* per-loop time and bytes moved (compulsory traffic: each dat and map touched once; for an
     indirect argument, the distinct elements it reaches), counted as op_timing_output does */
  enum { L_SAVE, L_ADT, L_RES, L_BRES, L_UPDATE, NLOOP };
  static const char *lname[NLOOP] = {"save_soln", "adt_calc", "res_calc", "bres_calc", "update"};
  double ltime[NLOOP] = {0}, lbytes[NLOOP];
  long lcalls[NLOOP] = {0};
  {
    char *seen_n = calloc((size_t)m.nnode, 1), *seen_c = calloc((size_t)ncell, 1);
    double bn = 0, bc = 0;
    if (!seen_n || !seen_c) {
      fprintf(stderr, "airfoil-plain: out of memory\n");
      return 1;
    }
    for (int e = 0; e < nbedge; e++) {
      for (int k = 0; k < 2; k++)
        if (!seen_n[bedge[2 * e + k]]++) bn++;
      if (!seen_c[becell[e]]++) bc++;
    }
    free(seen_n);
    free(seen_c);
    double nn = m.nnode, nc = ncell, ne = nedge, nb = nbedge;
    lbytes[L_SAVE] = nc * 32 * 2;
    lbytes[L_ADT] = nn * 16 + nc * 16 + nc * 32 + nc * 8;
    lbytes[L_RES] = nn * 16 + ne * 8 + nc * 32 + nc * 8 + nc * 32 * 2 + ne * 8;
    lbytes[L_BRES] = bn * 16 + nb * 8 + bc * 32 + bc * 8 + bc * 32 * 2 + nb * 4 + nb * 4;
    lbytes[L_UPDATE] = nc * (32 + 32 + 64 + 8);
  }
  double tl = now_s();
#define LOOP_DONE(l)                                                                              \
  do {                                                                                            \
    double tn = now_s();                                                                          \
    ltime[l] += tn - tl;                                                                          \
    lcalls[l]++;                                                                                  \
    tl = tn;                                                                                      \
  } while (0)

  double t0 = now_s();
  tl = t0;
  for (long iter = 1; iter <= niter; iter++) {
    /* save_soln */
    for (int c = 0; c < ncell; c++)
      for (int n = 0; n < 4; n++) qold[4 * c + n] = q[4 * c + n];
    LOOP_DONE(L_SAVE);

    for (int k = 0; k < 2; k++) {
      /* adt_calc: sides 1->2, 2->3, 3->4, 4->1 */
      for (int c = 0; c < ncell; c++) {
        const double *qc = q + 4 * c;
        double ri = 1.0 / qc[0];
        double u = ri * qc[1];
        double v = ri * qc[2];
        double cs = sqrt(gam * gm1 * (ri * qc[3] - 0.5 * (u * u + v * v)));
        double a = 0.0;
        for (int s = 0; s < 4; s++) {
          const double *p1 = x + 2 * cell[4 * c + s];
          const double *p2 = x + 2 * cell[4 * c + ((s + 1) & 3)];
          double dx = p2[0] - p1[0];
          double dy = p2[1] - p1[1];
          double t = fabs(u * dy - v * dx) + cs * sqrt(dx * dx + dy * dy);
          a = (s == 0) ? t : a + t;
        }
        adt[c] = a / cfl;
      }
      LOOP_DONE(L_ADT);

      /* res_calc */
      for (int e = 0; e < nedge; e++) {
        const double *xa = x + 2 * edge[2 * e], *xb = x + 2 * edge[2 * e + 1];
        const int c1 = ecell[2 * e], c2 = ecell[2 * e + 1];
        const double *q1 = q + 4 * c1, *q2 = q + 4 * c2;
        double dx = xa[0] - xb[0];
        double dy = xa[1] - xb[1];
        double ri1 = 1.0 / q1[0];
        double p1 = gm1 * (q1[3] - 0.5 * ri1 * (q1[1] * q1[1] + q1[2] * q1[2]));
        double vol1 = ri1 * (q1[1] * dy - q1[2] * dx);
        double ri2 = 1.0 / q2[0];
        double p2 = gm1 * (q2[3] - 0.5 * ri2 * (q2[1] * q2[1] + q2[2] * q2[2]));
        double vol2 = ri2 * (q2[1] * dy - q2[2] * dx);
        double mu = 0.5 * (adt[c1] + adt[c2]) * eps;
        double f0 = 0.5 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]);
        double f1 = 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]);
        double f2 = 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]);
        double f3 = 0.5 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]);
        double *r1 = res + 4 * c1, *r2 = res + 4 * c2;
        r1[0] += f0;
        r2[0] -= f0;
        r1[1] += f1;
        r2[1] -= f1;
        r1[2] += f2;
        r2[2] -= f2;
        r1[3] += f3;
        r2[3] -= f3;
      }
      LOOP_DONE(L_RES);

      /* bres_calc */
      for (int e = 0; e < nbedge; e++) {
        const double *xa = x + 2 * bedge[2 * e], *xb = x + 2 * bedge[2 * e + 1];
        const int c1 = becell[e];
        const double *q1 = q + 4 * c1;
        double *r1 = res + 4 * c1;
        double dx = xa[0] - xb[0];
        double dy = xa[1] - xb[1];
        double ri1 = 1.0 / q1[0];
        double p1 = gm1 * (q1[3] - 0.5 * ri1 * (q1[1] * q1[1] + q1[2] * q1[2]));
        if (bound[e] == 1) {
          r1[1] += p1 * dy;
          r1[2] += -(p1 * dx);
        } else {
          double vol1 = ri1 * (q1[1] * dy - q1[2] * dx);
          double ri2 = 1.0 / qinf[0];
          double p2 = gm1 * (qinf[3] - 0.5 * ri2 * (qinf[1] * qinf[1] + qinf[2] * qinf[2]));
          double vol2 = ri2 * (qinf[1] * dy - qinf[2] * dx);
          double mu = adt[c1] * eps;
          r1[0] += 0.5 * (vol1 * q1[0] + vol2 * qinf[0]) + mu * (q1[0] - qinf[0]);
          r1[1] += 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * qinf[1] + p2 * dy) + mu * (q1[1] - qinf[1]);
          r1[2] += 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * qinf[2] - p2 * dx) + mu * (q1[2] - qinf[2]);
          r1[3] += 0.5 * (vol1 * (q1[3] + p1) + vol2 * (qinf[3] + p2)) + mu * (q1[3] - qinf[3]);
        }
      }
      LOOP_DONE(L_BRES);

      /* update */
      rms = 0.0;
      maxerr = 0.0;
      errloc = 0;
      for (int c = 0; c < ncell; c++) {
        double adti = 1.0 / adt[c];
        for (int n = 0; n < 4; n++) {
          double del = adti * res[4 * c + n];
          q[4 * c + n] = qold[4 * c + n] - del;
          res[4 * c + n] = 0.0;
          rms += del * del;
          if (del * del > maxerr) {
            maxerr = del * del;
            errloc = c;
          }
        }
      }
      LOOP_DONE(L_UPDATE);
    }
    rms = sqrt(rms / (double)ncell);
    if (log) fprintf(log, "%ld %.17e\n", iter, rms);
    if (iter % 100 == 0) printf(" %ld  %10.5e\n", iter, rms);
    tl = now_s(); /* the driver's own time is not any loop's */
  }
  double t = now_s() - t0;
  /* Printed, as airfoil does, so that the compiler keeps the maxerr/errloc reduction of the
     update loop: while they were unused GCC dropped it as dead code and the baseline did
     less work than op2's update (0.059 against 0.100 ms per call on the 20K mesh). */
  if (niter > 0)
    printf("airfoil: last stage: largest squared change %.6e, in cell %d\n", maxerr, errloc);
  printf("plain C timing\n");
  printf("  %-24s %8s %12s %12s %10s\n", "loop", "calls", "total (s)", "mean (ms)", "GB/s");
  double ttot = 0.0;
  for (int l = 0; l < NLOOP; l++) {
    ttot += ltime[l];
    printf("  %-24s %8ld %12.6f %12.6f %10.3f\n", lname[l], lcalls[l], ltime[l],
           lcalls[l] ? 1e3 * ltime[l] / (double)lcalls[l] : 0.0,
           ltime[l] > 0 ? (double)lcalls[l] * lbytes[l] / ltime[l] / 1e9 : 0.0);
  }
  printf("  %-24s %8s %12.6f\n", "total", "", ttot);
  if (log) fclose(log);
  printf("airfoil: %ld iterations, %.3f s, %.3f ms/iter\n", niter, t,
         niter ? 1e3 * t / (double)niter : 0.0);

  free(q);
  free(qold);
  free(res);
  free(adt);
  am_free(&m);
  return 0;
}
