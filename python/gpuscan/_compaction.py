"""The compaction family (DESIGN.md section 3e) over gpuscan_compact_host and
gpuscan_cuda_compact: a call's condition (one comparison with a number, or flags) checked
once here, then run on host (NumPy) arrays or on CUDA arrays where they are.

What the library writes (include/gpuscan/gpuscan.h): the kept elements in order to the start
of an output of room for n, and their number (uint64); partition's rejected elements in order
to a second output of n; run-length encoding's run lengths (uint64) to a second output of n.
"""
import ctypes
import math
import numbers

import numpy as np

from . import _host, _library
from ._segments import _is_cuda_array
from ._types import DTYPES, SUPPORTED, dtype_code, holding_dtype
from .errors import UsageError

COMPARISONS = tuple(_library.PREDICATES)  # the keywords: lt, le, gt, ge, eq, ne
# Flags the library reads as they are (gpuscan_compact_spec.flags_dtype: an integer dtype).
FLAG_DTYPES = {np.dtype(np.uint32): 0, np.dtype(np.int32): 1, np.dtype(np.uint64): 3,
               np.dtype(np.int64): 4}
# Narrower integer and bool flags are widened to int32 first, which keeps every value (so a
# nonzero flag stays nonzero, as a wrap into uint32 would also do, but plainly).
_WIDENED_FLAGS = np.dtype(np.int32)
FLAGS_RULE = ("flags must be integers or bool: int32, uint32, int64, uint64 as they are; bool, "
              "int8, uint8, int16 and uint16 widened to int32")
_LENGTHS = np.dtype(np.int64)  # the library's uint64 lengths and count, read as int64


class Request:
    """One checked compaction: its gpuscan_compaction, x's dtype, the predicate and its
    constant (a ctypes value of x's dtype) or the caller's flags, and what its second output
    holds (None, "rejected" or "lengths")."""

    def __init__(self, compaction, dtype, predicate=0, constant=None, flags=None):
        self.compaction = compaction
        self.dtype = dtype
        self.predicate = predicate
        self.constant = constant
        self.flags = flags
        if compaction in (_library.PARTITION, _library.PARTITION_FLAGGED):
            self.second = "rejected"
        elif compaction == _library.RUN_LENGTH_ENCODE:
            self.second = "lengths"
        else:
            self.second = None

    def spec(self, flags_dtype=None):
        flags_code = FLAG_DTYPES[flags_dtype] if flags_dtype is not None else 0
        return _library.CompactSpec(self.compaction, dtype_code(self.dtype), self.predicate,
                                    flags_code)

    def second_dtype(self):
        return self.dtype if self.second == "rejected" else _LENGTHS


def checked_dtype(name, dtype):
    """x's dtype in native byte order, or a UsageError naming the dtypes that work (values are
    never converted: a compaction returns x's own elements)."""
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    if dtype not in DTYPES:
        wider = holding_dtype(dtype)
        hint = (f" (convert it first, e.g. x.astype(numpy.{wider}) or x.to(torch.{wider}))"
                if wider else " (no gpuscan dtype holds its values)")
        raise UsageError(f"gpuscan.{name} takes x of {SUPPORTED}; x is {dtype}{hint}")
    return dtype


