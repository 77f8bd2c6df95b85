"""Writing calls: reservations before a call is sent, and its outcome once it ends.

A completed call replaces a stored row only when that row failed: an ``ok`` answer is
never overwritten, so two writers or a resend can never turn one call into two answers.
What the earlier sends cost is kept: the cumulative columns add up.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from judgepanel.core.calls import KEY_FIELDS, CallKey, key_digest
from judgepanel.core.store.schema import FAILURE_KINDS, failure_of_reason

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


INSERT_CALL = (  # a failed row is replaced, its spend added; an ok row is kept
    f"INSERT INTO calls ({', '.join(_WRITTEN)}) VALUES ({', '.join('?' * len(_WRITTEN))}) "
    f"ON CONFLICT ({', '.join(KEY_FIELDS)}) DO UPDATE SET "
    + ", ".join(_accumulate(c) for c in RESULT_FIELDS)
    + " WHERE calls.status = 'failed'"
)


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


def call_row(key: CallKey, result: CallResult, created_at: str) -> tuple:
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


def key_text(key: CallKey) -> str:
    """A call key as the text that names its reservation (and its line in a batch)."""
    return json.dumps(key.as_tuple(), ensure_ascii=False)


def utc_now() -> str:
    """The current UTC time in ISO 8601 with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Writer:
    """The store's writing job: reservations, outcomes and batch results (a part of
    :class:`judgepanel.core.store.Store`, which owns the connection)."""

    _conn: sqlite3.Connection

    def reserve(self, key: CallKey, bound: float, seed: int | None = None) -> None:
        """Write a call's reservation before it is sent, in its own transaction."""
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO pending "
                "(key, dataset, item, model, seed, bound, started_at) VALUES (?,?,?,?,?,?,?)",
                (key_text(key), key.dataset, key.item, key.model, seed, bound, utc_now()),
            )

    def release(self, key: CallKey) -> None:
        """Drop a reservation whose call ended without anything to record or bill."""
        with self._conn:
            self._conn.execute("DELETE FROM pending WHERE key = ?", (key_text(key),))

    def record(self, key: CallKey, result: CallResult, *, created_at: str | None = None) -> None:
        """Write one completed call, and drop its reservation, in one transaction.

        An existing ``failed`` row with the same key is replaced, its cost, tokens,
        attempts and billed answers added to the new ones; an ``ok`` row is kept as it is.
        """
        with self._conn:
            self._conn.execute(INSERT_CALL, call_row(key, result, created_at or utc_now()))
            self._conn.execute("DELETE FROM pending WHERE key = ?", (key_text(key),))

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
                yield call_row(key, result, now)

        with self._conn:
            self._conn.executemany(INSERT_CALL, counted())
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
            self._conn.executemany(INSERT_CALL, (call_row(key, res, now) for key, res in rows))

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
