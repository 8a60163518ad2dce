#!/usr/bin/env bash
# Prepares, on a machine with Debian's package network, what scripts/gpu_check.sh needs on a GPU
# machine that has no network and none of Debian's -dev packages: the .deb files of tisa-train's
# C++ dependencies (yaml-cpp, spdlog + fmt, CLI11, nlohmann-json, GoogleTest, SentencePiece,
# utf8proc, gloo headers, pkgconf), unpacked into .gpu-deps/root (about 10 MB; ignored by git).
# Carry .gpu-deps with the working tree (the device tool's `carry`).
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(libyaml-cpp-dev libyaml-cpp0.7 libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libcli11-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libsentencepiece-dev libsentencepiece0 libutf8proc-dev
  libutf8proc2 libgloo-dev pkgconf pkgconf-bin libpkgconf3 zlib1g-dev libzstd-dev)
rm -rf .gpu-deps && mkdir -p .gpu-deps/debs .gpu-deps/root
(cd .gpu-deps/debs && apt-get download "${PKGS[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
for f in .gpu-deps/debs/*.deb; do dpkg-deb -x "$f" .gpu-deps/root; done
rm -rf .gpu-deps/debs .gpu-deps/root/usr/share/doc .gpu-deps/root/usr/share/man
echo "[gpu-deps] $(du -sh .gpu-deps | cut -f1) in .gpu-deps/root"
