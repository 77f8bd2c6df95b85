"""The offline round trip: batch files for ``vllm run-batch`` and its output back in.

``export`` writes the lines of every call a run still needs, in the input format ``vllm
run-batch`` reads (OpenAI's), and records them in the store as ``exported`` chunks (one
per dataset and model), so that their answers can be matched by ``custom_id`` and nothing
else sends them meanwhile. ``import`` reads the output file, matches each line to an
exported call, re-plans the runs that exported them, and ingests them as a provider's
batch is ingested. A line that matches no exported call stops the import before anything
is written, naming the file and the line. Both files are in OpenAI's format, so the
OpenAI-compatible provider writes and reads them whatever server runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgepanel.core.batch.ingest import batch_price, ingest_chunk, reask_history
from judgepanel.core.batch.lines import build_lines, custom_id
from judgepanel.core.batch.records import BatchBook
from judgepanel.core.batch.results import ResultFileError, read_result_lines
from judgepanel.core.calls import CallSpec
from judgepanel.core.client.answers import reask_seed
from judgepanel.core.client.counts import CallCounts
from judgepanel.core.client.entry import pending_calls
from judgepanel.core.config import Price
from judgepanel.core.providers import OPENAI
from judgepanel.core.store import Store
from judgepanel.errors import JudgepanelError


@dataclass(frozen=True)
class Exported:
    """What an export wrote: lines, chunks (dataset and model each), calls already stored."""

    lines: int
    chunks: int
    skipped: int
    models: tuple[str, ...]


def export_lines(
    specs: Sequence[CallSpec],
    store: Store,
    prices: Mapping[str, Price],
    out: Path,
    *,
    run: str,
    retry_failed: bool = False,
) -> Exported:
    """Write the lines of ``specs`` the store still needs to ``out`` (JSONL), and record them."""
    book = BatchBook(store)
    datasets = {s.key.dataset for s in specs}
    with store.sending(datasets):
        todo, skipped = pending_calls(specs, store, retry_failed=retry_failed)
        history = reask_history(store, todo, custom_id)
        seeds = {
            custom_id(s.key): reask_seed(s.seed, history.get(custom_id(s.key), 0)) for s in todo
        }
        lines = build_lines(todo, {m: batch_price(p) for m, p in prices.items()}, seeds, OPENAI)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.part")
        n_lines = 0
        written: dict[tuple[str, str], tuple[list, int]] = {}
        with tmp.open("wb") as fh:
            for line in lines:  # one file for every model, in plan order
                fh.write(line.data)
                group = (line.spec.key.dataset, line.spec.key.model)
                records, size = written.get(group, ([], 0))
                records.append((line.custom_id, line.spec.key, line.seed, line.bound))
                written[group] = (records, size + len(line.data))
                n_lines += 1
        tmp.replace(out)
        for (dataset, model), (records, size) in written.items():
            book.plan_chunk(
                mode="offline",
                run=run,
                dataset=dataset,
                model=model,
                lines=records,
                n_bytes=size,
            )
    return Exported(n_lines, len(written), skipped, tuple(sorted({m for _, m in written})))


@dataclass(frozen=True)
class Imported:
    """What an import wrote."""

    ok: int
    failed: int
    retryable: int
    unanswered: int
    spend: float
    chunks: int
    notes: tuple[str, ...]


class OfflineImportError(JudgepanelError, ValueError):
    """An output file that cannot be imported; the message names its lines."""


def import_lines(
    path: Path,
    store: Store,
    plan_run: Callable[[str], tuple[Sequence[CallSpec], Mapping[str, Price]]],
    *,
    max_reasks: int = 2,
) -> Imported:
    """Ingest ``vllm run-batch``'s output file ``path`` into ``store``.

    ``plan_run(run)`` returns the plan and prices of a run that exported chunks.

    Raises:
        OfflineImportError: a line that is not a result, or names no exported call (or one
            imported already), listing up to ten of them; nothing is written then.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise OfflineImportError(f"{path}: cannot read the output file ({exc.strerror})") from None
    try:
        lines = list(read_result_lines(data, str(path), OPENAI))
    except ResultFileError as exc:
        raise OfflineImportError(str(exc)) from None
    book = BatchBook(store)
    found = book.find_lines(line.custom_id for line in lines)
    states = {c.chunk: c for c in book.chunks(open_only=False, mode="offline")}
    problems = []
    for line in lines:
        hit = found.get(line.custom_id)
        if hit is None or hit[0] not in states:
            problems.append(f"{line.where}: {line.custom_id} is no call exported from this store")
        elif states[hit[0]].state != "exported":
            problems.append(f"{line.where}: {line.custom_id} was imported already")
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise OfflineImportError("; ".join(problems[:10]) + more + "; nothing was imported")
    chunks = sorted({found[line.custom_id][0] for line in lines})
    datasets = {states[c].dataset for c in chunks}
    plans: dict[str, tuple[dict[str, CallSpec], Mapping[str, Price]]] = {}
    total = CallCounts()
    with store.sending(datasets):
        for chunk_id in chunks:
            chunk = states[chunk_id]
            if chunk.run not in plans:
                specs, prices = plan_run(chunk.run)
                plans[chunk.run] = ({custom_id(s.key): s for s in specs}, prices)
            by_id, prices = plans[chunk.run]
            missing = [r.custom_id for r in book.lines(chunk_id) if r.custom_id not in by_id]
            if missing:
                raise OfflineImportError(
                    f"run {chunk.run!r} no longer plans {len(missing)} exported calls "
                    f"(for example {missing[0]}); was its design changed?"
                )
            got = ingest_chunk(
                store,
                chunk,
                [(data, str(path))],
                by_id,
                prices,
                OPENAI,
                max_reasks=max_reasks,
                status="imported",
            )
            total.add(got)
            total.notes.extend(n for n in got.notes if "is not a call of this batch" not in n)
    t = total
    notes = tuple(t.notes[:10])
    return Imported(t.ok, t.failed, t.retryable, t.unanswered, t.spend, len(chunks), notes)
