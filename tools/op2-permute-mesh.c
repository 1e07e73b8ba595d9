/*
 * op2-permute-mesh: renumbers an Airfoil mesh (new_grid.dat format) at random, to measure what
 * a poor element order costs and what op_renumber recovers.
 *
 *   op2-permute-mesh [--seed N] [--keep nodes,cells,edges,bedges] IN OUT
 *
 * Nodes, cells, edges and boundary edges each get an independent random permutation (a seeded
 * xorshift generator, so a seed always gives the same mesh); --keep leaves the named sets in
 * their order. The mesh is the same: every edge keeps its orientation and its two cells in
 * order, coordinates are written with %.17g (exact round trip), so Airfoil's results on the
 * permuted mesh equal the original's up to the order of floating-point sums.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airfoil_mesh.h"

static unsigned long long state;

static unsigned long long next(void)
{
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

/* perm[old] = new: a uniformly random permutation of 0..n-1 (identity when keep) */
static int *permutation(int n, int keep)
{
  int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!p) return NULL;
  for (int i = 0; i < n; i++) p[i] = i;
  if (!keep)
    for (int i = n - 1; i > 0; i--) {
      int j = (int)(next() % (unsigned long long)(i + 1)), t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
  return p;
}

/* whether `name` is one of the comma-separated words of `list` */
static int kept(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

/* inv[new] = old */
static int *inverse(const int *p, int n)
{
  int *q = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!q) return NULL;
  for (int i = 0; i < n; i++) q[p[i]] = i;
  return q;
}

int main(int argc, char **argv)
{
  unsigned long long seed = 1;
  const char *keep = "", *in = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      char *e;
      seed = strtoull(argv[++i], &e, 10);
      if (*e || e == argv[i]) {
        fprintf(stderr, "op2-permute-mesh: --seed needs an integer, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--keep") && i + 1 < argc) {
      keep = argv[++i];
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: %s [--seed N] [--keep nodes,cells,edges,bedges] IN OUT\n", argv[0]);
      return 0;
    } else if (!in) {
      in = argv[i];
    } else if (!out) {
      out = argv[i];
    } else {
      fprintf(stderr, "op2-permute-mesh: unexpected argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (!in || !out) {
    fprintf(stderr, "usage: %s [--seed N] [--keep nodes,cells,edges,bedges] IN OUT\n", argv[0]);
    return 2;
  }
  state = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
  if (!state) state = 1;

  airfoil_mesh m;
  char err[1024];
  if (airfoil_mesh_read(in, &m, err, sizeof err)) {
    fprintf(stderr, "op2-permute-mesh: %s\n", err);
    return 1;
  }
  int *pn = permutation(m.nnode, kept(keep, "nodes"));
  int *pc = permutation(m.ncell, kept(keep, "cells"));
  int *pe = permutation(m.nedge, kept(keep, "edges"));
  int *pb = permutation(m.nbedge, kept(keep, "bedges"));
  int *in_ = pn ? inverse(pn, m.nnode) : NULL, *ic = pc ? inverse(pc, m.ncell) : NULL;
  int *ie = pe ? inverse(pe, m.nedge) : NULL, *ib = pb ? inverse(pb, m.nbedge) : NULL;
  if (!in_ || !ic || !ie || !ib) {
    fprintf(stderr, "op2-permute-mesh: out of memory\n");
    return 1;
  }
  FILE *f = fopen(out, "w");
  if (!f) {
    fprintf(stderr, "op2-permute-mesh: cannot write '%s': %s\n", out, strerror(errno));
    return 1;
  }
  static char buf[1 << 20];
  setvbuf(f, buf, _IOFBF, sizeof buf);
  fprintf(f, "%d %d %d %d\n", m.nnode, m.ncell, m.nedge, m.nbedge);
  for (int n = 0; n < m.nnode; n++) fprintf(f, "%.17g %.17g\n", m.x[2 * in_[n]], m.x[2 * in_[n] + 1]);
  for (int c = 0; c < m.ncell; c++) {
    const int *v = m.cell + 4 * ic[c];
    fprintf(f, "%d %d %d %d\n", pn[v[0]], pn[v[1]], pn[v[2]], pn[v[3]]);
  }
  for (int e = 0; e < m.nedge; e++) {
    int o = ie[e];
    fprintf(f, "%d %d %d %d\n", pn[m.edge[2 * o]], pn[m.edge[2 * o + 1]], pc[m.ecell[2 * o]],
            pc[m.ecell[2 * o + 1]]);
  }
  for (int b = 0; b < m.nbedge; b++) {
    int o = ib[b];
    fprintf(f, "%d %d %d %d\n", pn[m.bedge[2 * o]], pn[m.bedge[2 * o + 1]], pc[m.becell[o]],
            m.bound[o]);
  }
  if (fflush(f) != 0 || ferror(f) || fclose(f) != 0) {
    fprintf(stderr, "op2-permute-mesh: error writing '%s': %s\n", out, strerror(errno));
    return 1;
  }
  am_free(&m);
  free(pn), free(pc), free(pe), free(pb), free(in_), free(ic), free(ie), free(ib);
  return 0;
}
