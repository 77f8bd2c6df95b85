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

The command's state is :mod:`.state`; :mod:`.submit` sends and resumes chunks, and
:mod:`.polling` waits on them and ingests them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from judgepanel.core.batch.options import BatchOptions
from judgepanel.core.batch.polling import Polling
from judgepanel.core.batch.submit import Submitting
from judgepanel.core.calls import CallSpec
from judgepanel.core.client.entry import _unique_plan
from judgepanel.core.client.outcome import ClientError, RunSummary
from judgepanel.core.config import Price
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store

__all__ = ["BatchOptions", "BatchRun", "run_batches"]


class BatchRun(Submitting, Polling):
    """One batch command: rounds of submitting, waiting and ingesting, then its summary."""

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
        open_now = len(self.store.batched_digests(self.datasets))
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
        # one read of what the store holds: the count of calls stored, then the runner's
        done = store.completed_digests(datasets, include_failed=not options.retry_failed)
        skipped = sum(s.key.digest in done for s in plan)
        done |= store.batched_digests(datasets)
        runner = BatchRun(plan, store, prices, options, batch, run, desc, done)
        try:
            return runner.execute(len(plan), skipped)
        finally:
            runner.client.close()
