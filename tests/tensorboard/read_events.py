#!/usr/bin/env python3
"""Reads a tisa-train run's TensorBoard folder with the `tensorboard` package's own reader
(event_accumulator.EventAccumulator) and checks it against the run's metrics.jsonl (issue 35).

  read_events.py check                     exit 0 when `tensorboard` imports
  read_events.py run RUN_DIR --kind pretrain|glue [--expect-end] [--subset] [--summary OUT.json]
  read_events.py logdir DIR --summary OUT.json   the runs TensorBoard finds under DIR (as
                                           `tensorboard --logdir DIR` would: EventMultiplexer),
                                           each with its run.kind and final/* tags

`run` checks, for RUN_DIR/tensorboard against RUN_DIR/metrics.jsonl:
  - every numeric value of every record is a scalar under its tag (train/<key>, eval/<key>,
    analysis/tau*, glue/<metric> for GLUE's evaluations, final/<key>, lists as tag/i), at the
    record's step, equal to the JSON value rounded to float32;
  - each (tag, step) once in the files themselves (event_file_loader over every file, in the
    order TensorBoard reads them), not only after EventAccumulator's purge of superseded steps;
  - no scalar that metrics.jsonl does not have;
  --subset (a live or killed run): each tag's steps may stop short of metrics.jsonl's (the
    records written last), but must be its first ones, with its values.
  - the "config" text summary equals config.yaml (the text plugin's Markdown code block);
  - the hparams plugin: an experiment naming final/<metric> metrics and the config keys, a
    session start whose hyper-parameters equal config.yaml's, and (--expect-end) a session end
    with status SUCCESS.
Prints what differs and exits 1; --summary writes tags, steps and the hparams it found.
"""
import argparse
import json
import math
import os
import struct
import sys


def float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def tag_of(kind, event, key):
    if event == "eval" and kind == "glue":
        return "glue/" + key
    if event == "eval" and key.startswith("tau"):
        return "analysis/" + key
    return event + "/" + key


