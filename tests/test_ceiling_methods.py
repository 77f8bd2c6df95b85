"""The ceiling each data shape supports: vote histograms, summaries, means, and the choice.

The agreement tests reduce per-rater ratings of the synthetic EVA-like and PARA-like worlds
to what other datasets release (a vote histogram, or each image's mean, SD and n) and ask
the reduced methods for the per-rater split-half ceiling of the same images.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgepanel.stats.ceiling import (
    MEAN_ONLY_REASON,
    NoiseCeiling,
    _common,
    noise_ceiling,
    spearman_brown,
    split_halves,
)
from judgepanel_sim.world import EVA_WORLD, PARA_WORLD, simulate

PER_RATER, VOTES = "per_rater_split_half", "vote_split_half"

COLUMNS = {
    "eva": ("image_id", "user_id", "score"),
    "para": ("imageName", "userId", "aestheticScore"),
}
# Each world with all its raters (22-40 an image) and with a few (lower reliability).
CASES = [("eva", None), ("eva", 6), ("para", None), ("para", 10)]


@pytest.fixture(scope="module")
def worlds() -> dict[str, pd.DataFrame]:
    """Per-rater ratings of both synthetic worlds, 400 images each (no pixels)."""
    return {
        "eva": simulate(EVA_WORLD, 400, seed=3).ratings,
        "para": simulate(PARA_WORLD, 400, seed=3).ratings,
    }


def _world(worlds: dict[str, pd.DataFrame], name: str, keep: int | None) -> pd.DataFrame:
    """A world's ratings, each image's first ``keep`` raters only (lower reliability)."""
    ratings = worlds[name]
    return ratings if keep is None else ratings.groupby(COLUMNS[name][0], sort=False).head(keep)


def _histogram(ratings: pd.DataFrame, item: str, score: str) -> pd.DataFrame:
    """Rater ids dropped: votes counted per image and score level, long format."""
    return ratings.groupby([item, score]).size().rename("count").reset_index()


def _summary(ratings: pd.DataFrame, item: str, score: str) -> pd.DataFrame:
    """Rater ids and votes dropped: each image's mean, sample SD and rating count."""
    return ratings.groupby(item)[score].agg(mean="mean", sd="std", n="size").reset_index()


