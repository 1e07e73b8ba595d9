#!/usr/bin/env python3
"""elf_weak_version.py FILE VERSION SYMBOL...: lets a shared library that the GPU kit carries
load on a glibc older than VERSION (build-mpi.sh: Debian 12's libevent_core and GLIBC_2.36,
for arc4random and arc4random_buf, the only symbols it needs of that version).

In FILE (an x86-64 ELF shared object, changed in place) the dynamic loader's version check of
VERSION is made weak (VER_FLG_WEAK: a glibc without it is no longer an error at load time) and
each SYMBOL's reference becomes unversioned, so it binds to glibc's own where glibc has it
(2.36 and newer) and otherwise to a library loaded before it (the kit's compat library, which
mpi/env.sh preloads on an older glibc). Fails, changing nothing, when another symbol needs
VERSION, a SYMBOL does not, or the file is not what is expected."""
import struct
import sys

SHT_DYNSYM, SHT_GNU_VERNEED, SHT_GNU_VERSYM = 11, 0x6FFFFFFE, 0x6FFFFFFF
VER_FLG_WEAK, VER_NDX_GLOBAL = 2, 1


def main():
    path, version, symbols = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{path}: not a 64-bit little-endian ELF file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(shnum):
        _, typ, _, _, off, size, link, info, _, entsize = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        sections.append((typ, off, size, link, info, entsize))

    def find(typ):
        found = [s for s in sections if s[0] == typ]
        if len(found) != 1:
            sys.exit(f"{path}: {len(found)} sections of type {typ:#x}")
        return found[0]

    def cstr(off):
        return data[off : data.index(0, off)].decode()

    _, vn_off, _, vn_link, vn_count, _ = find(SHT_GNU_VERNEED)
    vn_strtab = sections[vn_link][1]
    index = None
    for _ in range(vn_count):
        _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, vn_off)
        a = vn_off + aux
        for _ in range(cnt):
            _, flags, other, name, anxt = struct.unpack_from("<IHHII", data, a)
            if cstr(vn_strtab + name) == version:
                struct.pack_into("<H", data, a + 4, flags | VER_FLG_WEAK)
                index = other
            a += anxt
        vn_off += nxt
    if index is None:
        sys.exit(f"{path}: needs no {version}")
    _, sym_off, sym_size, sym_link, _, sym_ent = find(SHT_DYNSYM)
    sym_strtab = sections[sym_link][1]
    versym_off = find(SHT_GNU_VERSYM)[1]
    changed = set()
    for i in range(sym_size // sym_ent):
        name = cstr(sym_strtab + struct.unpack_from("<I", data, sym_off + i * sym_ent)[0])
        v = struct.unpack_from("<H", data, versym_off + 2 * i)[0] & 0x7FFF
        if v != index:
            continue
        if name not in symbols:
            sys.exit(f"{path}: {name} needs {version} too")
        struct.pack_into("<H", data, versym_off + 2 * i, VER_NDX_GLOBAL)
        changed.add(name)
    if changed != symbols:
        sys.exit(f"{path}: {' '.join(sorted(symbols - changed))} do not need {version}")
    with open(path, "wb") as f:
        f.write(data)
    print(f"{path}: {version} weak; {' '.join(sorted(changed))} unversioned")


if __name__ == "__main__":
    main()