def numbers(tag, value, out):
    if isinstance(value, bool) or isinstance(value, str):
        return
    if value is None:
        out[tag] = float("nan")
    elif isinstance(value, (int, float)):
        out[tag] = float(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            numbers(tag + "/" + k, v, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            numbers(tag + "/" + str(i), v, out)


def expected_scalars(metrics_path, kind, live):
    """{tag: {step: value}} from metrics.jsonl (live: a last line still being written is skipped)."""
    want = {}
    with open(metrics_path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:
            if live and i == len(lines) - 1:
                break
            raise
        event, step = record["event"], record["step"]
        values = {}
        for key, value in record.items():
            if key not in ("event", "step", "time"):
                numbers(tag_of(kind, event, key), value, values)
        for tag, value in values.items():
            steps = want.setdefault(tag, {})
            if step in steps:
                raise SystemExit(f"metrics.jsonl has {tag} twice at step {step}")
            steps[step] = value
    return want


def config_values(yaml_text):
    """{"section.key": value} of a resolved config.yaml (tisa-train's own layout: two-space
    nesting, one `key: value  # help` per line), so that no YAML package is needed."""
    out, path = {}, []
    for line in yaml_text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        key, _, rest = line.strip().partition(":")
        value = rest.split("  #")[0].strip()
        del path[depth:]
        if value == "":
            path.append(key)
            continue
        out[".".join(path + [key])] = value
    return out


def same_value(text, got):
    """config.yaml's text of a value against the hparam TensorBoard read."""
    if isinstance(got, bool):
        return text == ("true" if got else "false")
    if isinstance(got, float):
        try:
            return float(text) == got
        except ValueError:
            return False
    if text.startswith('"') and text.endswith('"'):
        text = json.loads(text)
    return text == got or text.replace(" ", "") == str(got).replace(" ", "")


def check_run(args):
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.backend.event_processing import event_file_loader
    from tensorboard.plugins.hparams import metadata as hp_metadata
    from tensorboard.plugins.hparams import api_pb2
    from tensorboard.util import tensor_util

    problems = []
    tb_dir = os.path.join(args.run_dir, "tensorboard")
    files = sorted(f for f in os.listdir(tb_dir) if f.startswith("events.out.tfevents."))
    if not files:
        raise SystemExit(f"no events file in {tb_dir}")
    acc = event_accumulator.EventAccumulator(tb_dir, size_guidance={event_accumulator.SCALARS: 0,
                                                                   event_accumulator.TENSORS: 0})
    acc.Reload()
    tags = acc.Tags()

    # The raw files: each scalar (tag, step) written once over all of them.
    seen = {}
    for name in files:
        for event in event_file_loader.LegacyEventFileLoader(os.path.join(tb_dir, name)).Load():
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    key = (value.tag, event.step)
                    seen[key] = seen.get(key, 0) + 1
    problems.extend(f"{tag} step {step}: {n} times in the files" for (tag, step), n in sorted(seen.items()) if n > 1)

    # Scalars: each tag and step once, values as metrics.jsonl's (float32).
    want = expected_scalars(os.path.join(args.run_dir, "metrics.jsonl"), args.kind, args.subset)
    have = {}
    for tag in tags["scalars"]:
        steps = {}
        for e in acc.Scalars(tag):
            if e.step in steps:
                problems.append(f"{tag}: step {e.step} appears twice")
            steps[e.step] = e.value
        have[tag] = steps
    for tag in sorted(set(want) | set(have)):
        if tag not in have:
            if not args.subset:
                problems.append(f"{tag}: in metrics.jsonl, not in TensorBoard")
            continue
        if tag not in want:
            problems.append(f"{tag}: in TensorBoard, not in metrics.jsonl")
            continue
        expected_steps = sorted(want[tag])
        if args.subset:
            expected_steps = expected_steps[: len(have[tag])]
        if expected_steps != sorted(have[tag]):
            problems.append(f"{tag}: steps {sorted(have[tag])}, metrics.jsonl has {sorted(want[tag])}")
            continue
        for step in expected_steps:
            value, got = want[tag][step], have[tag][step]
            same = (math.isnan(value) and math.isnan(got)) or float32(value) == got
            if not same:
                problems.append(f"{tag} step {step}: {got}, metrics.jsonl {value}")

    # The config text.
    config_yaml = open(os.path.join(args.run_dir, "config.yaml")).read()
    if "config" not in tags["tensors"]:
        problems.append("no 'config' text summary")
    else:
        events = acc.Tensors("config")
        text = tensor_util.make_ndarray(events[0].tensor_proto).item().decode()
        plain = "".join(line[4:] + "\n" for line in text.splitlines())
        if plain != config_yaml:
            problems.append("the 'config' text differs from config.yaml")
        if acc.SummaryMetadata("config").plugin_data.plugin_name != "text":
            problems.append("'config' is not a text plugin summary")

    # hparams: experiment, session start (= config.yaml), session end.
    content = acc.PluginTagToContent("hparams")
    hparams = {}
    experiment_hparams, experiment_metrics = [], []
    if hp_metadata.EXPERIMENT_TAG not in content:
        problems.append("no hparams experiment")
    else:
        exp = hp_metadata.parse_experiment_plugin_data(content[hp_metadata.EXPERIMENT_TAG])
        experiment_hparams = [h.name for h in exp.hparam_infos]
        experiment_metrics = [m.name.tag for m in exp.metric_infos]
        finals = [t for t in have if t.startswith("final/")]
        missing = [t for t in finals if t not in experiment_metrics]
        if (args.expect_end and not finals) or missing:
            problems.append(f"the experiment's metrics lack {missing or 'final/* scalars'}")
    if hp_metadata.SESSION_START_INFO_TAG not in content:
        problems.append("no hparams session start")
    else:
        start = hp_metadata.parse_session_start_info_plugin_data(content[hp_metadata.SESSION_START_INFO_TAG])
        for name, v in start.hparams.items():
            kind = v.WhichOneof("kind")
            hparams[name] = getattr(v, kind)
        recorded = config_values(config_yaml)
        if hparams.get("run.kind") != args.kind:
            problems.append(f"run.kind is {hparams.get('run.kind')!r}, expected {args.kind!r}")
        for key, value in recorded.items():
            if key.startswith("model.") and args.kind == "glue":
                continue  # GLUE records the --init model's sizes, not the config's defaults
            got = hparams.get(key)
            if got is None:
                problems.append(f"hparam {key} missing")
            elif not same_value(value, got):
                problems.append(f"hparam {key}: {got!r}, config.yaml {value!r}")
        if set(recorded) | {"run.kind"} != set(hparams):
            problems.append(f"hparams and config.yaml keys differ: {sorted(set(recorded) ^ set(hparams))}")
        if set(experiment_hparams) != set(hparams):
            problems.append("the experiment's hparams differ from the session's")
    if args.expect_end:
        if hp_metadata.SESSION_END_INFO_TAG not in content:
            problems.append("no hparams session end")
        else:
            end = hp_metadata.parse_session_end_info_plugin_data(content[hp_metadata.SESSION_END_INFO_TAG])
            if end.status != api_pb2.STATUS_SUCCESS:
                problems.append(f"session end status {end.status}, expected SUCCESS")

    if args.summary:
        with open(args.summary, "w") as f:
            json.dump({"files": files, "scalars": {t: sorted(s) for t, s in have.items()},
                   "records": sum(1 for name in files
                                  for _ in event_file_loader.LegacyEventFileLoader(os.path.join(tb_dir, name)).Load()),
                       "tensors": tags["tensors"], "hparams": hparams,
                       "experiment_hparams": experiment_hparams, "experiment_metrics": experiment_metrics,
                       "session_end": hp_metadata.SESSION_END_INFO_TAG in content}, f, indent=1)
    for p in problems:
        print(p)
    print(f"{args.run_dir}: {len(have)} scalar tags, {sum(len(s) for s in have.values())} values, "
          f"{len(hparams)} hparams, {len(problems)} problems")
    return 1 if problems else 0


def list_logdir(args):
    from tensorboard.backend.event_processing import plugin_event_multiplexer
    from tensorboard.plugins.hparams import metadata as hp_metadata

    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(args.dir)
    mux.Reload()
    runs = {}
    for run in sorted(mux.Runs()):
        acc = mux.GetAccumulator(run)
        content = acc.PluginTagToContent("hparams")
        kind = None
        if hp_metadata.SESSION_START_INFO_TAG in content:
            start = hp_metadata.parse_session_start_info_plugin_data(content[hp_metadata.SESSION_START_INFO_TAG])
            kind = start.hparams["run.kind"].string_value if "run.kind" in start.hparams else None
        # TensorBoard's own multiplexer migrates simple_value scalars into tensors (data_compat)
        runs[run] = {"kind": kind, "final": sorted(t for t in acc.Tags()["tensors"] if t.startswith("final/"))}
    with open(args.summary, "w") as f:
        json.dump({"runs": runs}, f, indent=1)
    print(f"{args.dir}: {len(runs)} runs")
    return 0


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check")
    run = sub.add_parser("run")
    run.add_argument("run_dir")
    run.add_argument("--kind", choices=["pretrain", "glue"], required=True)
    run.add_argument("--expect-end", action="store_true")
    run.add_argument("--subset", action="store_true")
    run.add_argument("--summary")
    logdir = sub.add_parser("logdir")
    logdir.add_argument("dir")
    logdir.add_argument("--summary", required=True)
    args = parser.parse_args()
    if args.cmd == "logdir":
        return list_logdir(args)
    if args.cmd == "check":
        import tensorboard  # noqa: F401
        from tensorboard.backend.event_processing import event_accumulator  # noqa: F401
        print("tensorboard", tensorboard.__version__)
        return 0
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    return check_run(args)


if __name__ == "__main__":
    sys.exit(main())
