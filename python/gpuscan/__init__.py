"""gpuscan: prefix scans and reductions on GPUs for NumPy, PyTorch and CuPy arrays.

Pure Python over libgpuscan.so's C ABI (ctypes), so one library serves every Python 3::

    import numpy as np, gpuscan
    gpuscan.cumsum(np.arange(5, dtype=np.int32))         # array([ 0,  1,  3,  6, 10])
    gpuscan.exclusive_scan(np.float32([3, 1, 4]))        # array([0., 3., 4.], dtype=float32)
    gpuscan.reduce(np.uint32([3, 1, 4]), op="max")       # 4

Where the data lives decides where it is scanned (DESIGN.md section 3c):

- NumPy arrays (and anything numpy.asarray takes, torch CPU tensors too) are copied to the
  best device (a CUDA GPU, else a Vulkan GPU, else the CPU driver lavapipe; ``$GPUSCAN_DEVICE``
  picks one by name), scanned, and returned as NumPy arrays (torch tensors for torch input).
- CUDA arrays (torch, cupy, or anything with ``__cuda_array_interface__`` or ``__dlpack__``)
  are scanned where they are, without a copy, on the device that holds them and on their
  framework's current stream; the result is an array of the same framework on the same
  device, and nothing waits for the GPU (as with torch.cumsum).

Element types: uint32, int32, float32, uint64, int64, float64. Operators: "add", "mul",
"min", "max", and for integers "and", "or", "xor". Integer sums and products wrap like C;
float min/max ignore a NaN unless both operands are. A multi-dimensional array is flattened
in row-major order, like numpy's ``axis=None``; with ``axis=-1`` each row of its last axis is
scanned on its own, all rows in one pass (``gpuscan.cumsum(logits, axis=-1)``); with
``segments=offsets`` (CSR offsets, S + 1 integers from 0 to n) each segment of a 1-D x is
scanned on its own, also in one pass (``gpuscan.reduce(values, segments=row_pointers)``
gives one sum per segment). Failures raise ``UsageError`` (the request is wrong) or
``DeviceError`` (no library or device, or a driver call failed).

Compaction (DESIGN.md section 3e) keeps some elements of x, flattened in row-major order,
in order, and returns them as a 1-D array of x's dtype::

    x = np.int32([3, 3, 1, 4, 4, 4])
    gpuscan.select(x, gt=2)                          # array([3, 3, 4, 4, 4], dtype=int32)
    gpuscan.select(x, flags=x % 2 == 0)              # array([4, 4, 4], dtype=int32)
    selected, rejected = gpuscan.partition(x, lt=4)  # [3, 3, 1] and [4, 4, 4] (int32)
    gpuscan.unique_consecutive(x)                    # array([3, 1, 4], dtype=int32)
    values, lengths = gpuscan.run_length_encode(x)   # [3, 1, 4] (int32) and [2, 1, 3] (int64)

``select`` and ``partition`` take one condition: ``lt=``, ``le=``, ``gt=``, ``ge=``, ``eq=`` or
``ne=`` (x compared with a number; float comparisons with NaN are false, except ``ne``) or
``flags=`` (nonzero keeps). Equal elements for ``unique_consecutive`` and
``run_length_encode`` compare with ``==``: +0.0 equals -0.0 and NaN equals nothing. Run
lengths and counts are int64. Host arrays are compacted on the best device, as they are
scanned, and the results are NumPy arrays (torch tensors for CPU torch input); CUDA arrays
of torch and cupy are compacted on their device and their framework's current stream, and
the call waits for that stream to read how many elements were kept (other CUDA producers
are refused: wrap them with torch.from_dlpack or cupy.asarray).
"""
import operator
import sys

import numpy as np

from . import _compaction, _cuda, _dlpack, _host, _library, _segments
from ._types import cumsum_dtype, dtype_code, init_argument, op_code
from .errors import DeviceError, Error, ForwardProgressError, UsageError

__all__ = ["inclusive_scan", "exclusive_scan", "reduce", "cumsum", "select", "partition",
           "unique_consecutive", "run_length_encode", "device_name", "Error", "UsageError",
           "DeviceError", "ForwardProgressError"]


