"""The arms a deployment can fit: which calls each needs and the feature columns it reads.

An arm of the fusion study is a feature set and a combiner (notebook 02's names). The
features are built here from the score table the same way for the training images and
for new ones, with the scoring design's k fixed, so a new image whose calls partly
failed gets the same columns as a training image: a column none of whose repetitions
came back is NaN (and the image gets no prediction), never a value filled in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgepanel.core.prompts import DIMENSIONS, VALIDATED
from judgepanel.studies.fusion.blocks import BLOCK_RUNS

GB, RIDGE, COLUMN, MEAN = "gb", "ridge", "column", "mean"
"""Combiners: the study's gradient boosting, in-fold ridge, one column, the plain mean."""


@dataclass(frozen=True)
class ArmSpec:
    """What one arm reads and how it combines.

    Attributes:
        name: the arm's name in notebook 02 (``H+P_gb``, ``best single``...).
        holistic: which holistic features: ``""`` none, ``mean`` (H), ``split`` (five
            contiguous blocks of the k runs) or ``blocks3`` (five blocks of 3 runs).
        dimensions: the rubric dimensions whose per-family means it reads.
        combiner: ``gb``, ``ridge``, ``column`` (the best single model) or ``mean``.
    """

    name: str
    holistic: str
    dimensions: tuple[str, ...]
    combiner: str


ARMS: dict[str, ArmSpec] = {
    a.name: a
    for a in (
        ArmSpec("H_gb", "mean", (), GB),
        ArmSpec("P_gb", "", tuple(DIMENSIONS), GB),
        ArmSpec("H+P_gb", "mean", tuple(DIMENSIONS), GB),
        ArmSpec("H_split_gb", "split", (), GB),
        ArmSpec("H_blocks3_gb", "blocks3", (), GB),
        ArmSpec("P_validated_gb", "", tuple(VALIDATED), GB),
        ArmSpec("H_ridge", "mean", (), RIDGE),
        ArmSpec("P_ridge", "", tuple(DIMENSIONS), RIDGE),
        ArmSpec("best single", "mean", (), COLUMN),
        ArmSpec("panel mean", "mean", (), MEAN),
    )
}
"""Every arm ``judgepanel fit --arm`` accepts."""


def arm_spec(name: str) -> ArmSpec:
    """The arm called ``name``; an unknown name is an error listing the known ones."""
    try:
        return ARMS[name]
    except KeyError:
        raise ValueError(f"unknown arm {name!r}; expected one of {', '.join(ARMS)}") from None


def holistic_groups(kind: str, k: int) -> list[tuple[str, list[int]]]:
    """(column suffix, repetitions averaged) of each holistic feature of one family."""
    if kind == "mean":
        return [("", list(range(k)))]
    if kind == "split":
        return [(f":b{b}", [int(r) for r in c]) for b, c in enumerate(np.array_split(range(k), 5))
                if len(c)]  # fmt: skip
    if kind == "blocks3":
        n = len(DIMENSIONS)
        if k < n * BLOCK_RUNS:
            raise ValueError(f"{n} blocks of {BLOCK_RUNS} holistic runs need k >= "
                             f"{n * BLOCK_RUNS}; the design has k = {k}")  # fmt: skip
        return [(f":h{b}", list(range(b * BLOCK_RUNS, (b + 1) * BLOCK_RUNS))) for b in range(n)]
    return []


def feature_columns(spec: ArmSpec, families: Sequence[str], k: int) -> list[str]:
    """The arm's feature columns, in the order the combiner reads them."""
    cols = [f"{f}{suffix}" for f in families for suffix, _ in holistic_groups(spec.holistic, k)]
    return cols + [f"{f}:{d}" for f in families for d in spec.dimensions]


def arm_features(
    scores: pd.DataFrame,
    spec: ArmSpec,
    families: Sequence[str],
    k: int,
    items: Sequence[str],
) -> pd.DataFrame:
    """The arm's features for ``items`` from ok answers (columns item, family, kind,
    dimension, repetition, value); a feature with no answer is NaN.

    Holistic features average repetitions ``0..k-1`` only (the design's), dimension
    features every stored repetition of the dimension, as the study's blocks do.
    """
    index = pd.Index([str(i) for i in items], name="item")
    out = pd.DataFrame(index=index)
    s = scores.assign(item=scores["item"].astype(str))
    hol = s[(s["kind"] == "holistic") & s["family"].isin(list(families))]
    runs = hol.pivot_table(index="item", columns=["family", "repetition"], values="value")
    for fam in families:
        for suffix, reps in holistic_groups(spec.holistic, k):
            cols = [(fam, r) for r in reps if (fam, r) in runs.columns]
            block = runs[cols].reindex(index) if cols else pd.DataFrame(index=index)
            out[f"{fam}{suffix}"] = block.mean(axis=1) if cols else np.nan
    dim = s[(s["kind"] == "dimension") & s["family"].isin(list(families))]
    wide = dim.pivot_table(index="item", columns=["family", "dimension"], values="value")
    for fam in families:
        for d in spec.dimensions:
            has = (fam, d) in wide.columns
            out[f"{fam}:{d}"] = wide[(fam, d)].reindex(index) if has else np.nan
    return out[feature_columns(spec, families, k)].astype(float)


def calls_needed(
    spec: ArmSpec, families: Sequence[str], k: int, r: int
) -> list[tuple[str, str, str, int]]:
    """(family, prompt kind, dimension, repetitions) of every prompt the features need."""
    need: list[tuple[str, str, str, int]] = []
    reps = max((max(g) + 1 for _, g in holistic_groups(spec.holistic, k)), default=0)
    for fam in families:
        if reps:
            need.append((fam, "holistic", "", reps))
        need += [(fam, "dimension", d, r) for d in spec.dimensions]
    return need
