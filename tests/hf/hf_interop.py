#!/usr/bin/env python3
"""The Python side of tests/model/hf_interop_itest.cpp and tests/cli/hf_tokenizer_itest.cpp: runs
exported model and tokenizer directories in the pinned `transformers`
(scripts/requirements-torch2.txt) and writes what the C++ tests compare.

  hf_interop.py check
      exit 0 when torch, transformers and safetensors import (else the test skips).
  hf_interop.py remote DIR INPUTS OUT
      Loads DIR with AutoModelForPreTraining / AutoModelForSequenceClassification (from
      config.json's architectures) and with AutoModel, trust_remote_code=True, runs INPUTS
      (input_ids, token_type_ids, attention_mask) in eval mode and writes OUT/outputs.safetensors
      (prediction_logits + sop_logits or logits and hidden_states.<i> of the head model,
      last_hidden_state and pooler_output of AutoModel's), saves the model with save_pretrained
      into OUT/saved, then loads DIR with plain AlbertForPreTraining /
      AlbertForSequenceClassification and writes OUT/plain.json (raised, error, warnings = the
      transformers log records at WARNING and above) and, when it loaded,
      OUT/plain_outputs.safetensors.
  hf_interop.py tokenize DIR CLASS TEXTS OUT
      Loads transformers.CLASS (AlbertTokenizer, BertTokenizerFast, AutoTokenizer, ...) from DIR
      and writes OUT: a first line {"class": ...}, then {"ids": [...]} per line of TEXTS (UTF-8,
      split on \\n), encoded without special tokens.
  hf_interop.py relative_key DIR INPUTS OUT
      transformers 4.30's ALBERT with position_embedding_type relative_key (a distance table per
      attention module, q·E[i − j] added unscaled after the mask), which transformers 5 no longer
      has, run on a 4.30-layout DIR: writes OUT (same tensor names as above). Our own code, written
      from SPEC §2; checked against golden/hf_albert/*_relative_key by the same test.
"""
import json
import logging
import os
import sys


def load_inputs(path):
    from safetensors.torch import load_file

    t = load_file(path)
    return {k: t[k] for k in ("input_ids", "token_type_ids", "attention_mask")}


def architecture(directory):
    with open(os.path.join(directory, "config.json")) as f:
        return json.load(f)["architectures"][0]


def outputs_of(model, inputs, out, base=None):
    """The head model's logits and hidden states; last_hidden_state and pooler_output from `base`
    (the body alone, e.g. as AutoModel loads it; default model.albert)."""
    import torch

    with torch.no_grad():
        r = model(**inputs, output_hidden_states=True)
    tensors = {}
    for name in ("prediction_logits", "sop_logits", "logits"):
        if getattr(r, name, None) is not None:
            tensors[name] = getattr(r, name)
    for i, h in enumerate(r.hidden_states):
        tensors[f"hidden_states.{i}"] = h
    with torch.no_grad():
        body = (base if base is not None else model.albert)(**inputs)
    tensors["last_hidden_state"] = body.last_hidden_state
    tensors["pooler_output"] = body.pooler_output
    from safetensors.torch import save_file

    save_file({k: v.detach().float().contiguous().clone() for k, v in tensors.items()}, out)


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def remote(directory, inputs_path, out):
    import transformers
    from transformers import AutoModel, AutoModelForPreTraining, AutoModelForSequenceClassification

    os.makedirs(out, exist_ok=True)
    inputs = load_inputs(inputs_path)
    pretraining = architecture(directory).endswith("ForPreTraining")
    auto = AutoModelForPreTraining if pretraining else AutoModelForSequenceClassification
    model = auto.from_pretrained(directory, trust_remote_code=True).eval()
    base = AutoModel.from_pretrained(directory, trust_remote_code=True).eval()
    outputs_of(model, inputs, os.path.join(out, "outputs.safetensors"), base)
    model.save_pretrained(os.path.join(out, "saved"))

    # The plain ALBERT load a user might try: it must not succeed silently.
    plain_cls = transformers.AlbertForPreTraining if pretraining else transformers.AlbertForSequenceClassification
    records = Records()
    logging.getLogger("transformers").addHandler(records)
    report = {"raised": False, "error": "", "warnings": []}
    try:
        plain = plain_cls.from_pretrained(directory).eval()
        outputs_of(plain, inputs, os.path.join(out, "plain_outputs.safetensors"))
    except Exception as e:  # noqa: BLE001 - any failure counts as loud
        report["raised"] = True
        report["error"] = f"{type(e).__name__}: {e}"
    report["warnings"] = records.lines
    with open(os.path.join(out, "plain.json"), "w") as f:
        json.dump(report, f, indent=1)


