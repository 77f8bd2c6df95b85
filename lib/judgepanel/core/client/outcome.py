"""What a run reports, and the two errors that stop the client."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from judgepanel.errors import JudgepanelError


class ClientError(JudgepanelError, RuntimeError):
    """The client cannot start (no key, no price for a model, a bad plan)."""


class RunAborted(RuntimeError):
    """A failure that every call of the run would meet (bad key, no permission)."""


@dataclass(frozen=True)
class RunSummary:
    """What one :func:`run_calls` did.

    Attributes:
        planned: distinct calls in the plan.
        skipped: calls already in the store, not sent.
        sent: calls launched (each may have made several attempts).
        ok: calls recorded with a readable answer.
        failed: calls recorded as failed, with a reason.
        retries: attempts beyond each call's first (HTTP retries and re-asks).
        reasks: the share of ``retries`` caused by unreadable answers.
        spend: USD recorded by this run.
        stopped_by_budget: the ceiling stopped the run before the plan was done.
        elapsed: wall-clock seconds.
        aborted: why the run stopped early (``""`` if it did not).
        unsent: planned calls neither skipped nor sent (budget or abort).
        retryable: failed calls a plain resume sends again.
        interrupted: calls found in flight from an earlier, interrupted run.
        interrupted_bound: the most those calls can have cost (USD, possibly billed).
        requests: HTTP requests sent (one per attempt; a request with ``n`` serves several
            calls).
        refused: requests the endpoint answered 429 (rate limited).
        notes: what the run says once about how it sent (a model that ignores ``n``).
    """

    planned: int
    skipped: int
    sent: int
    ok: int
    failed: int
    retries: int
    spend: float
    stopped_by_budget: bool
    elapsed: float
    reasks: int = 0
    aborted: str = ""
    unsent: int = 0
    retryable: int = 0
    interrupted: int = 0
    interrupted_bound: float = 0.0
    requests: int = 0
    refused: int = 0
    notes: tuple[str, ...] = ()

    def as_row(self) -> dict[str, object]:
        """The summary as one table row (its notes joined into one text)."""
        row = dataclasses.asdict(self)
        row["notes"] = "; ".join(self.notes)
        return row

    def line(self) -> str:
        """One human-readable line."""
        text = (
            f"planned {self.planned}, already stored {self.skipped}, sent {self.sent}: "
            f"ok {self.ok}, failed {self.failed}"
            + (f" ({self.retryable} retryable)" if self.retryable else "")
            + f", retries {self.retries} (re-asks {self.reasks}), spend ${self.spend:.4f}, "
            f"{self.elapsed:.1f} s"
        )
        if self.refused:
            text += f"; {self.refused} of {self.requests} requests refused (429)"
        for note in self.notes:
            text += f"; {note}"
        if self.interrupted:
            text += (
                f"; {self.interrupted} calls were in flight when an earlier run was "
                f"interrupted (possibly billed, unanswered: up to ${self.interrupted_bound:.4f})"
            )
        if self.stopped_by_budget:
            text += f"; STOPPED BY BUDGET with {self.unsent} calls unsent"
        if self.aborted:
            text += f"; STOPPED EARLY ({self.aborted}) with {self.unsent} calls unsent"
        return text
