"""The exceptions gpuscan raises; they mirror the C ABI's statuses (gpuscan.h)."""


class Error(Exception):
    """Every failure of gpuscan."""


class UsageError(Error, ValueError):
    """The request is wrong: an unsupported dtype or operator, a mismatched ``out=``, ...

    Also a ValueError, so code that catches NumPy's argument errors catches it too.
    """


class DeviceError(Error, RuntimeError):
    """No usable device, no library, or a driver call failed."""


class ForwardProgressError(DeviceError):
    """A scan that waits on other workgroups gave up on a GPU without forward progress.

    The default algorithm (decoupled fallback) never raises it; it is here because the
    C ABI has the status (GPUSCAN_FORWARD_PROGRESS_ERROR).
    """
