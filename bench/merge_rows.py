#!/usr/bin/env python3
"""Merges benchmark CSVs (DESIGN section 7's schema) into one record.

    merge_rows.py OUT BASE --replace KEY=VALUE[,KEY=VALUE...] NEW.csv... [--blocked-only NEW.csv...]

OUT gets BASE's rows except those that match every KEY=VALUE of --replace (the part of the
record being measured again), then the rows of each NEW file in order; files after
--blocked-only give only their blocked rows (a `--blocking` run repeats the unblocked ones,
which the sweep before it already has). BASE may be missing (OUT then holds the new rows
only). Every file must have BASE's header; OUT may be BASE. bench/gpu-run.sh uses it to keep
one compaction record per GPU whose CUDA and Vulkan, u32 and u64 parts are measured in
separate calls.
"""
import csv
import pathlib
import sys


def read(path: pathlib.Path):
    if not path.is_file():
        print(f"merge_rows.py: no file {path}", file=sys.stderr)
        raise SystemExit(2)
    with path.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            print(f"merge_rows.py: {path} is empty", file=sys.stderr)
            raise SystemExit(2)
        return header, [dict(zip(header, row)) for row in reader]


def main(argv) -> int:
    if len(argv) < 5 or argv[3] != "--replace":
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out, base = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    try:
        replace = dict(pair.split("=", 1) for pair in argv[4].split(","))
    except ValueError:
        print(f"merge_rows.py: --replace takes KEY=VALUE pairs, not '{argv[4]}'", file=sys.stderr)
        return 2
    header, rows = read(base) if base.exists() else (None, [])
    kept = [row for row in rows if any(row.get(key) != value for key, value in replace.items())]
    base_kept = len(kept)
    blocked_only = False
    for name in argv[5:]:
        if name == "--blocked-only":
            blocked_only = True
            continue
        new_header, new_rows = read(pathlib.Path(name))
        header = header or new_header
        if new_header != header:
            print(f"merge_rows.py: {name} has another header than {base}", file=sys.stderr)
            return 2
        kept += [row for row in new_rows if row.get("blocking_mask") or not blocked_only]
    if header is None:
        print("merge_rows.py: no rows to write", file=sys.stderr)
        return 2
    unknown = set(replace) - set(header)
    if unknown:
        print(f"merge_rows.py: --replace names no column: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)
    print(f"merge_rows.py: wrote {out}: {len(kept)} rows, {base_kept} of them kept from {base}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
