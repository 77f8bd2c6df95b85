"""Reading calls: the keys a resume must not send again, and the tidy frame analyses read."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import pandas as pd

from judgepanel.core.calls import KEY_FIELDS, CallKey
from judgepanel.core.store.schema import StoreError
from judgepanel.core.store.writer import COLUMNS


def where(
    *,
    dataset: str | None = None,
    call_types: Iterable[str] | None = None,
    status: str | None = None,
) -> tuple[str, list[Any]]:
    """A ``WHERE`` clause (``""`` when nothing is filtered) and its parameters; call types
    are the store's column ``kind``."""
    terms: list[str] = []
    params: list[Any] = []
    if dataset is not None:
        terms.append("dataset = ?")
        params.append(dataset)
    if call_types is not None:
        call_types = list(call_types)
        terms.append(f"kind IN ({', '.join('?' * len(call_types))})")
        params.extend(call_types)
    if status is not None:
        terms.append("status = ?")
        params.append(status)
    return (" WHERE " + " AND ".join(terms) if terms else ""), params


def of_datasets(column: str, dataset: str | Collection[str] | None) -> tuple[str, list[str]]:
    """``"column IN (?, ...) AND "`` for one dataset or several (``""``: all of them) and
    its parameters: a plan's datasets are read in one query."""
    if dataset is None:
        return "", []
    names = [dataset] if isinstance(dataset, str) else list(dataset)
    return f"{column} IN ({', '.join('?' * len(names))}) AND ", names


UNPRICED_COST = (
    "CASE WHEN key_digest IN (SELECT key_digest FROM imported_calls) THEN NULL "
    "ELSE cost END AS cost"
)
"""The ``cost`` column as a frame reads it: unknown (``NULL``) for an imported answer,
which was not sent from here and carries no price; never $0.00."""


class Reader:
    """The store's reading job: stored keys and frames (a part of
    :class:`judgepanel.core.store.Store`, which owns the connection)."""

    _conn: sqlite3.Connection
    path: Path

    def completed_keys(self, dataset: str | None = None, include_failed: bool = True) -> set[tuple]:
        """Keys already checkpointed, as ``CallKey.as_tuple()`` tuples, in one query.

        Args:
            dataset: only this dataset.
            include_failed: count failed calls as stored (the default).
        """
        sql, params = where(dataset=dataset, status=None if include_failed else "ok")
        return set(self._conn.execute(f"SELECT {', '.join(KEY_FIELDS)} FROM calls{sql}", params))

    def completed_digests(
        self, dataset: str | Collection[str] | None = None, include_failed: bool = True
    ) -> set[int]:
        """``calls.key_digest`` of the calls a resume must not send again, in one query.

        The fast path of resume planning (see :func:`judgepanel.core.calls.key_digest`).
        ``ok`` calls are done; ``final`` failures are done unless ``include_failed`` is
        False (``--retry-failed``); ``retryable`` failures are never done, so a plain
        resume sends them again. ``dataset``: one dataset, several (a plan's), or all.

        The ``ok`` rows are read from the digest index alone (an ``ok`` row's failure is
        always ``""``); only the failed rows are looked up in the table, for their kind.
        """
        of, params = of_datasets("dataset", dataset)
        sql = f"SELECT key_digest FROM calls WHERE {of}status = 'ok'"
        if include_failed:
            sql += (
                f" UNION ALL SELECT key_digest FROM calls WHERE {of}status = 'failed' "
                "AND failure != 'retryable'"
            )
            params = params * 2
        rows = self._conn.execute(sql, params)
        return set(chain.from_iterable(rows))

    def is_completed(self, key: CallKey) -> bool:
        """Whether one key is stored (one query; prefer :meth:`completed_digests` for plans)."""
        sql = "SELECT 1 FROM calls WHERE " + " AND ".join(f"{c} = ?" for c in KEY_FIELDS)
        return self._conn.execute(sql, key.as_tuple()).fetchone() is not None

    def frame(
        self,
        dataset: str | None = None,
        call_types: Iterable[str] | None = None,
        status: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """The stored calls as a tidy DataFrame, one row per call.

        Args:
            dataset: only this dataset.
            call_types: only these call types (column ``kind``).
            status: only ``ok`` or only ``failed`` calls.
            columns: only these columns (all by default); reading fewer is faster, the
                answer texts being most of the file.

        ``cost`` is NaN for imported answers (:data:`UNPRICED_COST`): their price is not
        known.
        """
        wanted = list(columns) if columns is not None else list(COLUMNS)
        unknown = [c for c in wanted if c not in COLUMNS]
        if unknown:
            raise StoreError(f"{self.path}: no columns {unknown}; columns are {list(COLUMNS)}")
        sql, params = where(dataset=dataset, call_types=call_types, status=status)
        selected = ", ".join(UNPRICED_COST if c == "cost" else c for c in wanted)
        query = f"SELECT {selected} FROM calls{sql} ORDER BY {', '.join(KEY_FIELDS)}"
        df = pd.read_sql_query(query, self._conn, params=params)
        # Nullable integer columns stay integers when some rows are NULL.
        for col in ("prompt_tokens", "cached_tokens", "completion_tokens", "seed"):
            if col in df:
                df[col] = df[col].astype("Int64")
        for col in ("value", "cost", "reported_cost"):
            if col in df:
                df[col] = df[col].astype("float64")
        if "samples_per_request" in df:
            df["samples_per_request"] = df["samples_per_request"].astype("int64")
        return df

    def count(self) -> int:
        """Calls stored, ok or failed."""
        return int(self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def n_items(self, dataset: str) -> int:
        """Distinct items of ``dataset`` with at least one stored call."""
        sql = "SELECT COUNT(DISTINCT item) FROM calls WHERE dataset = ?"
        return int(self._conn.execute(sql, (dataset,)).fetchone()[0])
