/*
 * op_lib_core.h: OP2's core header, as op2 provides it for programs written for OP2 (they
 * include op_seq.h, op_lib_cpp.h, op_lib_c.h or op_lib_mpi.h, which include this one).
 *
 * op2's C API is op2.h; this header adds what OP2's programs take from OP2's own core header:
 * the public fields of set, map and dat handles (kept current by op2: sizes change at
 * op_partition), OP2's index types and MIN/MAX (op_malloc and friends are in op2.h). See
 * doc/porting.md.
 */
#ifndef OP2_OP_LIB_CORE_H
#define OP2_OP_LIB_CORE_H

/* The standard headers OP2's core header brings in: OP2's programs rely on them (math, stdio,
 * stdlib, string; in C++ also iostream, limits, stdexcept, cstddef). */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __cplusplus
#include <cstddef>
#include <iostream>
#include <limits>
#include <stdexcept>
#endif
#include "op2.h"

#ifdef __cplusplus
extern "C" {
#endif

/* OP2's index types: local indices are int, global ones 64-bit (op_decl_map_long). */
typedef int idx_l_t;
typedef long long idx_g_t;

/* The fields of a set handle, in OP2's order. op2 fills them and keeps them current; a
 * program reads them (set->size: this process's owned elements, after op_partition too) and
 * never writes them. */
struct op_set_core {
  int index;         /* declaration order, from 0 */
  idx_l_t size;      /* elements owned by this process */
  char const *name;  /* as declared */
  int core_size;     /* owned elements that touch no halo data (MPI) */
  int exec_size;     /* imported elements executed redundantly (MPI) */
  int nonexec_size;  /* imported elements read only (MPI) */
  int stride;        /* rows stored per dat on the set, halos included */
};

/* The fields of a map handle. `map`, `map_gbl` and `map_d` are NULL: op2 copies a map's
 * values at op_decl_map and keeps them in its own layout. */
struct op_map_core {
  int index;
  op_set from;       /* set mapped from */
  op_set to;         /* set mapped to */
  int dim;           /* entries per element */
  int *map;          /* NULL in op2 */
  idx_g_t *map_gbl;  /* NULL in op2 */
  int *map_d;        /* NULL in op2 */
  char const *name;
  int user_managed;  /* 0 */
  bool force_part;   /* false */
};

/* The fields of a dat handle. `data` is NULL: op2 copies a dat's values at op_decl_dat (OP2's
 * reference build keeps the program's array); read them with op_fetch_data. */
struct op_dat_core {
  int index;
  op_set set;          /* the set it lives on */
  int dim;             /* values per element */
  int size;            /* bytes per element (dim * the type's size) */
  char *data;          /* NULL in op2 */
  char *data_d;        /* NULL in op2 */
  char const *type;    /* op2's name of the type: "double", "float", "int", ... */
  char const *name;    /* as declared */
  char *buffer_d;      /* NULL */
  char *buffer_d_r;    /* NULL */
  int dirtybit;        /* 1 while its MPI halo is out of date */
  int dirty_hd;        /* 0 */
  int user_managed;    /* 0 */
  void *mpi_buffer;    /* NULL */
};

#ifdef __cplusplus
}  /* extern "C" */
#endif

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
#ifndef SWAP
#define SWAP(a, b) do { __typeof__(a) op2_swap_tmp_ = (a); (a) = (b); (b) = op2_swap_tmp_; } while (0)
#endif

/* OP2's generated code marks device kernels' helpers with it; a host build needs nothing. */
#ifndef OP_FUN_PREFIX
#define OP_FUN_PREFIX
#endif

#endif /* OP2_OP_LIB_CORE_H */
