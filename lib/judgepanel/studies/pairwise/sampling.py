"""Pairs drawn from a rated dataset, each with the people's preference and whether it is
decided.

The pairs: every image takes part in ``pairs_per_image`` comparisons (its degree in the
comparison graph). Each round shuffles the images and links each to the next one around
the shuffled circle (two comparisons per image); an odd budget ends with a round that
pairs them off in twos (one more each). A pair drawn twice is kept once, so an image may
end a comparison or two short of the budget on a small dataset.

The people's preference: the image with the higher human mean on the attribute asked
(the overall rating for the holistic question, the dimension's attribute for a
dimension). The pair is *decided* when the difference of the two means lies beyond its
noise: ``|mean_a - mean_b| > z * SE``, with ``SE = sqrt(se_a^2 + se_b^2)`` and each
image's ``se`` the standard error of its mean, ``sd / sqrt(n)`` from the spread of its
raters (per-rater ratings, else vote histograms, else the released SD and n). The two
means are independent (other raters, or at least other ratings), so their variances add.
Without any spread the pair is never decided (``se`` NaN), and ``decided`` says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgepanel.datasets import Dataset
from judgepanel.datasets.pairs import PairLabels
from judgepanel.studies.pairwise.parameters import PairwiseParameters

HOLISTIC = "holistic"
"""The prompt name of the whole-image question (its attribute is the overall rating)."""

Z_DECIDED = 1.96
"""The default z: a pair is decided when its difference is beyond 1.96 standard errors."""


def sample_pairs(image_ids: list[str], pairs_per_image: int, seed: int = 0) -> pd.DataFrame:
    """Pairs of ``image_ids``, each image in about ``pairs_per_image`` of them.

    Returns:
        ``pair_id``, ``image_a``, ``image_b``: each unordered pair once, in the order
        drawn; ``image_a`` is the one shown first in the first order.

    Raises:
        ValueError: fewer than two images, a repeated id or a budget below 1.
    """
    ids = [str(i) for i in image_ids]
    if len(ids) < 2:
        raise ValueError("pairs need at least two images")
    if len(set(ids)) != len(ids):
        raise ValueError("image ids must be unique")
    if pairs_per_image < 1:
        raise ValueError(f"pairs_per_image must be at least 1, got {pairs_per_image}")
    rng = np.random.default_rng(seed)
    n = len(ids)
    drawn: list[tuple[int, int]] = []
    for _ in range(pairs_per_image // 2):
        perm = rng.permutation(n)
        drawn += [(int(perm[i]), int(perm[(i + 1) % n])) for i in range(n if n > 2 else 1)]
    if pairs_per_image % 2:
        perm = rng.permutation(n)
        drawn += [(int(perm[i]), int(perm[i + 1])) for i in range(0, n - 1, 2)]
    seen: set[tuple[int, int]] = set()
    rows = []
    for i, j in drawn:
        key = (min(i, j), max(i, j))
        if i == j or key in seen:
            continue
        seen.add(key)
        rows.append((ids[i], ids[j]))
    table = pd.DataFrame(rows, columns=["image_a", "image_b"])
    table.insert(0, "pair_id", table["image_a"] + "|" + table["image_b"])
    return table


def _columns(attribute: str) -> tuple[str, str]:
    """(image-table column, ratings column) of a prompt's attribute."""
    return ("mean_score", "score") if attribute == HOLISTIC else (attribute, attribute)


def _from_ratings(data: Dataset, column: str) -> pd.DataFrame | None:
    r = data.ratings
    if column not in r.columns or r[column].notna().sum() == 0:
        return None
    g = r.dropna(subset=[column]).groupby("image_id")[column]
    return pd.DataFrame({"sd": g.std(ddof=1), "n": g.count()})


def _from_votes(data: Dataset, column: str) -> pd.DataFrame | None:
    v = data.votes
    if v is None or not (v["attribute"] == column).any():
        return None
    v = v[v["attribute"] == column]
    n = v.groupby("image_id")["count"].sum()
    mean = (v["value"] * v["count"]).groupby(v["image_id"]).sum() / n
    sq = (v["value"] ** 2 * v["count"]).groupby(v["image_id"]).sum() / n
    var = (sq - mean**2).clip(lower=0) * n / (n - 1).where(n > 1)
    return pd.DataFrame({"sd": np.sqrt(var), "n": n})


def _from_summary(data: Dataset, column: str) -> pd.DataFrame | None:
    s = data.summary
    if s is None or not (s["attribute"] == column).any():
        return None
    s = s[s["attribute"] == column].set_index("image_id")
    return pd.DataFrame({"sd": s["sd"].astype(float), "n": s["n"].astype(float)})


