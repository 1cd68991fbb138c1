"""Stand-ins the Python tests share.

HostAsDevice: the array adapter interface the CUDA paths use (gpuscan._cuda's TorchArrays
and CupyArrays), over NumPy arrays standing in for memory of "device 0", so that the
device-side paths' logic (_cuda.scan, _segments.on_device, _compaction.on_cuda) runs where CI
has no GPU. Outputs from empty_of come poisoned, so that an element past a count would show;
read_count counts its calls.

DLPackOnly: host memory that shows itself through DLPack alone (no buffer protocol, no
__array__), as a framework's CPU tensor may."""
import numpy as np


class HostAsDevice:
    framework = "fake"

    def __init__(self):
        self.counts_read = 0

    def holds(self, a):
        return isinstance(a, np.ndarray)

    def ordinal(self, a):
        return 0

    def dtype(self, a):
        return a.dtype

    def flat(self, a, dtype):
        return np.ascontiguousarray(a, dtype=dtype).reshape(-1)

    def size(self, a):
        return a.size

    def pointer(self, a):
        return a.ctypes.data

    def stream(self, a, ordinal):
        return 0

    # The scans' (_cuda.scan, _segments.on_device).
    def upload(self, host, ordinal):
        return host.copy()

    def download(self, a):
        return a

    def empty(self, like, n):
        return np.empty((n,) if n is not None else (), dtype=like.dtype)

    def check_out(self, out, expected, dtype, ordinal):
        from gpuscan import _cuda
        _cuda._check_out_shape(True, "host", out.dtype, dtype, out.shape, expected,
                               out.flags.c_contiguous)
        return out

    def copy(self, dst, src):
        np.copyto(dst, src)

    # The compaction's (_compaction.on_cuda).
    def empty_of(self, like, n, dtype):
        out = np.empty(n, dtype=dtype)
        out.view(np.uint8)[:] = 0xA5
        return out

    def read_count(self, count, ordinal):
        self.counts_read += 1
        return int(count[0])


class DLPackOnly:
    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()
