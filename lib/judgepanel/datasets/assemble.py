"""A `Dataset` from long tables: what the generic ``ratings`` format and the adapters share.

Each release keeps its human ratings in its own shape. Its adapter reads them, checks the
file (errors name the file, column and line), and hands over at most three long tables
keyed by image and attribute: per-rater ratings, anonymous vote counts, per-image
summaries. :func:`assemble` lays them out as the EVA and PARA loaders do (a wide per-rater
``ratings`` table and one row per image with the mean of every attribute), so that the
studies read every dataset alike, and keeps the votes and summaries the noise ceiling needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import N_SHOWN, Dataset, DatasetError
from judgepanel.datasets.attribute import HOLISTIC, RESERVED_COLUMNS, Attribute

KEYS = ["image_id", "attribute"]
RATING_COLUMNS = ["image_id", "attribute", "value", "rater_id"]
VOTE_COLUMNS = ["image_id", "attribute", "value", "count"]
SUMMARY_COLUMNS = ["image_id", "attribute", "mean", "sd", "n"]


def assemble(
    name: str,
    root: Path,
    images: pd.DataFrame,
    attributes: Sequence[Attribute],
    source: str | Path,
    *,
    ratings: pd.DataFrame | None = None,
    votes: pd.DataFrame | None = None,
    summary: pd.DataFrame | None = None,
    licence: str = "",
    citation: str = "",
    notes: Sequence[str] = (),
) -> Dataset:
    """Lay out checked long tables as a `Dataset`.

    Args:
        name: the dataset's short name.
        root: its folder.
        images: one row per image, in the dataset's order: ``image_id``, ``path``
            (absolute), and optionally ``split``, ``group`` and the release's own columns.
        attributes: the rated attributes; at most one is ``holistic`` (the overall
            rating), with column ``score``. Values of an attribute that is ``reversed``
            are turned around here.
        source: the file(s) the tables came from, named by errors.
        ratings: per-rater ratings, long: ``image_id``, ``attribute`` (an attribute's
            column), ``value``, ``rater_id``; one row per (image, attribute, rater).
        votes: anonymous votes, long: ``image_id``, ``attribute``, ``value``, ``count``.
        summary: per image and attribute: ``mean``, ``sd``, ``n`` (NaN where not given).
            Its mean is the image's released mean, also where ratings of the same
            attribute exist (they then give n, the SD and the ceiling). Its SD is a
            sample SD (ddof 1): an adapter converts a release's population SD.
        notes: how the release was read (`Dataset.notes`).

    Returns:
        A `Dataset` whose ``images`` hold ``image_id``, ``path``, ``n_raters`` (raters,
        votes or the summary's n of the overall rating; without one, of the image's most
        rated attribute), ``mean_score``, every other attribute's mean under its column,
        ``score_sd``, then ``split``, ``group`` and the release's own columns. Without an
        overall rating there is no ``mean_score`` or ``score_sd``.

    Raises:
        DatasetError: an image of the tables is not in ``images``, an image has no
            overall rating (without one: no rating at all), or one attribute of one image
            has both ratings and votes.
    """
    by_column = {a.column: a for a in attributes}
    score = _check_attributes(attributes)
    ratings = _turned(_only(ratings, RATING_COLUMNS), by_column, "value")
    votes = _turned(_only(votes, VOTE_COLUMNS), by_column, "value")
    summary = _turned(_only(summary, SUMMARY_COLUMNS), by_column, "mean")
    if votes is not None:
        votes = votes[votes["count"] > 0].reset_index(drop=True)
    order = pd.Index(images["image_id"])
    for table in (ratings, votes, summary):
        if table is not None:
            _known(table, order, by_column, source)

    per_image = _per_image(ratings, votes, summary, source)
    out = images[["image_id", "path"]].copy()
    if score is not None:
        n = _field(per_image, "n", "score", order)
        out["mean_score"] = _field(per_image, "mean", "score", order)
        _require_every_image(
            out["mean_score"], order, source, f"the overall attribute {score.name!r}"
        )
    else:  # no overall rating: an image counts the raters of its most rated attribute
        n = per_image["n"].groupby(level="image_id").max().reindex(order).to_numpy(dtype=float)
        _require_every_image(pd.Series(n), order, source, "any attribute")
    out.insert(2, "n_raters", n.astype(int) if not np.isnan(n).any() else n)
    for column in by_column:
        if column != "score":
            out[column] = _field(per_image, "mean", column, order)
    if score is not None:
        out["score_sd"] = _field(per_image, "sd", "score", order)
    extra = [c for c in images.columns if c not in ("image_id", "path")]
    out = pd.concat([out, images[extra].reset_index(drop=True)], axis=1)

    return Dataset(
        name=name,
        root=root,
        images=out,
        ratings=_wide(ratings, order, list(by_column)),
        score_range=None if score is None else (score.low, score.high),
        attribute_ranges={a.column: (a.low, a.high) for a in attributes},
        votes=votes,
        summary=summary,
        attributes=dict(by_column),
        licence=licence,
        citation=citation,
        notes=tuple(notes),
    )


def _check_attributes(attributes: Sequence[Attribute]) -> Attribute | None:
    """The overall attribute, if any; the adapters' descriptions are checked once more."""
    holistic = [a for a in attributes if a.dimension == HOLISTIC]
    if len(holistic) > 1 or (holistic and holistic[0].column != "score"):
        raise ValueError("at most one attribute may be holistic, with column 'score'")
    columns = [a.column for a in attributes]
    if len(set(columns)) != len(columns) or RESERVED_COLUMNS & set(columns):
        raise ValueError(f"attribute columns must be distinct and not reserved: {columns}")
    return holistic[0] if holistic else None


