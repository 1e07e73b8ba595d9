#!/usr/bin/env python3
"""bench/scaling_model.py: the scaling model of doc/scaling.md, from measured inputs.

A MODEL, not a measurement: it predicts Airfoil's time per iteration on P processes from
  - per-loop compute time per element (op_timing_output of a one-process run: --timing FILE),
  - the partition table of op2-partstat (--table FILE.jsonl: per P, the most cells, the most
    owned + exec-halo edges and bedges a process runs, its neighbours, the bytes it sends per
    iteration, its core fraction),
  - message latency (alpha, seconds) and bandwidth (beta, bytes/s): from bench/pingpong.c
    (--pingpong FILE) or given (--alpha-us, --beta-gbps: e.g. InfiniBand figures, assumptions).

Per iteration on the slowest process (Airfoil: save_soln, then 2 x (adt_calc, res_calc,
bres_calc, update)):
  T_comp = t_save C + 2 (t_adt C + t_res E_run + t_bres B_run + t_upd C)
  T_halo = m alpha + S / beta                      per exchange (2 per iteration; one message
                                                   per neighbour, S bytes, m neighbours)
  hidden = min(T_halo, t_res E_core)               the core edges of res_calc run while the
                                                   messages fly
  T_red  = ceil(log2 P) alpha + (P - 1) w / beta   per update call (2 per iteration): op2
                                                   combines reductions by MPI_Allgather of w =
                                                   24 bytes per process (rms, maxerr, errloc)
  T_call = 9 c0                                    fixed cost of the 9 loop calls (c0 per
                                                   call: --call-us, or --call-timing FILE, the
                                                   shortest mean call of a small-mesh run)
  T(P)   = T_comp + T_call + 2 (T_halo - hidden) + 2 T_red
Strong scaling: E(P) = T(1) / (P T(P)). Weak scaling: E(P) = T_1(1) / T(P) with n elements per
process. Meshes other than the table's (N0 cells) are the same geometry refined k = N / N0
times: counts per process scale by k, halo rows, bytes and redundant edges by sqrt(k) (2D: a
part's boundary grows as the square root of its area), neighbours stay.
"""
import argparse
import json
import math
import re
import sys


def read_timing(path):
    """Per-element seconds of each loop from airfoil's op_timing_output (one process) and the
    mesh sizes from its banner."""
    text = open(path).read()
    m = re.search(r"(\d+) nodes, (\d+) cells, (\d+) edges, (\d+) boundary edges", text)
    if not m:
        sys.exit(f"{path}: no mesh line")
    nodes, cells, edges, bedges = map(int, m.groups())
    size = {"save_soln": cells, "adt_calc": cells, "res_calc": edges, "bres_calc": bedges, "update": cells}
    t = {}
    # one process: "loop calls total (s) mean (ms) ..."; under MPI: "loop calls max (s) mean (s) ..."
    col = 2
    for line in text.splitlines():
        f = line.split()
        if f[:2] == ["loop", "calls"]:
            col = 3 if "max (s)" in line else 2
        elif len(f) >= 5 and f[0] in size:
            calls, total = int(f[1]), float(f[col])
            t[f[0]] = total / calls / size[f[0]]
    if set(t) != set(size):
        sys.exit(f"{path}: missing loops {set(size) - set(t)}")
    return t, {"nodes": nodes, "cells": cells, "edges": edges, "bedges": bedges}


def read_call_cost(path):
    """Upper bound of the fixed cost of a loop call: the shortest mean call of any loop in a run on
    a small mesh (its time includes the elements' work too)."""
    text = open(path).read()
    best = None
    col = 2
    for line in text.splitlines():
        f = line.split()
        if f[:2] == ["loop", "calls"]:
            col = 3 if "max (s)" in line else 2
        elif len(f) >= 5 and f[0] in ("save_soln", "adt_calc", "res_calc", "bres_calc", "update"):
            per_call = float(f[col]) / int(f[1])
            best = per_call if best is None else min(best, per_call)
    if best is None:
        sys.exit(f"{path}: no loop timings")
    return best


def read_pingpong(path):
    text = open(path).read()
    a = re.search(r"latency_us ([0-9.]+)", text)
    b = re.search(r"bandwidth_GBps ([0-9.]+)", text)
    if not (a and b):
        sys.exit(f"{path}: no latency_us / bandwidth_GBps lines")
    return float(a.group(1)) * 1e-6, float(b.group(1)) * 1e9


def read_table(path, method):
    rows = {}
    for line in open(path):
        r = json.loads(line)
        if r["method"] == method:
            rows[r["p"]] = r
    return rows


RED_BYTES = 24


CALLS = 9


def iteration(t, mesh, row, p, k, alpha, beta, c0):
    """Seconds per iteration on the slowest process for the table's row at P, on a mesh k
    times the table's, with its parts (phases)."""
    s = math.sqrt(k)
    if row is None:  # one process: no halo
        cells, edges_run, bedges_run = mesh["cells"] * k, mesh["edges"] * k, mesh["bedges"] * s
        m = S = 0
        core = 1.0
    else:
        share_e = mesh["edges"] / p
        cells = row["cells_max"] * k
        # owned edges scale with the area, the exec-halo excess with the boundary
        edges_run = share_e * k + (row["edges_run_max"] - share_e) * s
        bedges_run = row["bedges_run_max"] * s
        m = row["nbrs_max"]
        S = row["send_bytes_per_iter_max"] / 2 * s
        core = row["core_cells_min_pct"] / 100.0
        core = 1.0 - (1.0 - core) / s
    comp = t["save_soln"] * cells + 2 * (
        t["adt_calc"] * cells + t["res_calc"] * edges_run + t["bres_calc"] * bedges_run + t["update"] * cells
    )
    halo = m * alpha + S / beta if p > 1 else 0.0
    hidden = min(halo, t["res_calc"] * share_core(mesh, p, k, core))
    red = (math.ceil(math.log2(p)) * alpha + (p - 1) * RED_BYTES / beta) if p > 1 else 0.0
    return {
        "comp": comp,
        "halo_lat": 2 * m * alpha if p > 1 else 0.0,
        "halo_bw": 2 * S / beta if p > 1 else 0.0,
        "hidden": 2 * hidden,
        "red": 2 * red,
        "call": CALLS * c0,
        "total": comp + CALLS * c0 + 2 * (halo - hidden) + 2 * red,
    }


