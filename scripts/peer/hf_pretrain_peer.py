#!/usr/bin/env python3
"""Hugging Face transformers trains the run that `tisa-train pretrain --dump-batches DUMP` recorded,
update for update: the training-path peer of issue 31.

  hf_pretrain_peer.py DUMP OUT [--lr-scale X] [--threads N] [--follow] [--save-every N]

Loads DUMP/initial (the weights tisa-train started from) with AutoModelForPreTraining
(trust_remote_code=True: plain AlbertForPreTraining for learned absolute positions, the exported
remote code for relative schemes), and trains it in fp32, train mode, on DUMP/update-NNNNNN.safetensors
in order with HF's own loss (labels=, sentence_order_label=: MLM cross-entropy over the labelled
positions + SOP cross-entropy), torch.nn.utils.clip_grad_norm_, torch.optim.AdamW or, for
optimizer.type lamb, the LAMB below (written here from SPEC §7, nothing of tisa-train's; weight decay
and the trust ratio off for names containing LayerNorm / layer_norm / bias) and transformers' schedule of the same
type (linear: get_linear_schedule_with_warmup; constant: get_constant_schedule_with_warmup;
albert_poly: warm-up then 1 − t/T). Settings come from DUMP/dump.json (the run's resolved config).
Writes
  OUT/updates.jsonl     per update: loss, mlm_loss, sop_loss, grad_norm (before clipping), lr
  OUT/final.safetensors the weights after the last update (HF names; tied tensors under both names)
  OUT/step-NNNNNN/      with --save-every N: config.json + model.safetensors every N updates, a model
                        folder `tisa-train eval-mlm --model` reads
--follow trains while tisa-train is still writing the dump: update k is taken once updates.jsonl
has its line (written after the batch file), up to the run's training.steps; it stops with an error
when no update arrives for 10 minutes.
--lr-scale multiplies the learning rate: a deliberately different peer, which a comparison must
tell apart (the negative control of tests/cli/hf_peer_itest.cpp). Needs dropout 0 everywhere, the SOP
head's classifier dropout included (the peer must be deterministic), and optimizer.type adamw or lamb.
"""
import argparse
import glob
import json
import os
import shutil
import sys
import time


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
    if kind == "albert_poly":  # transformers has no ALBERT form: the written-out factor
        return torch.optim.lr_scheduler.LambdaLR(optimizer, schedule_factor(kind, warmup, total))
    fail(f"dump.json: schedule.type '{kind}' is not one this peer knows (linear, constant, albert_poly)")


def excluded_from_decay(name):
    """SPEC §7: no weight decay (and, for LAMB, no trust ratio) for LayerNorm and bias tensors."""
    return any(key in name for key in ("LayerNorm", "layer_norm", "bias"))


class Lamb:
    """LAMB as SPEC §7 states it (google-research/albert's lamb_optimizer.py; bias_correction and
    trust_ratio_all are the NVIDIA variants). Steps the parameters it was given, in place."""

    def __init__(self, named, beta1, beta2, eps, weight_decay, bias_correction, trust_ratio_all):
        import torch

        self.named = named
        self.beta1, self.beta2, self.eps, self.weight_decay = beta1, beta2, eps, weight_decay
        self.bias_correction, self.trust_ratio_all = bias_correction, trust_ratio_all
        self.m = [torch.zeros_like(p) for _, p in named]
        self.v = [torch.zeros_like(p) for _, p in named]
        self.t = 0

    def step(self, lr):
        import torch

        self.t += 1
        with torch.no_grad():
            for (name, w), m, v in zip(self.named, self.m, self.v):
                if w.grad is None:
                    continue
                g = w.grad
                m.mul_(self.beta1).add_(g, alpha=1 - self.beta1)
                v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
                if self.bias_correction:
                    u = (m / (1 - self.beta1 ** self.t)) / ((v / (1 - self.beta2 ** self.t)).sqrt() + self.eps)
                else:
                    u = m / (v.sqrt() + self.eps)
                excluded = excluded_from_decay(name)
                if not excluded and self.weight_decay != 0:
                    u = u + self.weight_decay * w
                ratio = 1.0
                if not excluded or self.trust_ratio_all:
                    w_norm, u_norm = w.norm().item(), u.norm().item()
                    if w_norm > 0 and u_norm > 0:
                        ratio = w_norm / u_norm
                w.sub_(u, alpha=lr * ratio)

    def zero_grad(self, set_to_none=True):
        for _, p in self.named:
            p.grad = None


class LambdaSchedule:
    """The learning rate per update for the hand-written LAMB: base · factor(update − 1)."""

    def __init__(self, base, factor):
        self.base, self.factor, self.t = base, factor, 0

    def get_last_lr(self):
        return [self.base * self.factor(self.t)]

    def step(self):
        self.t += 1


def schedule_factor(kind, warmup, total):
    """The same schedules as schedule(), as a multiplier of the peak rate (transformers' formulas)."""
    if kind == "linear":
        return lambda t: t / max(1, warmup) if t < warmup else max(0.0, (total - t) / max(1, total - warmup))
    if kind == "constant":
        return lambda t: t / max(1.0, warmup) if t < warmup else 1.0
    if kind == "albert_poly":  # tf.train.polynomial_decay(power 1) counted from step 0, after warm-up
        return lambda t: t / warmup if t < warmup else max(0.0, 1.0 - min(t, total) / total)
    fail(f"dump.json: schedule.type '{kind}' is not one this peer knows (linear, constant, albert_poly)")


