"""Scans of host (NumPy) arrays: copied to the best device, scanned, copied back."""
import ctypes

import numpy as np

from . import _library
from ._types import dtype_code
from .errors import UsageError


def flatten(x, dtype):
    """x as a C-contiguous 1-D array of `dtype` in native byte order, flattened like
    numpy's axis=None (row-major); copied only where it has to be."""
    if x.dtype != dtype or not x.dtype.isnative:
        x = x.astype(dtype)  # `dtype` is native: the table holds native dtypes only
    return np.ascontiguousarray(x).reshape(-1)


def check_out(out, shape, dtype):
    """`out` if it can take the result (of `shape`: (n,) for axis=None, x's shape for
    axis=-1), else a UsageError saying what it must be."""
    if not isinstance(out, np.ndarray):
        raise UsageError(f"out must be a numpy.ndarray for a NumPy x; got {type(out).__name__}")
    if out.dtype != dtype:
        raise UsageError(f"out is {out.dtype}; the result is {dtype}")
    if out.shape != shape:
        raise UsageError(f"out has shape {out.shape}; the result has shape {shape}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise UsageError("out must be contiguous and writeable")
    return out


def scan(x, dtype, op, kind, init, out, rows=None, offsets=None):
    """The scan (or reduction, kind REDUCE) of host array `x` as `dtype`: a NumPy array of
    x.size elements (a NumPy scalar for REDUCE). With `rows` (axis=-1), each row of x's last
    axis on its own: a result of x's shape (REDUCE: without the last axis). With `offsets`
    (segments=: checked int64 CSR offsets, _segments.on_host), each segment of 1-D x on its
    own: a result of x's shape (REDUCE: one value per segment)."""
    flat = flatten(x, dtype)
    n = flat.size
    scalar = kind == _library.REDUCE and rows is None and offsets is None
    if rows is not None:
        shape = x.shape[:-1] if kind == _library.REDUCE else x.shape
    elif offsets is not None:
        shape = (offsets.size - 1,) if kind == _library.REDUCE else (n,)
    else:
        shape = () if scalar else (n,)
    if out is not None and kind != _library.REDUCE:
        result = check_out(out, shape, dtype)
        if n == 0:
            return result
        if np.may_share_memory(result, flat):
            # In place (out=x) or overlapping: the library scans out of place.
            np.copyto(result, scan(x.copy(), dtype, op, kind, init, None, rows, offsets))
            return result
    else:
        result = np.empty(1 if scalar else shape, dtype=dtype)
        if result.size == 0:
            return result
    device = _library.host_device()
    init_pointer = ctypes.byref(init) if init is not None else None
    data = flat.ctypes.data if n else None
    if rows is not None:
        status = _library.lib().gpuscan_scan_rows_host(
            device.handle, dtype_code(dtype), op, kind, data, result.ctypes.data, rows[0],
            rows[1], init_pointer)
    elif offsets is not None:
        status = _library.lib().gpuscan_scan_segments_host(
            device.handle, dtype_code(dtype), op, kind, data, result.ctypes.data,
            offsets.ctypes.data, offsets.size - 1, init_pointer)
    else:
        status = _library.lib().gpuscan_scan_host(
            device.handle, dtype_code(dtype), op, kind, data, result.ctypes.data, n, init_pointer)
    _library.raise_for(status, f"scanning on {device.name}")
    return result[0] if scalar else result
