"""What a loader does with rated images absent from disk: ``missing_images``.

A question about labels (how many images, how reliable the ratings) needs only the label
files, and a user may have downloaded some of the images or none. Every rated-image loader
takes ``missing_images``:

- ``error`` (the default): any image absent from disk is an error naming the count, the
  first few and where they were expected;
- ``skip``: images absent from disk are left out, with their ratings, votes and summaries
  (what scoring needs: only images that can be sent);
- ``keep``: every labelled image stays, on disk or not (what ``data describe`` and the
  noise ceiling need: labels alone).

The dataset records how many of its images are on disk (``Dataset.n_on_disk``).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Literal

import numpy as np
import pandas as pd

from judgepanel.datasets._common import N_SHOWN, Dataset, DatasetError, _rows_of

MissingImages = Literal["error", "skip", "keep"]
POLICIES: tuple[str, ...] = ("error", "skip", "keep")
FIX = (
    "put the images there, or load with missing_images='skip' to score the images present "
    "(`--missing-images skip`, or `missing_images: skip` in the runs file's dataset entry), "
    "or 'keep' to read the labels alone (`data describe` does)"
)


def check_policy(policy: str) -> str:
    """``policy`` if it is one of `POLICIES`, else a `DatasetError` listing them."""
    if policy not in POLICIES:
        raise DatasetError(f"missing_images={policy!r}: expected one of {', '.join(POLICIES)}")
    return policy


def on_disk(paths: list[str]) -> np.ndarray:
    """Whether each path is a file."""
    return np.fromiter(map(os.path.isfile, paths), bool, len(paths))


def missing_message(where: object, ids: list[str], paths: list[str], total: int) -> str:
    """One line: how many of ``total`` images are absent, the first few, and the fix."""
    first = ", ".join(map(str, ids[:N_SHOWN]))
    return (
        f"{where}: {len(ids)} of {total} rated image(s) are missing on disk (first: {first}; "
        f"expected for example {paths[0]}); {FIX}"
    )


def apply_policy(ds: Dataset, policy: str) -> Dataset:
    """``ds`` with its images checked against disk by ``policy`` and ``n_on_disk`` set.

    Raises:
        DatasetError: ``error`` and an image is absent; ``skip`` and none is on disk.
    """
    check_policy(policy)
    paths = ds.images["path"].astype(str).tolist()
    present = on_disk(paths)
    n = int(present.sum())
    if n == len(paths):
        return dataclasses.replace(ds, n_on_disk=n)
    absent = ~present
    ids = ds.images.loc[absent, "image_id"].astype(str).tolist()
    shown = [p for p, a in zip(paths, absent, strict=True) if a]
    if policy == "error":
        raise DatasetError(missing_message(ds.root, ids, shown, len(paths)))
    if policy == "keep":
        return dataclasses.replace(ds, n_on_disk=n)
    if n == 0:
        raise DatasetError(
            f"{ds.root}: none of the {len(paths)} rated image(s) is on disk (expected for "
            f"example {shown[0]}); put the images there, or load with missing_images='keep' "
            "to read the labels alone"
        )
    keep = set(ds.images.loc[present, "image_id"])

    def only(table: pd.DataFrame | None) -> pd.DataFrame | None:
        return None if table is None else _rows_of(table, keep)

    note = f"{len(ids)} of {len(paths)} rated image(s) left out: not on disk (first: {ids[0]})"
    return dataclasses.replace(
        ds,
        images=ds.images[present].reset_index(drop=True),
        ratings=_rows_of(ds.ratings, keep),
        votes=only(ds.votes),
        summary=only(ds.summary),
        notes=(*ds.notes, note),
        n_on_disk=n,
        skipped=tuple(ids),
    )
