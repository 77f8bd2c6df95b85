"""What a rated-image dataset holds, and the noise ceiling it supports (``data describe``).

Before a study is planned on a new dataset, a researcher wants to know what its release
kept: how many images, how many raters or votes each, which attributes on which scales
and which rubric dimension each validates, the official split, and how far any judge can
agree with its human mean. :func:`describe_dataset` reads the dataset with its loader and
answers in one dictionary (the ``--json`` output); :func:`describe_lines` words it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from judgepanel.core.errors import ConfigError
from judgepanel.core.rubric import Rubric
from judgepanel.core.scales import check_line, scale_checks
from judgepanel.datasets import Dataset, load_dataset
from judgepanel.datasets.attribute import HOLISTIC
from judgepanel.datasets.kinds import get_kind, rated_kinds
from judgepanel.datasets.mapping import FIXED_DIMENSIONS
from judgepanel.stats import noise_ceiling

METHOD_WORDS = {
    "per_rater_split_half": "per-rater split-half",
    "vote_split_half": "split-half of exchangeable votes",
    "summary_ctt": "classical test theory from mean, SD and n",
    "none": "none",
}


def parse_dataset_spec(spec: str) -> tuple[str, Path]:
    """``KIND:PATH`` of a rated-image dataset, checked.

    Raises:
        ConfigError: not ``KIND:PATH``, or a kind without per-image human ratings.
    """
    kind, sep, root = spec.partition(":")
    if not sep or not root:
        raise ConfigError(f"--dataset {spec!r}: expected KIND:PATH, e.g. ratings:data/mine")
    if kind not in rated_kinds():
        raise ConfigError(
            f"--dataset {spec!r}: kind {kind!r} has no per-image human ratings; "
            f"expected one of {', '.join(rated_kinds())}"
        )
    return kind, Path(root)


def describe_dataset(
    kind: str,
    root: str | Path,
    *,
    n_splits: int = 100,
    n_resamples: int = 200,
    seed: int = 0,
    rubric: Rubric | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The dataset at ``root`` described from its label files; the ceiling is of the
    overall rating (Spearman), and each attribute has its own.

    The images need not be on disk (the loader runs with ``missing_images='keep'``);
    ``n_on_disk`` says how many are.

    Args:
        rubric: the description then also has ``rubric`` (its name, source and hash),
            ``mapping`` (one row per question of the rubric, holistic first, with the
            attribute that validates it and that attribute's noise ceiling) and
            ``unmapped`` (the attributes that name a dimension the rubric does not have),
            each mapping row with its rubric ``scale`` (``scale_defaulted``: none declared),
            and ``scale_notes`` (where a scale is the default or differs from its
            attribute's range, :mod:`judgepanel.core.scales`).
        options: the kind's loader options (its declared keys: ``mos_scale``...).

    Returns:
        ``n_images``, ``attributes`` (name, column, range, higher_is_better, dimension),
        ``ceiling``, ``ceiling_method``, ``ceiling_ci`` (its 95% interval over images),
        then ``ceiling_reason`` (why there is none, else ""), ``kind``, ``name``,
        ``root``, ``licence``, ``citation``, ``n_on_disk``, ``notes`` (how the release
        was read: form, scale, SD convention, spellings mapped, columns not read), each
        attribute's ``ceiling*`` keys under ``attributes``, ``per_image`` (what is
        counted per image, with its median, min and max), ``splits`` (images per split)
        and the rubric's keys above. Missing numbers are None.

    Raises:
        DatasetError: the loader's, for a missing or malformed dataset.
    """
    declared = {**get_kind(kind).keys, **get_kind(kind).options}
    keys = {"missing_images": "keep"} if "missing_images" in declared else {}
    ds = load_dataset(kind, str(root), **{**keys, **(options or {})})
    overall = (
        _ceiling(ds, "score", n_splits, n_resamples, seed)
        if ds.has_overall
        else _no_ceiling("the dataset has no overall rating")
    )
    attributes = _attributes(ds)
    for a in attributes:
        found = overall if a["column"] == "score" and ds.has_overall else None
        a.update(found or _ceiling(ds, a["column"], n_splits, n_resamples, seed))
    split = ds.images.get("split")
    info = {
        "n_images": len(ds),
        "attributes": attributes,
        **overall,
        "ceiling_metric": "spearman",
        "kind": kind,
        "name": ds.name,
        "root": str(ds.root),
        "licence": ds.licence,
        "citation": ds.citation,
        "n_on_disk": ds.n_on_disk,
        "notes": list(ds.notes),
        "per_image": _per_image(ds),
        "splits": {} if split is None else split.fillna("(none)").value_counts().to_dict(),
    }
    if rubric is not None:
        info.update(rubric_mapping(ds, rubric, n_splits, n_resamples, seed))
    return info


