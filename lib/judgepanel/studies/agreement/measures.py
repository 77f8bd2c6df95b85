"""The agreement study's tables, each computed once by :mod:`judgepanel.stats`.

* :func:`judges_vs_humans`: per family, QWK, Krippendorff's alpha (interval), Spearman and
  mean bias against the human mean (``judge_agreement``), after the data's linear map;
* :func:`repeatability`: per family, alpha (interval) over its k holistic repetitions as
  raters, and the one-way ICC(1,1) of the same (repetitions are exchangeable);
* :func:`human_reliability`: the people's alpha over all raters, and the ICCs of the
  largest block of raters who rated the same images (the ANOVA needs complete cases);
* :func:`alt_tests`: the alternative annotator test per family and for the panel mean;
* :func:`panel_effective_size`: the effective number of judges of the families' errors;
* :func:`pooled_alt_tests`: the alternative annotator test with each image x dimension one
  instance, the judges' answers put on each attribute's range by that dimension's map;
* :func:`dimension_table`: one row per judge and dimension (agreement, repeatability, the
  people's own alpha beside them).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from judgepanel.stats.agreement import judge_agreement
from judgepanel.stats.alt_test import AltTestResult, alt_test
from judgepanel.stats.panel_size import PanelSize, panel_size
from judgepanel.stats.ratings import DIMENSION, ITEM, RATER, SCORE
from judgepanel.stats.reliability import alpha_interval, icc_table
from judgepanel.stats.scale_map import to_grid
from judgepanel.studies.agreement.data import HOLISTIC, PANEL, AgreementData

METRICS = ("qwk", "alpha_interval", "spearman", "bias")
"""What :func:`judges_vs_humans` keeps of ``judge_agreement``'s rows."""


def _people(data: AgreementData) -> pd.DataFrame:
    return data.humans if data.humans is not None else data.means


def judges_vs_humans(
    data: AgreementData, *, n_resamples: int = 10_000, seed: int = 0
) -> pd.DataFrame:
    """One row per family and metric (QWK, alpha, Spearman, bias) against the human mean."""
    means = data.judge_means()
    frames = []
    for family in data.families:
        own = means[means[RATER] == family][[ITEM, SCORE]]
        rows = judge_agreement(
            own,
            _people(data),
            scale=data.scale,
            mapping=data.mapping,
            n_resamples=n_resamples,
            seed=seed,
            metrics=METRICS,
        )
        frames.append(rows.assign(family=family))
    out = pd.concat(frames, ignore_index=True)
    return out[["family", *[c for c in out.columns if c != "family"]]]


