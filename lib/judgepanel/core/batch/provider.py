"""Scoring through a provider's batch API: submit, resume, poll and ingest.

One command (:func:`run_batches`) does it all, in rounds: the calls a plan still needs go
out as batch files (one model and at most 50,000 lines or 200 MB a file), it polls them
with a progress line, and ingests each as it finishes. Calls to ask again (an unreadable
answer with re-asks left, a retryable error, a line the provider never ran) go out in the
next round, until none is left or each has used its attempts.

Nothing is paid twice (see :mod:`judgepanel.core.batch.records` for the order of writes): a
resumed command first picks up the chunks an earlier one left open, finding a batch whose
id was never written by its metadata, and polls batches that exist instead of creating
them again. A batch that failed validation is not sent again by the same command.

The budget holds as online: each file's bound (one answer per line at the batch price) is
reserved before its batch is created, and stays counted by ``--max-total-cost`` until its
results are in.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judgepanel.core.batch.ingest import (
    Ingested,
    batch_price,
    crash_point,
    ingest_chunk,
    reask_history,
)
from judgepanel.core.batch.lines import (
    ENDPOINT,
    MAX_BYTES,
    MAX_LINES,
    Line,
    build_lines,
    chunks,
    custom_id,
    encode_line,
)
from judgepanel.core.batch.records import BatchBook, Chunk
from judgepanel.core.budget import Budget
from judgepanel.core.calls import CallSpec, key_digest
from judgepanel.core.client.answers import reask_seed
from judgepanel.core.client.body import request_body
from judgepanel.core.client.entry import _unique_plan
from judgepanel.core.client.options import ClientOptions
from judgepanel.core.client.outcome import ClientError, RunSummary
from judgepanel.core.client.secrets import endpoint_key, scrub
from judgepanel.core.config import ConfigError, Price
from judgepanel.core.store import Store

log = logging.getLogger("judgepanel.core.batch")

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class BatchOptions:
    """How a batch run submits and waits.

    Attributes:
        poll_s: seconds between two polls of the open batches.
        wait: poll until every batch is done (``False``: submit, then return; the same
            command run again collects them).
        max_lines, max_bytes: the most one batch file may hold.
        completion_window: the provider's window (OpenAI offers ``24h`` only).
    """

    poll_s: float = ClientOptions.batch_poll  # the declared default
    wait: bool = True
    max_lines: int = MAX_LINES
    max_bytes: int = MAX_BYTES
    completion_window: str = "24h"

    def __post_init__(self) -> None:
        if not self.poll_s > 0:
            raise ConfigError(f"--batch-poll {self.poll_s}: expected a positive number")
        if not 1 <= self.max_lines <= MAX_LINES:
            raise ConfigError(f"batch lines {self.max_lines}: expected 1 to {MAX_LINES}")
        if not 1 <= self.max_bytes <= MAX_BYTES:
            raise ConfigError(f"batch bytes {self.max_bytes}: expected 1 to {MAX_BYTES}")

    @classmethod
    def of(cls, options: ClientOptions) -> BatchOptions:
        """How the send configuration ``options`` polls and waits."""
        return cls(poll_s=options.batch_poll, wait=options.wait)


@dataclass
class _Tally(Ingested):
    """A command's counts: what its chunks wrote, plus what it sent and picked up."""

    sent: int = 0
    retries: int = 0
    resumed: int = 0

    def add(self, got: Ingested) -> None:
        self.ok += got.ok
        self.failed += got.failed
        self.retryable += got.retryable
        self.reasks += got.reasks
        self.spend += got.spend


