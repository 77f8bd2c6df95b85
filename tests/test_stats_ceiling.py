"""Split-half noise ceiling against raters whose reliability is known analytically."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgepanel.stats import NoiseCeiling, noise_ceiling, spearman_brown, split_halves


def _raters(n_images: int, n_raters, noise_sd: float, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """True score ~ N(0, 1) per image; each rating adds independent N(0, noise_sd^2).

    The mean of k ratings then has reliability 1 / (1 + noise_sd^2 / k), and its
    correlation with the true score is the square root of that: the ceiling.
    """
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_images)
    counts = np.broadcast_to(np.asarray(n_raters), (n_images,))
    rows = []
    for i, k in enumerate(counts):
        for r in range(int(k)):
            rows.append((f"img{i:04d}", f"r{r:03d}", truth[i] + rng.normal(0, noise_sd)))
    frame = pd.DataFrame(rows, columns=["image_id", "rater_id", "score"])
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True), truth


@pytest.mark.parametrize("noise_sd", [2.0, 4.0, 7.0])
def test_recovers_known_reliability_pearson(noise_sd):
    k = 30
    ratings, _ = _raters(500, k, noise_sd, seed=int(noise_sd * 10))
    res = noise_ceiling(ratings, n_splits=100, seed=1, metric="pearson")
    reliability = 1.0 / (1.0 + noise_sd**2 / k)
    assert res.reliability == pytest.approx(reliability, abs=0.03)
    assert res.ceiling == pytest.approx(np.sqrt(reliability), abs=0.03)
    assert res.n_images == 500 and res.n_ratings == 500 * k and res.median_raters == k


def test_recovers_known_ceiling_spearman_and_matches_the_truth():
    ratings, truth = _raters(500, 26, 4.0, seed=5)
    res = noise_ceiling(ratings, n_splits=100, seed=2)
    assert res.metric == "spearman"
    assert res.ceiling == pytest.approx(np.sqrt(1 / (1 + 16 / 26)), abs=0.03)
    # The ceiling is what the human mean achieves against the noiseless score.
    means = ratings.groupby("image_id")["score"].mean().sort_index().to_numpy()
    assert res.ceiling == pytest.approx(stats.spearmanr(means, truth).statistic, abs=0.03)


def test_definition_average_r_then_spearman_brown_then_sqrt():
    ratings, _ = _raters(120, [5, 6, 7, 8] * 30, 2.0, seed=6)
    res = noise_ceiling(ratings, n_splits=40, seed=3, metric="pearson")
    assert res.reliability == pytest.approx(2 * res.split_half_r / (1 + res.split_half_r))
    assert res.ceiling == pytest.approx(np.sqrt(res.reliability))
    assert res.ceiling_sd > 0 and res.split_half_r_sd > 0
    assert res.median_raters == 6.5
    assert isinstance(res.as_row(dataset="synth"), dict)
    assert spearman_brown(0.5) == pytest.approx(2 / 3)


def test_split_distribution_matches_a_naive_loop():
    """Every split halves each image's raters uniformly at random: a plain loop over
    splits and images estimates the same mean split-half r."""
    ratings, _ = _raters(60, [3, 4, 5, 6] * 15, 1.5, seed=7)
    res = noise_ceiling(ratings, n_splits=400, seed=0, metric="pearson")
    rng = np.random.default_rng(99)
    groups = [g["score"].to_numpy() for _, g in ratings.groupby("image_id")]
    rs = []
    for _ in range(400):
        half_a, half_b = [], []
        for scores in groups:
            shuffled = rng.permutation(scores)
            half_a.append(shuffled[: scores.size // 2].mean())
            half_b.append(shuffled[scores.size // 2 :].mean())
        rs.append(np.corrcoef(half_a, half_b)[0, 1])
    tolerance = 4 * res.split_half_r_sd * np.sqrt(2 / 400)
    assert res.split_half_r == pytest.approx(np.mean(rs), abs=tolerance)
    assert res.split_half_r_sd == pytest.approx(np.std(rs, ddof=1), rel=0.2)


def test_noise_free_raters_give_a_ceiling_of_one():
    ratings, _ = _raters(40, 5, 0.0, seed=12)
    res = noise_ceiling(ratings, n_splits=10, seed=0)
    assert res.ceiling == pytest.approx(1.0) and res.ceiling_sd == pytest.approx(0.0)


def test_seeded_and_split_dependent():
    ratings, _ = _raters(80, 9, 3.0, seed=8)
    a = noise_ceiling(ratings, n_splits=30, seed=4)
    b = noise_ceiling(ratings, n_splits=30, seed=4)
    c = noise_ceiling(ratings, n_splits=30, seed=5)
    assert a == b
    assert a.split_half_r != c.split_half_r


def test_no_shared_signal_gives_nan_ceiling():
    rng = np.random.default_rng(9)  # this seed's mean split-half r is negative
    ratings = pd.DataFrame(
        {
            "image_id": np.repeat(np.arange(200), 4),
            "rater_id": np.tile(np.arange(4), 200),
            "score": rng.normal(size=800),
        }
    )
    res = noise_ceiling(ratings, n_splits=20, seed=0, metric="pearson")
    assert -0.1 < res.split_half_r < 0
    assert np.isnan(res.ceiling)
    assert res.reliability < 0


def test_bad_input_named():
    ratings, _ = _raters(10, 4, 1.0, seed=10)
    with pytest.raises(ValueError, match=r"no column\(s\) \['rater'\]"):
        noise_ceiling(ratings, columns={"rater": "rater"})
    broken = ratings.copy()
    broken.loc[3, "score"] = np.nan
    with pytest.raises(ValueError, match=f"first for image_id '{broken.loc[3, 'image_id']}'"):
        noise_ceiling(broken)
    with pytest.raises(ValueError, match="metric must be"):
        noise_ceiling(ratings, metric="kendall_b")


def test_single_rater_images_left_out_and_duplicates_averaged():
    ratings, _ = _raters(30, 4, 1.0, seed=11)
    extra = pd.DataFrame({"image_id": ["lonely"], "rater_id": ["r000"], "score": [1.0]})
    repeat = ratings.iloc[[0]]
    messy = pd.concat([ratings, extra, repeat], ignore_index=True)
    with pytest.warns(RuntimeWarning) as caught:
        res = noise_ceiling(messy, n_splits=10)
    messages = " ".join(str(w.message) for w in caught)
    assert "fewer than two raters" in messages and "averaged" in messages
    assert res.n_images == 30 and res.n_ratings == 120
    assert isinstance(res, NoiseCeiling)


def test_split_halves_are_the_ceilings_splits_in_the_given_order():
    ratings, _ = _raters(50, [4, 5, 6, 7, 8] * 10, 2.0, seed=13)
    items = sorted(ratings["image_id"].unique())
    a, b = split_halves(ratings, items, n_splits=25, seed=4)
    assert a.shape == b.shape == (25, 50)
    rs = [stats.spearmanr(a[s], b[s]).statistic for s in range(25)]
    # The same seed draws the same splits as the ceiling, so the mean r is the ceiling's.
    assert np.mean(rs) == pytest.approx(noise_ceiling(ratings, n_splits=25, seed=4).split_half_r)
    counts = ratings.groupby("image_id").size().loc[items].to_numpy()
    half = counts // 2
    means = ratings.groupby("image_id")["score"].mean().loc[items].to_numpy()
    np.testing.assert_allclose((a * half + b * (counts - half)) / counts, np.tile(means, (25, 1)))
    # Columns follow the order asked for; images outside it are ignored.
    some = items[::-1][:40]
    ra, rb = split_halves(ratings, some, n_splits=25, seed=4)
    assert ra.shape == (25, 40)
    k = ratings.groupby("image_id").size().loc[some].to_numpy()
    full = ratings.groupby("image_id")["score"].mean().loc[some].to_numpy()
    np.testing.assert_allclose((ra * (k // 2) + rb * (k - k // 2)) / k, np.tile(full, (25, 1)))


def test_split_halves_name_an_image_that_cannot_be_split():
    ratings, _ = _raters(10, 4, 1.0, seed=14)
    lonely = pd.DataFrame({"image_id": ["lonely"], "rater_id": ["r000"], "score": [1.0]})
    messy = pd.concat([ratings, lonely], ignore_index=True)
    items = [*sorted(ratings["image_id"].unique()), "lonely"]
    with (
        pytest.warns(RuntimeWarning, match="fewer than two raters"),
        pytest.raises(ValueError, match="lonely"),
    ):
        split_halves(messy, items, n_splits=5, seed=0)
    with pytest.raises(ValueError, match="missing-image"):
        split_halves(ratings, ["missing-image", *items[:-1]], n_splits=5, seed=0)
