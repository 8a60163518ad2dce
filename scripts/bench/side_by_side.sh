#!/usr/bin/env bash
# One alternated side-by-side run (docs/perf/README.md, "LibTorch 2.x and HF side by side"):
# for each shape and precision, Hugging Face transformers (sdpa, eager) on PyPI's torch, then
# tisa-train on the same torch (build-torch2), then tisa-train on Debian's LibTorch 1.13 (build);
# tisa-train with --mlm-all-positions, so that it projects every position onto the vocabulary as
# HF's AlbertForPreTraining does (the same work per step);
# then the Shaw comparison at HF's relative_key setting (transformers 4.57 through
# --transformers-dir, since 5.x dropped relative_key). All at the same thread count.
#   scripts/bench/side_by_side.sh [THREADS] [REPS]   -> runs/side-by-side/*.txt, *.json
# Benchmark only: unsets OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (they halve OpenBLAS's speed here).
set -euo pipefail
cd "$(dirname "$0")/../.."
THREADS="${1:-1}"; REPS="${2:-3}"
PY="${TISA_VENV:-$HOME/.cache/tisa-train/venv-torch2}/bin/python"
HF457="${HF457_DIR:-$HOME/.cache/tisa-train/hf-4.57}"
OUT=runs/side-by-side; mkdir -p "$OUT"
export OMP_WAIT_POLICY=PASSIVE
E=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
COMMON=(--threads "$THREADS" --reps "$REPS" --warmup 1)
for shape in 8x128 2x512; do
  schemes=absolute,tisa; [ "$shape" = 2x512 ] && schemes=absolute,tisa,shaw-hf
  for prec in fp32 bf16; do
    tag="$shape-$prec"
    echo "== $tag: HF (transformers $("$PY" -c 'import transformers; print(transformers.__version__)'))"
    "${E[@]}" "$PY" scripts/bench/hf_bench.py --shape "$shape" --precision "$prec" --attn sdpa,eager \
      "${COMMON[@]}" --json "$OUT/hf-$tag.json" | tee "$OUT/hf-$tag.txt"
    echo "== $tag: tisa-train, LibTorch 2.x"
    "${E[@]}" build-torch2/bin/tisa-train bench --shape "$shape" --precision "$prec" --scheme "$schemes" \
      --attention auto --mlm-all-positions "${COMMON[@]}" --json "$OUT/tisa2-$tag.json" | tee "$OUT/tisa2-$tag.txt"
    echo "== $tag: tisa-train, LibTorch 1.13"
    "${E[@]}" build/bin/tisa-train bench --shape "$shape" --precision "$prec" --scheme "$schemes" \
      --mlm-all-positions "${COMMON[@]}" --json "$OUT/tisa113-$tag.json" | tee "$OUT/tisa113-$tag.txt"
  done
done
if [ -d "$HF457" ]; then
  echo "== 2x512 fp32: HF relative_key (transformers 4.57, eager) and absolute for its extra memory"
  for pos in relative_key absolute; do
    "${E[@]}" "$PY" scripts/bench/hf_bench.py --shape 2x512 --precision fp32 --attn eager --position "$pos" \
      --transformers-dir "$HF457" "${COMMON[@]}" --json "$OUT/hf457-$pos.json" | tee "$OUT/hf457-$pos.txt"
  done
fi
