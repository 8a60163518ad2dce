#!/usr/bin/env bash
# Benchmark of `tisa-train prepare pretrain` (issue 33; not a test): peak memory on a large
# synthetic corpus, MB/s at 1 and 2 threads, and HF `tokenizers` batch encoding of the same
# sentences with the same WordPiece vocabulary on the same cores. Prints a Markdown table.
#
#   scripts/bench/prepare_bench.sh [--big-gb 4] [--slice-mb 200] [--work DIR] [--build build]
#
# The corpus is ../shared/data/corpus (Gutenberg books + WikiText-2) repeated until it reaches
# --big-gb (one file, `cat`-style: several books per file); the throughput slice is its first
# --slice-mb. OPENBLAS_* are unset here only (a benchmark command, see the README).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIG_GB=4 SLICE_MB=200 WORK=/tmp/tisa-prepare-bench BUILD=build
while (($#)); do
  case "$1" in
    --big-gb) BIG_GB=$2; shift 2 ;;
    --slice-mb) SLICE_MB=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
BIN="$BUILD/bin/tisa-train"
SHARED=../shared/data
VOCAB=$SHARED/tokenizers/bert-base-uncased-vocab.txt
PY=${TISA_PYTHON:-$HOME/.cache/tisa-train/venv-torch2/bin/python}
mkdir -p "$WORK"
CPU=$(lscpu | sed -n 's/^Model name: *//p' | head -1)

# One copy of the shared corpus, then the big file and the slice.
ONE="$WORK/one.txt"
cat "$SHARED"/corpus/gutenberg/*.txt "$SHARED"/corpus/wikitext-2-raw/*.raw > "$ONE"
BIG="$WORK/big.txt"
want=$((BIG_GB * 1024 * 1024 * 1024))
if [ ! -f "$BIG" ] || [ "$(stat -c %s "$BIG")" -lt "$want" ]; then
  : > "$BIG"
  while [ "$(stat -c %s "$BIG")" -lt "$want" ]; do cat "$ONE" >> "$BIG"; done
fi
SLICE="$WORK/slice.txt"
if [ ! -f "$SLICE" ]; then : > "$SLICE"
  while [ "$(stat -c %s "$SLICE")" -lt $((SLICE_MB * 1000000)) ]; do cat "$ONE" >> "$SLICE"; done
fi

run_prepare() {  # input threads tag -> prints "MB/s peakMB seconds"
  local out="$WORK/ds-$3"
  rm -rf "$out"
  /usr/bin/time -f '%M %e' -o "$WORK/time-$3" "$BIN" prepare pretrain --input "$1" --tokenizer "$VOCAB" \
    --output "$out" --threads "$2" --valid-fraction 0.01 > "$WORK/log-$3" 2>&1
  read -r kb secs < "$WORK/time-$3"
  local bytes; bytes=$(stat -c %s "$1")
  echo "$(python3 -c "print(f'{$bytes/1e6/$secs:.2f} {$kb/1024:.0f} {$secs:.1f}')")"
  rm -rf "$out"
}

echo "# prepare pretrain benchmark — $(date -u +%F), $CPU, $(nproc) cores"
echo
echo "| run | input | threads | MB/s | peak RSS (MB) | seconds |"
echo "|---|---|---|---|---|---|"
for rep in 1 2; do  # alternated, so the noisy second vCPU affects both alike
  for t in 1 2; do
    read -r mbs rss secs <<< "$(run_prepare "$SLICE" "$t" "slice-$t")"
    echo "| tisa-train prepare (rep $rep) | slice $(($(stat -c %s "$SLICE") / 1000000)) MB | $t | $mbs | $rss | $secs |"
  done
  if [ -x "$PY" ]; then
    for t in 1 2; do
      res=$(RAYON_NUM_THREADS=$t "$PY" scripts/bench/hf_text_bench.py --vocab "$VOCAB" --input "$SLICE" --fast)
      echo "| HF tokenizers encode_batch_fast (rep $rep) | same slice | $t | $res |"
    done
  fi
done
read -r mbs rss secs <<< "$(run_prepare "$BIG" 2 big)"
echo "| tisa-train prepare | big $(($(stat -c %s "$BIG") / 1000000)) MB | 2 | $mbs | $rss | $secs |"
echo
echo "Command: scripts/bench/prepare_bench.sh --big-gb $BIG_GB --slice-mb $SLICE_MB"
