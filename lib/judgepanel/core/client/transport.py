"""The HTTP side: the SDK client with our retries only, and one attempt's raw answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is imported where a call is sent: analyses never load it
    import httpx2
    import openai


def http_transport(timeout: float) -> httpx2.AsyncClient | None:
    """The SDK's aiohttp transport (``openai[aiohttp]``), or ``None`` for its default.

    The SDK's default transport spends about as much CPU per request as the rest of the
    client together; its documented aiohttp transport needs about half as much
    (``bench/bench_client.py`` measures both), which keeps a fast endpoint busy and leaves
    cores to a simulator or a local server on the same machine. Without aiohttp the SDK's
    default is used, so a plain ``pip install openai`` setup still works.
    """
    import openai

    try:
        return openai.DefaultAioHttpClient(timeout=timeout)
    except RuntimeError:  # the aiohttp extra is not installed
        return None


def open_client(key: str, base_url: str | None, timeout: float) -> openai.AsyncOpenAI:
    """The SDK client, with its own retries off (``max_retries=0``): every attempt is
    ours, counted, shown in the progress line and billed in the store."""
    import openai

    return openai.AsyncOpenAI(
        api_key=key,
        base_url=base_url,
        max_retries=0,
        timeout=timeout,
        http_client=http_transport(timeout),
    )


@dataclass(frozen=True)
class Reply:
    """One answered attempt: the decoded JSON body and the response headers."""

    body: Any
    headers: Mapping[str, str]


async def post_chat(
    client: openai.AsyncOpenAI, content: bytes, timeout: float, path: str = "/chat/completions"
) -> Reply:
    """One HTTP attempt at ``path`` (the provider's) with an already encoded body.

    The request goes through the SDK's ``post`` and the answer comes back as the raw HTTP
    response: the typed ``create`` would walk every message part through its TypedDict
    transformer and build a ``ChatCompletion`` model, which for our plain JSON costs more
    CPU than the rest of a call together (``bench/bench_client.py`` measures the
    difference). Errors, status handling and timeouts are the SDK's own either way. A
    success status with a body that is not JSON raises ``ValueError``.
    """
    import httpx2

    # The SDK timeout bounds each network phase; the outer one bounds the whole attempt,
    # so a server that trickles bytes cannot hold a worker forever.
    async with asyncio.timeout(timeout + 1.0):
        response = await client.post(
            path,
            cast_to=httpx2.Response,
            content=content,
            options={"timeout": timeout},
        )
        raw = await response.aread()
    return Reply(json.loads(raw), response.headers)
