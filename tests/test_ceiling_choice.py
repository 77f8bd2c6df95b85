"""The ceiling a loaded dataset supports: method chosen from its tables, point and interval.

The agreement test writes the synthetic EVA-like and PARA-like worlds in the generic
``ratings`` format three times: with rater ids, reduced to vote histograms (votes counted
per score level and image, rater ids dropped), and reduced to summaries (each image's
mean, SD and n). Loaded back, each must give the per-rater ceiling within its sampling
error, and a wrong reduction must not.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pandas as pd
import pytest
from release_files import WRITERS as RELEASE_WRITERS
from release_files import write_aadb, write_generic

from judgepanel.datasets import load_dataset
from judgepanel.stats import NoiseCeiling, noise_ceiling
from judgepanel.stats.ceiling import MEAN_ONLY_REASON
from judgepanel_sim.world import EVA_WORLD, PARA_WORLD, simulate

WORLDS = {
    "eva": (EVA_WORLD, "image_id", "user_id", "score", (0, 10)),
    "para": (PARA_WORLD, "imageName", "userId", "aestheticScore", (1, 5)),
}
CARD = {
    "name": "reduced",
    "images": "images",
    "attributes": {"overall": {"range": None, "higher": "better", "dimension": "holistic"}},
}


def _card(span: tuple[float, float]) -> dict:
    attributes = {"overall": {**CARD["attributes"]["overall"], "range": list(span)}}
    return {**CARD, "attributes": attributes}


def _per_rater(name: str, keep: int | None) -> pd.DataFrame:
    """The world's ratings (200 images), each image's first ``keep`` raters, long format."""
    world, item, rater, score, _ = WORLDS[name]
    raw = simulate(world, 200, seed=5).ratings
    raw = raw if keep is None else raw.groupby(item, sort=False).head(keep)
    return pd.DataFrame(
        {
            "image_id": raw[item].astype(str),
            "attribute": "overall",
            "value": raw[score].astype(float),
            "rater_id": raw[rater].astype(str),
        }
    )


def _histogram(ratings: pd.DataFrame) -> pd.DataFrame:
    """Rater ids dropped: votes counted per image and score level."""
    counts = ratings.groupby(["image_id", "attribute", "value"]).size()
    return counts.rename("count").reset_index()


def _summary(ratings: pd.DataFrame, n_factor: float = 1.0) -> pd.DataFrame:
    """Each image's mean, sample SD and rating count (times ``n_factor``: a wrong one)."""
    out = ratings.groupby(["image_id", "attribute"])["value"].agg(mean="mean", sd="std", n="size")
    out["n"] = np.floor(out["n"] * n_factor).astype(int)
    return out.reset_index()


