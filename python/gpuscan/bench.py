"""``python -m gpuscan.bench``: gpuscan.cumsum against torch.cumsum and cupy.cumsum on a CUDA GPU.

Every implementation scans the same input arrays (cupy sees torch's memory through DLPack),
on the current stream, timed with CUDA events around each run, the L2 cache flushed before
each run (a write over 256 MiB; ``--hot`` skips it), the GPU then held busy for about 0.2 ms
(``torch.cuda._sleep``) so that the host's enqueue of the call falls before the start event
is reached and the events time the GPU's work alone (a call that takes the host longer than
the queued work would otherwise add its host time: ``gpuscan.cumsum(x, axis=-1)`` takes
45-75 us of host time, and on 64 x 128256 ran 0.44-0.89 of a copy without the hold, 0.89-0.90
with it), the output poisoned before and checked
after each timed run on the device (integers: ``out[i] == out[i-1] + x[i]`` with wrapping;
floats: within 1e-5 of the magnitudes). Two measures per dtype (DESIGN.md section 8):

- ``same dtype`` (the target's measure): ``cumsum(x, dtype=x.dtype, out=out)`` for all three;
  ``memcpy`` (a device-to-device copy of x) is the ``vs_memcpy`` baseline;
- ``numpy rules`` (``--numpy-rules``): plain ``cumsum(x)``, which widens int32 to int64 in
  all three frameworks (the algorithm column gets ``[numpy rules]``).

``--shapes BxN,...`` (or ``table``, DESIGN section 8's seven batched shapes) times the scan
of each row of a B x N array instead (``cumsum(x, axis=-1)``, torch's ``dim=-1``); the CSV's
``n`` column then holds the shape.

``--overhead N`` measures the host time of one call on a 2^16-element tensor (median of N
calls, nothing synchronised between them). Rows go to stdout and ``--csv`` in the DESIGN
section 7 schema; ``algorithm`` names the implementation (``-host`` rows: median_ms is host
time per call).
"""
import argparse
import datetime
import os
import statistics
import sys
import time

import numpy as np

import gpuscan

HEADER = ("date,commit,device,backend,algorithm,dtype,op,kind,n,runs,median_ms,gelems_per_s,"
          "vs_memcpy,validated,blocking_mask,spins,lookback_steps,fallbacks,insertions")
SHORT = {"int32": "i32", "float32": "f32", "uint32": "u32", "int64": "i64", "uint64": "u64",
         "float64": "f64"}
L2_FLUSH_BYTES = 256 << 20


TABLE_SHAPES = "1x268435456,64x128256,256x128256,1024x32000,8x16777216,65536x1024,1048576x64"


def parse_shapes(text):
    """"BxN,..." (or "table") -> [(B, N), ...], B and N whole numbers from 1."""
    items = (TABLE_SHAPES if text == "table" else text).split(",")
    try:
        shapes = [tuple(int(v) for v in item.split("x")) for item in items]
        if all(len(shape) == 2 and min(shape) >= 1 for shape in shapes):
            return shapes
    except ValueError:
        pass
    raise ValueError(f"--shapes '{text}' is neither 'table' nor BxN,... (rows x row length, "
                     "whole numbers from 1)")


def parse_sizes(text):
    """"LOW:HIGH" -> 2^LOW..2^HIGH, "N1,N2,..." -> those sizes, as ``gpuscan bench --sizes``."""
    try:
        if ":" in text:
            low, high = (int(v) for v in text.split(":"))
            if 0 <= low <= high <= 40:
                return [1 << k for k in range(low, high + 1)]
        else:
            sizes = [int(v) for v in text.split(",")]
            if all(1 <= n <= 1 << 40 for n in sizes):
                return sizes
    except ValueError:
        pass
    raise ValueError(f"--sizes '{text}' is neither LOW:HIGH (powers of two, LOW <= HIGH <= 40) "
                     "nor N1,N2,... (whole numbers from 1)")


def sizes_note(text):
    """What to say about --sizes given as one whole number up to 40 (N elements, which reads
    like the exponent of LOW:HIGH); None otherwise."""
    if text.isdigit() and len(text) <= 2 and int(text) <= 40:
        return f"--sizes {text} times n = {text} elements; for 2^{text} write --sizes {text}:{text}"
    return None


