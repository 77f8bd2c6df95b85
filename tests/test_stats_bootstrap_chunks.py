"""The bootstrap draws its resamples a block at a time, and that changes no number."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from judgepanel.stats import bootstrap as bs
from judgepanel.stats import paired_bootstrap, resample_blocks, resample_indices, summarize_paired
from judgepanel.stats.correlation import correlate


def _spy_blocks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Record the (rows, bytes) of every block of indices the bootstraps draw."""
    seen: list[tuple[int, int]] = []
    real_blocks = bs.resample_blocks

    def spy(*args: int) -> Iterator[np.ndarray]:
        for block in real_blocks(*args):
            seen.append((block.shape[0], block.nbytes))
            yield block

    monkeypatch.setattr(bs, "resample_blocks", spy)
    return seen


def _arms(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A human mean with ties and two judges, one better than the other."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    y = np.round(5 + 2 * latent + rng.normal(0, 0.5, n), 1)
    a = np.round(5 + 2 * latent + rng.normal(0, 1.5, n))
    b = 5 + 2 * latent + rng.normal(0, 2.5, n)
    return y, a, b


@pytest.mark.parametrize("n", [1, 7, 64, 501])
@pytest.mark.parametrize("rows", [1, 3, 7, 40, 41, 100])
def test_blocks_stack_to_the_one_draw(n, rows):
    blocks = list(resample_blocks(n, 41, 11, rows))
    assert all(block.shape[0] <= rows for block in blocks)
    np.testing.assert_array_equal(np.vstack(blocks), resample_indices(n, 41, 11))


@pytest.mark.parametrize(("count_rows", "block_multiples"), [(3, 1), (3, 2), (3, 7), (5, 4)])
@pytest.mark.parametrize("metric", ["spearman", "kendall_b"])
def test_chunked_bootstrap_equals_unchunked_bit_for_bit(
    monkeypatch, count_rows, block_multiples, metric
):
    """Blocks of 3, 6, 21 and 20 resamples, none dividing B = 103, against one (B, n) draw.

    Chunks of draw counts are kept small (3 or 5 resamples) so that a block holds several."""
    n, n_resamples, seed = 120, 103, 4
    y, a, b = _arms(n, 2)
    monkeypatch.setattr(
        bs, "_KENDALL_CHUNK_CELLS" if metric == "kendall_b" else "_CHUNK_CELLS", count_rows * n
    )
    monkeypatch.setattr(bs, "INDEX_BLOCK_BYTES", 8 * n * count_rows * block_multiples)
    blocks = _spy_blocks(monkeypatch)
    arms = np.vstack([a, b])
    unchunked = bs._resampled_arms(y, arms, metric, indices=resample_indices(n, n_resamples, seed))
    with bs.RESAMPLED.disabled(), bs.DRAWN.disabled():  # the path of draws too large to keep
        chunked = bs.bootstrap_arms(y, arms, metric, n_resamples=n_resamples, seed=seed)
        result = paired_bootstrap(y, a, b, metric, n_resamples=n_resamples, seed=seed)
    rows = [r for r, _ in blocks]
    assert max(rows) == count_rows * block_multiples < n_resamples and sum(rows) == 2 * n_resamples
    np.testing.assert_array_equal(chunked, unchunked)
    expected = summarize_paired(
        unchunked[:, 0],
        unchunked[:, 1],
        correlate(y, a, metric),
        correlate(y, b, metric),
        metric=metric,
        n=n,
    )
    assert result == expected


def test_partial_bootstrap_is_chunked_alike(monkeypatch):
    n, n_resamples = 90, 57
    y, a, b = _arms(n, 5)
    covar = np.round(y + np.random.default_rng(1).normal(size=n))
    monkeypatch.setattr(bs, "_CHUNK_CELLS", 4 * n)
    monkeypatch.setattr(bs, "INDEX_BLOCK_BYTES", 8 * n * 8)
    unchunked = bs._resampled_partials(
        y, np.vstack([a, b]), covar[:, None], indices=resample_indices(n, n_resamples, 3)
    )
    with bs.RESAMPLED.disabled(), bs.DRAWN.disabled():
        chunked = bs.bootstrap_partials(
            y, np.vstack([a, b]), covar, n_resamples=n_resamples, seed=3
        )
    np.testing.assert_array_equal(chunked, unchunked)


def test_automatic_blocks_cap_the_indices_held(monkeypatch):
    """The public path never draws the (B, n) matrix; each block stays within the budget
    (both arms read one pass of blocks)."""
    n, n_resamples = 20_000, 50
    budget = 8 * n * 30  # 30 resamples; a chunk of counts is 12 (250,000 cells // n)
    monkeypatch.setattr(bs, "INDEX_BLOCK_BYTES", budget)
    blocks = _spy_blocks(monkeypatch)

    def refuse(*args: int) -> None:
        raise AssertionError("the whole index matrix was drawn")

    monkeypatch.setattr(bs, "resample_indices", refuse)
    y, a, b = _arms(n, 7)
    with bs.RESAMPLED.disabled(), bs.DRAWN.disabled():
        paired_bootstrap(y, a, b, n_resamples=n_resamples, seed=1)
    held = [size for _, size in blocks]
    assert held and max(held) <= budget and sum(held) == 8 * n * n_resamples
    assert max(held) == 8 * n * 24  # two whole chunks of 12


def test_block_size_at_ava_scale():
    """255,000 images, B = 10,000: 20 GB as one draw, a bounded block here."""
    n, n_resamples = 255_000, 10_000
    rows = bs.block_rows(n, n_resamples)
    assert 1 <= rows * 8 * n <= bs.INDEX_BLOCK_BYTES
    assert bs.block_rows(500, n_resamples) == n_resamples  # small n: one block, as before
    assert bs.block_rows(n, n_resamples, multiple=7) % 7 == 0
    assert bs.block_rows(10**9, 3) == 1  # a resample larger than the budget: one at a time
    with pytest.raises(ValueError, match="rows must be at least 1"):
        next(resample_blocks(5, 5, 0, 0))


@pytest.mark.parametrize("metric", ["spearman", "kendall_b", "partial"])
def test_kept_draws_give_the_drawn_numbers_bit_for_bit(monkeypatch, metric):
    """The draw counts kept in :data:`DRAWN`, and Spearman's target kept in :data:`TARGETS`,
    give the numbers of draws made block by block, with chunks (7 resamples) and blocks
    (21) that do not divide B = 103."""
    n, n_resamples, seed = 120, 103, 4
    y, a, b = _arms(n, 2)
    arms = np.vstack([a, b])
    covar = np.round(y + np.random.default_rng(1).normal(size=n))
    for cells in ("_CHUNK_CELLS", "_KENDALL_CHUNK_CELLS"):
        monkeypatch.setattr(bs, cells, 7 * n)
    monkeypatch.setattr(bs, "INDEX_BLOCK_BYTES", 8 * n * 21)

    def run() -> np.ndarray:
        if metric == "partial":
            return bs.bootstrap_partials(y, arms, covar, n_resamples=n_resamples, seed=seed)
        return bs.bootstrap_arms(y, arms, metric, n_resamples=n_resamples, seed=seed)

    with bs.RESAMPLED.disabled():
        with bs.DRAWN.disabled(), bs.TARGETS.disabled():
            streamed = run()
        bs.DRAWN.clear()
        bs.TARGETS.clear()
        kept = run()  # draws and keeps the counts (and Spearman's target)
        again = run()  # from the kept counts (and target)
    assert bs.DRAWN.misses == 1 and bs.DRAWN.hits == 1
    assert bs.TARGETS.hits == (2 if metric == "spearman" else 0)  # its ranks and sums
    np.testing.assert_array_equal(kept, streamed)
    np.testing.assert_array_equal(again, streamed)
    counts = bs.drawn_counts(n, n_resamples, seed)
    assert counts is not None and counts.dtype == np.uint8  # 120 draws at most fit a byte
    np.testing.assert_array_equal(counts.T, bs.multiplicities(resample_indices(n, 103, 4), n))


def test_draws_larger_than_the_memo_are_not_kept(monkeypatch):
    """A draw the memo cannot hold is drawn block by block each time and never kept."""
    n, n_resamples = 300, 40
    monkeypatch.setattr(bs.DRAWN, "max_bytes", n * n_resamples * 2 - 1)  # counts need uint16
    bs.DRAWN.clear()
    assert bs.drawn_counts(n, n_resamples, 0) is None
    y, a, b = _arms(n, 3)
    blocks = _spy_blocks(monkeypatch)
    with bs.RESAMPLED.disabled():
        first = paired_bootstrap(y, a, b, n_resamples=n_resamples, seed=0)
        second = paired_bootstrap(y, a, b, n_resamples=n_resamples, seed=0)
    assert first == second and len(bs.DRAWN) == 0
    assert sum(rows for rows, _ in blocks) == 2 * n_resamples  # drawn afresh both times


def test_a_kept_target_serves_only_its_own_target_and_resamples():
    """Another target, another seed or another B finds no kept target of the first."""
    n = 60
    y, a, b = _arms(n, 8)
    bs.TARGETS.clear()
    with bs.RESAMPLED.disabled():
        first = bs.bootstrap_arms(y, {"a": a}, n_resamples=50, seed=1)
        assert bs.TARGETS.hits == 0 and len(bs.TARGETS) == 2
        for other_y, seed, resamples in ((b, 1, 50), (y, 2, 50), (y, 1, 49)):
            fresh = bs.bootstrap_arms(other_y, {"a": a}, n_resamples=resamples, seed=seed)
            with bs.TARGETS.disabled(), bs.DRAWN.disabled():
                expected = bs.bootstrap_arms(other_y, {"a": a}, n_resamples=resamples, seed=seed)
            np.testing.assert_array_equal(fresh, expected)
        assert bs.TARGETS.hits == 0
        np.testing.assert_array_equal(bs.bootstrap_arms(y, {"a": a}, n_resamples=50, seed=1), first)
    assert bs.TARGETS.hits == 2


@pytest.mark.parametrize("n", [1, 120, 300])
@pytest.mark.parametrize("rows", [None, 7, 21, 103])
def test_count_blocks_are_each_blocks_counts_bit_for_bit(n, rows):
    """The kept counts cut into blocks are ``multiplicities(block, n).T`` of the drawn
    blocks, in the same memory layout (so the products over them sum in the same order);
    with the memo off the blocks are drawn and counted as before."""
    n_resamples, seed = 103, 5
    expected = [
        bs.multiplicities(block, n).T
        for block in resample_blocks(n, n_resamples, seed, rows or bs.block_rows(n, n_resamples))
    ]
    bs.DRAWN.clear()
    with bs.DRAWN.disabled():
        drawn = list(bs.count_blocks(n, n_resamples, seed, rows))
    kept = list(bs.count_blocks(n, n_resamples, seed, rows))
    again = list(bs.count_blocks(n, n_resamples, seed, rows))
    assert bs.DRAWN.misses == 1 and bs.DRAWN.hits == 1
    for made in (drawn, kept, again):
        assert len(made) == len(expected)
        for got, want in zip(made, expected, strict=True):
            assert got.dtype == want.dtype and got.strides == want.strides
            np.testing.assert_array_equal(got, want)
    # the counts themselves: row b's bincount, laid out items x resamples
    rows_counts = np.vstack([np.bincount(r, minlength=n) for r in resample_indices(n, 103, 5)])
    np.testing.assert_array_equal(np.hstack(kept), rows_counts.T)
