"""How calls are sent: the one options object of the client, and a model's rate limits.

Every setting of :func:`~judgepanel.core.client.run_calls` lives here, with its default
written once; the command line, the report and the notebooks fill it in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from judgepanel.core.config import ConfigError
from judgepanel.core.retry import MAX_FAILURE_SHARE, RetryPolicy

DEFAULT_CONCURRENCY = 16
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_ATTEMPTS = 6
DEFAULT_MAX_REASKS = 2


@dataclass(frozen=True)
class RateLimits:
    """A model's provider limits: requests and tokens per minute (``None``: not known).

    A provider counts tokens as the prompt plus ``max_tokens`` of every choice asked for.
    """

    rpm: float | None = None
    tpm: float | None = None

    def __post_init__(self) -> None:
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigError(f"--{name} {value}: expected a positive number per minute")

    def scaled(self, share: float) -> RateLimits:
        """These limits times ``share`` (a process's part of limits it shares with others)."""
        return RateLimits(
            None if self.rpm is None else self.rpm * share,
            None if self.tpm is None else self.tpm * share,
        )

    def __bool__(self) -> bool:
        return self.rpm is not None or self.tpm is not None


@dataclass(frozen=True)
class ClientOptions:
    """Everything that says how one scoring command sends its calls.

    Attributes:
        base_url: the endpoint (default ``$OPENAI_BASE_URL``, else the SDK's default).
        concurrency: the most requests in flight (adaptive pacing may hold fewer).
        timeout: seconds per attempt.
        max_attempts: HTTP attempts per call, re-asks included.
        max_reasks: new attempts after an unreadable answer.
        retry_failed: also send calls whose failure is final again.
        max_failure_share: stop once more than this share of the run's calls failed.
        progress: show a progress line on stderr.
        max_cost: USD ceiling of this command (``None``: none).
        max_total_cost: USD ceiling over everything the store recorded, across resumes.
        rpm, tpm: each model's limits, requests and tokens per minute (``None``: unknown).
        limits: per model id, limits that replace ``rpm`` and ``tpm`` for that model.
        limit_share: this process's part of every limit, when processes share one key
            (the report's scoring lanes each pace at ``1 / lanes`` of it).
        adaptive: follow the endpoint: adopt a limit its headers announce, wait when they
            say it runs low, halve a model's concurrency on a 429 and win it back slowly
            (covers limits nobody configured). A 429 pauses its model's lane either way.
        samples_per_request: repetitions of one prompt drawn per request, with ``n``.
        policy: back-off settings (default: ``RetryPolicy(max_attempts)``).
    """

    base_url: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    max_reasks: int = DEFAULT_MAX_REASKS
    retry_failed: bool = False
    max_failure_share: float = MAX_FAILURE_SHARE
    progress: bool = True
    max_cost: float | None = None
    max_total_cost: float | None = None
    rpm: float | None = None
    tpm: float | None = None
    limits: Mapping[str, RateLimits] = field(default_factory=dict)
    limit_share: float = 1.0
    adaptive: bool = True
    samples_per_request: int = 1
    policy: RetryPolicy | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_failure_share <= 1.0:
            raise ConfigError(
                f"--max-failure-share {self.max_failure_share}: expected a share in [0, 1]"
            )
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency {self.concurrency}: expected at least 1")
        if not 0.0 < self.limit_share <= 1.0:
            raise ConfigError(f"limit share {self.limit_share}: expected a share in (0, 1]")
        if self.samples_per_request < 1:
            raise ConfigError(
                f"--samples-per-request {self.samples_per_request}: expected at least 1"
            )
        RateLimits(self.rpm, self.tpm)  # validates both

    def limits_for(self, model: str) -> RateLimits:
        """The limits this process paces ``model`` to (its share of the provider's)."""
        limits = self.limits.get(model, RateLimits(self.rpm, self.tpm))
        return limits.scaled(self.limit_share)

    def retry_policy(self) -> RetryPolicy:
        """The back-off settings, ``policy`` or the default with ``max_attempts``."""
        policy = self.policy or RetryPolicy(max_attempts=self.max_attempts)
        if policy.max_attempts < 1:
            raise ConfigError("max_attempts must be at least 1")
        return policy
