#!/usr/bin/python3
"""Markdown summary of an `attn bench` CSV (used for docs/benchmarks.md).

    /usr/bin/python3 scripts/bench_table.py docs/bench_cpu.csv [--lengths 32,64,128,256,384]

One row per encoder and mode; per length the median step time in ms and the
allocator peak in MiB ("stopped at N" after a model hit the memory budget at length N).
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
    cell, stop = {}, {}
    for r in rows:
        key = (r["model"], r["mode"], int(r["length"]))
        if r["status"] == "ok":
            cell[key] = f"{float(r['median_ms']):.0f} ms / {float(r['peak_mib']):.0f} MiB"
        else:
            cell[key] = "over budget" if r["status"] == "over_budget" else r["status"]
            stop[(r["model"], r["mode"])] = int(r["length"])
    print("| encoder | mode | " + " | ".join(f"n = {n}" for n in lengths) + " |")
    print("|---|---|" + "---|" * len(lengths))
    for model, mode in series:
        cells = []
        for n in lengths:
            c = cell.get((model, mode, n))
            if c is None and (model, mode) in stop and n > stop[(model, mode)]:
                c = f"stopped at {stop[(model, mode)]}"
            cells.append(c or "")
        print(f"| {model} | {mode} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
