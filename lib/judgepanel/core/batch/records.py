"""What the store knows about batches: each chunk's state, provider ids and calls.

The order of writes is what makes a batch run resumable without paying twice:

1. a chunk and its lines are written (``planned``) before anything is uploaded;
2. the uploaded file's id is written as soon as the upload returns (``uploaded``);
3. the batch's metadata names the store and the chunk, so a batch created by a process
   that died before writing its id is found again by listing batches;
4. its id is written as soon as ``batches.create`` returns (``submitted``);
5. its results are written in the transaction that marks it ``done``.

While a chunk is open, the bounds of its lines count as possibly billed spend.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from judgepanel.core.calls import CallKey, key_digest
from judgepanel.core.store import OPEN_CHUNK_STATES, Store, key_text, utc_now


@dataclass(frozen=True)
class Chunk:
    """One batch file of a run, as the store records it."""

    chunk: str
    mode: str
    state: str
    run: str
    dataset: str
    model: str
    lines: int
    bytes: int
    bound: float
    file_id: str | None
    batch_id: str | None
    status: str | None
    note: str
    created_at: str

    @property
    def created(self) -> float:
        """Creation time in Unix seconds."""
        return datetime.fromisoformat(self.created_at).timestamp()


@dataclass(frozen=True)
class LineRecord:
    """One call of a chunk: its ``custom_id``, key, seed and reserved bound."""

    custom_id: str
    key: CallKey
    seed: int | None
    bound: float


_CHUNK_COLUMNS = (
    "chunk, mode, state, run, dataset, model, lines, bytes, bound, file_id, batch_id, "
    "status, note, created_at"
)


class BatchBook:
    """The batch tables of one store (it shares the store's connection)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn = store.connection

    def store_id(self) -> str:
        """This store's own identity, named in every batch's metadata (made once)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
        if row is not None:
            return str(row[0])
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', ?)",
                (uuid.uuid4().hex,),
            )
        return str(self.conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()[0])

    def plan_chunk(
        self,
        *,
        mode: str,
        run: str,
        dataset: str,
        model: str,
        lines: Iterable[tuple[str, CallKey, int | None, float]],
        n_bytes: int,
    ) -> str:
        """Write a new chunk (``planned``, or ``exported`` offline) and its lines, in one
        transaction; returns its id."""
        chunk = uuid.uuid4().hex[:16]
        now = utc_now()
        rows = [
            (
                chunk,
                cid,
                key_text(key),
                key.dataset,
                key.item,
                key.model,
                seed,
                bound,
                key_digest(key),
            )
            for cid, key, seed, bound in lines
        ]
        state = "exported" if mode == "offline" else "planned"
        with self.conn:
            self.conn.execute(
                f"INSERT INTO batches ({_CHUNK_COLUMNS}, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, '', ?, ?)",
                (
                    chunk,
                    mode,
                    state,
                    run,
                    dataset,
                    model,
                    len(rows),
                    n_bytes,
                    sum(r[7] for r in rows),
                    now,
                    now,
                ),
            )
            self.conn.executemany("INSERT INTO batch_lines VALUES (?,?,?,?,?,?,?,?,?)", rows)
        return chunk

    def _set(self, chunk: str, **values: object) -> None:
        names = ", ".join(f"{k} = ?" for k in values)
        with self.conn:
            self.conn.execute(
                f"UPDATE batches SET {names}, updated_at = ? WHERE chunk = ?",
                (*values.values(), utc_now(), chunk),
            )

    def uploaded(self, chunk: str, file_id: str) -> None:
        self._set(chunk, state="uploaded", file_id=file_id)

    def submitted(self, chunk: str, batch_id: str, status: str) -> None:
        self._set(chunk, state="submitted", batch_id=batch_id, status=status)

    def status(self, chunk: str, status: str) -> None:
        self._set(chunk, status=status)

    def replanned(self, chunk: str) -> None:
        """Back to ``planned``: its file is gone and must be uploaded again."""
        self._set(chunk, state="planned", file_id=None)

    def abandon(self, chunk: str, status: str, note: str) -> None:
        """Close a chunk the provider ended without answers; its calls are planned again."""
        self._set(chunk, state="abandoned", status=status, note=note)

    def chunks(
        self, *, datasets: Iterable[str] | None = None, open_only: bool = True, mode: str = ""
    ) -> list[Chunk]:
        """Chunks, oldest first: open ones only by default, of these datasets and mode."""
        terms, args = [], []
        if open_only:
            terms.append(f"state IN ({', '.join('?' * len(OPEN_CHUNK_STATES))})")
            args.extend(OPEN_CHUNK_STATES)
        if datasets is not None:
            names = sorted(set(datasets))
            terms.append(f"dataset IN ({', '.join('?' * len(names))})")
            args.extend(names)
        if mode:
            terms.append("mode = ?")
            args.append(mode)
        where = f" WHERE {' AND '.join(terms)}" if terms else ""
        rows = self.conn.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM batches{where} ORDER BY created_at, chunk", args
        )
        return [Chunk(*row) for row in rows]

    def get(self, chunk: str) -> Chunk:
        """One chunk by its id."""
        row = self.conn.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM batches WHERE chunk = ?", (chunk,)
        ).fetchone()
        if row is None:
            raise KeyError(chunk)
        return Chunk(*row)

    def lines(self, chunk: str) -> list[LineRecord]:
        """The calls of a chunk, in the order they were written."""
        rows = self.conn.execute(
            "SELECT custom_id, key, seed, bound FROM batch_lines WHERE chunk = ? ORDER BY rowid",
            (chunk,),
        )
        return [
            LineRecord(cid, CallKey(*json.loads(key)), seed, float(bound))
            for cid, key, seed, bound in rows
        ]

    def find_lines(self, custom_ids: Iterable[str]) -> dict[str, tuple[str, LineRecord]]:
        """custom_id -> (chunk, line) for the ids found in any chunk (the latest chunk)."""
        out: dict[str, tuple[str, LineRecord]] = {}
        ids = list(custom_ids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = self.conn.execute(
                "SELECT l.chunk, l.custom_id, l.key, l.seed, l.bound FROM batch_lines l "
                "JOIN batches b ON b.chunk = l.chunk "
                f"WHERE l.custom_id IN ({', '.join('?' * len(part))}) "
                "ORDER BY b.created_at",
                part,
            )
            for chunk, cid, key, seed, bound in rows:
                out[cid] = (chunk, LineRecord(cid, CallKey(*json.loads(key)), seed, float(bound)))
        return out

    def summary(self) -> list[dict[str, object]]:
        """Open chunks, for ``judgepanel status``: state, provider status, calls, bound."""
        return [
            {
                "chunk": c.chunk,
                "mode": c.mode,
                "state": c.state,
                "status": c.status,
                "batch_id": c.batch_id,
                "run": c.run,
                "dataset": c.dataset,
                "model": c.model,
                "calls": c.lines,
                "bound": c.bound,
                "created_at": c.created_at,
            }
            for c in self.chunks()
        ]
