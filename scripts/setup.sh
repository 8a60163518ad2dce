#!/usr/bin/env bash
# Installs what tisa-train needs from Debian (only what is missing; `apt-get update` once) and
# builds Release with ccache into build/. Idempotent: a second run only rebuilds what changed.
#   scripts/setup.sh [--sanitize]    (ASan + UBSan build into build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config ccache git
  libtorch-dev libopenblas0-openmp
  libsentencepiece-dev sentencepiece libutf8proc-dev
  libyaml-cpp-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgloo-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's LibTorch calls the system libblas.so.3: make sure it resolves to OpenBLAS (OpenMP
# build, which follows LibTorch's thread count), not the ~30x slower reference BLAS.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
case "$blas" in
  *openblas-openmp*) ;;
  *) echo "[setup] warning: libblas.so.3 resolves to '$blas', not OpenBLAS-OpenMP;" \
          "run: update-alternatives --config libblas.so.3-x86_64-linux-gnu" >&2 ;;
esac

BUILD_DIR=build; EXTRA=()
if [ "${1:-}" = "--sanitize" ]; then BUILD_DIR=build-asan; EXTRA=(-DTISA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo); fi
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths below the checkout's parent are hashed relative, so clones and worktrees side by side share
# hits; the sloppiness lets ccache cache the compiles that use the precompiled <torch/torch.h>.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${EXTRA[@]}"
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo "[setup] built: $BUILD_DIR/bin/tisa-train"
