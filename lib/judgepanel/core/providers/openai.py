"""The OpenAI-compatible provider: chat-completions bodies, their answers, batch lines.

Every OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM, the simulated judge servers)
takes the same request and sends the same answer, and its batch files are OpenAI's (also
the format of ``vllm run-batch``): an input line ``{"custom_id", "method", "url", "body"}``
and an output line ``{id, custom_id, response: {status_code, request_id, body}, error}``.

A server may send any JSON: whatever is missing or of the wrong type reads as ``None``
instead of raising. A body without a readable message is then an unreadable answer
(re-asked), and usage without both token counts is no usage (the call is charged its
bound, so the ceiling still holds).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from judgepanel.core.calls import CallSpec
from judgepanel.core.config import Price
from judgepanel.core.providers.base import BatchResult, Choice, Usage

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
    repetitions of one image share one string, see
    :func:`judgepanel.core.client.cached_data_url`).
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


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class OpenAIProvider:
    """The OpenAI chat-completions protocol and batch file format (see the module)."""

    name = "openai"
    chat_path = "/chat/completions"
    batch_endpoint = "/v1/chat/completions"

    def body_fields(
        self, spec: CallSpec, messages: list[dict[str, Any]], seed: int | None, n: int = 1
    ) -> dict[str, Any]:
        """The fields of the request of ``spec``, before encoding: the place a variant
        of this protocol adds or renames one."""
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
        return body

    def request_body(
        self, spec: CallSpec, messages: list[dict[str, Any]], seed: int | None, n: int = 1
    ) -> bytes:
        """The encoded chat-completions body of ``spec`` asking for ``n`` choices, with its
        ``extra_body`` fields."""
        return encode_body(self.body_fields(spec, messages, seed, n))

    def choices(self, resp: Any) -> list[Choice]:
        """The choices of a chat completion in ``index`` order (an empty list if none)."""
        choices = resp.get("choices") if isinstance(resp, dict) else None
        if not isinstance(choices, list):
            return []
        out: list[tuple[int, Choice]] = []
        for pos, choice in enumerate(choices):
            choice = choice if isinstance(choice, dict) else {}
            message = choice.get("message")
            answer = message.get("content") if isinstance(message, dict) else None
            finish = choice.get("finish_reason")
            index = choice.get("index")
            out.append(
                (
                    index if _is_count(index) else pos,
                    Choice(
                        answer if isinstance(answer, str) else None,
                        finish if isinstance(finish, str) else None,
                        choice.get("logprobs"),
                    ),
                )
            )
        return [c for _, c in sorted(out, key=lambda t: t[0])]

    def usage(self, resp: Any) -> Usage | None:
        """The request's billed usage, ``None`` without both token counts."""
        usage = resp.get("usage") if isinstance(resp, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if not (_is_count(prompt) and _is_count(completion)):
            return None
        details = usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        cached = min(cached, prompt) if _is_count(cached) else 0
        cost = usage.get("cost")
        reported = (
            float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
        )
        return Usage(prompt, completion, cached, reported)

    def batch_line(self, custom_id: str, body: bytes) -> bytes:
        """The JSONL line (newline included) of one request body, already encoded."""
        head = b'{"custom_id":"%s","method":"POST","url":"%s","body":' % (
            custom_id.encode("ascii"),
            self.batch_endpoint.encode("ascii"),
        )
        return head + body + b"}\n"

    def batch_result(self, obj: Any) -> BatchResult | None:
        """An output or error line read (``None`` without a ``custom_id``).

        OpenAI puts a failed line's error in its response body; ``vllm run-batch`` leaves
        the body out and gives the message as the line's ``error``: both are kept.
        """
        cid = obj.get("custom_id") if isinstance(obj, dict) else None
        if not isinstance(cid, str) or not cid:
            return None
        response = obj.get("response")
        status = response.get("status_code") if isinstance(response, dict) else None
        if not isinstance(status, int) or isinstance(status, bool):
            status = None
        body = response.get("body") if isinstance(response, dict) else None
        return BatchResult(cid, status, body, obj.get("error"))

    def cost(self, usage: Usage, price: Price) -> float:
        """USD for ``usage`` at ``price``: its cached prompt tokens at the cached price."""
        return price.cost(usage.prompt, usage.completion, usage.cached)


OPENAI = OpenAIProvider()
"""The OpenAI-compatible provider."""
