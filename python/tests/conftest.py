"""Shared fixtures: a random generator whose seed is printed (and shown with any failure).

GPUSCAN_TEST_SEED=S reruns a failure with the same inputs.
"""
import os
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # python/gpuscan

_SEED = int(os.environ.get("GPUSCAN_TEST_SEED", np.random.SeedSequence().entropy % (1 << 32)))


def pytest_report_header(config):
    import gpuscan
    try:
        device = gpuscan.device_name()
    except gpuscan.Error as e:
        device = f"none ({e})"
    return [f"GPUSCAN_TEST_SEED={_SEED}", f"gpuscan host device: {device}"]


def pytest_terminal_summary(terminalreporter):
    # Also at the end, where `pytest -q` (ctest's python_package) shows it: the header is
    # not printed at that verbosity, and a failure needs the seed to be run again.
    terminalreporter.write_line(f"GPUSCAN_TEST_SEED={_SEED}")


@pytest.fixture
def rng(request):
    # One stream per test, derived from the session seed and the test's name, so a test's
    # inputs do not depend on which other tests ran.
    name = request.node.nodeid.encode()
    return np.random.default_rng([_SEED, int.from_bytes(name[-16:].ljust(16, b"\0"), "little") % (1 << 63)])