class BatchRun:
    """One batch command: the SDK client, the plan, the budget and the counters."""

    def __init__(
        self,
        specs: Sequence[CallSpec],
        store: Store,
        prices: Mapping[str, Price],
        options: ClientOptions,
        batch: BatchOptions,
        run: str,
        desc: str,
    ) -> None:
        import openai

        self.store = store
        self.book = BatchBook(store)
        self.prices = prices
        self.options = options
        self.batch = batch
        self.run = run
        self.desc = desc
        self.custom_id = custom_id
        self.by_id: dict[str, CallSpec] = {custom_id(s.key): s for s in specs}
        base_url = options.endpoint.base_url
        self.endpoint = base_url or "the endpoint"
        # Control calls (upload, create, poll) are not billed: the SDK's own retries suit
        # them, and a provider's 429 on polling only slows the poll down.
        self.client = openai.OpenAI(
            api_key=endpoint_key(options.endpoint),
            base_url=base_url,
            timeout=max(options.timeout, 120.0),
        )
        self.store_id = self.book.store_id()
        prior = store.total_committed() if options.max_total_cost is not None else 0.0
        self.budget = Budget(options.max_cost, options.max_total_cost, prior)
        self.t = _Tally()
        self.sends: dict[str, int] = {}
        self.exhausted: set[str] = set()
        self.reserved: dict[str, float] = {}  # chunk -> amount reserved by this command
        self.stopped_by_budget = False
        self.aborted = ""
        self.started = time.monotonic()
        self.no_batch_price = sorted(
            {s.key.model for s in specs if self.prices[s.key.model].batch() is None}
        )

    # -- planning -------------------------------------------------------------------------

    def _pending(self) -> list[CallSpec]:
        """Planned calls neither stored as done nor in an open chunk, nor used up."""
        datasets = {s.key.dataset for s in self.by_id.values()}
        done: set[int] = set()
        for ds in datasets:
            done |= self.store.completed_digests(ds, include_failed=not self.options.retry_failed)
            done |= self.store.batched_digests(ds)
        return [
            s
            for cid, s in self.by_id.items()
            if key_digest(s.key) not in done and cid not in self.exhausted
        ]

    def _history(self, specs: Sequence[CallSpec]) -> dict[str, int]:
        return reask_history(self.store, specs, self.custom_id)

    # -- submitting ------------------------------------------------------------------------

    def submit(self, specs: Sequence[CallSpec]) -> None:
        """Send ``specs`` as new chunks (one dataset and model each), built in plan order."""
        history = self._history(specs)
        seeds = {
            self.custom_id(s.key): reask_seed(s.seed, history.get(self.custom_id(s.key), 0))
            for s in specs
        }
        prices = {m: batch_price(p) for m, p in self.prices.items()}
        lines = build_lines(specs, prices, seeds)
        for (dataset, model), part in chunks(lines, self.batch.max_lines, self.batch.max_bytes):
            if self.stopped_by_budget:
                return
            part = self._afford(part)
            if not part:
                return
            self._send_chunk(dataset, model, part)
            if self.aborted:
                return
            if self.batch.wait:
                # collect the chunks that ended while this one was uploaded: ingesting
                # overlaps the endpoint's work on the rest instead of following all of it
                self._poll_open()
                if self.aborted:
                    return

    def _afford(self, part: list[Line]) -> list[Line]:
        """The longest head of ``part`` whose bound fits the budget (reserved)."""
        total = sum(line.bound for line in part)
        if self.budget.fits(total):
            self.budget.try_reserve(total)
            return part
        kept: list[Line] = []
        held = 0.0
        for line in part:
            if not self.budget.fits(held + line.bound):
                break
            kept.append(line)
            held += line.bound
        self.stopped_by_budget = True
        if kept:
            self.budget.try_reserve(held)
        return kept

    def _send_chunk(self, dataset: str, model: str, part: list[Line]) -> None:
        data = b"".join(line.data for line in part)
        chunk = self.book.plan_chunk(
            mode="provider",
            run=self.run,
            dataset=dataset,
            model=model,
            lines=[(ln.custom_id, ln.spec.key, ln.seed, ln.bound) for ln in part],
            n_bytes=len(data),
        )
        self.reserved[chunk] = sum(line.bound for line in part)
        for line in part:
            self.sends[line.custom_id] = self.sends.get(line.custom_id, 0) + 1
        self.t.sent += len(part)
        self._upload_and_create(self.book.get(chunk), data)

    def _metadata(self, chunk: Chunk) -> dict[str, str]:
        return {
            "judgepanel_store": self.store_id,
            "judgepanel_chunk": chunk.chunk,
            "judgepanel_run": chunk.run[:512],
        }

    def _upload_and_create(self, chunk: Chunk, data: bytes | None) -> None:
        """Upload the chunk's file (unless it is uploaded) and create its batch."""
        import openai

        file_id = chunk.file_id
        if file_id is None:
            if data is None:
                data = self._rebuild(chunk)
            made = self.client.files.create(
                file=(f"judgepanel-{chunk.chunk}.jsonl", data, "application/jsonl"),
                purpose="batch",
            )
            crash_point("uploaded")
            self.book.uploaded(chunk.chunk, made.id)
            file_id = made.id
        try:
            batch = self.client.batches.create(
                input_file_id=file_id,
                endpoint=ENDPOINT,
                completion_window=self.batch.completion_window,  # type: ignore[arg-type]
                metadata=self._metadata(chunk),
            )
        except openai.NotFoundError:
            # the uploaded file is gone (deleted, or expired): upload it again
            self.book.replanned(chunk.chunk)
            self._upload_and_create(self.book.get(chunk.chunk), None)
            return
        crash_point("created")
        self.book.submitted(chunk.chunk, batch.id, batch.status)

    def _rebuild(self, chunk: Chunk) -> bytes:
        """A planned chunk's file, built again from the plan (same lines, same seeds)."""
        out = []
        for rec in self.book.lines(chunk.chunk):
            spec = self._spec(rec.custom_id, chunk)
            out.append(encode_line(rec.custom_id, request_body(spec, spec.build(), rec.seed)))
        return b"".join(out)

    def _spec(self, cid: str, chunk: Chunk) -> CallSpec:
        spec = self.by_id.get(cid)
        if spec is None:
            raise ClientError(
                f"batch chunk {chunk.chunk} (run {chunk.run!r}) holds the call {cid}, which "
                "this plan does not make; resume it with the run that submitted it"
            )
        return spec

    # -- resuming --------------------------------------------------------------------------

    def resume(self) -> None:
        """Pick up the chunks an earlier command left open for this plan's datasets."""
        datasets = {s.key.dataset for s in self.by_id.values()}
        for chunk in self.book.chunks(datasets=datasets, mode="provider"):
            self.t.resumed += 1
            for rec in self.book.lines(chunk.chunk):
                self._spec(rec.custom_id, chunk)  # every line must belong to this plan
            if chunk.state == "submitted":
                continue
            if chunk.state == "uploaded":
                found = self._find(chunk)
                if found is not None:
                    self.book.submitted(chunk.chunk, found.id, found.status)
                    continue
            self._upload_and_create(chunk, None)

    def _find(self, chunk: Chunk) -> object | None:
        """The batch created for ``chunk`` whose id was never written, by its metadata."""
        oldest = chunk.created - 3600.0  # listings are newest first; allow for clock skew
        for batch in self.client.batches.list(limit=100):
            meta = batch.metadata or {}
            if (
                meta.get("judgepanel_chunk") == chunk.chunk
                and meta.get("judgepanel_store") == self.store_id
            ):
                return batch
            if batch.created_at < oldest:
                break
        return None

    # -- polling and ingesting -------------------------------------------------------------

    def wait(self) -> None:
        """Poll every open chunk of the plan until each is ingested or abandoned."""
        last_line = ""
        last_print = 0.0
        while True:
            polled = self._poll_open()
            if polled is None:
                return
            line, ended = polled
            now = time.monotonic()
            if self.options.progress and (line != last_line or now - last_print > 60):
                print(line, file=sys.stderr, flush=True)
                last_line, last_print = line, now
            if ended:
                continue  # all ingested: look again at once
            time.sleep(self.batch.poll_s)

    def _poll_open(self) -> tuple[str, bool] | None:
        """Poll each open chunk of the plan once and ingest those that ended: the progress
        line, and whether every polled chunk had ended (None when none is open)."""
        datasets = {s.key.dataset for s in self.by_id.values()}
        open_ = [
            c
            for c in self.book.chunks(datasets=datasets, mode="provider")
            if c.state == "submitted"
        ]
        if not open_:
            return None
        done = failed = total = 0
        states: dict[str, int] = {}
        for chunk in open_:
            batch = self.client.batches.retrieve(chunk.batch_id)  # type: ignore[arg-type]
            crash_point("polling")
            counts = batch.request_counts
            if counts is not None:
                done, failed, total = (
                    done + counts.completed,
                    failed + counts.failed,
                    total + counts.total,
                )
            states[batch.status] = states.get(batch.status, 0) + 1
            if batch.status != chunk.status:
                self.book.status(chunk.chunk, batch.status)
            if batch.status in TERMINAL:
                self._finish(chunk, batch)
        line = (
            f"{self.desc}: {len(open_)} batches "
            + ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
            + f"; {done}/{total} lines done, {failed} failed; "
            f"{time.monotonic() - self.started:.0f} s"
        )
        return line, all(s in TERMINAL for s in states)

    def _download(self, file_id: str | None) -> bytes:
        if not file_id:
            return b""
        return self.client.files.content(file_id).content

    def _finish(self, chunk: Chunk, batch: object) -> None:
        status = batch.status  # type: ignore[attr-defined]
        if status == "failed":
            errors = getattr(batch, "errors", None)
            data = getattr(errors, "data", None) or []
            first = data[0] if data else None
            why = (
                f"{first.code}: {first.message}" + (f" (line {first.line})" if first.line else "")
                if first is not None
                else "no reason given"
            )
            note = scrub(f"batch {batch.id} failed validation: {why}")  # type: ignore[attr-defined]
            self.book.abandon(chunk.chunk, status, note)
            self._settle(chunk, 0.0)
            for rec in self.book.lines(chunk.chunk):
                self.exhausted.add(rec.custom_id)
            if not self.aborted:
                self.aborted = note
            return
        output = self._download(batch.output_file_id)  # type: ignore[attr-defined]
        errors = self._download(batch.error_file_id)  # type: ignore[attr-defined]
        self.ingest(chunk, output, errors, status)
        self._drop_input(chunk)

    def _drop_input(self, chunk: Chunk) -> None:
        """Delete an ingested chunk's input file at the provider (it holds every image of
        the chunk, once per line); its output stays there, to be read again."""
        import openai

        if chunk.file_id:
            try:
                self.client.files.delete(chunk.file_id)
            except openai.OpenAIError as exc:  # a file kept is only storage
                log.info("could not delete batch input %s: %s", chunk.file_id, exc)

    def _settle(self, chunk: Chunk, actual: float) -> None:
        amount = self.reserved.pop(chunk.chunk, None)
        if amount is not None:
            self.budget.settle(amount, actual)
        else:  # reserved by an earlier command: its bound leaves the store's total
            self.budget.prior += actual - chunk.bound

    def ingest(self, chunk: Chunk, output: bytes, errors: bytes, status: str) -> None:
        """Write a finished chunk's results in one transaction (see ``Store.record_batch``)."""
        specs = {
            rec.custom_id: self._spec(rec.custom_id, chunk) for rec in self.book.lines(chunk.chunk)
        }
        got = ingest_chunk(
            self.store,
            chunk,
            [
                (output, f"batch {chunk.batch_id} output file"),
                (errors, f"batch {chunk.batch_id} error file"),
            ],
            specs,
            self.prices,
            max_reasks=self.options.max_reasks,
            status=status,
        )
        for note in got.notes[:5]:
            log.warning("%s", note)
            self.t.notes.append(note)
        self.t.add(got)
        self._settle(chunk, got.spend)
        if got.unanswered:
            self.t.notes.append(
                f"{got.unanswered} calls of batch {chunk.batch_id} were not run ({status}); "
                "they are planned again"
            )

    # -- the whole command -----------------------------------------------------------------

    def execute(self, plan_size: int, skipped: int) -> RunSummary:
        self.resume()
        rounds = 0
        while not self.aborted:
            todo = [
                s
                for s in self._pending()
                if self.sends.get(self.custom_id(s.key), 0) < self.options.max_attempts
            ]
            if rounds and todo:
                self.t.retries += len(todo)
            if todo and not self.stopped_by_budget:
                self.submit(todo)
            rounds += 1
            if not self.batch.wait:
                break
            self.wait()
            again = [
                s
                for s in self._pending()
                if self.sends.get(self.custom_id(s.key), 0) < self.options.max_attempts
            ]
            if not again or self.stopped_by_budget:
                break
        if self.no_batch_price:
            self.t.notes.append(
                "no batch price for " + ", ".join(self.no_batch_price) + ": charged at the "
                "online price (add batch_discount under `prices:`)"
            )
        if self.options.samples_per_request > 1:
            self.t.notes.append(
                "batch lines draw one sample each: samples_per_request applies online only"
            )
        if self.t.resumed:
            self.t.notes.append(f"{self.t.resumed} batches of an earlier command picked up")
        # only this plan's: other runs may be sending batches of other datasets meanwhile
        datasets = {s.key.dataset for s in self.by_id.values()}
        open_now = sum(len(self.store.batched_digests(ds)) for ds in datasets)
        if open_now:
            self.t.notes.append(
                f"{open_now} calls are in batches still running; run the same command "
                "again to collect them"
            )
        left = len(self._pending())
        return RunSummary(
            planned=plan_size,
            skipped=skipped,
            sent=self.t.sent,
            ok=self.t.ok,
            failed=self.t.failed,
            retries=self.t.retries,
            spend=self.t.spend,
            stopped_by_budget=self.stopped_by_budget,
            elapsed=time.monotonic() - self.started,
            reasks=self.t.reasks,
            aborted=self.aborted,
            unsent=left,
            retryable=self.t.retryable,
            requests=self.t.sent,
            notes=tuple(self.t.notes),
        )


