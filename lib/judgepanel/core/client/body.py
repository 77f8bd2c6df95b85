"""Request bodies: images read once per repetition group, and JSON encoded cheaply."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from judgepanel.core.calls import CallSpec
from judgepanel.core.prompts import image_data_url


@lru_cache(maxsize=32)
def cached_data_url(path: str) -> str:
    """:func:`judgepanel.core.prompts.image_data_url`, remembering the most recent images.

    Plans put the repetitions of one image next to each other, so a small cache turns
    k + 5R file reads and base64 encodings per image and family into one.
    """
    return image_data_url(Path(path))


# -- request bodies -------------------------------------------------------------------------

_IMAGE_SLOT = re.compile(r'"judgepanel-image-(\d+)"')
_PLAIN_DATA_URL = re.compile(r"data:[A-Za-z0-9.+/-]+;base64,[A-Za-z0-9+/=]*")


@lru_cache(maxsize=64)
def _plain(url: str) -> bool:
    """Whether ``url`` is a base64 data URL, whose JSON form is itself between quotes.

    Remembered per image: a Python string caches its hash, so asking again for the same
    (cached) data URL costs nothing like the scan.
    """
    return _PLAIN_DATA_URL.fullmatch(url) is not None


def encode_body(body: dict[str, Any]) -> bytes:
    """``body`` as compact JSON bytes, equal to ``json.dumps(body, separators=(",", ":"))``.

    An image is most of a request, and a data URL needs no escaping; so each image is put
    in the text as it is instead of being scanned by the JSON encoder on every call (the
    repetitions of one image share one string, see :func:`cached_data_url`).
    """
    images: list[str] = []

    def slot(part: Any) -> Any:
        image = part.get("image_url") if isinstance(part, dict) else None
        url = image.get("url") if isinstance(image, dict) else None
        if not isinstance(url, str) or not _plain(url):
            return part
        images.append(url)
        return {**part, "image_url": {**image, "url": f"judgepanel-image-{len(images) - 1}"}}

    messages = [
        {**m, "content": [slot(p) for p in m["content"]]}
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        else m
        for m in body.get("messages", ())
    ]
    text = json.dumps({**body, "messages": messages}, separators=(",", ":"))
    if images:
        if len(_IMAGE_SLOT.findall(text)) != len(images):  # a text that reads like a slot
            return json.dumps(body, separators=(",", ":")).encode()
        text = _IMAGE_SLOT.sub(lambda m: f'"{images[int(m[1])]}"', text)
    return text.encode()


def request_body(
    spec: CallSpec, messages: list[dict[str, Any]], seed: int | None, n: int = 1
) -> bytes:
    """The encoded chat-completions body of ``spec`` asking for ``n`` choices, with its
    ``extra_body`` fields."""
    key = spec.key
    body: dict[str, Any] = {
        "model": key.model,
        "messages": messages,
        "temperature": key.temperature,
        "max_tokens": spec.max_tokens,
    }
    if seed is not None:
        body["seed"] = seed
    if n > 1:
        body["n"] = n
    for name, value in spec.extra_body:
        body.setdefault(name, value)
    return encode_body(body)
