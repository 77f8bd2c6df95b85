"""Providers: one module per wire format, behind one small interface.

:mod:`.base` declares the :class:`Provider` interface and the answer pieces it reads;
:mod:`.openai` is the OpenAI-compatible implementation (the only one shipped, used for
every OpenAI-compatible endpoint and for the simulated servers); :mod:`.registry` selects
one by the name an :class:`~judgepanel.core.endpoint.Endpoint` gives.
"""

from judgepanel.core.providers.base import BatchResult, Choice, Provider, Usage
from judgepanel.core.providers.openai import OPENAI, OpenAIProvider, encode_body
from judgepanel.core.providers.registry import known_providers, provider, register, unregister

__all__ = [
    "OPENAI",
    "BatchResult",
    "Choice",
    "OpenAIProvider",
    "Provider",
    "Usage",
    "encode_body",
    "known_providers",
    "provider",
    "register",
    "unregister",
]
