"""Where calls go: an endpoint's base URL, the name of the variable holding its key, its kind.

An :class:`Endpoint` is handed to the client (in
:class:`~judgepanel.core.sendconfig.ClientOptions`) instead of being read from
``OPENAI_BASE_URL`` deep inside it, so a library call that starts a server never has to
change the process's environment for its clients to find it. The key itself is no part of
an endpoint: only the name of the environment variable it is read from when a client opens,
so an endpoint can be printed, logged or handed to a notebook as a parameter. A simulated
judge server accepts any bearer token; its endpoint names no variable and the client sends
it a fixed placeholder, so a real key in the environment never reaches it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

API_KEY_ENV = "OPENAI_API_KEY"
"""Where the key of an endpoint given by ``--base-url`` or ``OPENAI_BASE_URL`` is read."""
BASE_URL_ENV = "OPENAI_BASE_URL"
"""Where a client given no endpoint reads its base URL (never written by this package)."""
SIMULATOR = "simulator"
"""The provider of the project's simulated judge servers."""
SIMULATOR_TOKEN = "sim-local"
"""What a client sends a simulated server as its key: no secret, it accepts any token."""


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint.

    Attributes:
        base_url: its base URL (``None``: the SDK's default).
        key_env: the environment variable its key is read from (``None``: a simulated
            server, which needs none).
        provider: what serves it, and so the wire format and costing its calls go through
            (:func:`judgepanel.core.providers.provider` selects the implementation by this
            name): ``openai`` for any OpenAI-compatible endpoint, ``simulator`` for a
            simulated server (which speaks the same protocol), or a registered one.
    """

    base_url: str | None = None
    key_env: str | None = API_KEY_ENV
    provider: str = "openai"

    def __post_init__(self) -> None:
        if self.key_env is None and self.provider != SIMULATOR:
            raise ValueError(f"an endpoint of provider {self.provider!r} needs key_env")

    @classmethod
    def from_environment(cls) -> Endpoint:
        """The endpoint of ``OPENAI_BASE_URL`` (read, never written), keyed by
        ``OPENAI_API_KEY``: what a client uses when it is given no endpoint."""
        return cls(os.environ.get(BASE_URL_ENV) or None)

    @classmethod
    def at(cls, base_url: str) -> Endpoint:
        """The endpoint at ``base_url``, keyed by ``OPENAI_API_KEY`` (``--base-url``)."""
        return cls(base_url)

    @classmethod
    def simulator(cls, base_url: str) -> Endpoint:
        """A simulated judge server at ``base_url``."""
        return cls(base_url, key_env=None, provider=SIMULATOR)

    @classmethod
    def of(cls, value: Endpoint | Mapping[str, Any] | str | None) -> Endpoint | None:
        """An endpoint from what a notebook parameter holds: an endpoint, its
        :meth:`as_parameter` mapping, a base URL, or ``None`` (none given)."""
        if value is None or isinstance(value, Endpoint):
            return value
        if isinstance(value, str):
            return cls.at(value)
        return cls(**dict(value))

    def as_parameter(self) -> dict[str, Any]:
        """The endpoint as a plain mapping (a papermill parameter): no key in it."""
        return asdict(self)

    def shown(self) -> str:
        """The endpoint in a line of text: its URL and where its key comes from."""
        where = self.base_url or "(SDK default)"
        key = "no key" if self.key_env is None else f"key from {self.key_env}"
        return f"{where} ({self.provider}, {key})"
