#!/usr/bin/env bash
# Checks that the Fortran module fortran/op2.F90 keeps up with the C header include/op2.h:
#   - every function declared in op2.h has a bind(C, name="...") interface in op2.F90, or is on
#     the C-only list below with the reason;
#   - every bind(C, name="...") in op2.F90 names a function of op2.h (or a libc one listed
#     below), so a renamed C function cannot leave a dangling binding;
#   - every integer #define of op2.h (OP_READ .. OP_MAX, OP_ERRORS_*, OP2_ERR_*, ...) is a
#     parameter of the module with the same value, or is on the C-only list; a #define outside
#     the OP_ / OP2_ names is reported too (it would collide with users' own macros).
# Prints what is wrong, then "N passed, N failed"; exits non-zero if anything failed.
#
# usage: check_bindings.sh [HEADER [MODULE]]
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
header=${1:-$root/include/op2.h}
module=${2:-$root/fortran/op2.F90}

# C functions Fortran programs do not need, and why (name: reason).
c_only_functions='
op_decl_dat_char: the op_decl_dat generic derives the type string and element size from the Fortran array
op_decl_const_char: the op_decl_const generic derives the type string and element size from the Fortran data
op_arg_gbl_char: the op_arg_gbl generic derives the type string and element size from the Fortran data
op_printf: variadic (a static inline printf in op2.h); Fortran programs print when op_is_root()
'
# Integer macros of op2.h that have no Fortran parameter, and why (name: reason).
c_only_constants='
'
# bind(C) names in the module that are not op2 functions (name: reason).
foreign_bindings='
strlen: libc, measures the C strings libop2 returns
'

passed=0
failed=0
problem() { failed=$((failed + 1)); printf 'check_bindings: %s\n' "$*"; }
ok() { passed=$((passed + 1)); }
listed() { printf '%s\n' "$2" | grep -q "^$1:"; }

for f in "$header" "$module"; do
  [ -r "$f" ] || { echo "check_bindings: cannot read $f"; echo "0 passed, 1 failed"; exit 1; }
done

# The C functions: op2.h without comments and preprocessor lines (continuations joined), cut
# into declarations at ; { }, keeping those that declare a function (the identifier before the
# first parenthesis; typedefs are not functions).
c_functions=$(
  sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$header" |
    grep -v '^[[:space:]]*#' |
    sed -e 's://.*$::' |
    tr '\n' ' ' |
    sed -e 's:/\*\([^*]\|\*[^/]\)*\*/: :g' |
    tr ';{}' '\n\n\n' |
    grep -v '^[[:space:]]*typedef' |
    grep -o '^[^(]*[A-Za-z_][A-Za-z0-9_]*[[:space:]]*(' |
    sed -e 's/[[:space:]]*($//' -e 's/.*[^A-Za-z0-9_]//' |
    grep '^op' | sort -u
)
if [ -z "$c_functions" ]; then
  problem "found no functions in $header"
fi

# The Fortran bindings: bind(C, name="...") in the module (case-insensitive bind/c/name).
f_bindings=$(grep -io 'bind *( *c *, *name *= *"[^"]*"' "$module" | sed -e 's/.*"\([^"]*\)"/\1/' | sort -u)

for fn in $c_functions; do
  if printf '%s\n' "$f_bindings" | grep -qx "$fn"; then
    ok
  elif listed "$fn" "$c_only_functions"; then
    ok
  else
    problem "$fn (op2.h) has no bind(C, name=\"$fn\") in $(basename "$module") and is not on the C-only list"
  fi
done
for fn in $f_bindings; do
  if printf '%s\n' "$c_functions" | grep -qx "$fn" || listed "$fn" "$foreign_bindings"; then
    ok
  else
    problem "bind(C, name=\"$fn\") in $(basename "$module") names no function of op2.h"
  fi
done
for fn in $(printf '%s\n' "$c_only_functions" | sed -n 's/^\([A-Za-z0-9_]*\):.*/\1/p'); do
  if printf '%s\n' "$c_functions" | grep -qx "$fn"; then ok; else
    problem "C-only list names $fn, which op2.h no longer declares"
  fi
done

# Integer constants: #define NAME <integer> in op2.h against NAME = <integer> in the module.
while read -r name value; do
  [ -n "$name" ] || continue
  case $name in
    OP_* | OP2_*) ;;
    *)
      problem "op2.h defines $name, outside op2's OP_/OP2_ names: an internal constant exported by cbindgen? (exclude it in cbindgen.toml or make it pub(crate))"
      continue
      ;;
  esac
  fvalue=$(grep -io "\b$name *= *-\?[0-9]\+" "$module" | head -n 1 | sed 's/.*= *//')
  if [ -z "$fvalue" ]; then
    if listed "$name" "$c_only_constants"; then ok; else
      problem "$name ($value in op2.h) is not a parameter of the Fortran module"
    fi
  elif [ "$fvalue" -ne "$value" ]; then
    problem "$name is $value in op2.h but $fvalue in the Fortran module"
  else
    ok
  fi
done < <(sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\+\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]\+(\?\(-\?[0-9]\+\))\?[[:space:]]*\(\/[*/].*\)\?$/\1 \2/p' "$header" |
          grep -v '_H\b')

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
