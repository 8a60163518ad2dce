#!/usr/bin/env bash
# The README's test command: set-up (dependencies + build) then every test through ctest.
#   scripts/test.sh            all tests (unit + integration)
#   scripts/test.sh -L unit    only the fast unit tests (any ctest arguments pass through)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
cd build
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
