"""A Spearman bootstrap whose target is too large to keep holds one chunk of it at a time."""

from __future__ import annotations

import tracemalloc

import numpy as np

from judgepanel.stats import bootstrap as bs


def _peak_bytes(y: np.ndarray, x: np.ndarray, n_resamples: int) -> tuple[int, np.ndarray]:
    bs.RESAMPLED.clear()
    tracemalloc.start()
    try:
        column = bs.bootstrap_arms(y, {"x": x}, n_resamples=n_resamples, seed=5)
        return tracemalloc.get_traced_memory()[1], column[:, 0]
    finally:
        tracemalloc.stop()


def test_a_target_too_large_to_keep_is_not_held_whole(monkeypatch) -> None:
    n, n_resamples = 3000, 2000
    rng = np.random.default_rng(1)
    y = rng.normal(size=n).round(1)
    x = (y + rng.normal(size=n)).round(1)
    whole = 8 * n * n_resamples  # the target's weighted ranks on every resample (48 MB)
    monkeypatch.setattr(bs, "_CHUNK_CELLS", 300_000)  # chunks of 100 resamples
    monkeypatch.setattr(bs.DRAWN, "max_bytes", 0)  # counts drawn a block at a time,
    monkeypatch.setattr(bs, "INDEX_BLOCK_BYTES", 2**20)  # of 100 resamples (2.4 MB)
    monkeypatch.setattr(bs.TARGETS, "max_bytes", whole // 4)  # too large to keep
    bs.TARGETS.clear()
    peak, column = _peak_bytes(y, x, n_resamples)
    assert peak < whole // 3, f"held {peak / 2**20:.1f} MiB of a {whole / 2**20:.1f} MiB target"
    assert len(bs.TARGETS) == 0
    # the same numbers as a bootstrap that keeps its target
    monkeypatch.setattr(bs.TARGETS, "max_bytes", 2 * whole)
    _, kept = _peak_bytes(y, x, n_resamples)
    assert len(bs.TARGETS) > 0
    np.testing.assert_array_equal(column, kept)
