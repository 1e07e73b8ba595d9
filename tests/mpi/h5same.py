"""h5same.py REF FILE...: every FILE has exactly REF's datasets (names, shapes, types, bytes)
and attributes (names, types, values). Files op2 writes under mpiexec -n P must equal the
one-process file in everything but HDF5's internal layout. Exit 1 on the first difference."""
import sys

import h5py
import numpy as np


def items(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                attrs = {k: (obj.attrs.get_id(k).dtype.str, obj.attrs.get_id(k).get_type().get_size(),
                             np.asarray(v).tobytes()) for k, v in obj.attrs.items()}
                out[name] = (obj.shape, obj.dtype.str, np.asarray(obj[()]).tobytes(), attrs)
        f.visititems(visit)
    return out


def main():
    ref = items(sys.argv[1])
    if not ref:
        sys.exit(f"h5same: {sys.argv[1]} holds no dataset")
    for path in sys.argv[2:]:
        got = items(path)
        if sorted(got) != sorted(ref):
            sys.exit(f"h5same: {path} has datasets {sorted(got)}, {sys.argv[1]} has {sorted(ref)}")
        for name, want in ref.items():
            g = got[name]
            for what, a, b in (("shape", g[0], want[0]), ("type", g[1], want[1]), ("values", g[2], want[2]),
                               ("attributes", g[3], want[3])):
                if a != b:
                    sys.exit(f"h5same: {path}: dataset '{name}': {what} differ from {sys.argv[1]}: {a!r:.200} vs {b!r:.200}")
    print(f"h5same: {len(sys.argv) - 2} file(s) equal {sys.argv[1]} ({len(ref)} datasets)")


if __name__ == "__main__":
    main()
