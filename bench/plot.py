#!/usr/bin/env python3
"""Plots a `gpuscan bench --csv` file into one PNG beside it (X.csv -> X.png) or to -o.

A size sweep: every algorithm against n, throughput above (median time in microseconds
where no n exceeds 2^22, the small-n sweeps), the ratio to memcpy from the same run below.
A --blocking sweep: the four panels of the paper (fallbacks, spins, look-back steps per
run, and throughput against the unblocked run of the same file) against the blocking rate.
A compaction file (`bench --operation`, kind select, unique, partition, rle...): each
operation and data (op column) against n as its ratio to memcpy, blocked runs dashed, CUB's
dotted, a panel per backend.
A batched file (`bench --shape`, n column BxN; several files may be given): each
implementation's ratio to the copy of the same bytes, shape by shape.

    python3 bench/plot.py bench/results/h100-cuda-u32-add-inclusive.csv
    python3 bench/plot.py bench/results/h100-{cuda,vulkan}-{u32,f32}-add-inclusive-rows.csv \
        -o bench/results/h100-batched.png
    python3 bench/plot.py bench/results/h100-python-cumsum.csv --dtype i32 --exclude host \
        -o bench/results/h100-python-cumsum-i32.png
    python3 bench/plot.py bench/results/h100-compaction.csv --dtype u32
Needs matplotlib (Debian: python3-matplotlib); bench/gpu-run.sh calls it.
"""
import argparse
import csv
import math
import pathlib
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COMPACTIONS = {"select", "select-flagged", "unique", "partition", "partition-flagged", "rle"}
STYLE = {"csdldf": ("C0", "o"), "csdl": ("C1", "s"), "rts": ("C2", "^"), "memcpy": ("k", "."), "cub": ("C3", "v")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=pathlib.Path, nargs="+", help="one file (batched: several)")
    parser.add_argument("-o", "--output", type=pathlib.Path)
    parser.add_argument("--dtype", help="only the rows of this dtype (a file of several)")
    parser.add_argument("--exclude", help="leave out the algorithms this regular expression finds")
    args = parser.parse_args()

    rows = [row for path in args.csv for row in csv.DictReader(path.open())]
    if args.dtype:
        rows = [row for row in rows if row["dtype"] == args.dtype]
    if args.exclude:
        rows = [row for row in rows if not re.search(args.exclude, row["algorithm"])]
    if not rows:
        print(f"plot.py: {' '.join(map(str, args.csv))} has no rows", file=sys.stderr)
        return 2
    output = args.output or args.csv[0].with_suffix(".png")
    if any("x" in row["n"] for row in rows):
        plot_batched(rows, output)
        return 0
    if len(args.csv) > 1:
        print("plot.py: several files only for batched results (n = BxN)", file=sys.stderr)
        return 2
    if any(row["kind"] in COMPACTIONS for row in rows):
        plot_compaction(rows, output)
        return 0
    blocked = [row for row in rows if row["blocking_mask"]]
    if blocked:
        plot_blocking(rows, blocked, output)
        return 0
    small = max(int(row["n"]) for row in rows) <= 1 << 22
    series = defaultdict(list)
    for row in rows:
        ratio = float(row["vs_memcpy"]) if row["vs_memcpy"] else math.nan
        value = float(row["median_ms"]) * 1000 if small else float(row["gelems_per_s"])
        series[row["algorithm"]].append((int(row["n"]), value, ratio))

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
    top.set_ylabel("median time (us)" if small else "Gelements/s")
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
    fig.savefig(output, dpi=110)
    print(f"plot.py: wrote {output}")
    return 0