def inclusive_scan(x, op="add", init=None, out=None, *, axis=None, segments=None,
                   check_segments=True):
    """``out[i] = init ⊕ x[0] ⊕ ... ⊕ x[i]``, in x's dtype (integer sums wrap like C).

    x: a NumPy or CUDA array of uint32, int32, float32, uint64, int64 or float64.
    op: "add", "mul", "min", "max", "and", "or" or "xor" (the last three integers only).
    init: a number of x's dtype that starts the scan (None: the operator's identity).
    out: an array of the same framework, device and dtype, contiguous, of the result's
      shape; it may be x itself. Returned.
    axis: None (x flattened in row-major order) or -1 (each row of the last axis scanned on
      its own, init applied to each; a batched scan in one pass). Other axes are refused.
    segments: None, or the CSR offsets of a segmented scan of a 1-D x (DESIGN.md 3f): S + 1
      integers, 0 first, x.size last, never decreasing; segment s is
      x[segments[s]:segments[s + 1]], scanned on its own from init (empty segments allowed).
      Any integer dtype (converted to int64). For a NumPy x a host array (NumPy, list, CPU
      tensor); for a CUDA x a host array (checked on the host, copied to x's device) or an
      array of x's framework on x's device. Not with axis.
    check_segments: for CUDA offsets, check them on the device first and raise a UsageError
      if they are wrong; this waits for the stream once. False skips the wait and leaves
      them to the library's device-side check, which stops a bad run with a trap that loses
      the CUDA context. Host offsets are always checked, on the host.
    Returns an array of x's dtype, framework and device: 1-D of x.size elements for
    axis=None (and segments), x's shape for axis=-1.
    """
    return _scan(x, op, _library.INCLUSIVE, init, out, axis, None, segments, check_segments)


def exclusive_scan(x, op="add", init=None, out=None, *, axis=None, segments=None,
                   check_segments=True):
    """``out[i] = init ⊕ x[0] ⊕ ... ⊕ x[i-1]`` (``out[0] = init``), in x's dtype.

    Arguments and result as for inclusive_scan (with segments, each segment's first output
    is init).
    """
    return _scan(x, op, _library.EXCLUSIVE, init, out, axis, None, segments, check_segments)


def reduce(x, op="add", init=None, *, axis=None, segments=None, check_segments=True):
    """``init ⊕ x[0] ⊕ ... ⊕ x[n-1]`` (init, or the identity, when x is empty), in x's dtype.

    Returns a NumPy scalar for host input; for a CUDA array a 0-d array of its framework on
    its device (reading it, e.g. with ``.item()``, waits for the GPU). With axis=-1, one value
    per row of the last axis: an array of x.shape[:-1]. With segments (as for
    inclusive_scan), one value per segment: an array of S (an empty segment's is init, or
    the identity).
    """
    return _scan(x, op, _library.REDUCE, init, None, axis, None, segments, check_segments)


def cumsum(x, dtype=None, out=None, *, axis=None, segments=None, check_segments=True):
    """The inclusive sum with numpy.cumsum's dtype rules (``axis=None`` or ``axis=-1``, or
    ``segments=`` as for inclusive_scan).

    dtype: the result's (and the accumulation's) dtype; by default x's, except that bool
      and integers narrower than 64 bits widen to int64 (unsigned: uint64), like numpy.
      x is converted to it first. Must be one of the six gpuscan scans.
    out: as for inclusive_scan, of the result's dtype.
    """
    return _scan(x, "add", _library.INCLUSIVE, None, out, axis,
                 dtype if dtype is not None else cumsum_dtype, segments, check_segments)


