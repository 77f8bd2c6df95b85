"""Providers by name: what an endpoint's ``provider`` selects.

The OpenAI-compatible implementation is registered as ``openai`` and, since the simulated
judge servers speak the same protocol, as ``simulator``. Another provider is added with
:func:`register`.
"""

from __future__ import annotations

from judgepanel.core.errors import ConfigError
from judgepanel.core.providers.base import Provider
from judgepanel.core.providers.openai import OPENAI

_PROVIDERS: dict[str, Provider] = {"openai": OPENAI, "simulator": OPENAI}


def known_providers() -> tuple[str, ...]:
    """The names a provider can be selected by, sorted."""
    return tuple(sorted(_PROVIDERS))


def provider(name: str) -> Provider:
    """The provider registered as ``name``.

    Raises:
        ConfigError: no provider has that name (the message lists the known ones).
    """
    try:
        return _PROVIDERS[name]
    except KeyError:
        raise ConfigError(
            f"unknown provider {name!r}; known providers: {', '.join(known_providers())}"
        ) from None


def register(impl: Provider, name: str | None = None) -> Provider:
    """Make ``impl`` selectable as ``name`` (its own ``name`` unless given); returns it.

    Raises:
        ConfigError: the name is taken by another provider.
    """
    name = name or impl.name
    held = _PROVIDERS.get(name)
    if held is not None and held is not impl:
        raise ConfigError(f"a provider named {name!r} is already registered")
    _PROVIDERS[name] = impl
    return impl


def unregister(name: str) -> None:
    """Forget the provider registered as ``name`` (the built-in ones stay)."""
    if name in ("openai", "simulator"):
        raise ConfigError(f"the built-in provider {name!r} cannot be removed")
    _PROVIDERS.pop(name, None)
