"""The store's tables, its schema version, and how older files are migrated or read.

Schema 1 kept a failure's kind only in its reason text; schema 2 added the failure kind
and billed answers; schema 3 the cached tokens, reported cost and samples per request;
schema 4 the batch tables; schema 5 the provenance of imported answers. A file of an older
schema is migrated in place when opened for writing, and read as it is (through temporary
objects) when opened read-only.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from judgepanel.core.calls import KEY_FIELDS
from judgepanel.errors import JudgepanelError

SCHEMA_VERSION = 5

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

_IMPORT_TABLES = """
CREATE TABLE IF NOT EXISTS imports (
    import_id INTEGER PRIMARY KEY,
    file TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    dataset TEXT NOT NULL,
    rows INTEGER NOT NULL,
    imported_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS imported_calls (
    key TEXT PRIMARY KEY,
    key_digest INTEGER NOT NULL,
    import_id INTEGER NOT NULL REFERENCES imports (import_id),
    line INTEGER NOT NULL
);
"""
"""Where imported answers came from (schema 5): each imported file (its name, never its
folder; its SHA-256; the dataset; when), and which call came from which of its lines."""

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
    + _IMPORT_TABLES
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


class StoreError(JudgepanelError, RuntimeError):
    """The store file is not a judgepanel store, or has an unknown schema version."""


def create(conn: sqlite3.Connection, path: Path) -> None:
    """Set WAL mode and create the tables, unless the file holds some other database."""
    listing = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    tables = {row[0] for row in listing}
    if tables and "meta" not in tables:
        raise StoreError(
            f"{path}: not a judgepanel store (it holds the tables "
            f"{', '.join(sorted(tables))}); name a new file or an existing store"
        )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(_SCHEMA)
    with conn:
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )


def check_schema(conn: sqlite3.Connection, path: Path) -> int:
    """The file's schema version: this one, or an older one (migrated or read as is)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a judgepanel store ({exc})") from None
    if row is None or int(row[0]) not in range(1, SCHEMA_VERSION + 1):
        found = row[0] if row else "none"
        raise StoreError(f"{path}: store schema version {found}, this code reads {SCHEMA_VERSION}")
    return int(row[0])


def migrate(conn: sqlite3.Connection) -> None:
    """Bring an older file to this schema in place, in one transaction.

    From 1: the failure kind and billed answers, which schema 1 kept only in the reason
    text and the re-asks, are derived from the columns it had. From 2: cached tokens and
    reported cost are added as unknown (``NULL``), samples per request as 1 (schema 2
    drew every row alone). ``BEGIN IMMEDIATE`` takes the write lock before the version
    is read again, so two processes opening one old file migrate it once.
    """
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
        # From 3: the batch tables; from 4: the import tables; ``create`` already added
        # both (IF NOT EXISTS).
        if version < SCHEMA_VERSION:
            conn.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def read_old_version(conn: sqlite3.Connection, version: int) -> None:
    """Read an older store without writing to it: temporary objects add what it lacks.

    Temporary objects shadow the file's own of the same name, so every query of the store
    runs unchanged on the old file: a view of ``calls`` adds the columns of later schemas
    as an older row reads them, schema 1 gets empty reservation tables, schemas before 4
    empty batch tables and schemas before 5 empty import tables.
    """
    temp = "CREATE TEMP TABLE"
    tables = _IMPORT_TABLES if version == 4 else _BATCH_TABLES + _IMPORT_TABLES
    script = "\n".join(
        line.replace("CREATE TABLE IF NOT EXISTS", temp)
        .replace(" REFERENCES batches (chunk)", "")
        .replace(" REFERENCES imports (import_id)", "")
        for line in tables.splitlines()
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
    conn.executescript(script)
