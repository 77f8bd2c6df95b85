"""Reading a release's text tables with errors that name the file, the column and the lines.

Shared by the generic ``ratings`` format and the release adapters (AVA, AADB, KonIQ-10k,
SPAQ, LAPIS): every table keeps the file's line numbers in its index, so an error found
after filtering still points at the right line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.datasets._common import DatasetError, first_line, require_columns, shown_rows
from judgepanel.datasets.presence import FIX, check_policy, on_disk


def fail_rows(
    path: Path,
    df: pd.DataFrame,
    bad: Any,
    column: str,
    what: str,
    id_columns: list[str],
    *,
    first_line: int = 2,
    fix: str = "",
) -> None:
    """Raise a `DatasetError` naming the file, the column and the first lines where ``bad``
    (a boolean mask over ``df``'s rows) holds, saying ``what`` is wrong there (and
    ``fix``, how to mend it, where given)."""
    rows = np.flatnonzero(np.asarray(bad, dtype=bool))
    if rows.size:
        shown = shown_rows(df, rows, id_columns, column, first_line=first_line)
        raise DatasetError(
            f"{path}: column {column!r} has {what} on {rows.size} line(s); first: {shown}"
            + (f"; {fix}" if fix else "")
        )


def require_image_files(
    path: Path,
    df: pd.DataFrame,
    files: list[str],
    column: str,
    id_columns: list[str],
    *,
    first_line: int = 2,
    policy: str = "error",
) -> None:
    """Raise, naming the lines of ``path`` (rows of ``df``) whose image file is absent,
    when ``policy`` (``missing_images``) is ``error``; else leave it to
    `judgepanel.datasets.presence.apply_policy`."""
    if check_policy(policy) != "error":
        return
    missing = ~on_disk(files)
    if missing.any():
        folder = Path(files[int(np.argmax(missing))]).parent
        what = f"an image missing on disk (expected under {folder})"
        fail_rows(path, df, missing, column, what, id_columns, first_line=first_line, fix=FIX)


def read_table(path: Path, required: list[str], optional: list[str] | None) -> pd.DataFrame:
    """A comma-separated table as stripped text, blank lines dropped; its index counts the
    data rows from 0 (line = index + 2). With ``optional`` given, any other column is an
    error (a misspelt ``rater_id`` must not turn ratings into anonymous votes); with None,
    other columns are kept."""
    header = first_line(path)
    if "," not in header and len(required) > 1:
        raise DatasetError(f"{path}: expected comma-separated columns, got header {header!r}")
    try:
        raw = pd.read_csv(
            path, dtype=str, keep_default_na=False, encoding="utf-8-sig", skip_blank_lines=False
        )
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot be parsed as comma-separated text ({exc})") from None
    raw.columns = [str(c).strip() for c in raw.columns]
    require_columns(raw, required, path)
    if optional is not None:
        unknown = [c for c in raw.columns if c not in required and c not in optional]
        if unknown:
            known = ", ".join([*required, *optional])
            raise DatasetError(f"{path}: unknown column(s) {', '.join(unknown)}; expected {known}")
    raw = raw.fillna("").apply(lambda c: c.str.strip())
    raw = raw[(raw != "").any(axis=1)]
    if raw.empty:
        raise DatasetError(f"{path}: has a header but no rows")
    return raw


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, stripped text) of each non-blank line of a plain text file."""
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                yield lineno, line.strip()


def fail_unless_unique(path: Path, df: pd.DataFrame, column: str, *, first_line: int = 2) -> None:
    """Raise when a value of ``column`` (an id) is empty or appears on more than one line."""
    fail_rows(path, df, df[column] == "", column, "an empty id", [column], first_line=first_line)
    repeated = df[column].duplicated(keep=False)
    fail_rows(
        path, df, repeated, column, "an id listed more than once", [column], first_line=first_line
    )
