#!/usr/bin/env python3
"""Tables of pilot runs rendered from their committed validation records, so that a results page
quotes numbers its data holds (docs/results/absolute-plateau.md §9 and its folders).

  pilot_tables.py DIR [--out FILE]      write DIR/tables.md (or FILE) from DIR/tables.json

DIR/tables.json names the page that quotes the tables (relative to DIR) and lists them:
  {"page": "../absolute-plateau.md", "tables": [{"header": "lever", "steps": [1000, 2000, 3000], "last": true,
               "rows": [{"run": "control", "label": "control (the recipe)"}, ...]}]}
Each row reads DIR/<run>.eval.jsonl (the `eval` lines of a run's metrics.jsonl) and shows the
validation MLM accuracy (%) at each step; a step after the run's last evaluation shows "—" (the
run was stopped), a step missing inside the run is an error. "last": true adds the run's last
evaluation ("acc at step"). Tables are separated by one blank line; the page carries each unedited
(tests/cli/pilot_tables_test.cpp). Only the standard library.
"""
import argparse
import json
import os
import sys


def fail(message):
    print(f"pilot_tables.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_evals(path):
    """step -> MLM accuracy (%) from the eval records of one run."""
    if not os.path.isfile(path):
        fail(f"{path}: no such file (each row's run needs its <run>.eval.jsonl)")
    evals = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                step, accuracy = int(record["step"]), float(record["mlm_accuracy"])
            except (ValueError, KeyError, TypeError) as error:
                fail(f"{path}:{number}: expected an eval record with step and mlm_accuracy ({error})")
            if record.get("event") != "eval":
                fail(f"{path}:{number}: expected event \"eval\", got {record.get('event')!r}")
            if step in evals:
                fail(f"{path}:{number}: step {step} evaluated twice")
            evals[step] = 100.0 * accuracy
    if not evals:
        fail(f"{path}: no eval records")
    return evals


def thousands(n):
    return f"{n:,}"


def render_table(folder, table, index):
    where = f"tables.json: tables[{index}]"
    for key in ("header", "steps", "rows"):
        if key not in table:
            fail(f"{where}: missing key \"{key}\"")
    steps = [int(s) for s in table["steps"]]
    columns = [table["header"]] + [thousands(s) for s in steps]
    if table.get("last"):
        columns.append("last evaluation")
    lines = ["| " + " | ".join(columns) + " |",
             "|---|" + "---:|" * (len(columns) - 1)]
    for row_index, row in enumerate(table["rows"]):
        if "run" not in row or "label" not in row:
            fail(f"{where}.rows[{row_index}]: expected keys \"run\" and \"label\"")
        path = os.path.join(folder, row["run"] + ".eval.jsonl")
        evals = read_evals(path)
        last = max(evals)
        cells = [row["label"]]
        for step in steps:
            if step in evals:
                cells.append(f"{evals[step]:.1f}")
            elif step > last:
                cells.append("—")
            else:
                fail(f"{path}: no evaluation at step {step} (the run evaluated up to {last}); "
                     f"tables.json asks for it in tables[{index}]")
        if table.get("last"):
            cells.append(f"{evals[last]:.1f} at {thousands(last)}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    spec_path = os.path.join(args.dir, "tables.json")
    if not os.path.isfile(spec_path):
        fail(f"{spec_path}: no such file")
    try:
        with open(spec_path, encoding="utf-8") as f:
            spec = json.load(f)
    except ValueError as error:
        fail(f"{spec_path}: not JSON ({error})")
    if not isinstance(spec.get("page"), str):
        fail(f"{spec_path}: expected \"page\": the results page that quotes these tables")
    if not isinstance(spec.get("tables"), list) or not spec["tables"]:
        fail(f"{spec_path}: expected a non-empty list under \"tables\"")
    text = "\n".join(render_table(args.dir, t, i) for i, t in enumerate(spec["tables"]))
    out = args.out or os.path.join(args.dir, "tables.md")
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
