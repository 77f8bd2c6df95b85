"""A per-process memo of computed arrays, for deterministic computations asked for again.

The analyses of one notebook repeat work on identical inputs: the same family's scores
are bootstrapped against the same human mean by several comparisons, and the same
combiner is fitted on the same features by several analyses. Both computations are
deterministic given their inputs (data, seed, settings), so a result can be handed out
again when every input is identical byte for byte. :func:`digest` builds such a key from
the inputs themselves; :class:`ArrayMemo` keeps the results, least recently used evicted
first, and hands out copies, so a caller that changes its result changes nothing stored.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

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


class ArrayMemo:
    """Arrays by key, at most ``max_bytes`` of them, least recently used evicted first.

    Attributes:
        name: what is memoised (for messages and benchmarks).
        enabled: when False every lookup misses and nothing is stored.
        max_bytes: the most array bytes kept.
        hits, misses: lookups answered and not, while enabled, since the last :meth:`clear`.
    """

    def __init__(self, name: str, max_bytes: int) -> None:
        self.name = name
        self.enabled = True
        self.max_bytes = int(max_bytes)
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, NDArray] = OrderedDict()
        self._bytes = 0

    def get(self, key: str | None) -> NDArray | None:
        """A copy of the array stored under ``key``, or None (a miss; uncounted if disabled)."""
        if not self.enabled:
            return None
        if key is None or key not in self._entries:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return self._entries[key].copy()

    def put(self, key: str | None, value: NDArray) -> None:
        """Store a copy of ``value`` (nothing when disabled or ``key`` is None)."""
        if not self.enabled or key is None:
            return
        stored = np.array(value, copy=True)
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
        self.hits = self.misses = 0

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
