"""Peak resident memory of a piece of code, run in a fresh Python process (Linux).

The code is given `reset_peak()` (starts the peak again from now, returns the resident
bytes now) and `peak()` (the highest resident bytes since). They read /proc/self/status
(VmRSS, VmHWM) and reset through /proc/self/clear_refs: ru_maxrss would carry the parent's
peak over exec, and the peak of building the inputs over the step measured.

    out = run_measured("before = reset_peak(); x = bytearray(1 << 26); print(peak() - before)")
"""
from __future__ import annotations

import os
import subprocess
import sys

import toksmith

_PRELUDE = '''
def _status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field + " is not in /proc/self/status")

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status_bytes("VmRSS")

def peak():
    return _status_bytes("VmHWM")
'''


def run_measured(code: str, *args: str, timeout: float = 120) -> str:
    """Run `code` (with reset_peak and peak defined) in a fresh Python that imports this
    toksmith and the tests package; its stdout. Fails with its stderr when it fails."""
    package_root = os.path.dirname(os.path.dirname(toksmith.__file__))
    tests_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in [package_root, tests_root, os.environ.get("PYTHONPATH", "")] if p)
    result = subprocess.run([sys.executable, "-c", _PRELUDE + code, *args], capture_output=True, text=True,
                            timeout=timeout, env=dict(os.environ, PYTHONPATH=path))
    assert result.returncode == 0, result.stderr
    return result.stdout
