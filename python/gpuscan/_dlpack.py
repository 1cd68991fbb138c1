"""Reading the two protocols by which a CUDA array shows its memory: DLPack
(``__dlpack__``, the array API standard's form) and the CUDA array interface (v3, with
its ``stream``). Each gives a Memory: what gpuscan needs to scan the array in place."""
import ctypes

import numpy as np

from .errors import UsageError

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
# DLPack's stream argument for CUDA: 1 is the legacy default stream (0 is not allowed).
DLPACK_LEGACY_DEFAULT_STREAM = 1


class Memory:
    """A strided array in device memory: base pointer, shape, strides in bytes (None when
    C-contiguous), NumPy dtype, CUDA ordinal (None: ask the pointer), the stream on which
    the producer's data is ready (a cudaStream_t as an int; 0: the legacy default stream),
    and whatever keeps the memory alive."""

    __slots__ = ("pointer", "shape", "strides", "dtype", "ordinal", "stream", "owner", "readonly")

    def __init__(self, pointer, shape, strides, dtype, ordinal, stream, owner, readonly=False):
        self.pointer, self.shape, self.strides, self.dtype = pointer, shape, strides, dtype
        self.ordinal, self.stream, self.owner, self.readonly = ordinal, stream, owner, readonly

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def is_c_contiguous(self):
        if self.strides is None:
            return True
        expected = self.dtype.itemsize
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True


# ---- the CUDA array interface -------------------------------------------------------------

def from_cuda_array_interface(x):
    """The Memory of an object with ``__cuda_array_interface__`` (versions 0..3)."""
    cai = x.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise UsageError("masked CUDA arrays (__cuda_array_interface__ 'mask') are not supported")
    try:
        dtype = np.dtype(cai["typestr"])
    except TypeError:
        raise UsageError(f"__cuda_array_interface__ typestr {cai['typestr']!r} is not a dtype") from None
    pointer, readonly = cai["data"]
    # v3: the stream on which the data is ready; absent or None: ready for any stream.
    stream = cai.get("stream")
    if stream is None:
        stream = 0
    elif stream in (1, 2):  # CAI's names for the legacy and per-thread default streams
        stream = 0 if stream == 1 else 2
    strides = cai.get("strides")
    return Memory(pointer or 0, tuple(cai["shape"]), tuple(strides) if strides else None, dtype,
                  None, stream, x, bool(readonly))


# ---- DLPack -------------------------------------------------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _Deleter)]

_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
_capsule_set_name.restype = ctypes.c_int
_capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]

_DL_CODES = {0: "i", 1: "u", 2: "f"}  # kDLInt, kDLUInt, kDLFloat; bool (6) and others refused


class _Consumed:
    """Holds a consumed DLPack capsule's tensor; calls its deleter when released."""

    def __init__(self, managed):
        self._managed = managed

    def release(self):
        managed, self._managed = self._managed, None
        if managed is not None and managed.contents.deleter:
            managed.contents.deleter(managed)

    def __del__(self):
        self.release()


def dlpack_device(x):
    """(device type, device id) of an object with ``__dlpack_device__``, or None."""
    device = getattr(x, "__dlpack_device__", None)
    return tuple(device()) if device is not None else None


def from_dlpack(x, stream=DLPACK_LEGACY_DEFAULT_STREAM):
    """The Memory of a CUDA array with ``__dlpack__``, exported for `stream` (DLPack's
    numbering: 1 = the legacy default stream), on which it is then ready."""
    device_type, _ = dlpack_device(x)
    capsule = x.__dlpack__(stream=stream) if device_type in (KDL_CUDA, KDL_CUDA_MANAGED) else x.__dlpack__()
    address = _capsule_get_pointer(capsule, b"dltensor")
    managed = ctypes.cast(address, ctypes.POINTER(_DLManagedTensor))
    # The consumer owns the tensor now: renaming keeps the capsule's destructor from freeing it.
    _capsule_set_name(capsule, b"used_dltensor")
    owner = _Consumed(managed)
    t = managed.contents.dl_tensor
    kind = _DL_CODES.get(t.dtype.code)
    if kind is None or t.dtype.lanes != 1:
        owner.release()
        raise UsageError(f"DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits, "
                         f"{t.dtype.lanes} lanes) is not one gpuscan scans")
    dtype = np.dtype(f"{kind}{t.dtype.bits // 8}")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] * dtype.itemsize for i in range(t.ndim)) if t.strides else None
    stream_handle = 0 if stream in (None, DLPACK_LEGACY_DEFAULT_STREAM) else stream
    return Memory((t.data or 0) + t.byte_offset, shape, strides, dtype, t.device.device_id,
                  stream_handle, owner)
