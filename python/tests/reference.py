"""NumPy references for the scans, and the checks the tests share (DESIGN.md section 6)."""
import numpy as np

UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
FLOAT_UFUNCS = dict(UFUNCS, min=np.fmin, max=np.fmax)
DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]
OPS = ["add", "mul", "min", "max", "and", "or", "xor"]


def ops_of(dtype):
    return OPS[:4] if np.dtype(dtype).kind == "f" else OPS


def random_input(rng, dtype, n, op="add"):
    """Values that exercise the operator: full-range integers (sums wrap), floats of mixed
    sign, near-1 floats and small integers for products (so they neither vanish nor wrap
    to zero at once)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        if op == "mul":
            return rng.uniform(0.999, 1.001, n).astype(dtype)
        return rng.uniform(-100, 100, n).astype(dtype)
    if op == "mul":
        return rng.choice(np.array([1, 3, 5, 7, 1, 1], dtype=dtype), n)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def random_init(rng, dtype, op):
    value = random_input(rng, dtype, 1, op)[0]
    return value.item()


def identity(dtype, op):
    """The library's identities (DESIGN section 3): IEEE's for floats, -0.0 for add (so
    that -0.0 sums stay -0.0) and NaN for min and max (fmin and fmax ignore it)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and op == "add":
        return dtype.type(-0.0)
    if dtype.kind == "f" and op in ("min", "max"):
        return dtype.type(np.nan)
    if op == "add" or op == "or" or op == "xor":
        return dtype.type(0)
    if op == "mul":
        return dtype.type(1)
    if op == "and":
        return dtype.type(~np.uint64(0).astype(dtype) if dtype.kind == "u" else -1)
    info = np.iinfo(dtype)
    return dtype.type(info.max if op == "min" else info.min)


def expected(x, op, kind, init=None):
    """The scan of flat x in x's dtype (integers wrap); floats accumulate in float64."""
    x = np.ascontiguousarray(x).reshape(-1)
    dtype = x.dtype
    start = identity(dtype, op) if init is None else dtype.type(init)
    ufunc = (FLOAT_UFUNCS if dtype.kind == "f" else UFUNCS)[op]
    work = x.astype(np.float64) if dtype.kind == "f" else x
    with np.errstate(over="ignore"):
        seq = np.concatenate([np.array([start], dtype=work.dtype), work])
        running = ufunc.accumulate(seq, dtype=seq.dtype)
    if kind == "inclusive":
        return running[1:]
    if kind == "exclusive":
        return running[:-1]
    return running[-1:]


def check(got, x, op, kind, init=None, where=""):
    """got (a NumPy array) equals expected() exactly (integers) or within DESIGN's float
    tolerance: |got - ref| <= 1e-5 * (running sum of |x|) + tiny."""
    want = expected(x, op, kind, init)
    got = np.asarray(got).reshape(-1)
    assert got.shape == want.shape, f"{where}: shape {got.shape}, want {want.shape}"
    if got.dtype.kind != "f":
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, f"{where}: {bad.size} wrong, first at {bad[0]}: {got[bad[0]]} != {want[bad[0]]}"
        return
    if op == "add":
        flat = np.ascontiguousarray(x).reshape(-1).astype(np.float64)
        start = 0.0 if init is None else abs(float(init))
        running = start + np.concatenate([[0.0], np.cumsum(np.abs(flat))])
        bound = {"inclusive": running[1:], "exclusive": running[:-1], "reduce": running[-1:]}[kind]
    elif op == "mul":
        # Products of near-1 factors: a relative error. Any association of k factors rounds
        # k - 1 times, by at most half an ulp each, so k half-ulps bound the error of whatever
        # tree a scan multiplies in (numpy's sequential order is only one of them); 1e-5
        # where that is tighter. (The C++ suites' rule, within_tolerance in
        # src/core/reference.hpp, allows 4 eps a factor.) A 1e-5 bound alone failed a
        # lavapipe run of 4100 float32 factors (1.0e-5 off at one session seed; numpy's
        # sequential float32 product stays within 6.5e-6 over 400 seeds, and a scan's tree
        # is not that order).
        n = np.asarray(x).size
        # Factors up to each output: its position + 1 (a reduction: all n), and the init.
        factors = np.array([n + 1.0]) if kind == "reduce" else np.arange(want.size) + 2.0
        half_ulps = factors * np.finfo(got.dtype).eps / 2
        bound = np.maximum(np.abs(want), 1.0) * np.maximum(1.0, half_ulps / 1e-5)
    else:
        bound = np.zeros_like(want)  # min and max pick an operand: exact
    got64 = got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = (got64 == want) | (np.abs(got64 - want) <= 1e-5 * bound + 1e-30)
    bad = np.flatnonzero(~close & ~(np.isnan(got64) & np.isnan(want)))
    assert bad.size == 0, f"{where}: {bad.size} off, first at {bad[0]}: {got[bad[0]]} vs {want[bad[0]]}"


def random_offsets(rng, n, segments, empty_share=0.2):
    """CSR offsets of `segments` segments covering n elements (0 first, n last), about
    `empty_share` of them empty, the others of random lengths."""
    if segments == 0:
        return np.zeros(1, dtype=np.int64)
    cuts = np.sort(rng.integers(0, n, segments - 1, endpoint=True))
    # A cut moved back onto the one before it (onto 0 for the first) leaves an empty segment.
    cuts = np.maximum.accumulate(np.where(rng.random(segments - 1) < empty_share, 0, cuts))
    return np.concatenate([[0], cuts, [n]]).astype(np.int64)


def check_segments(got, x, offsets, op, kind, init=None, where=""):
    """Each segment of flat x scanned (reduce: reduced) on its own from init, as check()
    checks one scan: got holds x.size values (reduce: one per segment)."""
    got = np.asarray(got).reshape(-1)
    x = np.ascontiguousarray(x).reshape(-1)
    offsets = np.asarray(offsets, dtype=np.int64)
    segments = offsets.size - 1
    want_n = segments if kind == "reduce" else x.size
    assert got.shape == (want_n,), f"{where}: shape {got.shape}, want ({want_n},)"
    for s in range(segments):
        begin, end = int(offsets[s]), int(offsets[s + 1])
        part = got[s:s + 1] if kind == "reduce" else got[begin:end]
        if part.size:
            check(part, x[begin:end], op, kind, init, f"{where} segment {s} [{begin}, {end})")