def request(name, dtype, comparisons=None, flags=None, counts=False):
    """The Request of gpuscan.`name` ("select", "partition", "unique_consecutive",
    "run_length_encode") on x of `dtype` (checked_dtype's); `comparisons` maps lt, le, ... to
    the caller's values (None: not given); `counts`: unique_consecutive's return_counts
    (run-length encoding)."""
    if name == "run_length_encode" or (name == "unique_consecutive" and counts):
        return Request(_library.RUN_LENGTH_ENCODE, dtype)
    if name == "unique_consecutive":
        return Request(_library.UNIQUE, dtype)
    given = [keyword for keyword in COMPARISONS if comparisons[keyword] is not None]
    if flags is not None:
        given.append("flags")
    if not given:
        raise UsageError(f"gpuscan.{name} needs a condition: one of lt=, le=, gt=, ge=, eq=, "
                         "ne= (x compared with a number) or flags= (of x's shape, or 1-D of "
                         "x.size; nonzero keeps)")
    if len(given) > 1:
        raise UsageError(f"gpuscan.{name} takes one condition; got "
                         + " and ".join(f"{keyword}=" for keyword in given)
                         + " (to combine conditions, pass flags=, e.g. flags=(x > a) & (x < b))")
    partition = name == "partition"
    if flags is not None:
        return Request(_library.PARTITION_FLAGGED if partition else _library.SELECT_FLAGGED,
                       dtype, flags=flags)
    keyword = given[0]
    return Request(_library.PARTITION if partition else _library.SELECT_IF, dtype,
                   _library.PREDICATES[keyword], constant(comparisons[keyword], dtype, keyword))


def constant(value, dtype, keyword):
    """`value` as one element of `dtype` (a ctypes value), for x <keyword> value.

    Integer x: an integer that fits the dtype (a float, or an integer out of range, is
    refused rather than rounded or wrapped, which would change what is kept). Float x: any
    real number, rounded to the dtype (as NumPy compares a float32 array with a Python
    float); a finite number too large for the dtype is refused. NaN is allowed (every
    comparison with it is false, except ne).
    """
    if hasattr(value, "item") and not isinstance(value, (int, float)):
        size = value.numel() if hasattr(value, "numel") else getattr(value, "size", 1)
        if size != 1:
            raise UsageError(f"{keyword}= must be one number; got an array of {size}")
        value = value.item()  # NumPy scalars, 0-d arrays, one-element tensors
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UsageError(f"{keyword}={value!r} is not a number (x is compared with it)")
    ctype = DTYPES[dtype][1]
    if dtype.kind in "iu":
        if not isinstance(value, numbers.Integral):
            raise UsageError(f"{keyword}={value!r} is not an integer and x is {dtype}: compare "
                             "with an integer (math.floor or math.ceil says which)")
        value = int(value)
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise UsageError(f"{keyword}={value} does not fit x's dtype, {dtype} ({info.min} .. "
                             f"{info.max})")
        return ctype(value)
    try:
        exact = float(value)
    except OverflowError:
        raise UsageError(f"{keyword}={value} does not fit x's dtype, {dtype}") from None
    with np.errstate(over="ignore"):
        rounded = dtype.type(exact)
    if math.isinf(rounded) and not math.isinf(exact):
        raise UsageError(f"{keyword}={value!r} does not fit x's dtype, {dtype} (largest "
                         f"{np.finfo(dtype).max})")
    return ctype(float(rounded))


def flags_dtype(dtype):
    """The dtype flags of `dtype` are passed to the library as, or a UsageError."""
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    if dtype in FLAG_DTYPES:
        return dtype
    if dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 4):
        return _WIDENED_FLAGS
    raise UsageError(f"flags are {dtype}; {FLAGS_RULE} (for other masks pass flags=(mask != 0))")


def check_flags_shape(shape, x_shape, n):
    if tuple(shape) != tuple(x_shape) and tuple(shape) != (n,):
        raise UsageError(f"flags have shape {tuple(shape)}; they must have x's shape "
                         f"{tuple(x_shape)} or be 1-D of x.size ({n}) elements (flags[i] "
                         "keeps x's i-th element in row-major order)")


def _kept(result, kept, n):
    """An array of exactly its elements (a host result need not hold the n-element buffer
    the library wrote to)."""
    return result[:kept].copy() if kept < n else result


