"""The checkpoint store: one SQLite file, one row per completed call.

Every call is written the moment it completes, in its own transaction, by the one thread
that runs the client's event loop, so a call that is checkpointed is never sent again and
a crash loses nothing that was committed. Analyses read only this file.

Before a call is sent, its reservation (the most it can cost) is written to ``pending`` in
its own transaction, and the row is removed in the transaction that records the outcome.
A row still in ``pending`` when the next run takes its dataset's writer lock was in flight
when a process died: it moves to ``interrupted``, whose bounds stay counted as "possibly billed,
unanswered" spend, because the endpoint may have billed an answer that never arrived.

A failed call is either ``retryable`` (connection errors, timeouts, 429 and 5xx once its
attempts were used up: a later run may succeed, and a plain resume sends it again) or
``final`` (an unreadable answer after its re-asks, any other 4xx, a request that could not
be built: only ``--retry-failed`` sends it again). Cost, tokens, attempts and billed answers
accumulate over every send of a call, so a retried call never hides what it cost before.

Cost is kept twice: ``cost`` is our estimate from the token counts and the price table
(cached prompt tokens at the cached-input price), ``reported_cost`` what the provider itself
reported as ``usage.cost`` (OpenRouter does; ``NULL`` where it did not), so the two can be
compared. ``samples_per_request`` says whether a row was drawn alone or as one of ``n``
choices of a request, whose prompt is billed once.

Durability: the file is in WAL mode with ``synchronous=NORMAL``. In WAL mode a commit
appends to the write-ahead log; with NORMAL the log is synced to disk at checkpoints rather
than at every commit. A killed process (``kill -9``) therefore loses nothing it committed,
because the log already sits in the operating system's cache; only a power cut or kernel
crash can lose the last few commits, and those calls would simply be sent again on resume
(the database itself stays consistent). That trade buys a commit cost small enough to write
every call separately at full request rate.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import sqlite3
import struct
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from judgepanel.core.calls import KEY_FIELDS, CallKey, key_digest

SCHEMA_VERSION = 4

_KEY_COLUMNS = """
    dataset TEXT NOT NULL,
    item TEXT NOT NULL,
    family TEXT NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    dimension TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    temperature REAL NOT NULL,
    rubric_sha TEXT NOT NULL,
    prompt_hash TEXT NOT NULL"""

_RESERVATION_TABLES = """
CREATE TABLE IF NOT EXISTS pending (
    key TEXT PRIMARY KEY,
    dataset TEXT NOT NULL,
    item TEXT NOT NULL,
    model TEXT NOT NULL,
    seed INTEGER,
    bound REAL NOT NULL,
    started_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS interrupted (
    key TEXT NOT NULL,
    dataset TEXT NOT NULL,
    item TEXT NOT NULL,
    model TEXT NOT NULL,
    seed INTEGER,
    bound REAL NOT NULL,
    started_at TEXT NOT NULL,
    found_at TEXT NOT NULL
);
"""

_BATCH_TABLES = """
CREATE TABLE IF NOT EXISTS batches (
    chunk TEXT PRIMARY KEY,
    mode TEXT NOT NULL CHECK (mode IN ('provider', 'offline')),
    state TEXT NOT NULL
        CHECK (state IN ('planned', 'uploaded', 'submitted', 'exported', 'done', 'abandoned')),
    run TEXT NOT NULL,
    dataset TEXT NOT NULL,
    model TEXT NOT NULL,
    lines INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    bound REAL NOT NULL,
    file_id TEXT,
    batch_id TEXT,
    status TEXT,
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_lines (
    chunk TEXT NOT NULL REFERENCES batches (chunk),
    custom_id TEXT NOT NULL,
    key TEXT NOT NULL,
    dataset TEXT NOT NULL,
    item TEXT NOT NULL,
    model TEXT NOT NULL,
    seed INTEGER,
    bound REAL NOT NULL,
    key_digest INTEGER NOT NULL,
    PRIMARY KEY (chunk, custom_id)
);
CREATE INDEX IF NOT EXISTS batch_lines_id ON batch_lines (custom_id);
"""
"""Batches in flight (schema 4): each chunk of a batch run, and the calls it carries.

A chunk is written (``planned``) before its file is uploaded, and its provider ids as soon
as they exist; while a chunk is open its lines' bounds count as possibly billed. A chunk
is ``done`` once its results were ingested (in the transaction that writes its calls), or
``abandoned`` when the provider ended it without answers (failed, expired, cancelled).
"""
OPEN_CHUNK_STATES: tuple[str, ...] = ("planned", "uploaded", "submitted", "exported")

_SCHEMA = (
    f"""
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calls ({_KEY_COLUMNS},
    answer TEXT,
    value REAL,
    parsed TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason TEXT NOT NULL DEFAULT '',
    failure TEXT NOT NULL DEFAULT '' CHECK (failure IN ('', 'retryable', 'final')),
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost REAL NOT NULL DEFAULT 0,
    latency_s REAL,
    attempts INTEGER NOT NULL,
    reasks INTEGER NOT NULL DEFAULT 0,
    billed INTEGER NOT NULL DEFAULT 0,
    finish_reason TEXT,
    seed INTEGER,
    created_at TEXT NOT NULL,
    key_digest INTEGER NOT NULL,
    cached_tokens INTEGER,
    reported_cost REAL,
    samples_per_request INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY ({", ".join(KEY_FIELDS)})
);
CREATE INDEX IF NOT EXISTS calls_digest ON calls (dataset, status, key_digest);
"""
    + _RESERVATION_TABLES
    + _BATCH_TABLES
)

RESULT_FIELDS: tuple[str, ...] = (
    "answer",
    "value",
    "parsed",
    "status",
    "reason",
    "failure",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "cost",
    "reported_cost",
    "latency_s",
    "attempts",
    "reasks",
    "billed",
    "finish_reason",
    "seed",
    "samples_per_request",
    "created_at",
)
COLUMNS: tuple[str, ...] = KEY_FIELDS + RESULT_FIELDS
"""What ``frame`` reads by default: the key and the outcome of every call."""
_WRITTEN: tuple[str, ...] = (*COLUMNS, "key_digest")

_CUMULATIVE: tuple[str, ...] = (
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "cost",
    "reported_cost",
    "attempts",
    "reasks",
    "billed",
)
"""Columns that add up over every send of a call (a NULL token count stays unknown)."""

_BILLED_ONLY: tuple[str, ...] = ("cached_tokens", "reported_cost")
"""Cumulative columns a send without a billed answer adds nothing to, ``NULL`` or not.

Such a send was never billed, so it has no cached tokens or reported cost to be unknown;
it neither turns the earlier sends' sum into ``NULL`` nor is made unknown by them.
"""


def _accumulate(column: str) -> str:
    """The ``ON CONFLICT`` update of one result column (SET reads the row before it)."""
    if column in _BILLED_ONLY:
        return (
            f"{column} = CASE WHEN calls.billed = 0 THEN excluded.{column} "
            f"WHEN excluded.billed = 0 THEN calls.{column} "
            f"ELSE calls.{column} + excluded.{column} END"
        )
    if column in _CUMULATIVE:
        return f"{column} = calls.{column} + excluded.{column}"
    return f"{column} = excluded.{column}"


# A completed call replaces a stored row only when that row failed: an ``ok`` answer is
# never overwritten, so two writers or a resend can never turn one call into two answers.
# What the earlier sends cost is kept: the cumulative columns add up.
_INSERT = (
    f"INSERT INTO calls ({', '.join(_WRITTEN)}) VALUES ({', '.join('?' * len(_WRITTEN))}) "
    f"ON CONFLICT ({', '.join(KEY_FIELDS)}) DO UPDATE SET "
    + ", ".join(_accumulate(c) for c in RESULT_FIELDS)
    + " WHERE calls.status = 'failed'"
)

_RETRYABLE_REASON = (
    "(reason GLOB '* after [0-9]* attempts' AND reason NOT LIKE 'unparseable:%' "
    "AND reason NOT LIKE 'parser error:%')"
)
_FAILURE_OF_REASON = (
    f"CASE WHEN status = 'ok' THEN '' WHEN {_RETRYABLE_REASON} THEN 'retryable' ELSE 'final' END"
)
"""The failure kind of a schema-1 row, read from its reason (the only place it was kept)."""
_BILLED_OF_REASON = (
    "reasks + (status = 'ok' OR reason LIKE 'unparseable:%' OR reason LIKE 'parser error:%')"
)
"""Billed answers of a schema-1 row: its re-asks, plus its last answer if one came back."""
_ADDED_IN_3 = (
    ("cached_tokens", "INTEGER", "NULL"),
    ("reported_cost", "REAL", "NULL"),
    ("samples_per_request", "INTEGER NOT NULL DEFAULT 1", "1"),
)
"""The columns schema 3 added: name, declaration, and what an older row reads as."""

FAILURE_KINDS: tuple[str, ...] = ("retryable", "final")
_RETRYABLE_TEXT = re.compile(r".* after [0-9]+ attempts$", re.DOTALL)


def failure_of_reason(reason: str) -> str:
    """The failure kind a reason stands for (the rule ``_FAILURE_OF_REASON`` applies in SQL).

    Only a retryable error is recorded as "... after N attempts"; unreadable answers and
    parser errors carry their own prefixes.
    """
    if reason.startswith(("unparseable:", "parser error:")):
        return "final"
    return "retryable" if _RETRYABLE_TEXT.match(reason) else "final"


class StoreError(RuntimeError):
    """The store file is not a judgepanel store, or has an unknown schema version."""


@dataclass(frozen=True)
class Reservations:
    """Calls sent without a recorded outcome, and the most they can have cost.

    Attributes:
        calls: how many.
        bound: USD, the sum of their reservations.
    """

    calls: int = 0
    bound: float = 0.0


@dataclass(frozen=True)
class CallResult:
    """The outcome of one call, as written to the store.

    Attributes:
        status: ``ok`` or ``failed``.
        answer: the last answer text received (``None`` if no answer came back).
        parsed: the parsed answer (JSON-serialisable), ``None`` when failed.
        value: the numeric answer, or ``None``.
        reason: why the call failed (``""`` when ok).
        failure: ``retryable`` or ``final`` when failed (``""`` when ok).
        prompt_tokens: input tokens billed over every answered attempt.
        cached_tokens: of ``prompt_tokens``, those the provider served from its cache
            (``usage.prompt_tokens_details.cached_tokens``); ``None`` when not reported.
        completion_tokens: output tokens billed over every answered attempt.
        cost: USD over every answered attempt, as estimated from the tokens and prices.
        reported_cost: USD the provider itself reported (``usage.cost``), summed over the
            answered attempts; ``None`` when it reported none. A send without an answered
            attempt adds nothing to either sum, whatever it carries (see ``_BILLED_ONLY``).
        latency_s: seconds from the first attempt to the outcome, waits included.
        attempts: HTTP attempts sent.
        reasks: new attempts caused by unreadable answers.
        billed: answered (so billable) attempts.
        finish_reason: the last answer's finish reason.
        seed: the sampling seed of the last attempt.
        samples_per_request: how many choices (``n``) the request that drew this row asked
            for: 1 for one sample per request.
    """

    status: str
    answer: str | None = None
    parsed: Any = None
    value: float | None = None
    reason: str = ""
    failure: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float = 0.0
    latency_s: float | None = None
    attempts: int = 1
    reasks: int = 0
    billed: int = 0
    finish_reason: str | None = None
    seed: int | None = None
    cached_tokens: int | None = None
    reported_cost: float | None = None
    samples_per_request: int = 1

    def __post_init__(self) -> None:
        if self.samples_per_request < 1:
            raise ValueError(
                f"samples_per_request must be at least 1, got {self.samples_per_request}"
            )
        if self.status == "ok":
            object.__setattr__(self, "failure", "")
        elif self.failure not in FAILURE_KINDS:
            object.__setattr__(self, "failure", failure_of_reason(self.reason))


def _row(key: CallKey, result: CallResult, created_at: str) -> tuple:
    """The values of one ``calls`` row, in ``_WRITTEN`` order."""
    parsed = None if result.parsed is None else json.dumps(result.parsed, ensure_ascii=False)
    return (
        *key.as_tuple(),
        result.answer,
        result.value,
        parsed,
        result.status,
        result.reason,
        result.failure,
        result.prompt_tokens,
        result.cached_tokens,
        result.completion_tokens,
        result.cost,
        result.reported_cost,
        result.latency_s,
        result.attempts,
        result.reasks,
        result.billed,
        result.finish_reason,
        result.seed,
        result.samples_per_request,
        created_at,
        key_digest(key),
    )


def _where(
    *, dataset: str | None = None, kinds: Iterable[str] | None = None, status: str | None = None
) -> tuple[str, list[Any]]:
    """A ``WHERE`` clause (``""`` when nothing is filtered) and its parameters."""
    terms: list[str] = []
    params: list[Any] = []
    if dataset is not None:
        terms.append("dataset = ?")
        params.append(dataset)
    if kinds is not None:
        kinds = list(kinds)
        terms.append(f"kind IN ({', '.join('?' * len(kinds))})")
        params.extend(kinds)
    if status is not None:
        terms.append("status = ?")
        params.append(status)
    return (" WHERE " + " AND ".join(terms) if terms else ""), params


def key_text(key: CallKey) -> str:
    """A call key as the text that names its reservation (and its line in a batch)."""
    return json.dumps(key.as_tuple(), ensure_ascii=False)


_key_text = key_text


def utc_now() -> str:
    """The current UTC time in ISO 8601 with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


_LOCK_BASE = 1 << 40
"""Where the datasets' lock bytes start: far past the bytes SQLite locks (at 1 GiB)."""
_LOCK_SPAN = 1 << 31
"""How many bytes the datasets' locks are spread over; locking all of them locks the store."""


def _lock_byte(dataset: str) -> int:
    """The byte of the store file whose lock stands for sending this dataset's calls."""
    digest = hashlib.blake2b(dataset.encode("utf-8"), digest_size=8).digest()
    return _LOCK_BASE + int.from_bytes(digest, "big") % _LOCK_SPAN


def _set_lock(fd: int, kind: int, start: int, length: int) -> None:
    # struct flock: l_type, l_whence (short each), l_start, l_len (off_t), l_pid (pid_t,
    # which must be 0 for open-file-description locks), padded to 32 bytes.
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", kind, os.SEEK_SET, start, length, 0))


def _take_send_locks(fd: int, datasets: list[str] | None, path: Path) -> list[tuple[int, int]]:
    """Take the writer locks of these datasets (every dataset when ``None``), or none.

    Returns the byte ranges taken. Raises ``StoreError`` naming the busy dataset.
    """
    if not hasattr(fcntl, "F_OFD_SETLK"):  # pragma: no cover - not Linux: one lock for all
        ranges: list[tuple[int, int]] = [(-1, 0)]
    elif datasets is None:
        ranges = [(_LOCK_BASE, _LOCK_SPAN)]
    else:
        ranges = sorted({(_lock_byte(d), 1) for d in datasets})
    held: list[tuple[int, int]] = []
    for start, length in ranges:
        try:
            if start < 0:  # pragma: no cover
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                _set_lock(fd, fcntl.F_WRLCK, start, length)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            _drop_send_locks(fd, held)
            whole = datasets is None or start < 0  # a lock on everything names nothing
            what = "calls" if whole else _busy_names(datasets, start)
            raise StoreError(
                f"{path}: another process is sending {what} into this store; "
                "wait for it to finish (or stop it) and run again"
            ) from None
        held.append((start, length))
    return held


def _busy_names(datasets: list[str], start: int) -> str:
    names = [d for d in datasets if _lock_byte(d) == start]
    return "calls of " + ", ".join(names)


def _drop_send_locks(fd: int, held: list[tuple[int, int]]) -> None:
    for start, length in reversed(held):
        if start < 0:  # pragma: no cover
            fcntl.flock(fd, fcntl.LOCK_UN)
        else:
            _set_lock(fd, fcntl.F_UNLCK, start, length)
    held.clear()


class Store:
    """The SQLite checkpoint store.

    Args:
        path: the store file; its folder is created if needed.
        readonly: open for reading only (analyses), never creating the file.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self._lock_fd: int | None = None
        if readonly:
            if not self.path.exists():
                raise FileNotFoundError(f"{self.path}: store not found")
            uri = f"file:{self.path.resolve()}?mode=ro"
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # check_same_thread=False: a notebook may drive the client from a helper thread
            # (its own event loop); the store is still used by one thread at a time.
            self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
            try:
                self._create_when_free()
            except sqlite3.DatabaseError as exc:
                self._conn.close()
                raise StoreError(f"{self.path}: not a judgepanel store ({exc})") from None
            except StoreError:
                self._conn.close()
                raise
        version = self.schema_version = self._check_schema()
        if version < SCHEMA_VERSION:
            if readonly:
                self._read_old_version(version)
            else:
                self._migrate()
                self.schema_version = SCHEMA_VERSION
        if not readonly and str(self.path) != ":memory:":
            # The writer lock is taken on the store file itself (see ``sending``); the
            # descriptor stays open until the connection is closed, because closing a
            # descriptor of a file drops every POSIX lock the process holds on it,
            # SQLite's included.
            # It is opened for writing because a write lock needs it; nothing is written.
            self._lock_fd = os.open(self.path, os.O_RDWR)

    def _create_when_free(self, wait_s: float = 30.0) -> None:
        """:meth:`_create`, again while another process holds the file: SQLite answers a
        switch to WAL "database is locked" at once, without its busy timeout, when two
        processes open a new store together (two scoring lanes at the start of a report)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self._create()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _create(self) -> None:
        """Set WAL mode and create the tables, unless the file holds some other database."""
        listing = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = {row[0] for row in listing}
        if tables and "meta" not in tables:
            raise StoreError(
                f"{self.path}: not a judgepanel store (it holds the tables "
                f"{', '.join(sorted(tables))}); name a new file or an existing store"
            )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)
        with self._conn:
            self._conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )

    def _check_schema(self) -> int:
        """The file's schema version: this one, or an older one (migrated or read as is)."""
        try:
            row = self._conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a judgepanel store ({exc})") from None
        if row is None or int(row[0]) not in range(1, SCHEMA_VERSION + 1):
            found = row[0] if row else "none"
            raise StoreError(
                f"{self.path}: store schema version {found}, this code reads {SCHEMA_VERSION}"
            )
        return int(row[0])

    def _migrate(self) -> None:
        """Bring an older file to this schema in place, in one transaction.

        From 1: the failure kind and billed answers, which schema 1 kept only in the reason
        text and the re-asks, are derived from the columns it had. From 2: cached tokens and
        reported cost are added as unknown (``NULL``), samples per request as 1 (schema 2
        drew every row alone). ``BEGIN IMMEDIATE`` takes the write lock before the version
        is read again, so two processes opening one old file migrate it once.
        """
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0])  # another process may have migrated it while we waited
            if version == 1:
                conn.execute(
                    "ALTER TABLE calls ADD COLUMN failure TEXT NOT NULL DEFAULT '' "
                    "CHECK (failure IN ('', 'retryable', 'final'))"
                )
                conn.execute("ALTER TABLE calls ADD COLUMN billed INTEGER NOT NULL DEFAULT 0")
                conn.execute(
                    f"UPDATE calls SET failure = {_FAILURE_OF_REASON}, billed = {_BILLED_OF_REASON}"
                )
            if version <= 2:
                for name, declaration, _ in _ADDED_IN_3:
                    conn.execute(f"ALTER TABLE calls ADD COLUMN {name} {declaration}")
            # From 3: the batch tables, which ``_create`` already added (IF NOT EXISTS).
            if version < SCHEMA_VERSION:
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _read_old_version(self, version: int) -> None:
        """Read an older store without writing to it: temporary objects add what it lacks.

        Temporary objects shadow the file's own of the same name, so every query below
        runs unchanged on the old file: a view of ``calls`` adds the columns of later
        schemas as an older row reads them, schema 1 gets empty reservation tables, and
        schemas before 4 get empty batch tables.
        """
        temp = "CREATE TEMP TABLE"
        script = "\n".join(
            line.replace("CREATE TABLE IF NOT EXISTS", temp).replace(
                " REFERENCES batches (chunk)", ""
            )
            for line in _BATCH_TABLES.splitlines()
            if not line.startswith("CREATE INDEX")
        )
        added = []
        if version <= 2:
            added = [f"{value} AS {name}" for name, _, value in _ADDED_IN_3]
        if version == 1:
            added = [f"{_FAILURE_OF_REASON} AS failure", f"{_BILLED_OF_REASON} AS billed", *added]
            script += _RESERVATION_TABLES.replace("CREATE TABLE IF NOT EXISTS", temp)
        if added:
            view = f"CREATE TEMP VIEW calls AS SELECT *, {', '.join(added)} FROM main.calls;"
            script = f"{view}\n{script}"
        self._conn.executescript(script)

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        self._conn.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def sending(self, datasets: Iterable[str] | None = None) -> Iterator[None]:
        """Hold the store's writer lock for these datasets (all of them when ``None``)
        while calls are being sent.

        Two scoring processes sending one dataset's calls would send the same calls twice
        (the store would keep one answer, but both would be paid for), so the second one is
        refused; processes sending different datasets may run side by side. The locks are
        open-file-description locks on the store file itself, one byte per dataset far past
        the bytes SQLite locks, so every path to the file (a symlink, a hard link, a
        relative path) meets them, closing another descriptor of the file does not drop
        them, and the kernel releases them even on ``kill -9``. Where the system has no such
        locks, one ``flock`` on the whole file stands for every dataset.
        """
        if self._lock_fd is None:
            yield
            return
        wanted = None if datasets is None else sorted(set(datasets))
        held = _take_send_locks(self._lock_fd, wanted, self.path)
        try:
            yield
        finally:
            _drop_send_locks(self._lock_fd, held)

    @property
    def journal_mode(self) -> str:
        return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])

    # -- writing ---------------------------------------------------------------------------

    def reserve(self, key: CallKey, bound: float, seed: int | None = None) -> None:
        """Write a call's reservation before it is sent, in its own transaction."""
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO pending "
                "(key, dataset, item, model, seed, bound, started_at) VALUES (?,?,?,?,?,?,?)",
                (_key_text(key), key.dataset, key.item, key.model, seed, bound, utc_now()),
            )

    def release(self, key: CallKey) -> None:
        """Drop a reservation whose call ended without anything to record or bill."""
        with self._conn:
            self._conn.execute("DELETE FROM pending WHERE key = ?", (_key_text(key),))

    def record(self, key: CallKey, result: CallResult, *, created_at: str | None = None) -> None:
        """Write one completed call, and drop its reservation, in one transaction.

        An existing ``failed`` row with the same key is replaced, its cost, tokens,
        attempts and billed answers added to the new ones; an ``ok`` row is kept as it is.
        """
        with self._conn:
            self._conn.execute(_INSERT, _row(key, result, created_at or utc_now()))
            self._conn.execute("DELETE FROM pending WHERE key = ?", (_key_text(key),))

    def record_batch(
        self,
        rows: Iterable[tuple[CallKey, CallResult]],
        chunk: str,
        *,
        status: str,
        note: str = "",
    ) -> int:
        """Write a batch chunk's results and close the chunk, in one transaction.

        Either every row is written and the chunk is ``done``, or (the process dies
        half-way) nothing is, and the chunk stays open to be ingested again: a batch's
        results go in exactly once. Returns the rows written.
        """
        now = utc_now()
        written = 0

        def counted() -> Iterator[tuple[Any, ...]]:
            nonlocal written
            for key, result in rows:
                written += 1
                yield _row(key, result, now)

        with self._conn:
            self._conn.executemany(_INSERT, counted())
            self._conn.execute(
                "UPDATE batches SET state = 'done', status = ?, note = ?, updated_at = ? "
                "WHERE chunk = ?",
                (status, note, now, chunk),
            )
        return written

    def record_many(self, rows: Iterable[tuple[CallKey, CallResult]]) -> None:
        """Write many calls in one transaction (bulk imports and benchmarks only)."""
        now = utc_now()
        with self._conn:
            self._conn.executemany(_INSERT, (_row(key, res, now) for key, res in rows))

    def recover_interrupted(self, datasets: Iterable[str] | None = None) -> Reservations:
        """Move reservations left by a process that died into ``interrupted``.

        Call it holding the writer lock of the same datasets (:meth:`sending`): then no
        other process has calls of them in flight, so every such row still in ``pending``
        belongs to a run that was killed. ``None`` means every dataset. Returns how many
        there were and the most they could have cost.
        """
        where, args = "", ()
        if datasets is not None:
            names = sorted(set(datasets))
            where = f" WHERE dataset IN ({','.join('?' * len(names))})"
            args = tuple(names)
        with self._conn:
            n, usd = self._conn.execute(
                f"SELECT COUNT(*), COALESCE(SUM(bound), 0) FROM pending{where}", args
            ).fetchone()
            found = Reservations(int(n), float(usd))
            if found.calls:
                self._conn.execute(
                    "INSERT INTO interrupted (key, dataset, item, model, seed, bound, "
                    "started_at, found_at) SELECT key, dataset, item, model, seed, bound, "
                    f"started_at, ? FROM pending{where}",
                    (utc_now(), *args),
                )
                self._conn.execute(f"DELETE FROM pending{where}", args)
        return found

    # -- reading ---------------------------------------------------------------------------

    def completed_keys(self, dataset: str | None = None, include_failed: bool = True) -> set[tuple]:
        """Keys already checkpointed, as ``CallKey.as_tuple()`` tuples, in one query.

        Args:
            dataset: only this dataset.
            include_failed: count failed calls as stored (the default).
        """
        where, params = _where(dataset=dataset, status=None if include_failed else "ok")
        return set(self._conn.execute(f"SELECT {', '.join(KEY_FIELDS)} FROM calls{where}", params))

    def completed_digests(
        self, dataset: str | None = None, include_failed: bool = True
    ) -> set[int]:
        """``calls.key_digest`` of the calls a resume must not send again, in one query.

        The fast path of resume planning (see :func:`judgepanel.core.calls.key_digest`).
        ``ok`` calls are done; ``final`` failures are done unless ``include_failed`` is
        False (``--retry-failed``); ``retryable`` failures are never done, so a plain
        resume sends them again.
        """
        where, params = _where(dataset=dataset, status=None if include_failed else "ok")
        where += (" AND " if where else " WHERE ") + "failure != 'retryable'"
        rows = self._conn.execute(f"SELECT key_digest FROM calls{where}", params)
        return {row[0] for row in rows}

    def is_completed(self, key: CallKey) -> bool:
        """Whether one key is stored (one query; prefer :meth:`completed_digests` for plans)."""
        sql = "SELECT 1 FROM calls WHERE " + " AND ".join(f"{c} = ?" for c in KEY_FIELDS)
        return self._conn.execute(sql, key.as_tuple()).fetchone() is not None

    def frame(
        self,
        dataset: str | None = None,
        kinds: Iterable[str] | None = None,
        status: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """The stored calls as a tidy DataFrame, one row per call.

        Args:
            dataset: only this dataset.
            kinds: only these prompt kinds.
            status: only ``ok`` or only ``failed`` calls.
            columns: only these columns (all by default); reading fewer is faster, the
                answer texts being most of the file.
        """
        wanted = list(columns) if columns is not None else list(COLUMNS)
        unknown = [c for c in wanted if c not in COLUMNS]
        if unknown:
            raise StoreError(f"{self.path}: no columns {unknown}; columns are {list(COLUMNS)}")
        where, params = _where(dataset=dataset, kinds=kinds, status=status)
        sql = f"SELECT {', '.join(wanted)} FROM calls{where} ORDER BY {', '.join(KEY_FIELDS)}"
        df = pd.read_sql_query(sql, self._conn, params=params)
        # Nullable integer columns stay integers when some rows are NULL.
        for col in ("prompt_tokens", "cached_tokens", "completion_tokens", "seed"):
            if col in df:
                df[col] = df[col].astype("Int64")
        for col in ("value", "reported_cost"):
            if col in df:
                df[col] = df[col].astype("float64")
        if "samples_per_request" in df:
            df["samples_per_request"] = df["samples_per_request"].astype("int64")
        return df

    def spend(self, dataset: str | None = None) -> float:
        """USD billed over every answered attempt of every send (failed calls included)."""
        where, params = _where(dataset=dataset)
        sql = f"SELECT COALESCE(SUM(cost), 0) FROM calls{where}"
        return float(self._conn.execute(sql, params).fetchone()[0])

    def _reservations(self, table: str) -> Reservations:
        n, usd = self._conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(bound), 0) FROM {table}"
        ).fetchone()
        return Reservations(int(n), float(usd))

    def possibly_billed(self) -> Reservations:
        """Calls sent without a recorded answer (interrupted, in flight now, or in an open
        batch) and their reservations: what the endpoint may have billed beyond :meth:`spend`."""
        gone, now = self._reservations("interrupted"), self._reservations("pending")
        batched = self.batched()
        return Reservations(
            gone.calls + now.calls + batched.calls, gone.bound + now.bound + batched.bound
        )

    def batched_digests(self, dataset: str | None = None) -> set[int]:
        """``key_digest`` of the calls in open batch chunks: sent, not yet answered."""
        states = ", ".join(f"'{s}'" for s in OPEN_CHUNK_STATES)
        where, params = "", []
        if dataset is not None:
            where, params = " AND l.dataset = ?", [dataset]
        rows = self._conn.execute(
            "SELECT l.key_digest FROM batch_lines l JOIN batches b ON b.chunk = l.chunk "
            f"WHERE b.state IN ({states}){where}",
            params,
        )
        return {row[0] for row in rows}

    def batched(self) -> Reservations:
        """Calls in open batch chunks (submitted, or on their way) and their bounds."""
        states = ", ".join(f"'{s}'" for s in OPEN_CHUNK_STATES)
        n, usd = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(l.bound), 0) FROM batch_lines l "
            f"JOIN batches b ON b.chunk = l.chunk WHERE b.state IN ({states})"
        ).fetchone()
        return Reservations(int(n), float(usd))

    @property
    def connection(self) -> sqlite3.Connection:
        """The SQLite connection (the batch records share it, and its transactions)."""
        return self._conn

    def total_committed(self) -> float:
        """USD a ceiling over the whole store counts: spend plus every open reservation."""
        return self.spend() + self.possibly_billed().bound

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def n_items(self, dataset: str) -> int:
        """Distinct items of ``dataset`` with at least one stored call."""
        sql = "SELECT COUNT(DISTINCT item) FROM calls WHERE dataset = ?"
        return int(self._conn.execute(sql, (dataset,)).fetchone()[0])

    def samples_per_request_mix(
        self, dataset: str | None = None, models: Iterable[str] | None = None
    ) -> dict[int, int]:
        """How many rows were drawn at each ``samples_per_request`` (value -> rows).

        More than one key means the rows mix calls drawn one at a time with calls drawn
        ``n`` to a request, whose repetitions share one prompt (and its cache): an analysis
        of repeatability should know.

        Args:
            dataset: only this dataset.
            models: only these model ids.
        """
        where, params = _where(dataset=dataset)
        if models is not None:
            names = sorted(set(models))
            where += (" AND " if where else " WHERE ") + f"model IN ({', '.join('?' * len(names))})"
            params.extend(names)
        rows = self._conn.execute(
            f"SELECT samples_per_request, COUNT(*) FROM calls{where} "
            "GROUP BY samples_per_request ORDER BY samples_per_request",
            params,
        )
        return {int(v): int(n) for v, n in rows}

    def _billing(self, group_by: str = "") -> list[tuple[Any, ...]]:
        """Calls, token sums, estimated and reported USD, per ``group_by`` column or overall.

        A token sum is ``None`` when no row knows it. Reported cost counts only rows with a
        billed answer (a send that billed nothing has nothing to report).
        """
        head = f"{group_by}, " if group_by else ""
        tail = f" GROUP BY {group_by} ORDER BY {group_by}" if group_by else ""
        return list(
            self._conn.execute(
                f"SELECT {head}COUNT(*), SUM(prompt_tokens), SUM(cached_tokens), "
                "SUM(completion_tokens), COALESCE(SUM(cost), 0), "
                "SUM(CASE WHEN billed > 0 THEN reported_cost END), "
                "COALESCE(SUM(billed > 0 AND reported_cost IS NOT NULL), 0), "
                f"COALESCE(SUM(billed > 0), 0) FROM calls{tail}"
            )
        )

    def summary(self) -> dict[str, Any]:
        """What :func:`status_command` prints: counts, failures by reason, spend, rubrics,
        and per model the tokens, the cost as estimated and as reported, and the samples
        per request.

        ``cost_reported`` is ``None`` where no billed row reported a cost;
        ``reported_calls`` of ``billed_calls`` rows reported one.
        """
        conn = self._conn

        def billing(row: tuple[Any, ...]) -> dict[str, Any]:
            n, prompt, cached, completion, estimated, reported, n_reported, n_billed = row
            return {
                "calls": int(n),
                "input_tokens": None if prompt is None else int(prompt),
                "cached_tokens": None if cached is None else int(cached),
                "output_tokens": None if completion is None else int(completion),
                "cost_estimated": float(estimated),
                "cost_reported": None if reported is None else float(reported),
                "reported_calls": int(n_reported),
                "billed_calls": int(n_billed),
            }

        mixes: dict[str, dict[int, int]] = {}
        for model, v, n in conn.execute(
            "SELECT model, samples_per_request, COUNT(*) FROM calls "
            "GROUP BY model, samples_per_request ORDER BY model, samples_per_request"
        ):
            mixes.setdefault(model, {})[int(v)] = int(n)
        models = [
            {"model": row[0], **billing(row[1:]), "samples_per_request": mixes.get(row[0], {})}
            for row in self._billing("model")
        ]
        overall = billing(self._billing()[0])
        counts = [
            {"dataset": d, "family": f, "kind": k, "status": s, "n": n, "cost": c}
            for d, f, k, s, n, c in conn.execute(
                "SELECT dataset, family, kind, status, COUNT(*), SUM(cost) FROM calls "
                "GROUP BY dataset, family, kind, status ORDER BY dataset, family, kind, status"
            )
        ]
        failures = [
            {"failure": f, "reason": r, "n": n}
            for f, r, n in conn.execute(
                "SELECT failure, reason, COUNT(*) AS n FROM calls WHERE status = 'failed' "
                "GROUP BY failure, reason ORDER BY n DESC, reason"
            )
        ]
        rubrics = [
            {"rubric_sha": r, "n": n}
            for r, n in conn.execute(
                "SELECT rubric_sha, COUNT(*) FROM calls GROUP BY rubric_sha ORDER BY rubric_sha"
            )
        ]
        totals = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(status = 'ok'), 0), "
            "COALESCE(SUM(status = 'failed'), 0), COALESCE(SUM(cost), 0), "
            "COALESCE(SUM(attempts), 0), MIN(created_at), MAX(created_at), "
            "COALESCE(SUM(failure = 'retryable'), 0), COALESCE(SUM(billed), 0) FROM calls"
        ).fetchone()
        unanswered = self.possibly_billed()
        batched = self.batched()
        return {
            "store": str(self.path),
            "schema_version": self.schema_version,
            "journal_mode": self.journal_mode,
            "calls": int(totals[0]),
            "ok": int(totals[1]),
            "failed": int(totals[2]),
            "retryable": int(totals[7]),
            "final": int(totals[2]) - int(totals[7]),
            "spend": float(totals[3]),
            "billed_answers": int(totals[8]),
            "unanswered_calls": unanswered.calls - batched.calls,
            "unanswered_bound": unanswered.bound - batched.bound,
            "batched_calls": batched.calls,
            "batched_bound": batched.bound,
            "attempts": int(totals[4]),
            "first": totals[5],
            "last": totals[6],
            "tokens": {
                "input": overall["input_tokens"],
                "cached": overall["cached_tokens"],
                "output": overall["output_tokens"],
            },
            "cost_estimated": overall["cost_estimated"],
            "cost_reported": overall["cost_reported"],
            "reported_calls": overall["reported_calls"],
            "billed_calls": overall["billed_calls"],
            "samples_per_request": self.samples_per_request_mix(),
            "models": models,
            "counts": counts,
            "failures": failures,
            "rubrics": rubrics,
        }
