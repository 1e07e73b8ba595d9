#!/usr/bin/env bash
# Prints the backends this build of op2 can run on this machine (asks the library itself).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/tools
cat > build/tools/backends.c <<'C'
#include <stdio.h>
#include "op2.h"
int main(void) {
  const char *all[] = {"seq", "threads", "opencl", "cuda", "check"};
  const char *sep = "";
  for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
    if (op_backend_available(all[i])) { printf("%s%s", sep, all[i]); sep = " "; }
  printf("\n");
  return 0;
}
C
${CC:-cc} -Iinclude build/tools/backends.c -Ltarget/release -lop2 -Wl,-rpath,"$PWD/target/release" -o build/tools/backends
build/tools/backends
