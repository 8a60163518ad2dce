#!/usr/bin/env python3
"""Side-by-side peer for `tisa-train bench`: the same ALBERT pretraining step in Hugging Face
transformers on the same torch (the venv of scripts/setup.sh --torch pypi; versions pinned in
scripts/requirements-torch2.txt).

One step = forward of AlbertForPreTraining (MLM over every position with labels -100 except the
masked ones, as HF computes it, + SOP), backward, clip_grad_norm(1.0), torch.optim.AdamW, zero_grad;
random token ids, the same number of masked positions per sequence as `tisa-train bench`
(min(20, round(0.15 L))). Each configuration runs in a fresh process (peak RSS is its own), warmup
steps untimed, then the median of the timed steps.

  ~/.cache/tisa-train/venv-torch2/bin/python scripts/bench/hf_bench.py \\
      --shape 8x128,2x512 --precision fp32,bf16 --attn sdpa,eager --threads 1 --json out.json

Prints one row per configuration: attn, precision, BxL, threads, tokens/s [min - max], ms/step,
peak RSS MiB, last loss, and the transformers version used. HF's ALBERT in transformers 5.x has no
relative_key position scheme any more: the Shaw comparison runs transformers 4.57 through
--transformers-dir --position relative_key --attn eager (see docs/perf/README.md).
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def run_one(spec):
    if spec.get("transformers_dir"):
        sys.path.insert(0, spec["transformers_dir"])
    import torch
    import transformers
    from transformers import AlbertConfig, AlbertForPreTraining

    torch.set_num_threads(spec["threads"])
    torch.manual_seed(1)
    B, L = spec["batch"], spec["seq"]
    config = AlbertConfig(  # albert-base-v2
        vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, hidden_act="gelu_new", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        max_position_embeddings=512, type_vocab_size=2, classifier_dropout_prob=0.1)
    if spec.get("position", "absolute") != "absolute":
        config.position_embedding_type = spec["position"]  # transformers < 5 only
    model = AlbertForPreTraining._from_config(config, attn_implementation=spec["attn"])
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    masked = min(20, max(1, round(0.15 * L)))
    gen = torch.Generator().manual_seed(2)

    def batch():
        ids = torch.randint(5, config.vocab_size, (B, L), generator=gen)
        types = torch.zeros(B, L, dtype=torch.long)
        types[:, L // 2:] = 1
        labels = torch.full((B, L), -100, dtype=torch.long)
        for b in range(B):
            pos = torch.randperm(L - 2, generator=gen)[:masked] + 1
            labels[b, pos] = torch.randint(5, config.vocab_size, (masked,), generator=gen)
        sop = torch.randint(0, 2, (B,), generator=gen)
        return ids, types, torch.ones(B, L, dtype=torch.long), labels, sop

    batches = [batch(), batch()]
    bf16 = spec["precision"] == "bf16"

    def step(i):
        ids, types, mask, labels, sop = batches[i % 2]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(input_ids=ids, token_type_ids=types, attention_mask=mask, labels=labels,
                        sentence_order_label=sop)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return out.loss.item()

    for i in range(spec["warmup"]):
        step(i)
    times, loss = [], 0.0
    for i in range(spec["reps"]):
        t0 = time.perf_counter()
        loss = step(i)
        times.append(time.perf_counter() - t0)
    tokens = B * L
    return {"spec": spec, "torch": torch.__version__, "transformers": transformers.__version__,
            "attn_used": model.config._attn_implementation, "seconds": times,
            "tokens_per_s": tokens / statistics.median(times), "tokens_per_s_min": tokens / max(times),
            "tokens_per_s_max": tokens / min(times),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, "loss_last": loss}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="8x128", help="comma-separated BATCHxSEQ")
    ap.add_argument("--precision", default="fp32", help="fp32,bf16")
    ap.add_argument("--attn", default="sdpa,eager", help="attn_implementation values")
    ap.add_argument("--position", default="absolute",
                    help="position_embedding_type: absolute, or relative_key (needs --transformers-dir with 4.x)")
    ap.add_argument("--transformers-dir", help="a folder put first on sys.path: another transformers version "
                    "(e.g. pip install --target DIR --no-deps transformers==4.57.6 huggingface_hub==0.36.0 ...)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--only", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.only:
        print(json.dumps(run_one(json.loads(a.only))))
        return
    results = []
    print(f"{'position':<12} {'attn':<6} {'prec':<5} {'BxL':<7} {'thr':>3} {'tokens/s':>10} {'[min - max]':>17} {'ms/step':>9} "
          f"{'peak MiB':>9} {'loss':>7}", flush=True)
    for shape in a.shape.split(","):
        B, L = (int(x) for x in shape.split("x"))
        for precision in a.precision.split(","):
            for attn in a.attn.split(","):
                spec = {"batch": B, "seq": L, "precision": precision, "attn": attn, "threads": a.threads,
                        "warmup": a.warmup, "reps": a.reps, "position": a.position,
                        "transformers_dir": a.transformers_dir}
                p = subprocess.run([sys.executable, __file__, "--only", json.dumps(spec)], capture_output=True,
                                   text=True, env=dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "PASSIVE")))
                if p.returncode != 0:
                    print(f"{a.position:<12} {attn:<6} {precision:<5} {shape:<7} failed: {p.stderr.strip().splitlines()[-1:]}")
                    continue
                r = json.loads(p.stdout.strip().splitlines()[-1])
                results.append(r)
                rng = f"[{r['tokens_per_s_min']:.1f} - {r['tokens_per_s_max']:.1f}]"
                print(f"{a.position:<12} {r['attn_used']:<6} {precision:<5} {shape:<7} {a.threads:>3} {r['tokens_per_s']:>10.1f} "
                      f"{rng:>17} {statistics.median(r['seconds']) * 1e3:>9.1f} {r['peak_rss_mib']:>9.0f} "
                      f"{r['loss_last']:>7.3f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
