"""Batch lines answered in worker processes, so a batch uses more than the server's core.

A batch line's answer is a function of its body, the server's seed and prices, and the
counter the server assigns it (read only for an unseeded request or a malformed draw).
The server assigns the counters in line order and bills every answer itself, in line
order, so answers and ledger are those of answering in the server's own process; each
worker only parses, judges and prices. Workers are spawned (no copy of the running event
loop) and each builds the server's answerer once from its configuration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

LineResult = tuple[int, dict[str, Any], tuple[Any, ...] | None]
"""A batch line's status code, response body and bill (the server's ``_bill`` arguments,
or None for an error)."""

_APP: Any = None  # the worker's answerer, built once by _start


def _start(build: Callable[[Any], Any], config: Any) -> None:
    global _APP
    _APP = build(config)


def _answer(items: Sequence[tuple[dict[str, Any], int]]) -> list[LineResult]:
    return _APP.lines_answer(items)


class LineWorkers:
    """A pool of ``n`` processes, each answering batch lines with ``build(config)`` (the
    server's class and a configuration without ledger or workers: both are pickled by
    reference, so this module needs no import of the server)."""

    def __init__(self, build: Callable[[Any], Any], config: Any, n: int) -> None:
        if n < 1:
            raise ValueError(f"batch workers must be >= 1, got {n}")
        self.n = n
        self._pool = ProcessPoolExecutor(
            max_workers=n,
            mp_context=get_context("spawn"),
            initializer=_start,
            initargs=(build, config),
        )

    async def answer(self, items: Sequence[tuple[dict[str, Any], int]]) -> list[LineResult]:
        """``(status, response body, bill)`` of each ``(body, counter)``, in order."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, _answer, list(items))

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
