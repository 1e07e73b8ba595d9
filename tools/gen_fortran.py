#!/usr/bin/env python3
"""Writes the type-generic blocks of fortran/op2.F90 and fortran/op2_fortran.F90.

A Fortran generic such as op_decl_dat needs one specific procedure per type of data it takes
(real(8), real(4), integer(4), integer(8), logical(c_bool)); rank needs none (the dummies are
assumed-rank `data(..)`, or assumed-size `data(*)` plus a scalar form). Those specifics differ
only in the type, so each call is written once here, as a template, and TYPES says how each
type is spelled. The script fills the blocks between marker lines in the committed sources:

    ! BEGIN GENERATED <block> (tools/gen_fortran.py writes it: edit there, then run it)
    ...
    ! END GENERATED <block>

One block per generic's specifics (where they stood in the file, after their hand-written doc
comment) and one block `generics` per module with its `interface <generic>` blocks. The text
around the blocks is hand-written. A generic may list hand-written specifics too (`extra`):
op2's op_decl_dat_zero, op2_fortran_declarations' decl_const_char.

Why not one assumed-type `type(*), dimension(..)` dummy per call (Fortran 2018)? The type string
each call passes to libop2 ('double', 'int', ...) comes from the static type of the data, which
an assumed-type dummy does not carry, and such a dummy would also accept character, complex or
derived-type data that the specifics refuse at compile time.

fortran/op2_fortran_reference.F90 (op_par_loop_1 .. op_par_loop_N) is written by
tools/gen_fortran_loops.py.

Usage: gen_fortran.py [--check]
  (no option)  rewrite the blocks in place
  --check      change nothing; fail (exit 1) when a block is not what this script writes
"""
import re
import sys
from pathlib import Path

# The types of data the generics take, keyed by the suffix of the specific's name. c: the
# declaration with iso_c_binding kinds; f: with kind numbers (the spelling op_get_const_hdf5,
# op_write_const_hdf5 and op_fetch_mat_csr declare; the same kinds under gfortran); cname: the
# type string libop2 gets.
TYPES = {
    "r8": dict(c="real(c_double)", f="real(8)", cname="double"),
    "r4": dict(c="real(c_float)", f="real(4)", cname="float"),
    "i4": dict(c="integer(c_int)", f="integer(4)", cname="int"),
    "i8": dict(c="integer(c_long_long)", f="integer(8)", cname="ll"),
    "b": dict(c="logical(c_bool)", f=None, cname="bool"),
}
ALL = ["r8", "r4", "i4", "i8", "b"]
NUMERIC = ["r8", "r4", "i4", "i8"]

# Templates. Placeholders: {name} the specific's name; {ctype} / {ftype} the type as TYPES
# spells it (c / f); {cname} the C type string; others are the block's own (`fields`). A line
# starting `[array] ` or `[scalar] ` is kept only for specifics of that form (tag removed); a
# specific named <generic>_<suffix> is the array form, <generic>_<suffix>s the scalar form.

# ---- module op2 (fortran/op2.F90) -----------------------------------------------------------

OP2_DECL_DAT = """\
  function {name}(set, dim, data, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    {ctype}, intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    call check_size('op_decl_dat', name, size(data, kind=c_int64_t), set, dim)
    dat = decl_dat(set, dim, '{cname}', data_ptr(c_loc(data), size(data)), name)
  end function {name}
"""

OP2_DECL_CONST = """\
  subroutine {name}(dim, data, name)
    integer, intent(in) :: dim
    {ctype}, intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    call check_count('op_decl_const', name, size(data, kind=c_int64_t), dim)
    call c_op_decl_const(int(dim, c_int), cstr('{cname}'), c_loc(data), cstr(name))
  end subroutine {name}
"""

OP2_ARG_GBL = """\
  function {name}(data, dim, acc) result(arg)
    {ctype}, intent(inout), target :: data(..)
    integer, intent(in) :: dim, acc
    type(op_arg) :: arg
    call check_gbl('op_arg_gbl', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_gbl(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('{cname}'), &
                       int(acc, c_int))
  end function {name}
"""

OP2_ARG_INFO = """\
  function {name}(data, dim, ref) result(arg)
    {ctype}, intent(inout), target :: data(..)
    integer, intent(in) :: dim, ref
    type(op_arg) :: arg
    call check_gbl('op_arg_info', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_info(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('{cname}'), &
                       c_ref(ref))
  end function {name}
"""

OP2_FETCH_DATA = """\
  subroutine {name}(dat, data)
    type(op_dat), intent(in) :: dat
    {ctype}, intent(inout), target, contiguous :: data(..)
    call c_op_fetch_data(dat%handle, data_ptr(c_loc(data), size(data)))
  end subroutine {name}
"""

