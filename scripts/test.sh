#!/usr/bin/env bash
# The whole test suite: installs what it needs, then builds and runs every suite over every
# backend this build can run here. Usage (as root on a fresh Debian machine): bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
make lib
backends=$(bash scripts/backends.sh)
echo "test.sh: backends under test: $backends"
make test TEST_BACKENDS="$backends"
