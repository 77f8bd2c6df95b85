"""The simulated judge server: a raw ASGI app served by uvicorn (uvloop + httptools).

It speaks the OpenAI HTTP protocol (``GET /v1/models``, ``POST /v1/chat/completions``,
with ``n``, ``logprobs`` and ``stream``, and a minimal ``POST /v1/responses``) so that the
real client, retry and budget code, and peer clients, run against it unchanged. Faults are
injected at seeded rates: 429 (with ``Retry-After``) or 500 errors, stalled requests
(released when the client disconnects), and malformed answers written by the matched
handler. Nothing is logged per request, and the Authorization header is only checked
for presence (with rate limits, a digest of it names the key's buckets), never stored or
printed, unless ``echo_key`` asks the server to misbehave like an endpoint that echoes
the credential into its answers (to test that clients scrub it).

With a ``ledger`` file, every billed answer (a 200 with usage) appends one JSON line
(model, seed, prompt, completion and cached tokens, cost in USD from the simulator's own
price table, number of choices; with a prompt cache, also the cost without it) before
its response is sent, in one ``write`` to a file opened for appending: the server's own
count of what it billed, which survives a ``kill -9``.

Provider behaviour, each off by default (and then every response byte is as before):

* rate limits per API key (``rpm``, ``tpm``, ``burst_s``, ``count_refused``; see
  ``ratelimit``): OpenAI's ``x-ratelimit-*`` headers on every chat and responses answer,
  and a 429 in OpenAI's shape with ``retry-after`` when a bucket is short. The limiter
  runs once the body is parsed and before latency, faults and answering; a refused request
  takes no number of the fault schedule, so answers depend on the admitted requests only,
  and a server whose limits never bite answers exactly as one without limits.
* prompt caching (``cache_window``; see ``caching``): ``usage.prompt_tokens_details``.
* cost (``report_cost``; see ``pricing``): ``usage.cost`` in USD, as OpenRouter reports it.
* the batch API (``/v1/files``, ``/v1/batches``; see ``batches``), always served; its
  lines are answered in this process as the online requests are, and billed at the batch
  price. ``batch_delay_s``, ``batch_fail_share``, ``batch_expire_after`` and
  ``batch_invalid`` simulate a slow queue, failed lines, expiry and a rejected file.

``router/sim-aurora-v1`` answers as ``sim-aurora-v1`` but ignores ``n`` (one choice), as
OpenRouter does; it is accepted but not listed by ``GET /v1/models``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import uvloop

from judgepanel.core.local_sim import SimConfig
from judgepanel_sim.exit_codes import BAD_INPUT, OK
from judgepanel_sim.judges import responses, sse
from judgepanel_sim.judges.batches import (
    LINES_PER_SLICE,
    MAX_FILE_BYTES,
    BatchBehaviour,
    BatchDesk,
)
from judgepanel_sim.judges.caching import PromptCache
from judgepanel_sim.judges.families import Family, family_for_model
from judgepanel_sim.judges.handlers import SimRequest, find_handler
from judgepanel_sim.judges.lineworkers import LineResult, LineWorkers
from judgepanel_sim.judges.logprobs import answer_logprobs, tokens
from judgepanel_sim.judges.marginal import Impression, ScoreMarginal, precompute
from judgepanel_sim.judges.pricing import (
    DEFAULT_PRICES,
    PriceTable,
    batch_cost,
    cost,
    load_prices,
)
from judgepanel_sim.judges.protocol import (
    NO_LOGPROBS_MODELS,
    ROUTER_MODELS,
    Answer,
    ApiError,
    ParsedChat,
    compact_json,
    completion_body,
    model_object,
    models_body,
    parse_chat,
    served_model,
    truncate_answer,
)
from judgepanel_sim.judges.ratelimit import RateLimiter, key_of
from judgepanel_sim.judges.rng import generator

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

log = logging.getLogger("judgepanel_sim.judges")

WORKER_SLICE_FACTOR = 8
"""Worker processes take this many slices' lines at a time (fewer round trips)."""

