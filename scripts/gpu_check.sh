#!/usr/bin/env bash
# One prepared check of the CUDA build on a machine with one NVIDIA GPU, no network, Python torch
# 2.x (CUDA) in a venv, nvcc, cmake and ninja, and none of Debian's -dev packages. Within ~8 min:
#   1. builds tisa-train against that torch's LibTorch, with the C++ dependencies from
#      .gpu-deps/root (made beforehand by scripts/gpu_deps.sh on a machine with Debian's network);
#   2. the CUDA test cases: every scheme's forward/backward on the GPU vs the CPU (also with the
#      sparse final layer the trainer runs), bf16 autocast,
#      masked bf16 attention at L = 192 (fused vs eager gradients; cuDNN's SDPA is kept off),
#      the CUDA optimiser goldens;
#   3. 100 updates of tiny pretraining on the GPU, and the same run interrupted after update 50 and
#      resumed: final weights compared (max |Δ|, bit-identical or not);
#   4. `bench` at albert-base bf16, 64x128 and 16x512: tokens/s and model-FLOPs utilisation against
#      the GPU's dense bf16 peak.
# Results (logs, bench JSON, summary) go to $OUT (default runs/gpu-check).
#
#   scripts/gpu_deps.sh                     # here, once (network)
#   scripts/gpu_check.sh                    # there (device tool: carry .gpu-deps)
# Environment: TORCH_PY (default /opt/torch/.venv/bin/python, else ~/.cache/tisa-train/venv-torch2),
# GPU_CHECK_DEVICE (cuda; "cpu" proves every step up to the GPU on a machine without one),
# GPU_CHECK_SHAPES (bench shapes, default 64x128,16x512), PEAK_TFLOPS (default 989: H100/H200
# SXM dense bf16), JOBS (build parallelism, default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$SECONDS
OUT="${OUT:-runs/gpu-check}"
mkdir -p "$OUT"
DEVICE="${GPU_CHECK_DEVICE:-cuda}"
SHAPES="${GPU_CHECK_SHAPES:-64x128,16x512}"
PEAK="${PEAK_TFLOPS:-989}"
JOBS="${JOBS:-$(nproc)}"
log() { echo "[gpu-check $((SECONDS - T0))s] $*" | tee -a "$OUT/summary.txt"; }

# ---- 1. build
TORCH_PY="${TORCH_PY:-}"
for py in "$TORCH_PY" /opt/torch/.venv/bin/python "$HOME/.cache/tisa-train/venv-torch2/bin/python"; do
  if [ -n "$py" ] && [ -x "$py" ]; then TORCH_PY="$py"; break; fi
done
[ -x "$TORCH_PY" ] || { echo "[gpu-check] no Python with torch found (set TORCH_PY)" >&2; exit 1; }
TORCH_PREFIX=$("$TORCH_PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
log "torch $("$TORCH_PY" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "GPU", torch.cuda.is_available())')"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt" || true

DEPS="$PWD/.gpu-deps/root"
CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release -DTORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}")
PREFIX="$TORCH_PREFIX"
if [ -d "$DEPS" ]; then
  ARCH_LIB="$DEPS/usr/lib/x86_64-linux-gnu"
  PREFIX="$TORCH_PREFIX;$DEPS/usr"
  export LD_LIBRARY_PATH="$ARCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The .pc files say prefix=/usr: the sysroot maps them into .gpu-deps/root.
  export PKG_CONFIG_PATH="$ARCH_LIB/pkgconfig:$DEPS/usr/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$DEPS"
  export PKG_CONFIG_LIBDIR="$PKG_CONFIG_PATH"
  CMAKE_ARGS+=(-DPKG_CONFIG_EXECUTABLE="$DEPS/usr/bin/pkgconf")
else
  log "no .gpu-deps/root: using the system's C++ libraries (run scripts/gpu_deps.sh first on a machine without them)"
fi
command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"; }
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
BUILD=build-gpu-check
cmake "${GEN[@]}" -S . -B "$BUILD" -DCMAKE_PREFIX_PATH="$PREFIX" "${CMAKE_ARGS[@]}" > "$OUT/cmake.log" 2>&1 \
  || { tail -30 "$OUT/cmake.log"; exit 1; }
grep -E "LibTorch|distributed backends" "$OUT/cmake.log" | tee -a "$OUT/summary.txt"
cmake --build "$BUILD" -j "$JOBS" > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
log "built $BUILD"
BIN="$PWD/$BUILD/bin"
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
"$BIN/tisa-train" version | tee -a "$OUT/summary.txt"