def _ceiling(ds: Dataset, column: str, n_splits: int, n_resamples: int, seed: int) -> dict:
    """The noise ceiling of one attribute, as the description's ``ceiling*`` keys."""
    try:
        found = noise_ceiling(
            ds, attribute=column, n_splits=n_splits, n_resamples=n_resamples, seed=seed
        )
        ceiling, method = found.ceiling, found.method
        interval, reason = list(found.interval), found.reason
    except ValueError as exc:  # too few images or raters for any split
        ceiling, method, interval, reason = math.nan, "none", [math.nan] * 2, str(exc)
    return {
        "ceiling": _number(ceiling),
        "ceiling_method": method,
        "ceiling_ci": [_number(v) for v in interval],
        "ceiling_reason": reason,
    }


def _no_ceiling(reason: str) -> dict:
    return {"ceiling": None, "ceiling_method": "none", "ceiling_ci": [None, None],
            "ceiling_reason": reason}  # fmt: skip


def rubric_mapping(
    ds: Dataset, rubric: Rubric, n_splits: int = 100, n_resamples: int = 200, seed: int = 0
) -> dict[str, Any]:
    """Which attribute of ``ds`` validates each question of ``rubric``, with its ceiling.

    An attribute validates a dimension when it names the dimension's key (``dataset.yaml``
    or the loader's fixed mapping); the overall rating validates the holistic question.
    """
    attributes = _attributes(ds)
    by_dimension = {a["dimension"]: a for a in attributes if a["dimension"]}
    questions = ([HOLISTIC] if rubric.holistic is not None else []) + list(rubric.dimensions)
    checks = {c.question: c for c in scale_checks(rubric, ds)}
    rows = []
    for question in questions:
        a = by_dimension.get(question)
        row: dict[str, Any] = {"dimension": question, "attribute": a["name"] if a else None}
        row["column"] = a["column"] if a else None
        scale = checks[question].scale
        row["scale"] = [scale.min, scale.max]
        row["scale_defaulted"] = scale.defaulted
        if a is None:
            row.update(_no_ceiling("no attribute of the dataset validates it"))
        else:
            row.update(_ceiling(ds, a["column"], n_splits, n_resamples, seed))
        rows.append(row)
    unmapped = [
        {"attribute": a["name"], "dimension": a["dimension"]}
        for a in attributes
        if a["dimension"] and a["dimension"] not in questions
    ]
    return {
        "rubric": {"name": rubric.name, "source": rubric.source, "sha256": rubric.sha256},
        "mapping": rows,
        "unmapped": unmapped,
        "scale_notes": [check_line(c, rubric) for c in checks.values() if c.differs],
    }


def mapping_lines(info: dict[str, Any]) -> list[str]:
    """The rubric mapping of :func:`rubric_mapping` in words."""
    r = info["rubric"]
    lines = [f"rubric     {r['name']} ({r['source']}), SHA-256 {r['sha256'][:12]}"]
    lines.append("validates  (rubric question, the attribute, its noise ceiling)")
    for row in info["mapping"]:
        lines.append(
            f"  {row['dimension']:<20} {row['attribute'] or '-':<20} {_ceiling_words(row)}"
        )
    for a in info["unmapped"]:
        lines.append(
            f"  attribute {a['attribute']} names dimension {a['dimension']!r}, which this "
            "rubric does not have"
        )
    lines += [f"note: {note}" for note in info.get("scale_notes", [])]
    return lines


