/*
 * op2-meshgen: structured C-mesh around a NACA0012 aerofoil, written in Airfoil's
 * new_grid.dat format (read and validated by examples-c/airfoil/airfoil_mesh.h).
 *
 *   op2-meshgen [--cells N | --ni I --nj J] [--far R] [-o FILE]
 *
 *   --cells N   about N cells: I = sqrt(2N) rounded to an even number, J = N / I
 *               (720000 gives the standard 1200 x 600 benchmark mesh)
 *   --ni I      cells around the C (wake lower side, aerofoil, wake upper side); even, >= 10
 *   --nj J      cells from the wall to the far field; >= 2
 *   --far R     far field about R chords from the aerofoil (default 9)
 *   -o FILE     output file (default new_grid.dat; "-" for standard output)
 *
 * Construction (the classic parabolic C-grid): with z0 a point just inside the leading edge,
 * zeta = sqrt(z - z0) (branch cut along the wake) unwraps the aerofoil and its wake cut into
 * a low bump on the line eta = 0. The grid is uniform in xi = Re(zeta) (with the trailing
 * edge on a grid line) and, on each xi line, uniform in eta from the bump to eta = H; mapping
 * back with z = z0 + zeta^2 gives smooth, nearly orthogonal cells that cluster naturally at
 * the leading edge and near the wall, a parabolic far field about R chords away upstream and
 * above/below, and a downstream boundary about R chords behind the aerofoil.
 *
 * Conventions (checked by tests/airfoil/check_mesh.c, and the same as OP2's own meshes):
 * nodes are numbered j * (I + 1) + i and cells j * I + i; cells are counter-clockwise; an edge
 * "a b c1 c2" has its normal (yb - ya... ) i.e. (dy, -dx) with (dx, dy) = xa - xb pointing
 * from c1 into c2, and a boundary edge's normal points out of its cell. The wake cut has two
 * coincident rows of nodes; the cut's interior edges name the lower side's nodes. Boundary
 * flags: 1 = aerofoil wall, 2 = far field.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;
static const double THICK = 0.12; /* NACA 0012 */
static double z0x;                /* map origin: half the leading-edge radius inside the nose */

/* aerofoil surface point for parameter s in [-1, 1]: s < 0 lower, s > 0 upper, x = s^2 */
static void surface(double s, double *x, double *y) {
  double xc = s * s, r = fabs(s);
  double t = 5.0 * THICK *
             (0.2969 * r - 0.1260 * xc - 0.3516 * xc * xc + 0.2843 * xc * xc * xc -
              0.1036 * xc * xc * xc * xc);
  if (fabs(s) >= 1.0) t = 0.0; /* closed trailing edge, exactly */
  *x = xc;
  *y = s < 0 ? -t : t;
}

/* zeta = sqrt(z - z0) with the branch cut along the wake (arg in [0, 2pi) ) */
static void to_zeta(double x, double y, int lower, double *xi, double *eta) {
  double wx = x - z0x, wy = y;
  double r = hypot(wx, wy);
  double th = atan2(wy, wx);
  if (lower && th <= 0.0) th += 2.0 * PI;
  if (!lower && th < 0.0) th += 2.0 * PI;
  double sr = sqrt(r);
  *xi = sr * cos(0.5 * th);
  *eta = sr * sin(0.5 * th);
}

static void surface_zeta(double s, double *xi, double *eta) {
  double x, y;
  surface(s, &x, &y);
  to_zeta(x, y, s < 0, xi, eta);
}

/* the surface parameter whose image has Re(zeta) = xi (Re(zeta) increases with s) */
static double solve_s(double xi) {
  double lo = -1.0, hi = 1.0;
  for (int it = 0; it < 200 && hi - lo > 1e-17; it++) {
    double mid = 0.5 * (lo + hi), a, b;
    surface_zeta(mid, &a, &b);
    if (a < xi)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: op2-meshgen [--cells N | --ni I --nj J] [--far R] [-o FILE]\n"
          "  NACA0012 C-mesh in new_grid.dat format (Airfoil).\n"
          "  --cells N  about N cells (720000: the standard 1200 x 600 mesh)\n"
          "  --ni I     cells around the C (even, >= 10);  --nj J  cells wall to far field (>= 2)\n"
          "  --far R    far field distance in chords (default 9)\n"
          "  -o FILE    output (default new_grid.dat, '-' = stdout)\n");
}