# ---- 2. CUDA test cases (they skip, visibly, without a GPU)
status=0
run_tests() {  # binary filter
  if "$BUILD/tests/$1" --gtest_filter="$2" > "$OUT/$1.log" 2>&1; then
    log "$1 [$2]: $(grep -E '^\[  PASSED  \]|SKIPPED \]' "$OUT/$1.log" | head -2 | tr '\n' ' ')"
  else
    status=1; log "$1 [$2]: FAILED"; grep -E "FAILED|Failure|error" "$OUT/$1.log" | head -20 | tee -a "$OUT/summary.txt"
  fi
}
run_tests test_model '*Cuda*'
run_tests test_optim '*cuda*'
run_tests test_model '*FusedAttention*'

# ---- 3. tiny pretraining on the device, with an interrupt + resume
W="$OUT/pretrain"; rm -rf "$W"; mkdir -p "$W"
CORPUS=(data/sample/corpus/alice.txt data/sample/corpus/wiki.valid.raw)
"$BIN/tisa-train" tokenizer train --type sentencepiece --input "${CORPUS[@]}" --vocab-size 4000 \
  --output "$W/tokenizer" > "$W/tokenizer.log" 2>&1
"$BIN/tisa-train" prepare pretrain --input "${CORPUS[@]}" --tokenizer "$W/tokenizer" --output "$W/dataset" \
  --valid-fraction 0.05 > "$W/prepare.log" 2>&1
SETS=(--set data.dataset="$PWD/$W/dataset" --set model.vocab_size=4000 --set model.position.relative=tisa
  --set training.device="$DEVICE" --set training.steps=100 --set training.checkpoint_interval=25)
t=$SECONDS
"$BIN/tisa-train" pretrain --config configs/pretrain/tiny.yaml --run-dir "$W/full" "${SETS[@]}" > "$W/full.log" 2>&1 \
  || { status=1; log "pretraining (100 updates) FAILED"; tail -20 "$W/full.log"; }
log "pretraining: 100 updates on $DEVICE in $((SECONDS - t)) s; last progress line: $(grep -o '[0-9]* tok/s' "$W/full.log" | tail -1)"
rc=0; "$BIN/tisa-train" pretrain --config configs/pretrain/tiny.yaml --run-dir "$W/split" "${SETS[@]}" \
  --stop-after-step 50 > "$W/split1.log" 2>&1 || rc=$?
[ "$rc" = 130 ] || { status=1; log "interrupted run: exit $rc, expected 130"; }
"$BIN/tisa-train" pretrain --config configs/pretrain/tiny.yaml --run-dir "$W/split" "${SETS[@]}" --resume \
  > "$W/split2.log" 2>&1 || { status=1; log "resume FAILED"; tail -20 "$W/split2.log"; }
"$TORCH_PY" - "$W/full/final/model.safetensors" "$W/split/final/model.safetensors" <<'PY' | tee -a "$OUT/summary.txt" || status=1
import json, struct, sys
import torch
def load(path):  # safetensors by hand: u64 header length, JSON header, raw little-endian data
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__": continue
        b, e = info["data_offsets"]
        assert info["dtype"] == "F32", info["dtype"]
        out[name] = torch.frombuffer(bytearray(raw[8 + n + b:8 + n + e]), dtype=torch.float32).view(info["shape"])
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
assert a.keys() == b.keys(), "different tensors"
diff = max((a[k] - b[k]).abs().max().item() for k in a)
same = all(torch.equal(a[k], b[k]) for k in a)
print(f"resume check: {len(a)} tensors, max |full - resumed| = {diff:.3g}, bit-identical: {same}")
sys.exit(0 if diff < 1e-3 else 1)
PY

# ---- 4. bench at albert-base bf16 (fused attention where the scheme allows, and eager for TISA)
if [ "$DEVICE" = cuda ]; then BENCH_EXTRA=(--peak-tflops "$PEAK"); else BENCH_EXTRA=(--set model.num_hidden_layers=2); fi
"$BIN/tisa-train" bench --device "$DEVICE" --precision bf16 --shape "$SHAPES" --scheme absolute,tisa,shaw-hf \
  --attention auto,eager --reps "${BENCH_REPS:-10}" --warmup 3 "${BENCH_EXTRA[@]}" --json "$OUT/bench.json" \
  2>&1 | tee "$OUT/bench.txt" || { status=1; log "bench FAILED"; }
log "done, status $status"
exit $status