def describe_lines(info: dict[str, Any]) -> list[str]:
    """The description in words, one line a fact."""
    lines = [
        f"dataset    {info['name']} ({info['kind']}) at {info['root']}",
        f"licence    {info['licence'] or 'not stated'}",
        f"citation   {info['citation'] or 'not stated'}",
    ]
    splits = ", ".join(f"{k} {v}" for k, v in info["splits"].items())
    lines.append(f"images     {info['n_images']}" + (f" (split: {splits})" if splits else ""))
    if info.get("n_on_disk") is not None:
        lines.append(f"on disk    {info['n_on_disk']:,} of {info['n_images']:,} images")
    per = info["per_image"]
    if per["median"] is None:
        lines.append(f"per image  {per['unit']}")
    else:
        lines.append(
            f"per image  {per['unit']}: median {per['median']:g}, range "
            f"{per['min']:g}-{per['max']:g}"
        )
    lines.append("attributes (table column, as released, range, direction, validates)")
    for a in info["attributes"]:
        low, high = a["range"]
        direction = {
            True: "higher is better",
            False: "higher is worse",
            None: "direction not stated",
        }
        turned = " (turned around in the tables)" if a.get("turned") else ""
        lines.append(
            f"  {a['column']:<20} {a['name']:<20} {low:g}-{high:g}  "
            f"{direction[a['higher_is_better']]}{turned}  {a['dimension'] or '-'}"
        )
    lines.append(f"noise ceiling  {_ceiling_words(info)}")
    others = [a for a in info["attributes"] if a["column"] != "score" and "ceiling" in a]
    if others:
        lines.append("noise ceiling of each other attribute")
        lines += [f"  {a['column']:<20} {_ceiling_words(a)}" for a in others if a["ceiling"]]
        reasons: dict[str, list[str]] = {}
        for a in others:
            if not a["ceiling"]:
                reasons.setdefault(_ceiling_words(a), []).append(a["column"])
        lines += [f"  {', '.join(columns)}: {words}" for words, columns in reasons.items()]
    if info.get("notes"):
        lines.append("read as")
        lines += [f"  {note}" for note in info["notes"]]
    if "mapping" in info:
        lines += mapping_lines(info)
    return lines


def _ceiling_words(info: dict[str, Any]) -> str:
    """A ceiling and how it was found, or why there is none, in words."""
    method = METHOD_WORDS.get(info["ceiling_method"], info["ceiling_method"])
    if info["ceiling"] is None:
        how = "" if info["ceiling_method"] == "none" else f" ({method})"
        return f"none{how}: {info['ceiling_reason']}"
    low, high = (f"{v:.3f}" if v is not None else "?" for v in info["ceiling_ci"])
    return f"{info['ceiling']:.3f} (95% interval over images {low}-{high}), {method}, Spearman"


def _number(value: float) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def _attributes(ds: Dataset) -> list[dict[str, Any]]:
    if ds.attributes:
        return [
            {
                "name": a.name,
                "column": a.column,
                "range": [a.low, a.high],
                "higher_is_better": a.higher_is_better,
                "dimension": a.dimension,
                "turned": a.reversed,
            }
            for a in ds.attributes.values()
        ]
    return [  # EVA and PARA: the loaders fix the mapping; the release states no direction
        {
            "name": column,
            "column": column,
            "range": [float(low), float(high)],
            "higher_is_better": True if column in FIXED_DIMENSIONS else None,
            "dimension": FIXED_DIMENSIONS.get(column),
            "turned": False,
        }
        for column, (low, high) in ds.attribute_ranges.items()
    ]


def _per_image(ds: Dataset) -> dict[str, Any]:
    """What the overall rating counts per image (raters, votes or the summary's n)."""
    if len(ds.ratings):
        unit = "raters"
    elif ds.votes is not None and len(ds.votes):
        unit = "votes"
    else:
        unit = "ratings (n of the summary)"
    counts = ds.images["n_raters"].dropna()
    if counts.empty:
        return {"unit": "no count of raters or votes", "median": None, "min": None, "max": None}
    return {
        "unit": unit,
        "median": float(counts.median()),
        "min": float(counts.min()),
        "max": float(counts.max()),
    }