class Torch:
    def __init__(self):
        import torch
        self.torch = torch
        self.flush_buffer = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")

    def device_name(self):
        return self.torch.cuda.get_device_name()

    def random(self, shape, dtype, seed):
        t = self.torch
        g = t.Generator(device="cuda").manual_seed(seed)
        if dtype == "float32":
            return t.rand(shape, device="cuda", generator=g)  # non-negative: sums stay well-conditioned
        return t.randint(-1000, 1001, shape, device="cuda", dtype=getattr(t, dtype), generator=g)

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=getattr(self.torch, dtype), device="cuda")

    def poison(self, a):
        a.view(self.torch.uint8).fill_(0xA5)

    def flush(self):
        self.flush_buffer.fill_(1)

    def hold(self):
        # Queues about 0.2 ms of GPU work (400000 cycles at up to 2 GHz), more than any
        # implementation's host time per call, so that the start event waits behind it.
        self.torch.cuda._sleep(400000)

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    @staticmethod
    def elapsed_ms(start, end):
        return start.elapsed_time(end)

    def synchronize(self):
        self.torch.cuda.synchronize()


def valid(x, out):
    """On the device: torch tensor `out` is the inclusive sum of each row of x's last axis,
    element by element."""
    if out.shape != x.shape:
        return False
    x = x.to(out.dtype)
    if not bool((out[..., 0] == x[..., 0]).all()):
        return False
    step = out[..., 1:] - out[..., :-1]  # wraps for integers, like the scan
    if out.dtype.is_floating_point:
        return bool((abs(step - x[..., 1:]) <= 1e-5 * (abs(out[..., :-1]) + abs(x[..., 1:])) + 1e-6).all())
    return bool((step == x[..., 1:]).all())