def on_host(x, req):
    """The compaction of host (NumPy) array x, as NumPy arrays: the kept elements, or a pair
    (selected, rejected) or (values, lengths). req.flags: a NumPy array or None."""
    flat = _host.flatten(x, req.dtype)
    n = flat.size
    flags = None
    if req.flags is not None:
        flags = np.asarray(req.flags)
        check_flags_shape(flags.shape, x.shape, n)
        flags = np.ascontiguousarray(flags, dtype=flags_dtype(flags.dtype)).reshape(-1)
    out = np.empty(n, dtype=req.dtype)
    second = np.empty(n, dtype=req.second_dtype()) if req.second else None
    kept = 0
    if n:
        count = ctypes.c_uint64()
        spec = req.spec(flags.dtype if flags is not None else None)
        device = _library.host_device()
        status = _library.lib().gpuscan_compact_host(
            device.handle, ctypes.byref(spec), flat.ctypes.data,
            flags.ctypes.data if flags is not None else None, n,
            ctypes.byref(req.constant) if req.constant is not None else None, out.ctypes.data,
            second.ctypes.data if second is not None else None, ctypes.byref(count))
        _library.raise_for(status, f"compacting on {device.name}")
        kept = count.value
    if req.second is None:
        return _kept(out, kept, n)
    if req.second == "rejected":
        return _kept(out, kept, n), _kept(second, n - kept, n)
    return _kept(out, kept, n), _kept(second, kept, n)


def cuda_flags(arrays, flags, x_shape, n, ordinal):
    """Flags for a CUDA x of n elements on device `ordinal`: an array of x's framework
    (`arrays`) on that device, flattened, contiguous, of a dtype the library takes."""
    if not arrays.holds(flags):
        where = "a CUDA array of another framework" if _is_cuda_array(flags) else \
            f"a host {type(flags).__name__}"
        raise UsageError(f"flags for a {arrays.framework} x on CUDA device {ordinal} must be a "
                         f"{arrays.framework} array on that device; got {where} (move it there "
                         "first)")
    if arrays.ordinal(flags) != ordinal:
        raise UsageError(f"flags are on CUDA device {arrays.ordinal(flags)} and x on device "
                         f"{ordinal}; move them to x's device")
    try:
        dtype = arrays.dtype(flags)
    except UsageError:  # a torch dtype without a NumPy counterpart (bfloat16, ...)
        raise UsageError(f"flags are {flags.dtype}; {FLAGS_RULE}") from None
    check_flags_shape(flags.shape, x_shape, n)
    return arrays.flat(flags, flags_dtype(dtype))


def on_cuda(arrays, x, req):
    """The compaction of CUDA array x in its framework (`arrays`: TorchArrays or CupyArrays),
    on x's device and the framework's current stream; reading the count back waits for that
    stream. Results: arrays of x's framework on x's device, views of the first elements of
    n-element outputs (on_host copies its results to their size; a copy here would be
    another pass over the device's memory, which the caller can ask for)."""
    source = arrays.flat(x, req.dtype)
    n = arrays.size(source)
    ordinal = arrays.ordinal(source)
    flags = None
    if req.flags is not None:
        flags = cuda_flags(arrays, req.flags, tuple(x.shape), n, ordinal)
    out = arrays.empty_of(source, n, req.dtype)
    second = arrays.empty_of(source, n, req.second_dtype()) if req.second else None
    kept = 0
    if n:
        count = arrays.empty_of(source, 1, _LENGTHS)
        spec = req.spec(arrays.dtype(flags) if flags is not None else None)
        status = _library.lib().gpuscan_cuda_compact(
            _library.cuda_device(ordinal), ctypes.byref(spec), arrays.pointer(source),
            arrays.pointer(flags) if flags is not None else None, n,
            ctypes.byref(req.constant) if req.constant is not None else None,
            arrays.pointer(out), arrays.pointer(second) if second is not None else None,
            arrays.pointer(count), arrays.stream(source, ordinal) or None)
        _library.raise_for(status, f"compacting on CUDA device {ordinal}")
        kept = arrays.read_count(count, ordinal)
    if req.second is None:
        return out[:kept]
    if req.second == "rejected":
        return out[:kept], second[:n - kept]
    return out[:kept], second[:kept]
