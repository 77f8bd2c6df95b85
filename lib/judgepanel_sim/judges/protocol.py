"""The OpenAI chat-completions wire protocol, as the simulated server speaks it.

This module turns a request body into validated parts (texts, decoded images, sampling
fields) and builds the response and error objects. It knows nothing about judging.
Errors are raised as :class:`ApiError` carrying the HTTP status and the OpenAI-style error
body, so the server only has to serialise them.

Images arrive as base64 data URLs. Each is identified by a digest of its bytes; decoded
sizes and pixel features are cached per digest (an LRU of a few thousand entries), and the
digest per hash of the base64 text, so a repeated image costs only hashing its text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
import re
import threading
import time
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from judgepanel_sim.judges import perception

MODELS: tuple[str, ...] = (
    "sim-aurora-v1",
    "sim-basalt-v1",
    "sim-cobalt-v1",
    "sim-dune-v1",
    "sim-ember-v1",
)
"""Model ids the server answers for and lists, one per simulated family."""

NO_LOGPROBS_MODELS: frozenset[str] = frozenset({"sim-ember-v1"})
"""Models that, as many providers do, send ``"logprobs": null`` even when a request asks
for them (``logprobs: true``); the request is accepted and answered as any other."""

ROUTER_MODELS: dict[str, str] = {"router/sim-aurora-v1": "sim-aurora-v1"}
"""Aliases that answer as the model they name but, like a router (OpenRouter), ignore
``n`` and return one choice. Accepted by the chat endpoint and by ``GET /v1/models/{id}``
but not listed by ``GET /v1/models``, whose answer stays as it was before they existed."""

ACCEPTED_MODELS: tuple[str, ...] = MODELS + tuple(ROUTER_MODELS)
"""Every model id a request may name."""


def served_model(model: str) -> str:
    """The simulated model behind ``model`` (an alias answers as the model it names)."""
    return ROUTER_MODELS.get(model, model)


MODEL_CREATED = 1_767_225_600  # 2026-01-01T00:00:00Z, a fixed "release date" for /v1/models
MAX_IMAGE_PIXELS = 40_000_000
IMAGE_FORMATS: dict[str, str] = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
FEATURE_CACHE_SIZE = 4096
PIXEL_CACHE_SIZE = 64


@dataclass(frozen=True, slots=True)
class RawJSON:
    """A value already written as compact JSON: :func:`compact_json` puts ``text`` in its
    place as it is (a token's log-probabilities are written from cached pieces, far
    cheaper than the encoder's walk over a thousand small objects)."""

    text: str


_RAW_SLOT = re.compile('"\ue000raw([0-9]+)\ue000"')


def compact_json(obj: Any) -> bytes:
    """``obj`` as compact UTF-8 JSON, as every response body is written, each
    :class:`RawJSON` in it as its text.

    A raw value is first written as a placeholder string of private-use characters,
    then replaced; should a text of the body read like a placeholder, the raw values are
    decoded and the body written again, the same bytes either way.
    """
    raws: list[str] = []

    def slot(value: Any) -> str:
        if not isinstance(value, RawJSON):
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        raws.append(value.text)
        return f"\ue000raw{len(raws) - 1}\ue000"

    text = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=slot).encode(obj)
    if raws:
        if len(_RAW_SLOT.findall(text)) != len(raws):
            return compact_json(_decoded(obj))
        text = _RAW_SLOT.sub(lambda m: raws[int(m[1])], text)
    return text.encode("utf-8")


