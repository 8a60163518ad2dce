#!/usr/bin/env python3
"""Hugging Face transformers trains the run that `tisa-train pretrain --dump-batches DUMP` recorded,
update for update: the training-path peer of issue 31.

  hf_pretrain_peer.py DUMP OUT [--lr-scale X] [--threads N]

Loads DUMP/initial (the weights tisa-train started from) with AutoModelForPreTraining
(trust_remote_code=True: plain AlbertForPreTraining for learned absolute positions, the exported
remote code for relative schemes), and trains it in fp32, train mode, on DUMP/update-NNNNNN.safetensors
in order with HF's own loss (labels=, sentence_order_label=: MLM cross-entropy over the labelled
positions + SOP cross-entropy), torch.nn.utils.clip_grad_norm_, torch.optim.AdamW (weight decay off
for names containing LayerNorm / layer_norm / bias, SPEC §7) and transformers' schedule of the same
type (linear: get_linear_schedule_with_warmup; constant: get_constant_schedule_with_warmup;
albert_poly: warm-up then 1 − t/T). Settings come from DUMP/dump.json (the run's resolved config).
Writes
  OUT/updates.jsonl     per update: loss, mlm_loss, sop_loss, grad_norm (before clipping), lr
  OUT/final.safetensors the weights after the last update (HF names; tied tensors under both names)
--lr-scale multiplies the learning rate: a deliberately different peer, which a comparison must
tell apart (the negative control of tests/cli/hf_peer_itest.cpp). Needs dropout 0 everywhere, the SOP
head's classifier dropout included (the peer must be deterministic), and optimizer.type adamw (torch has no LAMB).
"""
import argparse
import glob
import json
import os
import sys


def fail(message):
    print(f"hf_pretrain_peer.py: {message}", file=sys.stderr)
    sys.exit(2)


def schedule(optimizer, kind, warmup, total):
    import torch
    import transformers

    if kind == "linear":
        return transformers.get_linear_schedule_with_warmup(optimizer, warmup, total)
    if kind == "constant":
        return transformers.get_constant_schedule_with_warmup(optimizer, warmup)
    if kind == "albert_poly":  # tf.train.polynomial_decay(power 1) counted from step 0, after warm-up
        return torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda t: t / warmup if t < warmup else max(0.0, 1.0 - min(t, total) / total))
    fail(f"dump.json: schedule.type '{kind}' is not one this peer knows (linear, constant, albert_poly)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump")
    ap.add_argument("out")
    ap.add_argument("--lr-scale", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForPreTraining

    torch.set_num_threads(args.threads)
    with open(os.path.join(args.dump, "dump.json")) as f:
        info = json.load(f)
    if info.get("format") != "tisa-train batch dump 1":
        fail(f"{args.dump}/dump.json: format '{info.get('format')}', expected 'tisa-train batch dump 1'")
    cfg = info["config"]
    opt, model_cfg = cfg["optimizer"], cfg["model"]
    if opt["type"] != "adamw":
        fail(f"{args.dump}: optimizer.type is '{opt['type']}'; the peer trains with torch.optim.AdamW only "
             "(run tisa-train with --set optimizer.type=adamw)")
    # classifier_dropout_prob: HF's (and our) SOP head drops the pooled output in train mode.
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout_prob"):
        if model_cfg.get(key, 0.0) != 0.0:
            fail(f"{args.dump}: model.{key} is {model_cfg[key]}; the peer needs dropout 0 to be deterministic")
    updates = sorted(glob.glob(os.path.join(args.dump, "update-*.safetensors")))
    if not updates:
        fail(f"{args.dump}: no update-*.safetensors files")
    for k, path in enumerate(updates, 1):
        if os.path.basename(path) != f"update-{k:06d}.safetensors":
            fail(f"{args.dump}: update {k} is missing (found {os.path.basename(path)})")

    model = AutoModelForPreTraining.from_pretrained(os.path.join(args.dump, "initial"), trust_remote_code=True,
                                                    dtype=torch.float32)
    model.train()
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    excluded = [p for n, p in named if any(key in n for key in ("LayerNorm", "layer_norm", "bias"))]
    decayed = [p for n, p in named if not any(key in n for key in ("LayerNorm", "layer_norm", "bias"))]
    optimizer = torch.optim.AdamW(
        [{"params": decayed, "weight_decay": opt["weight_decay"]}, {"params": excluded, "weight_decay": 0.0}],
        lr=opt["lr"] * args.lr_scale, betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"])
    scheduler = schedule(optimizer, cfg["schedule"]["type"], info["warmup_steps"], cfg["training"]["steps"])
    params = [p for _, p in named]

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "updates.jsonl"), "w") as log:
        for k, path in enumerate(updates, 1):
            batch = load_file(path)
            lr = scheduler.get_last_lr()[0]
            out = model(**batch)
            out.loss.backward()
            with torch.no_grad():
                mlm = F.cross_entropy(out.prediction_logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
                sop = F.cross_entropy(out.sop_logits, batch["sentence_order_label"])
            clip = opt["clip_norm"]
            norm = torch.nn.utils.clip_grad_norm_(params, clip if clip > 0 else float("inf"))
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            log.write(json.dumps({"update": k, "loss": out.loss.item(), "mlm_loss": mlm.item(), "sop_loss": sop.item(),
                                  "grad_norm": norm.item(), "lr": lr}) + "\n")
    state = {n: t.detach().clone().contiguous() for n, t in model.state_dict().items() if not n.endswith("position_ids")}
    save_file(state, os.path.join(args.out, "final.safetensors"))
    print(f"hf_pretrain_peer.py: {len(updates)} updates of {type(model).__name__} written to {args.out}")


if __name__ == "__main__":
    main()
