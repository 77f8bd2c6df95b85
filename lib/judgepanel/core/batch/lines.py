"""Batch input lines: a call's ``custom_id``, its request line, and files within limits.

A line's format is the provider's (:meth:`~judgepanel.core.providers.Provider.batch_line`:
for OpenAI's batch API and ``vllm run-batch``, ``{"custom_id", "method", "url", "body"}``);
its body is the request the online path would send, seed included, so a provider that
honours seeds answers a batch line as it answers the online request. The ``custom_id`` is
a digest of the call's store key, so results are matched back by key, never by their
position in a file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from judgepanel.core.budget import RequestShape
from judgepanel.core.calls import CallKey, CallSpec
from judgepanel.core.config import Price
from judgepanel.core.providers import Provider
from judgepanel.core.store import key_text

MAX_LINES = 50_000
"""Requests one batch file may hold (OpenAI's limit)."""
MAX_BYTES = 200 * 1000 * 1000
"""Bytes one batch file may hold: OpenAI's 200 MB, counted in decimal to stay under it."""


@lru_cache(maxsize=1 << 18)
def custom_id(key: CallKey) -> str:
    """The batch ``custom_id`` of a call: ``jp-`` and 32 hex digits of its store key
    (remembered: a batch run names each call several times, building, matching and
    ingesting its lines)."""
    digest = hashlib.blake2b(key_text(key).encode("utf-8"), digest_size=16).hexdigest()
    return f"jp-{digest}"


@dataclass(frozen=True)
class Line:
    """One call as a batch line: its spec, id, seed, cost bound and encoded bytes."""

    spec: CallSpec
    custom_id: str
    seed: int | None
    bound: float
    data: bytes


def build_lines(
    specs: Iterable[CallSpec],
    prices: Mapping[str, Price],
    seeds: Mapping[str, int | None],
    provider: Provider,
) -> Iterator[Line]:
    """``provider``'s lines of ``specs`` in plan order, with their seeds (``seeds`` by
    custom_id replaces a spec's own, for a re-ask) and their bounds at ``prices`` (model ->
    the price of a batch line; one billed answer each: a re-ask is a line of a later batch,
    reserved then).

    Plan order keeps an item's calls together, so its images (and composites) are read and
    encoded once for all its calls while they are in the caches.
    """
    shapes: dict[tuple, RequestShape] = {}
    for spec in specs:
        key = spec.key
        cid = custom_id(key)
        seed = seeds.get(cid, spec.seed)
        messages = spec.build()
        shape_key = (key.dataset, key.item, key.call_type, key.dimension, key.prompt_hash)
        shape = shapes.get(shape_key)
        if shape is None or shape.max_tokens != spec.max_tokens:
            if len(shapes) > 1024:
                shapes.clear()
            shape = shapes[shape_key] = RequestShape.of(messages, spec.max_tokens)
        bound = shape.bound(0).cost(prices[key.model])
        data = provider.batch_line(cid, provider.request_body(spec, messages, seed))
        yield Line(spec, cid, seed, bound, data)


def chunks(
    lines: Iterable[Line], max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> Iterator[tuple[tuple[str, str], list[Line]]]:
    """Files of ``lines``: one dataset and model each (a provider takes one model a
    batch), at most ``max_lines`` lines and ``max_bytes`` bytes, as ``((dataset, model),
    lines)``; a file is given as soon as it is full, the rest at the end.

    Raises:
        ValueError: one line alone is larger than a file may be.
    """
    open_: dict[tuple[str, str], list[Line]] = {}
    sizes: dict[tuple[str, str], int] = {}
    for line in lines:
        if len(line.data) > max_bytes:
            raise ValueError(
                f"the request of {line.spec.key.item} ({line.spec.key.call_type}) is "
                f"{len(line.data)} bytes, more than a batch file may hold ({max_bytes})"
            )
        group = (line.spec.key.dataset, line.spec.key.model)
        current = open_.setdefault(group, [])
        if current and (len(current) >= max_lines or sizes[group] + len(line.data) > max_bytes):
            yield group, current
            current = open_[group] = []
            sizes[group] = 0
        current.append(line)
        sizes[group] = sizes.get(group, 0) + len(line.data)
    for group, current in open_.items():
        if current:
            yield group, current
