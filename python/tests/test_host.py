"""gpuscan on NumPy arrays, scanned on the best device (lavapipe in CI): every dtype, operator
and kind against NumPy, odd sizes, poisoned outputs, views and layouts, numpy.cumsum's dtype
rules, and every refusal."""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuscan
from fakes import DLPackOnly, HostAsDevice
from reference import (DTYPES, check, check_segments, ops_of, random_init, random_input,
                       random_offsets)

KINDS = ["inclusive", "exclusive", "reduce"]
CALLS = {"inclusive": gpuscan.inclusive_scan, "exclusive": gpuscan.exclusive_scan}


def run(kind, x, op="add", init=None, out=None):
    if kind == "reduce":
        return gpuscan.reduce(x, op=op, init=init)
    return CALLS[kind](x, op=op, init=init, out=out)


def poisoned(n, dtype):
    out = np.empty(n, dtype=dtype)
    out.view(np.uint8)[:] = 0xA5
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", KINDS)
def test_every_operator_with_and_without_init(rng, dtype, kind):
    for op in ops_of(dtype):
        for n in (1, 3, 4099):
            x = random_input(rng, dtype, n, op)
            init = random_init(rng, dtype, op) if n != 3 else None
            out = poisoned(n, dtype) if kind != "reduce" else None
            got = run(kind, x, op, init, out)
            if out is not None:
                assert got is out
            else:
                assert isinstance(got, np.generic) and got.dtype == np.dtype(dtype)
            check(got, x, op, kind, init, where=f"{np.dtype(dtype).name} {op} {kind} n={n} init={init}")


