"""Finding and loading libgpuscan.so, its C prototypes, and the devices opened on it.

The library is looked for, in order (DESIGN.md section 3c):
1. ``$GPUSCAN_LIBRARY`` (a path to the .so; an error if it does not load);
2. ``build/lib/libgpuscan.so`` of the repository this package sits in (after scripts/build);
3. an installed library, through the dynamic linker's search (``libgpuscan.so``).
"""
import ctypes
import ctypes.util
import os
import pathlib
import threading

from .errors import DeviceError, ForwardProgressError, UsageError

# gpuscan.h's enums.
OK, USAGE_ERROR, DEVICE_ERROR, FORWARD_PROGRESS_ERROR = 0, 1, 2, 3
BACKEND_ANY, BACKEND_VULKAN, BACKEND_CUDA = 0, 1, 2
INCLUSIVE, EXCLUSIVE, REDUCE = 0, 1, 2
(SELECT_IF, SELECT_FLAGGED, UNIQUE, PARTITION, RUN_LENGTH_ENCODE,
 PARTITION_FLAGGED) = 0, 1, 2, 3, 4, 5
PREDICATES = {"lt": 0, "le": 1, "gt": 2, "ge": 3, "eq": 4, "ne": 5}  # gpuscan_predicate


class CompactSpec(ctypes.Structure):
    """gpuscan_compact_spec: four enums, each passed as an int (gpuscan.h)."""

    _fields_ = [("compaction", ctypes.c_int), ("dtype", ctypes.c_int),
                ("predicate", ctypes.c_int), ("flags_dtype", ctypes.c_int)]


def _candidates():
    repository = pathlib.Path(__file__).resolve().parent.parent.parent
    built = repository / os.environ.get("BUILD_DIR", "build") / "lib" / "libgpuscan.so"
    if built.is_file():
        yield str(built)
    installed = ctypes.util.find_library("gpuscan")
    if installed:
        yield installed
    yield "libgpuscan.so"  # LD_LIBRARY_PATH and the linker's own directories


def _load():
    explicit = os.environ.get("GPUSCAN_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit)
        except OSError as e:
            raise DeviceError(f"GPUSCAN_LIBRARY={explicit} does not load: {e}") from None
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise DeviceError(
        "libgpuscan.so not found: build it (scripts/build puts it in build/lib), install it, or "
        "set GPUSCAN_LIBRARY to its path; tried " + "; ".join(tried))


def _declare(lib):
    c_device = ctypes.c_void_p
    status = ctypes.c_int
    signatures = {
        "gpuscan_device_open": (status, [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(c_device)]),
        "gpuscan_device_open_cuda": (status, [ctypes.c_int, ctypes.POINTER(c_device)]),
        "gpuscan_device_name": (ctypes.c_char_p, [c_device]),
        "gpuscan_device_backend": (ctypes.c_int, [c_device]),
        "gpuscan_scan_host": (status, [c_device, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                       ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                       ctypes.c_void_p]),
        "gpuscan_cuda_scan": (status, [c_device, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                       ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                       ctypes.c_void_p, ctypes.c_void_p]),
        "gpuscan_scan_rows_host": (status, [c_device, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                            ctypes.c_uint64, ctypes.c_void_p]),
        "gpuscan_cuda_scan_rows": (status, [c_device, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                            ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p]),
        "gpuscan_scan_segments_host": (status, [c_device, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                                ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                                ctypes.c_uint64, ctypes.c_void_p]),
        "gpuscan_cuda_scan_segments": (status, [c_device, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                                ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                                ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                                                ctypes.c_void_p]),
        "gpuscan_compact_host": (status, [c_device, ctypes.POINTER(CompactSpec), ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.POINTER(ctypes.c_uint64)]),
        "gpuscan_cuda_compact": (status, [c_device, ctypes.POINTER(CompactSpec), ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.c_void_p]),
        "gpuscan_cuda_pointer_device": (status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]),
        "gpuscan_last_error": (ctypes.c_char_p, []),
        "gpuscan_version": (ctypes.c_char_p, []),
    }
    for name, (restype, argtypes) in signatures.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise DeviceError(f"{lib._name} is an older libgpuscan without {name}; rebuild it") from None
        function.restype = restype
        function.argtypes = argtypes
    return lib


_lock = threading.RLock()  # host_device() loads the library under it
_lib = None


def lib():
    """The loaded library (loaded on first use, so that importing gpuscan never fails)."""
    global _lib
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib = _declare(_load())
    return _lib


def raise_for(status, what):
    """Raises the exception of a C ABI status (OK returns) with the library's message."""
    if status == OK:
        return
    message = lib().gpuscan_last_error().decode(errors="replace") or "no message"
    if status == USAGE_ERROR:
        raise UsageError(message)
    if status == FORWARD_PROGRESS_ERROR:
        raise ForwardProgressError(message)
    raise DeviceError(f"{what}: {message}")


class Device:
    """An open gpuscan device; the handle is kept for the life of the process.

    Devices are never closed: at interpreter exit the CUDA runtime or the Vulkan driver may
    already be torn down, and releasing a device then can crash (docs/performance.md).
    """

    def __init__(self, handle):
        self.handle = handle
        self.name = lib().gpuscan_device_name(handle).decode(errors="replace")
        self.backend = "cuda" if lib().gpuscan_device_backend(handle) == BACKEND_CUDA else "vulkan"

    def __repr__(self):
        return f"gpuscan.Device({self.name!r}, backend={self.backend!r})"


_host_device = None
_cuda_devices = {}


def host_device():
    """The best device (CUDA GPU, else Vulkan GPU, else lavapipe), opened once.

    ``$GPUSCAN_DEVICE`` picks another by name (a case-insensitive substring).
    """
    global _host_device
    if _host_device is None:
        with _lock:
            if _host_device is None:
                handle = ctypes.c_void_p()
                name = os.environ.get("GPUSCAN_DEVICE")
                raise_for(lib().gpuscan_device_open(BACKEND_ANY, name.encode() if name else None,
                                                    ctypes.byref(handle)), "opening a device")
                _host_device = Device(handle)
    return _host_device


def cuda_device(ordinal):
    """The handle of CUDA device `ordinal`, opened once."""
    handle = _cuda_devices.get(ordinal)
    if handle is None:
        with _lock:
            handle = _cuda_devices.get(ordinal)
            if handle is None:
                opened = ctypes.c_void_p()
                raise_for(lib().gpuscan_device_open_cuda(ordinal, ctypes.byref(opened)),
                          f"opening CUDA device {ordinal}")
                handle = _cuda_devices[ordinal] = opened.value
    return handle


def pointer_device(pointer):
    """The CUDA ordinal of the device that holds `pointer`."""
    ordinal = ctypes.c_int(-1)
    raise_for(lib().gpuscan_cuda_pointer_device(pointer, ctypes.byref(ordinal)),
              "finding the device of a CUDA pointer")
    return ordinal.value
