#!/usr/bin/env bash
# One-command reproduction of Wennberg & Henter, "The Case for Translation-Invariant
# Self-Attention in Transformer-Based Language Models" (ACL 2021; SPEC §1): pretrain ALBERT with
# each position variant on identical data, fine-tune each on GLUE with several seeds, evaluate
# the MLM loss at 1x, 2x and 4x the training length, and write the results table.
#
#   scripts/reproduce_paper.sh --scale smoke|small|cpu|base --glue-dir DIR [--corpus FILE...]
#       [--out DIR] [--seeds 1,2,3] [--variants V,...]
#       (variants: absolute, <scheme> or absolute_<scheme>, see `tisa-train model variants`; default:
#       the paper's absolute,absolute_tisa,tisa,shaw, each with the scale's PAPER_PRETRAININGS
#       pretraining draws, then the scale's OTHER_SCHEMES alone (all: every other scheme of
#       `tisa-train model schemes`); V@K, e.g. tisa@2: a further pretraining of V with training.seed=K)
#       [--tasks RTE,MRPC] [--set KEY=VALUE]... [--bin DIR] [--jobs N] [--plan]
#   --plan: print the variants, GLUE tasks and pretraining settings this call would run, and exit.
#
# Stages (each writes OUT/stages/<stage>.done only after it succeeded, so a second call resumes
# where the first stopped; pretraining itself continues from its last checkpoint with --resume):
#   1. tokenizer   one SentencePiece tokenizer trained on the corpus      -> OUT/tokenizer/
#   2. dataset     the corpus tokenised once, train/valid split           -> OUT/dataset/
#   3. pretrain-V  every variant V on that dataset, same seed and order   -> OUT/pretrain/V/final/
#   4. length-V    `tisa-train eval-mlm` at 1x/2x/4x the training length  -> OUT/length/V.json
#   5. glue-V-T    `tisa-train glue` per variant and task, N seeds        -> OUT/glue/V/T/results.json
#   6. report      `tisa-train report` (+ paired tests, pictures)          -> OUT/results.md, results.json,
#                  glue_differences.svg, pretraining.svg
#   7. archive     scripts/archive_reproduction.sh: the files the report read (dev predictions
#                  compressed), from which it regenerates byte for byte     -> OUT/archive/
# OUT is also one TensorBoard log directory: `tensorboard --logdir OUT` shows every pretraining
# (run pretrain/V/tensorboard) and every GLUE seed (glue/V/T/seed-N/tensorboard) side by side,
# their settings and final metrics in one HPARAMS table.
# Settings: configs/paper/<scale>/common.yaml (model, pretraining; a variant sets only
# model.position.absolute and .relative, `pretrain --position V`, each scheme keeping the defaults
# of its settings) and configs/paper/<scale>/reproduce.env (vocabulary size, GLUE overrides,
# length multiples).
# --set KEY=VALUE is passed to every pretraining (e.g. --set training.steps=200).
# Default corpus: ../shared/data/corpus (Gutenberg books, WikiText-2 raw, Botchan) when present,
# else the bundled data/sample/corpus. GLUE tasks: those with train and dev files in --glue-dir.
# Binaries: --bin DIR (or $TISA_BIN_DIR), else build/bin, built by scripts/setup.sh when missing.
# --jobs N: run up to N pretrainings, length evaluations or fine-tunings at once, each with
# nproc/N intra-op threads (small models use one core each better than two cores together);
# their output goes to OUT/logs/<stage>.log. Each run is deterministic for its thread count
# (recorded in its config.yaml); another N changes that count and so the last bits of results.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The paper's variants (Wennberg & Henter 2021, Table 2), the reference first; every other scheme
# of the registry follows them by default.
PAPER_VARIANTS="absolute,absolute_tisa,tisa,shaw"
GLUE_TASKS=(CoLA SST-2 MRPC STS-B QQP MNLI QNLI RTE WNLI)

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}
die() {
  echo "reproduce_paper: error: $*" >&2
  exit 1
}
abspath() {
  case "$1" in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$PWD/$1" ;;
  esac
}

