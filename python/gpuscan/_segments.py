"""Reading and checking the CSR offsets of a segmented scan (``segments=``, DESIGN.md 3f).

Segment s of a 1-D x of n elements is x[offsets[s]:offsets[s + 1]]: S + 1 integers, 0
first, n last, never decreasing (empty segments allowed). The library takes them as int64;
any integer dtype is accepted here, because offsets that pass the checks all lie in
[0, n] and so convert to int64 without loss (the checks run on the caller's dtype, before
the conversion).

Where the offsets are checked (a wrong answer is never silent, and a bad request never
costs the caller their CUDA context):
- host offsets (NumPy arrays, lists, CPU tensors) are checked here with NumPy; for a CUDA x
  they are then copied to x's device as int64, in x's framework;
- CUDA offsets (of x's framework and device) are checked on the device, which waits for
  the stream once; ``check_segments=False`` skips that wait and leaves them to the library's
  own device check, which stops a bad run with a trap that loses the CUDA context
  (include/gpuscan/gpuscan.h, gpuscan_cuda_scan_segments).
"""
import numpy as np

from ._dlpack import KDL_CPU, KDL_CUDA_HOST
from .errors import UsageError

_INT64 = np.dtype(np.int64)


def check_form(shape, dtype):
    """The offsets' shape and dtype, before any value is read."""
    if len(shape) != 1:
        raise UsageError(f"segments must be 1-D (S + 1 CSR offsets, 0 to n); got shape {tuple(shape)}")
    if shape[0] == 0:
        raise UsageError("segments holds no offsets; it needs S + 1 of them (just [0] for no segments)")
    if dtype.kind not in "iu":
        raise UsageError(f"segments are {dtype}; CSR offsets must be integers (of any integer "
                         "dtype; gpuscan converts them to int64)")


def check_values(offsets, n):
    """UsageError naming the first broken rule of host (NumPy) offsets for n elements."""
    first, last = int(offsets[0]), int(offsets[-1])
    if first != 0:
        raise UsageError(f"segments start at {first}, not 0")
    decreasing = np.flatnonzero(offsets[1:] < offsets[:-1])
    if decreasing.size:
        s = int(decreasing[0]) + 1
        raise UsageError(f"segments decrease at index {s} ({int(offsets[s - 1])} then "
                         f"{int(offsets[s])}); CSR offsets never decrease")
    if last != n:
        raise UsageError(f"segments end at {last}, but x has {n} elements (the last offset is n)")


def on_host(segments, n):
    """Checked host offsets for n elements, as a C-contiguous int64 NumPy array."""
    if _is_cuda_array(segments):
        raise UsageError("segments are on a CUDA device and x on the host: pass them as a host "
                         "array (tensor.cpu(), cupy.asnumpy), or pass x on that device")
    offsets = np.asarray(segments)
    check_form(offsets.shape, offsets.dtype)
    check_values(offsets, n)
    return np.ascontiguousarray(offsets, dtype=_INT64)


def on_device(arrays, segments, n, ordinal, check):
    """Offsets for a CUDA x of n elements on device `ordinal`, in x's framework (`arrays`,
    a TorchArrays or CupyArrays): contiguous int64 on that device, checked as the module
    says."""
    if not arrays.holds(segments):
        if _is_cuda_array(segments):
            raise UsageError(f"segments for a {arrays.framework} x must be a {arrays.framework} "
                             "array on x's device, or a host array (copied there)")
        return arrays.upload(on_host(segments, n), ordinal)
    if arrays.ordinal(segments) != ordinal:
        raise UsageError(f"segments are on CUDA device {arrays.ordinal(segments)} and x on "
                         f"device {ordinal}; move them to x's device")
    try:
        dtype = arrays.dtype(segments)
    except UsageError:  # a torch dtype without a NumPy counterpart (bfloat16, ...)
        raise UsageError(f"segments are {segments.dtype}; CSR offsets must be integers") from None
    check_form(tuple(segments.shape), dtype)
    if check:
        try:
            valid = _valid(segments, n)
        except (RuntimeError, TypeError):  # a dtype torch compares on the host only (uint32)
            valid = False
        if not valid:
            check_values(arrays.download(segments), n)  # raises, naming the broken rule
    return arrays.flat(segments, _INT64)


def _valid(offsets, n):
    """Whether device offsets (torch or cupy, 1-D, at least one) follow the rules: computed
    on the device in their dtype, then read back (the one wait for the stream)."""
    ok = (offsets[0] == 0) & (offsets[-1] == n)
    if offsets.shape[0] > 1:
        ok = ok & (offsets[1:] >= offsets[:-1]).all()
    return bool(ok)


def _is_cuda_array(a):
    if hasattr(a, "__cuda_array_interface__"):
        return True
    device = getattr(a, "__dlpack_device__", None)
    return device is not None and device()[0] not in (KDL_CPU, KDL_CUDA_HOST)
