"""gpuscan's compaction family (select, partition, unique_consecutive, run_length_encode) on
NumPy arrays (the host device: lavapipe in CI) against NumPy references: every dtype and
predicate, flags of every accepted dtype, stability, runs, NaN and signed zeros, odd sizes,
layouts, and every refusal; the CUDA path's logic on host memory; and, where torch or cupy
finds a CUDA GPU, on CUDA arrays (those tests skip, saying why, elsewhere)."""
import ctypes
import operator
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import gpuscan
from fakes import DLPackOnly, HostAsDevice
from reference import DTYPES

from frameworks import cupy, needs_cupy, needs_torch, needs_torch_cpu, torch

COMPARE = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
           "eq": operator.eq, "ne": operator.ne}
FLAG_DTYPES = [bool, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
               np.uint64]
SIZES = [0, 1, 5, 4097, 100003]
name_of = lambda d: np.dtype(d).name  # noqa: E731 (pytest ids)


# ---- references and checks -------------------------------------------------------------------

def flat(x):
    return np.ascontiguousarray(np.asarray(x)).reshape(-1)


def mask_of(x, keyword, value):
    """x <keyword> value, the value converted to x's dtype as gpuscan documents."""
    x = flat(x)
    with np.errstate(invalid="ignore"):
        return COMPARE[keyword](x, x.dtype.type(value))


def runs_of(x):
    """(values, lengths): the first element of each run of ==-equal elements, and its length."""
    x = flat(x)
    if x.size == 0:
        return x[:0], np.zeros(0, np.int64)
    with np.errstate(invalid="ignore"):
        starts = np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]]))
    return x[starts], np.diff(np.append(starts, x.size)).astype(np.int64)


def same(got, want, where):
    """Same dtype, shape and bits (so -0.0 is not 0.0, and NaN is NaN)."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, want {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, want {want.shape}"
    bits = np.dtype(f"u{want.dtype.itemsize}")
    bad = np.flatnonzero(got.view(bits) != want.view(bits))
    assert bad.size == 0, \
        f"{where}: {bad.size} wrong, first at {bad[0]}: {got[bad[0]]} != {want[bad[0]]}"


def random_values(rng, dtype, n, distinct=None):
    """Full-range integers, or floats of mixed sign with some NaN, +0.0 and -0.0; with
    `distinct`, drawn from that many values only (so eq/ne and runs are exercised)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        pool = rng.uniform(-100, 100, distinct or n).astype(dtype)
        pool[:: 7] = 0.0
        pool[1:: 7] = -0.0
        pool[2:: 11] = np.nan
    else:
        info = np.iinfo(dtype)
        pool = rng.integers(info.min, info.max, distinct or n, dtype=dtype, endpoint=True)
    return pool if distinct is None else rng.choice(pool, n)