OP2_FETCH_DATA_IDX = """\
  subroutine {name}(dat, data, low, high)
    type(op_dat), intent(in) :: dat
    {ctype}, intent(inout), target, contiguous :: data(..)
    integer, intent(in) :: low, high
    call c_op_fetch_data_idx(dat%handle, data_ptr(c_loc(data), size(data)), &
                             int(low - 1, c_int), int(high - 1, c_int))
  end subroutine {name}
"""

# op_get_const_hdf5 (intent inout) and op_write_const_hdf5 (intent in): the same call shape.
OP2_CONST_HDF5 = """\
  subroutine {name}(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
[array]     {ftype}, intent({intent}), target :: data(*)
[scalar]     {ftype}, intent({intent}), target :: data
    call check_const_type('{call}', name, type, '{cname}')
[scalar]     if (dim /= 1) then
[scalar]       write(error_unit, '(a)') 'op2 error: {call} ''' // name // ''': a scalar needs dim 1'
[scalar]       error stop 2
[scalar]     end if
[array]     call c_{call}(cstr(name), int(dim, c_int), cstr('{cname}'), c_loc(data), cstr(file))
[scalar]     call c_{call}(cstr(name), 1_c_int, cstr('{cname}'), c_loc(data), cstr(file))
  end subroutine {name}
"""

OP2_FETCH_MAT_CSR = """\
  subroutine {name}(mat, rowptr, colidx, values)
    type(op_mat), intent(in) :: mat
    integer(c_int), intent(inout), target, contiguous :: rowptr(:), colidx(:)
    {ftype}, intent(inout), target, contiguous :: values(:)
    call c_op_fetch_mat_csr(mat%handle, c_loc(rowptr), c_loc(colidx), c_loc(values))
    rowptr = rowptr + 1
    colidx = colidx + 1
  end subroutine {name}
"""

# ---- module op2_fortran_declarations (fortran/op2_fortran.F90): OP2's argument lists --------

DECL_DAT = """\
  subroutine {name}(set, dim, type, data, dat, name)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    character(len=*), intent(in) :: type
    character(len=*), intent(in), optional :: name
    {ctype}, intent(in), target, contiguous :: data(..)
    type(op_dat), intent(out) :: dat
    {ctype}, pointer :: flat(:)
    call check_type('op_decl_dat', name_or('dat', name, .false.), type, '{cname}')
    if (size(data) >= 0) then
      dat = op2_decl_dat(set, dim, data, name_or('dat', name))
    else                             ! assumed-size: dim values per element of the set
      call c_f_pointer(c_loc(data), flat, [assumed_count(set, dim)])
      dat = op2_decl_dat(set, dim, flat, name_or('dat', name))
    end if
  end subroutine {name}
"""

DECL_CONST = """\
  subroutine {name}(value, dim, type)
    {ctype}, intent(in) :: value(..)
    integer, intent(in) :: dim
    character(len=*), intent(in) :: type
    call check_const(size(value), dim, type, '{cname}')
  end subroutine {name}
"""

ARG_GBL = """\
  function {name}(data, dim, type, access) result(arg)
    {ctype}, target :: data(..)
    integer, intent(in) :: dim, access
    character(len=*), intent(in) :: type
    type(op_arg) :: arg
    call check_type('op_arg_gbl', '', type, '{cname}')
    arg = op2_arg_gbl(data, dim, access)
  end function {name}
"""

ARG_INFO = """\
  function {name}(data, dim, type, ref) result(arg)
    {ctype}, target :: data(..)
    integer, intent(in) :: dim, ref
    character(len=*), intent(in) :: type
    type(op_arg) :: arg
    call check_type('op_arg_info', '', type, '{cname}')
    arg = op2_arg_info(data, dim, ref)
  end function {name}
"""


def block(generic, prefix, types, template, fields=None, scalars=(), extra=()):
    """One generic: specifics <prefix>_<type> for `types` (array form) and <prefix>_<type>s for
    `scalars`, then the hand-written `extra` specifics (listed in the interface only)."""
    specifics = [(f"{prefix}_{t}", t, "array") for t in types]
    specifics += [(f"{prefix}_{t}s", t, "scalar") for t in scalars]
    return dict(generic=generic, specifics=specifics, template=template,
                fields=fields or {}, extra=list(extra))


