"""Sending a batch command's calls: new chunks built, afforded, uploaded and created, and
the chunks an earlier command left open picked up (found by their metadata if need be).

Every write comes before the step it records can be lost (see
:mod:`judgepanel.core.batch.records`): a chunk is planned before its upload, its file id
written as the upload returns, its batch id as ``batches.create`` returns.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgepanel.core.batch.ingest import batch_price
from judgepanel.core.batch.lines import Line, build_lines, chunks
from judgepanel.core.batch.records import Chunk
from judgepanel.core.batch.state import RunState
from judgepanel.core.calls import CallSpec
from judgepanel.core.client.answers import reask_seed


class Submitting(RunState):
    """Submitting and resuming the chunks of one batch command."""

    def submit(self, specs: Sequence[CallSpec]) -> None:
        """Send ``specs`` as new chunks (one dataset and model each), built in plan order."""
        history = self._history(specs)
        seeds = {
            self.custom_id(s.key): reask_seed(s.seed, history.get(self.custom_id(s.key), 0))
            for s in specs
        }
        prices = {m: batch_price(p) for m, p in self.prices.items()}
        lines = build_lines(specs, prices, seeds, self.provider)
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
        self.changed()
        self.sent_as((line.custom_id, line.spec) for line in part)
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
            self.batch.at("uploaded")
            self.book.uploaded(chunk.chunk, made.id)
            file_id = made.id
        try:
            batch = self.client.batches.create(
                input_file_id=file_id,
                endpoint=self.provider.batch_endpoint,  # type: ignore[arg-type]
                completion_window=self.batch.completion_window,  # type: ignore[arg-type]
                metadata=self._metadata(chunk),
            )
        except openai.NotFoundError:
            # the uploaded file is gone (deleted, or expired): upload it again
            self.book.replanned(chunk.chunk)
            self._upload_and_create(self.book.get(chunk.chunk), None)
            return
        self.batch.at("created")
        self.book.submitted(chunk.chunk, batch.id, batch.status)

    def _rebuild(self, chunk: Chunk) -> bytes:
        """A planned chunk's file, built again from the plan (same lines, same seeds)."""
        out = []
        for rec in self.book.lines(chunk.chunk):
            spec = self._spec(rec.custom_id, chunk)
            body = self.provider.request_body(spec, spec.build(), rec.seed)
            out.append(self.provider.batch_line(rec.custom_id, body))
        return b"".join(out)

    def resume(self) -> None:
        """Pick up the chunks an earlier command left open for this plan's datasets."""
        for chunk in self.book.chunks(datasets=self.datasets, mode="provider"):
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
