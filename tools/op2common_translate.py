"""Runs OP2-Common's translator (op2-translator, given as the first argument; the rest are its
own arguments) with two faults of it mended in memory, without touching its tree:

- three libclang functions it calls are declared without their return types, so ctypes cuts
  a pointer to 32 bits (a crash under a position-independent Python);
- its preprocessor (pcpp) keeps comments inside macros, which breaks OP2's own headers'
  `<...>` includes: those are left to libclang.

Used by tests/gpu-kit/build-op2common.sh and bench/op2common-fortran.sh. Only our wrapper is
here: nothing of OP2-Common is."""
import ctypes
import runpy
import sys

translator = sys.argv[1]
sys.path.insert(0, translator)
from clang.cindex import conf, Cursor  # noqa: E402

lib = conf.lib
lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
lib.clang_Cursor_Evaluate.argtypes = [Cursor]
lib.clang_EvalResult_getAsInt.restype = ctypes.c_int
lib.clang_EvalResult_getAsInt.argtypes = [ctypes.c_void_p]
lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
import cpp  # noqa: E402


def on_file_open(self, is_system_include, includepath):
    if is_system_include:
        raise IOError("left to libclang")
    return open(includepath, "r", encoding="utf-8")


cpp.Preprocessor.on_file_open = on_file_open
sys.argv = [translator] + sys.argv[2:]
runpy.run_path(translator, run_name="__main__")
