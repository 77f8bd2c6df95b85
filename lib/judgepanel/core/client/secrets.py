"""The API key: read from the environment only, and scrubbed from every text we keep.

The key is handed to the SDK and nowhere else; every text kept from a response or an
error passes through :func:`scrub` first, so an endpoint that echoes the key cannot put it
in the store, a log or a notebook.
"""

from __future__ import annotations

import os
import re
from typing import Any

from judgepanel.core.client.outcome import ClientError
from judgepanel.core.endpoint import API_KEY_ENV, SIMULATOR_TOKEN, Endpoint

__all__ = ["api_key_from_env", "endpoint_key", "scrub"]

_TOKEN_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}"),
    re.compile(r"(?i)(bearer\s+)[^\s'\"]+"),
)


_KEY_VARIABLES: set[str] = {API_KEY_ENV}
"""The variables a key was read from in this process: :func:`scrub` hides their values."""


def _secrets(secret: str | None) -> list[str]:
    """The values to hide: ``secret`` when given, else every key variable's (if long
    enough to be told from ordinary text)."""
    values = [secret] if secret is not None else [os.environ.get(v) for v in _KEY_VARIABLES]
    return [v for v in values if v and len(v) >= 4]


_SHORTEST_HIT = 4
"""A text shorter than this holds no secret (at least 4 characters), no key-shaped token
(``sk-`` and 6 more) and no bearer token: it is kept as it is, unscanned."""


def _scrubbed(text: str, secrets: list[str]) -> str:
    if len(text) < _SHORTEST_HIT:
        return text
    for value in secrets:
        text = text.replace(value, "[redacted]")
    if "sk-" in text:
        text = _TOKEN_PATTERNS[0].sub("[redacted]", text)
    if "bearer" in text.lower():  # what the second pattern needs to match at all
        text = _TOKEN_PATTERNS[1].sub(r"\1[redacted]", text)
    return text


def scrub(text: str, secret: str | None = None) -> str:
    """``text`` with the API key (and anything shaped like a key or bearer token) removed:
    ``secret`` when given, else the value of every variable a key was read from (read
    only for a text long enough to hold one: a call's empty reason reads nothing)."""
    if len(text) < _SHORTEST_HIT:
        return text
    return _scrubbed(text, _secrets(secret))


def scrub_value(value: Any, secret: str | None = None) -> Any:
    """``value`` (a parsed answer: JSON-like lists, dicts and scalars) with every string
    passed through :func:`scrub` (the secrets are read once for all of them, and not at
    all for a value without text: a number, ``None``)."""
    if value is None or isinstance(value, int | float):
        return value
    return _scrub_value(value, _secrets(secret))


def _scrub_value(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return _scrubbed(value, secrets)
    if isinstance(value, dict):
        return {_scrubbed(str(k), secrets): _scrub_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_scrub_value(v, secrets) for v in value)
    return value


def api_key_from_env(name: str = API_KEY_ENV) -> str:
    """The API key from the environment variable ``name``; a clear error (without any
    value) if unset."""
    _KEY_VARIABLES.add(name)
    key = os.environ.get(name, "").strip()
    if not key:
        raise ClientError(
            f"{name} is not set. Export the endpoint's key in the environment "
            "(any non-empty value for the simulated server); it is never read from a file "
            "or a flag."
        )
    return key


def endpoint_key(endpoint: Endpoint) -> str:
    """The key to send ``endpoint``: read from its ``key_env`` now (a clear error when
    unset), or the simulator's placeholder for a simulated server, which needs none."""
    if endpoint.key_env is None:
        return SIMULATOR_TOKEN
    return api_key_from_env(endpoint.key_env)
