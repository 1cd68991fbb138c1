"""The CSV rows of ``python -m gpuscan.bench`` (the timing itself needs torch on a CUDA GPU):
the DESIGN schema with the trailing of_limit column, and of_limit's memory-bound limits."""
import csv
import io

import pytest

from gpuscan import bench


def parse(row):
    return next(csv.DictReader(io.StringIO(bench.HEADER + "\n" + row + "\n")))


def test_header_ends_with_of_limit():
    columns = bench.HEADER.split(",")
    assert len(columns) == 20
    assert bench.HEADER.endswith(",insertions,of_limit")


def test_rows_have_every_column():
    for args in [("memcpy", "int32", (1 << 20,), 1.0), ("gpuscan.cumsum", "float32", (64, 1024), 0.9),
                 ("gpuscan.cumsum-host", "int32", (1 << 16,), None)]:
        algorithm, dtype, shape, vs = args
        row = bench.csv_row("2026-01-01T00:00:00Z", "abc", "GPU", algorithm, dtype, shape, 5, 0.5, vs, 5)
        assert len(row.split(",")) == 20, row
        assert parse(row)["algorithm"] == algorithm


def test_of_limit_of_a_copy_and_a_same_dtype_scan():
    row = parse(bench.csv_row("d", "c", "GPU", "memcpy", "int32", (1 << 20,), 5, 0.1, 1.0, 5))
    assert row["of_limit"] == "1.0000"
    row = parse(bench.csv_row("d", "c", "GPU", "torch.cumsum", "float32", (8, 4096), 5, 0.1, 0.7038, 5))
    assert row["of_limit"] == row["vs_memcpy"] == "0.7038"


def test_of_limit_of_a_widening_scan():
    # numpy rules: int32 in, int64 out, 12 bytes an element against the copy's 8.
    row = parse(bench.csv_row("d", "c", "GPU", "gpuscan.cumsum [numpy rules]", "int32", (1 << 20,), 5, 0.1,
                              0.2665, 5))
    assert float(row["of_limit"]) == pytest.approx(0.2665 * 1.5, abs=1e-4)
    # int64 does not widen.
    assert bench.of_limit("torch.cumsum [numpy rules]", "int64", 0.5) == pytest.approx(0.5)


def test_of_limit_empty_without_a_copy():
    row = parse(bench.csv_row("d", "c", "GPU", "gpuscan.cumsum-host", "int32", (1 << 16,), 1000, 0.05,
                              None, 1000))
    assert row["vs_memcpy"] == "" and row["of_limit"] == ""