def human_noise(data: Dataset, attribute: str = HOLISTIC) -> pd.DataFrame:
    """Per image: the human ``mean`` on ``attribute`` and its standard error ``se``.

    ``attribute`` is ``holistic`` (the overall rating) or a column of the image table
    (a rubric dimension's attribute). The spread comes from the per-rater ratings, else
    the vote histograms, else the released SD and n (for the overall rating also the
    image table's ``score_sd`` and ``n_raters``); ``se`` is NaN where none is known.

    Raises:
        KeyError: the dataset has no mean for ``attribute``.
    """
    mean_col, rating_col = _columns(attribute)
    if mean_col not in data.images.columns:
        raise KeyError(f"{data.name}: no human mean for {attribute!r}")
    spread = None
    for read in (_from_ratings, _from_votes, _from_summary):
        spread = read(data, rating_col)
        if spread is not None:
            break
    images = data.images.set_index("image_id")
    if spread is None and attribute == HOLISTIC and "score_sd" in images.columns:
        spread = pd.DataFrame({"sd": images["score_sd"], "n": images["n_raters"]})
    out = pd.DataFrame({"mean": images[mean_col].astype(float)})
    if spread is None:
        out["se"] = np.nan
    else:
        spread = spread.reindex(out.index)
        out["se"] = spread["sd"] / np.sqrt(spread["n"])
    out.index = out.index.astype(str)
    return out


def label_pairs(
    pairs: pd.DataFrame, data: Dataset, attribute: str = HOLISTIC, z: float = Z_DECIDED
) -> pd.DataFrame:
    """``pairs`` with the people's preference on ``attribute`` and whether it is decided.

    Adds ``attribute``, ``mean_a``, ``mean_b``, ``diff`` (a - b), ``se_diff``, ``human``
    (``a``, ``b`` or ``tie`` for equal means) and ``decided`` (``|diff| > z * se_diff``;
    the rule is in the module docstring).
    """
    noise = human_noise(data, attribute)
    a = noise.reindex(pairs["image_a"].astype(str))
    b = noise.reindex(pairs["image_b"].astype(str))
    out = pairs.copy()
    out["attribute"] = attribute
    out["mean_a"] = a["mean"].to_numpy()
    out["mean_b"] = b["mean"].to_numpy()
    out["diff"] = out["mean_a"] - out["mean_b"]
    out["se_diff"] = np.sqrt(a["se"].to_numpy() ** 2 + b["se"].to_numpy() ** 2)
    out["human"] = np.select([out["diff"] > 0, out["diff"] < 0], ["a", "b"], "tie")
    out["decided"] = (out["diff"].abs() > z * out["se_diff"]).to_numpy(bool)  # NaN: False
    return out


def paired_images(data: PairLabels, params: PairwiseParameters) -> Dataset:
    """The rated images a run pairs: ``pair_images`` of them stratified by the human mean
    (seed ``pair_sample_seed``), as the scoring designs sample, or all of them.

    Raises:
        ValueError: ``data`` is people's own pairs, not a rated dataset.
    """
    if data.rated is None:
        raise ValueError(f"{data.root}: a pairs file, not a rated dataset to pair")
    if params.pair_images is None:
        return data.rated
    return data.rated.sample(params.pair_images, params.pair_sample_seed)


def study_pairs(
    data: PairLabels, params: PairwiseParameters, *, limit_images: int | None = None
) -> pd.DataFrame:
    """The pairs a run asks: sampled from a rated dataset (:func:`sample_pairs` at
    ``pairs_per_image``, seeded by ``pair_sample_seed``), or each unordered pair of a
    pairs file once, in the order first seen; ``limit_images`` keeps the first images.

    Returns:
        ``pair_id``, ``image_a``, ``image_b``.
    """
    if data.rated is not None:
        ids = paired_images(data, params).images["image_id"].astype(str).tolist()
        if limit_images is not None:
            ids = ids[:limit_images]
        return sample_pairs(ids, params.pairs_per_image, params.pair_sample_seed)
    table = data.pairs[["image_a", "image_b"]].astype(str)
    if limit_images is not None:
        keep = set(data.images["image_id"].astype(str).head(limit_images))
        table = table[table["image_a"].isin(keep) & table["image_b"].isin(keep)]
    if table.empty:
        return pd.DataFrame(columns=["pair_id", "image_a", "image_b"])
    key = table.apply(lambda r: "|".join(sorted((r["image_a"], r["image_b"]))), axis=1)
    table = table[~key.duplicated()].reset_index(drop=True)
    table.insert(0, "pair_id", table["image_a"] + "|" + table["image_b"])
    return table
