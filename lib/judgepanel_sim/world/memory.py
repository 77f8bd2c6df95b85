"""glibc's treatment of freed memory in the world's worker processes."""

from __future__ import annotations

import sys


def keep_freed_memory() -> None:
    """Ask glibc to keep freed memory instead of returning it to the system at once.

    Rendering an image and computing its statistics create many short-lived arrays of a
    few megabytes. By default glibc maps each afresh, and the page faults on first touch
    cost about a third of the time on virtual machines. Called in a worker process before
    its first task (it only changes where memory comes from, never a value); elsewhere a
    no-op.

    Measured on the 2-core build machine, writing a 300-image EVA-like world: 8.03 and
    7.31 s without it, 5.65 and 4.96 s with it (two runs each, alternating).
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 64 << 20)  # M_MMAP_THRESHOLD: serve blocks below 64 MB from the heap
        libc.mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD: keep up to 256 MB of freed heap
    except (OSError, AttributeError):
        pass