def _decoded(obj: Any) -> Any:
    """``obj`` with each :class:`RawJSON` in it decoded."""
    if isinstance(obj, RawJSON):
        return json.loads(obj.text)
    if isinstance(obj, dict):
        return {k: _decoded(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_decoded(v) for v in obj]
    return obj


class ApiError(Exception):
    """An error answer: HTTP status plus the OpenAI error object.

    Attributes:
        status: HTTP status code.
        message: human-readable message (never contains a credential).
        type: OpenAI error type, e.g. ``invalid_request_error``.
        code: machine-readable code, e.g. ``model_not_found``.
        param: the request field at fault, if any.
        headers: extra response headers (``Retry-After`` on 429).
    """

    def __init__(
        self,
        status: int,
        message: str,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


class LRU:
    """A small thread-safe least-recently-used mapping."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def get_or_make(self, key: Hashable, make: Callable[[], Any]) -> Any:
        value = self.get(key)
        if value is None:
            value = make()
            self.put(key, value)
        return value

    def __len__(self) -> int:
        return len(self._data)


_HEADERS = LRU(FEATURE_CACHE_SIZE)  # digest -> (width, height, format)
_B64_DIGESTS = LRU(FEATURE_CACHE_SIZE)  # text_key of the base64 text -> digest of the bytes
_FEATURES = LRU(FEATURE_CACHE_SIZE)  # digest or (digest, box) -> features dict
_PIXELS = LRU(PIXEL_CACHE_SIZE)  # digest -> HxWx3 uint8 array
_DERIVED = LRU(FEATURE_CACHE_SIZE)  # (digest, name) -> what a handler read from the pixels


def _decode(data: bytes, where: str) -> tuple[np.ndarray, str]:
    """Decode image bytes to RGB pixels, or raise a 400 naming the message part."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
            fmt = img.format or ""
            if fmt not in IMAGE_FORMATS:
                raise ApiError(
                    400,
                    f"{where}: unsupported image format {fmt or 'unknown'!r}; "
                    "send PNG, JPEG or WebP",
                    code="invalid_image_format",
                    param="messages",
                )
            if img.width * img.height > MAX_IMAGE_PIXELS:
                raise ApiError(
                    400,
                    f"{where}: image of {img.width}x{img.height} px is too large",
                    code="invalid_image",
                    param="messages",
                )
            rgb = np.asarray(img if img.mode == "RGB" else img.convert("RGB"))
    except ApiError:
        raise
    except Exception as exc:  # Pillow raises many types for corrupt data
        raise ApiError(
            400,
            f"{where}: the image could not be decoded ({type(exc).__name__}); "
            "send a valid PNG or JPEG",
            code="invalid_image",
            param="messages",
        ) from None
    if min(rgb.shape[:2]) < 1:
        raise ApiError(400, f"{where}: the image is empty", code="invalid_image")
    return rgb, fmt


def text_key(text: bytes) -> tuple[int, int]:
    """The cache key of an image's base64 text: its length and Python's hash of it.

    That hash is SipHash with a secret per-process key, so two different texts of one
    length collide with probability 2**-64 (far below one in a million million over the
    cache's few thousand entries), and it costs a quarter of a cryptographic digest.
    """
    return len(text), hash(text)


class ImageView:
    """One image of a request, as the judges may look at it.

    Attributes:
        digest: hex BLAKE2b-128 of the image bytes (content identity; no file name).
        width: width in px.
        height: height in px.
        format: ``JPEG``, ``PNG`` or ``WEBP``.

    ``rgb`` (H x W x 3 uint8) is decoded lazily; ``features`` and ``region_features`` are
    cached by digest (and box), so handlers may call them freely.
    """

    __slots__ = ("_b64", "_data", "digest", "format", "height", "width")

    def __init__(
        self,
        data: bytes | None,
        digest: str,
        width: int,
        height: int,
        fmt: str,
        b64: str | None = None,
    ) -> None:
        self._data = data
        self._b64 = b64
        self.digest = digest
        self.width = width
        self.height = height
        self.format = fmt

    @property
    def data(self) -> bytes:
        """The encoded image bytes (PNG, JPEG or WebP)."""
        if self._data is None:
            self._data = base64.b64decode(self._b64 or "")
        return self._data

    @classmethod
    def from_base64(cls, payload: str, where: str = "image") -> ImageView:
        """Like ``from_bytes`` for base64 text; an image sent before is recognised from a
        hash of its text without decoding it again."""
        key = text_key(payload.encode("latin-1", "replace"))
        digest = _B64_DIGESTS.get(key)
        head = _HEADERS.get(digest) if digest else None
        if head is not None:
            return cls(None, digest, head[0], head[1], head[2], b64=payload)
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise _bad(f"{where}: the base64 image data is invalid", code="invalid_image") from None
        if not data:
            raise _bad(f"{where}: the image data is empty", code="invalid_image")
        view = cls.from_bytes(data, where)
        _B64_DIGESTS.put(key, view.digest)
        return view

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "image") -> ImageView:
        """Validate and identify image bytes; decodes only the first time a digest is seen."""
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        head = _HEADERS.get(digest)
        if head is None:
            rgb, fmt = _decode(data, where)
            head = (rgb.shape[1], rgb.shape[0], fmt)
            _HEADERS.put(digest, head)
            _PIXELS.put(digest, rgb)
        return cls(data, digest, head[0], head[1], head[2])

    @property
    def rgb(self) -> np.ndarray:
        """The pixels, H x W x 3 uint8 (read-only)."""

        def make() -> np.ndarray:
            rgb, _ = _decode(self.data, "image")
            rgb.flags.writeable = False
            return rgb

        return _PIXELS.get_or_make(self.digest, make)

    @property
    def features(self) -> dict[str, float]:
        """``perception.features`` of the whole image (cached by digest)."""
        return _FEATURES.get_or_make(self.digest, lambda: perception.features(self.rgb))

    def derived(self, name: str, make: Callable[[np.ndarray], Any]) -> Any:
        """``make(self.rgb)``, cached by (digest, ``name``): a handler's own reading of the
        pixels (e.g. where a composite's panels are), computed once per image.

        ``make`` must depend on the pixels only and return an immutable value.
        """
        return _DERIVED.get_or_make((self.digest, name), lambda: make(self.rgb))

    def region_features(
        self, box: tuple[int, int, int, int], content: str | None = None
    ) -> dict[str, float]:
        """Features of the crop ``box`` = (left, top, right, bottom) in px, cached.

        The box is clipped to the image; a crop smaller than ``perception.MIN_SIDE`` is
        an error (ValueError), because its features would be meaningless. ``content``, a
        digest of the crop's own pixels and shape, keys the cache instead of the image and
        box: the same crop shown in other images (a composite's panel in each of its
        rotations) is then measured once, as the features depend on its pixels alone.
        """
        left, top, right, bottom = (int(v) for v in box)
        left, top = max(0, left), max(0, top)
        right, bottom = min(self.width, right), min(self.height, bottom)
        key: Hashable = ("content", content) if content else (self.digest, left, top, right, bottom)
        return _FEATURES.get_or_make(
            key, lambda: perception.features(self.rgb[top:bottom, left:right])
        )

    def tiles(self) -> int:
        """512-px tiles after the usual vision-model resizing (fit 2048, short side 768)."""
        w, h = float(self.width), float(self.height)
        scale = min(1.0, 2048.0 / max(w, h))
        w, h = w * scale, h * scale
        scale = min(1.0, 768.0 / min(w, h))
        w, h = w * scale, h * scale
        return math.ceil(w / 512.0) * math.ceil(h / 512.0)

    def __repr__(self) -> str:
        return f"ImageView({self.format} {self.width}x{self.height} {self.digest[:12]})"


def image_tokens(view: ImageView, detail: str = "auto") -> int:
    """Prompt tokens charged for one image: 85 plus 170 per 512-px tile, or 85 alone at
    ``detail: "low"`` (the image is then seen at 512 px, one low-resolution pass)."""
    if detail == "low":
        return 85
    return 85 + 170 * view.tiles()


MAX_N = 8
"""Most choices one request may ask for (``n``)."""
MAX_TOP_LOGPROBS = 20


def text_tokens(chars: int) -> int:
    """Approximate tokens of ``chars`` characters of text (about four characters a token)."""
    return math.ceil(chars / 4)


@dataclass
class ParsedChat:
    """A validated chat-completions request, before any judging.

    Attributes:
        model: the requested model id (already checked to exist).
        system_text: all system/developer text, joined by newlines.
        user_text: all user text parts, joined by newlines.
        parts: user content in order: ("text", str) or ("image", ImageView).
        images: the decoded images in order.
        other_text: assistant turns (kept for the request digest only).
        temperature: sampling temperature (default 1, as in the OpenAI API).
        seed: the request's ``seed``, if any.
        max_tokens: completion cap from ``max_completion_tokens`` or ``max_tokens``.
        json_mode: ``response_format`` asked for a JSON object or schema.
        text_chars: characters of text in all messages (for usage).
        n_messages: number of messages (for usage).
        details: each image's ``detail`` ("auto", "low" or "high"), in image order.
        n: choices asked for.
        stream: answer as server-sent events.
        include_usage: ``stream_options.include_usage`` (usage in a last chunk).
        logprobs: return token log-probabilities.
        top_logprobs: alternatives per token (0 to 20).
        segments: the prompt in message order, for prompt caching: one
            (identity, text characters, image tokens) per content part, the identity
            naming the message, its role and the part's text or image digest and detail.
    """

    model: str
    system_text: str
    user_text: str
    parts: list[tuple[str, object]]
    images: list[ImageView]
    other_text: str = ""
    temperature: float = 1.0
    seed: int | None = None
    max_tokens: int | None = None
    json_mode: bool = False
    text_chars: int = 0
    n_messages: int = 0
    details: list[str] | None = None
    n: int = 1
    stream: bool = False
    include_usage: bool = False
    logprobs: bool = False
    top_logprobs: int = 0
    segments: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def choices(self) -> int:
        """Choices answered: ``n``, or one for a model that ignores ``n``."""
        return 1 if self.model in ROUTER_MODELS else self.n

    def prompt_tokens(self) -> int:
        """Prompt tokens charged: the text, three per message, and every image."""
        details = self.details or ["auto"] * len(self.images)
        return (
            text_tokens(self.text_chars)
            + 3 * self.n_messages
            + sum(image_tokens(v, d) for v, d in zip(self.images, details, strict=True))
        )


def _bad(message: str, param: str | None = "messages", code: str | None = None) -> ApiError:
    return ApiError(400, message, code=code, param=param)


def _image_base64(url: object, where: str) -> str:
    if not isinstance(url, str) or not url:
        raise _bad(f"{where}: image_url.url must be a non-empty string")
    if url.startswith(("http://", "https://")):
        raise _bad(
            f"{where}: remote image URLs are not fetched by this server; "
            "send the image as a base64 data URL (data:image/jpeg;base64,...)",
            code="invalid_image_url",
        )
    if not url.startswith("data:"):
        raise _bad(f"{where}: image_url.url must be a data URL", code="invalid_image_url")
    head, sep, payload = url.partition(",")
    if not sep or not head.endswith(";base64"):
        raise _bad(f"{where}: image data URLs must be base64-encoded", code="invalid_image_url")
    mime = head[5:-7].lower()
    if mime and not mime.startswith("image/"):
        raise _bad(f"{where}: data URL type {mime!r} is not an image", code="invalid_image_url")
    if not payload:
        raise _bad(f"{where}: the image data is empty", code="invalid_image")
    return payload


def _texts_of(content: object, where: str) -> list[tuple[str, object]]:
    """Parts of one message: ("text", str) and ("image_url", raw url)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [("text", content)]
    if not isinstance(content, list):
        raise _bad(f"{where}.content must be a string or a list of content parts")
    parts: list[tuple[str, object]] = []
    for j, part in enumerate(content):
        pw = f"{where}.content[{j}]"
        if not isinstance(part, dict) or "type" not in part:
            raise _bad(f"{pw} must be an object with a 'type'")
        kind = part["type"]
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise _bad(f"{pw}.text must be a string")
            parts.append(("text", text))
        elif kind == "image_url":
            spec = part.get("image_url")
            url = spec.get("url") if isinstance(spec, dict) else spec
            detail = spec.get("detail") if isinstance(spec, dict) else None
            if detail not in (None, "auto", "low", "high"):
                raise _bad(f"{pw}.image_url.detail must be auto, low or high, not {detail!r}")
            parts.append(("image_url", (url, pw, detail or "auto")))
        else:
            raise _bad(f"{pw}: content part type {kind!r} is not supported; use text or image_url")
    return parts


def _choice_count(body: dict[str, Any]) -> int:
    n = body.get("n", 1)
    if n is None:
        return 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise _bad(f"n must be an integer from 1 to {MAX_N}", param="n")
    return n


def _boolean(body: dict[str, Any], name: str) -> bool:
    value = body.get(name)
    if value is not None and not isinstance(value, bool):
        raise _bad(f"{name} must be a boolean", param=name)
    return bool(value)


def _logprob_fields(body: dict[str, Any]) -> tuple[bool, int]:
    want = _boolean(body, "logprobs")
    top = body.get("top_logprobs")
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_TOP_LOGPROBS:
            raise _bad(
                f"top_logprobs must be an integer from 0 to {MAX_TOP_LOGPROBS}",
                param="top_logprobs",
            )
        if not want:
            raise _bad("top_logprobs needs logprobs set to true", param="top_logprobs")
    return want, int(top or 0)


def _stream_fields(body: dict[str, Any]) -> tuple[bool, bool]:
    stream = _boolean(body, "stream")
    options = body.get("stream_options")
    if options is not None:
        if not isinstance(options, dict):
            raise _bad("stream_options must be an object", param="stream_options")
        if not stream:
            raise _bad("stream_options is only allowed with stream set to true", param="stream")
    return stream, bool((options or {}).get("include_usage"))


def _number(body: dict[str, Any], name: str, lo: float, hi: float) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(f"{name} must be a number", param=name)
    if not lo <= value <= hi:
        raise _bad(f"{name} must lie in [{lo:g}, {hi:g}], got {value}", param=name)
    return float(value)


def parse_chat(body: object) -> ParsedChat:
    """Validate a decoded JSON body of ``POST /v1/chat/completions``.

    Raises:
        ApiError: 400 for a malformed request or image, 404 for an unknown model.
    """
    if not isinstance(body, dict):
        raise _bad("the request body must be a JSON object", param=None)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("you must provide a model parameter", param="model")
    if model not in ACCEPTED_MODELS:
        raise ApiError(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
            param="model",
        )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages must be a non-empty list")
    stream, include_usage = _stream_fields(body)
    n = _choice_count(body)
    logprobs, top_logprobs = _logprob_fields(body)
    temperature = _number(body, "temperature", 0.0, 2.0)
    seed_value = body.get("seed")
    if seed_value is not None and (isinstance(seed_value, bool) or not isinstance(seed_value, int)):
        raise _bad("seed must be an integer", param="seed")
    cap_name = (
        "max_tokens" if body.get("max_completion_tokens") is None else "max_completion_tokens"
    )
    cap = body.get(cap_name)
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise _bad(f"{cap_name} must be a positive integer", param=cap_name)
    fmt = body.get("response_format")
    json_mode = isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema")

    system, user, other = [], [], []
    parts: list[tuple[str, object]] = []
    images: list[ImageView] = []
    details: list[str] = []
    segments: list[tuple[str, int, int]] = []
    chars = 0
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise _bad(f"{where} must be an object")
        role = msg.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise _bad(f"{where}.role {role!r} is not valid")
        for kind, value in _texts_of(msg.get("content"), where):
            if kind == "text":
                text = str(value)
                chars += len(text)
                segments.append((f"{i}\x1f{role}\x1ftext\x1f{text}", len(text), 0))
                if role in ("system", "developer"):
                    system.append(text)
                elif role == "user":
                    user.append(text)
                    parts.append(("text", text))
                else:
                    other.append(text)
            else:
                url, pw, detail = value  # type: ignore[misc]
                if role != "user":
                    raise _bad(f"{pw}: images are only accepted in user messages")
                view = ImageView.from_base64(_image_base64(url, pw), pw)
                images.append(view)
                details.append(detail)
                parts.append(("image", view))
                identity = f"{i}\x1f{role}\x1fimage\x1f{view.digest}\x1f{detail}"
                segments.append((identity, 0, image_tokens(view, detail)))
    return ParsedChat(
        model=model,
        system_text="\n".join(system),
        user_text="\n".join(user),
        parts=parts,
        images=images,
        other_text="\n".join(other),
        temperature=1.0 if temperature is None else temperature,
        seed=seed_value,
        max_tokens=cap,
        json_mode=json_mode,
        text_chars=chars,
        n_messages=len(messages),
        details=details,
        n=n,
        stream=stream,
        include_usage=include_usage,
        logprobs=logprobs,
        top_logprobs=top_logprobs,
        segments=segments,
    )


@dataclass(frozen=True)
class Answer:
    """One sampled choice: its text, tokens, finish reason and (optional) logprobs."""

    content: str
    completion_tokens: int
    finish_reason: str
    logprobs: list[dict[str, Any]] | RawJSON | None = None


def usage_body(
    prompt_tokens: int, completion_tokens: int, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The chat-completions ``usage`` object, with ``extra`` fields (cached tokens, cost)
    after the three counts when the server reports them."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        **(extra or {}),
    }


def completion_body(
    model: str,
    answers: list[Answer],
    prompt_tokens: int,
    fingerprint: str,
    usage_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` object with one choice per answer and usage."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": fingerprint,
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": a.content, "refusal": None},
                "logprobs": None if a.logprobs is None else {"content": a.logprobs},
                "finish_reason": a.finish_reason,
            }
            for i, a in enumerate(answers)
        ],
        "usage": usage_body(prompt_tokens, sum(a.completion_tokens for a in answers), usage_extra),
    }


def model_object(model: str) -> dict[str, Any]:
    """One model in the OpenAI format."""
    return {"id": model, "object": "model", "created": MODEL_CREATED, "owned_by": "judgepanel-sim"}


def models_body() -> dict[str, Any]:
    """``GET /v1/models`` in the OpenAI list format (the aliases are not listed)."""
    return {"object": "list", "data": [model_object(m) for m in MODELS]}


def truncate_answer(text: str, max_tokens: int | None) -> tuple[str, int, str]:
    """Cut an answer to ``max_tokens`` (four characters a token).

    Returns:
        (text, completion_tokens, finish_reason), finish_reason "length" when cut.
    """
    tokens = max(1, text_tokens(len(text)))
    if max_tokens is None or tokens <= max_tokens:
        return text, tokens, "stop"
    return text[: 4 * max_tokens], max_tokens, "length"
