#!/usr/bin/env python3
"""Where the host time of one gpuscan call on a 2^16-element CUDA tensor goes: the ctypes
floor, the C ABI call alone, torch allocations, and whole calls against torch.cumsum
(median of 2000 calls each, nothing synchronised between them). Needs torch and a CUDA GPU.

    PYTHONPATH=python python3 bench/python_host_parts.py
"""

import pathlib
import statistics
import sys
import time

import torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))
import gpuscan
from gpuscan import _library
x = torch.rand(1 << 16, device="cuda")
out = torch.empty_like(x)
lib = _library.lib()
dev = _library.cuda_device(0)
def med(f, n=2000):
    for _ in range(50): f()
    torch.cuda.synchronize()
    s = []
    for _ in range(n):
        t = time.perf_counter_ns(); f(); s.append(time.perf_counter_ns() - t)
    torch.cuda.synchronize()
    return statistics.median(s) / 1000
xp, op = x.data_ptr(), out.data_ptr()
parts = {
  "ctypes gpuscan_version (ctypes floor)": lambda: lib.gpuscan_version(),
  "ctypes gpuscan_last_error": lambda: lib.gpuscan_last_error(),
  "ctypes gpuscan_cuda_scan only": lambda: lib.gpuscan_cuda_scan(dev, 2, 0, 0, xp, op, 65536, None, None),
  "x.new_empty((n,))": lambda: x.new_empty((65536,)),
  "x.new_empty(n)": lambda: x.new_empty(65536),
  "torch.empty(n, dtype=, device=x.device)": lambda: torch.empty(65536, dtype=torch.float32, device=x.device),
  "torch.empty_like(x)": lambda: torch.empty_like(x),
  "x.data_ptr() + x.get_device() + x.is_contiguous()": lambda: (x.data_ptr(), x.get_device(), x.is_contiguous()),
  "gpuscan.inclusive_scan(x)": lambda: gpuscan.inclusive_scan(x),
  "gpuscan.cumsum(x)": lambda: gpuscan.cumsum(x),
  "gpuscan.inclusive_scan(x, out=out)": lambda: gpuscan.inclusive_scan(x, out=out),
  "torch.cumsum(x, 0)": lambda: torch.cumsum(x, 0),
}
for name, f in parts.items():
    print(f"{med(f):8.2f} us  {name}", flush=True)