@pytest.mark.parametrize("dtype", [np.uint32, np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_sums_at_odd_sizes(rng, dtype):
    sizes = [0, 1, 2, 3, 4, 5, 255, 256, 257, 1023, 4095, 4096, 4097, 8191, 8193, 65537, 100003,
             (1 << 20) + 1]
    for n in sizes:
        x = random_input(rng, dtype, n)
        for kind in KINDS:
            got = run(kind, x)
            check(got, x, "add", kind, where=f"{kind} n={n}")
            if kind != "reduce":
                assert got.dtype == np.dtype(dtype) and got.shape == (n,)


def test_reduce_of_nothing_is_init_or_identity():
    empty = np.zeros(0, dtype=np.int32)
    assert gpuscan.reduce(empty) == 0
    assert gpuscan.reduce(empty, init=-7) == -7
    assert gpuscan.reduce(empty, op="mul") == 1
    # IEEE's identities: NaN for min (fmin ignores it), -0.0 for a float sum.
    assert np.isnan(gpuscan.reduce(np.zeros(0, np.float32), op="min"))
    total = gpuscan.reduce(np.zeros(0, np.float64))
    assert total == 0 and np.signbit(total)
    assert gpuscan.exclusive_scan(empty).shape == (0,)


def test_integer_sums_wrap_like_c():
    x = np.array([np.iinfo(np.int32).max, 1, 1], dtype=np.int32)
    assert gpuscan.inclusive_scan(x).tolist() == [2**31 - 1, -(2**31), -(2**31) + 1]
    u = np.array([2**64 - 1, 2], dtype=np.uint64)
    assert gpuscan.inclusive_scan(u).tolist() == [2**64 - 1, 1]


def test_float_min_max_ignore_one_nan():
    x = np.array([3, np.nan, 1, 5], dtype=np.float32)
    assert gpuscan.inclusive_scan(x, op="min").tolist() == [3, 3, 1, 1]
    assert gpuscan.inclusive_scan(x, op="max").tolist() == [3, 3, 3, 5]


def test_multidimensional_and_strided_inputs_flatten_like_numpy(rng):
    base = random_input(rng, np.int64, 6 * 7 * 5).reshape(6, 7, 5)
    for x in (base, base.transpose(2, 0, 1), base[::2, 1:, ::-1], base[..., 3], np.asfortranarray(base)):
        got = gpuscan.inclusive_scan(x)
        assert got.shape == (x.size,)
        check(got, x, "add", "inclusive", where=f"strides {x.strides}")
        np.testing.assert_array_equal(gpuscan.cumsum(x), np.cumsum(x))


def test_other_byte_order_and_plain_sequences(rng):
    x = random_input(rng, np.int32, 1001)
    swapped = x.astype(x.dtype.newbyteorder())
    got = gpuscan.inclusive_scan(swapped)
    assert got.dtype == np.int32
    check(got, x, "add", "inclusive")
    assert gpuscan.cumsum([1, 2, 3]).tolist() == [1, 3, 6]
    assert gpuscan.cumsum(np.float64(2.5)).tolist() == [2.5]


def test_out_may_be_the_input(rng):
    x = random_input(rng, np.uint32, 5000)
    want = np.cumsum(x, dtype=np.uint32)
    assert gpuscan.inclusive_scan(x, out=x) is x
    np.testing.assert_array_equal(x, want)
    y = random_input(rng, np.float64, 5000)
    y_before = y.copy()
    gpuscan.exclusive_scan(y[1:], out=y[:-1])  # overlapping by all but one element
    check(y[:-1], y_before[1:], "add", "exclusive")


@pytest.mark.parametrize("dtype", [bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_cumsum_follows_numpy_dtype_rules(rng, dtype):
    x = (rng.integers(0, 2, 3001) if dtype is bool else rng.integers(0, 100, 3001)).astype(dtype)
    want = np.cumsum(x)
    got = gpuscan.cumsum(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6) if want.dtype.kind == "f" else \
        np.testing.assert_array_equal(got, want)


def test_cumsum_dtype_and_out(rng):
    x = random_input(rng, np.int32, 2049)
    got = gpuscan.cumsum(x, dtype=np.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.cumsum(x, dtype=np.int32))
    out = poisoned(2049, np.int64)
    assert gpuscan.cumsum(x, out=out) is out
    np.testing.assert_array_equal(out, np.cumsum(x))
    f = gpuscan.cumsum(x, dtype="float64")
    np.testing.assert_allclose(f, np.cumsum(x.astype(np.float64)), rtol=1e-12)


UNSUPPORTED = [(np.int8, "int32"), (np.uint16, "uint32"), (np.float16, "float32"),
               (np.complex64, None), (bool, "int32"), (object, None)]


@pytest.mark.parametrize("dtype, holding", UNSUPPORTED,
                         ids=[np.dtype(d).name for d, _ in UNSUPPORTED])
def test_unsupported_dtypes_name_what_works(dtype, holding):
    x = np.zeros(4, dtype=dtype)
    with pytest.raises(gpuscan.UsageError, match="uint32, int32, float32, uint64, int64 and float64"
                       ) as refused:
        gpuscan.inclusive_scan(x)
    # What to convert to holds x's values (float16 -> float32); none holds complex or objects.
    message = str(refused.value)
    if holding:
        assert f"x.astype(numpy.{holding})" in message, message
    else:
        assert "astype" not in message, message


def test_cumsum_refuses_a_dtype_it_cannot_produce():
    with pytest.raises(gpuscan.UsageError, match="float16"):
        gpuscan.cumsum(np.zeros(4, np.float16))
    with pytest.raises(gpuscan.UsageError, match="int16"):
        gpuscan.cumsum(np.zeros(4, np.int32), dtype=np.int16)


def test_bad_requests_are_usage_errors_and_write_nothing():
    x = np.arange(10, dtype=np.int32)
    out = poisoned(10, np.int32)
    cases = [
        dict(op="sub"), dict(op=None), dict(init=2**40), dict(init=1.5), dict(init=True),
        dict(init=np.arange(2)), dict(out=np.empty(10, np.int64)), dict(out=np.empty(9, np.int32)),
        dict(out=np.empty((2, 5), np.int32)), dict(out=np.empty(20, np.int32)[::2]),
        dict(out=list(range(10))), dict(axis=1), dict(axis=-2), dict(axis="last"),
        dict(axis=1.0),
    ]
    for case in cases:
        with pytest.raises(gpuscan.UsageError) as info:
            gpuscan.inclusive_scan(x, **case)
        assert str(info.value), case
    with pytest.raises(gpuscan.UsageError, match="integers only"):
        gpuscan.inclusive_scan(np.ones(3, np.float32), op="xor")
    with pytest.raises(gpuscan.UsageError, match="read-only|writeable"):
        readonly = np.empty(10, np.int32)
        readonly.flags.writeable = False
        gpuscan.inclusive_scan(x, out=readonly)
    gpuscan.inclusive_scan(x, out=out, op="xor")
    np.testing.assert_array_equal(out, np.bitwise_xor.accumulate(x))
    assert issubclass(gpuscan.UsageError, ValueError) and issubclass(gpuscan.DeviceError, RuntimeError)


def test_dlpack_and_cuda_array_interface_readers():
    from gpuscan import _dlpack
    x = np.arange(24, dtype=np.float32).reshape(4, 6)[:, 1:]
    memory = _dlpack.from_dlpack(x)
    assert memory.pointer == x.ctypes.data and memory.shape == (4, 5)
    assert memory.strides == x.strides and memory.dtype == np.float32
    assert not memory.is_c_contiguous() and memory.size == 20
    del memory  # calls the producer's deleter

    class Fake:
        __cuda_array_interface__ = {"shape": (3, 4), "typestr": "<i8", "data": (4096, False),
                                    "strides": None, "version": 3, "stream": 1}

    memory = _dlpack.from_cuda_array_interface(Fake())
    assert (memory.pointer, memory.shape, memory.stream, memory.size) == (4096, (3, 4), 0, 12)
    assert memory.is_c_contiguous() and memory.dtype == np.int64


def test_host_memory_posing_as_a_cuda_array_is_refused():
    x = np.arange(8, dtype=np.int32)

    class Pretender:
        __cuda_array_interface__ = {"shape": (8,), "typestr": "<i4", "data": (x.ctypes.data, False),
                                    "version": 3}

    with pytest.raises(gpuscan.Error):  # a usage error on a GPU, a device error without one
        gpuscan.inclusive_scan(Pretender(), out=Pretender())


def test_dlpack_host_arrays_are_scanned_as_numpy():
    got = gpuscan.cumsum(DLPackOnly(np.arange(5, dtype=np.int64)))
    assert isinstance(got, np.ndarray) and got.tolist() == [0, 1, 3, 6, 10]


def test_a_missing_library_is_a_device_error_that_says_what_to_do():
    code = "import gpuscan, numpy\ntry:\n gpuscan.cumsum(numpy.ones(3))\nexcept gpuscan.DeviceError as e:\n print(e)"
    env = dict(os.environ, GPUSCAN_LIBRARY="/nonexistent/libgpuscan.so")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))), timeout=120)
    assert "GPUSCAN_LIBRARY=/nonexistent/libgpuscan.so does not load" in result.stdout, result.stderr


