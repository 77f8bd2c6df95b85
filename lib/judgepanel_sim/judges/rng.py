"""The per-request generator, built in half of ``np.random.default_rng``'s time.

The server seeds one generator per request from a 128-bit digest of it.
``np.random.default_rng(seed)`` builds a ``SeedSequence`` from the seed, then PCG64 asks
it for four 64-bit words through ``generate_state``, which numpy wraps in a Python-level
``np.errstate`` context (about half the cost; its arithmetic is typed 32-bit integer code
that never reaches a floating-point error state). Here the same ``SeedSequence`` method is
called without that wrapper and PCG64 receives its words, so the generator is identical
to ``default_rng(seed)`` draw for draw (``tests/test_sim_rng.py`` compares the states over
many seeds). Should numpy stop exposing the unwrapped method, ``default_rng`` is used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence, SeedSequence

_STATE_WORDS: Callable[..., np.ndarray] | None = getattr(
    SeedSequence.generate_state, "__wrapped__", None
)


class _Words(ISeedSequence):
    """Hands PCG64 the state words its seed sequence drew."""

    __slots__ = ("words",)

    def __init__(self, words: np.ndarray) -> None:
        self.words = words

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if n_words != len(self.words) or np.dtype(dtype) != np.uint64:
            raise ValueError("these words only seed PCG64")
        return self.words


def generator(seed: int) -> np.random.Generator:
    """The generator ``np.random.default_rng(seed)`` returns, for an integer ``seed``."""
    if _STATE_WORDS is None:
        return np.random.default_rng(seed)
    words = _STATE_WORDS(SeedSequence(seed), 4, np.uint64)
    return np.random.Generator(np.random.PCG64(_Words(words)))
