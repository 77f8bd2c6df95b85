"""Ingesting a finished chunk: its result files matched to its calls and written at once.

Both paths end here: a provider's batch (its output and error files) and an offline run
(``vllm run-batch``'s output file). Every result line is matched to the chunk's calls by
``custom_id``; a line that names another call, answers one twice or comes from another
model is not kept, and said so. The rows and the chunk's closing are one transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from judgepanel.core.batch.lines import custom_id
from judgepanel.core.batch.records import BatchBook, Chunk, LineRecord
from judgepanel.core.batch.results import (
    ResultFileError,
    ResultLine,
    collector_paused,
    outcome,
    read_result_lines,
)
from judgepanel.core.budget import CallBound, RequestShape
from judgepanel.core.calls import KEY_FIELDS, CallKey, CallSpec
from judgepanel.core.client.counts import CallCounts
from judgepanel.core.config import Price
from judgepanel.core.providers import Provider
from judgepanel.core.store import CallResult, Store

FaultHook = Callable[[str], None]
"""Called with the name of each step a crash test may stop a batch run at: ``uploaded``,
``created``, ``polling`` and ``ingesting`` (half-way through writing a chunk's results).
Only tests pass one (to kill the process there, as a crash would); runs pass none."""


def batch_price(price: Price) -> Price:
    """What a batch line is charged: the batch price, else the online one."""
    return price.batch() or price


def reask_history(
    store: Store, specs: Sequence[CallSpec], custom_id: Callable[[CallKey], str]
) -> dict[str, int]:
    """custom_id -> re-asks already stored for calls of ``specs`` that failed before."""
    wanted = {s.key.as_tuple(): custom_id(s.key) for s in specs}
    out: dict[str, int] = {}
    for ds in {s.key.dataset for s in specs}:
        failed = store.frame(ds, status="failed", columns=[*KEY_FIELDS, "reasks"])
        for row in failed.itertuples(index=False):
            cid = wanted.get(tuple(row[: len(KEY_FIELDS)]))
            if cid is not None:
                out[cid] = int(row[-1])
    return out


def _answer_bound(spec: CallSpec) -> CallBound:
    return RequestShape.of(spec.build(), spec.max_tokens).bound(0)


def _no_usage(line: ResultLine) -> bool:
    body = line.result.body
    return not (isinstance(body, dict) and isinstance(body.get("usage"), dict))


def _stopping(
    rows: list[tuple[CallKey, CallResult]], fault: FaultHook
) -> Iterator[tuple[CallKey, CallResult]]:
    """``rows``, calling ``fault("ingesting")`` half-way through them."""
    for i, row in enumerate(rows):
        if i == len(rows) // 2:
            fault("ingesting")
        yield row


def ingest_chunk(
    store: Store,
    chunk: Chunk,
    files: Sequence[tuple[bytes, str]],
    specs: Mapping[str, CallSpec],
    prices: Mapping[str, Price],
    provider: Provider,
    *,
    max_reasks: int,
    status: str,
    fault: FaultHook | None = None,
    lines: Sequence[LineRecord] | None = None,
) -> CallCounts:
    """Write ``chunk``'s results (``files``: data and a name for messages, in
    ``provider``'s format) and close it.

    ``specs`` maps the chunk's custom_ids to their calls (it may hold more); ``fault``
    (tests only) is called half-way through writing them; ``lines``: the chunk's lines
    (:meth:`BatchBook.lines`) when the caller has read them already. Returns what was written:
    outcomes, their cost, the re-asks of failed calls, the lines left unanswered, and
    notes on lines that were not kept.
    """
    if lines is None:
        lines = BatchBook(store).lines(chunk.chunk)
    records: dict[str, LineRecord] = {rec.custom_id: rec for rec in lines}
    history = reask_history(store, [specs[c] for c in records], custom_id)
    latency = max(0.0, time.time() - chunk.created)
    price_of = {model: batch_price(price) for model, price in prices.items()}
    got = CallCounts()
    rows: list[tuple[CallKey, CallResult]] = []
    seen: set[str] = set()
    with collector_paused():  # a logprob file is many small objects
        for data, name in files:
            try:
                results = list(read_result_lines(data, name, provider))
            except ResultFileError as exc:
                got.notes.append(str(exc))
                continue
            for line in results:
                rec = records.get(line.custom_id)
                if rec is None:
                    got.notes.append(f"{line.where}: {line.custom_id} is not a call of this batch")
                    continue
                if line.custom_id in seen:
                    got.notes.append(f"{line.where}: {line.custom_id} answered twice; first kept")
                    continue
                seen.add(line.custom_id)
                spec = specs[line.custom_id]
                model = line.result.model
                if model is not None and model != spec.key.model:
                    got.notes.append(f"{line.where}: answered by {model}, not {spec.key.model}")
                    continue
                # the bound is charged only for an answer without usage: measured only then
                bound = _answer_bound(spec) if _no_usage(line) else CallBound(0, 0, 1)
                result = outcome(
                    spec,
                    line,
                    provider,
                    seed=rec.seed,
                    price=price_of[spec.key.model],
                    bound=bound,
                    reasks_before=history.get(line.custom_id, 0),
                    max_reasks=max_reasks,
                    latency_s=latency,
                )
                if result is not None:
                    rows.append((spec.key, result))
    written = rows if fault is None else _stopping(rows, fault)
    store.record_batch(written, chunk.chunk, status=status, note="; ".join(got.notes[:5]))
    for _, result in rows:
        got.record(result)
        if result.status != "ok":
            got.reasks += result.reasks
    got.unanswered = len(records) - len(rows)
    return got
