#!/usr/bin/env python3
"""HF `tokenizers` (PyPI, pinned in scripts/requirements-torch2.txt) WordPiece batch encoding of a
whole text file, streamed in batches of 10,000 lines, for scripts/bench/prepare_bench.sh: the
tokenisation that `tisa-train prepare pretrain` does for the same text with the same vocabulary
(prepare also splits sentences and writes the dataset). --fast uses encode_batch_fast (no
offsets), the closer match to what prepare computes. Prints "MB/s | peak RSS MB | seconds".

  RAYON_NUM_THREADS=1 python scripts/bench/hf_text_bench.py --vocab vocab.txt --input FILE
"""
import argparse
import resource
import time

from hf_wordpiece_bench import bert_wordpiece  # the same tokenizer set-up (this folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--fast", action="store_true", help="encode_batch_fast: ids without offsets")
    a = ap.parse_args()
    tok = bert_wordpiece(a.vocab)
    encode = tok.encode_batch_fast if a.fast else tok.encode_batch
    nbytes, batch = 0, []
    t0 = time.perf_counter()
    with open(a.input, encoding="utf-8") as f:
        for line in f:
            nbytes += len(line.encode("utf-8"))
            line = line.strip()
            if line:
                batch.append(line)
            if len(batch) == 10000:
                encode(batch, add_special_tokens=False)
                batch = []
    if batch:
        encode(batch, add_special_tokens=False)
    seconds = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{nbytes / 1e6 / seconds:.2f} | {peak_mb:.0f} | {seconds:.1f}")


if __name__ == "__main__":
    main()
