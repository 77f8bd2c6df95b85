"""The store's writer locks: one byte of the store file per dataset whose calls are sent.

Two scoring processes sending one dataset's calls would send the same calls twice (the
store would keep one answer, but both would be paid for), so the second one is refused;
processes sending different datasets may run side by side. The locks are
open-file-description locks on the store file itself, one byte per dataset far past the
bytes SQLite locks, so every path to the file (a symlink, a hard link, a relative path)
meets them, closing another descriptor of the file does not drop them, and the kernel
releases them even on ``kill -9``. Where the system has no such locks, one ``flock`` on
the whole file stands for every dataset.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import struct
from pathlib import Path

from judgepanel.core.store.schema import StoreError

_LOCK_BASE = 1 << 40
"""Where the datasets' lock bytes start: far past the bytes SQLite locks (at 1 GiB)."""
_LOCK_SPAN = 1 << 31
"""How many bytes the datasets' locks are spread over; locking all of them locks the store."""


def _lock_byte(dataset: str) -> int:
    """The byte of the store file whose lock stands for sending this dataset's calls."""
    digest = hashlib.blake2b(dataset.encode("utf-8"), digest_size=8).digest()
    return _LOCK_BASE + int.from_bytes(digest, "big") % _LOCK_SPAN


def _set_lock(fd: int, kind: int, start: int, length: int) -> None:
    # struct flock: l_type, l_whence (short each), l_start, l_len (off_t), l_pid (pid_t,
    # which must be 0 for open-file-description locks), padded to 32 bytes.
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", kind, os.SEEK_SET, start, length, 0))


def take_send_locks(fd: int, datasets: list[str] | None, path: Path) -> list[tuple[int, int]]:
    """Take the writer locks of these datasets (every dataset when ``None``), or none.

    Returns the byte ranges taken. Raises ``StoreError`` naming the busy dataset.
    """
    if not hasattr(fcntl, "F_OFD_SETLK"):  # pragma: no cover - not Linux: one lock for all
        ranges: list[tuple[int, int]] = [(-1, 0)]
    elif datasets is None:
        ranges = [(_LOCK_BASE, _LOCK_SPAN)]
    else:
        ranges = sorted({(_lock_byte(d), 1) for d in datasets})
    held: list[tuple[int, int]] = []
    for start, length in ranges:
        try:
            if start < 0:  # pragma: no cover
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                _set_lock(fd, fcntl.F_WRLCK, start, length)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            drop_send_locks(fd, held)
            whole = datasets is None or start < 0  # a lock on everything names nothing
            what = "calls" if whole else _busy_names(datasets, start)
            raise StoreError(
                f"{path}: another process is sending {what} into this store; "
                "wait for it to finish (or stop it) and run again"
            ) from None
        held.append((start, length))
    return held


def _busy_names(datasets: list[str], start: int) -> str:
    names = [d for d in datasets if _lock_byte(d) == start]
    return "calls of " + ", ".join(names)


def drop_send_locks(fd: int, held: list[tuple[int, int]]) -> None:
    """Release the byte ranges ``take_send_locks`` took, last first."""
    for start, length in reversed(held):
        if start < 0:  # pragma: no cover
            fcntl.flock(fd, fcntl.LOCK_UN)
        else:
            _set_lock(fd, fcntl.F_UNLCK, start, length)
    held.clear()
