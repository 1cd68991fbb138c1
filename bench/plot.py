#!/usr/bin/python3
"""Plots a `gpuscan bench --csv` file: throughput against n for every algorithm, with the
ratio to memcpy measured in the same run below. Writes PNG next to the CSV (or to -o).

    bench/plot.py bench/results/h200-vulkan-u32-add-inclusive.csv
Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import csv
import math
import pathlib
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"csdldf": ("C0", "o"), "csdl": ("C1", "s"), "rts": ("C2", "^"), "memcpy": ("k", "."), "cub": ("C3", "v")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=pathlib.Path)
    parser.add_argument("-o", "--output", type=pathlib.Path)
    args = parser.parse_args()

    rows = list(csv.DictReader(args.csv.open()))
    if not rows:
        print(f"plot.py: {args.csv} has no rows", file=sys.stderr)
        return 2
    series = defaultdict(list)
    for row in rows:
        if row["blocking_mask"]:
            continue
        ratio = float(row["vs_memcpy"]) if row["vs_memcpy"] else math.nan
        series[row["algorithm"]].append((int(row["n"]), float(row["gelems_per_s"]), ratio))

    first = rows[0]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    for algorithm, points in series.items():
        points.sort()
        n = [p[0] for p in points]
        color, marker = STYLE.get(algorithm, (None, "x"))
        top.plot(n, [p[1] for p in points], marker=marker, color=color, label=algorithm)
        if algorithm != "memcpy":
            bottom.plot(n, [p[2] for p in points], marker=marker, color=color, label=algorithm)
    top.set_xscale("log", base=2)
    top.set_ylabel("Gelements/s")
    top.set_title(f"{first['dtype']} {first['op']} {first['kind']} on {first['device']} ({first['backend']}), "
                  f"commit {first['commit']}", fontsize=10)
    top.legend()
    top.grid(True, alpha=0.3)
    bottom.axhline(1.0, color="k", linewidth=0.8)
    bottom.set_ylabel("throughput / memcpy (same run)")
    bottom.set_xlabel("n (elements)")
    bottom.set_ylim(0, 1.1)
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    output = args.output or args.csv.with_suffix(".png")
    fig.savefig(output, dpi=110)
    print(f"plot.py: wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