@pytest.mark.parametrize(("name", "keep"), [("eva", None), ("eva", 6), ("para", None), ("para", 6)])
def test_histogram_and_summary_ceilings_agree_with_per_rater(tmp_path, name, keep):
    """Tolerances, from the ceilings' own sampling error:

    - histogram vs per-rater: a random split of an image's k votes and of its k raters put
      the same multivariate hypergeometric counts in a half, so on the same images the two
      estimate one number and differ by Monte Carlo error only. SE_mc = sqrt((sd_r^2 +
      sd_v^2) / S), sd the spread of per-split ceilings over S = 200 splits; assert
      |diff| < 3 SE_mc + 0.001 (the floor only guards a zero spread).
    - summary vs per-rater: different estimators of the same reliability, on the same
      images. SE_img = the per-rater ceiling's 95% bootstrap interval over images / (2 x
      1.96), each estimator's own image-sampling SE; the SE of their difference is smaller
      (both see the same images), so |diff| < 3 SE_img is conservative.
    - the wrong reduction (every n halved, as if half the raters were counted) must fall
      beyond 3 SE_img: it reads the error variance as twice what it is.

    Measured (200 images, seed 5): histogram |diff| <= 0.0013 (|z| <= 1.3); summary
    |z| <= 0.11; n halved z = -7.1 (PARA-like, all raters) to -9.5.
    """
    span = WORLDS[name][4]
    ratings = _per_rater(name, keep)
    kinds = {
        "per_rater": ratings,
        "histogram": _histogram(ratings),
        "summary": _summary(ratings),
        "halved_n": _summary(ratings, 0.5),
    }
    found = {}
    for kind, table in kinds.items():
        args = {"summary" if kind in ("summary", "halved_n") else "ratings": table}
        ds = load_dataset("ratings", str(write_generic(tmp_path / kind, card=_card(span), **args)))
        found[kind] = noise_ceiling(ds, n_splits=200, n_resamples=300)
    per_rater = found["per_rater"]
    assert [e.method for e in found.values()] == [
        "per_rater_split_half",
        "vote_split_half",
        "summary_ctt",
        "summary_ctt",
    ]
    assert len({e.n_images for e in found.values()}) == 1
    lo, hi = per_rater.interval
    assert lo < per_rater.ceiling < hi
    se_mc = np.hypot(per_rater.ceiling_sd, found["histogram"].ceiling_sd) / np.sqrt(200)
    se_img = (hi - lo) / (2 * 1.96)
    d_votes = found["histogram"].ceiling - per_rater.ceiling
    d_summary = found["summary"].ceiling - per_rater.ceiling
    d_wrong = found["halved_n"].ceiling - per_rater.ceiling
    print(
        f"{name} keep={keep}: per-rater {per_rater.ceiling:.4f} [{lo:.3f}, {hi:.3f}]; "
        f"histogram {d_votes:+.4f} (z {d_votes / se_mc:+.2f}); summary {d_summary:+.4f} "
        f"(z {d_summary / se_img:+.2f}); n halved {d_wrong:+.4f} (z {d_wrong / se_img:+.2f})"
    )
    assert abs(d_votes) < 3 * se_mc + 0.001
    assert abs(d_summary) < 3 * se_img
    assert abs(d_wrong) > 3 * se_img


def test_the_method_follows_what_each_release_keeps(tmp_path):
    methods = {"ava": "vote_split_half", "koniq": "vote_split_half", "spaq": "none"}
    for kind, write in RELEASE_WRITERS.items():
        method = methods.get(kind, "per_rater_split_half")
        estimate = noise_ceiling(load_dataset(kind, str(write(tmp_path / kind))), n_resamples=50)
        assert estimate.method == method, kind
        if method == "none":
            assert estimate.reason == MEAN_ONLY_REASON and np.isnan(estimate.ceiling)
            assert all(np.isnan(estimate.interval))
        else:
            assert estimate.interval[0] <= estimate.ceiling <= estimate.interval[1], kind
    lists_only = load_dataset("aadb", str(write_aadb(tmp_path / "lists", raw=False)))
    assert noise_ceiling(lists_only).method == "none"
    generic = load_dataset("ratings", str(tmp_path / "ratings"))
    assert (
        noise_ceiling(generic, attribute="quality", n_resamples=50).method == "per_rater_split_half"
    )
    absent = noise_ceiling(generic, attribute="emotion")
    assert absent.method == "none" and absent.reason == "no rating of 'emotion'"


