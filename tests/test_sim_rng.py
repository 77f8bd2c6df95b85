"""The simulated server's per-request generator equals ``np.random.default_rng``."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from judgepanel_sim.judges import rng
from judgepanel_sim.judges.server import request_rng


def _seeds() -> list[int]:
    draw = random.Random(12)
    edges = [0, 1, 2**32 - 1, 2**32, 2**64 + 5, 2**96, 2**127, 2**128 - 1, 2**200 + 3]
    return edges + [draw.getrandbits(128) for _ in range(2000)]


def test_generator_is_default_rng_draw_for_draw():
    assert rng._STATE_WORDS is not None, "numpy no longer exposes the unwrapped method"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or other warning on the fast path
        for seed in _seeds():
            fast, ref = rng.generator(seed), np.random.default_rng(seed)
            assert fast.bit_generator.state == ref.bit_generator.state, seed
    fast, ref = rng.generator(2**127 + 9), np.random.default_rng(2**127 + 9)
    assert np.array_equal(fast.standard_normal(50), ref.standard_normal(50))
    assert np.array_equal(fast.integers(0, 10, 50), ref.integers(0, 10, 50))


def test_request_generator_is_fixed_by_the_request():
    a = request_rng(0, "sim-aurora-v1", ("s", "u", ""), ["d1"], 7, counter=1)
    b = request_rng(0, "sim-aurora-v1", ("s", "u", ""), ["d1"], 7, counter=99)
    c = request_rng(0, "sim-aurora-v1", ("s", "u", ""), ["d1"], None, counter=1)
    assert a.random() == b.random()  # a seeded request ignores the counter
    assert c.random() != request_rng(0, "sim-aurora-v1", ("s", "u", ""), ["d1"], None, 2).random()


def test_fallback_without_the_unwrapped_method(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(rng, "_STATE_WORDS", None)
    seed = 2**100 + 1
    assert (
        rng.generator(seed).bit_generator.state == np.random.default_rng(seed).bit_generator.state
    )
