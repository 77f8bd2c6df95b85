"""Waiting on a batch command's chunks: each open batch polled, with a progress line, and
each one that ended ingested (its answers) or abandoned (failed validation)."""

from __future__ import annotations

import logging
import sys
import time

from judgepanel.core.batch.ingest import ingest_chunk
from judgepanel.core.batch.records import Chunk
from judgepanel.core.batch.state import RunState
from judgepanel.core.client.secrets import scrub

log = logging.getLogger("judgepanel.core.batch")

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


class Polling(RunState):
    """Polling and ingesting the chunks of one batch command."""

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
        open_ = [
            c
            for c in self.book.chunks(datasets=self.datasets, mode="provider")
            if c.state == "submitted"
        ]
        if not open_:
            return None
        done = failed = total = 0
        states: dict[str, int] = {}
        for chunk in open_:
            batch = self.client.batches.retrieve(chunk.batch_id)  # type: ignore[arg-type]
            self.batch.at("polling")
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
            self.changed()
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

    def ingest(self, chunk: Chunk, output: bytes, errors: bytes, status: str) -> None:
        """Write a finished chunk's results in one transaction (see ``Store.record_batch``)."""
        lines = self.book.lines(chunk.chunk)  # read once: matched here, then ingested
        specs = {rec.custom_id: self._spec(rec.custom_id, chunk) for rec in lines}
        self.changed()
        got = ingest_chunk(
            self.store,
            chunk,
            [
                (output, f"batch {chunk.batch_id} output file"),
                (errors, f"batch {chunk.batch_id} error file"),
            ],
            specs,
            self.prices,
            self.provider,
            max_reasks=self.options.max_reasks,
            status=status,
            fault=self.batch.fault,
            lines=lines,
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