def _ordinal_raters(n_images: int, seed: int, noise_sd: float = 1.0) -> pd.DataFrame:
    """Exchangeable raters: truth ~ N(3, 0.8^2), ratings truth + N(0, noise_sd^2) rounded
    to the levels 1..5, 4 to 9 raters an image (odd counts included)."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(3.0, 0.8, n_images)
    k = rng.integers(4, 10, n_images)
    img = np.repeat(np.arange(n_images), k)
    score = np.clip(np.round(truth[img] + rng.normal(0, noise_sd, img.size)), 1, 5)
    rater = np.concatenate([np.arange(c) for c in k])
    return pd.DataFrame({"image_id": img, "rater_id": rater, "score": score})


# --- agreement with the per-rater method -----------------------------------------------------


@pytest.mark.parametrize("metric", ["spearman", "pearson"])
@pytest.mark.parametrize(("name", "keep"), CASES)
def test_votes_agree_with_per_rater_split_half(worlds, name, keep, metric):
    """Tolerance: a random split of an image's k raters into floor(k/2) and the rest puts a
    multivariate hypergeometric count vector in the first half, which is what the vote
    method draws, so on the same images both ceilings estimate the same number and differ
    only by Monte Carlo error: SE = sqrt((sd_a^2 + sd_b^2) / S) from each method's spread of
    per-split ceilings over S splits. Assert |diff| < 3 SE + 0.001 (the floor only guards
    a zero spread). Measured: |diff| <= 0.0007, |z| <= 1.1 in every case."""
    item, rater, score = COLUMNS[name]
    ratings = _world(worlds, name, keep)
    splits = 200
    per_rater = noise_ceiling(
        ratings, columns={"item": item, "rater": rater, "score": score}, n_splits=splits,
        metric=metric,
    )  # fmt: skip
    votes = noise_ceiling(
        _histogram(ratings, item, score), VOTES, columns={"item": item, "score": score},
        n_splits=splits, metric=metric,
    )  # fmt: skip
    se = np.hypot(per_rater.ceiling_sd, votes.ceiling_sd) / np.sqrt(splits)
    diff = votes.ceiling - per_rater.ceiling
    print(f"votes {name} keep={keep} {metric}: diff {diff:+.4f}, SE {se:.4f}, z {diff / se:+.2f}")
    assert abs(diff) < 3 * se + 0.001
    assert votes.method == "vote_split_half" and per_rater.method == "per_rater_split_half"
    assert (votes.n_images, votes.n_ratings) == (per_rater.n_images, per_rater.n_ratings)
    assert votes.median_raters == per_rater.median_raters


@pytest.mark.parametrize("metric", ["spearman", "pearson"])
@pytest.mark.parametrize(("name", "keep"), CASES)
def test_summaries_agree_with_per_rater_split_half(worlds, name, keep, metric):
    """Tolerance: the two are different estimators of the full-count mean's reliability,
    so their difference varies with the images drawn as well as with the splits. The image
    part is a bootstrap SE: resample the images 100 times, recompute both ceilings on each
    resample (the per-rater one from 50 fixed splits' half-means, the summary one afresh),
    and take the SD of the differences; the split part is each method's spread of
    per-split ceilings / sqrt(S). Assert |diff| < 3 sqrt(SE_boot^2 + SE_mc^2) + 0.005; the
    floor covers what neither SE sees: the summary method's normal errors against ratings
    on a discrete bounded scale, and Spearman-Brown's approximation where the halves
    differ by one rater. Measured on these worlds: |diff| <= 0.0074 (EVA-like, 6 raters,
    Spearman), |z| <= 1.31 everywhere."""
    item, rater, score = COLUMNS[name]
    ratings = _world(worlds, name, keep)
    summary = _summary(ratings, item, score)
    splits = 50
    columns = {"item": item, "rater": rater, "score": score}
    per_rater = noise_ceiling(ratings, columns=columns, n_splits=splits, metric=metric)
    ctt = noise_ceiling(summary, columns={"item": item}, n_splits=splits, metric=metric)
    assert ctt.method == "summary_ctt" and ctt.n_images == per_rater.n_images

    items = summary[item].to_numpy()
    half_a, half_b = split_halves(ratings, items, n_splits=splits, seed=0, columns=columns)
    rng = np.random.default_rng(1)
    diffs = []
    for _ in range(100):
        idx = rng.integers(0, items.size, items.size)
        a, b = half_a[:, idx], half_b[:, idx]
        if metric == "spearman":
            a, b = stats.rankdata(a, axis=1), stats.rankdata(b, axis=1)
        r = np.mean([np.corrcoef(a[s], b[s])[0, 1] for s in range(splits)])
        resampled = summary.iloc[idx].assign(**{item: np.arange(idx.size)})
        again = noise_ceiling(resampled, columns={"item": item}, n_splits=splits, metric=metric)
        diffs.append(again.ceiling - np.sqrt(spearman_brown(r)))
    se_boot = float(np.std(diffs, ddof=1))
    spread = per_rater.ceiling_sd**2 + (0.0 if metric == "pearson" else ctt.ceiling_sd**2)
    se = np.hypot(se_boot, np.sqrt(spread / splits))
    diff = ctt.ceiling - per_rater.ceiling
    print(f"summary {name} keep={keep} {metric}: diff {diff:+.4f}, SE {se:.4f}, z {diff / se:+.2f}")
    assert abs(diff) < 3 * se + 0.005


def test_votes_equal_per_rater_in_expectation_with_exchangeable_raters():
    """With many splits both methods' mean split-half r converge to the same expectation
    (same split distribution, see above); 3000 splits each, tolerance 3 SE of the
    difference of two means of independent splits, sqrt((sd_a^2 + sd_b^2) / S)."""
    ratings = _ordinal_raters(120, seed=21)
    hist = _histogram(ratings, "image_id", "score")
    splits = 3000
    for metric in ("pearson", "spearman"):
        per_rater = noise_ceiling(ratings, n_splits=splits, seed=1, metric=metric)
        votes = noise_ceiling(hist, n_splits=splits, seed=2, metric=metric)
        se = np.hypot(per_rater.split_half_r_sd, votes.split_half_r_sd) / np.sqrt(splits)
        assert abs(votes.split_half_r - per_rater.split_half_r) < 3 * se
        assert votes.split_half_r_sd == pytest.approx(per_rater.split_half_r_sd, rel=0.1)


def test_half_draws_have_the_multivariate_hypergeometric_moments():
    """Half A's mean of floor(n/2) votes drawn without replacement has the population mean
    and variance sigma^2 / h * (N - h) / (N - 1); 20,000 draws, mean within 4 SE, variance
    within 5% (its sampling SD is about 1%)."""
    counts = np.array([[3, 0, 7, 12, 5, 1]])
    levels = np.arange(1.0, 7.0)
    votes = np.repeat(levels, counts[0])
    big_n, h = votes.size, votes.size // 2
    long = pd.DataFrame({"image_id": "x", "score": levels, "count": counts[0]})
    draws = split_halves(long, ["x"], n_splits=20_000, seed=0)[0][:, 0]
    variance = votes.var() / h * (big_n - h) / (big_n - 1)
    assert abs(draws.mean() - votes.mean()) < 4 * np.sqrt(variance / draws.size)
    assert draws.var() == pytest.approx(variance, rel=0.05)
    exact = np.random.default_rng(0).multivariate_hypergeometric(counts[0], h, size=20_000)
    assert draws.var() == pytest.approx((exact @ levels / h).var(), rel=0.07)


# --- vote method -----------------------------------------------------------------------------


def test_votes_without_differences_between_images_give_no_ceiling():
    """Every image's 100 votes drawn from one distribution: no true differences. A null
    correlation over n images has SD 1/sqrt(n), and averaging over splits removes only
    the split part of it, so the mean split-half r lies within 3/sqrt(n) of 0 (n = 2000:
    0.067), the reliability within SB(0.067) = 0.13 of 0 and the ceiling, where defined,
    below sqrt(0.13) = 0.36. Identical histograms are the degenerate case: the halves of
    every image sum to the same total, so B = c - A and r = -1 exactly; the ceiling is
    undefined (NaN), as for summaries with equal means."""
    rng = np.random.default_rng(29)
    counts = rng.multinomial(100, [0.2] * 5, size=2000)
    wide = pd.DataFrame(counts, columns=[1.0, 2.0, 3.0, 4.0, 5.0])
    bound = 3 / np.sqrt(2000)
    for metric in ("pearson", "spearman"):
        res = noise_ceiling(_long(wide), n_splits=200, metric=metric)
        assert abs(res.split_half_r) < bound
        assert abs(res.reliability) < spearman_brown(bound)
        assert np.isnan(res.ceiling) or res.ceiling < np.sqrt(spearman_brown(bound))
    same = noise_ceiling(_long(pd.DataFrame(20, wide.index, wide.columns)), n_splits=20)
    assert same.split_half_r == pytest.approx(-1.0) and np.isnan(same.ceiling)
    summary = pd.DataFrame({"image_id": range(400), "mean": 3.0, "sd": 1.4, "n": 100})
    assert np.isnan(noise_ceiling(summary).ceiling)


def _long(wide: pd.DataFrame) -> pd.DataFrame:
    """A per-image vote-count matrix (columns the levels) as a long vote table."""
    long = wide.rename_axis(index="image_id", columns="score").stack().rename("count")
    return long.reset_index()


def test_seeded_results_are_reproducible():
    ratings = _ordinal_raters(80, seed=22)
    hist = _histogram(ratings, "image_id", "score")
    summary = _summary(ratings, "image_id", "score")
    for table in (hist, summary):
        first = noise_ceiling(table, n_splits=30, seed=4)
        assert first == noise_ceiling(table, n_splits=30, seed=4)
        assert first != noise_ceiling(table, n_splits=30, seed=5)


def test_results_do_not_depend_on_the_block_size(monkeypatch):
    """Large datasets are ranked a few splits at a time; the block changes no number."""
    hist = _histogram(_ordinal_raters(90, seed=23), "image_id", "score")
    whole = noise_ceiling(hist, n_splits=25, seed=3)
    monkeypatch.setattr(_common, "BLOCK_CELLS", 200)  # two splits a block
    assert noise_ceiling(hist, n_splits=25, seed=3) == whole


def test_images_with_one_vote_are_left_out():
    hist = _histogram(_ordinal_raters(30, seed=25), "image_id", "score")
    lonely = pd.DataFrame({"image_id": [999], "score": [3.0], "count": [1]})
    with pytest.warns(RuntimeWarning, match="fewer than two votes"):
        res = noise_ceiling(pd.concat([hist, lonely]), n_splits=5)
    assert res.n_images == 30


# --- summaries -------------------------------------------------------------------------------


def test_summary_pearson_is_classical_test_theory():
    summary = pd.DataFrame(
        {"image_id": list("abcde"), "mean": [1.0, 2.0, 4.0, 3.0, 5.0], "sd": 1.0, "n": 4}
    )
    res = noise_ceiling(summary, metric="pearson")
    rel = (2.5 - 0.25) / 2.5  # Var(mean) with ddof 1; mean of SD^2 / n
    assert res.reliability == pytest.approx(rel) and res.ceiling == pytest.approx(np.sqrt(rel))
    assert spearman_brown(res.split_half_r) == pytest.approx(rel)
    assert res.n_splits == 0 and np.isnan(res.ceiling_sd) and res.n_ratings == 20
    population = summary.assign(sd=np.sqrt(3 / 4))  # the same ratings' SD with ddof 0
    again = noise_ceiling(population, sd_ddof=0, metric="pearson")
    assert again.reliability == pytest.approx(rel)


def test_summary_recovers_a_known_reliability():
    """Truth ~ N(0, 1), 20 ratings an image with N(0, 3^2) noise: reliability
    1 / (1 + 9 / 20); the Spearman ceiling is what the mean reaches against the truth."""
    rng = np.random.default_rng(26)
    truth = rng.normal(size=600)
    ratings = truth[:, None] + rng.normal(0, 3.0, (600, 20))
    summary = pd.DataFrame(
        {"image_id": range(600), "mean": ratings.mean(1), "sd": ratings.std(1, ddof=1), "n": 20}
    )
    rel = 1 / (1 + 9 / 20)
    assert noise_ceiling(summary, metric="pearson").reliability == pytest.approx(rel, abs=0.03)
    rho = stats.spearmanr(ratings.mean(1), truth).statistic
    assert noise_ceiling(summary, n_splits=100).ceiling == pytest.approx(rho, abs=0.03)


# --- mean only and the choice of method ------------------------------------------------------


def test_a_mean_alone_gives_no_ceiling_in_plain_words():
    means = pd.DataFrame({"image_id": ["a", "b", "c"], "mean": [1.0, 2.0, 3.0]})
    res = noise_ceiling(means)
    assert res.method == "none" and res.n_images == 3 and np.isnan(res.ceiling)
    assert res.reason == MEAN_ONLY_REASON and "SD and n" in res.reason
    assert np.isnan(res.as_row(dataset="spaq")["ceiling"])
    assert noise_ceiling(means.assign(sd=np.nan, n="")) == res  # summary.csv's empty columns


def test_the_method_follows_the_columns_or_is_the_one_asked_for():
    ratings = _ordinal_raters(60, seed=27)
    args = {"n_splits": 10, "seed": 2}
    per_rater = noise_ceiling(ratings, **args)
    assert per_rater.method == PER_RATER
    assert noise_ceiling(ratings, PER_RATER, **args) == per_rater
    hist = _histogram(ratings, "image_id", "score")
    votes = noise_ceiling(hist, **args)
    assert votes.method == VOTES and noise_ceiling(hist, VOTES, **args) == votes
    assert noise_ceiling(ratings, VOTES, **args) == votes  # rater ids set aside
    anonymous = ratings.assign(rater_id=np.nan, count=1)  # ratings.csv without rater ids
    assert noise_ceiling(anonymous, **args) == votes
    empty_counts = ratings.assign(rater_id="", count=np.nan)  # empty cells: one vote each
    assert noise_ceiling(empty_counts, **args) == votes
    assert noise_ceiling(ratings.assign(count=np.nan), **args) == per_rater
    one_vote_a_row = ratings.drop(columns="rater_id")
    assert noise_ceiling(one_vote_a_row, **args) == votes
    summary = _summary(ratings, "image_id", "score")
    assert noise_ceiling(summary, **args).method == "summary_ctt"
    assert isinstance(noise_ceiling(ratings.assign(count=1), **args), NoiseCeiling)
    with pytest.raises(ValueError, match="method 'summary_ctt' needs column 'mean'"):
        noise_ceiling(ratings, "summary_ctt", **args)
    with pytest.raises(ValueError, match="column 'rater_id' is missing or empty"):
        noise_ceiling(one_vote_a_row, PER_RATER, **args)
    with pytest.raises(ValueError, match="method must be one of"):
        noise_ceiling(ratings, "kendall", **args)


def test_bad_input_names_the_column():
    ratings = _ordinal_raters(20, seed=28)
    hist = _histogram(ratings, "image_id", "score")
    summary = _summary(ratings, "image_id", "score")
    with pytest.raises(ValueError, match="column 'count' has a negative count"):
        noise_ceiling(hist.assign(count=np.where(hist.index == 3, -1, hist["count"])))
    with pytest.raises(ValueError, match=r"column 'count' has a count that is not whole .* 0$"):
        noise_ceiling(hist.assign(count=hist["count"] + 0.5))
    with pytest.raises(ValueError, match=r"no column\(s\) \['votes'\]"):
        noise_ceiling(hist, columns={"count": "votes"})
    with pytest.raises(ValueError, match="column 'n' has n below 2 or not whole"):
        noise_ceiling(summary.assign(n=np.where(summary.index == 0, 1, summary["n"])))
    with pytest.raises(ValueError, match="column 'sd' has a negative SD"):
        noise_ceiling(summary.assign(sd=-summary["sd"]))
    with pytest.raises(ValueError, match=r"column 'n' is missing or empty on 1 of 20"):
        noise_ceiling(summary.assign(n=summary["n"].where(summary.index != 5)))
    with pytest.raises(ValueError, match=r"column 'sd' is missing or empty on 20 of 20"):
        noise_ceiling(summary.drop(columns="sd"))
    with pytest.raises(ValueError, match="column 'rater_id' is empty on 1 of"):
        noise_ceiling(ratings.assign(rater_id=ratings["rater_id"].where(ratings.index != 0)))
    with pytest.raises(ValueError, match="column 'count' must be 1 on rows with a rater id"):
        noise_ceiling(ratings.assign(count=2))
    with pytest.raises(ValueError, match=r"neither 'score' .* nor 'mean'"):
        noise_ceiling(ratings.rename(columns={"score": "rating"}))
    with pytest.raises(ValueError, match="no column 'image_id'"):
        noise_ceiling(ratings.rename(columns={"image_id": "img"}))
    with pytest.raises(ValueError, match=r"unknown role\(s\) \['value'\]"):
        noise_ceiling(hist, columns={"value": "score"})
    with pytest.raises(ValueError, match="metric must be"):
        noise_ceiling(summary, metric="kendall_b")
