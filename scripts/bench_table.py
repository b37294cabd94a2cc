#!/usr/bin/python3
"""Markdown summary of an `attn bench` CSV (used for docs/benchmarks.md).

    /usr/bin/python3 scripts/bench_table.py docs/bench_cpu.csv [--lengths 32,64,128,256,384]

One row per encoder and mode; per length the median step time in ms and the
allocator peak in MiB ("budget" where the model stopped at the memory budget).
"""
import argparse
import csv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--lengths", default="")
    args = ap.parse_args()
    rows = list(csv.DictReader(open(args.csv)))
    lengths = sorted({int(r["length"]) for r in rows})
    if args.lengths:
        lengths = [int(x) for x in args.lengths.split(",")]
    series = []
    for r in rows:
        key = (r["model"], r["mode"])
        if key not in series:
            series.append(key)
    cell = {}
    for r in rows:
        key = (r["model"], r["mode"], int(r["length"]))
        if r["status"] == "ok":
            cell[key] = f"{float(r['median_ms']):.0f} ms / {float(r['peak_mib']):.0f} MiB"
        elif r["status"] == "over_budget":
            cell[key] = "over budget"
        else:
            cell[key] = r["status"]
    print("| encoder | mode | " + " | ".join(f"n = {n}" for n in lengths) + " |")
    print("|---|---|" + "---|" * len(lengths))
    for model, mode in series:
        stopped = False
        cells = []
        for n in lengths:
            c = cell.get((model, mode, n))
            if c is None and stopped:
                c = "(stopped)"
            if c == "over budget":
                stopped = True
            cells.append(c or "")
        print(f"| {model} | {mode} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
