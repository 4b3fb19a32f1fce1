"""The trainers' `num_threads` option, checked.

>>> thread_count(2)
2
"""
from __future__ import annotations

import os

# The core's thread pool runs at most 64 helpers beside the calling thread
# (_core/threadpool.pyx MAX_WORKERS).
MAX_THREADS = 65


def thread_count(num_threads: int | None) -> int:
    """`num_threads`, checked (None: the cores this process may run on)."""
    if num_threads is None:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise ValueError(f"num_threads must be an int >= 1, not {num_threads!r}")
    # the result never depends on the thread count: more than the pool runs is no error
    return min(num_threads, MAX_THREADS)