def test_device_name_names_a_device():
    assert gpuscan.device_name()


ROW_SHAPES = [(3, 5), (1, 7), (7, 1), (2, 3, 4), (130, 129), (5, 4099), (4, 0), (0, 5)]


def check_rows(got, x, op, kind, init, where):
    """Every row of x's last axis scanned on its own."""
    got = np.asarray(got)
    want_shape = x.shape[:-1] if kind == "reduce" else x.shape
    assert got.shape == want_shape, f"{where}: shape {got.shape}, want {want_shape}"
    rows = x.reshape(int(np.prod(x.shape[:-1])), x.shape[-1])
    if rows.shape[0] == 0:
        assert got.size == 0, where
        return
    out_rows = got.reshape(rows.shape[0], -1)
    for r in range(rows.shape[0]):
        check(out_rows[r], rows[r], op, kind, init, f"{where} row {r}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", KINDS)
def test_axis_minus_one_scans_each_row(rng, dtype, kind):
    """axis=-1: every shape class (one row, rows of one element, empty rows, no rows, more
    than two dimensions), with and without init, into fresh and poisoned outputs."""
    for shape in ROW_SHAPES:
        op = "add" if len(shape) != 3 else ops_of(dtype)[-1]
        x = random_input(rng, dtype, int(np.prod(shape)), op).reshape(shape)
        init = random_init(rng, dtype, op) if shape[0] % 2 else None
        where = f"{np.dtype(dtype).name} {kind} {shape} init={init}"
        if kind == "reduce":
            got = gpuscan.reduce(x, op=op, init=init, axis=-1)
        else:
            out = poisoned(x.size, dtype).reshape(shape)
            got = CALLS[kind](x, op=op, init=init, out=out, axis=-1)
            assert got is out
        check_rows(got, x, op, kind, init, where)