TPM_DEFAULT_COMPLETION = 256
"""Completion tokens per choice a request without ``max_tokens`` is charged against the
token limit (OpenAI counts the cap, not the answer, when it admits a request)."""


class _ClientGone(Exception):
    """The client disconnected before its request was read."""


def _uniforms(seed: int, counter: int, n: int) -> list[float]:
    """``n`` uniforms in [0, 1) fixed by (seed, counter): the fault schedule."""
    h = hashlib.blake2b(f"fault\x1f{seed}\x1f{counter}".encode(), digest_size=8 * n).digest()
    return [int.from_bytes(h[8 * i : 8 * i + 8], "big") / 2.0**64 for i in range(n)]


def request_rng(
    seed: int,
    model: str,
    texts: tuple[str, ...],
    digests: list[str],
    request_seed: int | None,
    counter: int,
) -> np.random.Generator:
    """The answer generator of one request.

    Seeded from (server seed, model, the request's texts and image digests, its ``seed``;
    an alias's model is the one it names, so it answers as that model does);
    without a ``seed`` the server's request counter is mixed in, so that identical
    requests still differ at temperature > 0.
    """
    h = hashlib.blake2b(digest_size=16)
    for piece in (str(seed), model, *texts, *digests):
        h.update(piece.encode("utf-8"))
        h.update(b"\x1f")
    h.update(
        f"seed={request_seed}".encode() if request_seed is not None else f"n={counter}".encode()
    )
    return generator(int.from_bytes(h.digest(), "big"))


def sim_request(
    chat: ParsedChat, seed: int, counter: int = 0, *, family: Family | None = None
) -> SimRequest:
    """What a handler sees of a parsed request, with its seeded generator."""
    model = served_model(chat.model)
    rng = request_rng(
        seed,
        model,
        (chat.system_text, chat.user_text, chat.other_text),
        [v.digest for v in chat.images],
        chat.seed,
        counter,
    )
    return SimRequest(
        model=model,
        family=family if family is not None else family_for_model(model),
        system_text=chat.system_text,
        user_text=chat.user_text,
        parts=chat.parts,
        images=chat.images,
        temperature=chat.temperature,
        seed=chat.seed,
        max_tokens=chat.max_tokens,
        rng=rng,
        json_mode=chat.json_mode,
    )


def answer_text(req: SimRequest, *, malformed: bool = False) -> str:
    """One sampled answer of the handler that matches ``req`` (draws from its generator).

    Raises:
        ApiError: 400 when the request cannot be answered (e.g. too small an image).
    """
    handler = find_handler(req)
    try:
        return handler.malformed(req) if malformed else handler.answer(req)
    except ValueError as exc:  # e.g. an image smaller than the features allow
        raise ApiError(400, f"the request cannot be answered: {exc}") from None


def answer_chat(
    chat: ParsedChat,
    seed: int,
    counter: int = 0,
    *,
    malformed: bool = False,
    family: Family | None = None,
) -> str:
    """The answer text of one parsed request: what the server sends back first, without HTTP.

    Args:
        chat: the validated request.
        seed: the server's seed.
        counter: the server's request count (mixed into the generator only when the request
            carries no ``seed``).
        malformed: answer with the handler's malformed answer instead.
        family: the family to answer as (default: the one serving ``chat.model``); the
            calibration study passes a copy with other knobs.

    Raises:
        ApiError: 400 when the request cannot be answered (e.g. too small an image).
    """
    return answer_text(sim_request(chat, seed, counter, family=family), malformed=malformed)


