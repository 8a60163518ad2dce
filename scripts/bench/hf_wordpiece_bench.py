#!/usr/bin/env python3
"""Throughput of Hugging Face tokenizers (Rust, PyPI's `tokenizers`, pinned in
scripts/requirements-torch2.txt) as BERT WordPiece, for comparison with `tisa-train tokenizer bench`
(same lines, same ids). Not part of the build.

  RAYON_NUM_THREADS=1 ~/.cache/tisa-train/venv-torch2/bin/python scripts/bench/hf_wordpiece_bench.py \\
      --vocab VOCAB.txt --input FILE... [--lines-out LINES.txt] [--compare IDS.jsonl] [--min-seconds 2]

Lines are read as tisa's bench reads them: a BOM at a file start dropped, split on "\\n", a trailing
"\\r" removed. --lines-out writes them (joined by "\\n") so that `tisa-train tokenizer encode` can
encode exactly the same lines; --compare checks that JSONL's ids against the Rust ones.
RAYON_NUM_THREADS=1 makes encode_batch single-threaded; without it, it uses all cores.
"""
import argparse
import json
import os
import time

import tokenizers
from tokenizers import Tokenizer, normalizers, pre_tokenizers
from tokenizers.models import WordPiece


def bert_wordpiece(vocab):
    """BERT's uncased WordPiece in HF tokenizers (the pipeline tisa-train's WordPiece matches)."""
    tok = Tokenizer(WordPiece.from_file(vocab, unk_token="[UNK]", continuing_subword_prefix="##",
                                        max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True,
                                                lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def read_lines(files):
    lines = []
    for f in files:
        text = open(f, encoding="utf-8").read()
        if text.startswith("\ufeff"):
            text = text[1:]
        parts = text.split("\n")
        if parts and parts[-1] == "":
            parts.pop()
        lines.extend(p[:-1] if p.endswith("\r") else p for p in parts)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--input", nargs="+", required=True)
    ap.add_argument("--lines-out")
    ap.add_argument("--compare")
    ap.add_argument("--min-seconds", type=float, default=2.0)
    a = ap.parse_args()
    tok = bert_wordpiece(a.vocab)
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    lines = read_lines(a.input)
    if a.lines_out:
        with open(a.lines_out, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    nbytes = sum(len(l.encode("utf-8")) for l in lines)
    encodings = tok.encode_batch(lines, add_special_tokens=False)  # warm-up
    ntokens = sum(len(e.ids) for e in encodings)
    reps, t0 = 0, time.perf_counter()
    while True:
        encodings = tok.encode_batch(lines, add_special_tokens=False)
        reps += 1
        seconds = time.perf_counter() - t0
        if seconds >= a.min_seconds:
            break
    seconds /= reps
    result = {"tokenizer": f"hf-tokenizers-{tokenizers.__version__} WordPiece (Python binding)",
              "rayon_threads": os.environ.get("RAYON_NUM_THREADS", "all"), "lines": len(lines), "bytes": nbytes,
              "tokens": ntokens, "seconds": seconds, "mb_per_s": nbytes / 1e6 / seconds,
              "tokens_per_s": ntokens / seconds}
    if a.compare:
        ours = [json.loads(l)["ids"] for l in open(a.compare, encoding="utf-8") if l.strip()]
        same, first = 0, None
        for i, e in enumerate(encodings):
            mine = ours[i] if i < len(ours) else None
            if mine == e.ids:
                same += 1
            elif first is None:
                first = {"line": i + 1, "text": lines[i], "rust": e.ids, "tisa": mine}
        result.update(identical_lines=same, compared_lines=len(lines))
        if first:
            result["first_difference"] = first
    print(json.dumps(result))


if __name__ == "__main__":
    main()
