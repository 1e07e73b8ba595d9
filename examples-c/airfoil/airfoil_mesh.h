/*
 * airfoil_mesh.h: reader for Airfoil's new_grid.dat mesh format, with validation.
 *
 * Format (plain text, 0-based indices, one record per line):
 *   nnode ncell nedge nbedge
 *   x y                 (nnode lines)
 *   n0 n1 n2 n3         (ncell lines)
 *   na nb c1 c2         (nedge lines)
 *   na nb c1 bound      (nbedge lines)
 *
 * Everything is checked while reading: a missing or truncated file, a record with the wrong
 * number of values, a value that is not a number, an index outside its set, counts that
 * disagree with the file or with each other, and trailing data. On failure the reader fills
 * `err` with a message naming the file, the line and the offending value and returns -1.
 *
 * Header-only (static functions) so that both examples-c/airfoil/airfoil.c and
 * bench/airfoil_plain.c can use it.
 */
#ifndef AIRFOIL_MESH_H
#define AIRFOIL_MESH_H

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int nnode, ncell, nedge, nbedge;
  double *x;   /* nnode * 2 */
  int *cell;   /* ncell * 4  (pcell)   */
  int *edge;   /* nedge * 2  (pedge)   */
  int *ecell;  /* nedge * 2  (pecell)  */
  int *bedge;  /* nbedge * 2 (pbedge)  */
  int *becell; /* nbedge     (pbecell) */
  int *bound;  /* nbedge     */
} airfoil_mesh;

typedef struct {
  const char *path;
  char *buf, *p, *end;
  long line; /* line number of the current position (1-based) */
  char *err;
  size_t errlen;
} am_reader;

static void am_free(airfoil_mesh *m) {
  free(m->x);
  free(m->cell);
  free(m->edge);
  free(m->ecell);
  free(m->bedge);
  free(m->becell);
  free(m->bound);
  memset(m, 0, sizeof *m);
}

