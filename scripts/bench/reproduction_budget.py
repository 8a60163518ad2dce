#!/usr/bin/env python3
"""Where the wall time of a scripts/reproduce_paper.sh run went, from its archive (docs/results/
paper-*/), and what it would be if its stages ran faster: the arithmetic behind issue 32's
reproduction target in docs/perf/README.md. Standard library only.

  python3 scripts/bench/reproduction_budget.py docs/results/paper-cpu [--jobs 2] [--target-s 4500]
      [--scenario NAME:PRETRAIN_SPEEDUP:GLUE_SPEEDUP ...]

Inputs: the report's stage times (results.json "meta": pretraining, GLUE, length evaluation, all
stages, wall) and each pretraining's metrics.jsonl (updates and seconds at its "final" event).
The stages run in `--jobs` lanes, so a scenario's wall is its lane-seconds / jobs (the archived
run's own ratio is printed to check that assumption).
"""
import argparse
import json
import os
import sys


def read_meta(archive):
    with open(os.path.join(archive, "results.json")) as f:
        meta = json.load(f)["meta"]

    def seconds(key):
        if key not in meta:
            sys.exit(f"{archive}/results.json: meta has no '{key}'")
        return float(meta[key])

    return {
        "pretraining": seconds("stage time, pretraining (s)"),
        "glue": seconds("stage time, GLUE (s)"),
        "length": seconds("stage time, length evaluation (s)"),
        "all": seconds("stage time (s, all runs of the script)"),
        "wall": seconds("wall time of this call (s)"),
        "commit": meta.get("commit", "?"),
        "date": meta.get("date", "?"),
    }


def read_pretrainings(archive):
    root = os.path.join(archive, "pretrain")
    runs = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "metrics.jsonl")
        final = None
        with open(path) as f:
            for line_no, line in enumerate(f, 1):
                try:
                    event = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{line_no}: not JSON ({e})")
                if event.get("event") == "final":
                    final = event
        if final is None:
            sys.exit(f"{path}: no 'final' event (an unfinished pretraining)")
        runs.append((name, int(final["step"]), float(final["time"])))
    return runs


def hours(seconds):
    h, rest = divmod(int(round(seconds)), 3600)
    return f"{h} h {rest // 60:02d} min"


def parse_scenario(text):
    parts = text.split(":")
    if len(parts) != 3:
        sys.exit(f"--scenario {text!r}: expected NAME:PRETRAIN_SPEEDUP:GLUE_SPEEDUP")
    try:
        return parts[0], float(parts[1]), float(parts[2])
    except ValueError:
        sys.exit(f"--scenario {text!r}: the two speed-ups must be numbers")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--jobs", type=int, default=2, help="lanes the stages ran in (reproduce_paper.sh --jobs)")
    parser.add_argument("--target-s", type=float, default=4500, help="the wall-time target, seconds")
    parser.add_argument("--scenario", action="append", default=[], type=parse_scenario,
                        help="NAME:PRETRAIN_SPEEDUP:GLUE_SPEEDUP, e.g. 'step 2x:2:1'")
    args = parser.parse_args()

    meta = read_meta(args.archive)
    runs = read_pretrainings(args.archive)
    print(f"archive {args.archive}: commit {meta['commit']}, {meta['date']}, {args.jobs} lanes\n")
    print("| pretraining | updates | seconds | ms per update |")
    print("|---|---:|---:|---:|")
    for name, steps, secs in runs:
        print(f"| {name} | {steps:,} | {secs:,.0f} | {1000 * secs / steps:.1f} |")
    updates = sum(r[1] for r in runs)
    pretrain_s = sum(r[2] for r in runs)
    print(f"| all {len(runs)} | {updates:,} | {pretrain_s:,.0f} | {1000 * pretrain_s / updates:.1f} |\n")

    other = meta["all"] - meta["pretraining"] - meta["glue"] - meta["length"]
    print("| stage | lane-seconds | share |")
    print("|---|---:|---:|")
    for label, value in (("pretraining (report)", meta["pretraining"]), ("GLUE", meta["glue"]),
                         ("length evaluation", meta["length"]), ("tokenizer, data, report", other)):
        print(f"| {label} | {value:,.0f} | {100 * value / meta['all']:.1f} % |")
    print(f"| all stages | {meta['all']:,.0f} | |")
    print(f"\nwall {meta['wall']:,.0f} s ({hours(meta['wall'])}); lane-seconds / wall = "
          f"{meta['all'] / meta['wall']:.2f} of {args.jobs} lanes")

    fixed = meta["length"] + other
    need = meta["all"] / (args.jobs * args.target_s)
    print(f"\ntarget {args.target_s:,.0f} s ({hours(args.target_s)}): every stage {need:.2f}x faster, or")
    glue_only_floor = (meta["glue"] + fixed) / args.jobs
    budget_left = args.jobs * args.target_s - meta["glue"] - fixed
    if budget_left > 0:
        print(f"  with GLUE as run, pretraining {meta['pretraining'] / budget_left:.2f}x faster "
              f"(at most {1000 * budget_left / updates:.1f} ms per update)")
    else:
        print(f"  GLUE and the fixed stages alone take {glue_only_floor:,.0f} s of wall: over the target")
    if args.scenario:
        print("\n| scenario | pretraining ÷ | GLUE ÷ | lane-seconds | wall at "
              f"{args.jobs} lanes |")
        print("|---|---:|---:|---:|---:|")
        for name, p, g in args.scenario:
            lane_s = meta["pretraining"] / p + meta["glue"] / g + fixed
            wall = lane_s / args.jobs
            print(f"| {name} | {p:g} | {g:g} | {lane_s:,.0f} | {wall:,.0f} s ({hours(wall)}) |")


if __name__ == "__main__":
    main()
