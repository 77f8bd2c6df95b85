"""The per-process memo of computed arrays, and the bootstrap columns it keeps."""

from __future__ import annotations

import numpy as np
import pytest

from judgepanel.stats import (
    bootstrap_arms,
    bootstrap_partials,
    max_statistic_p,
    paired_bootstrap,
    paired_bootstrap_partial,
    resample_indices,
    resampled_partial_spearman,
)
from judgepanel.stats.bootstrap import RESAMPLED
from judgepanel.stats.memo import ArrayMemo, digest
from judgepanel.studies.fusion.mtmm import paired_partials


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    y = np.round(5 + 2 * latent + rng.normal(0, 0.7, n), 1)
    a = np.round(np.clip(5 + 2 * latent + rng.normal(0, 1.5, n), 1, 10))
    b = np.round(np.clip(5 + 2 * latent + rng.normal(0, 2.0, n), 1, 10))
    return y, a, b


def test_digest_names_the_bytes_and_the_kind_of_every_part():
    x = np.arange(6, dtype=float)
    assert digest("spearman", 100, x) == digest("spearman", 100, x.copy())
    assert digest(x) != digest(x.reshape(2, 3))  # same bytes, another shape
    assert digest(x) != digest(x.astype(np.float32))
    assert digest(1, x) != digest("1", x)
    changed = x.copy()
    changed[3] = np.nextafter(changed[3], 10)
    assert digest(x) != digest(changed)


def test_memo_hands_out_copies_and_evicts_the_least_recently_used():
    memo = ArrayMemo("test", max_bytes=3 * 8 * 10)  # three arrays of ten float64
    for k in "abc":
        memo.put(k, np.full(10, ord(k), float))
    got = memo.get("a")  # a is now the most recent
    got[:] = -1
    assert memo.get("a")[0] == ord("a")
    memo.put("d", np.zeros(10))
    assert memo.get("b") is None and memo.get("c") is not None and len(memo) == 3
    assert memo.nbytes == 240
    with memo.disabled():
        assert memo.get("a") is None
        memo.put("e", np.zeros(10))
    assert memo.get("e") is None and memo.get("a") is not None
    memo.clear()
    assert len(memo) == 0 and memo.hits == memo.misses == 0


@pytest.mark.parametrize("metric", ["spearman", "kendall_b"])
def test_memoised_bootstrap_columns_equal_the_plain_computation(metric):
    y, a, b = _data()
    RESAMPLED.clear()
    with RESAMPLED.disabled():
        plain = bootstrap_arms(y, {"a": a, "b": b}, metric, n_resamples=300, seed=3)
    first = bootstrap_arms(y, {"a": a, "b": b}, metric, n_resamples=300, seed=3)
    assert RESAMPLED.misses == 2 and RESAMPLED.hits == 0
    # the columns reappear in any company and any order, byte for byte
    again = bootstrap_arms(y, {"b": b, "x": a + 1, "a": a}, metric, n_resamples=300, seed=3)
    assert RESAMPLED.hits == 2
    np.testing.assert_array_equal(first, plain)
    np.testing.assert_array_equal(again[:, [2, 0]], plain)


def test_a_bootstrap_column_misses_when_any_input_changes():
    y, a, _ = _data()
    RESAMPLED.clear()
    base = bootstrap_arms(y, {"a": a}, "spearman", n_resamples=200, seed=1)
    y2 = y.copy()
    y2[0] += 0.05
    a2 = a.copy()
    a2[5] += 1
    variants = [
        bootstrap_arms(y2, {"a": a}, "spearman", n_resamples=200, seed=1),
        bootstrap_arms(y, {"a": a2}, "spearman", n_resamples=200, seed=1),
        bootstrap_arms(y, {"a": a}, "kendall_b", n_resamples=200, seed=1),
        bootstrap_arms(y, {"a": a}, "spearman", n_resamples=200, seed=2),
    ]
    longer = bootstrap_arms(y, {"a": a}, "spearman", n_resamples=201, seed=1)
    assert RESAMPLED.hits == 0 and RESAMPLED.misses == 6
    for v in variants:
        assert not np.array_equal(v, base)
    assert longer.shape == (201, 1)  # its first 200 resamples are base's: same draws


def test_an_arm_given_twice_is_resampled_once():
    y, a, _ = _data()
    RESAMPLED.clear()
    out = bootstrap_arms(y, np.vstack([a, a]), "spearman", n_resamples=100, seed=0)
    np.testing.assert_array_equal(out[:, 0], out[:, 1])
    assert len(RESAMPLED) == 1


