"""The element types and operators gpuscan takes, and how Python values map onto them."""
import ctypes

import numpy as np

from .errors import UsageError

# NumPy dtype -> gpuscan_dtype (gpuscan.h), and the ctypes type of one element (for init).
DTYPES = {
    np.dtype(np.uint32): (0, ctypes.c_uint32),
    np.dtype(np.int32): (1, ctypes.c_int32),
    np.dtype(np.float32): (2, ctypes.c_float),
    np.dtype(np.uint64): (3, ctypes.c_uint64),
    np.dtype(np.int64): (4, ctypes.c_int64),
    np.dtype(np.float64): (5, ctypes.c_double),
}
SUPPORTED = "uint32, int32, float32, uint64, int64 and float64"

OPS = {"add": 0, "mul": 1, "min": 2, "max": 3, "and": 4, "or": 5, "xor": 6}
BITWISE = ("and", "or", "xor")


def holding_dtype(dtype):
    """The name of a gpuscan dtype that holds every value of `dtype` (bool, narrower integers
    and floats: what to convert to), or None (complex, objects, strings)."""
    if dtype.kind == "b":
        return "int32"
    if dtype.kind in "iuf" and dtype.itemsize <= 8:
        name = {"i": "int", "u": "uint", "f": "float"}[dtype.kind]
        return f"{name}{32 if dtype.itemsize <= 4 else 64}"
    return None


def dtype_code(dtype, what="x"):
    """gpuscan_dtype of a NumPy dtype, or a UsageError naming the dtypes that work."""
    entry = DTYPES.get(dtype)
    if entry is None:
        hint = ""
        wider = holding_dtype(dtype)
        if dtype.kind in "biu":
            hint = (" (cumsum also takes bool and smaller integers, which it widens to 64 bits"
                    f" like numpy.cumsum; or convert x first, e.g. x.astype(numpy.{wider}))")
        elif wider:
            hint = f" (convert x first, e.g. x.astype(numpy.{wider}))"
        raise UsageError(f"gpuscan scans {SUPPORTED}; {what} is {dtype}{hint}")
    return entry[0]


def op_code(op, dtype):
    """gpuscan_op of an operator name, checked against the dtype."""
    code = OPS.get(op) if isinstance(op, str) else None
    if code is None:
        raise UsageError(f"op={op!r} is not one of " + ", ".join(repr(o) for o in OPS))
    if op in BITWISE and dtype.kind == "f":
        raise UsageError(f"op={op!r} applies to integers only; x is {dtype}")
    return code


_CUMSUM_DTYPES = {}


def cumsum_dtype(dtype):
    """numpy.cumsum's result dtype for input `dtype` (bool and small integers widen)."""
    result = _CUMSUM_DTYPES.get(dtype)
    if result is None:
        # Asking numpy itself keeps the rule exact on every platform and numpy version.
        result = _CUMSUM_DTYPES[dtype] = np.cumsum(np.zeros(1, dtype=dtype)).dtype
    return result


def init_argument(init, dtype):
    """A ctypes value holding `init` as one element of `dtype`, or None for the identity.

    Integers must fit the type exactly and floats are refused for integer scans: an init
    that numpy would silently wrap or truncate is a UsageError instead.
    """
    if init is None:
        return None
    ctype = DTYPES[dtype][1]
    if hasattr(init, "item") and not isinstance(init, (int, float)):
        if getattr(init, "size", 1) != 1:
            raise UsageError(f"init must be one value; got an array of {init.size}")
        init = init.item()  # numpy scalars, 0-d arrays and one-element tensors
    if isinstance(init, bool):
        raise UsageError("init must be a number, not a bool")
    if dtype.kind in "iu":
        if not isinstance(init, int):
            raise UsageError(f"init={init!r} is not an integer; the scan is {dtype}")
        info = np.iinfo(dtype)
        if not info.min <= init <= info.max:
            raise UsageError(f"init={init} does not fit {dtype} ({info.min} .. {info.max})")
        return ctype(init)
    if not isinstance(init, (int, float)):
        raise UsageError(f"init={init!r} is not a number")
    return ctype(float(init))