class DumpUpdates:
    """The dump's update files in order; with follow, waits for those tisa-train has not written yet."""

    def __init__(self, dump, follow, total):
        self.dump, self.follow, self.total = dump, follow, total

    def logged_updates(self):
        try:
            with open(os.path.join(self.dump, "updates.jsonl")) as f:
                return sum(1 for line in f if line.endswith("\n"))
        except FileNotFoundError:
            return 0

    def paths(self):
        if not self.follow:
            updates = sorted(glob.glob(os.path.join(self.dump, "update-*.safetensors")))
            if not updates:
                fail(f"{self.dump}: no update-*.safetensors files")
            for k, path in enumerate(updates, 1):
                if os.path.basename(path) != f"update-{k:06d}.safetensors":
                    fail(f"{self.dump}: update {k} is missing (found {os.path.basename(path)})")
            yield from updates
            return
        for k in range(1, self.total + 1):
            waited = 0.0
            while self.logged_updates() < k:
                if waited > 600:
                    fail(f"{self.dump}: update {k} of {self.total} did not arrive within 10 minutes (--follow)")
                time.sleep(0.2)
                waited += 0.2
            yield os.path.join(self.dump, f"update-{k:06d}.safetensors")


def save_model(model, dump, folder):
    """A model folder eval-mlm reads: the dump's config.json beside the current weights."""
    from safetensors.torch import save_file

    os.makedirs(folder, exist_ok=True)
    shutil.copy(os.path.join(dump, "initial", "config.json"), os.path.join(folder, "config.json"))
    state = {n: t.detach().clone().contiguous() for n, t in model.state_dict().items() if not n.endswith("position_ids")}
    save_file(state, os.path.join(folder, "model.safetensors"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump")
    ap.add_argument("out")
    ap.add_argument("--lr-scale", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--follow", action="store_true", help="train while the dump is being written")
    ap.add_argument("--save-every", type=int, default=0, help="write OUT/step-NNNNNN/ every N updates")
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
    if opt["type"] not in ("adamw", "lamb"):
        fail(f"{args.dump}: optimizer.type is '{opt['type']}'; the peer trains with AdamW or LAMB")
    # classifier_dropout_prob: HF's (and our) SOP head drops the pooled output in train mode.
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout_prob"):
        if model_cfg.get(key, 0.0) != 0.0:
            fail(f"{args.dump}: model.{key} is {model_cfg[key]}; the peer needs dropout 0 to be deterministic")
    updates = DumpUpdates(args.dump, args.follow, cfg["training"]["steps"])

    model = AutoModelForPreTraining.from_pretrained(os.path.join(args.dump, "initial"), trust_remote_code=True,
                                                    dtype=torch.float32)
    model.train()
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    lr = opt["lr"] * args.lr_scale
    if opt["type"] == "adamw":
        excluded = [p for n, p in named if excluded_from_decay(n)]
        decayed = [p for n, p in named if not excluded_from_decay(n)]
        optimizer = torch.optim.AdamW(
            [{"params": decayed, "weight_decay": opt["weight_decay"]}, {"params": excluded, "weight_decay": 0.0}],
            lr=lr, betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"])
        scheduler = schedule(optimizer, cfg["schedule"]["type"], info["warmup_steps"], cfg["training"]["steps"])
        step = optimizer.step
    else:
        optimizer = Lamb(named, opt["beta1"], opt["beta2"], opt["eps"], opt["weight_decay"],
                         opt["bias_correction"], opt["trust_ratio_all"])
        scheduler = LambdaSchedule(lr, schedule_factor(cfg["schedule"]["type"], info["warmup_steps"],
                                                       cfg["training"]["steps"]))
        step = lambda: optimizer.step(scheduler.get_last_lr()[0])  # noqa: E731
    params = [p for _, p in named]

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "updates.jsonl"), "w") as log:
        k = 0
        for k, path in enumerate(updates.paths(), 1):
            batch = load_file(path)
            lr = scheduler.get_last_lr()[0]
            out = model(**batch)
            out.loss.backward()
            with torch.no_grad():
                mlm = F.cross_entropy(out.prediction_logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
                sop = F.cross_entropy(out.sop_logits, batch["sentence_order_label"])
            clip = opt["clip_norm"]
            norm = torch.nn.utils.clip_grad_norm_(params, clip if clip > 0 else float("inf"))
            step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            log.write(json.dumps({"update": k, "loss": out.loss.item(), "mlm_loss": mlm.item(), "sop_loss": sop.item(),
                                  "grad_norm": norm.item(), "lr": lr}) + "\n")
            log.flush()
            if args.save_every and k % args.save_every == 0:
                save_model(model, args.dump, os.path.join(args.out, f"step-{k:06d}"))
    state = {n: t.detach().clone().contiguous() for n, t in model.state_dict().items() if not n.endswith("position_ids")}
    save_file(state, os.path.join(args.out, "final.safetensors"))
    print(f"hf_pretrain_peer.py: {k} updates of {type(model).__name__} written to {args.out}")


if __name__ == "__main__":
    main()
