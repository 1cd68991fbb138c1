"""gpuscan on CUDA arrays (torch, cupy, and bare __cuda_array_interface__ / __dlpack__
producers): in place on the producer's device and current stream, results in the same
framework, out= (in place, unaligned, overlapping), views with offsets, non-contiguous
inputs, requires_grad, numpy's cumsum dtype rules, and the refusals. Each framework's tests
skip, saying why, where it or a CUDA GPU is missing (CI)."""
import numpy as np
import pytest

import gpuscan
from reference import (check, check_segments, ops_of, random_init, random_input,
                       random_offsets)

from frameworks import CUPY, CUPY_WHY, TORCH, TORCH_WHY, cupy, needs_cupy, needs_torch, torch

KINDS = ["inclusive", "exclusive", "reduce"]
DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]
TORCH_DTYPES = [np.int32, np.float32, np.int64, np.float64]  # torch's CUDA uint32/64 are partial


def run(kind, x, op="add", init=None, out=None):
    if kind == "reduce":
        return gpuscan.reduce(x, op=op, init=init)
    call = gpuscan.inclusive_scan if kind == "inclusive" else gpuscan.exclusive_scan
    return call(x, op=op, init=init, out=out)


class Frameworks:
    """The per-framework operations the tests need."""

    @staticmethod
    def of(name):
        return TorchOps() if name == "torch" else CupyOps()


class TorchOps:
    name = "torch"

    def to_device(self, a):
        return torch.from_numpy(np.ascontiguousarray(a)).cuda()

    def to_host(self, t):
        torch.cuda.synchronize()
        return t.detach().cpu().numpy()

    def poisoned(self, n, dtype):
        t = torch.empty(n, dtype=getattr(torch, np.dtype(dtype).name), device="cuda")
        t.view(torch.uint8).fill_(0xA5)
        return t

    def is_array(self, a):
        return torch.is_tensor(a) and a.is_cuda


class CupyOps:
    name = "cupy"

    def to_device(self, a):
        return cupy.asarray(a)

    def to_host(self, a):
        cupy.cuda.runtime.deviceSynchronize()
        return cupy.asnumpy(a)

    def poisoned(self, n, dtype):
        a = cupy.empty(n, dtype=dtype)
        a.view(cupy.uint8).fill(0xA5)
        return a

    def is_array(self, a):
        return isinstance(a, cupy.ndarray)


