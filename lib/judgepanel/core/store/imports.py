"""Answers made elsewhere, kept beside the scored calls with where they came from.

``judgepanel import answers`` writes each imported answer as an ``ok`` call (no attempt,
no cost), so every analysis reads it like a scored one, and records its provenance in the
two tables of schema 5 (:mod:`.schema`): ``imports``, one row per imported file (its name,
its SHA-256, the dataset and when), and ``imported_calls``, which call came from which
file and line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgepanel.core.calls import KEY_FIELDS, CallKey, key_digest
from judgepanel.core.store.schema import StoreError
from judgepanel.core.store.writer import INSERT_CALL, CallResult, call_row, key_text, utc_now


@dataclass(frozen=True)
class ImportSource:
    """Where imported answers come from: the file's name (never its folder: a store names
    no machine path), the SHA-256 of its bytes, and the dataset they answer."""

    file: str
    sha256: str
    dataset: str


@dataclass(frozen=True)
class ImportedRow:
    """One answer to import: its call key, its result and its line in the file."""

    key: CallKey
    result: CallResult
    line: int


class Importer:
    """The store's importing job (a part of :class:`judgepanel.core.store.Store`)."""

    _conn: sqlite3.Connection

    def record_import(self, rows: Sequence[ImportedRow], source: ImportSource) -> int:
        """Write imported answers and their provenance in one transaction.

        An answer whose call is already stored with the same value is skipped (importing a
        file twice changes nothing); one stored with anything else stops the import before
        anything is written, naming the line. Returns the answers written.

        Raises:
            StoreError: a call of the file is already stored with another answer.
        """
        where = " AND ".join(f"{c} = ?" for c in KEY_FIELDS)
        query = f"SELECT status, value FROM calls WHERE {where}"
        now = utc_now()
        with self._conn:
            new: list[ImportedRow] = []
            for row in rows:
                found = self._conn.execute(query, row.key.as_tuple()).fetchone()
                if found is None:
                    new.append(row)
                elif found != ("ok", row.result.value):
                    stored = "a failed call" if found[0] != "ok" else f"the answer {found[1]:g}"
                    raise StoreError(
                        f"{source.file}, line {row.line}: {row.key.family} on {row.key.item} "
                        f"({row.key.dimension or row.key.kind}, sample {row.key.repetition}) "
                        f"is already stored with {stored}; nothing was imported"
                    )
            if not new:
                return 0
            cursor = self._conn.execute(
                "INSERT INTO imports (file, sha256, dataset, rows, imported_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (source.file, source.sha256, source.dataset, len(new), now),
            )
            import_id = cursor.lastrowid
            self._conn.executemany(INSERT_CALL, (call_row(r.key, r.result, now) for r in new))
            self._conn.executemany(
                "INSERT INTO imported_calls (key, key_digest, import_id, line) VALUES (?,?,?,?)",
                ((key_text(r.key), key_digest(r.key), import_id, r.line) for r in new),
            )
        return len(new)

    def imports(self) -> pd.DataFrame:
        """Every import: ``import_id``, ``file``, ``sha256``, ``dataset``, ``rows``,
        ``imported_at``."""
        return pd.read_sql_query("SELECT * FROM imports ORDER BY import_id", self._conn)

    def imported_digests(self, dataset: str | None = None) -> set[int]:
        """``key_digest`` of the imported calls (of ``dataset``, or all)."""
        sql = "SELECT c.key_digest FROM imported_calls c"
        params: tuple = ()
        if dataset is not None:
            sql += " JOIN imports i USING (import_id) WHERE i.dataset = ?"
            params = (dataset,)
        return {r[0] for r in self._conn.execute(sql, params)}
