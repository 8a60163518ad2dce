#!/usr/bin/env python3
"""Two trainings of one recipe side by side: tisa-train and its Hugging Face peer
(hf_pretrain_peer.py) on the same batches from the same initial weights (issue 31, point 2).

  peer_curves.py collect RUN_UPDATES PEER_UPDATES EVAL_DIR OUT   gather a run into OUT (once)
  peer_curves.py render DIR [--out-dir D]                        write DIR's table and metrics

collect reads tisa-train's dump log (DUMP/updates.jsonl), the peer's OUT/updates.jsonl and the
`tisa-train eval-mlm --output` files EVAL_DIR/{tisa,hf}-step-NNNNNN.json, and writes OUT/ with
  tisa-updates.jsonl.gz, hf-updates.jsonl.gz   per update: loss, mlm_loss, sop_loss, grad_norm, lr
  eval.jsonl                                  per side and step: validation MLM/SOP loss and accuracy
(gzip without a time stamp, so the same data gives the same bytes; no machine paths).
render reads those and writes (into --out-dir, default DIR)
  curves.md                 the tables a results page quotes
  tisa-train/metrics.jsonl, hf-transformers/metrics.jsonl
                            `tisa-train plot --runs DIR/tisa-train DIR/hf-transformers` draws them
Only the standard library: the committed page regenerates without torch.
"""
import argparse
import glob
import gzip
import io
import json
import os
import re
import sys

KEEP = ("update", "loss", "mlm_loss", "sop_loss", "grad_norm", "lr")
WINDOW = 1000          # updates per row of the curve table
TRAIN_EVENT_EVERY = 100  # updates averaged into one train event of metrics.jsonl
EARLY = 5000           # the agreement is also stated over the first EARLY updates
DIVERGED = 1e-3        # |Δ loss| at which the two runs are counted as apart
RUN_NAMES = {"tisa": "tisa-train", "hf": "hf-transformers"}  # folders of metrics.jsonl: the plot's legend
LEFT_PLATEAU = 0.18    # validation MLM accuracy above the bag-of-words plateau (13-15 %; `none` ends at 14 %)


