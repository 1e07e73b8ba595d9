"""Reads what tests/io/vtk_dump.c wrote (in DIR) with meshio and h5py and compares every array
with op2's own text output of the same dats: points, connectivity, cell types and each dat as
point or cell data, exactly, in every VTK mode; then op2's HDF5 dump: OP2's names, shapes, types
and attributes. Prints one line per file group; exits non-zero on the first difference.
usage: check_files.py DIR"""
import os
import sys

import h5py
import meshio
import numpy as np

DTYPES = {"u": np.float64, "v": np.float32, "q": np.float64, "i": np.int32, "ui": np.uint32,
          "l": np.int64, "ul": np.uint64, "b": np.uint8, "w": np.float64, "e": np.int32,
          "h": np.float64, "p": np.float32, "t": np.int64}
CELL_TYPES = {"quad": "quad", "tri": "triangle", "line": "line", "hex": "hexahedron", "tet": "tetra"}
COORD_DTYPES = {"tri": np.float32}
MODES = ["binary.vtu", "ascii.vtu", "base64.vtu", "binary.vtk", "ascii.vtk"]


def binary(path, dtype):
    """op_print_dat_to_binfile's format: int count, int dim, then the raw rows."""
    raw = open(path, "rb").read()
    n, dim = np.frombuffer(raw[:8], dtype=np.int32)
    return np.frombuffer(raw[8:], dtype=dtype).reshape(int(n), int(dim))


def text(path, dtype):
    """op_print_dat_to_txtfile's format: 'n dim', then n rows."""
    with open(path) as f:
        n, dim = map(int, f.readline().split())
        rows = [line.split() for line in f]
    assert len(rows) == n and all(len(r) == dim for r in rows), path
    if np.issubdtype(dtype, np.integer):
        return np.array([[int(v) for v in r] for r in rows], dtype=dtype)
    return np.array([[float(v) for v in r] for r in rows], dtype=np.float64).astype(dtype)


def native(a):
    """Legacy binary arrays come back big-endian: compare values in native order."""
    return a.astype(a.dtype.newbyteorder("="))


def fail(msg):
    print("check_files: " + msg, file=sys.stderr)
    sys.exit(1)


d = sys.argv[1]
for mesh, ctype in CELL_TYPES.items():
    names = open(os.path.join(d, mesh + ".list")).read().split()
    coords = binary(os.path.join(d, mesh + ".coords.bin"), COORD_DTYPES.get(mesh, np.float64))
    pts = np.zeros((coords.shape[0], 3), dtype=coords.dtype)
    pts[:, : coords.shape[1]] = coords
    cells = text(os.path.join(d, mesh + ".cells.txt"), np.int64)
    want = {n: binary(os.path.join(d, f"{mesh}.{n}.bin"), DTYPES[n]) for n in names}
    for mode in MODES:
        path = os.path.join(d, f"{mesh}-{mode}")
        m = meshio.read(path)
        m.points = native(m.points)
        if m.points.dtype != pts.dtype or not np.array_equal(m.points, pts):
            fail(f"{path}: points differ ({m.points.dtype} vs {pts.dtype})")
        if len(m.cells) != 1 or m.cells[0].type != ctype or not np.array_equal(m.cells[0].data, cells):
            fail(f"{path}: cells differ: {[(c.type, c.data.shape) for c in m.cells]}")
        for n, w in want.items():
            got = m.point_data.get(n)
            if got is None:
                got = m.cell_data.get(n, [None])[0]
            if got is None:
                fail(f"{path}: no array '{n}'")
            got = native(got).reshape(w.shape)
            if got.dtype != w.dtype or not np.array_equal(got, w):
                fail(f"{path}: '{n}' differs ({got.dtype} vs {w.dtype}): {got.ravel()[:4]} vs {w.ravel()[:4]}")
    print(f"check_files: {mesh}: {len(MODES)} modes, points, {ctype} cells and {len(names)} arrays exact")

f = h5py.File(os.path.join(d, "dump.h5"), "r")
sets = {"qnodes": 20, "qcells": 12, "tcells": 24, "ledges": 16, "hnodes": 12, "hexes": 2, "tets": 2}
for s, n in sets.items():
    if f[s].shape != (1,) or f[s].dtype != np.int32 or int(f[s][0]) != n:
        fail(f"dump.h5: set '{s}' is {f[s].shape} {f[s].dtype} {f[s][()]}")
maps = {"pcell": (12, 4), "ptri": (24, 3), "pline": (16, 2), "phex": (2, 8), "ptet": (2, 4)}
for mname, (n, dim) in maps.items():
    ds = f[mname]
    if ds.shape != (n, dim) or ds.dtype != np.int32:
        fail(f"dump.h5: map '{mname}' is {ds.shape} {ds.dtype}")
    if int(ds.attrs["size"][0]) != n or int(ds.attrs["dim"][0]) != dim or ds.attrs["type"] != b"int":
        fail(f"dump.h5: map '{mname}' attributes {dict(ds.attrs)}")
quad_cells = text(os.path.join(d, "quad.cells.txt"), np.int32)
if not np.array_equal(f["pcell"][:], quad_cells):
    fail("dump.h5: pcell values differ")
TYPE_NAMES = {np.float64: b"double", np.float32: b"float", np.int32: b"int", np.uint32: b"unsigned int",
              np.int64: b"long long", np.uint64: b"unsigned long long", np.uint8: b"bool"}
for mesh in ("quad", "hex"):
    for n in open(os.path.join(d, mesh + ".list")).read().split():
        w = binary(os.path.join(d, f"{mesh}.{n}.bin"), DTYPES[n])
        ds = f[n]
        want_dtype = np.bool_ if DTYPES[n] == np.uint8 else DTYPES[n]
        if ds.shape != w.shape or ds.dtype != want_dtype:
            fail(f"dump.h5: dat '{n}' is {ds.shape} {ds.dtype}, expected {w.shape} {want_dtype}")
        if not np.array_equal(ds[:].astype(w.dtype), w):
            fail(f"dump.h5: dat '{n}' values differ")
        size, dim, t = int(ds.attrs["size"][0]), int(ds.attrs["dim"][0]), ds.attrs["type"]
        if size != w.shape[1] * np.dtype(DTYPES[n]).itemsize or dim != w.shape[1] or t != TYPE_NAMES[DTYPES[n]]:
            fail(f"dump.h5: dat '{n}' attributes size={size} dim={dim} type={t!r}")
q = f["qinf"]
if q.shape != (4,) or int(q.attrs["dim"][0]) != 4 or q.attrs["type"] != b"double" or list(q[:]) != [1, 0.5, 0, 2.5]:
    fail(f"dump.h5: constant qinf {q[:]} {dict(q.attrs)}")
print("check_files: dump.h5: OP2's names, shapes, types and attributes (h5py)")
