"""Answers made elsewhere, kept beside the scored calls with where they came from.

``judgepanel import answers`` writes each imported answer as an ``ok`` call (no attempt,
no price: the store's frame reads its cost as unknown), so every analysis reads it like a
scored one, and records its provenance in the two tables of schema 5 (:mod:`.schema`):
``imports``, one row per imported file (its name, its SHA-256, the dataset and when), and
``imported_calls``, which call came from which file and line. The file is the source of
truth for its import: importing it again after it changed replaces what it wrote.
"""

from __future__ import annotations

import json
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


@dataclass(frozen=True)
class ImportOutcome:
    """What importing a file did to the store.

    A file's import is identified by its name and dataset: importing a file of the same
    name into the same dataset again replaces that import, so the store holds what the
    file holds now.

    Attributes:
        file: the file's name.
        added: answers written that no earlier import of the file held.
        changed: answers of the earlier import whose value the file now changes.
        removed: answers of the earlier import the file no longer holds (deleted).
        kept: answers of the file already stored, with the same value, from elsewhere
            (scored, or imported from another file): they stay that source's.
        unchanged: answers of the earlier import the file still holds as they were.
        previous: the SHA-256 of the file's earlier import (``None``: its first import).
    """

    file: str
    added: int = 0
    changed: int = 0
    removed: int = 0
    kept: int = 0
    unchanged: int = 0
    previous: str | None = None

    @property
    def written(self) -> int:
        """Answers written by this import (added or changed)."""
        return self.added + self.changed

    @property
    def replaced(self) -> bool:
        """The file was imported before and its answers changed since."""
        return self.previous is not None and bool(self.added + self.changed + self.removed)

    def note(self) -> str:
        """One line saying what changed since the file's last import ("" when nothing or
        the first import)."""
        if not self.replaced:
            return ""
        return (
            f"{self.file} changed since its last import: {self.removed:,} answers removed, "
            f"{self.changed:,} changed, {self.added:,} added"
        )


_KEY_WHERE = " AND ".join(f"{c} = ?" for c in KEY_FIELDS)


class Importer:
    """The store's importing job (a part of :class:`judgepanel.core.store.Store`)."""

    _conn: sqlite3.Connection

    def record_import(self, rows: Sequence[ImportedRow], source: ImportSource) -> ImportOutcome:
        """Write a file's answers and their provenance in one transaction; the file is the
        source of truth for its own import.

        The answers an earlier import of the same file (same name, same dataset) wrote and
        the file no longer holds are deleted, those it changes are replaced, and the new
        ones added; the import is then recorded with the file's current SHA-256. An answer
        already stored with the same value from another source (scored, or another file)
        is left to that source; one stored from another source with anything else stops
        the import before anything is written, naming the line.

        Raises:
            StoreError: a call of the file is already stored, from another source, with
                another answer.
        """
        query = f"SELECT status, value FROM calls WHERE {_KEY_WHERE}"
        now = utc_now()
        with self._conn:
            earlier = self._conn.execute(
                "SELECT import_id, sha256 FROM imports WHERE file = ? AND dataset = ? "
                "ORDER BY import_id",
                (source.file, source.dataset),
            ).fetchall()
            old_ids = [r[0] for r in earlier]
            owned: set[str] = set()
            if old_ids:
                marks = ",".join("?" * len(old_ids))
                owned = {
                    r[0]
                    for r in self._conn.execute(
                        f"SELECT key FROM imported_calls WHERE import_id IN ({marks})", old_ids
                    )
                }
            new: list[ImportedRow] = []
            changed: list[ImportedRow] = []
            same: list[ImportedRow] = []
            kept = 0
            for row in rows:
                found = self._conn.execute(query, row.key.as_tuple()).fetchone()
                text = key_text(row.key)
                if text in owned:
                    if found == ("ok", row.result.value):
                        same.append(row)
                    elif found is None:
                        new.append(row)
                    else:
                        changed.append(row)
                elif found is None:
                    new.append(row)
                elif found == ("ok", row.result.value):
                    kept += 1
                else:
                    stored = "a failed call" if found[0] != "ok" else f"the answer {found[1]:g}"
                    raise StoreError(
                        f"{source.file}, line {row.line}: {row.key.family} on {row.key.item} "
                        f"({row.key.dimension or row.key.call_type}, sample {row.key.repetition}) "
                        f"is already stored with {stored} from another source; nothing was "
                        "imported"
                    )
            in_file = {key_text(r.key) for r in rows}
            gone = sorted(owned - in_file)
            outcome = ImportOutcome(
                file=source.file,
                added=len(new),
                changed=len(changed),
                removed=len(gone),
                kept=kept,
                unchanged=len(same),
                previous=earlier[-1][1] if earlier else None,
            )
            if not (new or changed or gone) and earlier and earlier[-1][1] == source.sha256:
                return outcome  # the same file again: nothing to do
            if not (new or changed or same) and not earlier:
                return outcome  # every answer belongs to another source
            for text in gone + [key_text(r.key) for r in changed]:
                self._conn.execute(f"DELETE FROM calls WHERE {_KEY_WHERE}", json.loads(text))
            cursor = self._conn.execute(
                "INSERT INTO imports (file, sha256, dataset, rows, imported_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    source.file,
                    source.sha256,
                    source.dataset,
                    len(new) + len(changed) + len(same),
                    now,
                ),
            )
            import_id = cursor.lastrowid
            written = new + changed
            self._conn.executemany(INSERT_CALL, (call_row(r.key, r.result, now) for r in written))
            if old_ids:
                marks = ",".join("?" * len(old_ids))
                self._conn.execute(
                    f"DELETE FROM imported_calls WHERE import_id IN ({marks})", old_ids
                )
                self._conn.execute(f"DELETE FROM imports WHERE import_id IN ({marks})", old_ids)
            self._conn.executemany(
                "INSERT INTO imported_calls (key, key_digest, import_id, line) VALUES (?,?,?,?)",
                (
                    (key_text(r.key), key_digest(r.key), import_id, r.line)
                    for r in (*written, *same)
                ),
            )
        return outcome

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
