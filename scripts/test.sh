#!/usr/bin/env bash
# The README's test command: set-up (dependencies + build) then every test through ctest.
#   scripts/test.sh                 all tests (unit + integration) against Debian's LibTorch 1.13
#   scripts/test.sh --torch pypi    the same against LibTorch 2.x from PyPI's torch (CUDA-enabled)
#   scripts/test.sh -L unit         only the fast unit tests (any ctest arguments pass through)
set -euo pipefail
cd "$(dirname "$0")/.."
SETUP_ARGS=()
if [ "${1:-}" = "--torch" ]; then SETUP_ARGS=(--torch "${2:?--torch needs a value}"); shift 2; fi
scripts/setup.sh "${SETUP_ARGS[@]}"
BUILD_DIR=$(scripts/setup.sh --print-build-dir "${SETUP_ARGS[@]}")
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
cd "$BUILD_DIR"
echo "[test] $(grep -m1 '^Torch_DIR' CMakeCache.txt || true)"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