def repeatability(data: AgreementData, *, n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Per family: alpha over its repetitions (with interval) and ICC(1,1) beside it.

    A family with one repetition, or one answer to every image and repetition (a dimension
    it never scores but one way), gets a note instead: there is no agreement to measure.
    """
    rows = []
    for family in data.families:
        own = data.repetitions[data.repetitions["family"] == family]
        tidy = own.rename(columns={"repetition": RATER})[[ITEM, RATER, SCORE]]
        k = int(tidy[RATER].nunique())
        row = {"family": family, "k": k}
        if k < 2:
            rows.append({**row, "note": "one repetition: nothing to repeat"})
            continue
        if tidy[SCORE].nunique() < 2:  # alpha and the ICC compare variances: none here
            rows.append({**row, "note": "every repetition gives one answer: nothing varies"})
            continue
        alpha = alpha_interval(tidy, "interval", n_resamples=n_resamples, seed=seed)
        icc = icc_table(tidy).set_index("type").loc["ICC(1,1)"]
        rows.append(
            {
                **row,
                "alpha": alpha.estimate,
                "alpha_ci_low": alpha.ci_low,
                "alpha_ci_high": alpha.ci_high,
                "icc_1_1": float(icc["estimate"]),
                "icc_ci_low": float(icc["ci_low"]),
                "icc_ci_high": float(icc["ci_high"]),
                "n_images": alpha.n_items,
                "note": "the k repetitions as raters, rubric scale",
            }
        )
    return pd.DataFrame(rows)


def complete_block(humans: pd.DataFrame) -> pd.DataFrame:
    """The ratings of the largest block of raters who all rated the same images.

    Raters are grouped by the set of images they rated; the group with the most ratings
    (raters x images, at least 2 of each) is kept. Empty when no two raters share images.
    """
    sets = humans.groupby(RATER)[ITEM].apply(lambda s: tuple(sorted(s)))
    groups = sets.groupby(sets).apply(lambda s: list(s.index))
    best: list = []
    best_size = 0
    for images, raters in groups.items():
        size = len(images) * len(raters)
        if len(images) >= 2 and len(raters) >= 2 and size > best_size:
            best, best_size = raters, size
    return humans[humans[RATER].isin(best)]


def human_reliability(
    data: AgreementData, *, n_resamples: int = 10_000, seed: int = 0
) -> pd.DataFrame:
    """The people's alpha over every rater, and the ICCs of the largest complete block.

    Returns an empty frame when the release has no rater ids (``data.reason`` says why).
    """
    if data.humans is None:
        return pd.DataFrame()
    alpha = alpha_interval(data.humans, "interval", n_resamples=n_resamples, seed=seed)
    rows = [
        {
            "measure": "alpha_interval",
            "estimate": alpha.estimate,
            "ci_low": alpha.ci_low,
            "ci_high": alpha.ci_high,
            "n_images": alpha.n_items,
            "n_raters": alpha.n_raters,
            "note": f"every rater; percentile bootstrap over images, B={n_resamples}",
        }
    ]
    block = complete_block(data.humans)
    if block.empty:
        return pd.DataFrame(rows)
    for r in icc_table(block).itertuples():
        if r.type in ("ICC(2,1)", "ICC(2,k)"):
            rows.append(
                {
                    "measure": r.type,
                    "estimate": r.estimate,
                    "ci_low": r.ci_low,
                    "ci_high": r.ci_high,
                    "n_images": r.n_items,
                    "n_raters": r.n_raters,
                    "note": f"{r.description}; the largest block of raters sharing their images",
                }
            )
    return pd.DataFrame(rows)


def alt_tests(
    data: AgreementData,
    *,
    epsilon: float,
    metric: str = "neg_rmse",
    q: float = 0.05,
    min_items: int = 30,
) -> dict[str, AltTestResult | str]:
    """The alternative annotator test of each family and of the panel mean.

    A judge the test cannot run on (no annotator with ``min_items`` usable images) gets
    the reason as a string instead of a result, and so does the panel mean of a single
    family: it is that family, and its test would be the family's test again. Empty
    without rater ids.
    """
    if data.humans is None:
        return {}
    means = data.judge_means()
    judges = {f: means[means[RATER] == f].set_index(ITEM)[SCORE] for f in data.families}
    scale = data.scale if metric == "accuracy" else None
    out: dict[str, AltTestResult | str] = {}
    if len(data.families) > 1:
        judges[PANEL] = data.panel_mean()
    for name, scores in judges.items():
        try:
            out[name] = alt_test(
                data.humans,
                scores,
                epsilon=epsilon,
                metric=metric,
                q=q,
                mapping=data.mapping,
                scale=scale,
                min_items_per_annotator=min_items,
            )
        except ValueError as exc:
            out[name] = str(exc)
    if PANEL not in judges:
        out[PANEL] = f"the panel mean of one family is that family ({', '.join(data.families)})"
    return out


def advantage_interval(result: AltTestResult, confidence: float = 0.95) -> tuple[float, float]:
    """A normal interval of the advantage probability over images, the annotators held fixed.

    Each annotator's rho_judge is a share of their n_j images, of variance rho (1 - rho) /
    n_j; the mean over m annotators has the mean of those over m. Clipped to [0, 1]. (An
    interval over annotators would need many more of them than a release of a few dozen
    raters gives the test.)
    """
    table = result.per_annotator
    rho = table["rho_judge"].to_numpy(dtype=float)
    var = (rho * (1 - rho) / table["n_items"].to_numpy(dtype=float)).sum() / rho.size**2
    half = stats.norm.ppf(0.5 + confidence / 2) * math.sqrt(var)
    return max(0.0, float(rho.mean() - half)), min(1.0, float(rho.mean() + half))


def alt_table(results: dict[str, AltTestResult | str]) -> pd.DataFrame:
    """One row per judge of :func:`alt_tests`, the advantage probability's interval
    (:func:`advantage_interval`) beside it (a judge not tested says why in ``note``)."""
    rows = []
    for name, res in results.items():
        if isinstance(res, str):
            rows.append({"judge": name, "note": res})
        else:
            low, high = advantage_interval(res)
            rows.append({**res.as_row(judge=name), "adv_ci_low": low, "adv_ci_high": high})
    return pd.DataFrame(rows)


def panel_effective_size(
    data: AgreementData, *, n_resamples: int = 10_000, seed: int = 0
) -> PanelSize:
    """The effective number of judges of the families' errors against the human mean."""
    return panel_size(
        data.judge_means(),
        _people(data),
        mapping=data.mapping,
        n_resamples=n_resamples,
        seed=seed,
    )


def pooled_mapping(inputs: Sequence[AgreementData], metric: str) -> str:
    """The name of the per-dimension maps :func:`pooled_alt_tests` uses."""
    maps = "; ".join(f"{d.question} {d.mapping.name}" for d in inputs)
    rounding = "; each rounded half up to its attribute's integer grid"
    return f"per dimension: {maps}" + (rounding if metric == "accuracy" else "")


def pooled_alt_tests(
    inputs: Sequence[AgreementData],
    *,
    epsilon: float,
    metric: str = "neg_rmse",
    q: float = 0.05,
    min_items: int = 30,
) -> dict[str, AltTestResult | str]:
    """The alternative annotator test of each family and of the panel mean, every image x
    dimension of ``inputs`` (dimensions with rater ids) one instance.

    Judges and people answer each dimension on its own scale, so each dimension's judge
    scores are mapped onto its attribute's range first (for ``accuracy`` also rounded to
    its grid); the test then compares on the people's scales as they are, and each result
    names the maps. An annotator's instances are the images they rated times the pooled
    dimensions. Empty when fewer than two dimensions have rater ids (the pool of one
    dimension is that dimension's test again).
    """
    rated = [d for d in inputs if d.humans is not None and d.question != HOLISTIC]
    if len(rated) < 2:
        return {}
    humans = pd.concat(
        [d.humans.assign(**{DIMENSION: d.question}) for d in rated if d.humans is not None],
        ignore_index=True,
    )
    families = list(dict.fromkeys(f for d in rated for f in d.families))
    scores: dict[str, list[pd.Series]] = {name: [] for name in [*families, PANEL]}
    for d in rated:
        means = d.judge_means()
        per_judge = {f: means[means[RATER] == f].set_index(ITEM)[SCORE] for f in d.families}
        per_judge[PANEL] = d.panel_mean()
        for name, raw in per_judge.items():
            mapped = d.mapping(raw.to_numpy())
            if metric == "accuracy":
                mapped = to_grid(mapped, d.scale).astype(np.float64)
            index = pd.MultiIndex.from_arrays(
                [raw.index.astype(str), [d.question] * len(raw)], names=[ITEM, DIMENSION]
            )
            scores[name].append(pd.Series(mapped, index=index, name=SCORE))
    named = pooled_mapping(rated, metric)
    out: dict[str, AltTestResult | str] = {}
    for name, parts in scores.items():
        if not parts:
            continue
        if name == PANEL and len(families) < 2:
            out[name] = f"the panel mean of one family is that family ({', '.join(families)})"
            continue
        try:
            result = alt_test(
                humans,
                pd.concat(parts),
                epsilon=epsilon,
                metric=metric,
                q=q,
                mapping=None,
                min_items_per_annotator=min_items,
                pool_dimensions=True,
            )
        except ValueError as exc:
            out[name] = str(exc)
            continue
        out[name] = dataclasses.replace(result, mapping=named)
    return out


def dimension_table(
    inputs: Mapping[str, AgreementData], *, n_resamples: int = 10_000, seed: int = 0
) -> pd.DataFrame:
    """One row per judge family and dimension: QWK, alpha, Spearman and bias against the
    human mean of the dimension's attribute (after its map), the family's repeatability
    over its repetitions, and the people's own alpha on that attribute beside them."""
    rows = []
    for key, data in inputs.items():
        agree = judges_vs_humans(data, n_resamples=n_resamples, seed=seed)
        repeat = repeatability(data, n_resamples=n_resamples, seed=seed).set_index("family")
        people = human_reliability(data, n_resamples=n_resamples, seed=seed)
        human_alpha = (
            float(people.set_index("measure").loc["alpha_interval", "estimate"])
            if not people.empty
            else math.nan
        )
        n_images = int(data.repetitions[ITEM].nunique())
        for family in data.families:
            est = agree[agree["family"] == family].set_index("metric")
            rows.append(
                {
                    "dimension": key,
                    "attribute": data.column,
                    "judge": family,
                    "n_images": n_images,
                    "qwk": float(est.loc["qwk", "estimate"]),
                    "alpha": float(est.loc["alpha_interval", "estimate"]),
                    "spearman": float(est.loc["spearman", "estimate"]),
                    "bias": float(est.loc["bias", "estimate"]),
                    "bias_ci_low": float(est.loc["bias", "ci_low"]),
                    "bias_ci_high": float(est.loc["bias", "ci_high"]),
                    "repeatability": float(repeat.loc[family].get("alpha", math.nan)),
                    "k": int(repeat.loc[family, "k"]),
                    "people_alpha": human_alpha,
                    "mapping": data.mapping.name,
                }
            )
    return pd.DataFrame(rows)