def implementations(torch_mod, cupy_mod, numpy_rules, dtype):
    """(name, call(x_torch, x_cupy, out_torch, out_cupy) -> result) of every framework
    present; out_* are None for the numpy-rules runs."""
    found = []
    if numpy_rules:
        found.append(("gpuscan.cumsum", lambda x, xc, o, oc: gpuscan.cumsum(x, axis=-1)))
        if torch_mod:
            found.append(("torch.cumsum", lambda x, xc, o, oc: torch_mod.cumsum(x, -1)))
        if cupy_mod:
            found.append(("cupy.cumsum", lambda x, xc, o, oc: cupy_mod.cumsum(xc, axis=-1)))
        return [(f"{name} [numpy rules]", call) for name, call in found]
    found.append(("memcpy", lambda x, xc, o, oc: o.copy_(x)))
    found.append(("gpuscan.cumsum",
                  lambda x, xc, o, oc: gpuscan.cumsum(x, dtype=dtype, out=o, axis=-1)))
    if torch_mod:
        found.append(("torch.cumsum",
                      lambda x, xc, o, oc: torch_mod.cumsum(x, -1, dtype=x.dtype, out=o)))
    if cupy_mod:
        found.append(("cupy.cumsum",
                      lambda x, xc, o, oc: cupy_mod.cumsum(xc, axis=-1, dtype=xc.dtype, out=oc)))
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gpuscan.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="26:30", help="LOW:HIGH powers of two, or N1,N2,... (26:30)")
    parser.add_argument("--shapes", help="BxN,... (rows x row length) or 'table': batched "
                        "scans of each row instead of --sizes")
    parser.add_argument("--dtypes", default="int32,float32")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--hot", action="store_true", help="no L2 flush between runs")
    parser.add_argument("--numpy-rules", action="store_true", help="also time plain cumsum(x) (int32 widens)")
    parser.add_argument("--overhead", type=int, default=0, metavar="N",
                        help="also the host time of one call at 2^16, median of N calls")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--commit", default=os.environ.get("GPUSCAN_COMMIT", ""))
    parser.add_argument("--csv")
    args = parser.parse_args(argv)
    try:
        shapes = parse_shapes(args.shapes) if args.shapes else [(n,) for n in parse_sizes(args.sizes)]
    except ValueError as e:
        parser.error(str(e))
    for name, least in (("runs", 1), ("warmup", 0), ("overhead", 0)):
        if getattr(args, name) < least:
            parser.error(f"--{name} must be at least {least}")
    note = None if args.shapes else sizes_note(args.sizes)
    if note:
        print(f"gpuscan.bench: note: {note}", file=sys.stderr)

    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    try:
        import cupy
    except ImportError:
        cupy = None
    if torch is None:
        print("gpuscan.bench: needs torch with a CUDA GPU (it makes the arrays; cupy is timed "
              "on the same memory)", file=sys.stderr)
        return 2
    fw = Torch()
    device = fw.device_name()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = []

    def emit(algorithm, dtype, shape, runs, median_ms, vs_memcpy, validated):
        n = int(np.prod(shape))
        label = str(n) if len(shape) == 1 else "x".join(str(v) for v in shape)
        gelems = n / (median_ms * 1e6) if median_ms > 0 else 0.0
        ratio = f"{vs_memcpy:.4f}" if vs_memcpy is not None else ""
        row = (f"{date},{args.commit},{device},cuda,{algorithm},{SHORT[dtype]},add,inclusive,{label},{runs},"
               f"{median_ms:.6f},{gelems:.4f},{ratio},{validated},,,,,")
        rows.append(row)
        print(row, flush=True)

    print(HEADER, flush=True)
    for dtype in args.dtypes.split(","):
        for shape in shapes:
            n = int(np.prod(shape))
            x = fw.random(shape, dtype, args.seed + n)
            xc = cupy.from_dlpack(x) if cupy else None
            out = fw.empty(shape, dtype)
            outc = cupy.from_dlpack(out) if cupy else None
            sets = [implementations(torch, cupy, False, np.dtype(dtype))]
            if args.numpy_rules and dtype != "float32":
                sets.append(implementations(torch, cupy, True, np.dtype(dtype)))
            memcpy_ms = None
            for impls in sets:
                # Round robin: run k of every implementation before run k + 1 of any, so that
                # clock and thermal drift fall on all of them alike.
                times = {name: [] for name, _ in impls}
                validated = dict.fromkeys(times, 0)
                for run in range(-args.warmup, args.runs):
                    for name, call in impls:
                        fw.poison(out)
                        if not args.hot:
                            fw.flush()
                        fw.hold()
                        start, end = fw.event(), fw.event()
                        start.record()
                        result = call(x, xc, out, outc)
                        end.record()
                        end.synchronize()
                        if run < 0:
                            continue  # warm-up: first-call setup, workspaces, clocks
                        times[name].append(fw.elapsed_ms(start, end))
                        if not torch.is_tensor(result):
                            result = torch.from_dlpack(result)  # cupy's, zero-copy
                        if name == "memcpy":
                            validated[name] += bool((result == x).all())
                        else:
                            validated[name] += valid(x, result)
                        del result
                medians = {name: statistics.median(t) for name, t in times.items()}
                if "memcpy" in medians:
                    memcpy_ms = medians["memcpy"]
                for name, median in medians.items():
                    emit(name, dtype, shape, args.runs, median,
                         memcpy_ms / median if memcpy_ms else None, validated[name])
            del x, xc, out, outc
            torch.cuda.empty_cache()
            if cupy:
                cupy.get_default_memory_pool().free_all_blocks()

    if args.overhead:
        n = 1 << 16
        for dtype in args.dtypes.split(","):
            x = fw.random((n,), dtype, args.seed)
            out = fw.empty((n,), dtype)
            xc = cupy.from_dlpack(x) if cupy else None
            np_dtype = np.dtype(dtype)
            calls = [("gpuscan.cumsum-host", lambda: gpuscan.cumsum(x, dtype=np_dtype)),
                     ("gpuscan.inclusive_scan-host", lambda: gpuscan.inclusive_scan(x)),
                     ("torch.cumsum-host", lambda: torch.cumsum(x, 0, dtype=x.dtype)),
                     ("gpuscan.cumsum-host [out=]", lambda: gpuscan.cumsum(x, dtype=np_dtype, out=out)),
                     ("torch.cumsum-host [out=]", lambda: torch.cumsum(x, 0, dtype=x.dtype, out=out))]
            if dtype != "float32":
                calls.append(("gpuscan.cumsum-host [numpy rules]", lambda: gpuscan.cumsum(x)))
                calls.append(("torch.cumsum-host [numpy rules]", lambda: torch.cumsum(x, 0)))
            if cupy:
                calls.append(("gpuscan.cumsum-host [cupy]", lambda: gpuscan.cumsum(xc, dtype=np_dtype)))
                calls.append(("cupy.cumsum-host", lambda: cupy.cumsum(xc, dtype=xc.dtype)))
            for name, call in calls:
                for _ in range(20):
                    call()
                fw.synchronize()
                samples = []
                for _ in range(args.overhead):
                    t0 = time.perf_counter_ns()
                    call()
                    samples.append(time.perf_counter_ns() - t0)
                fw.synchronize()
                emit(name, dtype, (n,), args.overhead, statistics.median(samples) / 1e6, None,
                     args.overhead)

    if args.csv:
        with open(args.csv, "w") as f:
            f.write(HEADER + "\n" + "\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