SCALE="" GLUE_DIR="" OUT="" SEEDS="1,2,3" VARIANTS="" TASKS="" BIN_DIR="${TISA_BIN_DIR:-}" JOBS=1 PLAN=0
CORPUS=() PRETRAIN_SET=()
while (($#)); do
  case "$1" in
    --scale) SCALE=${2:?--scale needs a value}; shift 2 ;;
    --glue-dir) GLUE_DIR=$(abspath "${2:?--glue-dir needs a folder}"); shift 2 ;;
    --out) OUT=$(abspath "${2:?--out needs a folder}"); shift 2 ;;
    --seeds) SEEDS=${2:?--seeds needs e.g. 1,2,3}; shift 2 ;;
    --variants) VARIANTS=${2:?--variants needs a list}; shift 2 ;;
    --tasks) TASKS=${2:?--tasks needs a list}; shift 2 ;;
    --set) PRETRAIN_SET+=("${2:?--set needs KEY=VALUE}"); shift 2 ;;
    --bin) BIN_DIR=$(abspath "${2:?--bin needs a folder}"); shift 2 ;;
    --jobs) JOBS=${2:?--jobs needs a number}; shift 2 ;;
    --plan) PLAN=1; shift ;;
    --corpus)
      shift
      while (($#)) && [[ "$1" != --* ]]; do
        [ -f "$1" ] || die "--corpus: $1 is not a file"
        CORPUS+=("$(abspath "$1")")
        shift
      done
      ((${#CORPUS[@]})) || die "--corpus needs at least one file"
      ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[ -n "$SCALE" ] || die "--scale smoke|small|cpu|base is required (see --help)"
SCALE_DIR="$ROOT/configs/paper/$SCALE"
if [ ! -f "$SCALE_DIR/common.yaml" ] || [ ! -f "$SCALE_DIR/reproduce.env" ]; then
  die "--scale $SCALE: no configs/paper/$SCALE/{common.yaml,reproduce.env} (scales: smoke, small, cpu, base)"
fi
[ -n "$GLUE_DIR" ] || die "--glue-dir DIR is required (a GLUE folder: DIR/RTE/train.tsv, DIR/RTE/dev.tsv, ...)"
[ -d "$GLUE_DIR" ] || die "--glue-dir $GLUE_DIR is not a folder"
[[ "$SEEDS" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--seeds '$SEEDS': expected comma-separated integers, e.g. 1,2,3"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs '$JOBS': expected a positive integer"
THREADS=0  # 0 = LibTorch's default (every core) for one job at a time
if ((JOBS > 1)); then THREADS=$(($(nproc) / JOBS)); ((THREADS >= 1)) || THREADS=1; fi
[ -n "$OUT" ] || OUT="$ROOT/runs/paper-$SCALE"

# Scale settings: VOCAB_SIZE, TOKENIZER_ARGS, PREPARE_ARGS, GLUE_SET (+ GLUE_SET_<TASK>, e.g.
# GLUE_SET_SST_2, STS-B → GLUE_SET_STS_B), LENGTH_MULTIPLES, EVAL_MLM_ARGS.
VOCAB_SIZE="" TOKENIZER_ARGS="" PREPARE_ARGS="" GLUE_SET="" LENGTH_MULTIPLES="1 2 4" EVAL_MLM_ARGS=""
PAPER_PRETRAININGS=1  # pretraining draws of each of the paper's variants by default (V, V@2, ...)
OTHER_SCHEMES=all     # the schemes run alone after the paper's variants: all, or a comma list
# shellcheck source=/dev/null
. "$SCALE_DIR/reproduce.env"
[ -n "$VOCAB_SIZE" ] || die "$SCALE_DIR/reproduce.env does not set VOCAB_SIZE"

if ((${#CORPUS[@]} == 0)); then
  shared="$ROOT/../shared/data/corpus"
  if [ -d "$shared" ]; then
    for f in "$shared"/gutenberg/*.txt "$shared"/wikitext-2-raw/*.raw "$shared"/sentencepiece/botchan.txt; do
      [ -f "$f" ] && CORPUS+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
    done
  fi
  if ((${#CORPUS[@]} == 0)); then
    for f in "$ROOT"/data/sample/corpus/*; do [ -f "$f" ] && CORPUS+=("$f"); done
  fi
  ((${#CORPUS[@]})) || die "no corpus: pass --corpus FILE..."
fi

# GLUE tasks with a train and a dev file (MNLI: dev_matched), optionally restricted by --tasks.
TASK_LIST=()
for t in "${GLUE_TASKS[@]}"; do
  if [ -n "$TASKS" ] && [[ ",$TASKS," != *",$t,"* ]]; then continue; fi
  dev=dev.tsv
  [ "$t" = MNLI ] && dev=dev_matched.tsv
  [ -f "$GLUE_DIR/$t/train.tsv" ] && [ -f "$GLUE_DIR/$t/$dev" ] && TASK_LIST+=("$t")
done
((${#TASK_LIST[@]})) || die "no GLUE task with train.tsv and dev.tsv under $GLUE_DIR${TASKS:+ among $TASKS}"

# Binaries.
[ -n "$BIN_DIR" ] || BIN_DIR="$ROOT/build/bin"
if [ ! -x "$BIN_DIR/tisa-train" ] || [ ! -x "$BIN_DIR/tisa-nn" ] || [ ! -x "$BIN_DIR/tisa-text" ]; then
  [ "$BIN_DIR" = "$ROOT/build/bin" ] || die "--bin $BIN_DIR lacks tisa-train, tisa-nn or tisa-text"
  echo "[paper] building tisa-train (scripts/setup.sh)"
  "$ROOT/scripts/setup.sh" --binaries-only
fi
TT="$BIN_DIR/tisa-train"
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

# Variants: the paper's, then every other installed scheme alone (registry order).
if [ -z "$VARIANTS" ]; then
  # Each paper variant followed by its further pretraining draws (PAPER_PRETRAININGS in reproduce.env),
  # so that their intervals include the pretraining draw.
  [[ "$PAPER_PRETRAININGS" =~ ^[1-9]$ ]] || die "$SCALE_DIR/reproduce.env: PAPER_PRETRAININGS must be 1-9, not '$PAPER_PRETRAININGS'"
  VARIANTS=""
  for v in ${PAPER_VARIANTS//,/ }; do
    VARIANTS+="${VARIANTS:+,}$v"
    for ((k = 2; k <= PAPER_PRETRAININGS; k++)); do VARIANTS+=",$v@$k"; done
  done
  others=${OTHER_SCHEMES//,/ }
  [ "$OTHER_SCHEMES" != all ] || others=$("$TT" model schemes)
  for scheme in $others; do
    [[ ",$VARIANTS," == *",$scheme,"* ]] || VARIANTS+=",$scheme"
  done
fi
IFS=, read -r -a VARIANT_LIST <<<"$VARIANTS"
# A variant V@K (K >= 2) is V pretrained again with training.seed=K: another pretraining draw of
# the same recipe (and its own length evaluation and fine-tunings); the report compares V and V@K
# with the reference's matching draws in one row whose interval includes the pretraining draw.
bases=""
for v in "${VARIANT_LIST[@]}"; do
  if [[ "$v" == *@* ]] && ! [[ "${v##*@}" =~ ^([2-9]|[1-9][0-9]+)$ ]]; then
    die "--variants: '$v': a pretraining draw is written VARIANT@K with K >= 2 (e.g. tisa@2)"
  fi
  bases+="${bases:+,}${v%@*}"
done
"$TT" model variants --check "$bases" || die "--variants: see the error above"
if ((PLAN)); then
  echo "variants: $VARIANTS"
  echo "GLUE tasks: ${TASK_LIST[*]}"
  echo "seeds: $SEEDS"
  echo "pretraining: $SCALE_DIR/common.yaml${PRETRAIN_SET[*]:+ --set ${PRETRAIN_SET[*]}}"
  exit 0
fi

# The folder remembers what it was made with: resuming with other settings would mix results.
mkdir -p "$OUT/stages"
SETTINGS="scale=$SCALE
seeds=$SEEDS
glue_dir=$GLUE_DIR
corpus=${CORPUS[*]}
pretrain_set=${PRETRAIN_SET[*]:-}
configs=$(cat "$SCALE_DIR"/*.yaml "$SCALE_DIR"/reproduce.env | cksum)"
if [ -f "$OUT/settings.txt" ]; then
  [ "$(cat "$OUT/settings.txt")" = "$SETTINGS" ] ||
    die "$OUT was made with other settings (see $OUT/settings.txt); use another --out or delete it"
else
  printf '%s\n' "$SETTINGS" >"$OUT/settings.txt"
fi
rm -f "$OUT"/stages/*.failed  # failures of an earlier call of this folder: those stages run again
# The command as the report shows it: paths inside the checkout or its ../shared relative to the
# checkout, so that a committed page names no machine's folders.
shown() {
  local p=$1 shared
  shared="$(cd "$ROOT/.." && pwd)/shared"
  case "$p" in
    "$ROOT"/*) printf '%s' "${p#"$ROOT"/}" ;;
    "$shared"/*) printf '%s' "../shared/${p#"$shared"/}" ;;
    *) printf '%s' "$p" ;;
  esac
}
shown_corpus=""
for f in "${CORPUS[@]}"; do shown_corpus+="${shown_corpus:+ }$(shown "$f")"; done
COMMAND="scripts/reproduce_paper.sh --scale $SCALE --glue-dir $(shown "$GLUE_DIR") --corpus $shown_corpus --out $(shown "$OUT") --seeds $SEEDS --variants $VARIANTS${TASKS:+ --tasks $TASKS} --jobs $JOBS"
for s in "${PRETRAIN_SET[@]}"; do COMMAND+=" --set $s"; done
exec > >(tee -a "$OUT/reproduce.log") 2>&1
echo "[paper] $(date -u '+%Y-%m-%d %H:%M:%S UTC') $COMMAND"
echo "[paper] variants: ${VARIANT_LIST[*]}; GLUE tasks: ${TASK_LIST[*]}; seeds: $SEEDS; out: $OUT"

# stage NAME COMMAND...: runs COMMAND unless OUT/stages/NAME.done exists; writes the marker
# (holding the seconds it took) only after COMMAND succeeded.
stage() {
  local name=$1
  shift
  if [ -f "$OUT/stages/$name.done" ]; then
    echo "[paper] skip $name (done)"
    return 0
  fi
  echo "[paper] === $name"
  rm -f "$OUT/stages/$name.failed"
  local start=$SECONDS
  "$@"
  echo $((SECONDS - start)) >"$OUT/stages/$name.done"
  echo "[paper] $name done in $((SECONDS - start)) s"
}

# parallel_stage NAME COMMAND...: stage() in the background when --jobs > 1 (at most JOBS at
# once; output in OUT/logs/NAME.log), else in the foreground. finish_parallel waits for them all
# and stops the script naming the logs of the stages that failed.
parallel_stage() {
  if ((JOBS == 1)); then
    stage "$@"
    return
  fi
  [ -f "$OUT/stages/$1.done" ] && { echo "[paper] skip $1 (done)"; return 0; }
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  mkdir -p "$OUT/logs"
  echo "[paper] === $1 (background, $THREADS thread(s); log: $OUT/logs/$1.log)"
  # A stage that ends without its marker leaves NAME.failed, so that the stages waiting for it
  # (await_stage) stop too. (A trap, not `stage || …`: on the left of || bash ignores set -e
  # inside the whole stage, which would then write its marker after a failed command.)
  local name=$1
  (
    trap '[ -f "$OUT/stages/$name.done" ] || touch "$OUT/stages/$name.failed"' EXIT
    stage "$@"
  ) >"$OUT/logs/$name.log" 2>&1 &
}
# await_stage NAME: return once stage NAME is done; stop if it failed. The length evaluation and
# fine-tunings of a variant need only its own pretraining, so they start while the pretrainings
# of other variants still run (a barrier after all pretrainings left one lane idle while the last
# one ran alone: ~8 min of the cpu scale). Every pretraining is queued before any stage that
# waits, so a waiting stage never holds back the stage it waits for.
await_stage() {
  while [ ! -f "$OUT/stages/$1.done" ]; do
    [ ! -f "$OUT/stages/$1.failed" ] || die "stage $1 failed (log: $OUT/logs/$1.log)"
    sleep 2
  done
}
finish_parallel() {
  # Only our stages: a bare `wait` would also wait for the log's tee (the last process
  # substitution, still $! when no stage ran in the background) and never return.
  local pids
  pids=$(jobs -p)
  [ -z "$pids" ] || wait $pids || true
  local failed=()
  for name in "$@"; do [ -f "$OUT/stages/$name.done" ] || failed+=("$OUT/logs/$name.log"); done
  ((${#failed[@]} == 0)) || die "stages failed; see ${failed[*]}"
}

train_tokenizer() {
  rm -rf "$OUT/tokenizer"
  # shellcheck disable=SC2086
  "$TT" tokenizer train --type sentencepiece --input "${CORPUS[@]}" --vocab-size "$VOCAB_SIZE" \
    --output "$OUT/tokenizer" $TOKENIZER_ARGS
}

prepare_dataset() {
  # shellcheck disable=SC2086
  "$TT" prepare pretrain --input "${CORPUS[@]}" --tokenizer "$OUT/tokenizer" --output "$OUT/dataset" $PREPARE_ARGS
}

pretrain() {
  local v=$1 run_dir="$OUT/pretrain/$1"
  local args=(pretrain --config "$SCALE_DIR/common.yaml" --position "${v%@*}" --set "data.dataset=$OUT/dataset"
    --set "model.vocab_size=$VOCAB_SIZE" --run-dir "$run_dir")
  [[ "$v" != *@* ]] || args+=(--set "training.seed=${v##*@}")  # pretraining draw K
  ((THREADS == 0)) || args+=(--set "training.threads=$THREADS")
  for s in "${PRETRAIN_SET[@]}"; do args+=(--set "$s"); done
  # Continue an interrupted pretraining; a folder without a checkpoint holds only the logs of a
  # start that saved nothing, which a fresh start may replace.
  if compgen -G "$run_dir/checkpoints/step-*" >/dev/null; then args+=(--resume)
  elif [ -d "$run_dir" ]; then args+=(--overwrite); fi
  "$TT" "${args[@]}"
  [ -f "$run_dir/final/model.safetensors" ] || die "pretraining $v ended without $run_dir/final"
}

# data.max_seq_length of a run's resolved config.yaml.
train_length() {
  awk '/^data:/ { d = 1; next } /^[^ #]/ { d = 0 } d && $1 == "max_seq_length:" { print $2; exit }' "$1/config.yaml"
}

length_eval() {
  local v=$1 run_dir="$OUT/pretrain/$1" L lengths=""
  await_stage "pretrain-$v"
  L=$(train_length "$run_dir")
  [[ "$L" =~ ^[0-9]+$ ]] || die "no data.max_seq_length in $run_dir/config.yaml"
  for m in $LENGTH_MULTIPLES; do lengths+="${lengths:+,}$((L * m))"; done
  mkdir -p "$OUT/length"
  # shellcheck disable=SC2086
  "$TT" eval-mlm --model "$run_dir/final" --dataset "$OUT/dataset" --seq-lengths "$lengths" \
    --output "$OUT/length/$v.json" --threads "$THREADS" $EVAL_MLM_ARGS
}

finetune() {
  local v=$1 t=$2 args=()
  await_stage "pretrain-$v"
  # GLUE_SET for every task, then GLUE_SET_<TASK> (e.g. GLUE_SET_SST_2) for this one; later wins.
  local task_var="GLUE_SET_${t//-/_}"
  for s in $GLUE_SET ${!task_var:-}; do args+=(--set "$s"); done
  ((THREADS == 0)) || args+=(--set "training.threads=$THREADS")
  # Every task of a variant shares the run folder OUT/glue/V, which tisa-train holds for the
  # whole of a run (a second process is refused): with --jobs > 1 two tasks of one variant take
  # turns on it through this lock instead of failing.
  mkdir -p "$OUT/glue"
  # The stage is not done: results of an earlier, interrupted attempt at this task are replaced.
  flock "$OUT/glue/.$v.lock" "$TT" glue --task "$t" --data-dir "$GLUE_DIR" --init "$OUT/pretrain/$v/final" --seeds "$SEEDS" \
    --run-dir "$OUT/glue/$v" --overwrite "${args[@]}"
  [ -f "$OUT/glue/$v/$t/results.json" ] || die "GLUE $t for $v wrote no results.json"
}

cd "$ROOT"
stage tokenizer train_tokenizer
stage dataset prepare_dataset
names=()
# One queue, no barrier between pretraining and what follows it (see await_stage): first every
# pretraining, then the fine-tunings task by task, so that the stages running at once are
# mostly of different variants (see finetune), then the short length evaluations.
for v in "${VARIANT_LIST[@]}"; do parallel_stage "pretrain-$v" pretrain "$v"; names+=("pretrain-$v"); done
for t in "${TASK_LIST[@]}"; do
  for v in "${VARIANT_LIST[@]}"; do parallel_stage "glue-$v-$t" finetune "$v" "$t"; names+=("glue-$v-$t"); done
done
for v in "${VARIANT_LIST[@]}"; do parallel_stage "length-$v" length_eval "$v"; names+=("length-$v"); done
finish_parallel "${names[@]}"

# The report is cheap: always rewritten from what is there.
# Stage seconds summed over every call of this folder (both lanes' work with --jobs 2), by kind,
# and this call's wall time: the page states them from results.json, not by hand.
total=0
declare -A kind_total=([pretrain]=0 [length]=0 [glue]=0)
for f in "$OUT"/stages/*.done; do
  n=$(cat "$f") k=$(basename "$f" .done)
  k=${k%%-*}
  total=$((total + n))
  [ -z "${kind_total[$k]+x}" ] || kind_total[$k]=$((kind_total[$k] + n))
done
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
"$TT" report --dir "$OUT" --variants "$VARIANTS" --out "$OUT/results.md" --json "$OUT/results.json" \
  --figure "$OUT/glue_differences.svg" --pretraining-figure "$OUT/pretraining.svg" \
  --meta "scale=$SCALE" --meta "command=$COMMAND" \
  --meta "machine=$(uname -sm), ${cpu:-unknown CPU}, $(nproc) cores" \
  --meta "commit=$commit" --meta "GLUE tasks=${TASK_LIST[*]}" --meta "seeds=$SEEDS" \
  --meta "stage time (s, all runs of the script)=$total" \
  --meta "stage time, pretraining (s)=${kind_total[pretrain]}" \
  --meta "stage time, length evaluation (s)=${kind_total[length]}" \
  --meta "stage time, GLUE (s)=${kind_total[glue]}" \
  --meta "wall time of this call (s)=$SECONDS" \
  --meta "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
echo "[paper] results: $OUT/results.md, $OUT/results.json, $OUT/glue_differences.svg, $OUT/pretraining.svg"
echo "[paper] every run's curves and the HPARAMS table: tensorboard --logdir $OUT"
# The evidence to commit beside the page: what the report read, from which it regenerates itself.
"$ROOT/scripts/archive_reproduction.sh" "$OUT" "$OUT/archive"
