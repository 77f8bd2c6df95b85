"""Processes that open a new store at the same moment (scoring lanes at the start of a
report) all get it: none fails with SQLite's immediate "database is locked"."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from judgepanel.core.store import Store


def _open(path: Path, barrier) -> None:  # type: ignore[no-untyped-def]
    barrier.wait()
    with Store(path):
        pass


def test_three_processes_open_a_new_store_together(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    failed = 0
    for i in range(25):
        barrier = ctx.Barrier(3)
        path = tmp_path / f"store-{i}.sqlite"
        procs = [ctx.Process(target=_open, args=(path, barrier)) for _ in range(3)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        failed += sum(p.exitcode != 0 for p in procs)
    assert failed == 0
