"""Checks op2-h5convert's file has OP2's airfoil layout (names, shapes, types, attributes, as
OP2's convert_mesh writes new_grid.h5), and that Airfoil's VTK output matches the mesh.
usage: check_airfoil.py MESH.h5 FINAL.vtu SAME_AS_FINAL.vtu"""
import sys

import h5py
import meshio
import numpy as np

h5, vtu, vtu_last = sys.argv[1:4]
f = h5py.File(h5, "r")
n = {s: int(f[s][0]) for s in ("nodes", "edges", "bedges", "cells")}
for s in n:
    assert f[s].shape == (1,) and f[s].dtype == np.int32, s
want = {
    "pedge": ((n["edges"], 2), np.int32), "pecell": ((n["edges"], 2), np.int32),
    "pbedge": ((n["bedges"], 2), np.int32), "pbecell": ((n["bedges"], 1), np.int32),
    "pcell": ((n["cells"], 4), np.int32), "p_bound": ((n["bedges"], 1), np.int32),
    "p_x": ((n["nodes"], 2), np.float64), "p_q": ((n["cells"], 4), np.float64),
    "p_qold": ((n["cells"], 4), np.float64), "p_res": ((n["cells"], 4), np.float64),
    "p_adt": ((n["cells"], 1), np.float64),
}
for name, (shape, dt) in want.items():
    d = f[name]
    assert d.shape == shape and d.dtype == dt, (name, d.shape, d.dtype)
    assert int(d.attrs["dim"][0]) == shape[1], name
    size = int(d.attrs["size"][0])
    if name.startswith("p_"):  # OP2's quirk: bytes per element for dats
        assert size == shape[1] * dt().itemsize, (name, size)
    else:  # the from-set size for maps
        assert size == shape[0], (name, size)
    t = d.attrs["type"]
    assert t == (b"int" if dt == np.int32 else b"double"), (name, t)
for c, dim in (("gam", 1), ("gm1", 1), ("cfl", 1), ("eps", 1), ("mach", 1), ("alpha", 1), ("qinf", 4)):
    assert f[c].shape == (dim,) and f[c].dtype == np.float64, c
    assert int(f[c].attrs["dim"][0]) == dim and f[c].attrs["type"] == b"double", c
assert f["gam"][0] == np.float64(np.float32(1.4))

m = meshio.read(vtu)
assert m.points.shape == (n["nodes"], 3)
assert np.array_equal(m.points[:, :2], f["p_x"][:]) and not m.points[:, 2].any()
assert m.cells[0].type == "quad" and np.array_equal(m.cells[0].data, f["pcell"][:])
q = m.cell_data["p_q"][0]
assert q.shape == (n["cells"], 4) and np.isfinite(q).all()
assert not np.array_equal(q, f["p_q"][:]), "the solution should have moved away from the free stream"
last = meshio.read(vtu_last)
assert np.array_equal(last.cell_data["p_q"][0], q), "--vtk-every's last file equals the final one"
print(f"check_airfoil: {h5} has OP2's layout; {vtu} matches the mesh")
