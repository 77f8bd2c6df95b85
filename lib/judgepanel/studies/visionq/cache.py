"""Bounded caches of encoded composites and of the crops they are laid out from, so that
each composite is rendered once per plan and each crop decoded and scaled once per question.

Every (question, rotation) composite is sent to every family, and rendering plus PNG
encoding costs about 20-30 ms of CPU, mostly in the encoder. The planner puts the families
of one composite next to each other, so a small least-recently-used cache turns five
renders into one. It is bounded by entries and by bytes, so a long plan never holds more
than a few composites in memory. The n rotations of a question lay out the same n crops,
so a second, smaller cache keeps them opened and scaled for the next rotation.

A key is built once even when several threads ask for it: the first builds it and the
others wait for its value. :meth:`CompositeCache.prefetch` builds a key on a worker
thread, so the next composite is rendered (Pillow encodes with the interpreter's lock
released) while the caller sends the current one.

The key carries each crop file's identity (path, size, modification time), so a crop
rewritten in place is rendered again instead of being served from the cache.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FileIdentity = tuple[str, int, int]
"""(path, size in bytes, modification time in ns)."""

DEFAULT_MAX_ENTRIES = 32
DEFAULT_MAX_BYTES = 64 * 2**20
PREFETCH_THREADS = 2
"""Worker threads that render composites ahead of the caller."""


def file_identity(paths: Iterable[str | Path]) -> tuple[FileIdentity, ...]:
    """Path, size and modification time of each file, in order.

    Raises:
        OSError: a file cannot be read (the call is then recorded as not built).
    """
    out = []
    for path in paths:
        st = os.stat(path)
        out.append((str(path), int(st.st_size), int(st.st_mtime_ns)))
    return tuple(out)


@dataclass(frozen=True)
class CacheStats:
    """Counters of a :class:`CompositeCache`.

    Attributes:
        hits: lookups served from the cache (or waiting for another thread's build).
        misses: builds (a lookup's, or a prefetch's).
        evictions: entries dropped to stay within the bounds.
        entries: entries held now.
        nbytes: bytes held now (a data URL's characters: it is ASCII).
    """

    hits: int
    misses: int
    evictions: int
    entries: int
    nbytes: int


class CompositeCache:
    """A least-recently-used map from a key to a built value (an encoded composite's data
    URL; or a question's scaled crops, with ``size`` counting their bytes).

    Args:
        max_entries: most entries held.
        max_bytes: most bytes held in total (``size`` of each value; a data URL's
            characters by default); a single value larger than this is returned but not
            kept.
        size: the bytes a value holds.
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        size: Callable[[Any], int] = len,
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"cache bounds must be positive, got {max_entries}, {max_bytes}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._size = size
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._pending: dict[Hashable, Future] = {}  # keys being built, and their values
        self._nbytes = 0
        self._hits = self._misses = self._evictions = 0
        self._pool: ThreadPoolExecutor | None = None
        self._pid = os.getpid()
        # Requests are built on the event loop or in a batch's build loop, and composites
        # ahead of them on worker threads; the lock keeps the map and counters consistent.
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The cached value of ``key``, or ``build()`` (then kept, within the bounds); a key
        another thread is building is waited for, not built twice."""
        with self._lock:
            self._after_fork()
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
                self._hits += 1
                return value
            pending = self._pending.get(key)
            waits = pending is not None
            if pending is None:
                pending = self._pending[key] = Future()
            else:
                self._hits += 1
        if waits:
            return pending.result()
        return self._fill(key, build, pending)

    def prefetch(self, key: Hashable, build: Callable[[], Any]) -> None:
        """Start building ``key`` on a worker thread unless it is held or being built; an
        error it raises is raised again by the :meth:`get` that waits for it."""
        with self._lock:
            self._after_fork()
            if key in self._data or key in self._pending:
                return
            pending = self._pending[key] = Future()
            if self._pool is None:
                self._pool = ThreadPoolExecutor(PREFETCH_THREADS, "visionq-render")
            pool = self._pool
        pool.submit(self._fill, key, build, pending)

    def _after_fork(self) -> None:
        """In a forked child, forget the parent's worker threads and the builds they had
        in flight: neither exists here (lock held)."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._pool = None
            self._pending.clear()

    def _fill(self, key: Hashable, build: Callable[[], Any], pending: Future) -> Any:
        """Build the value of ``key`` (claimed by ``pending``), keep it and hand it to
        whoever waits for it."""
        try:
            value = build()
        except BaseException as exc:
            with self._lock:
                self._pending.pop(key, None)
            pending.set_exception(exc)
            raise
        with self._lock:
            self._pending.pop(key, None)
            self._misses += 1
            self._keep(key, value)
        pending.set_result(value)
        return value

    def _keep(self, key: Hashable, value: Any) -> None:
        """Hold ``value`` under ``key`` and evict down to the bounds (lock held)."""
        nbytes = self._size(value)
        if nbytes > self.max_bytes or key in self._data:
            return
        self._data[key] = value
        self._nbytes += nbytes
        while len(self._data) > self.max_entries or self._nbytes > self.max_bytes:
            _, old = self._data.popitem(last=False)
            self._nbytes -= self._size(old)
            self._evictions += 1

    def clear(self) -> None:
        """Drop every entry and reset the counters (keys being built are left to end)."""
        with self._lock:
            self._data.clear()
            self._nbytes = 0
            self._hits = self._misses = self._evictions = 0

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                self._hits, self._misses, self._evictions, len(self._data), self._nbytes
            )

    def __len__(self) -> int:
        return len(self._data)
