#!/usr/bin/env bash
# Installs what tisa-train needs (only what is missing; `apt-get update` once) and builds Release
# with ccache. Idempotent: a second run only rebuilds what changed. Prints the build folder last.
#   scripts/setup.sh                     Debian's LibTorch 1.13 (CPU)            -> build/
#   scripts/setup.sh --torch pypi        LibTorch 2.x from PyPI's torch wheel     -> build-torch2/
#                                        (CUDA-enabled; in a venv this script creates, versions
#                                        pinned in scripts/requirements-torch2.txt)
#   scripts/setup.sh --torch DIR         a LibTorch you downloaded (DIR = unpacked libtorch/)
#                                                                                 -> build-libtorch/
#   scripts/setup.sh --sanitize          ASan + UBSan with Debian's LibTorch      -> build-asan/
#   scripts/setup.sh --print-build-dir [--torch ...]   only prints the build folder of that choice
#   --binaries-only                      build only tisa-train, tisa-text and tisa-nn (what the
#                                        demo runs; scripts/test.sh builds the tests)
# Environment: TISA_VENV (default ~/.cache/tisa-train/venv-torch2), CCACHE_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH=debian; SANITIZE=0; PRINT_ONLY=0; BINARIES_ONLY=0
while (($#)); do
  case "$1" in
    --torch) TORCH="${2:?--torch needs debian, pypi or a LibTorch folder}"; shift 2 ;;
    --sanitize) SANITIZE=1; shift ;;
    --print-build-dir) PRINT_ONLY=1; shift ;;
    --binaries-only) BINARIES_ONLY=1; shift ;;
    *) echo "usage: scripts/setup.sh [--torch debian|pypi|DIR] [--sanitize] [--binaries-only] [--print-build-dir]" >&2; exit 2 ;;
  esac
done
if [ "$TORCH" != debian ] && [ "$TORCH" != pypi ] && [ ! -d "$TORCH" ]; then
  echo "[setup] --torch: '$TORCH' is neither debian, pypi nor a LibTorch folder" >&2; exit 2
fi
case "$TORCH" in
  debian) BUILD_DIR=build; ((SANITIZE)) && BUILD_DIR=build-asan ;;
  pypi) BUILD_DIR=build-torch2 ;;
  *) BUILD_DIR=build-libtorch ;;
esac
if ((PRINT_ONLY)); then echo "$BUILD_DIR"; exit 0; fi

PACKAGES=(build-essential cmake pkg-config ccache git python3 python3-venv
  libsentencepiece-dev sentencepiece libutf8proc-dev
  libgoogle-perftools-dev libyaml-cpp-dev libspdlog-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libzstd-dev
  libgtest-dev libgloo-dev)
# Debian's LibTorch and the OpenBLAS it calls through libblas.so.3 (the reference BLAS is far slower: docs/perf/README.md);
# the headers of the oneDNN it links, whose sgemm runs our float32 linear layers (src/model/cpu_linear.h).
[ "$TORCH" = debian ] && PACKAGES+=(libtorch-dev libopenblas0-openmp libdnnl-dev)

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

CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release)
case "$TORCH" in
  debian)
    # Debian's LibTorch calls the system libblas.so.3: make sure it resolves to OpenBLAS (OpenMP
    # build, which follows LibTorch's thread count), not the far slower reference BLAS.
    blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
    case "$blas" in
      *openblas-openmp*) ;;
      *) echo "[setup] warning: libblas.so.3 resolves to '$blas', not OpenBLAS-OpenMP;" \
              "run: update-alternatives --config libblas.so.3-x86_64-linux-gnu" >&2 ;;
    esac
    ((SANITIZE)) && CMAKE_ARGS=(-DTISA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
    ;;
  pypi)
    VENV="${TISA_VENV:-$HOME/.cache/tisa-train/venv-torch2}"
    REQ=scripts/requirements-torch2.txt
    stamp="$VENV/.tisa-requirements.sha256"
    want=$(sha256sum "$REQ" | cut -d' ' -f1)
    if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
      echo "[setup] Python environment with the pinned torch (LibTorch 2.x): $VENV"
      [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
      "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"
      echo "$want" > "$stamp"
    fi
    prefix=$("$VENV/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
    CMAKE_ARGS+=(-DCMAKE_PREFIX_PATH="$prefix" -DTISA_PYTHON="$VENV/bin/python")
    # The wheel's LibTorch is CUDA-enabled: its CMake config wants the CUDA toolkit (nvcc).
    if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
    command -v nvcc >/dev/null || echo "[setup] warning: no nvcc on PATH; the CUDA-enabled LibTorch's CMake config may fail" >&2
    # Build only for the GPUs people train on (Hopper, Ampere) rather than the 11 architectures
    # LibTorch's CMake would list; tisa-train has no .cu files, so this only quiets its probe.
    export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-8.0;9.0}"
    ;;
  *)
    CMAKE_ARGS+=(-DCMAKE_PREFIX_PATH="$(cd "$TORCH" && pwd)")
    ;;
esac

export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths below the checkout's parent are hashed relative, so clones and worktrees side by side share
# hits; the sloppiness lets ccache cache the compiles that use the precompiled <torch/torch.h>.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${CMAKE_ARGS[@]}"
fi
if ((BINARIES_ONLY)); then
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target tisa-train tisa-text tisa-nn
else
  cmake --build "$BUILD_DIR" -j "$(nproc)"
fi
echo "[setup] built: $BUILD_DIR/bin/tisa-train"