def share_core(mesh, p, k, core):
    return mesh["edges"] * k / p * core


def limiter(ph, ideal_comp, ideal_call):
    """The largest phase beyond the ideal share of the one-process compute (after overlap) and
    its share of the iteration: redundant or unbalanced compute (exec-halo edges, the largest
    part), fixed per-call costs, halo latency, halo bandwidth, reductions."""
    exposed = ph["halo_lat"] + ph["halo_bw"] - ph["hidden"]
    parts = {
        "extra compute (exec halo, imbalance)": ph["comp"] - ideal_comp,
        "loop call overhead": ph["call"] - ideal_call,
        "halo latency": ph["halo_lat"] - ph["hidden"] * ph["halo_lat"] / max(ph["halo_lat"] + ph["halo_bw"], 1e-30),
        "halo bandwidth": ph["halo_bw"] - ph["hidden"] * ph["halo_bw"] / max(ph["halo_lat"] + ph["halo_bw"], 1e-30),
        "reduction": ph["red"],
    }
    name = max(parts, key=parts.get)
    return name, parts[name] / ph["total"], exposed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timing", required=True, help="airfoil -n 1 output with op_timing_output")
    ap.add_argument("--table", required=True, help="op2-partstat --json output")
    ap.add_argument("--method", default="METIS")
    ap.add_argument("--pingpong", help="bench/pingpong output")
    ap.add_argument("--alpha-us", type=float, help="latency, microseconds (overrides --pingpong)")
    ap.add_argument("--beta-gbps", type=float, help="bandwidth, GB/s (overrides --pingpong)")
    ap.add_argument("--call-us", type=float, help="fixed cost per loop call, microseconds")
    ap.add_argument("--call-timing", help="airfoil output on a small mesh: --call-us = its shortest mean call")
    ap.add_argument("--compute-scale", type=float, default=1.0, help="multiply every per-element time (a faster node: 0.25)")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    t, mesh = read_timing(args.timing)
    t = {k: v * args.compute_scale for k, v in t.items()}
    alpha = beta = None
    if args.pingpong:
        alpha, beta = read_pingpong(args.pingpong)
    if args.alpha_us is not None:
        alpha = args.alpha_us * 1e-6
    if args.beta_gbps is not None:
        beta = args.beta_gbps * 1e9
    if alpha is None or beta is None:
        sys.exit("need --pingpong or --alpha-us and --beta-gbps")
    table = read_table(args.table, args.method)
    ps = sorted(table)
    n0 = mesh["cells"]
    c0 = 0.0
    if args.call_timing:
        c0 = read_call_cost(args.call_timing)
    if args.call_us is not None:
        c0 = args.call_us * 1e-6
    print(f"## {args.label or 'model'}: alpha = {alpha * 1e6:.2f} us, beta = {beta / 1e9:.2f} GB/s, c0 = {c0 * 1e6:.2f} us, {args.method} table of a {n0}-cell mesh")
    print()
    print("per-element seconds (one process): " + ", ".join(f"{k} {v * 1e9:.1f} ns" for k, v in t.items()))
    print()
    cases = [("strong, 720K cells", lambda p: n0 / n0), ("strong, 100M cells", lambda p: 100e6 / n0),
             ("weak, 1M cells per process", lambda p: p * 1e6 / n0)]
    print("| case | P | ms/iter | efficiency | compute ms | calls ms | halo latency ms | halo bandwidth ms | hidden by core ms | reduction ms | limited by (share of the iteration) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, kf in cases:
        for p in [1] + [p for p in ps if p in (2, 4, 16, 64, 256, 1024, 4096)]:
            k = kf(p)
            ph = iteration(t, mesh, table.get(p) if p > 1 else None, p, k, alpha, beta, c0)
            if name.startswith("weak"):
                b = iteration(t, mesh, None, 1, 1e6 / n0, alpha, beta, c0)
                eff = b["total"] / ph["total"]
                ideal, ideal_call = b["comp"], b["call"]
            else:
                b = iteration(t, mesh, None, 1, k, alpha, beta, c0)
                eff = b["total"] / (p * ph["total"])
                ideal, ideal_call = b["comp"] / p, b["call"] / p
            lim, share, _ = limiter(ph, ideal, ideal_call) if p > 1 else ("-", 0.0, 0.0)
            print(
                f"| {name} | {p} | {ph['total'] * 1e3:.3f} | {eff * 100:.1f}% | {ph['comp'] * 1e3:.3f} | {ph['call'] * 1e3:.4f} | {ph['halo_lat'] * 1e3:.4f} | "
                f"{ph['halo_bw'] * 1e3:.4f} | {ph['hidden'] * 1e3:.4f} | {ph['red'] * 1e3:.4f} | "
                + (f"{lim} ({share * 100:.1f}%)" if p > 1 else "-")
                + " |"
            )


if __name__ == "__main__":
    main()
