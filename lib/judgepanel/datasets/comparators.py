"""Scores of off-the-shelf image-aesthetics models: ``image_id, model, score`` CSV files.

The fusion paper compares its VLM judges with supervised image-aesthetic-assessment (IAA) models
(Q-Align, NIMA, MUSIQ, LAION aesthetic, CLIP-IQA...) run elsewhere. Their outputs enter
the analyses as one long CSV per dataset; this module reads and checks such a file, so a
wrong file fails here with its name and row, not inside a notebook.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import DatasetError

COLUMNS: tuple[str, ...] = ("image_id", "model", "score")


def load_scores(path: str | Path, *, known_images: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a comparator score file; the rows keep the file's order.

    Args:
        path: a CSV with the columns ``image_id``, ``model`` and ``score`` (others ignored).
        known_images: if given, every image id must be one of them.

    Raises:
        DatasetError: naming the file and the column, row or image: a missing file or
            column, no rows, a score that is not a finite number, an image scored twice
            by one model, or an image the dataset does not have.
    """
    p = Path(path)
    try:
        raw = pd.read_csv(p, dtype={"image_id": str, "model": str}, keep_default_na=False)
    except FileNotFoundError:
        raise DatasetError(f"{p}: comparator score file not found") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{p}: not a readable CSV ({exc})") from None
    missing = [c for c in COLUMNS if c not in raw.columns]
    if missing:
        raise DatasetError(f"{p}: missing column(s) {missing}; expected {list(COLUMNS)}")
    if raw.empty:
        raise DatasetError(f"{p}: no scores in the file")
    score = pd.to_numeric(raw["score"], errors="coerce")
    bad = np.flatnonzero(~np.isfinite(score.to_numpy(float)))
    if bad.size:
        row = int(bad[0])
        raise DatasetError(
            f"{p}: row {row + 2} ({raw['image_id'].iloc[row]}, {raw['model'].iloc[row]}): "
            f"score {raw['score'].iloc[row]!r} is not a finite number"
        )
    empty = np.flatnonzero((raw["image_id"] == "").to_numpy() | (raw["model"] == "").to_numpy())
    if empty.size:
        raise DatasetError(f"{p}: row {int(empty[0]) + 2} has an empty image_id or model")
    out = pd.DataFrame({"image_id": raw["image_id"], "model": raw["model"], "score": score})
    dup = out.duplicated(["image_id", "model"], keep="first")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise DatasetError(
            f"{p}: row {row + 2}: model {out['model'].iloc[row]!r} scores image "
            f"{out['image_id'].iloc[row]!r} twice"
        )
    if known_images is not None:
        unknown = sorted(set(out["image_id"]) - set(map(str, known_images)))
        if unknown:
            raise DatasetError(
                f"{p}: {len(unknown)} image id(s) are not in the dataset, e.g. {unknown[:3]}"
            )
    return out


def wide_scores(scores: pd.DataFrame, items: Iterable[str]) -> pd.DataFrame:
    """One column per model on ``items`` (an image a model did not score is NaN)."""
    wide = scores.pivot(index="image_id", columns="model", values="score")
    return wide.reindex(pd.Index(list(items), name="image_id"))