def select(x, *, lt=None, le=None, gt=None, ge=None, eq=None, ne=None, flags=None):
    """The elements of x that meet one condition, in order: ``x[x > 3]`` is
    ``select(x, gt=3)``, ``x[mask]`` is ``select(x, flags=mask)``.

    x: a NumPy or CUDA (torch, cupy) array of uint32, int32, float32, uint64, int64 or
      float64, flattened in row-major order (numpy's axis=None); other dtypes are refused,
      never converted.
    lt, le, gt, ge, eq, ne: keep x[i] < value, <= value, > value, >= value, == value or
      != value. Exactly one of them, or flags. The value is converted to x's dtype: for
      integer x it must be an integer that fits that dtype (floats and out-of-range integers
      are refused); for float x any number that fits the dtype, rounded to it (as NumPy
      compares a float32 array with a Python float). Comparisons with NaN are false, except
      ne.
    flags: keep x[i] where flags[i] != 0; an array of x's shape, or 1-D of x.size elements
      (row-major), of int32, uint32, int64 or uint64 (bool, int8, uint8, int16 and uint16
      are widened to int32 first). For a NumPy x a host array (anything numpy.asarray
      takes); for a CUDA x an array of x's framework on x's device.
    Returns a 1-D array of x's dtype holding the kept elements: a NumPy array for host
    input (a torch tensor for a CPU tensor), else an array of x's framework on x's device.
    A CUDA x is compacted on its framework's current stream, and the call waits for that
    stream (it reads back how many elements were kept); the result is then a view of the
    first elements of an x.size-element buffer (``.clone()`` / ``.copy()`` releases the
    rest).
    """
    return _compact("select", x, dict(lt=lt, le=le, gt=gt, ge=ge, eq=eq, ne=ne), flags)


def partition(x, *, lt=None, le=None, gt=None, ge=None, eq=None, ne=None, flags=None):
    """``(selected, rejected)``: select's elements, and the others, each in their order in x
    (a stable partition). Arguments as for select; each result 1-D of x's dtype, of
    k and x.size - k elements (torch: ``x[m], x[~m]`` for a mask m)."""
    return _compact("partition", x, dict(lt=lt, le=le, gt=gt, ge=ge, eq=eq, ne=ne), flags)


def unique_consecutive(x, *, return_counts=False):
    """x without consecutive duplicates: the first element of each run of equal elements, in
    order (torch.unique_consecutive of the flattened x). Elements compare with ``==``: +0.0
    equals -0.0 (the run keeps its first one) and NaN equals nothing (each NaN is a run of
    its own).

    x: as for select. return_counts: also return each run's length (as run_length_encode).
    Returns a 1-D array of x's dtype, or ``(values, counts)`` with int64 counts, of x's
    framework and device; a CUDA x waits for its stream, as select does.
    """
    return _compact("unique_consecutive", x, counts=bool(return_counts))


def run_length_encode(x):
    """``(values, lengths)``: the first element of each run of equal elements of x (as
    unique_consecutive keeps them) and the run's length, int64 (the library counts in
    uint64; a run of 2^63 elements or more does not fit in memory anyway). Both 1-D of the
    number of runs; x and the waiting as for select."""
    return _compact("run_length_encode", x)


def device_name():
    """The name and backend of the device that host (NumPy) arrays are scanned on."""
    device = _library.host_device()
    return f"{device.name} ({device.backend})"


# ---- dispatch -----------------------------------------------------------------------------

_HOST = "host"
_PROTOCOL = _cuda.ProtocolArrays()
_adapters = {np.ndarray: _HOST}  # type -> _HOST, an adapter of _cuda, or _PROTOCOL


def _adapter_of(x):
    kind = type(x)
    adapter = _adapters.get(kind)
    if adapter is None:
        module = kind.__module__.split(".")[0]
        if module == "torch" and isinstance(x, sys.modules["torch"].Tensor):
            adapter = _cuda.TorchArrays(sys.modules["torch"])
        elif module == "cupy" and isinstance(x, sys.modules["cupy"].ndarray):
            adapter = _cuda.CupyArrays(sys.modules["cupy"])
        elif hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__"):
            adapter = _PROTOCOL
        else:
            adapter = _HOST  # lists, scalars, anything numpy.asarray reads
        _adapters[kind] = adapter
    return adapter


