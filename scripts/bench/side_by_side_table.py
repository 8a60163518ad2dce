#!/usr/bin/env python3
"""Markdown tables from one scripts/bench/side_by_side.sh run (runs/side-by-side/*.json), with the
ratios the targets of docs/perf/README.md are stated in. Standard library only.

  python3 scripts/bench/side_by_side_table.py [runs/side-by-side]
"""
import json
import os
import sys

DIR = sys.argv[1] if len(sys.argv) > 1 else "runs/side-by-side"


def load(name):
    path = os.path.join(DIR, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def hf_rows(tag):
    rows = load(f"hf-{tag}.json") or []
    return {r["spec"]["attn"]: r for r in rows}


def tisa_rows(prefix, tag):
    data = load(f"{prefix}-{tag}.json")
    if not data:
        return {}
    return {m["spec"]["label"]: m for m in data["models"]}


def fmt(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def tps(row):
    return row["tokens_per_s"] if row else None


def ratio(a, b):
    return a / b if a and b else None


def main():
    print("| shape | prec | HF sdpa | HF eager | tisa 2.x absolute | tisa 2.x tisa | tisa 1.13 absolute | "
          "tisa 1.13 tisa | 2.x ÷ best HF | TISA over absolute (2.x) | 2.x ÷ 1.13 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    shaw = {}
    for shape in ("8x128", "2x512"):
        for prec in ("fp32", "bf16"):
            tag = f"{shape}-{prec}"
            hf, t2, t1 = hf_rows(tag), tisa_rows("tisa2", tag), tisa_rows("tisa113", tag)
            if not (hf or t2 or t1):
                continue
            best_hf = max((tps(r) for r in hf.values()), default=None)
            a2, ti2 = tps(t2.get("absolute")), tps(t2.get("tisa"))
            a1, ti1 = tps(t1.get("absolute")), tps(t1.get("tisa"))
            overhead = (a2 / ti2 - 1) * 100 if a2 and ti2 else None
            print(f"| {shape} | {prec} | {fmt(tps(hf.get('sdpa')))} | {fmt(tps(hf.get('eager')))} | {fmt(a2)} | "
                  f"{fmt(ti2)} | {fmt(a1)} | {fmt(ti1)} | {fmt(ratio(a2, best_hf), 2)}× | "
                  f"{fmt(overhead)} % | {fmt(ratio(a2, a1), 2)}× |")
            if shape == "2x512" and prec == "fp32":
                shaw = {"t2": t2, "t1": t1}
    print()
    print("tokens/s, median of the timed steps; TISA over absolute = time per step, + is slower.")
    rk, ab = load("hf457-relative_key.json"), load("hf457-absolute.json")
    if shaw and rk and ab:
        rk, ab = rk[0], ab[0]
        print()
        print("| 2×512 fp32, Shaw at HF's relative_key setting | tokens/s | peak RSS MiB | extra over its absolute |")
        print("|---|---|---|---|")
        hf_extra = rk["peak_rss_mib"] - ab["peak_rss_mib"]
        print(f"| HF {rk['transformers']} absolute (eager) | {fmt(tps(ab))} | {ab['peak_rss_mib']:.0f} | — |")
        print(f"| HF {rk['transformers']} relative_key (eager) | {fmt(tps(rk))} | {rk['peak_rss_mib']:.0f} | "
              f"{hf_extra:.0f} MiB |")
        for key, name in (("t2", "2.x"), ("t1", "1.13")):
            t = shaw[key]
            if "shaw-hf" in t and "absolute" in t:
                extra = t["shaw-hf"]["peak_rss_mib"] - t["absolute"]["peak_rss_mib"]
                print(f"| tisa {name} absolute | {fmt(tps(t['absolute']))} | {t['absolute']['peak_rss_mib']:.0f} | — |")
                print(f"| tisa {name} shaw-hf (k = 511, keys) | {fmt(tps(t['shaw-hf']))} | "
                      f"{t['shaw-hf']['peak_rss_mib']:.0f} | {extra:.0f} MiB |")
                print(f"\ntisa {name} shaw-hf ÷ HF relative_key: {fmt(ratio(tps(t['shaw-hf']), tps(rk)), 2)}× speed, "
                      f"{fmt(extra / hf_extra if hf_extra > 0 else None, 2)}× the extra memory")


if __name__ == "__main__":
    main()