def test_axis_minus_one_matches_numpy_cumsum():
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    np.testing.assert_array_equal(gpuscan.cumsum(x, axis=-1), np.cumsum(x, axis=-1))
    np.testing.assert_array_equal(gpuscan.cumsum(x, axis=1), np.cumsum(x, axis=1))
    assert gpuscan.cumsum(x, axis=-1).dtype == np.cumsum(x, axis=-1).dtype
    v = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(gpuscan.cumsum(v, axis=0), np.cumsum(v, axis=0))
    assert gpuscan.reduce(v, axis=-1) == 10
    with pytest.raises(gpuscan.UsageError, match="last axis"):
        gpuscan.cumsum(x, axis=0)
    with pytest.raises(gpuscan.UsageError, match="out of bounds"):
        gpuscan.cumsum(x, axis=2)
    with pytest.raises(gpuscan.UsageError, match="shape"):
        gpuscan.cumsum(x, axis=-1, out=np.empty(24, np.int64))


# ---- segments= (CSR offsets, DESIGN.md section 3f) -----------------------------------------
# Few (dtype, operator, kind) triples: each is a pipeline of its own, which lavapipe compiles
# in a second or two on a fresh CI machine; the library's own suites cover the rest.
SEGMENTED = [(np.uint32, "add", "inclusive"), (np.uint32, "add", "exclusive"),
             (np.uint32, "add", "reduce"), (np.float32, "add", "inclusive"),
             (np.uint64, "add", "exclusive"), (np.float64, "max", "reduce")]


def segment_cases(rng):
    """(what, n, offsets): every layout class of a segmented scan."""
    yield "random, some empty", 10007, random_offsets(rng, 10007, 97, 0.25)
    yield "long segments", 70001, random_offsets(rng, 70001, 5, 0.0)
    yield "one segment", 4099, np.array([0, 4099])
    yield "every element its own", 257, np.arange(258)
    yield "empty first, inside and last", 1001, np.array([0, 0, 0, 500, 500, 1001, 1001, 1001])
    yield "one element", 1, np.array([0, 1])
    yield "no elements, three empty segments", 0, np.zeros(4, np.int64)
    yield "no elements, no segments", 0, np.zeros(1, np.int64)


@pytest.mark.parametrize("dtype,op,kind", SEGMENTED, ids=lambda v: getattr(v, "__name__", str(v)))
def test_segments_scan_each_segment_on_its_own(rng, dtype, op, kind):
    for what, n, offsets in segment_cases(rng):
        x = random_input(rng, dtype, n, op)
        init = random_init(rng, dtype, op) if n % 2 else None
        where = f"{np.dtype(dtype).name} {op} {kind} {what} init={init}"
        if kind == "reduce":
            got = gpuscan.reduce(x, op=op, init=init, segments=offsets)
            assert isinstance(got, np.ndarray) and got.dtype == np.dtype(dtype), where
        else:
            out = poisoned(n, dtype)
            got = CALLS[kind](x, op=op, init=init, out=out, segments=offsets)
            assert got is out, where
        check_segments(got, x, offsets, op, kind, init, where)


# The tests below stay with SEGMENTED's pipelines (uint32 sums).
def test_segments_reduce_of_empty_segments_is_init_or_identity():
    x = np.array([5, 1, 2], dtype=np.uint32)
    offsets = [0, 0, 2, 2, 3, 3]  # a list: anything numpy.asarray reads
    assert gpuscan.reduce(x, segments=offsets).tolist() == [0, 6, 0, 2, 0]
    assert gpuscan.reduce(x, init=7, segments=offsets).tolist() == [7, 13, 7, 9, 7]
    assert gpuscan.reduce(np.zeros(0, np.uint32), init=4, segments=[0, 0, 0]).tolist() == [4, 4]
    assert gpuscan.reduce(np.zeros(0, np.uint32), segments=[0]).shape == (0,)
    assert gpuscan.exclusive_scan(x, init=10, segments=offsets).tolist() == [10, 15, 10]