# The blocks of each file, in file order; the block named after a generic holds its specifics.
FILES = {
    "fortran/op2.F90": [
        block("op_decl_dat", "op_decl_dat", ALL, OP2_DECL_DAT, extra=["op_decl_dat_zero"]),
        block("op_decl_const", "op_decl_const", ALL, OP2_DECL_CONST),
        block("op_arg_gbl", "op_arg_gbl", ALL, OP2_ARG_GBL),
        block("op_arg_info", "op_arg_info", NUMERIC, OP2_ARG_INFO),
        block("op_fetch_data", "op_fetch_data", ALL, OP2_FETCH_DATA),
        block("op_fetch_data_idx", "op_fetch_data_idx", ALL, OP2_FETCH_DATA_IDX),
        block("op_get_const_hdf5", "op_get_const_hdf5", NUMERIC, OP2_CONST_HDF5,
              fields=dict(call="op_get_const_hdf5", intent="inout"), scalars=["r8", "i4"]),
        block("op_write_const_hdf5", "op_write_const_hdf5", NUMERIC, OP2_CONST_HDF5,
              fields=dict(call="op_write_const_hdf5", intent="in"), scalars=["r8", "i4"]),
        block("op_fetch_mat_csr", "op_fetch_mat_csr", ["r8", "r4"], OP2_FETCH_MAT_CSR),
    ],
    "fortran/op2_fortran.F90": [
        block("op_decl_dat", "decl_dat", ALL, DECL_DAT),
        block("op_decl_const", "decl_const", ALL, DECL_CONST, extra=["decl_const_char"]),
        block("op_arg_gbl", "arg_gbl", ALL, ARG_GBL),
        block("op_arg_info", "arg_info", NUMERIC, ARG_INFO),
    ],
}

SCRIPT = "tools/gen_fortran.py"
WIDTH = 96  # interface lists wrap before this column (the modules' own style)


def expand(template, name, type_key, form, fields):
    values = dict(fields)
    t = TYPES[type_key]
    values.update(name=name, ctype=t["c"], ftype=t["f"], cname=t["cname"])
    out = []
    for line in template.splitlines():
        tag = re.match(r"\[(array|scalar)\] ", line)
        if tag:
            if tag.group(1) != form:
                continue
            line = line[tag.end():]
        if t["f"] is None and "{ftype}" in line:
            raise ValueError(f"{name}: TYPES['{type_key}'] has no f spelling")
        out.append(line.format(**values))
    return "\n".join(out) + "\n"


def procedures(b):
    return "\n".join(expand(b["template"], name, t, form, b["fields"])
                     for name, t, form in b["specifics"])


def interface(b):
    names = [name for name, _, _ in b["specifics"]] + b["extra"]
    lines = []
    line = "    module procedure " + names[0]
    for n in names[1:]:
        if len(line) + len(", " + n) + len(", &") > WIDTH:
            lines.append(line + ", &")
            line = " " * len("    module procedure ") + n
        else:
            line += ", " + n
    lines.append(line)
    g = b["generic"]
    return f"  interface {g}\n" + "\n".join(lines) + f"\n  end interface {g}\n"


def generics(blocks):
    return "\n".join(interface(b) for b in blocks)


BEGIN = re.compile(r"^ *! BEGIN GENERATED (\S+) .*\n", re.M)


def marker(name):
    return (f"  ! BEGIN GENERATED {name} ({SCRIPT} writes it: edit there, then run it)\n",
            f"  ! END GENERATED {name}\n")


def render(path, text, blocks):
    """`text` with each block's contents replaced by what the script writes."""
    wanted = {"generics": generics(blocks)}
    for b in blocks:
        wanted[b["generic"]] = procedures(b)
    found = BEGIN.findall(text)
    for name in found:
        if name not in wanted:
            raise ValueError(f"{path}: block '{name}' is not one {SCRIPT} writes")
    for name, body in wanted.items():
        begin, end = marker(name)
        if text.count(begin) != 1 or text.count(end) != 1:
            raise ValueError(f"{path}: needs exactly one line\n{begin}and one\n{end}"
                             f"(found {text.count(begin)} and {text.count(end)})")
        i = text.index(begin) + len(begin)
        j = text.index(end)
        if j < i:
            raise ValueError(f"{path}: END GENERATED {name} comes before its BEGIN")
        text = text[:i] + body + text[j:]
    return text


def main(argv):
    check = "--check" in argv
    unknown = [a for a in argv if a != "--check"]
    if unknown:
        sys.stderr.write(__doc__)
        return 2
    root = Path(__file__).resolve().parent.parent
    stale = []
    for rel, blocks in FILES.items():
        path = root / rel
        current = path.read_text()
        try:
            text = render(rel, current, blocks)
        except ValueError as e:
            sys.stderr.write(f"{SCRIPT}: {e}\n")
            return 1
        if text != current:
            if check:
                stale.append(rel)
            else:
                path.write_text(text)
    for rel in stale:
        sys.stderr.write(f"{rel}: its generated blocks are not what {SCRIPT} writes: run it\n")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
