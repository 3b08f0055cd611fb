"""Helpers for the Python tests under tests/python: small run folders made by the edm binary.

Each test script is run by ctest as `python3 tests/python/test_<name>.py EDM_BINARY` (see
tests/CMakeLists.txt) and makes its own runs in a temporary folder, removed at the end.
"""
import os
import shutil
import subprocess
import sys
import tempfile

# A cell small enough for seconds on a CPU device: 4 electrons, 6 × 5 pixels, 256 samples.
CELL = """
[run]
scenario = "inverse_thomson"
mode = "{mode}"
[laser]
profile = "gaussian"
a0 = 0.3
duration = 10.7e-15
waist = 10e-6
[electrons]
distribution = "sunflower"
count = {count}
radius = 3e-6
gamma = 3.0
[screen]
distance = 0.02
half_width = 5e-5
nx = 6
ny = 5
samples = 256
samples_per_period = 128
[accumulator]
electron_batch = {batch}
devices = "0"
"""


def edm_binary():
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit(f"usage: {sys.argv[0]} EDM_BINARY")
    return sys.argv[1]


class Workspace:
    """A temporary folder for one test script (removed on exit unless EDM_KEEP_TEST_DIRS is set)."""

    def __init__(self, tag):
        self.dir = tempfile.mkdtemp(prefix=f"edm-pytest-{tag}-")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not os.environ.get("EDM_KEEP_TEST_DIRS"):
            shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def campaign(self, name, mode="total", count=4, batch=0):
        path = os.path.join(self.dir, name + ".toml")
        with open(path, "w") as fh:
            fh.write(CELL.format(mode=mode, count=count, batch=batch))
        return path


def run_edm(binary, *args, check=True):
    """Runs edm with args; returns CompletedProcess (stdout and stderr together)."""
    p = subprocess.run([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"edm {' '.join(args)} exited {p.returncode}:\n{p.stdout}")
    return p


def make_run(binary, ws, name, mode="total", spectrum=False):
    """A run folder <ws>/<name> from the small cell; with spectrum=True also its spectrum.h5."""
    out = os.path.join(ws.dir, name)
    run_edm(binary, "run", ws.campaign(name, mode), "--quiet", "--output", out)
    if spectrum:
        run_edm(binary, "spectrum", out)
    return out