def test_segments_take_any_integer_offsets_and_cumsum_converts(rng):
    x = random_input(rng, np.uint32, 300)
    offsets = random_offsets(rng, 300, 17)
    want = gpuscan.inclusive_scan(x, segments=offsets)
    check_segments(want, x, offsets, "add", "inclusive", where="int64 offsets")
    for dtype in (np.int8, np.uint16, np.int32, np.uint32, np.uint64):
        small = random_offsets(rng, 100, 9).astype(dtype)
        got = gpuscan.inclusive_scan(x[:100], segments=small)
        check_segments(got, x[:100], small, "add", "inclusive", where=np.dtype(dtype).name)
    np.testing.assert_array_equal(gpuscan.inclusive_scan(x, segments=offsets[::-1][::-1]), want)
    small_x = (x % 1000).astype(np.uint16)
    got = gpuscan.cumsum(small_x, dtype=np.uint32, segments=offsets)  # x converted to uint32 first
    assert got.dtype == np.uint32
    check_segments(got, small_x.astype(np.uint32), offsets, "add", "inclusive", where="cumsum")


def test_segments_out_may_be_the_input(rng):
    x = random_input(rng, np.uint32, 3001)
    before = x.copy()
    offsets = random_offsets(rng, 3001, 40)
    assert gpuscan.inclusive_scan(x, out=x, segments=offsets) is x
    check_segments(x, before, offsets, "add", "inclusive", where="out=x")


def test_bad_segments_are_usage_errors_and_write_nothing():
    x = np.arange(10, dtype=np.uint32)
    good = np.array([0, 4, 10])
    cases = [
        (dict(segments=[1, 4, 10]), "start at 1, not 0"),
        (dict(segments=[0, 6, 4, 10]), "decrease at index 2 \\(6 then 4\\)"),
        (dict(segments=[0, 4, 9]), "end at 9, but x has 10 elements"),
        (dict(segments=[0, 4, 11]), "end at 11, but x has 10 elements"),
        (dict(segments=[0]), "end at 0, but x has 10 elements"),
        (dict(segments=np.array([0.0, 4.0, 10.0])), "float64; CSR offsets must be integers"),
        (dict(segments=np.array([False, True])), "bool; CSR offsets must be integers"),
        (dict(segments=good.reshape(1, 3)), "must be 1-D"),
        (dict(segments=np.array(10)), "must be 1-D"),
        (dict(segments=np.zeros(0, np.int64)), "no offsets"),
        (dict(segments=good, axis=-1), "does not combine with axis"),
        (dict(segments=good, axis=None), None),  # axis=None is the default: fine
        (dict(segments=good, out=poisoned(2, np.uint32)), "shape"),
    ]
    for case, message in cases:
        out = case.pop("out", poisoned(10, np.uint32))
        if message is None:
            gpuscan.inclusive_scan(x, out=out, **case)
            continue
        with pytest.raises(gpuscan.UsageError, match=message):
            gpuscan.inclusive_scan(x, out=out, **case)
        assert (out.view(np.uint8) == 0xA5).all(), f"{case}: out was written"
    with pytest.raises(gpuscan.UsageError, match="1-D x; x has shape \\(2, 5\\)"):
        gpuscan.reduce(x.reshape(2, 5), segments=good)
    with pytest.raises(gpuscan.UsageError, match="decrease"):
        gpuscan.reduce(x, segments=[0, 6, 4, 10])

    class DeviceOffsets:  # CUDA memory, as __cuda_array_interface__ shows it
        __cuda_array_interface__ = {"shape": (3,), "typestr": "<i8", "data": (4096, False),
                                    "version": 3}

    with pytest.raises(gpuscan.UsageError, match="on a CUDA device and x on the host"):
        gpuscan.cumsum(x, segments=DeviceOffsets())