def _rows_of(shape, axis):
    """numpy's axis for a scan of an array of `shape`: None (flattened) or, for the last axis
    of an array of two or more dimensions, (rows, row length), a batched scan (DESIGN.md
    section 3f). Other axes are refused: a row must be contiguous in memory."""
    if axis is None:
        return None
    try:
        axis = operator.index(axis)
    except TypeError:
        raise UsageError(f"axis={axis!r} is not an integer or None") from None
    ndim = len(shape)
    if ndim == 0:
        raise UsageError(f"axis={axis}: x has no axes (0-d); use axis=None")
    if not -ndim <= axis < ndim:
        raise UsageError(f"axis={axis} is out of bounds for x of {ndim} dimension(s)")
    if axis % ndim != ndim - 1:
        raise UsageError(f"axis={axis}: gpuscan scans along the last axis (axis=-1) only; move "
                         "that axis last first (numpy.moveaxis, torch.movedim), then scan with "
                         "axis=-1")
    if ndim == 1:
        return None  # the last axis of a vector is all of it
    row_length = int(shape[-1])
    return (int(np.prod(shape[:-1], dtype=np.int64)), row_length)


def _scan(x, op, kind, init, out, axis, result_dtype, segments=None, check_segments=True):
    """result_dtype: None (x's dtype), cumsum_dtype (numpy.cumsum's rule), or a dtype."""
    if segments is not None and axis is not None:
        raise UsageError(f"segments= scans a 1-D x by its offsets; it does not combine with "
                         f"axis={axis!r} (leave axis out)")
    adapter = _adapters.get(type(x))
    fast_plans = getattr(adapter, "fast_plans", None)
    if (fast_plans is not None and init is None and segments is None
            and (axis is None or (type(axis) is int and axis == -1))):
        result = adapter.fast_scan(x, op, kind, result_dtype, out, last_axis=axis is not None)
        if result is not None:
            return result
    if adapter is None:
        adapter = _adapter_of(x)
    host_framework = None
    if adapter is _PROTOCOL:
        device = _dlpack.dlpack_device(x) if not hasattr(x, "__cuda_array_interface__") else None
        if device is not None and device[0] not in (_dlpack.KDL_CUDA, _dlpack.KDL_CUDA_MANAGED):
            x, adapter = np.from_dlpack(x), _HOST  # host memory through DLPack
        elif segments is not None:
            raise UsageError("segments= takes CUDA arrays of torch and cupy (gpuscan allocates "
                             "and checks the offsets in their framework); wrap x with "
                             "torch.from_dlpack or cupy.asarray first")
        else:
            x = _PROTOCOL.memory(x)
    elif adapter is not _HOST and adapter.framework == "torch" and not x.is_cuda:
        # A CPU tensor: scanned as the NumPy array that shares its memory, returned as torch.
        x, adapter, host_framework = x.detach().numpy(), _HOST, "torch"
        if out is not None:
            if not isinstance(out, sys.modules["torch"].Tensor) or out.is_cuda:
                raise UsageError("out must be a CPU torch.Tensor for a CPU torch x")
            _scan(x, op, kind, init, out.detach().numpy(), axis, result_dtype, segments)
            return out
    if adapter is _HOST and not isinstance(x, np.ndarray):
        x = np.asarray(x)
    rows = _rows_of(tuple(x.shape), axis)
    if segments is not None and len(x.shape) != 1:
        raise UsageError(f"segments= scans a 1-D x; x has shape {tuple(x.shape)} (flatten it "
                         "first, e.g. x.reshape(-1), with offsets into the flat array)")
    dtype = adapter.dtype(x) if adapter is not _HOST else x.dtype
    requested_dtype = result_dtype
    if result_dtype is None:
        result_dtype = dtype
    elif result_dtype is cumsum_dtype:
        result_dtype = cumsum_dtype(dtype)
    else:
        result_dtype = _as_numpy_dtype(result_dtype, adapter)
    if not result_dtype.isnative:
        result_dtype = result_dtype.newbyteorder("=")
    dtype_code(result_dtype, "x" if result_dtype == dtype else "the result dtype")
    op_code_value = op_code(op, result_dtype)
    init = init_argument(init, result_dtype)
    if adapter is not _HOST and adapter is not _PROTOCOL and result_dtype == dtype:
        # The next call with this dtype, dtype argument and operator may take fast_scan.
        try:
            adapter.fast_plans[(x.dtype, requested_dtype, op)] = (dtype_code(dtype), op_code_value)
        except TypeError:
            pass  # an unhashable dtype argument: that call keeps the general path
    if adapter is _HOST:
        offsets = _segments.on_host(segments, x.size) if segments is not None else None
        result = _host.scan(x, result_dtype, op_code_value, kind, init, out, rows, offsets)
        if host_framework == "torch" and (out is None or kind == _library.REDUCE):
            torch = sys.modules["torch"]
            result = torch.from_numpy(np.asarray(result))
        return result
    return _cuda.scan(adapter, x, result_dtype, op_code_value, kind, init, out, rows, segments,
                      check_segments)


