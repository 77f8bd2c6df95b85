"""The store file: opening it (created, migrated or read as it is), its writer locks, and
:class:`Store`, which joins the jobs of the other modules over one connection."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from judgepanel.core.store import schema
from judgepanel.core.store.frames import Reader
from judgepanel.core.store.imports import Importer
from judgepanel.core.store.locks import drop_send_locks, take_send_locks
from judgepanel.core.store.schema import SCHEMA_VERSION, StoreError
from judgepanel.core.store.summary import Accounts
from judgepanel.core.store.writer import Writer


class Store(Writer, Reader, Accounts, Importer):
    """The SQLite checkpoint store.

    Args:
        path: the store file; its folder is created if needed.
        readonly: open for reading only (analyses), never creating the file.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self._lock_fd: int | None = None
        if self.path.is_dir():
            raise StoreError(
                f"{self.path}: is a folder; name the store file (for example "
                f"{self.path / 'store.sqlite'})"
            )
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
        try:
            version = self.schema_version = schema.check_schema(self._conn, self.path)
        except sqlite3.OperationalError as exc:  # unreadable: permissions, a damaged file
            self._conn.close()
            raise StoreError(f"{self.path}: cannot be read ({exc}); check the file") from None
        if version < SCHEMA_VERSION:
            if readonly:
                schema.read_old_version(self._conn, version)
            else:
                schema.migrate(self._conn)
                self.schema_version = SCHEMA_VERSION
        if not readonly and str(self.path) != ":memory:":
            # The writer lock is taken on the store file itself (see ``sending``); the
            # descriptor stays open until the connection is closed, because closing a
            # descriptor of a file drops every POSIX lock the process holds on it,
            # SQLite's included.
            # It is opened for writing because a write lock needs it; nothing is written.
            self._lock_fd = os.open(self.path, os.O_RDWR)

    def _create_when_free(self, wait_s: float = 30.0) -> None:
        """:func:`schema.create`, again while another process holds the file: SQLite
        answers a switch to WAL "database is locked" at once, without its busy timeout,
        when two processes open a new store together (two scoring lanes at the start of a
        report)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                schema.create(self._conn, self.path)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

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
        while calls are being sent (see :mod:`judgepanel.core.store.locks`): a second
        process sending calls of the same dataset is refused with a ``StoreError``."""
        if self._lock_fd is None:
            yield
            return
        wanted = None if datasets is None else sorted(set(datasets))
        held = take_send_locks(self._lock_fd, wanted, self.path)
        try:
            yield
        finally:
            drop_send_locks(self._lock_fd, held)

    @property
    def journal_mode(self) -> str:
        return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])

    @property
    def connection(self) -> sqlite3.Connection:
        """The SQLite connection (the batch records share it, and its transactions)."""
        return self._conn
