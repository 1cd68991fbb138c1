"""Scans of CUDA arrays in place on the device, on the producer's stream (DESIGN.md 3c).

One algorithm (``scan``) over an adapter per kind of array:
- ``TorchArrays`` and ``CupyArrays`` know their framework: they read the pointer, device
  and current stream directly (the framework's own form of what __dlpack__ and
  __cuda_array_interface__ say, without their per-call cost), allocate results there,
  and copy where the input is not contiguous or not of the scan's dtype (pointers need
  only be aligned to the element size, include/gpuscan/cuda.hpp, which every framework's
  arrays are);
- ``ProtocolArrays`` serves any other producer through __cuda_array_interface__ or
  __dlpack__. It cannot allocate or copy in a framework it does not know, so it needs
  ``out=`` and an input that is already contiguous, aligned and of the scan's dtype.
"""
import ctypes

import numpy as np

from . import _dlpack, _library, _segments
from ._types import dtype_code
from .errors import UsageError



def misaligned(pointer, itemsize):
    """Whether a pointer is not aligned to its element size, all the CUDA kernels need
    (include/gpuscan/cuda.hpp; data that is not 16-byte aligned is read element by element)."""
    return pointer % itemsize != 0


class TorchArrays:
    framework = "torch"

    def __init__(self, torch):
        self.torch = torch
        names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                 "float64", "complex64", "complex128", "uint16", "uint32", "uint64"]
        self.to_numpy = {getattr(torch, name): np.dtype(name) for name in names if hasattr(torch, name)}
        self.from_numpy = {dtype: t for t, dtype in self.to_numpy.items()}
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # what current_stream() wraps
        self.current_stream = raw if raw is not None else lambda ordinal: torch.cuda.current_stream(ordinal).cuda_stream
        self.fast_plans = {}  # (x.dtype, result dtype argument, op) -> (gpuscan_dtype, gpuscan_op)
        self.cuda_scan = _library.lib().gpuscan_cuda_scan
        self.cuda_scan_rows = _library.lib().gpuscan_cuda_scan_rows

    def fast_scan(self, x, op, kind, result_dtype, out=None, last_axis=False):
        """The common case at the lowest host cost (DESIGN.md section 8: <= 15 us a call):
        a contiguous, aligned CUDA tensor of the scan's dtype, no init, and either no out
        or an out that fits as it is (same device and dtype, the result's shape, contiguous,
        aligned, apart from x). With `last_axis` (axis=-1), a scan of each row of a tensor
        of two or more dimensions (reductions take the general path). None where it does
        not apply, and the caller takes the general path, which also says what is wrong."""
        plan = self.fast_plans.get((x.dtype, result_dtype, op))
        if plan is None or not x.is_cuda or x.requires_grad or not x.is_contiguous():
            return None
        pointer = x.data_ptr()
        n = x.numel()
        if misaligned(pointer, x.element_size()) or n == 0:
            return None
        if last_axis:
            if kind == _library.REDUCE or x.dim() < 2:
                return None
            shape = x.shape
        else:
            shape = () if kind == _library.REDUCE else (n,)
        ordinal = x.get_device()
        if out is None:
            result = x.new_empty(shape)
            out_pointer = result.data_ptr()
        else:
            result = out
            if (kind == _library.REDUCE or not isinstance(out, self.torch.Tensor)
                    or out.dtype != x.dtype or out.shape != shape or not out.is_cuda
                    or out.get_device() != ordinal or out.requires_grad or not out.is_contiguous()):
                return None
            out_pointer = out.data_ptr()
            size = n * out.element_size()
            if misaligned(out_pointer, out.element_size()) or (out_pointer < pointer + size and
                                                               pointer < out_pointer + size):
                return None
        device = _library.cuda_device(ordinal)
        stream = self.current_stream(ordinal)
        if last_axis:
            status = self.cuda_scan_rows(device, plan[0], plan[1], kind, pointer, out_pointer,
                                         n // shape[-1], shape[-1], None, stream)
        else:
            status = self.cuda_scan(device, plan[0], plan[1], kind, pointer, out_pointer, n, None,
                                    stream)
        if status:
            _library.raise_for(status, f"scanning on CUDA device {ordinal}")
        return result

    def dtype(self, x):
        dtype = self.to_numpy.get(x.dtype)
        if dtype is None:
            raise UsageError(f"x is {x.dtype}, which gpuscan does not scan")
        return dtype

    def flat(self, x, dtype):
        if x.requires_grad:
            x = x.detach()  # the result is not differentiable (gpuscan has no backward)
        if self.to_numpy.get(x.dtype) != dtype:
            x = x.to(self.torch_dtype(dtype))
        if not x.is_contiguous():
            x = x.contiguous()  # row-major, as numpy's axis=None flattening reads it
        if misaligned(x.data_ptr(), x.element_size()):
            x = x.clone()
        return x.reshape(-1)

    def torch_dtype(self, dtype):
        t = self.from_numpy.get(dtype)
        if t is None:
            raise UsageError(f"this torch has no {dtype} tensors")
        return t

    def pointer(self, a):
        return a.data_ptr()

    def ordinal(self, a):
        return a.get_device()

    def size(self, a):
        return a.numel()

    def empty(self, like, n):
        return like.new_empty((n,) if n is not None else ())

    # Compaction (_compaction.on_cuda): outputs of another dtype, and the count read back.
    def empty_of(self, like, n, dtype):
        return like.new_empty((n,), dtype=self.torch_dtype(dtype))

    def read_count(self, count, ordinal):
        # item() copies on the current stream of count's device, the one the count was
        # written on, and waits for it.
        return int(count.item())

    def check_out(self, out, expected, dtype, ordinal):
        if not isinstance(out, self.torch.Tensor):
            raise UsageError(f"out must be a torch.Tensor for a torch x; got {type(out).__name__}")
        _check_out_shape(out.is_cuda and out.get_device() == ordinal, f"cuda:{ordinal}",
                         self.to_numpy.get(out.dtype, out.dtype), dtype, tuple(out.shape),
                         expected, out.is_contiguous())
        if out.requires_grad:
            raise UsageError("out requires grad; gpuscan writes it without recording a graph")
        return out

    def copy(self, dst, src):
        dst.copy_(src)

    def stream(self, a, ordinal):
        return self.current_stream(ordinal)

    # CSR offsets of a segmented scan (_segments.on_device).
    def holds(self, a):
        return isinstance(a, self.torch.Tensor) and a.is_cuda

    def upload(self, host, ordinal):
        if not host.flags.writeable:
            host = host.copy()  # torch.from_numpy warns about read-only arrays
        return self.torch.from_numpy(host).to(f"cuda:{ordinal}")

    def download(self, a):
        return a.detach().cpu().numpy()


class CupyArrays:
    framework = "cupy"

    def __init__(self, cupy):
        self.cupy = cupy
        self.fast_plans = {}  # as TorchArrays'
        self.cuda_scan = _library.lib().gpuscan_cuda_scan
        self.cuda_scan_rows = _library.lib().gpuscan_cuda_scan_rows

    def fast_scan(self, x, op, kind, result_dtype, out=None, last_axis=False):
        """As TorchArrays.fast_scan, for an array on the current device and no out."""
        plan = self.fast_plans.get((x.dtype, result_dtype, op))
        if plan is None or out is not None or not x.flags.c_contiguous:
            return None
        pointer = x.data.ptr
        n = x.size
        cuda = self.cupy.cuda
        ordinal = cuda.runtime.getDevice()
        if misaligned(pointer, x.itemsize) or n == 0 or x.device.id != ordinal:
            return None
        if last_axis and (kind == _library.REDUCE or x.ndim < 2):
            return None
        shape = x.shape if last_axis else () if kind == _library.REDUCE else (n,)
        result = self.cupy.empty(shape, dtype=x.dtype)
        device = _library.cuda_device(ordinal)
        stream = cuda.get_current_stream().ptr
        if last_axis:
            status = self.cuda_scan_rows(device, plan[0], plan[1], kind, pointer, result.data.ptr,
                                         n // shape[-1], shape[-1], None, stream)
        else:
            status = self.cuda_scan(device, plan[0], plan[1], kind, pointer, result.data.ptr, n,
                                    None, stream)
        if status:
            _library.raise_for(status, f"scanning on CUDA device {ordinal}")
        return result

    def dtype(self, x):
        return x.dtype

    def flat(self, x, dtype):
        if x.dtype != dtype:
            with x.device:
                x = x.astype(dtype)
        if not x.flags.c_contiguous:
            with x.device:
                x = self.cupy.ascontiguousarray(x)
        if misaligned(x.data.ptr, x.itemsize):
            with x.device:
                x = x.copy()
        return x.reshape(-1)

    def pointer(self, a):
        return a.data.ptr

    def ordinal(self, a):
        return a.device.id

    def size(self, a):
        return a.size

    def empty(self, like, n):
        with like.device:
            return self.cupy.empty((n,) if n is not None else (), dtype=like.dtype)

    # Compaction (_compaction.on_cuda): outputs of another dtype, and the count read back.
    def empty_of(self, like, n, dtype):
        with like.device:
            return self.cupy.empty((n,), dtype=dtype)

    def read_count(self, count, ordinal):
        # The count was written on the device's current stream: wait for that stream, then
        # copy (a copy on another stream would not wait for it).
        with self.cupy.cuda.Device(ordinal):
            self.cupy.cuda.get_current_stream().synchronize()
            return int(count.get()[0])

    def check_out(self, out, expected, dtype, ordinal):
        if not isinstance(out, self.cupy.ndarray):
            raise UsageError(f"out must be a cupy.ndarray for a cupy x; got {type(out).__name__}")
        _check_out_shape(out.device.id == ordinal, f"GPU {ordinal}", out.dtype, dtype, out.shape,
                         expected, out.flags.c_contiguous)
        return out

    def copy(self, dst, src):
        with dst.device:
            self.cupy.copyto(dst, src)

    def stream(self, a, ordinal):
        cuda = self.cupy.cuda
        if cuda.runtime.getDevice() == ordinal:
            return cuda.get_current_stream().ptr
        with cuda.Device(ordinal):
            return cuda.get_current_stream().ptr

    # CSR offsets of a segmented scan (_segments.on_device).
    def holds(self, a):
        return isinstance(a, self.cupy.ndarray)

    def upload(self, host, ordinal):
        with self.cupy.cuda.Device(ordinal):
            return self.cupy.asarray(host)

    def download(self, a):
        return self.cupy.asnumpy(a)


class ProtocolArrays:
    """Any CUDA array, through __cuda_array_interface__ (preferred: it names the stream)
    or __dlpack__."""

    framework = None

    @staticmethod
    def memory(x):
        if hasattr(x, "__cuda_array_interface__"):
            memory = _dlpack.from_cuda_array_interface(x)
            if memory.pointer:
                memory.ordinal = _library.pointer_device(memory.pointer)
            return memory
        return _dlpack.from_dlpack(x)

    def dtype(self, x):
        return x.dtype

    def flat(self, x, dtype):
        if x.dtype != dtype:
            raise UsageError(f"x is {x.dtype} and the scan {dtype}: convert x in its framework "
                             "first (gpuscan converts torch and cupy arrays only)")
        if not x.is_c_contiguous():
            raise UsageError("x is not contiguous: make it contiguous in its framework first "
                             "(gpuscan copies torch and cupy arrays only)")
        if misaligned(x.pointer, np.dtype(dtype).itemsize):
            raise UsageError("x's data is not aligned to its element size: copy it in its framework "
                             "first (gpuscan copies torch and cupy arrays only)")
        return x

    def pointer(self, a):
        return a.pointer

    def ordinal(self, a):
        return a.ordinal if a.ordinal is not None else 0

    def size(self, a):
        return a.size

    def empty(self, like, n):
        raise UsageError("gpuscan allocates results as torch tensors and cupy arrays only; for "
                         "another CUDA array pass out= (an array of the result's dtype, shape "
                         "and device; reduce needs a torch or cupy array)")

    def check_out(self, out, expected, dtype, ordinal):
        memory = self.memory(out)
        if memory.readonly:
            raise UsageError("out is read-only")
        if misaligned(memory.pointer, np.dtype(dtype).itemsize):
            raise UsageError("out's data is not aligned to its element size")
        _check_out_shape(memory.ordinal in (None, ordinal), f"GPU {ordinal}", memory.dtype, dtype,
                         memory.shape, expected, memory.is_c_contiguous())
        return memory

    def copy(self, dst, src):
        raise UsageError("out overlaps x: gpuscan scans out of place, and copies only torch "
                         "and cupy arrays")

    def stream(self, a, ordinal):
        return a.stream


def _check_out_shape(same_device, device, out_dtype, dtype, shape, expected, contiguous):
    if not same_device:
        raise UsageError(f"out must be on x's device ({device})")
    if out_dtype != dtype:
        raise UsageError(f"out is {out_dtype}; the result is {dtype}")
    if tuple(shape) != expected:
        raise UsageError(f"out has shape {tuple(shape)}; the result has shape {expected}")
    if not contiguous:
        raise UsageError("out must be contiguous")


def scan(arrays, x, dtype, op, kind, init, out, rows=None, segments=None, check_segments=True):
    """The scan (kind INCLUSIVE/EXCLUSIVE) or reduction (REDUCE: a 0-d array) of CUDA array
    `x` as `dtype`, enqueued on the stream `arrays` names for it; nothing synchronises.
    With `rows` (axis=-1: rows, row length), each row of x's last axis on its own: a result
    of x's shape (REDUCE: without the last axis). With `segments` (CSR offsets of 1-D x, as
    the caller gave them; _segments.on_device reads, checks and places them), each segment
    on its own: a result of x's shape (REDUCE: one value per segment); checking device
    offsets waits for the stream once, unless check_segments is False."""
    shape = tuple(x.shape)
    source = arrays.flat(x, dtype)
    n = arrays.size(source)
    ordinal = arrays.ordinal(source)
    source_pointer = arrays.pointer(source)
    offsets = None
    if rows is not None:
        result_shape = shape[:-1] if kind == _library.REDUCE else shape
        out_n = rows[0] if kind == _library.REDUCE else n
    elif segments is not None:
        offsets = _segments.on_device(arrays, segments, n, ordinal, check_segments)
        segment_count = arrays.size(offsets) - 1
        result_shape = (segment_count,) if kind == _library.REDUCE else (n,)
        out_n = result_shape[0]
    else:
        result_shape = () if kind == _library.REDUCE else (n,)
        out_n = 1 if kind == _library.REDUCE else n
    if out is None:
        result = target = arrays.empty(source, None if result_shape == () else out_n)
        if out_n == 0:
            return _shaped(result, result_shape)
    else:
        result = target = arrays.check_out(out, result_shape, dtype, ordinal)
        if out_n == 0:
            return _returned(out, result)
        out_pointer = arrays.pointer(result)
        itemsize = dtype.itemsize
        if misaligned(out_pointer, itemsize) or (out_pointer < source_pointer + n * itemsize
                                       and source_pointer < out_pointer + out_n * itemsize):
            # In place (out=x) or overlapping: scan into a temporary, then copy.
            target = arrays.empty(source, out_n)
    init_pointer = ctypes.byref(init) if init is not None else None
    stream = arrays.stream(source, ordinal) or None
    if rows is not None:
        status = _library.lib().gpuscan_cuda_scan_rows(
            _library.cuda_device(ordinal), dtype_code(dtype), op, kind, source_pointer or None,
            arrays.pointer(target), rows[0], rows[1], init_pointer, stream)
    elif offsets is not None:
        status = _library.lib().gpuscan_cuda_scan_segments(
            _library.cuda_device(ordinal), dtype_code(dtype), op, kind, source_pointer or None,
            arrays.pointer(target), n, arrays.pointer(offsets), segment_count, init_pointer,
            stream)
    else:
        status = _library.lib().gpuscan_cuda_scan(
            _library.cuda_device(ordinal), dtype_code(dtype), op, kind, source_pointer or None,
            arrays.pointer(target), n, init_pointer, stream)
    if status:
        _library.raise_for(status, f"scanning on CUDA device {ordinal}")
    if target is not result:
        arrays.copy(result, target.reshape(result.shape) if hasattr(target, "reshape") else target)
    return _returned(out, _shaped(result, result_shape) if out is None else result)


def _shaped(result, shape):
    # Results are allocated flat; a batched one takes x's shape (without the last axis for a
    # reduction). Torch and cupy arrays reshape without a copy.
    return result if tuple(result.shape) == shape else result.reshape(shape)


def _returned(out, result):
    # ProtocolArrays checks `out` into a Memory; the caller gets their own object back.
    return out if isinstance(result, _dlpack.Memory) else result