def _as_numpy_dtype(dtype, adapter):
    try:
        return np.dtype(dtype)
    except TypeError:
        to_numpy = getattr(adapter, "to_numpy", {})  # torch dtypes for torch tensors
        if dtype in to_numpy:
            return to_numpy[dtype]
        raise UsageError(f"dtype={dtype!r} is not a dtype") from None


def _compact(name, x, comparisons=None, flags=None, counts=False):
    """gpuscan.`name` (select, partition, unique_consecutive, run_length_encode) of x: picks
    where it runs as _scan does (host arrays on the host device, CUDA arrays where they are),
    then _compaction checks and runs it."""
    adapter = _adapter_of(x)
    host_framework = None
    if adapter is _PROTOCOL:
        device = _dlpack.dlpack_device(x) if not hasattr(x, "__cuda_array_interface__") else None
        if device is None or device[0] in (_dlpack.KDL_CUDA, _dlpack.KDL_CUDA_MANAGED):
            raise UsageError(f"gpuscan.{name} takes CUDA arrays of torch and cupy (it allocates "
                             "its results in their framework); wrap x with torch.from_dlpack or "
                             "cupy.asarray first")
        x, adapter = np.from_dlpack(x), _HOST  # host memory through DLPack
    if adapter is _HOST:
        if not isinstance(x, np.ndarray):
            x = np.asarray(x)
        dtype = x.dtype
    else:
        try:
            dtype = adapter.dtype(x)
        except UsageError:  # a torch dtype without a NumPy counterpart (bfloat16, ...)
            raise UsageError(f"gpuscan.{name} takes x of {_compaction.SUPPORTED}; x is "
                             f"{x.dtype}") from None
    dtype = _compaction.checked_dtype(name, dtype)
    if adapter is not _HOST and adapter.framework == "torch" and not x.is_cuda:
        # A CPU tensor: compacted as the NumPy array that shares its memory, returned as torch.
        x, adapter, host_framework = x.detach().numpy(), _HOST, "torch"
    if adapter is _HOST and flags is not None:
        flags = _host_flags(flags)
    request = _compaction.request(name, dtype, comparisons, flags, counts)
    if adapter is not _HOST:
        return _compaction.on_cuda(adapter, x, request)
    result = _compaction.on_host(x, request)
    if host_framework == "torch":
        torch = sys.modules["torch"]
        return torch.from_numpy(result) if isinstance(result, np.ndarray) else \
            tuple(torch.from_numpy(part) for part in result)
    return result


def _host_flags(flags):
    """Flags for a host x as a NumPy array (CPU tensors and DLPack host memory read in
    place); CUDA flags are refused."""
    adapter = _adapter_of(flags)
    if adapter is _HOST:
        return flags
    if adapter is not _PROTOCOL and adapter.framework == "torch" and not flags.is_cuda:
        if flags.dtype not in adapter.to_numpy:  # bfloat16, ...: numpy() would raise TypeError
            raise UsageError(f"flags are {flags.dtype}; {_compaction.FLAGS_RULE}")
        return flags.detach().numpy()
    if adapter is _PROTOCOL and not hasattr(flags, "__cuda_array_interface__"):
        device = _dlpack.dlpack_device(flags)
        if device is not None and device[0] in (_dlpack.KDL_CPU, _dlpack.KDL_CUDA_HOST):
            return np.from_dlpack(flags)
    raise UsageError("flags are on a CUDA device and x on the host: pass them as a host array "
                     "(tensor.cpu(), cupy.asnumpy), or pass x on that device")
