"""What every dataset loader shares: the error type, the `Dataset` record and its checks.

Loaders read the real on-disk formats (the synthetic world is written in the same formats),
check them, and hand back tidy tables. Bad input raises `DatasetError` with a message that
names the file, the column and the first offending rows, so a user can fix the file.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.datasets.attribute import Attribute
from judgepanel.errors import JudgepanelError

N_SHOWN = 5
"""How many offending rows or ids an error message lists."""


class DatasetError(JudgepanelError, ValueError):
    """A dataset file is missing, malformed or inconsistent; the message says where."""


@dataclass(frozen=True)
class Dataset:
    """One aesthetic dataset: an image table and a long table of individual ratings.

    Attributes:
        name: short name ("eva", "para").
        root: the dataset folder.
        images: one row per image: ``image_id`` (str), ``path`` (absolute str),
            ``n_raters``, ``mean_score`` (the overall human mean), the rubric attribute
            means ``quality``, ``composition``, ``colour``, then the dataset's other
            attribute means, and last ``score_sd`` (the spread of the overall rating).
        ratings: one row per rater and image: ``image_id``, ``rater_id``, ``score``,
            ``quality``, ``composition``, ``colour``, then the dataset's other columns.
        score_range: the (lowest, highest) value of the overall rating scale; None for a
            dataset without an overall rating (then ``images`` has no ``mean_score``).
        attribute_ranges: the scale of every numeric rating column, by column name.
        votes: anonymous vote histograms (AVA, KonIQ), long: ``image_id``, ``attribute``
            (a table column name), ``value``, ``count``; None when there are none.
        summary: what a release gives per image instead of ratings (SPAQ, AADB's lists):
            ``image_id``, ``attribute``, ``mean``, ``sd``, ``n`` (sd and n NaN where not
            released); None when there is none. Its mean is the image's released mean.
        attributes: the rated attributes by table column, with range, direction and the
            rubric dimension each validates (empty for EVA and PARA, whose mapping is fixed).
        licence, citation: as the release or ``dataset.yaml`` states them ("" if not).
        notes: how the release was read, one line each: the form, scale and SD convention
            the loader took, a spelling it mapped, columns it left unread (shown by
            ``data describe``, so that nothing is dropped silently).
        n_on_disk: how many of the images are on disk; None where the loader did not look
            (see `judgepanel.datasets.presence`).
        skipped: the ids of the labelled images left out because they are absent from
            disk (``missing_images='skip'``), in the release's order; a run records them.

    ``images`` may also carry ``split`` (the release's train/validation/test) and ``group``.
    Where ``ratings`` has no per-rater data it is empty, with columns ``image_id``,
    ``rater_id`` and ``score``; the noise ceiling then comes from ``votes`` or ``summary``
    (:func:`judgepanel.stats.ceiling.noise_ceiling`).
    """

    name: str
    root: Path
    images: pd.DataFrame
    ratings: pd.DataFrame
    score_range: tuple[float, float] | None
    attribute_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    votes: pd.DataFrame | None = None
    summary: pd.DataFrame | None = None
    attributes: dict[str, Attribute] = field(default_factory=dict)
    licence: str = ""
    citation: str = ""
    notes: tuple[str, ...] = ()
    n_on_disk: int | None = None
    skipped: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.images)

    @property
    def has_overall(self) -> bool:
        """Whether the dataset has an overall rating (``mean_score``)."""
        return "mean_score" in self.images.columns

    def require_overall(self, what: str) -> None:
        """Stop ``what`` (an analysis) with one line when there is no overall rating."""
        if not self.has_overall:
            rated = ", ".join(self.attribute_ranges) or "none"
            raise DatasetError(
                f"{self.name}: {what} needs an overall rating, and this dataset has none "
                f"(its rated attributes: {rated})"
            )

    def stratifier(self) -> pd.Series:
        """What :meth:`sample` stratifies by: the overall human mean, or without one the
        mean over the rated attributes of each one's mean scaled to [0, 1] by its range."""
        if self.has_overall:
            return self.images["mean_score"]
        scaled = [
            (self.images[c] - low) / (high - low)
            for c, (low, high) in self.attribute_ranges.items()
            if c in self.images.columns
        ]
        return pd.concat(scaled, axis=1).mean(axis=1)

    def sample(self, n: int, seed: int = 0) -> Dataset:
        """``n`` images stratified by quintile of :meth:`stratifier` (the overall human
        mean), ratings restricted to them.

        The five quintiles get ``n // 5`` images each and the remainder goes to the middle
        quintiles first, so the sample spans the whole range of the human mean like the
        EVA-500 and PARA-500 subsets. The images keep their order in the dataset. Asking
        for at least as many images as there are returns the whole dataset.
        """
        if n < 1:
            raise ValueError(f"sample size must be positive, got {n}")
        total = len(self.images)
        if n >= total:
            return self
        rng = np.random.default_rng(seed)
        ranks = self.stratifier().rank(method="first").to_numpy()
        quintile = np.minimum(((ranks - 1) * 5 // total).astype(int), 4)
        sizes = np.bincount(quintile, minlength=5)
        take = np.full(5, n // 5)
        for q in (2, 1, 3, 0, 4)[: n % 5]:
            take[q] += 1
        # A quintile smaller than its share (tiny datasets) passes the rest on.
        take = np.minimum(take, sizes)
        for q in (2, 1, 3, 0, 4):
            take[q] += min(n - int(take.sum()), int(sizes[q] - take[q]))
        chosen: list[int] = []
        for q in range(5):
            members = np.flatnonzero(quintile == q)
            chosen.extend(rng.choice(members, size=int(take[q]), replace=False).tolist())
        keep = np.sort(np.asarray(chosen))
        images = self.images.iloc[keep].reset_index(drop=True)
        ids = set(images["image_id"])

        def only(table: pd.DataFrame | None) -> pd.DataFrame | None:
            return None if table is None else _rows_of(table, ids)

        on_disk = self.n_on_disk
        if on_disk is not None:  # every image on disk stays so; else not known without a look
            on_disk = len(images) if on_disk == total else None
        return dataclasses.replace(
            self,
            images=images,
            n_on_disk=on_disk,
            ratings=_rows_of(self.ratings, ids),
            votes=only(self.votes),
            summary=only(self.summary),
            attribute_ranges=dict(self.attribute_ranges),
        )


def _rows_of(table: pd.DataFrame, ids: set[Any]) -> pd.DataFrame:
    return table[table["image_id"].isin(ids)].reset_index(drop=True)


def jsonl_objects(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded JSON) of each non-blank line of a JSON-lines file.

    Raises:
        DatasetError: a line is not valid JSON (naming the file and the line).
    """
    with Path(path).open(encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{lineno}: not valid JSON: {exc.msg}") from exc


def release_paths(root: str | Path, default: str) -> tuple[Path, Path]:
    """A release's folder and its scores file: ``root / default`` where ``root`` is the
    folder, or ``root`` itself under any name where it is a file (a CSV exported as
    ``mos_scores.csv``). A file's folder is the one holding it, or the release's top
    folder when the file sits where the release keeps it (``Annotations/`` for SPAQ), so
    that the images are found where the release puts them."""
    root = Path(root).expanduser().resolve()
    if not root.is_file():
        return root, root / default
    folder = root.parent
    inner = Path(default).parent.parts
    if inner and folder.parts[-len(inner) :] == inner:
        folder = folder.parents[len(inner) - 1]
    return folder, root


def require_file(path: Path, what: str) -> Path:
    """``path`` if it is a file, else a `DatasetError` saying what was expected there."""
    if not path.is_file():
        where = "missing" if not path.exists() else "not a file"
        raise DatasetError(f"{path}: {what} is {where}")
    return path


def first_line(path: Path) -> str:
    """The header line of a text file, without a UTF-8 byte-order mark."""
    with path.open("r", encoding="utf-8-sig", errors="replace", newline="") as fh:
        return fh.readline().rstrip("\r\n")


RENAME_FIX = "rename the column(s) to the release's own names, or use the release's file"


def column_error(path: Path, found: Any, missing: Any, fix: str = RENAME_FIX) -> DatasetError:
    """One line naming the file, the columns it has, those it lacks, and the fix."""
    shown = ", ".join(map(str, list(found)[:20])) + (", ..." if len(list(found)) > 20 else "")
    return DatasetError(
        f"{path}: missing column(s) {', '.join(map(str, missing))} (found: {shown}); {fix}"
    )


def require_columns(
    df: pd.DataFrame, columns: list[str], path: Path, fix: str = RENAME_FIX
) -> None:
    """Raise `column_error` when ``df`` lacks any of ``columns``."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise column_error(path, df.columns, missing, fix)


def unread_note(path: Path, columns: Any) -> tuple[str, ...]:
    """A note listing the columns of ``path`` that the loader does not read (none: no note)."""
    columns = [str(c) for c in columns]
    if not columns:
        return ()
    return (f"{path.name}: column(s) not read: {', '.join(columns)}",)


def numeric_column(
    df: pd.DataFrame,
    column: str,
    lo: float,
    hi: float,
    path: Path,
    id_columns: list[str],
    step: float | None = None,
    *,
    first_line: int = 2,
) -> pd.Series:
    """Column ``column`` as floats in [lo, hi] (multiples of ``step`` if given), or an error.

    The error names the column, how many rows are bad, and the first few of them by file
    line and id, so that a single stray value in a large file is easy to find. Lines are
    counted from ``df``'s index (see :func:`shown_rows`), so a subset of rows keeps them.
    """
    raw = df[column]
    if pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw):
        values = raw
    else:
        values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna() | (values < lo) | (values > hi)
    if step is not None:
        bad |= ~np.isclose(values / step, np.round(values / step), rtol=0, atol=1e-9)
    if bad.any():
        rows = np.flatnonzero(bad.to_numpy())
        shown = shown_rows(df, rows, id_columns, column, first_line=first_line)
        span = f"of at least {lo:g}" if np.isinf(hi) else f"in {lo:g}-{hi:g}"
        if step is None:
            expected = f"numbers {span}"
        elif step == 1:
            expected = f"whole numbers {span}"
        else:
            expected = f"numbers {span} in steps of {step:g}"
        raise DatasetError(
            f"{path}: column {column!r} has {len(rows)} value(s) that are not {expected}; "
            f"first: {shown}"
        )
    return values.astype(float)


def shown_rows(
    df: pd.DataFrame,
    rows: Any,
    id_columns: list[str],
    column: str | None = None,
    *,
    first_line: int = 2,
) -> str:
    """The first few of ``rows`` (positions in ``df``) as ``line N (id=..., ...)``, with
    ``column``'s value when given: for error messages. ``df``'s index counts the file's
    data rows from 0, and the first of them is on line ``first_line`` (2 below a header)."""
    shown = []
    for r in list(rows)[:N_SHOWN]:
        ids = ", ".join(f"{c}={df[c].iloc[r]}" for c in id_columns)
        value = f": {str(df[column].iloc[r])!r}" if column is not None else ""
        shown.append(f"line {int(df.index[r]) + first_line} ({ids}){value}")
    return "; ".join(shown)


def check_duplicates(df: pd.DataFrame, keys: list[str], path: Path) -> None:
    """Raise when a rater rated the same image twice."""
    dup = df.duplicated(keys, keep=False)
    if dup.any():
        rows = np.flatnonzero(dup.to_numpy())
        n_pairs = int(df[dup].drop_duplicates(keys).shape[0])
        raise DatasetError(
            f"{path}: {n_pairs} (rater, image) pair(s) appear more than once; first: "
            + shown_rows(df, rows, keys)
        )


def image_table(
    ratings: pd.DataFrame, paths: pd.Series, means: dict[str, str], extra: dict[str, str]
) -> pd.DataFrame:
    """Per-image means of the rating columns, in order of first appearance, and
    ``score_sd``, the spread of the overall rating.

    Args:
        ratings: the long table, with ``image_id``, ``rater_id`` and ``score``.
        paths: absolute image path per ``image_id``.
        means: image column -> ratings column, averaged.
        extra: image column -> ratings column, taken as the most frequent value (text).
    """
    grouped = ratings.groupby("image_id", sort=False)
    table = pd.DataFrame({"image_id": list(grouped.groups)})
    table["path"] = table["image_id"].map(paths)
    table["n_raters"] = grouped["rater_id"].nunique().to_numpy()
    for out, col in means.items():
        table[out] = grouped[col].mean().to_numpy()
    for out, col in extra.items():
        table[out] = table["image_id"].map(_modes(ratings, col)).to_numpy()
    table["score_sd"] = grouped["score"].std().to_numpy()
    return table


def _modes(ratings: pd.DataFrame, column: str) -> pd.Series:
    """The most frequent value of ``column`` per image (ties: the alphabetically first)."""
    pairs = pd.DataFrame({"image_id": ratings["image_id"], "value": ratings[column].astype(str)})
    counts = pairs.value_counts().rename("n").reset_index()
    counts = counts.sort_values(["image_id", "n", "value"], ascending=[True, False, True])
    top = counts.drop_duplicates("image_id")
    return pd.Series(top["value"].to_numpy(), index=top["image_id"].to_numpy())
