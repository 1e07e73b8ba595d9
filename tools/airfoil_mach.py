#!/usr/bin/env python3
"""Renders the Mach number of an Airfoil solution written by op2 (`airfoil --vtk FILE.vtu`) to
a PNG with matplotlib (Agg, no display needed): cells coloured by the Mach number computed from
the conserved variables q = (rho, rho u, rho v, rho E) of p_q, around the aerofoil.

usage: airfoil_mach.py SOLUTION.vtu OUT.png [--window X0 X1 Y0 Y1] [--gamma G]
Needs meshio, numpy and matplotlib (`make test-io` installs them in build/venv)."""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import meshio  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402


def mach(q, gamma):
    rho = q[:, 0]
    u, v = q[:, 1] / rho, q[:, 2] / rho
    p = (gamma - 1.0) * (q[:, 3] - 0.5 * rho * (u * u + v * v))
    return np.sqrt(u * u + v * v) / np.sqrt(gamma * p / rho)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("solution")
    ap.add_argument("out")
    ap.add_argument("--window", nargs=4, type=float, default=[-0.6, 1.6, -0.7, 0.7])
    ap.add_argument("--gamma", type=float, default=float(np.float32(1.4)))
    a = ap.parse_args()
    m = meshio.read(a.solution)
    quads = m.cells_dict.get("quad")
    if quads is None or "p_q" not in m.cell_data_dict:
        sys.exit(f"airfoil_mach: {a.solution} has no quad cells with cell data p_q")
    q = m.cell_data_dict["p_q"]["quad"]
    xy = m.points[:, :2][quads]  # (ncells, 4, 2)
    x0, x1, y0, y1 = a.window
    lo, hi = xy.min(axis=1), xy.max(axis=1)  # every cell that reaches into the window
    keep = (hi[:, 0] > x0) & (lo[:, 0] < x1) & (hi[:, 1] > y0) & (lo[:, 1] < y1)
    M = mach(q[keep], a.gamma)
    fig, ax = plt.subplots(figsize=(9.6, 6.4), dpi=100)
    pc = PolyCollection(xy[keep], array=M, cmap="turbo", edgecolors="face", linewidths=0.2,
                        antialiaseds=False)
    ax.add_collection(pc)
    # the aerofoil is where there are no cells: the dark background shows through
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.set_facecolor("0.15")
    cb = fig.colorbar(pc, ax=ax, shrink=0.8, pad=0.02)
    cb.set_label("Mach number")
    ax.set_title(f"Airfoil (op2): Mach number, {len(quads)} cells; max {M.max():.3f}")
    ax.set_xlabel("x / chord")
    ax.set_ylabel("y / chord")
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(f"airfoil_mach: {a.out}: {keep.sum()} of {len(quads)} cells in the window, "
          f"Mach {M.min():.3f} .. {M.max():.3f}")


if __name__ == "__main__":
    main()
