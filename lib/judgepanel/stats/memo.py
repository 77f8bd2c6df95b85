"""A per-process memo of computed arrays, for deterministic computations asked for again.

The analyses of one notebook repeat work on identical inputs: the same family's scores
are bootstrapped against the same human mean by several comparisons, and the same
combiner is fitted on the same features by several analyses. Both computations are
deterministic given their inputs (data, seed, settings), so a result can be handed out
again when every input is identical byte for byte. :func:`digest` builds such a key from
the inputs themselves; :class:`ArrayMemo` keeps the results, least recently used evicted
first, and hands out copies, so a caller that changes its result changes nothing stored.

Separate processes (the kernels of one report) compute some of the same results. A memo
given a folder (:meth:`ArrayMemo.share`) also writes each result there and reads there what
another process wrote, one ``.npy`` file a key (:func:`load_array`, :func:`save_array`).
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from numpy.typing import NDArray


def digest(*parts: object) -> str:
    """A key naming ``parts`` exactly: arrays by dtype, shape and bytes, the rest by repr.

    Only plain values (numbers, strings, tuples of them) should be passed besides arrays;
    their ``repr`` is their identity.
    """
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            arr = np.ascontiguousarray(part)
            h.update(f"ndarray{arr.dtype.str}{arr.shape}".encode())
            h.update(arr.tobytes())
        else:
            h.update(f"{type(part).__name__}:{part!r}".encode())
        h.update(b"\x00")
    return h.hexdigest()


def load_array(path: Path) -> NDArray | None:
    """The array another process saved at ``path``, or None (absent or unreadable: the
    caller computes it again)."""
    if not path.is_file():
        return None
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None


def save_array(path: Path, value: NDArray) -> None:
    """Save ``value`` at ``path`` whole or not at all (a reader never sees half a file);
    a failure is silent, since sharing is an economy, never a result."""
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.save(f, value, allow_pickle=False)
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)


class ArrayMemo:
    """Arrays by key, at most ``max_bytes`` of them, least recently used evicted first.

    Attributes:
        name: what is memoised (for messages and benchmarks).
        enabled: when False every lookup misses and nothing is stored.
        max_bytes: the most array bytes kept.
        hits, misses: lookups answered and not, while enabled, since the last :meth:`clear`
            (an answer read from the shared folder is a hit, counted in ``shared_hits`` too).
        shared: the folder shared with other processes (None: none; :meth:`share`).
    """

    def __init__(self, name: str, max_bytes: int) -> None:
        self.name = name
        self.enabled = True
        self.max_bytes = int(max_bytes)
        self.hits = 0
        self.misses = 0
        self.shared_hits = 0
        self.shared: Path | None = None
        self._entries: OrderedDict[str, NDArray] = OrderedDict()
        self._bytes = 0

    def share(self, folder: str | Path | None) -> None:
        """Write every result to ``folder`` from now on, and read there what other
        processes wrote (``None``: share nothing). The folder is made when first written."""
        self.shared = Path(folder) if folder else None

    def get(self, key: str | None) -> NDArray | None:
        """A copy of the array stored under ``key`` (here, else in the shared folder), or
        None (a miss; uncounted if disabled)."""
        if not self.enabled:
            return None
        if key is not None and key not in self._entries and self.shared is not None:
            found = load_array(self.shared / f"{key}.npy")
            if found is not None:
                self.shared_hits += 1
                self._keep(key, found)
        if key is None or key not in self._entries:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return self._entries[key].copy()

    def put(self, key: str | None, value: NDArray) -> None:
        """Store a copy of ``value``, and write it to the shared folder if there is one
        (nothing when disabled or ``key`` is None)."""
        if not self.enabled or key is None:
            return
        if self.shared is not None:
            save_array(self.shared / f"{key}.npy", np.asarray(value))
        self._keep(key, np.array(value, copy=True))

    def _keep(self, key: str, stored: NDArray) -> None:
        """Hold ``stored`` (not copied again) under ``key``, within :attr:`max_bytes`."""
        if stored.nbytes > self.max_bytes:
            return
        if key in self._entries:
            self._bytes -= self._entries.pop(key).nbytes
        self._entries[key] = stored
        self._bytes += stored.nbytes
        while self._bytes > self.max_bytes:
            _, old = self._entries.popitem(last=False)
            self._bytes -= old.nbytes

    def clear(self) -> None:
        """Forget every entry and reset the counters."""
        self._entries.clear()
        self._bytes = 0
        self.hits = self.misses = self.shared_hits = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays held."""
        return self._bytes

    @contextmanager
    def disabled(self) -> Iterator[ArrayMemo]:
        """Within the block everything is computed afresh (the plain path, for timing)."""
        before = self.enabled
        self.enabled = False
        try:
            yield self
        finally:
            self.enabled = before