FRAMEWORKS = [pytest.param("torch", marks=needs_torch), pytest.param("cupy", marks=needs_cupy)]


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("kind", KINDS)
def test_every_dtype_and_operator(rng, framework, kind):
    fw = Frameworks.of(framework)
    for dtype in TORCH_DTYPES if framework == "torch" else DTYPES:
        for op in ops_of(dtype):
            # float32 products of many factors err more than the per-element relative check
            # allows in any tree order (test_float32_products_err_as_a_tree_order_does), so
            # theirs stops at 4099 elements.
            for n in (1, 7, 4099) + (() if (dtype, op) == (np.float32, "mul") else ((1 << 20) + 3,)):
                x = random_input(rng, dtype, n, op)
                init = random_init(rng, dtype, op) if n % 2 else None
                out = fw.poisoned(n, dtype) if kind != "reduce" and n != 7 else None
                got = run(kind, fw.to_device(x), op, init, out)
                assert fw.is_array(got), type(got)
                if out is not None:
                    assert got is out
                if kind == "reduce":
                    assert tuple(got.shape) == ()
                check(fw.to_host(got), x, op, kind, init,
                      where=f"{framework} {np.dtype(dtype).name} {op} {kind} n={n} init={init}")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_sizes_views_and_layouts(rng, framework):
    fw = Frameworks.of(framework)
    for n in (0, 1, 2, 3, 4, 5, 4095, 4096, 4097, 65537, (1 << 22) + 1):
        x = random_input(rng, np.uint32, n)
        got = gpuscan.inclusive_scan(fw.to_device(x))
        assert tuple(got.shape) == (n,)
        check(fw.to_host(got), x, "add", "inclusive", where=f"n={n}")
    base_host = random_input(rng, np.int64, 3 * 1000 * 7).reshape(3, 1000, 7)
    base = fw.to_device(base_host)
    views = {
        "offset by one element (unaligned)": (base.reshape(-1)[1:], base_host.reshape(-1)[1:]),
        "offset by three": (base.reshape(-1)[3:-2], base_host.reshape(-1)[3:-2]),
        "strided": (base[:, ::3, 1], base_host[:, ::3, 1]),
        "transposed": (base.transpose(0, 2) if framework == "torch" else base.transpose(2, 1, 0),
                       base_host.transpose(2, 1, 0)),
    }
    for what, (view, host_view) in views.items():
        got = gpuscan.exclusive_scan(view, init=5)
        check(fw.to_host(got), host_view, "add", "exclusive", 5, where=what)
        np.testing.assert_array_equal(fw.to_host(gpuscan.cumsum(view)), np.cumsum(host_view))
    np.testing.assert_array_equal(fw.to_host(base), base_host)  # the input is untouched


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_out_in_place_unaligned_and_overlapping(rng, framework):
    fw = Frameworks.of(framework)
    n = 100003
    x_host = random_input(rng, np.int32, n)
    x = fw.to_device(x_host)
    gpuscan.inclusive_scan(x)  # the next calls with int32 sums may take the fast path
    out = fw.poisoned(n, np.int32)
    assert gpuscan.inclusive_scan(x, out=out) is out  # a fitting out
    check(fw.to_host(out), x_host, "add", "inclusive", where="out")
    assert gpuscan.inclusive_scan(x, out=x) is x  # in place
    check(fw.to_host(x), x_host, "add", "inclusive", where="out=x")
    buffer = fw.poisoned(n + 1, np.int32)
    x = fw.to_device(x_host)
    out = buffer[1:]  # 4 bytes past a 16-byte boundary
    assert gpuscan.inclusive_scan(x, out=out) is out
    check(fw.to_host(out), x_host, "add", "inclusive", where="unaligned out")
    both = fw.to_device(np.concatenate([x_host, x_host[:1]]))
    gpuscan.exclusive_scan(both[1:], out=both[:-1])  # overlapping
    check(fw.to_host(both)[:-1], np.concatenate([x_host[1:], x_host[:1]]), "add", "exclusive", where="overlap")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_cumsum_dtype_rules(rng, framework):
    fw = Frameworks.of(framework)
    dtypes = [bool, np.int8, np.int16, np.int32, np.float32, np.float64]
    if framework == "cupy":
        dtypes += [np.uint8, np.uint16, np.uint32, np.uint64]  # torch's CUDA uint64 is partial
    for dtype in dtypes:
        host = rng.integers(0, 2 if dtype is bool else 100, 5001).astype(dtype)
        got = gpuscan.cumsum(fw.to_device(host))
        want = np.cumsum(host)
        got_host = fw.to_host(got)
        assert got_host.dtype == want.dtype, np.dtype(dtype).name
        np.testing.assert_allclose(got_host, want, rtol=1e-6)
    x = fw.to_device(np.arange(10, dtype=np.int32))
    assert fw.to_host(gpuscan.cumsum(x, dtype=np.int32)).dtype == np.int32
    with pytest.raises(gpuscan.UsageError, match="int16"):
        gpuscan.cumsum(x, dtype=np.int16)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_refusals(framework):
    fw = Frameworks.of(framework)
    x = fw.to_device(np.arange(16, dtype=np.int32))
    gpuscan.inclusive_scan(x)  # the next calls with int32 sums may take the fast path
    with pytest.raises(gpuscan.UsageError, match="uint32, int32, float32"):
        gpuscan.inclusive_scan(fw.to_device(np.zeros(4, np.float16)))
    with pytest.raises(gpuscan.UsageError, match="out is int64"):
        gpuscan.inclusive_scan(x, out=fw.poisoned(16, np.int64))
    with pytest.raises(gpuscan.UsageError, match="shape"):
        gpuscan.inclusive_scan(x, out=fw.poisoned(15, np.int32))
    with pytest.raises(gpuscan.UsageError, match="contiguous"):
        gpuscan.inclusive_scan(x, out=fw.poisoned(32, np.int32)[::2])
    with pytest.raises(gpuscan.UsageError, match="out must be"):
        gpuscan.inclusive_scan(x, out=np.empty(16, np.int32))
    with pytest.raises(gpuscan.UsageError, match="axis"):
        gpuscan.inclusive_scan(x, axis=1)