class SimApp:
    """The ASGI application (``clock``: the rate limiter's monotonic seconds)."""

    def __init__(self, config: SimConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.counter = 0  # requests admitted; drives the fault schedule and unseeded sampling
        self.limiter = (
            RateLimiter(config.rpm, config.tpm, config.burst_s, config.count_refused, clock)
            if config.rpm or config.tpm
            else None
        )
        self.cache = PromptCache(config.cache_window) if config.cache_window else None
        self.prices: PriceTable = (
            DEFAULT_PRICES if config.prices is None else load_prices(config.prices)
        )
        self.fingerprint = f"fp_sim_{config.seed & 0xFFFFFFFF:08x}"
        self.workers = (
            LineWorkers(SimApp, replace(config, ledger=None, batch_workers=0), config.batch_workers)
            if config.batch_workers
            else None
        )
        self.desk = BatchDesk(
            self._answer_lines,
            BatchBehaviour(
                config.batch_delay_s,
                config.batch_fail_share,
                config.batch_expire_after,
                config.batch_invalid,
            ),
            config.seed,
            slice_lines=LINES_PER_SLICE * (WORKER_SLICE_FACTOR if self.workers else 1),
            slices_at_once=2 * config.batch_workers if self.workers else 1,
        )
        self._batch_lines = 0  # lines answered in batches; drives their unseeded sampling
        self._ledger_fd = (
            os.open(config.ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            if config.ledger is not None
            else None
        )

    def close(self) -> None:
        """Stop the batch workers, if any (the server's files and batches go with it)."""
        if self.workers is not None:
            self.workers.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            await self._http(scope, receive, send)
        except ApiError as err:
            await self._send_json(send, err.status, err.body(), err.headers)
        except _ClientGone:
            pass
        except Exception:
            # A bug, not a bad request: answer like a real server would, and log the stack
            # (never the request, whose headers may carry a credential).
            log.exception("unhandled error while answering %s %s", scope["method"], scope["path"])
            err = ApiError(
                500, "The server had an error while processing your request.", "server_error"
            )
            with contextlib.suppress(Exception):
                await self._send_json(send, 500, err.body())

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _send_json(
        self, send: Send, status: int, obj: Any, extra: dict[str, str] | None = None
    ) -> None:
        body = compact_json(obj)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        for k, v in (extra or {}).items():
            headers.append((k.lower().encode("latin-1"), v.encode("latin-1")))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def _bearer(scope: Scope) -> str:
        """The request's bearer token (``""`` without one); only ``echo_key`` keeps it."""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                return token.strip() if scheme.lower() == "bearer" else ""
        return ""

    @classmethod
    def _authorised(cls, scope: Scope) -> bool:
        return bool(cls._bearer(scope))

    def _bill(
        self,
        model: str,
        seed: int | None,
        prompt: int,
        completion: int,
        cached: int = 0,
        dollars: float | None = None,
        choices: int = 1,
        batch: tuple[str, str] | None = None,
    ) -> None:
        """Append one billed answer to the ledger, if there is one (``cost`` is null for a
        model without a price; a batch line adds its batch id and ``custom_id``).

        With a prompt cache, the line also holds ``uncached_cost``: the bill of the same
        answer without the cache (the cache changes what a request costs, never its answer
        or its tokens), so one pass measures a design with and without a cache.
        """
        if self._ledger_fd is None:
            return
        line = {
            "model": model,
            "seed": seed,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cached_tokens": cached,
            "cost": dollars,
            "choices": choices,
        }
        if self.cache is not None and batch is None:
            line["uncached_cost"] = cost(self.prices, model, prompt, 0, completion)
        if batch is not None:
            line["batch"], line["custom_id"] = batch
        os.write(self._ledger_fd, compact_json(line) + b"\n")

    async def _read_body(self, scope: Scope, receive: Receive, limit: int | None = None) -> bytes:
        limit = self.config.max_body_bytes if limit is None else limit
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                raise ApiError(
                    413,
                    f"request body of {int(value)} bytes exceeds the limit of {limit} bytes",
                    code="request_too_large",
                    param=None,
                )
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise ApiError(
                    413,
                    f"request body exceeds the limit of {limit} bytes",
                    code="request_too_large",
                    param=None,
                )
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _stall(self, receive: Receive) -> None:
        """Sleep ``stall_seconds`` or until the client goes away, whichever comes first."""

        async def wait_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        sleeper = asyncio.ensure_future(asyncio.sleep(self.config.stall_seconds))
        watcher = asyncio.ensure_future(wait_disconnect())
        try:
            await asyncio.wait({sleeper, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeper, watcher):
                task.cancel()

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"].rstrip("/")
        method = scope["method"]
        if path == "/health":
            await self._send_json(send, 200, {"status": "ok"})
            return
        if not path.startswith("/v1/"):
            raise ApiError(404, f"unknown path {scope['path']!r}", code="not_found")
        if not self._authorised(scope):
            raise ApiError(
                401,
                "You didn't provide an API key. Send it as an 'Authorization: Bearer <key>' "
                "header (any non-empty key is accepted by this server).",
                code="invalid_api_key",
                param=None,
            )
        if path == "/v1/models":
            if method != "GET":
                raise ApiError(405, f"method {method} is not allowed on {path}", code=None)
            await self._send_json(send, 200, models_body())
            return
        if path.startswith("/v1/models/"):
            wanted = path[len("/v1/models/") :]
            for model in models_body()["data"]:
                if model["id"] == wanted:
                    await self._send_json(send, 200, model)
                    return
            if wanted in ROUTER_MODELS:
                await self._send_json(send, 200, model_object(wanted))
                return
            raise ApiError(404, f"The model `{wanted}` does not exist.", code="model_not_found")
        if self.desk.handles(path):
            await self._batch_api(scope, receive, send, method, path)
            return
        if path not in ("/v1/chat/completions", "/v1/responses"):
            raise ApiError(404, f"unknown path {scope['path']!r}", code="not_found")
        if method != "POST":
            raise ApiError(405, f"method {method} is not allowed on {path}", code=None)
        await self._chat(scope, receive, send, responses_api=path == "/v1/responses")

    async def _batch_api(
        self, scope: Scope, receive: Receive, send: Send, method: str, path: str
    ) -> None:
        """A files or batches request (uploads may be as large as a batch input file)."""
        body = await self._read_body(scope, receive, MAX_FILE_BYTES + 64 * 1024)
        content_type = ""
        for name, value in scope.get("headers", ()):
            if name == b"content-type":
                content_type = value.decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        status, out, media = await self.desk.handle(method, path, query, content_type, body)
        if isinstance(out, bytes):
            headers = [
                (b"content-type", media.encode()),
                (b"content-length", str(len(out)).encode()),
            ]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": out})
            return
        await self._send_json(send, status, out)

    async def _answer_lines(
        self, lines: Sequence[tuple[str, dict[str, Any]]], batch_id: str
    ) -> list[tuple[int, dict[str, Any]]]:
        """Batch lines ``(custom_id, body)`` answered as the online path answers their
        requests and billed at the batch price, in order (in the worker processes when the
        server has them); an unanswerable line gets the error the online path would send."""
        first = self._batch_lines
        self._batch_lines += len(lines)
        items = [(body, -(first + i + 1)) for i, (_, body) in enumerate(lines)]
        if self.workers is None:
            # the collector off while the slice is answered: a logprob answer is a thousand
            # small objects, and its passes would walk the server's memos again and again
            enabled = gc.isenabled()
            gc.disable()
            try:
                results = self.lines_answer(items)
            finally:
                if enabled:
                    gc.enable()
        else:
            results = await self.workers.answer(items)
        out = []
        for (custom_id, _), (status, response, bill) in zip(lines, results, strict=True):
            if bill is not None:
                self._bill(*bill, batch=(batch_id, custom_id))
            out.append((status, response))
        return out

    def line_answer(self, body: dict[str, Any], counter: int) -> LineResult:
        """One batch line's status, response body and bill (the arguments of ``_bill``;
        None for an error), given the counter the server assigned it; bills nothing."""
        return self.lines_answer([(body, counter)])[0]

    def lines_answer(self, items: Sequence[tuple[dict[str, Any], int]]) -> list[LineResult]:
        """:meth:`line_answer` of each ``(body, counter)``, in order.

        The score distributions of the logprob answers among them are worked out together
        first (`judgepanel_sim.judges.marginal.precompute`), with the bits each has alone.
        """
        asked = [self._line_request(body, counter) for body, counter in items]
        precompute(
            imp
            for line in asked
            if not isinstance(line, ApiError)
            if line[0].logprobs and not line[2] and line[1].model not in NO_LOGPROBS_MODELS
            if (imp := score_impression(line[1])) is not None
        )
        return [self._line_result(line) for line in asked]

    def _line_request(
        self, body: dict[str, Any], counter: int
    ) -> tuple[ParsedChat, SimRequest, bool] | ApiError:
        """A batch line parsed, with its generator and whether it is answered malformed;
        the error its body gets instead, if it is not a valid request."""
        cfg = self.config
        malformed = (
            _uniforms(cfg.seed, counter, 1)[0] < cfg.malformed_rate if cfg.malformed_rate else False
        )
        try:
            chat = parse_chat(body)
        except ApiError as err:
            return err
        return chat, sim_request(chat, cfg.seed, counter), malformed

    def _line_result(self, line: tuple[ParsedChat, SimRequest, bool] | ApiError) -> LineResult:
        """The answer of one parsed batch line (see :meth:`line_answer`)."""
        if isinstance(line, ApiError):
            return line.status, line.body(), None
        chat, req, malformed = line
        cfg = self.config
        try:
            answers = self._answers(chat, req, malformed, "")
        except ApiError as err:
            return err.status, err.body(), None
        prompt_tokens = chat.prompt_tokens()
        completion_tokens = sum(a.completion_tokens for a in answers)
        dollars = batch_cost(self.prices, chat.model, prompt_tokens, 0, completion_tokens)
        bill = (chat.model, chat.seed, prompt_tokens, completion_tokens, 0, dollars, len(answers))
        extra: dict[str, Any] = {}
        if self.cache is not None:  # batch lines are not served from the prompt cache
            extra["prompt_tokens_details"] = {"cached_tokens": 0}
        if cfg.report_cost:
            extra["cost"] = dollars
        body_out = completion_body(chat.model, answers, prompt_tokens, self.fingerprint, extra)
        return 200, body_out, bill

    @staticmethod
    def _parse(raw: bytes, responses_api: bool) -> ParsedChat:
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(
                400, f"the request body is not valid JSON ({exc.msg})", param=None
            ) from None
        return parse_chat(responses.chat_body(body) if responses_api else body)

    def _admit(
        self, scope: Scope, raw: bytes, responses_api: bool
    ) -> tuple[ParsedChat | None, ApiError | None, dict[str, str]]:
        """Parse the request and pass it through the rate limiter (which must exist).

        Returns the parsed request (or the error that parsing raised, to be sent once the
        request has taken its place in the fault schedule, as without limits) and the
        rate-limit headers. An unparsable request is not charged.

        Raises:
            ApiError: 429 when a bucket is short.
        """
        assert self.limiter is not None
        key = key_of(self._bearer(scope))
        try:
            chat = self._parse(raw, responses_api)
        except ApiError as err:
            return None, err, self.limiter.peek(key)
        cap = chat.max_tokens if chat.max_tokens is not None else TPM_DEFAULT_COMPLETION
        decision = self.limiter.admit(key, chat.model, chat.prompt_tokens() + cap * chat.choices)
        if decision.error is not None:
            raise decision.error
        return chat, None, decision.headers

    async def _chat(
        self, scope: Scope, receive: Receive, send: Send, *, responses_api: bool = False
    ) -> None:
        raw = await self._read_body(scope, receive)
        chat: ParsedChat | None = None
        bad: ApiError | None = None
        limit_headers: dict[str, str] = {}
        if self.limiter is not None:
            chat, bad, limit_headers = self._admit(scope, raw, responses_api)
        try:
            await self._answer(scope, receive, send, raw, responses_api, chat, bad, limit_headers)
        except ApiError as err:
            err.headers = {**limit_headers, **err.headers}
            raise

    async def _answer(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        raw: bytes,
        responses_api: bool,
        chat: ParsedChat | None,
        bad: ApiError | None,
        headers: dict[str, str],
    ) -> None:
        """Answer an admitted request (``chat``/``bad``: parsed already by the limiter)."""
        cfg = self.config
        self.counter += 1
        counter = self.counter
        if cfg.latency_ms > 0:
            await asyncio.sleep(cfg.latency_ms / 1000.0)
        u_fault, u_kind, u_malformed = _uniforms(cfg.seed, counter, 3)
        if u_fault < cfg.timeout_rate:
            await self._stall(receive)
            return
        if u_fault < cfg.timeout_rate + cfg.error_rate:
            if u_kind < 0.5:
                wait = cfg.retry_after_s
                raise ApiError(
                    429,
                    f"Rate limit reached for requests (simulated). Please retry after {wait:g} s.",
                    type="requests",
                    code="rate_limit_exceeded",
                    param=None,
                    headers={
                        "retry-after": f"{max(1, round(wait))}",
                        "retry-after-ms": f"{round(wait * 1000)}",
                    },
                )
            raise ApiError(
                500,
                "The server had an error while processing your request (simulated).",
                type="server_error",
                code="internal_error",
                param=None,
            )
        if bad is not None:
            raise bad
        if chat is None:
            chat = self._parse(raw, responses_api)
        answers = self._answers(
            chat,
            sim_request(chat, cfg.seed, counter),
            u_malformed < cfg.malformed_rate,
            self._bearer(scope) if cfg.echo_key else "",
        )
        prompt_tokens = chat.prompt_tokens()
        completion_tokens = sum(a.completion_tokens for a in answers)
        cached = self.cache.answer(chat) if self.cache is not None else 0
        dollars = cost(self.prices, chat.model, prompt_tokens, cached, completion_tokens)
        self._bill(
            chat.model, chat.seed, prompt_tokens, completion_tokens, cached, dollars, len(answers)
        )
        extra: dict[str, Any] = {}
        if self.cache is not None:
            extra["prompt_tokens_details"] = {"cached_tokens": cached}
        if cfg.report_cost:
            extra["cost"] = dollars
        if responses_api:
            cost_only = {"cost": dollars} if cfg.report_cost else None
            body_out = responses.response_body(
                chat.model, answers[0], prompt_tokens, cached, cost_only
            )
            await self._send_json(send, 200, body_out, headers)
        elif chat.stream:
            events = sse.chunks(
                chat.model, answers, prompt_tokens, self.fingerprint, chat.include_usage, extra
            )
            await self._send_events(send, events, headers)
        else:
            body_out = completion_body(chat.model, answers, prompt_tokens, self.fingerprint, extra)
            await self._send_json(send, 200, body_out, headers)

    async def _send_events(
        self, send: Send, events: Any, extra: dict[str, str] | None = None
    ) -> None:
        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache"),
        ]
        for k, v in (extra or {}).items():
            headers.append((k.lower().encode("latin-1"), v.encode("latin-1")))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for event in events:
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _answers(
        self, chat: ParsedChat, req: SimRequest, malformed: bool, bearer: str
    ) -> list[Answer]:
        """The sampled answers of ``chat`` (``req``: as a handler sees it), ``n`` or one
        for an alias that ignores ``n`` (one generator, drawn in turn); the first is
        :func:`answer_chat`'s."""
        cfg = self.config
        out = []
        for _ in range(chat.choices):
            text = answer_text(req, malformed=malformed)
            if cfg.echo_key:
                text = _echo(text, bearer)
            content, completion_tokens, finish = truncate_answer(text, chat.max_tokens)
            logprobs = None
            if chat.logprobs and req.model in NO_LOGPROBS_MODELS:
                # None sent, but drawn all the same: the logprobs draw one uniform a token
                # from the generator that the request's next choice is sampled from
                req.rng.random(len(tokens(content)))
            elif chat.logprobs:
                logprobs = answer_logprobs(
                    content,
                    chat.top_logprobs,
                    req.rng,
                    chat.temperature,
                    None if malformed else score_marginal(req),
                    truncated=finish == "length",
                    as_json=not chat.stream,  # a stream sends them a token at a time
                )
            out.append(Answer(content, completion_tokens, finish, logprobs))
        return out


def score_marginal(req: SimRequest) -> ScoreMarginal | None:
    """The distribution the score of ``req``'s answer is drawn from, ``None`` where its
    handler writes no sampled score (VAB and VisionQ letters keep descriptive logprobs)."""
    marginal = getattr(find_handler(req), "score_marginal", None)
    return marginal(req) if marginal is not None else None


def score_impression(req: SimRequest) -> Impression | None:
    """What :func:`score_marginal` of ``req`` integrates, ``None`` where its handler does
    not say or cannot read the request (its answer then reports why)."""
    impression = getattr(find_handler(req), "score_impression", None)
    try:
        return impression(req) if impression is not None else None
    except (ValueError, ApiError):
        return None


def _echo(text: str, token: str) -> str:
    """``text`` carrying ``token``: inside a JSON object answer (so it reaches a parsed
    answer), else appended."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        return json.dumps({**obj, "reason": f"{obj.get('reason', '')} (key {token})"})
    return f"{text}\n(key {token})"


def make_app(config: SimConfig | None = None) -> SimApp:
    """The ASGI app for ``config`` (default: no faults, seed 0)."""
    return SimApp(config or SimConfig())


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _write_port(path: Path, port: int) -> None:
    """Write the port atomically, so a reader never sees a partial number."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{port}\n", encoding="ascii")
    os.replace(tmp, path)


def _make_server(config: SimConfig, sock: socket.socket) -> Any:
    import uvicorn

    class _Server(uvicorn.Server):
        # uvicorn re-raises a caught SIGTERM/SIGINT after shutting down, which turns a
        # clean stop into a signal exit; here a signal just asks for a graceful exit.
        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {
                sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)
            }
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    uv_config = uvicorn.Config(
        make_app(config),
        loop="uvloop",
        http="httptools",
        lifespan="off",
        access_log=False,
        proxy_headers=False,  # no proxy in front; spares a middleware call per request
        log_level="warning",
        timeout_graceful_shutdown=1,
        timeout_keep_alive=30,
        backlog=2048,
    )
    return _Server(uv_config)


async def serve(config: SimConfig, host: str, port: int, port_file: Path | None) -> None:
    """Serve until SIGTERM/SIGINT; write the bound port to ``port_file`` once accepting."""
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    server = _make_server(config, sock)
    try:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                await task  # startup failed: surface the error
                return
            await asyncio.sleep(0.01)
        if port_file is not None:
            _write_port(port_file, bound)
        await task
    finally:
        server.config.app.close()


def serve_command(config: SimConfig, *, host: str, port: int, port_file: Path | None = None) -> int:
    """``judgepanel sim-server``: run the simulated judge server on ``config`` in the
    foreground (``config.prices``: a JSON or YAML price file replacing the simulator's
    own table, checked before anything listens)."""
    if config.prices is not None:
        try:
            load_prices(config.prices)
        except ValueError as exc:
            print(f"judgepanel sim-server: {exc}", file=sys.stderr)
            return BAD_INPUT
    try:
        uvloop.run(serve(config, host, port, port_file))
    except OSError as exc:
        print(f"judgepanel sim-server: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        return BAD_INPUT
    return OK