def fail(message):
    print(f"peer_curves.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_jsonl(path):
    opener = gzip.open if path.endswith(".gz") else open
    rows = []
    with opener(path, "rt") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    fail(f"{path}:{n}: not JSON ({e})")
    return rows


def write_gzip_jsonl(path, rows):
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(text)


def updates(path):
    rows = [{k: r[k] for k in KEEP} for r in read_jsonl(path)]
    for k, r in enumerate(rows, 1):
        if r["update"] != k:
            fail(f"{path}: line {k} is update {r['update']}, expected {k}")
    return rows


def collect(args):
    ours, theirs = updates(args.run_updates), updates(args.peer_updates)
    if len(ours) != len(theirs):
        fail(f"{args.run_updates} has {len(ours)} updates, {args.peer_updates} {len(theirs)}: collect finished runs")
    evals = []
    for path in sorted(glob.glob(os.path.join(args.eval_dir, "*-step-*.json"))):
        m = re.fullmatch(r"(tisa|hf)-step-(\d+)\.json", os.path.basename(path))
        if not m:
            fail(f"{path}: expected tisa-step-NNNNNN.json or hf-step-NNNNNN.json")
        with open(path) as f:
            result = json.load(f)
        (length,) = result["lengths"]
        evals.append({"side": m.group(1), "step": int(m.group(2)), "seq_length": length["seq_length"],
                      "masked_lm_prob": result["masked_lm_prob"], "max_ngram": result["max_ngram"],
                      "examples": length["examples"], "predictions": length["predictions"],
                      **{k: length[k] for k in ("mlm_loss", "mlm_accuracy", "sop_loss", "sop_accuracy")}})
    evals.sort(key=lambda e: (e["side"], e["step"]))
    os.makedirs(args.out, exist_ok=True)
    write_gzip_jsonl(os.path.join(args.out, "tisa-updates.jsonl.gz"), ours)
    write_gzip_jsonl(os.path.join(args.out, "hf-updates.jsonl.gz"), theirs)
    with open(os.path.join(args.out, "eval.jsonl"), "w") as f:
        f.writelines(json.dumps(e, sort_keys=True) + "\n" for e in evals)


def mean(xs):
    return sum(xs) / len(xs)


def metrics_lines(rows, evals):
    """A tisa-train metrics.jsonl: a train event per TRAIN_EVENT_EVERY updates (their means), the evals."""
    events = []
    for end in range(TRAIN_EVENT_EVERY, len(rows) + 1, TRAIN_EVENT_EVERY):
        w = rows[end - TRAIN_EVENT_EVERY:end]
        events.append({"event": "train", "step": end, "lr": w[-1]["lr"],
                       **{k: mean([r[k] for r in w]) for k in ("loss", "mlm_loss", "sop_loss", "grad_norm")}})
    for e in evals:
        events.append({"event": "eval", "step": e["step"], "mlm_accuracy": e["mlm_accuracy"],
                       "mlm_loss": e["mlm_loss"], "sop_accuracy": e["sop_accuracy"], "sop_loss": e["sop_loss"]})
    events.sort(key=lambda e: (e["step"], e["event"] != "train"))
    return "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)


def first_left(evals):
    for e in evals:
        if e["mlm_accuracy"] >= LEFT_PLATEAU:
            return e["step"]
    return None


def render(args):
    d = args.dir
    ours, theirs = updates(os.path.join(d, "tisa-updates.jsonl.gz")), updates(os.path.join(d, "hf-updates.jsonl.gz"))
    evals = read_jsonl(os.path.join(d, "eval.jsonl"))
    by_side = {s: {e["step"]: e for e in evals if e["side"] == s} for s in ("tisa", "hf")}
    if by_side["tisa"].keys() != by_side["hf"].keys():
        fail(f"{d}/eval.jsonl: the two sides were evaluated at different steps")
    steps = sorted(by_side["tisa"])
    masking = {(e["seq_length"], e["masked_lm_prob"], e["max_ngram"], e["examples"]) for e in evals}
    if len(masking) != 1:
        fail(f"{d}/eval.jsonl: the evaluations differ in length, masking or examples: {sorted(masking)}")
    (seq_length, masked_lm_prob, max_ngram, examples), = masking

    apart = next((r["update"] for r, p in zip(ours, theirs) if abs(r["loss"] - p["loss"]) > DIVERGED), None)
    together = len(ours) if apart is None else apart - 1
    max_loss = max(abs(r["loss"] - p["loss"]) for r, p in zip(ours[:together], theirs[:together]))
    max_gn = max(abs(r["grad_norm"] - p["grad_norm"]) / p["grad_norm"] for r, p in zip(ours[:together], theirs[:together]))
    early = min(together, EARLY)
    max_loss_early = max(abs(r["loss"] - p["loss"]) for r, p in zip(ours[:early], theirs[:early]))
    lr_equal = all(r["lr"] == p["lr"] for r, p in zip(ours, theirs))

    out = io.StringIO()
    w = out.write
    w(f"Generated by `scripts/peer/peer_curves.py render` from this folder's data; do not edit.\n\n")
    w(f"**Update for update.** {len(ours):,} updates. The two runs' total losses agree within "
      f"{max_loss:.1e} and their gradient norms within {max_gn:.1e} (relative) ")
    if apart is None:
        w("at every update.")
    else:
        w(f"through update {together:,}; from update {apart:,} they differ by more than {DIVERGED:g} "
          "(float rounding, amplified by training, after which the two trajectories are two draws of one recipe).")
    w(f" Over the first {early:,} updates the losses agree within {max_loss_early:.1e}.")
    w(f" The learning rates are {'equal' if lr_equal else 'NOT equal'} at every update.\n\n")
    w(f"**Curves.** Training MLM loss: mean over the {WINDOW:,} updates ending at the step. Validation: "
      f"`tisa-train eval-mlm` on the model saved at the step, {examples} examples of length {seq_length}, "
      f"{masked_lm_prob:g} of the words masked, n-grams up to {max_ngram}, the same examples and masks for both.\n\n")
    w("| updates | train MLM loss, tisa-train | train MLM loss, HF | val. MLM acc, tisa-train | val. MLM acc, HF "
      "| val. SOP acc, tisa-train | val. SOP acc, HF |\n|---:|---:|---:|---:|---:|---:|---:|\n")
    for step in steps:
        if step > len(ours) or step < WINDOW:
            fail(f"{d}/eval.jsonl: step {step} outside the run's {WINDOW}..{len(ours)} updates")
        t, h = by_side["tisa"][step], by_side["hf"][step]
        lo = step - WINDOW
        w(f"| {step:,} | {mean([r['mlm_loss'] for r in ours[lo:step]]):.3f} | "
          f"{mean([r['mlm_loss'] for r in theirs[lo:step]]):.3f} | {100 * t['mlm_accuracy']:.1f} % | "
          f"{100 * h['mlm_accuracy']:.1f} % | {100 * t['sop_accuracy']:.1f} % | {100 * h['sop_accuracy']:.1f} % |\n")
    w("\n")
    for side, name in (("tisa", "tisa-train"), ("hf", "HF")):
        left = first_left([by_side[side][s] for s in steps])
        when = f"first at {left:,} updates" if left else "not within the run"
        w(f"- {name}: validation MLM accuracy ≥ {100 * LEFT_PLATEAU:.0f} % (off the plateau): {when}; "
          f"at the end {100 * by_side[side][steps[-1]]['mlm_accuracy']:.1f} %.\n")

    dest = args.out_dir or d
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "curves.md"), "w") as f:
        f.write(out.getvalue())
    for side, rows in (("tisa", ours), ("hf", theirs)):
        name = RUN_NAMES[side]
        os.makedirs(os.path.join(dest, name), exist_ok=True)
        with open(os.path.join(dest, name, "metrics.jsonl"), "w") as f:
            f.write(metrics_lines(rows, [by_side[side][s] for s in steps]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("run_updates")
    c.add_argument("peer_updates")
    c.add_argument("eval_dir")
    c.add_argument("out")
    r = sub.add_parser("render")
    r.add_argument("dir")
    r.add_argument("--out-dir")
    args = ap.parse_args()
    collect(args) if args.command == "collect" else render(args)


if __name__ == "__main__":
    main()
