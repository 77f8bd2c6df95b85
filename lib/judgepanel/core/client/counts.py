"""What a run's calls came to so far: one counter for online sends and batch ingests.

The online runner, each batch chunk's ingest, a batch command's rounds and an offline
import all count into a :class:`CallCounts`, so every way of sending counts a recorded
outcome alike (:meth:`CallCounts.record`) and a :class:`RunSummary` reads the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from judgepanel.core.store import CallResult


@dataclass
class CallCounts:
    """Counts of one run, one chunk or one import, mutated as calls end.

    Attributes:
        sent: calls launched (online) or written to batch files.
        ok: calls recorded with a readable answer.
        failed: calls recorded as failed.
        retryable: of ``failed``, those a plain resume sends again.
        retries: attempts beyond each call's first (online: HTTP retries and re-asks;
            batches: calls sent again in a later round).
        reasks: re-asks (online: each as it is made; batches: those of failed calls).
        refused: requests the endpoint answered 429.
        requests: HTTP requests sent.
        unanswered: batch lines that came back without an answer.
        resumed: batch chunks of an earlier command picked up.
        spend: USD recorded.
        note: the latest retry, shown on the progress line.
        notes: what the run says once.
    """

    sent: int = 0
    ok: int = 0
    failed: int = 0
    retryable: int = 0
    retries: int = 0
    reasks: int = 0
    refused: int = 0
    requests: int = 0
    unanswered: int = 0
    resumed: int = 0
    spend: float = 0.0
    note: str = ""
    notes: list[str] = field(default_factory=list)

    def record(self, result: CallResult) -> None:
        """Count one recorded outcome: ok or failed (retryable or not), and its cost."""
        if result.status == "ok":
            self.ok += 1
        else:
            self.failed += 1
            self.retryable += result.failure == "retryable"
        self.spend += result.cost

    def add(self, other: CallCounts) -> None:
        """Add what ``other`` recorded (a chunk's ingest into its command's counts)."""
        self.ok += other.ok
        self.failed += other.failed
        self.retryable += other.retryable
        self.reasks += other.reasks
        self.unanswered += other.unanswered
        self.spend += other.spend