def plot_batched(rows, output: pathlib.Path) -> None:
    """Each implementation (backend, algorithm, dtype) against the copy, shape by shape."""
    shapes = list(dict.fromkeys(row["n"] for row in rows))
    series = defaultdict(dict)
    for row in rows:
        if row["algorithm"] != "memcpy":
            label = f"{row['backend']} {row['algorithm']} {row['dtype']}"
            series[label][row["n"]] = float(row["vs_memcpy"])
    fig, axis = plt.subplots(figsize=(10, 6))
    width = 0.8 / len(series)
    for index, (label, ratios) in enumerate(sorted(series.items())):
        x = [i + (index - (len(series) - 1) / 2) * width for i in range(len(shapes))]
        axis.bar(x, [ratios.get(shape, math.nan) for shape in shapes], width, label=label,
                 color=plt.cm.tab20(index % 20))
    axis.axhline(1.0, color="k", linewidth=0.8)
    axis.set_xticks(range(len(shapes)), [shape.replace("x", " x ") for shape in shapes], fontsize=8)
    axis.set_xlabel("rows x row length")
    axis.set_ylabel("throughput / copy of the same bytes (same run)")
    commits = sorted({row["commit"] for row in rows})
    axis.set_title(f"batched inclusive sums on {rows[0]['device']}, commit {', '.join(commits)}", fontsize=10)
    axis.grid(True, axis="y", alpha=0.3)
    axis.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"plot.py: wrote {output}")


def plot_compaction(rows, output: pathlib.Path) -> None:
    """One panel per backend in the file (a CUDA and a Vulkan record side by side)."""
    rows = [row for row in rows if row["kind"] in COMPACTIONS]
    backends = sorted({row["backend"] for row in rows})
    fig, axes = plt.subplots(1, len(backends), figsize=(9 * len(backends), 7.5), squeeze=False, sharey=True)
    for axis, backend in zip(axes[0], backends):
        panel = [row for row in rows if row["backend"] == backend]
        series = defaultdict(list)
        for row in panel:
            mask = row["blocking_mask"]
            # CUDA files also hold CUB's counterpart of each operation (algorithm cub), dotted.
            baseline = " (CUB)" if row["algorithm"] == "cub" else ""
            label = f"{row['kind']} {row['op']}{baseline}" + (f", 1 in {int(mask) + 1} blocked" if mask else "")
            series[(row["kind"], label)].append((int(row["n"]), float(row["vs_memcpy"])))
        # One colour an operation in every panel; its CUB and blocked runs in the same colour.
        for (kind, label), points in sorted(series.items()):
            points.sort()
            axis.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                      color=f"C{sorted(COMPACTIONS).index(kind)}",
                      linestyle="--" if "blocked" in label else ":" if "(CUB)" in label else "-", label=label)
        commits = ", ".join(sorted({row["commit"][:7] for row in panel}))
        axis.set_xscale("log", base=2)
        axis.set_xlabel("n (elements)")
        axis.set_title(f"{panel[0]['dtype']} compaction on {panel[0]['device']} ({backend}), commit {commits}",
                       fontsize=10)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    axes[0][0].set_ylabel("throughput / memcpy (same run)")
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"plot.py: wrote {output}")


def plot_blocking(rows, blocked, output: pathlib.Path) -> None:
    """The paper's four panels: per blocking rate (1 in mask + 1 tiles), one line per n."""
    unblocked = {int(r["n"]): float(r["median_ms"]) for r in rows
                 if r["algorithm"] == "csdldf" and not r["blocking_mask"]}
    by_n = defaultdict(list)
    for row in blocked:
        by_n[int(row["n"])].append(row)
    panels = [("fallbacks", "fallbacks initiated per run"), ("spins", "spins per run"),
              ("lookback_steps", "look-back steps per run"), (None, "throughput / unblocked")]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, (column, title) in zip(axes.flat, panels):
        for n, points in sorted(by_n.items()):
            points.sort(key=lambda r: int(r["blocking_mask"]))
            x = [int(r["blocking_mask"]) + 1 for r in points]
            if column is None:
                y = [unblocked[n] / float(r["median_ms"]) if n in unblocked else math.nan for r in points]
            else:
                y = [float(r[column]) if r[column] else math.nan for r in points]
            ax.plot(x, y, marker="o", label=f"n = 2^{int(math.log2(n))}" if n & (n - 1) == 0 else f"n = {n}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("1 in x tiles blocked")
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        if column is not None:
            ax.set_yscale("symlog")
            ax.set_ylim(bottom=0)
        else:
            ax.axhline(0.85, color="r", linewidth=0.8, linestyle="--")
    axes.flat[0].legend(fontsize=8)
    first = blocked[0]
    fig.suptitle(f"csdldf under simulated blocking: {first['dtype']} {first['op']} on {first['device']} "
                 f"({first['backend']}), commit {first['commit']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"plot.py: wrote {output}")


if __name__ == "__main__":
    sys.exit(main())