static long parse_long(const char *opt, const char *s) {
  char *e;
  errno = 0;
  long v = strtol(s, &e, 10);
  if (*e || e == s || errno) {
    fprintf(stderr, "op2-meshgen: %s needs an integer, got '%s'\n", opt, s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  long ncells_req = -1, ni = -1, nj = -1;
  double far = 9.0;
  const char *out = "new_grid.dat";
  for (int k = 1; k < argc; k++) {
    const char *a = argv[k];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    if (k + 1 >= argc) {
      fprintf(stderr, "op2-meshgen: unknown or incomplete argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
    if (!strcmp(a, "--cells"))
      ncells_req = parse_long(a, argv[++k]);
    else if (!strcmp(a, "--ni"))
      ni = parse_long(a, argv[++k]);
    else if (!strcmp(a, "--nj"))
      nj = parse_long(a, argv[++k]);
    else if (!strcmp(a, "--far")) {
      char *e;
      far = strtod(argv[++k], &e);
      if (*e || e == argv[k] || !(far >= 2.0 && far <= 1000.0)) {
        fprintf(stderr, "op2-meshgen: --far needs a number in [2, 1000], got '%s'\n", argv[k]);
        return 2;
      }
    } else if (!strcmp(a, "-o"))
      out = argv[++k];
    else {
      fprintf(stderr, "op2-meshgen: unknown argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (ncells_req >= 0 && (ni >= 0 || nj >= 0)) {
    fprintf(stderr, "op2-meshgen: give either --cells or --ni/--nj, not both\n");
    return 2;
  }
  if (ncells_req < 0 && ni < 0 && nj < 0) ncells_req = 720000;
  if (ncells_req >= 0) {
    if (ncells_req < 20) {
      fprintf(stderr, "op2-meshgen: --cells must be at least 20\n");
      return 2;
    }
    ni = 2 * lround(sqrt(2.0 * (double)ncells_req) / 2.0);
    if (ni < 10) ni = 10;
    nj = lround((double)ncells_req / (double)ni);
    if (nj < 2) nj = 2;
  } else if (ni < 0 || nj < 0) {
    fprintf(stderr, "op2-meshgen: --ni and --nj go together\n");
    return 2;
  }
  if (ni < 10 || ni % 2 || nj < 2) {
    fprintf(stderr, "op2-meshgen: --ni must be even and >= 10, --nj >= 2 (got %ld x %ld)\n", ni, nj);
    return 2;
  }
  if ((double)ni * (double)nj > 2.0e8) {
    fprintf(stderr, "op2-meshgen: %ld x %ld cells is too many (at most 2e8)\n", ni, nj);
    return 2;
  }

  /* map origin half the leading-edge radius (1.1019 t^2) inside the nose */
  z0x = 0.5 * 1.1019 * THICK * THICK;
  const double xi_te = sqrt(1.0 - z0x);
  const double xi_max = sqrt(far) * xi_te;
  const double H = xi_max;

  /* cells on the aerofoil (even) and on each side of the wake, for nearly uniform d(xi) */
  long naf = 2 * lround((double)ni * xi_te / (2.0 * xi_max) / 1.0);
  if (naf < 4) naf = 4;
  if (naf > ni - 2) naf = ni - 2;
  const long nw = (ni - naf) / 2;
  const long NI = ni + 1, NJ = nj + 1;
  const long nnode = NI * NJ, ncell = ni * nj;
  const long nedge = (ni - 1) * nj + ni * (nj - 1) + nw;
  const long nbedge = naf + ni + 2 * nj;

  double *xi = malloc(sizeof(double) * (size_t)NI);
  double *etab = malloc(sizeof(double) * (size_t)NI);
  double *bx = malloc(sizeof(double) * (size_t)NI);
  double *by = malloc(sizeof(double) * (size_t)NI);
  double *X = malloc(sizeof(double) * 2 * (size_t)nnode);
  if (!xi || !etab || !bx || !by || !X) {
    fprintf(stderr, "op2-meshgen: out of memory\n");
    return 1;
  }

  /* xi of each grid line, built on the lower half and mirrored so both halves agree exactly */
  for (long i = 0; i <= ni / 2; i++) {
    double v;
    if (i <= nw)
      v = -xi_max + (double)i * ((xi_max - xi_te) / (double)nw);
    else
      v = -xi_te + (double)(i - nw) * (2.0 * xi_te / (double)naf);
    if (i == nw) v = -xi_te;
    if (2 * i == ni) v = 0.0;
    xi[i] = v;
    xi[ni - i] = -v;
  }
  /* the wall: aerofoil points on the xi lines, and the height of the bump */
  for (long i = 0; i <= ni; i++) {
    if (i <= nw || i >= ni - nw) { /* wake cut (and the trailing edge) */
      bx[i] = z0x + xi[i] * xi[i];
      by[i] = 0.0;
      etab[i] = 0.0;
      if (i == nw || i == ni - nw) bx[i] = 1.0;
    } else {
      double s = (2 * i == ni) ? 0.0 : solve_s(xi[i]), a, b;
      surface(s, &bx[i], &by[i]);
      to_zeta(bx[i], by[i], s < 0, &a, &b);
      etab[i] = b;
    }
  }
  /* mirror the aerofoil so upper and lower surfaces are exact reflections */
  for (long i = 0; i < ni / 2; i++) {
    bx[ni - i] = bx[i];
    by[ni - i] = -by[i];
    etab[ni - i] = etab[i];
  }

  for (long j = 0; j <= nj; j++) {
    double f = (double)j / (double)nj;
    for (long i = 0; i <= ni; i++) {
      double *p = X + 2 * (j * NI + i);
      if (j == 0) {
        p[0] = bx[i];
        p[1] = by[i];
      } else {
        double a = xi[i];
        double b = (j == nj) ? H : etab[i] + f * (H - etab[i]);
        p[0] = z0x + (a * a - b * b);
        p[1] = 2.0 * a * b;
      }
    }
  }

  /* self-check: every cell counter-clockwise with positive area */
  for (long j = 0; j < nj; j++)
    for (long i = 0; i < ni; i++) {
      long n[4] = {j * NI + i, j * NI + i + 1, (j + 1) * NI + i + 1, (j + 1) * NI + i};
      double area = 0.0;
      for (int k = 0; k < 4; k++) {
        const double *p = X + 2 * n[k], *q = X + 2 * n[(k + 1) & 3];
        area += p[0] * q[1] - q[0] * p[1];
      }
      if (!(area > 0.0)) {
        fprintf(stderr, "op2-meshgen: internal error: cell (%ld, %ld) has area %g\n", i, j,
                0.5 * area);
        return 1;
      }
    }

  /* write */
  FILE *f;
  char *tmp = NULL;
  if (!strcmp(out, "-")) {
    f = stdout;
  } else {
    tmp = malloc(strlen(out) + 16);
    sprintf(tmp, "%s.tmp", out);
    f = fopen(tmp, "w");
    if (!f) {
      fprintf(stderr, "op2-meshgen: cannot write '%s': %s\n", tmp, strerror(errno));
      return 1;
    }
  }
  static char buf[1 << 20];
  setvbuf(f, buf, _IOFBF, sizeof buf);
  fprintf(f, "%ld %ld %ld %ld\n", nnode, ncell, nedge, nbedge);
  for (long n = 0; n < nnode; n++) fprintf(f, "%.17g %.17g\n", X[2 * n], X[2 * n + 1]);
  for (long j = 0; j < nj; j++)
    for (long i = 0; i < ni; i++)
      fprintf(f, "%ld %ld %ld %ld\n", j * NI + i, j * NI + i + 1, (j + 1) * NI + i + 1,
              (j + 1) * NI + i);
  /* interior edges, cell by cell: the wake cut (below), east side, north side */
  for (long j = 0; j < nj; j++)
    for (long i = 0; i < ni; i++) {
      long c = j * ni + i;
      if (j == 0 && i < nw) /* lower wake cell i and upper wake cell ni-1-i share the cut */
        fprintf(f, "%ld %ld %ld %ld\n", i + 1, i, c, ni - 1 - i);
      if (i + 1 < ni) /* east: nodes (i+1, j+1) -> (i+1, j); normal points to cell i+1 */
        fprintf(f, "%ld %ld %ld %ld\n", (j + 1) * NI + i + 1, j * NI + i + 1, c, c + 1);
      if (j + 1 < nj) /* north: nodes (i, j+1) -> (i+1, j+1); normal points to cell j+1 */
        fprintf(f, "%ld %ld %ld %ld\n", (j + 1) * NI + i, (j + 1) * NI + i + 1, c, c + ni);
    }
  /* boundary edges: wall, outer far field, the two downstream ends */
  for (long i = nw; i < ni - nw; i++) fprintf(f, "%ld %ld %ld 1\n", i + 1, i, i);
  for (long i = 0; i < ni; i++)
    fprintf(f, "%ld %ld %ld 2\n", nj * NI + i, nj * NI + i + 1, (nj - 1) * ni + i);
  for (long j = 0; j < nj; j++) fprintf(f, "%ld %ld %ld 2\n", j * NI, (j + 1) * NI, j * ni);
  for (long j = 0; j < nj; j++)
    fprintf(f, "%ld %ld %ld 2\n", (j + 1) * NI + ni, j * NI + ni, j * ni + ni - 1);

  if (fflush(f) != 0 || ferror(f) || (f != stdout && fclose(f) != 0)) {
    fprintf(stderr, "op2-meshgen: error writing '%s': %s\n", tmp ? tmp : "stdout", strerror(errno));
    if (tmp) remove(tmp);
    return 1;
  }
  if (tmp && rename(tmp, out) != 0) {
    fprintf(stderr, "op2-meshgen: cannot rename '%s' to '%s': %s\n", tmp, out, strerror(errno));
    remove(tmp);
    return 1;
  }
  fprintf(stderr,
          "op2-meshgen: NACA0012 C-mesh %ld x %ld: %ld nodes, %ld cells, %ld edges, %ld boundary "
          "edges (%ld wall, %ld far field) -> %s\n",
          ni, nj, nnode, ncell, nedge, nbedge, naf, ni + 2 * nj, out);
  free(tmp);
  free(xi);
  free(etab);
  free(bx);
  free(by);
  free(X);
  return 0;
}
