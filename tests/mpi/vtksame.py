"""vtksame.py [--rel TOL] REF.vtu FILE.pvtu...: the pieces a .pvtu names, read with meshio, hold exactly
REF's mesh and data: the same cells (each in exactly one piece, identified by its nodes'
coordinates in order), the same cell data per cell, the same points and point data per point
(through the nodes of each cell: points shared by pieces agree), and the array names and types the .pvtu declares.
op_write_vtk under mpiexec -n P against one process. Values must be equal bit for bit, or with
--rel within TOL relative to the largest magnitude of their array (results of OP_INC loops sum
in another order under MPI). Exit 1 on the first difference."""
import os
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np


def load(path):
    m = meshio.read(path)
    if len(m.cells) != 1:
        sys.exit(f"vtksame: {path}: {len(m.cells)} cell blocks, 1 expected")
    conn = m.cells[0].data
    pts = [tuple(p) for p in m.points]
    cells = {}
    for k, row in enumerate(conn):
        key = tuple(pts[i] for i in row)
        if key in cells:
            sys.exit(f"vtksame: {path}: cell {key} twice")
        rec = {n: np.asarray(v[0][k]) for n, v in m.cell_data.items()}
        # point data through the cell's nodes (coincident nodes, as on a wake cut, stay apart)
        rec.update({n: np.asarray(v[row]) for n, v in m.point_data.items()})
        cells[key] = rec
    points = {p: {} for p in pts}
    types = {n: np.asarray(v[0]).dtype.str for n, v in m.cell_data.items()}
    types.update({n: np.asarray(v).dtype.str for n, v in m.point_data.items()})
    scale = {n: float(np.max(np.abs(v[0]))) if len(v[0]) else 0.0 for n, v in m.cell_data.items()}
    scale.update({n: float(np.max(np.abs(v))) if len(v) else 0.0 for n, v in m.point_data.items()})
    return m.cells[0].type, cells, points, types, scale


def same(a, b, rel, scale):
    """Per element: dicts of arrays equal bit for bit, or within rel * scale[name]."""
    if a.keys() != b.keys():
        return False
    for n in a:
        x, y = a[n], b[n]
        if rel == 0.0:
            if x.tobytes() != y.tobytes():
                return False
        elif x.shape != y.shape or np.any(np.abs(x.astype(float) - y.astype(float)) > rel * scale[n]):
            return False
    return True


def differ(got, want, rel, scale):
    if got.keys() != want.keys():
        return f"{len(got)} vs {len(want)} elements, not the same ones"
    bad = [k for k in want if not same(got[k], want[k], rel, scale)]
    return f"{len(bad)} of {len(want)} differ, e.g. at {bad[0]}" if bad else None


def main():
    args = sys.argv[1:]
    rel = 0.0
    if args[:1] == ["--rel"]:
        rel, args = float(args[1]), args[2:]
    kind, cells, points, types, scale = load(args[0])
    for pv in args[1:]:
        root = ET.parse(pv).getroot()
        grid = root.find("PUnstructuredGrid")
        names = [a.get("Name") for tag in ("PPointData", "PCellData") for a in grid.iter(tag) for a in a]
        if sorted(names) != sorted(types):
            sys.exit(f"vtksame: {pv} declares {sorted(names)}, {args[0]} has {sorted(types)}")
        pieces = [os.path.join(os.path.dirname(pv), p.get("Source")) for p in grid.findall("Piece")]
        gcells, gpoints = {}, {}
        for piece in pieces:
            k, c, p, t, _ = load(piece)
            if k != kind or t != types:
                sys.exit(f"vtksame: {piece}: cells '{k}', arrays {t}; {args[0]}: '{kind}', {types}")
            for key, v in c.items():
                if key in gcells:
                    sys.exit(f"vtksame: {pv}: cell {key} in two pieces")
                gcells[key] = v
            gpoints.update(p)
        for what, got, want in (("cells", gcells, cells), ("points", gpoints, points)):
            d = differ(got, want, rel, scale)
            if d:
                sys.exit(f"vtksame: {pv}: {what} or their data differ from {args[0]}: {d}")
        how = f"within {rel:g} relative" if rel else "exactly"
        print(f"vtksame: {pv}: {len(pieces)} pieces hold {args[0]}'s {len(cells)} cells and {len(points)} points {how}")


if __name__ == "__main__":
    main()