def test_the_point_estimate_is_the_chosen_methods_own(tmp_path):
    ratings = _per_rater("para", 8)
    args = {"n_splits": 40, "seed": 3}
    ds = load_dataset(
        "ratings", str(write_generic(tmp_path / "r", card=_card((1, 5)), ratings=ratings))
    )
    found = noise_ceiling(ds, n_resamples=20, **args)
    assert _point(found) == _point(
        noise_ceiling(ds.ratings[["image_id", "rater_id", "score"]], **args)
    )
    assert noise_ceiling(ds, **args) == noise_ceiling(ds.ratings, **args)  # no interval asked
    hist = _histogram(ratings)
    ds = load_dataset(
        "ratings", str(write_generic(tmp_path / "h", card=_card((1, 5)), ratings=hist))
    )
    found = noise_ceiling(ds, n_resamples=20, **args)
    assert _point(found) == _point(noise_ceiling(hist, columns={"score": "value"}, **args))
    summary = _summary(ratings)
    ds = load_dataset(
        "ratings", str(write_generic(tmp_path / "s", card=_card((1, 5)), summary=summary))
    )
    for metric in ("spearman", "pearson"):
        found = noise_ceiling(ds, metric=metric, n_resamples=20, **args)
        expected = _point(noise_ceiling(summary, metric=metric, **args))
        assert _point(found) == pytest.approx(expected, nan_ok=True)
        assert found.interval[0] < found.ceiling < found.interval[1]
    again = noise_ceiling(ds, n_resamples=20, **args)
    assert again == noise_ceiling(ds, n_resamples=20, **args)


def _point(found: NoiseCeiling) -> dict:
    """The point estimate's fields: all but the interval."""
    return {k: v for k, v in asdict(found).items() if k != "interval"}


def _known_world(seed: int, n_images: int = 150, k: int = 8, noise: float = 2.0):
    """truth ~ N(0, 1), k ratings an image with N(0, noise^2) errors: the mean's Pearson
    correlation with the truth, the ceiling, is sqrt(1 / (1 + noise^2 / k))."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_images)
    values = truth[:, None] + rng.normal(0, noise, (n_images, k))
    ratings = pd.DataFrame(
        {
            "image_id": np.repeat(np.arange(n_images), k).astype(str),
            "rater_id": np.tile(np.arange(k), n_images).astype(str),
            "score": values.ravel(),
        }
    )
    return ratings, float(np.sqrt(1 / (1 + noise**2 / k)))


class _Tables:
    def __init__(self, ratings=None, summary=None):  # type: ignore[no-untyped-def]
        empty = pd.DataFrame(columns=["image_id", "rater_id", "score"])
        self.ratings = empty if ratings is None else ratings
        self.votes = None
        self.summary = summary


def test_the_intervals_cover_a_known_ceiling():
    """40 worlds with a known Pearson ceiling (0.82): a 95% interval should miss it in about
    2; more than 7 misses (P < 0.001 for a true 95% interval) fails, as does an interval
    that never misses while being no wider than its point estimate's spread."""
    misses = {"per_rater": 0, "summary": 0}
    for seed in range(40):
        ratings, truth = _known_world(seed)
        summary = ratings.groupby("image_id")["score"].agg(mean="mean", sd="std", n="size")
        summary = summary.reset_index().assign(attribute="score")
        for kind, data in (("per_rater", _Tables(ratings)), ("summary", _Tables(None, summary))):
            found = noise_ceiling(data, metric="pearson", n_splits=20, n_resamples=300, seed=seed)
            misses[kind] += not found.interval[0] <= truth <= found.interval[1]
    print(misses)
    assert all(m <= 7 for m in misses.values())


def test_large_datasets_reuse_the_full_samples_ranks(monkeypatch):
    """Above EXACT_CELLS a resample's Spearman reuses the full sample's ranks instead of
    re-ranking; on 1500 images the interval ends move by less than 0.002 (their own
    Monte Carlo spread over 200 resamples is about that)."""
    from judgepanel.stats.ceiling import _interval

    ratings, _ = _known_world(7, n_images=1500, k=6)
    data = _Tables(ratings)
    exact = noise_ceiling(data, n_splits=5, n_resamples=200, interval_splits=5)
    monkeypatch.setattr(_interval, "EXACT_CELLS", 0)
    approx = noise_ceiling(data, n_splits=5, n_resamples=200, interval_splits=5)
    assert approx.ceiling == exact.ceiling
    assert approx.interval == pytest.approx(exact.interval, abs=0.002)
