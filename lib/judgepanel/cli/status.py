"""``judgepanel status``: what a store holds: counts by dataset, family, kind and status,
failures, spend, open batches, and tokens and cost per model, as estimated and as the
provider reported it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from judgepanel.cli.common import SubParsers, fail
from judgepanel.cli.exit_codes import OK

if TYPE_CHECKING:
    from judgepanel.core.store import ModelCost, StoreSummary


def add_parser(sub: SubParsers) -> None:
    """``status`` and its flags."""
    status = sub.add_parser("status", help="what a store holds: counts, failures, spend")
    status.add_argument("--store", type=Path, required=True)
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(handler=status_command)


def _tokens(n: int | None) -> str:
    return "unknown" if n is None else f"{n:,}"


def _reported(m: ModelCost) -> str:
    """A model's reported cost, and on how many of its billed calls when not all."""
    if m.cost_reported is None:
        return "not reported"
    text = f"${m.cost_reported:.4f}"
    if m.reported_calls < m.billed_calls:
        text += f" ({m.reported_calls} of {m.billed_calls} billed calls)"
    return text


def _cost_lines(info: StoreSummary) -> list[str]:
    """Per model: calls, tokens, cost as estimated and as reported; mixed samples per request."""
    if not info.models:
        return []
    import pandas as pd

    from judgepanel.core.coverage import describe_mix

    table = pd.DataFrame(
        [
            {
                "model": m.model,
                "calls": m.calls,
                "input tokens": _tokens(m.input_tokens),
                "cached tokens": _tokens(m.cached_tokens),
                "output tokens": _tokens(m.output_tokens),
                "cost estimated": f"${m.cost_estimated:.4f}",
                "cost reported": _reported(m),
            }
            for m in info.models
        ]
    )
    lines = ["", "cost per model", table.to_string(index=False)]
    for m in info.models:
        if len(m.samples_per_request) > 1:
            lines.append(f"{m.model} holds {describe_mix(m.samples_per_request)}")
    return lines


def _head_lines(info: StoreSummary) -> list[str]:
    """The store, its calls and what they cost; what may have been billed unanswered."""
    lines = [
        f"store   {info.store}  (schema {info.schema_version}, {info.journal_mode})",
        f"calls   {info.calls}  ok {info.ok}  failed {info.failed} "
        f"(retryable {info.retryable}, final {info.final})  attempts {info.attempts}",
        f"spend   ${info.spend:.4f} over {info.billed_answers} billed answers",
    ]
    if info.cost_reported is not None:
        lines.append(
            f"reported by the provider ${info.cost_reported:.4f} on "
            f"{info.reported_calls} of {info.billed_calls} billed calls"
        )
    if info.unanswered_calls:
        lines.append(
            f"possibly billed, unanswered: {info.unanswered_calls} calls sent whose answer "
            f"never arrived (in flight at an interruption), up to "
            f"${info.unanswered_bound:.4f}"
        )
    return lines


def _batch_lines(info: StoreSummary, batches: list[dict[str, object]]) -> list[str]:
    """The open batches and what they reserve, one line each."""
    if not info.batched_calls:
        return []
    lines = [
        f"in batches: {info.batched_calls} calls in {len(batches)} open batches, "
        f"reserved up to ${info.batched_bound:.4f} (collect them: score --batch)"
    ]
    for b in batches:
        lines.append(
            f"  {b['chunk']}  {b['state']:<9} {b['status'] or '-':<11} {b['calls']:>6} calls "
            f"{b['model']}  run {b['run']}  {b['batch_id'] or ''}"
        )
    return lines


def _count_lines(info: StoreSummary) -> list[str]:
    """Calls by dataset, family and kind, one column per status."""
    if not info.counts:
        return []
    import pandas as pd

    table = pd.DataFrame(list(info.counts))  # one column per field
    wide = (
        table.pivot_table(
            index=["dataset", "family", "kind"],
            columns="status",
            values="n",
            aggfunc="sum",
            fill_value=0,
        )
        .reset_index()
        .rename_axis(None, axis=1)
    )
    return ["", wide.to_string(index=False)]


def _failure_lines(info: StoreSummary) -> list[str]:
    """Failures by reason, then the rubric hashes the calls were made under."""
    lines = []
    if info.failures:
        lines.append("\nfailures by reason")
        lines += [f"  {f.n:>7}  {f.failure:<9}  {f.reason}" for f in info.failures]
    if info.rubrics:
        lines.append("\nrubric hashes")
        lines += [f"  {r.n:>7}  {r.rubric_sha or '(none)'}" for r in info.rubrics]
    return lines


def status_command(args: argparse.Namespace) -> int:
    """``judgepanel status``: counts by dataset, family, kind and status; failures; spend;
    tokens and cost per model, as estimated and as the provider reported it."""
    from judgepanel.core.batch import BatchBook
    from judgepanel.core.store import Store, StoreError

    try:
        store = Store(args.store, readonly=True)
    except (FileNotFoundError, StoreError) as exc:
        return fail(exc)
    with store:
        info = store.summary()
        batches = BatchBook(store).summary()
    if args.json:
        print(json.dumps({**info.as_dict(), "batches": batches}, indent=2))
        return OK
    lines = [*_head_lines(info), *_batch_lines(info, batches)]
    if info.first:
        lines.append(f"written {info.first} .. {info.last}")
    lines += [*_count_lines(info), *_cost_lines(info), *_failure_lines(info)]
    for line in lines:
        print(line)
    return OK
