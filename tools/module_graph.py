#!/usr/bin/env python3
"""Module graph of the op2 crate and its import circles.

Each file under src/ (bin/ excluded) is a node named by its path without `.rs` or `/mod.rs`
(`src/api/arg.rs` -> `api/arg`, `src/mat/mod.rs` -> `mat`). An edge A -> B is any path
`crate::...` (or `super::...`) in A's code, comments and `#[cfg(test)]` modules excluded, that
resolves to B (the longest prefix of the path that names a file). Prints every strongly connected
component of more than one node (an import circle), with each two-way pair in it.

Layers (`--layers`): every node belongs to one layer of LAYERS (the longest prefix there that
names it or a folder above it); an edge from a lower layer to a higher one points UP and is
listed. doc/internals.md ("Map of the code") says what each layer is.

Usage: python3 tools/module_graph.py [SRC_DIR] [--top] [--edges] [--max N] [--layers] [--max-up N]
  --top    one node per top-level module (`plan/desc` counts as `plan`): finds circles that go
           through a module's children, e.g. arg -> plan (mod.rs) and plan/desc -> arg
  --edges  print every edge too
  --max N  exit 1 if there are more than N circles' worth of nodes (the number of nodes in
           components of size > 1); for a check that circles do not come back
  --layers print every edge pointing up a layer, and their count
  --max-up N  exit 1 if more than N edges point up a layer, or a node has no layer (implies
           --layers); for a check that no new upward arrow comes in
"""
import os
import re
import sys


def node_of(rel):
    rel = rel[:-3]
    if rel.endswith("/mod"):
        rel = rel[: -len("/mod")]
    return rel


def strip(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    # Test modules at the end of a file do not count.
    m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+", text)
    if m:
        text = text[: m.start()]
    return text


# Layers, top (highest number) down. A node's layer is that of the longest prefix naming it or
# a folder above it (`backend/cuda/codegen` -> `backend`).
LAYERS = [
    # The C boundary: the only `extern "C"` functions op2 exports.
    ("api", 7),
    # The driver: running loops and chains, the one Context and what hangs off it, and what the
    # driver owns beside them (checkpointing, MPI, matrices, mesh and output files).
    ("exec", 6),
    ("context", 6),
    ("checkpoint", 6),
    ("mpi", 6),
    ("mat", 6),
    ("io", 6),
    # Backends: one folder each, runtime and code generation.
    ("backend", 5),
    # Compilers, loaded libraries and the caches of compiled code.
    ("jit", 4),
    # What every target's code generation shares, and plans (blocks, colours, tiles).
    ("codegen", 3),
    ("plan", 3),
    # The data model: sets, maps, dats, kernels (core), argument descriptors (arg), settings.
    ("core", 2),
    ("arg", 2),
    ("config", 2),
    # Errors, at the bottom.
    ("error", 1),
]


def layer_of(node):
    best = None
    for prefix, layer in LAYERS:
        if node == prefix or node.startswith(prefix + "/"):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    return best[1] if best else None


PATH = r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*"


def paths_in(text):
    """Every crate::/super:: path, with one level of `{a, b::c}` groups expanded."""
    out = []
    for m in re.finditer(r"\b(crate|super)::(" + PATH + r")?(::\{([^{}]*)\})?", text):
        base = [m.group(1)] + (m.group(2).split("::") if m.group(2) else [])
        out.append(base)
        if m.group(4):
            for item in m.group(4).split(","):
                item = item.strip().split(" as ")[0].strip()
                if item and item != "self":
                    out.append(base + item.split("::"))
    return out


def resolve(me, parts, nodes):
    if parts[0] == "crate":
        segs = parts[1:]
    else:  # super:: relative to the parent module of `me`
        mod = me.split("/")
        segs = list(parts)
        while segs and segs[0] == "super":
            mod = mod[:-1]
            segs = segs[1:]
        segs = mod + segs
    for n in range(len(segs), 0, -1):
        cand = "/".join(segs[:n])
        if cand in nodes:
            return cand
    return None


def graph(src):
    files = {}
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if d != "bin"]
        for f in names:
            if f.endswith(".rs"):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, src).replace(os.sep, "/")
                if rel in ("lib.rs", "main.rs"):
                    continue
                files[node_of(rel)] = p
    edges = {n: set() for n in files}
    for n, p in files.items():
        with open(p, encoding="utf-8") as fh:
            text = strip(fh.read())
        for parts in paths_in(text):
            t = resolve(n, parts, files)
            # A module and its own submodules are one unit: parent -> child and child -> parent
            # edges are declarations and re-exports, not layering.
            if t and t != n and not t.startswith(n + "/") and not n.startswith(t + "/"):
                edges[n].add(t)
    return edges


def sccs(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main(argv):
    src = "src"
    show_edges = False
    top = False
    limit = None
    layers = False
    max_up = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--edges":
            show_edges = True
        elif a == "--top":
            top = True
        elif a == "--max":
            i += 1
            limit = int(argv[i])
        elif a == "--layers":
            layers = True
        elif a == "--max-up":
            i += 1
            max_up = int(argv[i])
            layers = True
        else:
            src = a
        i += 1
    edges = graph(src)
    if top:
        merged = {}
        for n, ts in edges.items():
            a = n.split("/")[0]
            merged.setdefault(a, set()).update(t.split("/")[0] for t in ts if t.split("/")[0] != a)
        edges = merged
    if show_edges:
        for n in sorted(edges):
            for t in sorted(edges[n]):
                print(f"{n} -> {t}")
    circles = sorted((c for c in sccs(edges) if len(c) > 1), key=len)
    total = 0
    for c in circles:
        total += len(c)
        print(f"circle of {len(c)}: {' '.join(c)}")
        pairs = [(a, b) for a in c for b in c if a < b and b in edges[a] and a in edges[b]]
        for a, b in pairs:
            print(f"  {a} <-> {b}")
    print(f"{len(circles)} circles, {total} modules in them")
    status = 0
    if limit is not None and total > limit:
        status = 1
    if layers:
        unlayered = sorted(n for n in edges if layer_of(n) is None)
        for n in unlayered:
            print(f"no layer: {n} (add it to LAYERS in tools/module_graph.py)")
        up = [
            (n, t)
            for n in sorted(edges)
            for t in sorted(edges[n])
            if layer_of(n) is not None and layer_of(t) is not None and layer_of(t) > layer_of(n)
        ]
        for n, t in up:
            print(f"up: {n} ({layer_of(n)}) -> {t} ({layer_of(t)})")
        print(f"{len(up)} edges point up a layer")
        if max_up is not None and (len(up) > max_up or unlayered):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