def test_device_offsets_are_checked_with_the_same_rules():
    from gpuscan import _segments
    arrays = HostAsDevice()
    for dtype in (np.int64, np.int32, np.uint8, np.uint64):
        got = _segments.on_device(arrays, np.array([0, 0, 4, 10], dtype), 10, 0, True)
        assert got.dtype == np.int64 and got.tolist() == [0, 0, 4, 10]
        assert _segments.on_device(arrays, np.array([0], dtype), 0, 0, True).tolist() == [0]
    for offsets, message in (([1, 4, 10], "start at 1, not 0"), ([0, 6, 4, 10], "decrease at index 2"),
                             ([0, 4, 9], "end at 9, but x has 10"), ([0, 4, 11], "end at 11")):
        with pytest.raises(gpuscan.UsageError, match=message):
            _segments.on_device(arrays, np.array(offsets, np.int32), 10, 0, True)
        # Unchecked: passed on as they are, for the library's device-side check.
        assert _segments.on_device(arrays, np.array(offsets), 10, 0, False).tolist() == offsets
    for offsets, message in ((np.zeros((2, 2), np.int64), "1-D"), (np.zeros(0, np.int64), "no offsets"),
                             (np.array([0.0, 10.0]), "float64")):
        with pytest.raises(gpuscan.UsageError, match=message):
            _segments.on_device(arrays, offsets, 10, 0, False)
    with pytest.raises(gpuscan.UsageError, match="device 0 and x on device 1"):
        _segments.on_device(arrays, np.array([0, 10]), 10, 1, True)
    # Host offsets (here: a list) are checked on the host and uploaded.
    assert _segments.on_device(arrays, [0, 3, 10], 10, 0, True).tolist() == [0, 3, 10]
    with pytest.raises(gpuscan.UsageError, match="decrease"):
        _segments.on_device(arrays, [0, 3, 2, 10], 10, 0, True)


def test_cuda_segments_path_on_host_memory(rng, monkeypatch):
    """_cuda.scan's segments branch (result shapes, out=, in place, offsets converted and
    placed) without a GPU: HostAsDevice's arrays are host memory, so the host entry of the C
    ABI stands in for gpuscan_cuda_scan_segments, after checking what it was handed."""
    from gpuscan import _cuda, _library
    from gpuscan._types import init_argument
    lib, device = _library.lib(), _library.host_device()
    calls = []

    def cuda_scan_segments(handle, dtype, op, kind, d_in, d_out, n, d_offsets, segments, init,
                           stream):
        offsets = np.ctypeslib.as_array(ctypes.cast(d_offsets, ctypes.POINTER(ctypes.c_int64)),
                                        (segments + 1,))
        assert offsets[0] == 0 and offsets[-1] == n and (np.diff(offsets) >= 0).all()
        calls.append((n, segments))
        return lib.gpuscan_scan_segments_host(device.handle, dtype, op, kind, d_in, d_out,
                                              d_offsets, segments, init)

    monkeypatch.setattr(lib, "gpuscan_cuda_scan_segments", cuda_scan_segments)
    monkeypatch.setattr(_library, "cuda_device", lambda ordinal: device.handle)
    arrays, u32 = HostAsDevice(), np.dtype(np.uint32)
    kinds = {"inclusive": _library.INCLUSIVE, "exclusive": _library.EXCLUSIVE,
             "reduce": _library.REDUCE}
    for kind, code in kinds.items():
        for n, offsets in ((5001, random_offsets(rng, 5001, 77)), (9, np.arange(10)),
                           (0, np.zeros(3, np.int64)), (0, np.zeros(1, np.int64))):
            x = random_input(rng, np.uint32, n)
            for given in (offsets, offsets.astype(np.int32)):  # int32: converted to int64
                init = 5 if given.dtype == np.int32 else None
                out = None if kind == "reduce" else poisoned(n, np.uint32)
                got = _cuda.scan(arrays, x, u32, 0, code, init_argument(init, u32), out, None, given)
                assert out is None or got is out
                check_segments(got, x, offsets, "add", kind, init, f"{kind} n={n}")
    assert len(calls) == 3 * 2 * 2 + 2  # n = 0 launches only a reduction of empty segments
    x = random_input(rng, np.uint32, 3001)
    offsets = random_offsets(rng, 3001, 20)
    before = x.copy()
    assert _cuda.scan(arrays, x, u32, 0, _library.INCLUSIVE, None, x, None, offsets) is x
    check_segments(x, before, offsets, "add", "inclusive", where="in place")
