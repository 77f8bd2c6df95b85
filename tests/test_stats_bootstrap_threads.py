"""Bootstrap chunks scored on worker threads give the one-thread numbers bit for bit.

From ``THREADED_ITEMS`` images the Spearman and partial bootstraps, and the split-half
ceiling's blocks, are scored on threads; these tests force the threads at small n and
compare every value with the one-thread run, and check the ordered map they share.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from test_stats_bootstrap_chunks import _arms

from judgepanel.stats import bootstrap as bs
from judgepanel.stats import noise_ceiling
from judgepanel.stats.ceiling import _common


@pytest.mark.parametrize("metric", ["spearman", "kendall_b"])
@pytest.mark.parametrize("threads", [2, 3])
def test_threaded_arms_equal_one_thread_bit_for_bit(metric, threads):
    y, a, b = _arms(3_000, seed=11)
    arms = np.vstack([a, b])
    one = bs._resampled_arms(y, arms, metric, draws=(700, 5), threads=1)
    many = bs._resampled_arms(y, arms, metric, draws=(700, 5), threads=threads)
    assert np.array_equal(one, many, equal_nan=True)
    # the drawn resamples, not some other ones: the first agrees with scipy's value
    idx = bs.resample_indices(y.size, 1, 5)[0]
    from judgepanel.stats.correlation import correlate

    assert one[0, 0] == pytest.approx(correlate(y[idx], a[idx], metric), abs=1e-12)


def test_threaded_partials_equal_one_thread_bit_for_bit():
    y, a, b = _arms(2_500, seed=12)
    covar = np.round(y + np.random.default_rng(1).normal(0, 1, y.size))[:, None]
    arms = np.vstack([a, b])
    one = bs._resampled_partials(y, arms, covar, draws=(300, 2), threads=1)
    many = bs._resampled_partials(y, arms, covar, draws=(300, 2), threads=2)
    assert np.array_equal(one, many, equal_nan=True)


def test_a_kept_target_made_on_threads_serves_the_next_bootstrap(monkeypatch):
    y, a, b = _arms(2_000, seed=13)
    bs.TARGETS.clear()
    first = bs._resampled_arms(y, a[None, :], "spearman", draws=(400, 3), threads=2)
    key = bs._target_key(y, (400, 3), bs._CHUNK_CELLS)
    assert key is not None and bs.TARGETS.get(key) is not None
    second = bs._resampled_arms(y, b[None, :], "spearman", draws=(400, 3), threads=1)
    bs.TARGETS.clear()
    fresh = bs._resampled_arms(y, b[None, :], "spearman", draws=(400, 3), threads=1)
    assert np.array_equal(second, fresh, equal_nan=True)
    assert not np.array_equal(first, second)


def test_map_chunks_keeps_order_and_uses_workers():
    names: set[str] = set()

    def score(value: int) -> int:
        names.add(threading.current_thread().name)
        return value * value

    makers = [(lambda v=v: v) for v in range(200)]
    assert list(bs.map_chunks(score, makers, threads=3, in_flight=5)) == [v * v for v in range(200)]
    assert names and all(name.startswith("bootstrap") for name in names)
    names.clear()
    assert list(bs.map_chunks(score, makers[:4], threads=1)) == [0, 1, 4, 9]
    assert names == {threading.current_thread().name}


def test_map_chunks_raises_a_chunks_error_and_stops():
    started: list[int] = []

    def score(value: int) -> int:
        started.append(value)
        if value == 3:
            raise ValueError("chunk 3 is bad")
        return value

    makers = [(lambda v=v: v) for v in range(1_000)]
    with pytest.raises(ValueError, match="chunk 3 is bad"):
        list(bs.map_chunks(score, makers, threads=2, in_flight=4))
    assert len(started) < 1_000  # the chunks not yet handed out never ran


def test_chunk_threads_limits(monkeypatch):
    assert bs.chunk_threads(bs.THREADED_ITEMS - 1) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert bs.chunk_threads(10 * bs.THREADED_ITEMS) == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setattr(bs.os, "sched_getaffinity", lambda _pid: {0, 1, 2}, raising=False)
    assert bs.chunk_threads(bs.THREADED_ITEMS) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert bs.chunk_threads(bs.THREADED_ITEMS) == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert bs.chunk_threads(bs.THREADED_ITEMS) == 3


def test_vote_ceiling_is_the_same_with_threads(monkeypatch):
    rng = np.random.default_rng(4)
    n = 1_500
    centre = rng.normal(5.5, 1.0, n)
    levels = np.arange(1, 11)
    rows = []
    for i in range(n):
        votes = np.clip(np.round(rng.normal(centre[i], 1.6, rng.integers(20, 60))), 1, 10)
        for level in levels:
            count = int((votes == level).sum())
            if count:
                rows.append({"image_id": f"i{i}", "score": float(level), "count": count})
    votes = pd.DataFrame(rows)
    monkeypatch.setattr(_common, "BLOCK_CELLS", 7 * n)  # several blocks of splits
    one = noise_ceiling(votes, n_splits=40, seed=2)
    monkeypatch.setattr(_common, "chunk_threads", lambda _n: 2)
    many = noise_ceiling(votes, n_splits=40, seed=2)
    assert one.method == many.method == "vote_split_half"
    assert one == many
