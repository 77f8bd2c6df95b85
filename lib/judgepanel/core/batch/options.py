"""How a batch command submits and waits (:class:`BatchOptions`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from judgepanel.core.batch.ingest import FaultHook
from judgepanel.core.batch.lines import MAX_BYTES, MAX_LINES
from judgepanel.core.errors import ConfigError
from judgepanel.core.sendconfig import ClientOptions


@dataclass(frozen=True)
class BatchOptions:
    """How a batch run submits and waits.

    Attributes:
        poll_s: seconds between two polls of the open batches.
        wait: poll until every batch is done (``False``: submit, then return; the same
            command run again collects them).
        max_lines, max_bytes: the most one batch file may hold.
        completion_window: the provider's window (OpenAI offers ``24h`` only).
        fault: called at each step a crash test may stop the run at (see
            :data:`judgepanel.core.batch.ingest.FaultHook`); ``None`` outside tests.
    """

    poll_s: float = ClientOptions.batch_poll  # the declared default
    wait: bool = True
    max_lines: int = MAX_LINES
    max_bytes: int = MAX_BYTES
    completion_window: str = "24h"
    fault: FaultHook | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.poll_s > 0:
            raise ConfigError(f"--batch-poll {self.poll_s}: expected a positive number")
        if not 1 <= self.max_lines <= MAX_LINES:
            raise ConfigError(f"batch lines {self.max_lines}: expected 1 to {MAX_LINES}")
        if not 1 <= self.max_bytes <= MAX_BYTES:
            raise ConfigError(f"batch bytes {self.max_bytes}: expected 1 to {MAX_BYTES}")

    def at(self, step: str) -> None:
        """Call the fault hook, if any, at ``step``."""
        if self.fault is not None:
            self.fault(step)

    @classmethod
    def of(cls, options: ClientOptions) -> BatchOptions:
        """How the send configuration ``options`` polls and waits."""
        return cls(poll_s=options.batch_poll, wait=options.wait)