@needs_torch
def test_torch_requires_grad_streams_and_device():
    x = torch.rand(300001, device="cuda", requires_grad=True)
    got = gpuscan.cumsum(x)
    assert got.device == x.device and not got.requires_grad
    check(got.cpu().numpy(), x.detach().cpu().numpy(), "add", "inclusive")
    stream = torch.cuda.Stream()
    host = np.arange(1 << 22, dtype=np.int64) % 1000
    with torch.cuda.stream(stream):
        # Made and scanned on a side stream, nothing synchronised between: the scan must
        # follow the producer's work on that stream.
        y = torch.from_numpy(host).to("cuda", non_blocking=True) * 3
        z = gpuscan.inclusive_scan(y)
        w = gpuscan.reduce(y)
    stream.synchronize()
    check(z.cpu().numpy(), host * 3, "add", "inclusive", where="side stream")
    assert w.item() == int((host * 3).sum())
    for ordinal in range(torch.cuda.device_count()):
        t = torch.arange(1000, device=f"cuda:{ordinal}", dtype=torch.float64)
        assert gpuscan.cumsum(t).device == t.device


@needs_torch
def test_torch_cpu_tensors_are_scanned_on_the_host_device():
    t = torch.arange(10, dtype=torch.int32)
    got = gpuscan.cumsum(t)
    assert torch.is_tensor(got) and not got.is_cuda and got.dtype == torch.int64
    assert got.tolist() == np.cumsum(np.arange(10)).tolist()


@needs_cupy
def test_cupy_on_a_non_default_stream(rng):
    host = random_input(rng, np.float32, 1 << 21)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(host) * 2
        y = gpuscan.inclusive_scan(x)
    stream.synchronize()
    check(cupy.asnumpy(y), host * 2, "add", "inclusive", where="cupy side stream")


class CaiOnly:
    """A producer known to gpuscan only by __cuda_array_interface__."""

    def __init__(self, a, stream=None):
        self.__cuda_array_interface__ = dict(a.__cuda_array_interface__, version=3, stream=stream)
        self.keep = a


