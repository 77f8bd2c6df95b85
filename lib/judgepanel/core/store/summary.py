"""Cost accounting and the store's summary: spend, reservations, and what ``status`` shows.

Cost is kept twice: ``cost`` is our estimate from the token counts and the price table
(cached prompt tokens at the cached-input price), ``reported_cost`` what the provider
itself reported as ``usage.cost`` (``NULL`` where it did not), so the two can be compared.
What the endpoint may have billed beyond the spend is the calls sent without a recorded
answer: interrupted, in flight now, or in an open batch, each counted at its reservation.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgepanel.core.store.frames import of_datasets, where
from judgepanel.core.store.schema import OPEN_CHUNK_STATES
from judgepanel.core.store.writer import Reservations

_OPEN_CHUNKS = (
    f"(SELECT chunk FROM batches WHERE state IN ({', '.join(repr(s) for s in OPEN_CHUNK_STATES)}))"
)
"""The open chunks, as a subquery: a store's lines are found by their chunk (the lines'
key), so the lines of chunks long closed are not read (a join scanned them all)."""


@dataclass(frozen=True)
class Tokens:
    """Token sums over every stored call; ``None`` where no row knows them."""

    input: int | None
    cached: int | None
    output: int | None


@dataclass(frozen=True)
class ModelCost:
    """One model's calls, tokens and cost, as estimated and as the provider reported it.

    Attributes:
        cost_reported: ``None`` where no billed row reported a cost.
        reported_calls: of ``billed_calls`` (rows with a billed answer), those that did.
        samples_per_request: rows drawn at each ``n`` (value -> rows).
    """

    model: str
    calls: int
    input_tokens: int | None
    cached_tokens: int | None
    output_tokens: int | None
    cost_estimated: float
    cost_reported: float | None
    reported_calls: int
    billed_calls: int
    samples_per_request: Mapping[int, int]


@dataclass(frozen=True)
class CallCount:
    """Calls and their cost per dataset, family, kind and status."""

    dataset: str
    family: str
    kind: str
    status: str
    n: int
    cost: float


@dataclass(frozen=True)
class FailureCount:
    """Failed calls per failure kind and reason."""

    failure: str
    reason: str
    n: int


@dataclass(frozen=True)
class RubricCount:
    """Calls per rubric hash."""

    rubric_sha: str
    n: int


@dataclass(frozen=True)
class StoreSummary:
    """What ``judgepanel status`` shows of a store (:meth:`Accounts.summary`).

    Attributes:
        unanswered_calls, unanswered_bound: calls sent whose answer never arrived
            (interrupted or in flight) and their reservations, USD.
        batched_calls, batched_bound: calls in open batch chunks and their bounds, USD.
        first, last: when the first and last calls were written (``None``: no calls).
        cost_estimated, cost_reported, reported_calls, billed_calls: as in
            :class:`ModelCost`, over every model.
    """

    store: str
    schema_version: int
    journal_mode: str
    calls: int
    ok: int
    failed: int
    retryable: int
    final: int
    spend: float
    billed_answers: int
    unanswered_calls: int
    unanswered_bound: float
    batched_calls: int
    batched_bound: float
    attempts: int
    first: str | None
    last: str | None
    tokens: Tokens
    cost_estimated: float
    cost_reported: float | None
    reported_calls: int
    billed_calls: int
    samples_per_request: Mapping[int, int]
    models: tuple[ModelCost, ...]
    counts: tuple[CallCount, ...]
    failures: tuple[FailureCount, ...]
    rubrics: tuple[RubricCount, ...]

    def as_dict(self) -> dict[str, Any]:
        """The summary as plain data (``status --json``), its lists as lists."""
        out = dataclasses.asdict(self)
        for name in ("models", "counts", "failures", "rubrics"):
            out[name] = list(out[name])
        return out


def _billing_of(model: str, row: tuple[Any, ...], mix: Mapping[int, int]) -> ModelCost:
    n, prompt, cached, completion, estimated, reported, n_reported, n_billed = row
    return ModelCost(
        model=model,
        calls=int(n),
        input_tokens=None if prompt is None else int(prompt),
        cached_tokens=None if cached is None else int(cached),
        output_tokens=None if completion is None else int(completion),
        cost_estimated=float(estimated),
        cost_reported=None if reported is None else float(reported),
        reported_calls=int(n_reported),
        billed_calls=int(n_billed),
        samples_per_request=mix,
    )


class Accounts:
    """The store's cost accounting and summary (a part of
    :class:`judgepanel.core.store.Store`, which owns the connection)."""

    _conn: sqlite3.Connection
    path: Path
    schema_version: int

    def spend(self, dataset: str | None = None) -> float:
        """USD billed over every answered attempt of every send (failed calls included)."""
        sql, params = where(dataset=dataset)
        query = f"SELECT COALESCE(SUM(cost), 0) FROM calls{sql}"
        return float(self._conn.execute(query, params).fetchone()[0])

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

    def batched_digests(self, dataset: str | Collection[str] | None = None) -> set[int]:
        """``key_digest`` of the calls in open batch chunks: sent, not yet answered
        (of one dataset, of several, or of all)."""
        of, params = of_datasets("dataset", dataset)
        rows = self._conn.execute(
            f"SELECT key_digest FROM batch_lines WHERE {of}chunk IN {_OPEN_CHUNKS}", params
        )
        return {row[0] for row in rows}

    def batched(self) -> Reservations:
        """Calls in open batch chunks (submitted, or on their way) and their bounds."""
        n, usd = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(bound), 0) FROM batch_lines "
            f"WHERE chunk IN {_OPEN_CHUNKS}"
        ).fetchone()
        return Reservations(int(n), float(usd))

    def total_committed(self) -> float:
        """USD a ceiling over the whole store counts: spend plus every open reservation."""
        return self.spend() + self.possibly_billed().bound

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
        sql, params = where(dataset=dataset)
        if models is not None:
            names = sorted(set(models))
            sql += (" AND " if sql else " WHERE ") + f"model IN ({', '.join('?' * len(names))})"
            params.extend(names)
        rows = self._conn.execute(
            f"SELECT samples_per_request, COUNT(*) FROM calls{sql} "
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

    def summary(self) -> StoreSummary:
        """What :func:`status_command` prints: counts, failures by reason, spend, rubrics,
        and per model the tokens, the cost as estimated and as reported, and the samples
        per request."""
        conn = self._conn
        mixes: dict[str, dict[int, int]] = {}
        for model, v, n in conn.execute(
            "SELECT model, samples_per_request, COUNT(*) FROM calls "
            "GROUP BY model, samples_per_request ORDER BY model, samples_per_request"
        ):
            mixes.setdefault(model, {})[int(v)] = int(n)
        models = tuple(
            _billing_of(row[0], row[1:], mixes.get(row[0], {})) for row in self._billing("model")
        )
        overall = _billing_of("", self._billing()[0], {})
        counts = tuple(
            CallCount(d, f, k, s, n, c)
            for d, f, k, s, n, c in conn.execute(
                "SELECT dataset, family, kind, status, COUNT(*), SUM(cost) FROM calls "
                "GROUP BY dataset, family, kind, status ORDER BY dataset, family, kind, status"
            )
        )
        failures = tuple(
            FailureCount(f, r, n)
            for f, r, n in conn.execute(
                "SELECT failure, reason, COUNT(*) AS n FROM calls WHERE status = 'failed' "
                "GROUP BY failure, reason ORDER BY n DESC, reason"
            )
        )
        rubrics = tuple(
            RubricCount(r, n)
            for r, n in conn.execute(
                "SELECT rubric_sha, COUNT(*) FROM calls GROUP BY rubric_sha ORDER BY rubric_sha"
            )
        )
        totals = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(status = 'ok'), 0), "
            "COALESCE(SUM(status = 'failed'), 0), COALESCE(SUM(cost), 0), "
            "COALESCE(SUM(attempts), 0), MIN(created_at), MAX(created_at), "
            "COALESCE(SUM(failure = 'retryable'), 0), COALESCE(SUM(billed), 0) FROM calls"
        ).fetchone()
        unanswered = self.possibly_billed()
        batched = self.batched()
        return StoreSummary(
            store=str(self.path),
            schema_version=self.schema_version,
            journal_mode=self.journal_mode,
            calls=int(totals[0]),
            ok=int(totals[1]),
            failed=int(totals[2]),
            retryable=int(totals[7]),
            final=int(totals[2]) - int(totals[7]),
            spend=float(totals[3]),
            billed_answers=int(totals[8]),
            unanswered_calls=unanswered.calls - batched.calls,
            unanswered_bound=unanswered.bound - batched.bound,
            batched_calls=batched.calls,
            batched_bound=batched.bound,
            attempts=int(totals[4]),
            first=totals[5],
            last=totals[6],
            tokens=Tokens(overall.input_tokens, overall.cached_tokens, overall.output_tokens),
            cost_estimated=overall.cost_estimated,
            cost_reported=overall.cost_reported,
            reported_calls=overall.reported_calls,
            billed_calls=overall.billed_calls,
            samples_per_request=self.samples_per_request_mix(),
            models=models,
            counts=counts,
            failures=failures,
            rubrics=rubrics,
        )
