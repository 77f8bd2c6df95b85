"""Store rows to tidy frames, and which items a run scored.

Everything an analysis reads from a checkpoint store passes through here: the store is
opened read-only and closed again, and the images of a scoring design are chosen in one
place (:func:`scored_dataset`), so an analysis reads exactly the images that were scored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgepanel.core.config import DatasetRef, ScoringDesign
from judgepanel.core.store import Store
from judgepanel.datasets import Dataset, load_dataset

SCORE_COLUMNS: tuple[str, ...] = (
    "dataset",
    "item",
    "family",
    "kind",
    "dimension",
    "repetition",
    "temperature",
    "rubric_sha",
    "status",
    "value",
)
"""The store columns :func:`score_table` reads (``Store.frame(columns=SCORE_COLUMNS)``)."""


def score_table(
    calls: pd.DataFrame,
    dataset: str,
    *,
    families: Sequence[str] | None = None,
    rubric_sha: str | None = None,
    temperature: float | None = None,
    call_types: Sequence[str] = ("holistic", "dimension"),
) -> pd.DataFrame:
    """The ok answers of the call types ``call_types`` (holistic and dimension) of one
    dataset, a row a call.

    Args:
        calls: ``Store.frame()`` output.
        dataset: the dataset key in the store.
        families: keep only these families (default: all present).
        rubric_sha: keep only calls made with this rubric (default: the most frequent one,
            so a store that mixes rubric versions never mixes them silently).
        temperature: keep only this temperature (default: the most frequent one).
        call_types: the call types to keep (``sham`` for the sham rubric's answers).

    Returns:
        Columns item, family, kind, dimension, repetition, value.
    """
    df = calls[(calls["dataset"] == dataset) & calls["kind"].isin(list(call_types))]
    if df.empty:
        raise ValueError(f"the store holds no {' or '.join(call_types)} calls for {dataset!r}")
    for col, wanted in (("rubric_sha", rubric_sha), ("temperature", temperature)):
        if wanted is None:
            wanted = df[col].mode().iloc[0]
        df = df[df[col] == wanted]
    if families is not None:
        missing = sorted(set(families) - set(df["family"]))
        if missing:
            raise ValueError(f"{dataset}: the store has no scores for families {missing}")
        df = df[df["family"].isin(list(families))]
    df = df[df["status"] == "ok"]
    return df[["item", "family", "kind", "dimension", "repetition", "value"]].reset_index(drop=True)


def read_calls(
    store: str | Path,
    dataset: str | None = None,
    *,
    call_types: Iterable[str] | None = None,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The stored calls of ``dataset`` (see :meth:`Store.frame`); the store is closed after."""
    with Store(store, readonly=True) as db:
        return db.frame(dataset=dataset, call_types=call_types, columns=columns)


def scored_dataset(kind: str, root: str | Path, design: ScoringDesign, **keys: Any) -> Dataset:
    """The rated images a scoring design covers: its stratified sample of ``n_images``
    (seed ``sample_seed``), or every image when the design names no ``n_images``.

    The planner, the notebooks and the score-then-rank training world all take their
    images from here. ``keys`` are the dataset entry's loader keys
    (`DatasetRef.loader_keys`), ``missing_images`` among them: under ``skip`` the images
    absent from disk are left out before the sample is drawn.
    """
    ds = load_dataset(kind, str(root), **keys)
    return ds if design.n_images is None else ds.sample(design.n_images, design.sample_seed)


def skipped_images(ref: DatasetRef) -> tuple[str, ...]:
    """The ids of ``ref``'s labelled images a run leaves out as absent from disk: empty
    unless its entry says ``missing_images: skip`` (then the dataset is read to see)."""
    if ref.missing_images != "skip":
        return ()
    return load_dataset(ref.kind, str(ref.root), **ref.loader_keys).skipped