static int am_fail(am_reader *r, const char *fmt, ...) {
  va_list ap;
  int n = snprintf(r->err, r->errlen, "mesh file '%s': ", r->path);
  if (n < 0) n = 0;
  if ((size_t)n < r->errlen) {
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Copy the token at p (up to whitespace, at most 40 chars) into out, for messages. */
static const char *am_tok_text(const char *p, const char *end, char *out, size_t outlen) {
  size_t n = 0;
  while (p < end && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n' && n + 1 < outlen && n < 40)
    out[n++] = *p++;
  out[n] = '\0';
  return out;
}

/* Skip spaces/tabs/CR on the current line. */
static void am_skip_blank(am_reader *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r')) r->p++;
}

/* Move to the start of the next non-empty line; returns 0 at end of file. */
static int am_next_record(am_reader *r) {
  for (;;) {
    am_skip_blank(r);
    if (r->p >= r->end) return 0;
    if (*r->p == '\n') {
      r->p++;
      r->line++;
      continue;
    }
    return 1;
  }
}

/* Count the values on the current line from the current position. */
static int am_count_fields(const am_reader *r) {
  const char *q = r->p;
  int n = 0;
  while (q < r->end && *q != '\n') {
    while (q < r->end && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q >= r->end || *q == '\n') break;
    n++;
    while (q < r->end && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n') q++;
  }
  return n;
}

/* Start a record of `nfields` values: describes it as `what` `index` in messages. */
static int am_begin_record(am_reader *r, int nfields, const char *what, long index, long count,
                           const char *section) {
  if (!am_next_record(r))
    return am_fail(r, "truncated: file ends at line %ld, before %s %ld of %ld "
                      "(the header promises %ld %s)",
                   r->line, what, index, count, count, section);
  int got = am_count_fields(r);
  if (got != nfields) {
    char tok[48];
    const char *eol = memchr(r->p, '\n', (size_t)(r->end - r->p));
    if (!eol && got < nfields)
      return am_fail(r, "truncated: the last line (%ld) stops after %d of the %d values of %s %ld "
                        "(the header promises %ld %s)",
                     r->line, got, nfields, what, index, count, section);
    return am_fail(r, "line %ld: %s %ld should have %d values but the line has %d (starting '%s'); "
                      "the counts in the header disagree with the file or the file is damaged",
                   r->line, what, index, nfields, got, am_tok_text(r->p, r->end, tok, sizeof tok));
  }
  return 0;
}

static int am_end_record(am_reader *r) {
  am_skip_blank(r);
  if (r->p < r->end && *r->p == '\n') {
    r->p++;
    r->line++;
  }
  return 0;
}

static int am_int(am_reader *r, long *out, const char *what, long index) {
  char tok[48];
  am_skip_blank(r);
  am_tok_text(r->p, r->end, tok, sizeof tok);
  errno = 0;
  char *e;
  long v = strtol(r->p, &e, 10);
  if (e == r->p || (e < r->end && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n'))
    return am_fail(r, "line %ld: %s %ld: expected an integer, found '%s'", r->line, what, index, tok);
  if (errno == ERANGE || v > INT_MAX || v < INT_MIN)
    return am_fail(r, "line %ld: %s %ld: integer '%s' is out of range", r->line, what, index, tok);
  r->p = e;
  *out = v;
  return 0;
}

static int am_double(am_reader *r, double *out, const char *what, long index) {
  char tok[48];
  am_skip_blank(r);
  am_tok_text(r->p, r->end, tok, sizeof tok);
  char *e;
  double v = strtod(r->p, &e);
  if (e == r->p || (e < r->end && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n'))
    return am_fail(r, "line %ld: %s %ld: expected a number, found '%s'", r->line, what, index, tok);
  if (!isfinite(v))
    return am_fail(r, "line %ld: %s %ld: value '%s' is not finite", r->line, what, index, tok);
  r->p = e;
  *out = v;
  return 0;
}

/* Read an index and check it is in [0, n). */
static int am_index(am_reader *r, int *out, long n, const char *what, long index, int pos,
                    const char *target) {
  long v;
  if (am_int(r, &v, what, index)) return -1;
  if (v < 0 || v >= n)
    return am_fail(r, "line %ld: %s %ld: %s index %ld (value %d of the line) is outside [0, %ld)",
                   r->line, what, index, target, v, pos + 1, n);
  *out = (int)v;
  return 0;
}

static void *am_alloc(size_t n, size_t size) {
  return malloc(n ? n * size : 1);
}

/*
 * Read and validate the mesh at `path`. Returns 0 and fills *m on success; -1 and a message
 * in err on failure (m is then empty).
 */
static int airfoil_mesh_read(const char *path, airfoil_mesh *m, char *err, size_t errlen) {
  am_reader r;
  memset(m, 0, sizeof *m);
  memset(&r, 0, sizeof r);
  r.path = path;
  r.err = err;
  r.errlen = errlen;
  r.line = 1;
  if (errlen) err[0] = '\0';

  FILE *f = fopen(path, "rb");
  if (!f) return am_fail(&r, "cannot open: %s", strerror(errno));
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return am_fail(&r, "cannot seek (not a regular file?)");
  }
  long size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return am_fail(&r, "cannot determine the file size");
  }
  r.buf = (char *)malloc((size_t)size + 1);
  if (!r.buf) {
    fclose(f);
    return am_fail(&r, "out of memory reading %ld bytes", size);
  }
  if (fread(r.buf, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    free(r.buf);
    return am_fail(&r, "read error: %s", strerror(errno));
  }
  fclose(f);
  r.buf[size] = '\0';
  r.p = r.buf;
  r.end = r.buf + size;

  int rc = -1;
  long c[4];
  static const char *cname[4] = {"nnode", "ncell", "nedge", "nbedge"};
  if (!am_next_record(&r)) {
    am_fail(&r, "the file is empty (expected a header line 'nnode ncell nedge nbedge')");
    goto out;
  }
  if (am_count_fields(&r) != 4) {
    am_fail(&r, "line %ld: the header should have 4 counts (nnode ncell nedge nbedge) but has %d values",
            r.line, am_count_fields(&r));
    goto out;
  }
  for (int k = 0; k < 4; k++) {
    if (am_int(&r, &c[k], "header count", k + 1)) goto out;
    if (c[k] < 0 || (k < 2 && c[k] == 0)) {
      am_fail(&r, "line %ld: %s = %ld in the header must be %s", r.line, cname[k], c[k],
              k < 2 ? "positive" : "non-negative");
      goto out;
    }
  }
  if (c[1] > INT_MAX / 4 || c[2] > INT_MAX / 2 || c[3] > INT_MAX / 2) {
    am_fail(&r, "line 1: counts too large for 32-bit indices");
    goto out;
  }
  am_end_record(&r);
  if (2 * (long long)c[2] + c[3] != 4 * (long long)c[1]) {
    am_fail(&r, "the header counts disagree: every cell side must be one side of an edge, so "
                "2*nedge + nbedge (= %lld) must equal 4*ncell (= %lld) (nnode %ld, ncell %ld, "
                "nedge %ld, nbedge %ld)",
            2 * (long long)c[2] + c[3], 4 * (long long)c[1], c[0], c[1], c[2], c[3]);
    goto out;
  }
  m->nnode = (int)c[0];
  m->ncell = (int)c[1];
  m->nedge = (int)c[2];
  m->nbedge = (int)c[3];
  m->x = (double *)am_alloc((size_t)m->nnode * 2, sizeof(double));
  m->cell = (int *)am_alloc((size_t)m->ncell * 4, sizeof(int));
  m->edge = (int *)am_alloc((size_t)m->nedge * 2, sizeof(int));
  m->ecell = (int *)am_alloc((size_t)m->nedge * 2, sizeof(int));
  m->bedge = (int *)am_alloc((size_t)m->nbedge * 2, sizeof(int));
  m->becell = (int *)am_alloc((size_t)m->nbedge, sizeof(int));
  m->bound = (int *)am_alloc((size_t)m->nbedge, sizeof(int));
  if (!m->x || !m->cell || !m->edge || !m->ecell || !m->bedge || !m->becell || !m->bound) {
    am_fail(&r, "out of memory");
    goto out;
  }

  for (long n = 0; n < c[0]; n++) {
    if (am_begin_record(&r, 2, "node", n, c[0], "node lines 'x y'")) goto out;
    if (am_double(&r, &m->x[2 * n], "node", n) || am_double(&r, &m->x[2 * n + 1], "node", n)) goto out;
    am_end_record(&r);
  }
  for (long e = 0; e < c[1]; e++) {
    if (am_begin_record(&r, 4, "cell", e, c[1], "cell lines 'n0 n1 n2 n3'")) goto out;
    for (int k = 0; k < 4; k++)
      if (am_index(&r, &m->cell[4 * e + k], c[0], "cell", e, k, "node")) goto out;
    am_end_record(&r);
  }
  for (long e = 0; e < c[2]; e++) {
    if (am_begin_record(&r, 4, "edge", e, c[2], "edge lines 'na nb c1 c2'")) goto out;
    for (int k = 0; k < 2; k++)
      if (am_index(&r, &m->edge[2 * e + k], c[0], "edge", e, k, "node")) goto out;
    for (int k = 0; k < 2; k++)
      if (am_index(&r, &m->ecell[2 * e + k], c[1], "edge", e, k + 2, "cell")) goto out;
    am_end_record(&r);
  }
  for (long e = 0; e < c[3]; e++) {
    long b;
    if (am_begin_record(&r, 4, "boundary edge", e, c[3], "boundary edge lines 'na nb c1 bound'"))
      goto out;
    for (int k = 0; k < 2; k++)
      if (am_index(&r, &m->bedge[2 * e + k], c[0], "boundary edge", e, k, "node")) goto out;
    if (am_index(&r, &m->becell[e], c[1], "boundary edge", e, 2, "cell")) goto out;
    if (am_int(&r, &b, "boundary edge", e)) goto out;
    m->bound[e] = (int)b;
    am_end_record(&r);
  }
  if (am_next_record(&r)) {
    char tok[48];
    am_fail(&r, "line %ld: unexpected data '%s' after the last boundary edge: the counts in the "
                "header (nnode %ld, ncell %ld, nedge %ld, nbedge %ld) disagree with the file",
            r.line, am_tok_text(r.p, r.end, tok, sizeof tok), c[0], c[1], c[2], c[3]);
    goto out;
  }
  rc = 0;
out:
  free(r.buf);
  if (rc) am_free(m);
  return rc;
}

#endif /* AIRFOIL_MESH_H */
