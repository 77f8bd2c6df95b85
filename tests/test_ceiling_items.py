"""The ceiling and split halves of chosen images (``items``), from each form of ratings."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from judgepanel.stats import noise_ceiling, split_halves

LEVELS = np.arange(1, 11, dtype=float)


@dataclass(frozen=True)
class Source:
    ratings: pd.DataFrame
    votes: pd.DataFrame | None = None
    summary: pd.DataFrame | None = None


def _votes(n_images: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_images):
        centre = rng.normal(5.5, 1.0)
        votes = np.clip(np.round(rng.normal(centre, 1.5, rng.integers(20, 60))), 1, 10)
        level, count = np.unique(votes, return_counts=True)
        rows += [(f"im{i:03d}", "score", v, float(c)) for v, c in zip(level, count, strict=True)]
    return pd.DataFrame(rows, columns=["image_id", "attribute", "value", "count"])


def _ratings(n_images: int = 30, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_images)
    rows = [
        (f"im{i:03d}", f"r{r}", truth[i] + rng.normal())
        for i in range(n_images)
        for r in rng.choice(50, 8, replace=False)
    ]
    return pd.DataFrame(rows, columns=["image_id", "rater_id", "score"])


NO_RATINGS = pd.DataFrame(columns=["image_id", "rater_id", "score"])


def test_per_rater_data_gives_the_per_rater_ceiling_and_halves():
    ratings = _ratings()
    items = pd.Index(sorted(ratings["image_id"].unique())[:20])
    got = noise_ceiling(Source(ratings), items=items, n_splits=30, seed=4)
    kept = ratings[ratings["image_id"].isin(set(items))]
    assert got == noise_ceiling(kept, n_splits=30, seed=4)
    assert noise_ceiling(ratings, items=items, n_splits=30, seed=4) == got  # the bare frame
    a, b = split_halves(Source(ratings), items, n_splits=5, seed=4)
    ea, eb = split_halves(ratings, items, n_splits=5, seed=4)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(b, eb)


def test_votes_give_the_vote_ceiling_and_halves_that_add_up_to_each_images_votes():
    votes = _votes()
    items = pd.Index(sorted(votes["image_id"].unique())[::-1][:25])  # not in sorted order
    got = noise_ceiling(Source(NO_RATINGS, votes), items=items, n_splits=40, seed=2)
    kept = votes[votes["image_id"].isin(set(items))]
    assert got == noise_ceiling(kept, columns={"score": "value"}, n_splits=40, seed=2)
    assert got.method == "vote_split_half"
    a, b = split_halves(Source(NO_RATINGS, votes), items, n_splits=7, seed=2)
    assert a.shape == b.shape == (7, 25)
    table = kept.assign(total=kept["value"] * kept["count"]).groupby("image_id")
    n = table["count"].sum().reindex(items).to_numpy()
    total = table["total"].sum().reindex(items).to_numpy()
    half = n // 2
    np.testing.assert_allclose(a * half + b * (n - half), np.broadcast_to(total, a.shape))
    assert not np.allclose(a, b)  # the halves are random splits, not copies
    mean = total / n
    assert abs(float(np.mean((a + b) / 2 - mean))) < 0.2


def test_an_image_without_enough_votes_or_any_rating_is_named():
    votes = _votes(10)
    single = pd.DataFrame([("lonely", "score", 7.0, 1.0)], columns=votes.columns)
    source = Source(NO_RATINGS, pd.concat([votes, single], ignore_index=True))
    with pytest.raises(ValueError, match=r"fewer than two votes.*lonely"):
        split_halves(source, ["im000", "lonely"], n_splits=2, seed=0)
    with pytest.raises(ValueError, match=r"no human ratings.*ghost"):
        noise_ceiling(source, items=["im000", "ghost"], n_splits=2)


def test_a_mean_alone_gets_no_ceiling_and_no_halves_in_plain_words():
    summary = pd.DataFrame(
        {"image_id": ["a", "b"], "attribute": "score", "mean": [3.0, 4.0], "sd": np.nan}
    )
    source = Source(NO_RATINGS, None, summary)
    found = noise_ceiling(source, items=["a", "b"])
    assert found.method == "none" and np.isnan(found.ceiling)
    assert "from a mean alone" in found.reason
    with pytest.raises(ValueError, match=r"no split halves of 'score': no ceiling .* mean alone"):
        split_halves(source, ["a", "b"], n_splits=2, seed=0)


def test_a_mean_sd_and_count_give_the_summary_ceiling_and_simulated_halves():
    rng = np.random.default_rng(3)
    n_images = 60
    truth = rng.normal(size=n_images)
    summary = pd.DataFrame(
        {
            "image_id": [f"im{i:02d}" for i in range(n_images)],
            "attribute": "score",
            "mean": truth + rng.normal(0, 0.3, n_images),
            "sd": rng.uniform(0.8, 1.2, n_images),
            "n": rng.integers(8, 20, n_images).astype(float),
        }
    )
    source = Source(NO_RATINGS, None, summary)
    items = pd.Index(summary["image_id"][::-1][:40])
    got = noise_ceiling(source, items=items, n_splits=20, seed=1)
    kept = summary[summary["image_id"].isin(set(items))]
    assert got == noise_ceiling(kept, n_splits=20, seed=1)
    assert got.method == "summary_ctt"
    a, b = split_halves(source, items, n_splits=6, seed=1)
    assert a.shape == b.shape == (6, 40)
    means = summary.set_index("image_id").loc[items, "mean"].to_numpy()
    # the halves scatter around the images' (shrunk) means, in the order of ``items``
    assert np.corrcoef((a + b).mean(axis=0), means)[0, 1] > 0.9