def with_runs(rng, dtype, n):
    """n values in runs of random lengths (1 to 600; some cross 4096-element tiles), with
    runs of equal value next to each other now and then (they merge)."""
    pool = random_values(rng, dtype, 64, None)
    lengths = rng.integers(1, 600, max(1, n // 50) + 1)
    lengths[rng.random(lengths.size) < 0.3] = 1
    values = np.repeat(rng.choice(pool, lengths.size), lengths)
    if values.size < n:  # a last run makes up the rest
        values = np.concatenate([values, np.repeat(pool[:1], n - values.size)])
    return values[:n]


# ---- select and partition: every dtype and predicate -----------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=name_of)
def test_every_predicate_of_every_dtype(rng, dtype):
    for keyword in COMPARE:
        for n in (1, 5, 4097):
            x = random_values(rng, dtype, n, distinct=None if n == 1 else 40)
            value = x[rng.integers(0, n)].item()  # a value of x, so eq and ne both bite
            if np.dtype(dtype).kind == "f" and np.isnan(value):
                value = 0.5
            where = f"{name_of(dtype)} {keyword}={value} n={n}"
            mask = mask_of(x, keyword, value)
            got = gpuscan.select(x, **{keyword: value})
            assert isinstance(got, np.ndarray), where
            same(got, x[mask], "select " + where)
            selected, rejected = gpuscan.partition(x, **{keyword: value})
            same(selected, x[mask], "partition selected " + where)
            same(rejected, x[~mask], "partition rejected " + where)


@pytest.mark.parametrize("dtype", DTYPES, ids=name_of)
def test_extreme_constants_compare_in_the_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        info = np.finfo(dtype)
        x = np.array([-np.inf, -info.max, -1, -0.0, 0.0, info.tiny, 1, info.max, np.inf, np.nan],
                     dtype)
        values = [-np.inf, float(-info.max), -0.0, 0.0, float(info.max), np.inf, np.nan]
    else:
        info = np.iinfo(dtype)
        x = np.array([info.min, info.min + 1, -1 if info.min else 1, 0, 1, info.max // 2,
                      info.max // 2 + 1, info.max - 1, info.max], dtype)
        values = [int(info.min), 0, int(info.max // 2), int(info.max // 2) + 1, int(info.max)]
    for keyword in COMPARE:
        for value in values:
            same(gpuscan.select(x, **{keyword: value}), x[mask_of(x, keyword, value)],
                 f"{dtype} {keyword}={value}")


def test_float_comparisons_with_nan_are_false_except_ne():
    x = np.array([1.0, np.nan, -2.0, np.nan], np.float32)
    for keyword in ("lt", "le", "gt", "ge", "eq"):
        assert gpuscan.select(x, **{keyword: np.nan}).size == 0, keyword
    same(gpuscan.select(x, ne=np.nan), x, "ne=nan keeps everything")
    same(gpuscan.select(x, gt=0), np.float32([1.0]), "NaN is not > 0")
    same(gpuscan.select(x, ne=1), np.float32([np.nan, -2.0, np.nan]), "NaN != 1")
    # +0.0 == -0.0: eq=0 keeps both zeros, each as it was.
    z = np.array([0.0, -0.0, 1.0, -0.0], np.float64)
    same(gpuscan.select(z, eq=-0.0), z[[0, 1, 3]], "eq=-0.0")
    same(gpuscan.select(z, lt=0.0), z[:0], "-0.0 < 0.0 is false")


def test_float_constants_round_to_float32_as_numpy_compares():
    tenth = np.float32(0.1)  # not 0.1: the float32 nearest to it
    x = np.array([tenth, np.nextafter(tenth, np.float32(1)), 0.0], np.float32)
    same(gpuscan.select(x, eq=0.1), x[:1], "eq=0.1 is eq=float32(0.1)")
    same(gpuscan.select(x, gt=0.1), x[1:2], "gt=0.1")
    big = np.float32(2.0 ** 24)
    same(gpuscan.select(np.array([big, big + 2], np.float32), le=2 ** 24 + 1), np.float32([big]),
         "an integer constant rounds to float32 (2^24 + 1 -> 2^24)")


def test_constants_of_numpy_scalars_and_0d_arrays():
    x = np.arange(10, dtype=np.int64)
    same(gpuscan.select(x, ge=np.int8(7)), x[7:], "numpy scalar")
    same(gpuscan.select(x, lt=np.array(3)), x[:3], "0-d array")
    same(gpuscan.select(x, eq=np.array([4])), x[4:5], "one-element array")
    same(gpuscan.select(x.astype(np.float64), gt=np.float32(8.5)), np.float64([9]), "float32")
    same(gpuscan.select(x.astype(np.float32), lt=Fraction(1, 2)), np.float32([0]), "a Fraction")
    u = np.array([0, 2**63 - 1, 2**63, 2**64 - 1], np.uint64)
    same(gpuscan.select(u, ge=2**63), u[2:], "uint64 above 2^63 compares unsigned")
    same(gpuscan.select(u.astype(np.int64), lt=0), u[2:].astype(np.int64), "int64 below 0")


def test_partition_is_stable(rng):
    # Keys with many repeats and a payload in the low bits: order within each side shows.
    n = 100003
    x = (rng.integers(0, 8, n).astype(np.int64) << 32) | np.arange(n, dtype=np.int64)
    for keyword, value in (("lt", 4 << 32), ("ge", 2 << 32), ("eq", 5 << 32), ("ne", 5 << 32)):
        selected, rejected = gpuscan.partition(x, **{keyword: value})
        mask = mask_of(x, keyword, value)
        same(selected, x[mask], f"{keyword} selected")
        same(rejected, x[~mask], f"{keyword} rejected")
        for part in (selected, rejected):
            assert (np.diff(part & 0xFFFFFFFF) > 0).all(), f"{keyword}: out of order"
    flags = rng.integers(0, 2, n, dtype=np.uint8)
    selected, rejected = gpuscan.partition(x, flags=flags)
    same(selected, x[flags != 0], "flags selected")
    same(rejected, x[flags == 0], "flags rejected")


# ---- flags ---------------------------------------------------------------------------------

@pytest.mark.parametrize("flag_dtype", FLAG_DTYPES, ids=name_of)
def test_flags_of_every_accepted_dtype(rng, flag_dtype):
    flag_dtype = np.dtype(flag_dtype)
    for dtype in (np.uint32, np.float64):
        n = 4097
        x = random_values(rng, dtype, n)
        if flag_dtype.kind == "b":
            flags = rng.random(n) < 0.4
        else:
            info = np.iinfo(flag_dtype)
            # Mostly zeros; the others anything nonzero, negative and high-bit values too.
            flags = rng.integers(info.min, info.max, n, dtype=flag_dtype, endpoint=True)
            flags[rng.random(n) < 0.5] = 0
        if flag_dtype.itemsize == 8:
            flags[:: 13] = 1 << 32  # nonzero only in the high word
            flags[1:: 13] = 1 << 63 if flag_dtype.kind == "u" else -(1 << 63)
        where = f"{name_of(dtype)} x, {flag_dtype} flags"
        same(gpuscan.select(x, flags=flags), x[flags != 0], "select " + where)
        selected, rejected = gpuscan.partition(x, flags=flags)
        same(selected, x[flags != 0], "partition selected " + where)
        same(rejected, x[flags == 0], "partition rejected " + where)


def test_flags_of_x_shape_or_flat_and_other_layouts(rng):
    x = random_values(rng, np.int32, 6 * 7 * 5).reshape(6, 7, 5)
    flags = rng.random(x.shape) < 0.5
    want = x[flags]  # numpy: row-major order
    same(gpuscan.select(x, flags=flags), want, "flags of x's shape")
    same(gpuscan.select(x, flags=flags.reshape(-1)), want, "1-D flags")
    same(gpuscan.select(x, flags=flags.tolist()), want, "nested lists")
    t = x.transpose(2, 0, 1)
    same(gpuscan.select(t, flags=flags.transpose(2, 0, 1)), t[flags.transpose(2, 0, 1)],
         "transposed x and flags")
    swapped = flags.astype(np.dtype(">u8"))
    same(gpuscan.select(x, flags=swapped), want, "big-endian flags")


# ---- unique_consecutive and run_length_encode --------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=name_of)
def test_unique_and_run_lengths_of_every_dtype(rng, dtype):
    for n in SIZES:
        for x in (with_runs(rng, dtype, n), random_values(rng, dtype, n, distinct=3)):
            values, lengths = runs_of(x)
            where = f"{name_of(dtype)} n={n}"
            same(gpuscan.unique_consecutive(x), values, "unique " + where)
            got_values, got_lengths = gpuscan.run_length_encode(x)
            same(got_values, values, "rle values " + where)
            same(got_lengths, lengths, "rle lengths " + where)
            got_values, got_counts = gpuscan.unique_consecutive(x, return_counts=True)
            same(got_values, values, "unique values " + where)
            same(got_counts, lengths, "unique counts " + where)
            assert lengths.sum() == n


def test_one_long_run_and_all_distinct():
    for n in (1, 4097, 100003):
        x = np.full(n, 7, np.uint64)
        values, lengths = gpuscan.run_length_encode(x)
        same(values, np.uint64([7]), f"one run n={n}")
        same(lengths, np.int64([n]), f"one run n={n}")
        y = np.arange(n, dtype=np.float32)
        values, lengths = gpuscan.run_length_encode(y)
        same(values, y, f"distinct n={n}")
        same(lengths, np.ones(n, np.int64), f"distinct n={n}")


def test_signed_zeros_are_equal_and_nan_equals_nothing():
    x = np.array([-0.0, 0.0, 0.0, np.nan, np.nan, 1.0, 1.0, 0.0, -0.0, np.nan], np.float32)
    values, counts = gpuscan.unique_consecutive(x, return_counts=True)
    # Each run keeps its first element: -0.0 for the first run, +0.0 for the later one.
    same(values, np.array([-0.0, np.nan, np.nan, 1.0, 0.0, np.nan], np.float32), "values")
    same(counts, np.int64([3, 1, 1, 2, 2, 1]), "counts")
    same(gpuscan.unique_consecutive(x.astype(np.float64)), values.astype(np.float64), "float64")


# ---- sizes, layouts, empty input -----------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
def test_odd_sizes(rng, n):
    for dtype in (np.uint32, np.float64):
        x = random_values(rng, dtype, n, distinct=5)
        value = x[0].item() if n and not np.isnan(x[0]) else 1
        mask = mask_of(x, "le", value)
        same(gpuscan.select(x, le=value), x[mask], f"select n={n}")
        selected, rejected = gpuscan.partition(x, le=value)
        same(selected, x[mask], f"partition n={n}")
        same(rejected, x[~mask], f"partition n={n}")
        flags = rng.integers(0, 2, n, dtype=np.int64)
        same(gpuscan.select(x, flags=flags), x[flags != 0], f"flags n={n}")
        same(gpuscan.unique_consecutive(x), runs_of(x)[0], f"unique n={n}")


def test_empty_input_gives_empty_arrays():
    for dtype in DTYPES:
        x = np.zeros(0, dtype)
        same(gpuscan.select(x, gt=0), x, "select")
        same(gpuscan.select(x, flags=np.zeros(0, bool)), x, "select flags")
        selected, rejected = gpuscan.partition(x, eq=1)
        same(selected, x, "partition")
        same(rejected, x, "partition")
        same(gpuscan.unique_consecutive(x), x, "unique")
        values, lengths = gpuscan.run_length_encode(x)
        same(values, x, "rle")
        same(lengths, np.zeros(0, np.int64), "rle")
    same(gpuscan.select(np.zeros((3, 0), np.int32), lt=1), np.zeros(0, np.int32), "shape (3, 0)")


def test_inputs_flatten_like_numpy(rng):
    base = random_values(rng, np.int64, 6 * 7 * 5, distinct=4).reshape(6, 7, 5)
    for x in (base, base.transpose(2, 0, 1), base[::2, 1:, ::-1], np.asfortranarray(base)):
        same(gpuscan.select(x, gt=base[0, 0, 0]), x[x > base[0, 0, 0]], f"strides {x.strides}")
        same(gpuscan.unique_consecutive(x), runs_of(x)[0], f"strides {x.strides}")
    swapped = base.astype(base.dtype.newbyteorder())
    got = gpuscan.select(swapped, ne=base[0, 0, 0])
    assert got.dtype == np.int64  # native order, the same values
    same(got, base[base != base[0, 0, 0]], "byte-swapped x")
    same(gpuscan.select([1.5, -2.0, 3.0], gt=0), np.float64([1.5, 3.0]), "a list")
    same(gpuscan.select(np.float32(2.0), eq=2), np.float32([2.0]), "a 0-d array")
    x = np.arange(5, dtype=np.int32)
    got = gpuscan.select(x, ge=0)  # everything kept: still a new array
    assert not np.shares_memory(got, x)


def test_results_own_just_their_elements():
    x = np.arange(100003, dtype=np.float64)
    got = gpuscan.select(x, lt=3)
    assert got.tolist() == [0.0, 1.0, 2.0]
    assert got.base is None or got.base.size == 3  # not a view of a 100003-element buffer


@needs_torch_cpu
def test_cpu_tensors_in_give_tensors_out(rng):
    x = torch.from_numpy(random_values(rng, np.int32, 1001, distinct=6))
    got = gpuscan.select(x, gt=0)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.int32
    same(got.numpy(), x.numpy()[x.numpy() > 0], "select")
    flags = x < 0
    same(gpuscan.select(x, flags=flags).numpy(), x.numpy()[flags.numpy()], "tensor flags")
    selected, rejected = gpuscan.partition(x.float().requires_grad_(), le=0)
    assert isinstance(selected, torch.Tensor) and isinstance(rejected, torch.Tensor)
    values, counts = gpuscan.unique_consecutive(x, return_counts=True)
    want_values, want_counts = torch.unique_consecutive(x, return_counts=True)
    assert torch.equal(values, want_values) and torch.equal(counts, want_counts)


# ---- refusals --------------------------------------------------------------------------------

def test_a_condition_is_needed_and_only_one():
    x = np.arange(10, dtype=np.int32)
    for call in (gpuscan.select, gpuscan.partition):
        with pytest.raises(gpuscan.UsageError, match="needs a condition"):
            call(x)
        with pytest.raises(gpuscan.UsageError, match="one condition; got lt= and gt="):
            call(x, lt=5, gt=1)
        with pytest.raises(gpuscan.UsageError, match="one condition; got eq= and flags="):
            call(x, eq=5, flags=np.ones(10, bool))
    with pytest.raises(TypeError):
        gpuscan.select(x, 5)  # the condition is a keyword
    with pytest.raises(TypeError):
        gpuscan.select(x, between=(1, 3))


UNSUPPORTED = [(bool, "int32"), (np.int8, "int32"), (np.uint8, "uint32"), (np.int16, "int32"),
               (np.uint16, "uint32"), (np.float16, "float32"), (np.complex64, None),
               (object, None), ("U3", None)]


@pytest.mark.parametrize("dtype, holding", UNSUPPORTED, ids=[name_of(d) for d, _ in UNSUPPORTED])
def test_unsupported_dtypes_name_what_works(dtype, holding):
    x = np.zeros(4, dtype=dtype)
    # The dtype to convert to is one that holds x's values (float16 -> float32, not int32).
    hint = (f"convert it first, e.g. x.astype\\(numpy.{holding}\\) or x.to\\(torch.{holding}\\)"
            if holding else "no gpuscan dtype holds its values")
    for call in (lambda: gpuscan.select(x, eq=0), lambda: gpuscan.partition(x, flags=[1, 0, 1, 0]),
                 lambda: gpuscan.unique_consecutive(x), lambda: gpuscan.run_length_encode(x)):
        with pytest.raises(gpuscan.UsageError, match="x of uint32, int32, float32, uint64, int64 "
                           f"and float64; x is {np.dtype(dtype)} \\({hint}\\)"):
            call()


def test_bad_constants():
    i = np.arange(10, dtype=np.int32)
    f = np.arange(10, dtype=np.float32)
    cases = [
        (i, dict(lt=2.5), "not an integer"), (i, dict(eq=2.0), "not an integer"),
        (i, dict(gt=2**31), "does not fit x's dtype, int32"),
        (i, dict(gt=-(2**31) - 1), "does not fit"),
        (np.zeros(3, np.uint64), dict(ge=-1), "does not fit x's dtype, uint64"),
        (np.zeros(3, np.uint32), dict(ge=2**32), "does not fit"),
        (i, dict(eq=True), "not a number"), (f, dict(eq=False), "not a number"),
        (i, dict(eq="3"), "not a number"), (f, dict(eq=None, ne=1j), "not a number"),
        (i, dict(eq=[1, 2]), "not a number"), (i, dict(eq=Fraction(1, 2)), "not an integer"),
        (i, dict(eq=np.arange(2)), "one number; got an array of 2"),
        (i, dict(eq=Decimal(1)), "not a number"), (f, dict(ne=np.array(True)), "not a number"),
        (f, dict(lt=1e39), "does not fit x's dtype, float32"),
        (f, dict(lt=-(10**39)), "does not fit"), (np.zeros(2), dict(lt=10**400), "does not fit"),
    ]
    for x, case, message in cases:
        for call in (gpuscan.select, gpuscan.partition):
            with pytest.raises(gpuscan.UsageError, match=message):
                call(x, **case)
    # Infinities are numbers: they compare.
    same(gpuscan.select(f, lt=np.inf), f, "lt=inf")


def test_bad_flags():
    x = np.arange(12, dtype=np.int64)
    cases = [
        (dict(flags=np.ones(11, bool)),
         "flags have shape \\(11,\\); they must have x's shape \\(12,\\)"),
        (dict(flags=np.ones(13, np.int32)), "shape \\(13,\\)"),
        (dict(flags=np.ones((3, 4), bool)), "shape \\(3, 4\\)"),
        (dict(flags=np.ones((12, 1), bool)), "shape \\(12, 1\\)"),
        (dict(flags=np.ones(12, np.float32)), "flags are float32; flags must be integers"),
        (dict(flags=np.ones(12, np.float64)), "float64"),
        (dict(flags=np.ones(12, np.complex64)), "complex64"),
        (dict(flags=np.ones(12, object)), "object"),
        (dict(flags=1), "shape \\(\\)"),
    ]
    for case, message in cases:
        for call in (gpuscan.select, gpuscan.partition):
            with pytest.raises(gpuscan.UsageError, match=message):
                call(x, **case)
    square = x.reshape(3, 4)
    with pytest.raises(gpuscan.UsageError,
                       match="shape \\(4, 3\\); they must have x's shape \\(3, 4\\)"):
        gpuscan.select(square, flags=np.ones((4, 3), bool))  # the right size, another shape
    with pytest.raises(gpuscan.UsageError, match="shape \\(2, 6\\)"):
        gpuscan.partition(square, flags=np.ones((2, 6), np.int32))
    with pytest.raises(gpuscan.UsageError, match="shape \\(12,\\)"):
        gpuscan.select(np.zeros(0, np.int64), flags=np.ones(12, bool))  # empty x still checks

    class DeviceFlags:  # CUDA memory, as __cuda_array_interface__ shows it
        __cuda_array_interface__ = {"shape": (12,), "typestr": "<i4", "data": (4096, False),
                                    "version": 3}

    with pytest.raises(gpuscan.UsageError, match="flags are on a CUDA device and x on the host"):
        gpuscan.select(x, flags=DeviceFlags())


def test_cuda_arrays_of_other_frameworks_are_refused():
    class DeviceArray:
        __cuda_array_interface__ = {"shape": (12,), "typestr": "<i4", "data": (4096, False),
                                    "version": 3}

    for call in (lambda a: gpuscan.select(a, lt=3), gpuscan.unique_consecutive,
                 gpuscan.run_length_encode):
        with pytest.raises(gpuscan.UsageError, match="CUDA arrays of torch and cupy"):
            call(DeviceArray())


def test_dlpack_host_arrays_are_compacted_as_numpy():
    x = np.arange(6, dtype=np.int32)
    same(gpuscan.select(DLPackOnly(x), flags=DLPackOnly(x % 2)), np.int32([1, 3, 5]), "DLPack")


def test_the_c_abi_writes_nothing_when_it_refuses():
    """gpuscan.h: nothing is written unless the call succeeds (here: requests only a direct
    C caller can get wrong)."""
    from gpuscan import _library
    lib, device = _library.lib(), _library.host_device()
    x = np.arange(16, dtype=np.uint32)
    flags = np.ones(16, np.uint32)
    value = ctypes.c_uint32(3)
    u32, f32 = 0, 2
    spec = _library.CompactSpec
    cases = [
        (spec(_library.SELECT_FLAGGED, u32, 0, u32), None, None, None, "needs flags"),
        (spec(_library.SELECT_IF, u32, 0, u32), flags, value, None, "takes no flags"),
        (spec(_library.SELECT_IF, u32, 0, u32), None, None, None, "constant"),
        (spec(_library.UNIQUE, u32, 0, u32), None, value, None, "takes no constant"),
        (spec(_library.PARTITION, u32, 0, u32), None, value, None, "second"),
        (spec(_library.SELECT_FLAGGED, u32, 0, f32), flags, None, None, "integer"),
        (spec(_library.SELECT_IF, u32, 9, u32), None, value, None, "predicate"),
        (spec(9, u32, 0, u32), None, value, None, "compaction"),
        (spec(_library.SELECT_IF, 7, 0, u32), None, value, None, "dtype"),
    ]
    for spec, flag_array, constant, second, message in cases:
        out = np.full(16, 0xA5A5A5A5, np.uint32)
        count = ctypes.c_uint64(0xA5A5)
        status = lib.gpuscan_compact_host(
            device.handle, ctypes.byref(spec), x.ctypes.data,
            flag_array.ctypes.data if flag_array is not None else None, 16,
            ctypes.byref(constant) if constant is not None else None, out.ctypes.data, second,
            ctypes.byref(count))
        error = lib.gpuscan_last_error().decode()
        assert status == _library.USAGE_ERROR, (message, status, error)
        assert message in error, (message, error)
        assert (out == 0xA5A5A5A5).all() and count.value == 0xA5A5, f"{message}: written"


# ---- the CUDA path's logic, on host memory ----------------------------------------------------


def test_cuda_path_on_host_memory(rng, monkeypatch):
    """_compaction.on_cuda (outputs, count, slices, flags checked and converted) without a
    GPU: the host entry of the C ABI stands in for gpuscan_cuda_compact, after checking what
    it was handed, and writes the count where d_count points."""
    from gpuscan import _compaction, _library
    lib, device = _library.lib(), _library.host_device()
    calls = []

    def cuda_compact(handle, spec, d_in, d_flags, n, constant, d_out, d_second, d_count, stream):
        spec = spec._obj
        two = spec.compaction in (_library.PARTITION, _library.RUN_LENGTH_ENCODE,
                                  _library.PARTITION_FLAGGED)
        assert n > 0 and d_in and d_out and d_count and bool(d_second) == two
        calls.append(spec.compaction)
        count = ctypes.c_uint64()
        status = lib.gpuscan_compact_host(device.handle, spec, d_in, d_flags, n, constant, d_out,
                                          d_second, ctypes.byref(count))
        ctypes.c_uint64.from_address(d_count).value = count.value
        return status

    monkeypatch.setattr(lib, "gpuscan_cuda_compact", cuda_compact)
    monkeypatch.setattr(_library, "cuda_device", lambda ordinal: device.handle)
    arrays = HostAsDevice()
    for n in (0, 1, 4097):
        x = random_values(rng, np.int32, n, distinct=5).reshape(-1, 1) if n else \
            np.zeros(0, np.int32)
        d = np.dtype(np.int32)
        flags = rng.integers(0, 2, x.shape).astype(np.int16)  # widened to int32
        value = int(x[0, 0]) if n else 0
        mask = mask_of(x, "ge", value)
        req = _compaction.request("select", d, dict.fromkeys(_compaction.COMPARISONS), flags)
        same(_compaction.on_cuda(arrays, x, req), flat(x)[flat(flags) != 0], f"flagged n={n}")
        comparisons = dict(dict.fromkeys(_compaction.COMPARISONS), ge=value)
        req = _compaction.request("partition", d, comparisons)
        selected, rejected = _compaction.on_cuda(arrays, x, req)
        same(selected, flat(x)[mask], f"partition n={n}")
        same(rejected, flat(x)[~mask], f"partition n={n}")
        req = _compaction.request("unique_consecutive", d, counts=True)
        values, lengths = _compaction.on_cuda(arrays, x, req)
        want_values, want_lengths = runs_of(x)
        same(values, want_values, f"rle n={n}")
        same(lengths, want_lengths, f"rle n={n}")
        same(_compaction.on_cuda(arrays, x, _compaction.request("unique_consecutive", d)),
             want_values, f"unique n={n}")
    assert len(calls) == 2 * 4 and arrays.counts_read == 2 * 4  # n = 0 calls nothing
    req = _compaction.request("select", np.dtype(np.int32), dict.fromkeys(_compaction.COMPARISONS),
                              [1, 0])
    with pytest.raises(gpuscan.UsageError,
                       match="must be a fake array on that device; got a host list"):
        _compaction.on_cuda(arrays, np.zeros(2, np.int32), req)
    req.flags = np.ones(2, np.float32)
    with pytest.raises(gpuscan.UsageError, match="flags are float32"):
        _compaction.on_cuda(arrays, np.zeros(2, np.int32), req)
    req.flags = np.ones(3, np.int32)
    with pytest.raises(gpuscan.UsageError, match="shape \\(3,\\)"):
        _compaction.on_cuda(arrays, np.zeros(2, np.int32), req)


# ---- CUDA arrays (torch, cupy) ----------------------------------------------------------------

class TorchOps:
    name = "torch"
    dtypes = [np.int32, np.float32, np.int64, np.float64]  # torch's CUDA uint32/64 are partial

    def to_device(self, a):
        return torch.from_numpy(np.ascontiguousarray(a)).cuda()

    def to_host(self, t):
        return t.detach().cpu().numpy()

    def is_array(self, a):
        return torch.is_tensor(a) and a.is_cuda

    def stream(self):
        return torch.cuda.Stream()

    def on_stream(self, stream):
        return torch.cuda.stream(stream)


class CupyOps:
    name = "cupy"
    dtypes = DTYPES

    def to_device(self, a):
        return cupy.asarray(a)

    def to_host(self, a):
        return cupy.asnumpy(a)

    def is_array(self, a):
        return isinstance(a, cupy.ndarray)

    def stream(self):
        return cupy.cuda.Stream(non_blocking=True)

    def on_stream(self, stream):
        return stream


FRAMEWORKS = [pytest.param(TorchOps, marks=needs_torch, id="torch"),
              pytest.param(CupyOps, marks=needs_cupy, id="cupy")]


@pytest.mark.parametrize("ops", FRAMEWORKS)
def test_cuda_every_dtype_and_predicate(rng, ops):
    fw = ops()
    for dtype in fw.dtypes:
        for n in (1, 5, 4097, (1 << 20) + 3):
            x = random_values(rng, dtype, n, distinct=40)
            d = fw.to_device(x)
            for keyword in COMPARE:
                value = x[rng.integers(0, n)].item()
                value = 0.5 if isinstance(value, float) and np.isnan(value) else value
                where = f"{fw.name} {name_of(dtype)} {keyword}={value} n={n}"
                mask = mask_of(x, keyword, value)
                got = gpuscan.select(d, **{keyword: value})
                assert fw.is_array(got), where
                same(fw.to_host(got), x[mask], "select " + where)
                selected, rejected = gpuscan.partition(d, **{keyword: value})
                same(fw.to_host(selected), x[mask], "partition selected " + where)
                same(fw.to_host(rejected), x[~mask], "partition rejected " + where)


@pytest.mark.parametrize("ops", FRAMEWORKS)
def test_cuda_flags_runs_and_sizes(rng, ops):
    fw = ops()
    for n in SIZES + [(1 << 22) + 1]:
        for dtype in fw.dtypes:
            x = with_runs(rng, dtype, n)
            d = fw.to_device(x)
            where = f"{fw.name} {name_of(dtype)} n={n}"
            for flag_dtype in (bool, np.uint8, np.int32, np.int64):
                flags = (rng.random(n) < 0.3).astype(flag_dtype)
                got = gpuscan.select(d, flags=fw.to_device(flags))
                same(fw.to_host(got), x[flags != 0], f"select {where} {name_of(flag_dtype)} flags")
            selected, rejected = gpuscan.partition(d, flags=fw.to_device(flags))
            same(fw.to_host(selected), x[flags != 0], "partition flags " + where)
            same(fw.to_host(rejected), x[flags == 0], "partition flags " + where)
            values, lengths = runs_of(x)
            same(fw.to_host(gpuscan.unique_consecutive(d)), values, "unique " + where)
            got_values, got_lengths = gpuscan.run_length_encode(d)
            same(fw.to_host(got_values), values, "rle " + where)
            same(fw.to_host(got_lengths), lengths, "rle lengths " + where)


@needs_torch
def test_cuda_torch_matches_torch(rng):
    # Without NaN, whose runs are the numpy references' business (torch's own rule for them
    # is not what this compares).
    x = torch.from_numpy(np.nan_to_num(with_runs(rng, np.float32, 100003))).cuda()
    values, counts = gpuscan.unique_consecutive(x, return_counts=True)
    want_values, want_counts = torch.unique_consecutive(x, return_counts=True)
    assert counts.dtype == torch.int64 and values.dtype == torch.float32
    assert torch.equal(counts, want_counts) and torch.equal(values, want_values)
    assert torch.equal(gpuscan.select(x, gt=0.5), x[x > 0.5])
    mask = torch.rand(x.shape, device="cuda") < 0.5
    selected, rejected = gpuscan.partition(x, flags=mask)
    assert torch.equal(selected, x[mask]) and torch.equal(rejected, x[~mask])
    # 2-D, non-contiguous and requires_grad inputs flatten row-major, as x[mask] reads them.
    m = torch.randn(300, 301, device="cuda", requires_grad=True)
    t = m.t()
    assert torch.equal(gpuscan.select(t, lt=0), t[t < 0].detach())
    assert torch.equal(gpuscan.select(t, flags=t > 1), t[t > 1].detach())


@pytest.mark.parametrize("ops", FRAMEWORKS)
def test_cuda_on_the_current_stream(rng, ops):
    fw = ops()
    stream = fw.stream()
    with fw.on_stream(stream):
        x = random_values(rng, np.int64, 1 << 22, distinct=9)
        d = fw.to_device(x)
        got = gpuscan.select(d, ne=x[0].item())  # waits for this stream to read the count
        same(fw.to_host(got), x[x != x[0]], f"{fw.name} on a side stream")
        values, lengths = gpuscan.run_length_encode(d)
        want_values, want_lengths = runs_of(x)
        same(fw.to_host(values), want_values, "rle on a side stream")
        same(fw.to_host(lengths), want_lengths, "rle on a side stream")


@pytest.mark.parametrize("ops", FRAMEWORKS)
def test_cuda_empty_and_refusals(ops):
    fw = ops()
    x = fw.to_device(np.arange(12, dtype=np.int32))
    empty = fw.to_device(np.zeros(0, np.float64))
    got = gpuscan.select(empty, gt=0)
    assert fw.is_array(got) and tuple(got.shape) == (0,)
    values, lengths = gpuscan.run_length_encode(empty)
    assert fw.is_array(lengths) and tuple(lengths.shape) == (0,)
    assert fw.to_host(lengths).dtype == np.int64
    with pytest.raises(gpuscan.UsageError, match="host ndarray"):
        gpuscan.select(x, flags=np.ones(12, bool))  # host flags for a CUDA x
    with pytest.raises(gpuscan.UsageError, match="shape \\(11,\\)"):
        gpuscan.select(x, flags=fw.to_device(np.ones(11, np.int32)))
    with pytest.raises(gpuscan.UsageError, match="flags are float32"):
        gpuscan.select(x, flags=fw.to_device(np.ones(12, np.float32)))
    with pytest.raises(gpuscan.UsageError, match="one condition"):
        gpuscan.select(x, lt=1, ge=0)
    with pytest.raises(gpuscan.UsageError, match="not an integer"):
        gpuscan.partition(x, lt=1.5)
    with pytest.raises(gpuscan.UsageError, match="x is int8"):
        gpuscan.unique_consecutive(fw.to_device(np.zeros(3, np.int8)))
