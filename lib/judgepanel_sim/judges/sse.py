"""Server-sent events for ``stream: true`` chat completions.

A stream is the answer cut into ``chat.completion.chunk`` objects: a first chunk per
choice with the role, one chunk per token of content, a last chunk per choice with its
``finish_reason``, then (with ``stream_options.include_usage``) a chunk with no choices
and the usage, and finally ``data: [DONE]``, as the OpenAI API sends them. Every chunk
carries ``"usage": null`` except that usage chunk, when it is asked for.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

from judgepanel_sim.judges.logprobs import tokens
from judgepanel_sim.judges.protocol import Answer, compact_json, usage_body


def _event(obj: dict[str, Any]) -> bytes:
    return b"data: " + compact_json(obj) + b"\n\n"


def chunks(
    model: str,
    answers: list[Answer],
    prompt_tokens: int,
    fingerprint: str,
    include_usage: bool,
    usage_extra: dict[str, Any] | None = None,
) -> Iterator[bytes]:
    """The SSE body of a streamed completion, event by event (``usage_extra``: fields the
    usage chunk carries after the counts, such as cached tokens and cost)."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": fingerprint,
    }
    extra = {"usage": None} if include_usage else {}

    def chunk(index: int, delta: dict[str, Any], finish: str | None, lp: Any = None) -> bytes:
        choice = {"index": index, "delta": delta, "logprobs": lp, "finish_reason": finish}
        return _event({**base, "choices": [choice], **extra})

    for i, a in enumerate(answers):
        yield chunk(i, {"role": "assistant", "content": "", "refusal": None}, None)
        pieces = tokens(a.content)
        for j, piece in enumerate(pieces):
            lp = None if a.logprobs is None else {"content": [a.logprobs[j]]}
            yield chunk(i, {"content": piece}, None, lp)
        yield chunk(i, {}, a.finish_reason)
    if include_usage:
        total = sum(a.completion_tokens for a in answers)
        yield _event(
            {**base, "choices": [], "usage": usage_body(prompt_tokens, total, usage_extra)}
        )
    yield b"data: [DONE]\n\n"