def relative_key(directory, inputs_path, out):
    import torch
    from safetensors.torch import load_file
    from torch import nn
    from transformers import AlbertConfig, AlbertForPreTraining, AlbertForSequenceClassification
    from transformers.models.albert import modeling_albert as ma

    with open(os.path.join(directory, "config.json")) as f:
        raw = json.load(f)
    assert raw.get("position_embedding_type") == "relative_key", "not a relative_key directory"
    config = AlbertConfig.from_pretrained(directory, attn_implementation="eager")
    P = config.max_position_embeddings

    class RelativeKeyAttention(ma.AlbertAttention):
        def __init__(self, cfg):
            super().__init__(cfg)
            self.distance_embedding = nn.Embedding(2 * P - 1, self.attention_head_size)

        def forward(self, hidden_states, attention_mask=None, **kwargs):
            shape = (*hidden_states.shape[:-1], -1, self.attention_head_size)
            q = self.query(hidden_states).view(shape).transpose(1, 2)
            k = self.key(hidden_states).view(shape).transpose(1, 2)
            v = self.value(hidden_states).view(shape).transpose(1, 2)
            scores = torch.matmul(q, k.transpose(-1, -2)) / (self.attention_head_size ** 0.5)
            if attention_mask is not None:
                scores = scores + attention_mask
            L = hidden_states.shape[1]
            pos = torch.arange(L)
            table = self.distance_embedding(pos.view(-1, 1) - pos.view(1, -1) + P - 1)  # [L, L, d], row i − j
            scores = scores + torch.einsum("bhld,lrd->bhlr", q, table)
            probs = nn.functional.softmax(scores, dim=-1)
            context = torch.matmul(probs, v).transpose(1, 2).reshape(*hidden_states.shape[:-1], -1)
            return self.LayerNorm(hidden_states + self.dense(context)), probs

    def embeddings_without_positions(self, input_ids=None, token_type_ids=None, position_ids=None, inputs_embeds=None):
        return self.dropout(self.LayerNorm(self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)))

    pretraining = raw["architectures"][0] == "AlbertForPreTraining"
    model = (AlbertForPreTraining if pretraining else AlbertForSequenceClassification)(config)
    model.albert.embeddings.forward = embeddings_without_positions.__get__(model.albert.embeddings)
    for group in model.albert.encoder.albert_layer_groups:
        for layer in group.albert_layers:
            layer.attention = RelativeKeyAttention(config)
    state = load_file(os.path.join(directory, "model.safetensors"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not m.startswith("predictions.decoder.")]
    assert not missing and not unexpected, f"missing {missing}, unexpected {unexpected}"
    model.tie_weights()
    outputs_of(model.eval(), load_inputs(inputs_path), out)


def tokenize(directory, class_name, texts_path, out):
    """Ids (no special tokens) of each line of TEXTS with transformers' CLASS loaded from DIR."""
    import transformers

    cls = getattr(transformers, class_name)
    # AutoTokenizer in a remote-code model directory reads its config.json: allow the code there.
    extra = {"trust_remote_code": True} if class_name == "AutoTokenizer" else {}
    tok = cls.from_pretrained(directory, **extra)
    with open(texts_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    with open(out, "w") as f:
        f.write(json.dumps({"class": type(tok).__name__}) + "\n")
        for line in lines:
            f.write(json.dumps({"ids": tok.encode(line, add_special_tokens=False)}) + "\n")


def main(argv):
    if len(argv) >= 2 and argv[1] == "check":
        import safetensors  # noqa: F401
        import torch  # noqa: F401
        import transformers

        print(f"transformers {transformers.__version__}, torch {torch.__version__}")
        # The remote code is written for transformers 5 (the pinned version); 4.x lacks its imports.
        if int(transformers.__version__.split(".")[0]) < 5:
            print("transformers >= 5 is needed")
            return 1
        return 0
    if len(argv) == 5 and argv[1] == "remote":
        remote(*argv[2:])
        return 0
    if len(argv) == 6 and argv[1] == "tokenize":
        tokenize(*argv[2:])
        return 0
    if len(argv) == 5 and argv[1] == "relative_key":
        relative_key(*argv[2:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
