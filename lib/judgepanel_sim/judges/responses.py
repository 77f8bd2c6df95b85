"""A minimal ``POST /v1/responses`` (the OpenAI Responses API) on top of the chat path.

A Responses request is turned into the equivalent chat-completions body and answered by
the same handlers: ``instructions`` and system/developer items become the system
message; ``input`` (a string, or message items whose content holds ``input_text`` and
``input_image`` parts, or assistant ``output_text`` parts) becomes the messages;
``max_output_tokens`` becomes the completion cap. Tools, reasoning, ``store``,
``include`` and the like are accepted and ignored; ``stream`` and ``background`` are
refused, as this server does not keep responses. The answer is one ``message`` output
item with one ``output_text`` part, and usage in the Responses names.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from judgepanel_sim.judges.protocol import Answer, ApiError

_INPUT_TEXT = ("input_text", "output_text", "text")


def _bad(message: str, param: str | None = "input") -> ApiError:
    return ApiError(400, message, code=None, param=param)


def _content(content: object, where: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _bad(f"{where}.content must be a string or a list of content parts")
    parts: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        pw = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _INPUT_TEXT:
            parts.append({"type": "text", "text": part.get("text")})
        elif kind == "input_image":
            url = part.get("image_url")
            if url is None and part.get("file_id"):
                raise _bad(f"{pw}: file ids are not kept by this server; send a data URL")
            image = {"url": url}
            if part.get("detail") is not None:
                image["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": image})
        else:
            raise _bad(f"{pw}: content part type {kind!r} is not supported")
    return parts


def chat_body(body: object) -> dict[str, Any]:
    """The chat-completions body equivalent to a Responses request body.

    Raises:
        ApiError: 400 for a malformed request or a feature this server does not offer.
    """
    if not isinstance(body, dict):
        raise _bad("the request body must be a JSON object", param=None)
    for name in ("stream", "background"):
        if body.get(name):
            raise _bad(f"{name} is not supported on /v1/responses by this server", param=name)
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise _bad("instructions must be a string", param="instructions")
        messages.append({"role": "system", "content": instructions})
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise _bad("input must be a string or a non-empty list of items")
    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            raise _bad(f"{where}: only message items are supported")
        role = item.get("role")
        if role not in ("system", "developer", "user", "assistant"):
            raise _bad(f"{where}.role {role!r} is not valid")
        messages.append({"role": role, "content": _content(item.get("content"), where)})
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    for name in ("temperature", "top_p"):
        if body.get(name) is not None:
            chat[name] = body[name]
    if body.get("max_output_tokens") is not None:
        chat["max_tokens"] = body["max_output_tokens"]
    return chat


def response_body(
    model: str,
    answer: Answer,
    prompt_tokens: int,
    cached_tokens: int = 0,
    usage_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``response`` object with one assistant message and usage (``cached_tokens`` in
    ``input_tokens_details``; ``usage_extra``, e.g. the cost, after the counts)."""
    done = answer.finish_reason == "stop"
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed" if done else "incomplete",
        "incomplete_details": None if done else {"reason": "max_output_tokens"},
        "error": None,
        "model": model,
        "output": [
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex}",
                "status": "completed" if done else "incomplete",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer.content, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": prompt_tokens,
            "input_tokens_details": {"cached_tokens": cached_tokens},
            "output_tokens": answer.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt_tokens + answer.completion_tokens,
            **(usage_extra or {}),
        },
    }
