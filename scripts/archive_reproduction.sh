#!/usr/bin/env bash
# The evidence of a paper reproduction, small enough to commit, from which `tisa-train report`
# regenerates its results.json and results.md byte for byte (issue 31):
#
#   scripts/archive_reproduction.sh OUT DEST
#   tisa-train report --dir DEST --settings-from DEST/results.json --out X.md --json X.json \
#       --figure X.svg --pretraining-figure Y.svg
#
# OUT is a folder of scripts/reproduce_paper.sh. DEST receives, in OUT's layout, every file the
# report reads and nothing else:
#   pretrain/V/config.yaml, metrics.jsonl, final/config.json   the run's settings, curves, model config
#   pretrain/V/final/model.safetensors.sha256                   the model's hash in place of its weights
#   glue/V/T/results.json, glue/V/T/seed-N/dev_predictions.json.gz   per-seed results and dev predictions
#   length/V.json                                               the length evaluation
#   settings.txt, results.md, results.json, *.svg              what the reproduction wrote
# DEST must not exist, or be an earlier archive (it holds ARCHIVE.md), which is then replaced;
# the new archive is written beside it and renamed into place only when complete.
set -euo pipefail

die() {
  echo "archive_reproduction: error: $*" >&2
  exit 1
}
(($# == 2)) || die "usage: scripts/archive_reproduction.sh OUT DEST"
OUT=${1%/}
DEST=${2%/}
[ -f "$OUT/results.json" ] || die "$OUT/results.json not found: OUT must be a finished scripts/reproduce_paper.sh folder"
[ -d "$OUT/pretrain" ] || die "$OUT/pretrain not found: OUT must be a scripts/reproduce_paper.sh folder"
if [ -e "$DEST" ] && [ ! -f "$DEST/ARCHIVE.md" ]; then
  die "$DEST exists and is not an archive of this script (no ARCHIVE.md): choose another DEST"
fi

tmp="$DEST.partial.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"

copy() {  # copy FILE (relative to OUT) when it exists
  [ -f "$OUT/$1" ] || return 0
  mkdir -p "$tmp/$(dirname "$1")"
  cp -p "$OUT/$1" "$tmp/$1"
}

for f in settings.txt results.md results.json glue_differences.svg pretraining.svg; do copy "$f"; done
for run in "$OUT"/pretrain/*/; do
  v=$(basename "$run")
  for f in config.yaml metrics.jsonl final/config.json; do copy "pretrain/$v/$f"; done
  if [ -f "$run/final/model.safetensors" ]; then
    (cd "$run/final" && sha256sum model.safetensors) >"$tmp/pretrain/$v/final/model.safetensors.sha256"
  fi
done
if [ -d "$OUT/glue" ]; then
  while IFS= read -r f; do copy "${f#"$OUT"/}"; done < <(find "$OUT/glue" -mindepth 3 -maxdepth 3 -name results.json | sort)
  while IFS= read -r f; do
    rel=${f#"$OUT"/}
    mkdir -p "$tmp/$(dirname "$rel")"
    gzip -9 -n -c "$f" >"$tmp/$rel.gz"  # -n: no name or time inside, so the same input gives the same bytes
  done < <(find "$OUT/glue" -mindepth 4 -maxdepth 4 -path '*/seed-*/dev_predictions.json' | sort)
fi
[ -d "$OUT/length" ] && for f in "$OUT"/length/*.json; do [ -f "$f" ] && copy "length/$(basename "$f")"; done

cat >"$tmp/ARCHIVE.md" <<'TEXT'
# Archived paper reproduction

Written by scripts/archive_reproduction.sh from a scripts/reproduce_paper.sh folder: every file
`tisa-train report` reads (dev predictions gzip-compressed, each pretrained model as its SHA-256),
and the report it wrote. From the repository root, regenerate the report byte for byte with

    tisa-train report --dir ARCHIVE --settings-from ARCHIVE/results.json --out results.md --json results.json \
        --figure glue_differences.svg --pretraining-figure pretraining.svg

where ARCHIVE is this folder (tests/report/archived_results_test.cpp checks every archive under
docs/results/).
TEXT
rm -rf "$DEST"
mv "$tmp" "$DEST"
trap - EXIT
echo "[archive] $DEST: $(find "$DEST" -type f | wc -l) files, $(du -sh "$DEST" | cut -f1)"