class DlpackOnly:
    """A producer known to gpuscan only by __dlpack__."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@needs_cupy
@pytest.mark.parametrize("protocol", [CaiOnly, DlpackOnly])
def test_protocol_producers(rng, protocol):
    host = random_input(rng, np.int64, 77777)
    x, out = cupy.asarray(host), cupy.empty(77777, np.int64)
    out.fill(-1)
    assert gpuscan.inclusive_scan(protocol(x), out=protocol(out)) is not None
    check(cupy.asnumpy(out), host, "add", "inclusive", where=protocol.__name__)
    with pytest.raises(gpuscan.UsageError, match="out="):
        gpuscan.inclusive_scan(protocol(x))
    with pytest.raises(gpuscan.UsageError, match="not contiguous"):
        gpuscan.inclusive_scan(protocol(x[::2]), out=protocol(out[:38889]))
    with pytest.raises(gpuscan.UsageError, match="convert x"):
        gpuscan.cumsum(protocol(x.astype(np.int32)), out=protocol(out))


@needs_cupy
def test_cuda_array_interface_stream_is_used():
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.arange(1 << 20, dtype=cupy.float64)
        out = cupy.empty_like(x)
    gpuscan.inclusive_scan(CaiOnly(x, stream=stream.ptr), out=CaiOnly(out))
    stream.synchronize()
    check(cupy.asnumpy(out), np.arange(1 << 20, dtype=np.float64), "add", "inclusive")


def tree_product(x):
    """The float32 product of x in a balanced tree, the association order a parallel scan
    uses (pairs, then pairs of pairs)."""
    y = x.astype(np.float32)
    while len(y) > 1:
        if len(y) % 2:
            y = np.append(y, np.float32(1))
        y = (y[0::2] * y[1::2]).astype(np.float32)
    return float(y[0])


@needs_torch
def test_float32_products_err_as_a_tree_order_does(rng):
    # Many float32 factors near 1 multiplied in a tree come out low: numpy's pairwise tree of
    # 2^20 factors in [0.999, 1.001] is off by about -9e-4, where the sequential order errs
    # about 1e-5 (docs/performance.md). A scan associates in a tree, so gpuscan must err no
    # more than that tree (and a gross error, a lost or doubled factor, is 1e-3 on its own).
    x = random_input(rng, np.float32, 1 << 20, "mul")
    got = gpuscan.reduce(torch.from_numpy(x).cuda(), op="mul").item()
    want = float(np.prod(x.astype(np.float64)))
    tree = tree_product(x)
    assert abs(got / want - 1) <= 2 * abs(tree / want - 1) + 1e-5, (got, want, tree)


@pytest.mark.parametrize("name", ["torch", "cupy"])
@pytest.mark.parametrize("kind", KINDS)
def test_axis_minus_one_scans_each_row(name, kind):
    """axis=-1 on CUDA arrays: the rows of the table's shape classes, the result in x's
    shape (a reduction: x.shape[:-1]) and framework, with out= too."""
    if name == "torch" and not TORCH:
        pytest.skip(f"needs torch with a CUDA GPU: {TORCH_WHY}")
    if name == "cupy" and not CUPY:
        pytest.skip(f"needs cupy with a CUDA GPU: {CUPY_WHY}")
    fw = Frameworks.of(name)
    rng = np.random.default_rng(2811)
    for dtype in (np.int32, np.float32, np.int64):
        for shape in [(3, 5), (1, 70001), (701, 1), (64, 12825), (1000, 64), (2, 3, 4), (4, 0)]:
            x = random_input(rng, dtype, int(np.prod(shape))).reshape(shape)
            init = random_init(rng, dtype, "add") if shape[0] % 2 else None
            if kind == "reduce":
                got = gpuscan.reduce(fw.to_device(x), init=init, axis=-1)
            else:
                out = fw.poisoned(x.size, dtype).reshape(shape)
                call = gpuscan.inclusive_scan if kind == "inclusive" else gpuscan.exclusive_scan
                got = call(fw.to_device(x), init=init, out=out, axis=-1)
                assert got is out
            host = fw.to_host(got)
            want_shape = shape[:-1] if kind == "reduce" else shape
            assert host.shape == want_shape
            rows = x.reshape(int(np.prod(shape[:-1])), shape[-1])
            for r in range(rows.shape[0]):
                check(host.reshape(rows.shape[0], -1)[r], rows[r], "add", kind, init,
                      f"{name} {np.dtype(dtype).name} {shape} row {r}")
    if name == "torch":
        logits = torch.rand(256, 128256, device="cuda")
        got = gpuscan.cumsum(logits, axis=-1)
        torch.testing.assert_close(got, torch.cumsum(logits, dim=-1), rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_axis_minus_one_fast_path_and_what_it_leaves(rng, framework):
    """Once a call has planned a dtype and operator, axis=-1 calls take the fast path (no
    init, contiguous, an out that fits); what it leaves (reductions, vectors, views, in
    place, a wrong out) goes the general way, with the same results or errors."""
    fw = Frameworks.of(framework)
    shape = (6, 10007)
    x_host = random_input(rng, np.int32, int(np.prod(shape))).reshape(shape)
    x = fw.to_device(x_host)

    def check_rows(got, host, kind, where):
        got = fw.to_host(got)
        assert got.shape == host.shape, where
        for r in range(host.shape[0]):
            check(got[r], host[r], "add", kind, where=f"{where} row {r}")

    check_rows(gpuscan.cumsum(x, dtype=np.int32, axis=-1), x_host, "inclusive", "planning call")
    check_rows(gpuscan.cumsum(x, dtype=np.int32, axis=-1), x_host, "inclusive", "fast path")
    check_rows(gpuscan.exclusive_scan(x, axis=-1), x_host, "exclusive", "fast exclusive")
    check_rows(gpuscan.inclusive_scan(x[:, ::2], axis=-1), x_host[:, ::2], "inclusive", "a view")
    sums = fw.to_host(gpuscan.reduce(x, axis=-1))
    np.testing.assert_array_equal(sums, x_host.sum(axis=-1, dtype=np.int32))
    check(fw.to_host(gpuscan.inclusive_scan(x.reshape(-1), axis=-1)), x_host.reshape(-1), "add",
          "inclusive", where="a vector")
    out = fw.poisoned(x_host.size, np.int32).reshape(shape)
    assert gpuscan.inclusive_scan(x, out=out, axis=-1) is out
    check_rows(out, x_host, "inclusive", "out")
    y = fw.to_device(x_host)
    assert gpuscan.inclusive_scan(y, out=y, axis=-1) is y  # in place
    check_rows(y, x_host, "inclusive", "in place")
    with pytest.raises(gpuscan.UsageError, match="shape"):
        gpuscan.inclusive_scan(x, out=fw.poisoned(x_host.size, np.int32), axis=-1)


# ---- segments= (CSR offsets, DESIGN.md section 3f) -----------------------------------------

def segment_cases(rng):
    """(what, n, offsets): every layout class, at sizes beyond one tile and one chunk."""
    yield "random, some empty", 1000003, random_offsets(rng, 1000003, 3001, 0.25)
    yield "long segments", (1 << 22) + 5, random_offsets(rng, (1 << 22) + 5, 3, 0.0)
    yield "one segment", 70001, np.array([0, 70001])
    yield "every element its own", 4097, np.arange(4098)
    yield "empty first, inside and last", 9001, np.array([0, 0, 0, 5000, 5000, 9001, 9001, 9001])
    yield "no elements, three empty segments", 0, np.zeros(4, np.int64)
    yield "no elements, no segments", 0, np.zeros(1, np.int64)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("kind", KINDS)
def test_segments_scan_each_segment_on_its_own(rng, framework, kind):
    """Offsets from the host (copied to x's device) and on the device (int64, and int32
    converted there), into fresh and poisoned outputs, with and without init."""
    fw = Frameworks.of(framework)
    places = ("host", "device int64", "device int32")
    for d, (dtype, op) in enumerate(((np.int32, "add"), (np.float32, "add"), (np.int64, "max"),
                                     (np.float64, "add"))):
        for c, (what, n, offsets) in enumerate(segment_cases(rng)):
            x = random_input(rng, dtype, n, op)
            init = random_init(rng, dtype, op) if len(offsets) % 2 else None
            for place in (places[(d + c) % 3],):  # each case meets every place over the dtypes
                given = offsets if place == "host" else fw.to_device(
                    offsets.astype(np.int32 if place.endswith("int32") else np.int64))
                where = f"{framework} {np.dtype(dtype).name} {op} {kind} {what} init={init} offsets on {place}"
                if kind == "reduce":
                    got = gpuscan.reduce(fw.to_device(x), op=op, init=init, segments=given)
                    assert fw.is_array(got) and tuple(got.shape) == (len(offsets) - 1,), where
                else:
                    out = fw.poisoned(n, dtype)
                    call = gpuscan.inclusive_scan if kind == "inclusive" else gpuscan.exclusive_scan
                    got = call(fw.to_device(x), op=op, init=init, out=out, segments=given)
                    assert got is out, where
                check_segments(fw.to_host(got), x, offsets, op, kind, init, where)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_segments_unchecked_cumsum_and_in_place(rng, framework):
    fw = Frameworks.of(framework)
    n = 200003
    x_host = random_input(rng, np.int32, n)
    offsets = random_offsets(rng, n, 501)
    d_offsets = fw.to_device(offsets)
    got = gpuscan.inclusive_scan(fw.to_device(x_host), segments=d_offsets, check_segments=False)
    check_segments(fw.to_host(got), x_host, offsets, "add", "inclusive", where="unchecked")
    got = gpuscan.cumsum(fw.to_device(x_host), segments=d_offsets)  # int32 sums widen to int64
    assert fw.to_host(got).dtype == np.int64
    check_segments(fw.to_host(got), x_host.astype(np.int64), offsets, "add", "inclusive", where="cumsum")
    x = fw.to_device(x_host)
    assert gpuscan.exclusive_scan(x, out=x, init=3, segments=offsets) is x  # in place
    check_segments(fw.to_host(x), x_host, offsets, "add", "exclusive", 3, where="out=x")
    np.testing.assert_array_equal(fw.to_host(d_offsets), offsets)  # the offsets are untouched


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_bad_segments_are_usage_errors_and_write_nothing(framework):
    """Wrong offsets, on the host or on the device (checked there, so the CUDA context
    survives), are refused before anything is launched; out keeps its poison."""
    fw = Frameworks.of(framework)
    x = fw.to_device(np.arange(10, dtype=np.int32))
    good = np.array([0, 4, 10])
    cases = [
        ([1, 4, 10], "start at 1, not 0"),
        ([0, 6, 4, 10], "decrease at index 2 \\(6 then 4\\)"),
        ([0, 4, 9], "end at 9, but x has 10 elements"),
        ([0, 4, 11], "end at 11, but x has 10 elements"),
    ]
    for offsets, message in cases:
        for given in (np.array(offsets), fw.to_device(np.array(offsets)),
                      fw.to_device(np.array(offsets, dtype=np.int32))):
            out = fw.poisoned(10, np.int32)
            with pytest.raises(gpuscan.UsageError, match=message):
                gpuscan.inclusive_scan(x, out=out, segments=given)
            with pytest.raises(gpuscan.UsageError, match=message):
                gpuscan.reduce(x, segments=given)
            assert (fw.to_host(out).view(np.uint8) == 0xA5).all(), f"{offsets}: out was written"
    refusals = [
        (dict(segments=fw.to_device(np.array([0.0, 4.0, 10.0]))), "float64; CSR offsets must be integers"),
        (dict(segments=fw.to_device(good.reshape(1, 3))), "must be 1-D"),
        (dict(segments=np.zeros(0, np.int64)), "no offsets"),
        (dict(segments=good, axis=-1), "does not combine with axis"),
        (dict(segments=good, out=fw.poisoned(10, np.int64)), "out is int64"),
    ]
    for case, message in refusals:
        with pytest.raises(gpuscan.UsageError, match=message):
            gpuscan.inclusive_scan(x, **case)
    with pytest.raises(gpuscan.UsageError, match="1-D x"):
        gpuscan.inclusive_scan(fw.to_device(np.zeros((2, 5), np.int32)), segments=good)
    other = Frameworks.of("cupy" if framework == "torch" else "torch")
    if (CUPY if framework == "torch" else TORCH):
        with pytest.raises(gpuscan.UsageError, match=f"must be a {framework} array on x's device"):
            gpuscan.inclusive_scan(x, segments=other.to_device(good))
    with pytest.raises(gpuscan.UsageError, match="torch and cupy"):
        gpuscan.inclusive_scan(CaiOnly(x), out=CaiOnly(fw.poisoned(10, np.int32)), segments=good)
    # The context survived every refusal: a good request still works.
    np.testing.assert_array_equal(fw.to_host(gpuscan.reduce(x, segments=fw.to_device(good))), [6, 39])


@needs_torch
def test_segments_on_another_device_are_refused():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA GPUs")
    x = torch.arange(10, device="cuda:0", dtype=torch.int32)
    with pytest.raises(gpuscan.UsageError, match="device 1 and x on device 0"):
        gpuscan.cumsum(x, segments=torch.tensor([0, 10], device="cuda:1"))
    got = gpuscan.cumsum(torch.arange(10, device="cuda:1", dtype=torch.int32), segments=[0, 3, 10])
    assert got.device == torch.device("cuda:1") and got.tolist() == [0, 1, 3, 3, 7, 12, 18, 25, 33, 42]