def test_paired_and_max_statistic_results_do_not_depend_on_the_memo():
    y, a, b = _data(seed=4)
    RESAMPLED.clear()
    with RESAMPLED.disabled():
        plain = paired_bootstrap(y, a, b, "kendall_b", n_resamples=400, seed=2)
        plain_max = max_statistic_p(y, {"a": a, "b": b}, (a + b) / 2, n_resamples=400, seed=2)
    warm = paired_bootstrap(y, a, b, "kendall_b", n_resamples=400, seed=2)
    warm_max = max_statistic_p(y, {"a": a, "b": b}, (a + b) / 2, n_resamples=400, seed=2)
    hot = paired_bootstrap(y, a, b, "kendall_b", n_resamples=400, seed=2)
    assert plain == warm == hot and plain_max == warm_max
    assert RESAMPLED.hits >= 2


def test_a_bad_resample_count_is_refused_before_the_memo_is_read():
    y, a, _ = _data()
    with pytest.raises(ValueError, match="n_resamples >= 1"):
        bootstrap_arms(y, {"a": a}, n_resamples=0)


def test_partials_of_many_arms_equal_each_arm_bootstrapped_alone():
    y, a, b = _data(n=70, seed=5)
    overall = np.round(y + np.random.default_rng(1).normal(0, 0.5, y.size), 1)
    RESAMPLED.clear()
    together = bootstrap_partials(y, np.vstack([a, b, a]), overall, n_resamples=150, seed=8)
    idx = resample_indices(y.size, 150, 8)
    for j, arm in enumerate((a, b, a)):
        alone = resampled_partial_spearman(arm, y, overall, indices=idx)
        np.testing.assert_array_equal(together[:, j], alone)
    assert len(RESAMPLED) == 2  # the repeated arm is computed once


def test_paired_partials_equal_paired_bootstrap_partial_per_pair():
    y, a, b = _data(n=70, seed=6)
    overall = np.round(y + np.random.default_rng(2).normal(0, 0.5, y.size), 1)
    RESAMPLED.clear()
    with RESAMPLED.disabled():
        plain = {
            "ab": paired_bootstrap_partial(y, a, b, overall, n_resamples=120, seed=4),
            "ba": paired_bootstrap_partial(y, b, a, overall, n_resamples=120, seed=4),
        }
    fast = paired_partials(y, {"ab": (a, b), "ba": (b, a)}, overall, 120, 4)
    assert fast == plain


def test_a_memo_reads_what_another_process_shared(tmp_path):
    """Two memos sharing a folder stand for two kernels of one report: what one computed
    the other reads, the same bytes; an unreadable file is a miss; unshared, nothing is
    written."""
    first, second = ArrayMemo("a", max_bytes=1 << 20), ArrayMemo("b", max_bytes=1 << 20)
    value = np.linspace(0, 1, 7)
    first.put("k", value)
    assert not list(tmp_path.iterdir())
    first.share(tmp_path / "shared")
    second.share(tmp_path / "shared")
    assert not (tmp_path / "shared").exists()  # made when first written
    first.put("k", value)
    got = second.get("k")
    np.testing.assert_array_equal(got, value)
    assert got.dtype == value.dtype and second.hits == second.shared_hits == 1
    assert [p.name for p in (tmp_path / "shared").iterdir()] == ["k.npy"]
    (tmp_path / "shared" / "k.npy").write_bytes(b"not an array")
    assert ArrayMemo("c", max_bytes=1 << 20).get("k") is None  # never shared: a miss
    third = ArrayMemo("c", max_bytes=1 << 20)
    third.share(tmp_path / "shared")
    assert third.get("k") is None and third.misses == 1


def test_bootstrap_columns_another_kernel_shared_are_not_computed_again(tmp_path, monkeypatch):
    """A report's kernels share bootstrap columns through the folder of their fits: a
    kernel whose own memo is empty reads them instead of resampling, bit for bit."""
    from judgepanel.stats import bootstrap as bs
    from judgepanel.studies.common.fitcache import RESAMPLED_FOLDER, share_fits

    y, a, b = _data(seed=4)
    RESAMPLED.clear()
    alone = bootstrap_arms(y, {"a": a, "b": b}, "kendall_b", n_resamples=150, seed=2)
    share_fits(tmp_path)
    try:
        RESAMPLED.clear()
        first = bootstrap_arms(y, {"a": a, "b": b}, "kendall_b", n_resamples=150, seed=2)
        assert len(list((tmp_path / RESAMPLED_FOLDER).glob("*.npy"))) == 2
        RESAMPLED.clear()  # as a fresh kernel

        def refuse(*args, **kwargs):
            raise AssertionError("resampled again although the folder holds the columns")

        monkeypatch.setattr(bs, "_resampled_arms", refuse)
        again = bootstrap_arms(y, {"b": b, "a": a}, "kendall_b", n_resamples=150, seed=2)
    finally:
        share_fits(None)
        RESAMPLED.clear()
    assert RESAMPLED.shared is None
    np.testing.assert_array_equal(first, alone)
    np.testing.assert_array_equal(again, alone[:, ::-1])
