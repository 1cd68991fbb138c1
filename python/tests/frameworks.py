"""The CUDA array frameworks the tests use where they work: torch and cupy, each with whether
it finds a CUDA GPU, why not, and pytest marks that skip saying so (CI has neither GPU nor,
usually, the frameworks)."""
import pytest

try:
    import torch
    TORCH = torch.cuda.is_available()
    TORCH_WHY = "" if TORCH else "torch finds no CUDA GPU"
except ImportError:
    torch, TORCH, TORCH_WHY = None, False, "torch is not installed"
try:
    import cupy
    CUPY = cupy.cuda.runtime.getDeviceCount() > 0
    CUPY_WHY = ""
except Exception as e:  # ImportError, or cupy's own error where there is no driver
    cupy, CUPY, CUPY_WHY = None, False, f"cupy unusable: {type(e).__name__}"

needs_torch = pytest.mark.skipif(not TORCH, reason=f"needs torch with a CUDA GPU: {TORCH_WHY}")
needs_cupy = pytest.mark.skipif(not CUPY, reason=f"needs cupy with a CUDA GPU: {CUPY_WHY}")
needs_torch_cpu = pytest.mark.skipif(torch is None, reason="torch is not installed")
