"""What a provider is: the small interface the client and the batch path go through, and
the answer pieces (:class:`Choice`, :class:`Usage`, :class:`BatchResult`) it reads.

A provider owns everything that depends on the wire format: the request body, reading
choices and usage out of an answer, the batch file's lines (input and output) and what a
usage costs under a :class:`~judgepanel.core.config.Price`. The rest of the package (the
plan, the store, pacing, retries, budgets) is the same for every provider.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from judgepanel.core.calls import CallSpec
from judgepanel.core.config import Price


@dataclass(frozen=True)
class Choice:
    """One choice of an answer: its text and finish reason (``None`` if unreadable), and
    its ``logprobs`` object as sent (``None`` when there is none)."""

    answer: str | None
    finish: str | None
    logprobs: Any = None


@dataclass(frozen=True)
class Usage:
    """What a provider billed for one request (or a row's share of it).

    ``prompt`` includes ``cached``; ``reported_cost`` is the provider's own charge in USD
    (OpenRouter's ``usage.cost``), ``None`` when it sent none.
    """

    prompt: int
    completion: int
    cached: int = 0
    reported_cost: float | None = None

    def split(self, m: int) -> list[Usage]:
        """``m`` shares that add up to this usage exactly (integers spread evenly)."""
        if m <= 1:
            return [self]

        def spread(total: int) -> list[int]:
            q, r = divmod(total, m)
            return [q + (i < r) for i in range(m)]

        # spread alike, so no share's cached tokens exceed its prompt tokens
        prompt, completion, cached = (
            spread(self.prompt),
            spread(self.completion),
            spread(self.cached),
        )
        cost = None if self.reported_cost is None else self.reported_cost / m
        return [Usage(p, c, k, cost) for p, c, k in zip(prompt, completion, cached, strict=True)]


@dataclass(frozen=True)
class BatchResult:
    """One line of a batch output or error file, read.

    Attributes:
        custom_id: the call it answers.
        status: the HTTP status of its response (``None``: the provider never ran it).
        body: the response body (an answer, or an error), ``None`` when absent.
        error: the line's own error object, if any.
    """

    custom_id: str
    status: int | None
    body: Any
    error: Any = None

    @property
    def model(self) -> str | None:
        """The model the answer names, if it has one."""
        model = self.body.get("model") if isinstance(self.body, dict) else None
        return model if isinstance(model, str) else None


@runtime_checkable
class Provider(Protocol):
    """A provider's wire format and prices, as the client and the batch path use them.

    Attributes:
        name: what :class:`~judgepanel.core.endpoint.Endpoint` ``provider`` selects it by.
        chat_path: the path (under the base URL) one online request is posted to.
        batch_endpoint: the ``url`` of each batch line and the ``endpoint`` of a batch.
    """

    name: str
    chat_path: str
    batch_endpoint: str

    def request_body(
        self, spec: CallSpec, messages: list[dict[str, Any]], seed: int | None, n: int = 1
    ) -> bytes:
        """The encoded request of ``spec`` with ``messages``, asking for ``n`` choices."""
        ...

    def choices(self, resp: Any) -> list[Choice]:
        """The choices of a decoded answer, in order (an empty list if none)."""
        ...

    def usage(self, resp: Any) -> Usage | None:
        """What a decoded answer says was billed (``None``: it says nothing usable)."""
        ...

    def batch_line(self, custom_id: str, body: bytes) -> bytes:
        """One batch input line (newline included) carrying an encoded request body."""
        ...

    def batch_result(self, obj: Any) -> BatchResult | None:
        """One decoded batch output line (``None``: it names no call)."""
        ...

    def cost(self, usage: Usage, price: Price) -> float:
        """USD for ``usage`` at ``price``."""
        ...