def _require_every_image(values: pd.Series, order: pd.Index, source: str | Path, what: str) -> None:
    """A `DatasetError` naming the first images without a rating of ``what``."""
    missing = values.isna().to_numpy()
    if missing.any():
        first = ", ".join(map(str, order[missing][:N_SHOWN]))
        raise DatasetError(
            f"{source}: {int(missing.sum())} image(s) have no rating of {what}; first: {first}"
        )


def _only(table: pd.DataFrame | None, columns: list[str]) -> pd.DataFrame | None:
    if table is None or table.empty:
        return None
    frame = table[columns].copy()
    frame["image_id"] = frame["image_id"].astype(str)
    return frame.reset_index(drop=True)


def _turned(
    table: pd.DataFrame | None, attributes: dict[str, Attribute], column: str
) -> pd.DataFrame | None:
    """``table`` with the values of reversed attributes turned around (low + high - v)."""
    if table is None:
        return None
    for a in attributes.values():
        if a.reversed:
            rows = table["attribute"] == a.column
            table.loc[rows, column] = a.low + a.high - table.loc[rows, column]
    return table


def _known(
    table: pd.DataFrame, order: pd.Index, attributes: dict[str, Attribute], source: str | Path
) -> None:
    stray = pd.Index(table["image_id"].unique()).difference(order)
    if len(stray):
        raise DatasetError(
            f"{source}: {len(stray)} rated image(s) are not among the dataset's images; "
            f"first: {', '.join(map(str, stray[:N_SHOWN]))}"
        )
    unknown = sorted(set(table["attribute"].unique()) - set(attributes))
    if unknown:
        raise DatasetError(f"{source}: unknown attribute(s) {unknown}")


def _per_image(
    ratings: pd.DataFrame | None,
    votes: pd.DataFrame | None,
    summary: pd.DataFrame | None,
    source: str | Path,
) -> pd.DataFrame:
    """mean, sd and n per (image, attribute): measured from ratings or votes, with the
    summary's mean first and its n and SD where nothing was measured."""
    parts = []
    if ratings is not None:
        grouped = ratings.groupby(KEYS, sort=False)["value"]
        parts.append(
            pd.DataFrame({"mean": grouped.mean(), "sd": grouped.std(), "n": grouped.size()})
        )
    if votes is not None:
        weighted = votes.assign(
            w=votes["count"] * votes["value"], w2=votes["count"] * votes["value"] ** 2
        )
        sums = weighted.groupby(KEYS, sort=False)[["count", "w", "w2"]].sum()
        n = sums["count"].astype(float)
        mean = sums["w"] / n
        var = ((sums["w2"] - n * mean**2) / (n - 1).where(n > 1)).clip(lower=0)
        parts.append(pd.DataFrame({"mean": mean, "sd": np.sqrt(var), "n": n}))
    released = None if summary is None else summary.set_index(KEYS)[["mean", "sd", "n"]]
    if not parts:
        if released is None:
            raise DatasetError(f"{source}: holds no ratings, votes or summaries")
        return released.astype(float)
    stats = pd.concat(parts).astype(float)
    if stats.index.duplicated().any():
        image, attribute = stats.index[stats.index.duplicated()][0]
        raise DatasetError(
            f"{source}: image {image} has both per-rater ratings and anonymous votes of "
            f"{attribute!r}; give one or the other"
        )
    if released is not None:
        released = released.astype(float)
        stats = stats.reindex(stats.index.union(released.index))
        stats["mean"] = released["mean"].reindex(stats.index).fillna(stats["mean"])
        for column in ("sd", "n"):
            stats[column] = stats[column].fillna(released[column].reindex(stats.index))
    return stats


def _field(per_image: pd.DataFrame, field: str, attribute: str, order: pd.Index) -> np.ndarray:
    """One field of one attribute per image, in image order (NaN where there is none)."""
    values = per_image[field]
    values = values[values.index.get_level_values("attribute") == attribute]
    values = values.droplevel("attribute")
    return values.reindex(order).to_numpy(dtype=float)


def _wide(ratings: pd.DataFrame | None, order: pd.Index, columns: list[str]) -> pd.DataFrame:
    """Per-rater ratings, one row per (image, rater), one column per attribute."""
    if ratings is None:
        return pd.DataFrame(
            {"image_id": pd.Series(dtype=str), "rater_id": pd.Series(dtype=str), "score": []}
        )
    wide = ratings.pivot(index=["image_id", "rater_id"], columns="attribute", values="value")
    wide = wide.reset_index().rename_axis(None, axis=1)
    position = pd.Series(np.arange(len(order)), index=order)
    wide = wide.iloc[np.argsort(position[wide["image_id"]].to_numpy(), kind="stable")]
    present = [c for c in columns if c in wide.columns]
    return wide[["image_id", "rater_id", *present]].reset_index(drop=True)
