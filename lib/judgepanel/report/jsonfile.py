"""Small JSON records that several notebooks of one report update at the same time.

A run's ``headlines.json`` and ``notebooks.json`` are each shared by the notebooks of the
run, and the report may execute those notebooks concurrently (kernels are separate
processes). A read-modify-write therefore holds an exclusive lock on the file's folder,
and the file is replaced whole, so a reader never sees half of one.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: updates are not locked
    fcntl = None  # type: ignore[assignment]


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (created if missing) for the ``with`` block.

    The lock is taken on the folder itself, so no lock file is left beside the report's
    files; it excludes other processes and other threads of this one alike.
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_json(path: Path, data: Any, *, sort_keys: bool = True) -> None:
    """Write ``data`` to ``path`` in one step: a reader sees the old file or the new one.

    With ``sort_keys=False`` the dictionaries keep their order (and non-ASCII text is
    written as is), for records whose order is part of what they say.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    text = json.dumps(data, indent=2, sort_keys=sort_keys, ensure_ascii=sort_keys)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def update_json(
    path: Path, change: Callable[[dict[str, Any]], bool], *, sort_keys: bool = True
) -> None:
    """Apply ``change`` to the object stored in ``path`` (``{}`` when absent), under the lock.

    ``change`` edits the dictionary in place and returns whether there is anything to
    write.
    """
    with folder_lock(path.parent):
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if change(data):
            write_json(path, data, sort_keys=sort_keys)