def run_batches(
    specs: Sequence[CallSpec],
    store: Store,
    *,
    prices: Mapping[str, Price],
    options: ClientOptions | None = None,
    batch: BatchOptions | None = None,
    run: str = "",
    desc: str = "scoring",
) -> RunSummary:
    """Send every planned call not yet in ``store`` through the batch API, and ingest it.

    The batch counterpart of :func:`judgepanel.core.client.run_calls`: the same plan, the
    same store keys and ceilings, the same summary. ``run`` names the run in each batch's
    metadata.

    Raises:
        ClientError: no API key, no price for a planned model, duplicate keys, or an open
            chunk of another plan.
    """
    options = options or ClientOptions()
    batch = batch or BatchOptions.of(options)
    plan = _unique_plan(specs)
    missing = sorted({s.key.model for s in plan} - set(prices))
    if missing:
        raise ClientError(
            f"no price for model(s) {', '.join(missing)}; add them under `prices:` in "
            "papermill_runs.yaml so that spend can be recorded and the budget enforced"
        )
    datasets = {s.key.dataset for s in plan}
    with store.sending(datasets):
        store.recover_interrupted(datasets)
        done: set[int] = set()
        for ds in datasets:
            done |= store.completed_digests(ds, include_failed=not options.retry_failed)
        skipped = sum(key_digest(s.key) in done for s in plan)
        runner = BatchRun(plan, store, prices, options, batch, run, desc)
        try:
            return runner.execute(len(plan), skipped)
        finally:
            runner.client.close()
