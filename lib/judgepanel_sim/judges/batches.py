"""The simulated batch API: ``/v1/files`` and ``/v1/batches``, as OpenAI's are shaped.

A batch's input file is a JSONL of ``{custom_id, method, url, body}`` lines. Creating a
batch validates the file (one model, unique ``custom_id``s, the batch's endpoint) and then
answers its lines in the server's own process, on its event loop between other requests,
without an HTTP request per line: each body goes through the same parser and judges as an
online request, so a line carrying an online request's ``seed`` gets that request's answer.
Batches are answered one at a time, in the order they were created, as a provider's queue
would take them: the first ends while the later ones wait, so a client reads its results
while the server answers the next, instead of all of them ending together.
Answers go to an output file, failed lines to an error file, both of OpenAI's line shape
``{id, custom_id, response: {status_code, request_id, body}, error}``.

Simulated provider behaviour (:class:`BatchBehaviour`): a delay before processing, a share
of lines answered 500, a batch that expires after answering some of its lines (the rest
are ``batch_expired`` errors), and batches that fail validation. Files and batches live in
memory for the server's lifetime.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from judgepanel_sim.judges.formdata import parse_form
from judgepanel_sim.judges.protocol import ApiError, compact_json

BATCH_ENDPOINTS = ("/v1/chat/completions",)
"""The endpoints a simulated batch may target."""
MAX_LINES = 50_000
"""Requests one batch may hold (OpenAI's limit)."""
MAX_FILE_BYTES = 200 * 1024 * 1024
"""The largest file the files API accepts (OpenAI's limit for a batch input)."""
MAX_METADATA_KEYS = 16
LINES_PER_SLICE = 8
"""Lines answered between yields to the event loop, so that polls stay quick."""
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})

LinesAnswer = Callable[
    [Sequence[tuple[str, dict[str, Any]]], str], Awaitable[list[tuple[int, dict[str, Any]]]]
]
"""``await answer([(custom_id, body), ...], batch_id) -> [(status_code, response body), ...]``."""


@dataclass(frozen=True)
class BatchBehaviour:
    """How the simulated batch API behaves (everything off by default).

    Attributes:
        delay_s: seconds a batch stays ``validating`` before its lines are answered.
        fail_share: share of lines answered with a 500 error (seeded per batch and line).
        expire_after: a batch expires after answering this many lines (0: never).
        invalid: every batch fails validation.
    """

    delay_s: float = 0.0
    fail_share: float = 0.0
    expire_after: int = 0
    invalid: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.fail_share <= 1.0:
            raise ValueError(f"batch fail share must lie in [0, 1], got {self.fail_share}")
        if self.delay_s < 0 or self.expire_after < 0:
            raise ValueError("batch delay and expiry must be >= 0")


@dataclass
class SimFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def obj(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


@dataclass
class SimBatch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, str] | None
    created_at: int
    ordinal: int
    status: str = "validating"
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] | None = None
    stamps: dict[str, int] = field(default_factory=dict)
    cancel: bool = False

    def obj(self) -> dict[str, Any]:
        stamp = self.stamps.get
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": None if self.errors is None else {"object": "list", "data": self.errors},
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "in_progress_at": stamp("in_progress"),
            "expires_at": self.created_at + 24 * 3600,
            "finalizing_at": stamp("finalizing"),
            "completed_at": stamp("completed"),
            "failed_at": stamp("failed"),
            "expired_at": stamp("expired"),
            "cancelling_at": stamp("cancelling"),
            "cancelled_at": stamp("cancelled"),
            "request_counts": {
                "total": self.total,
                "completed": self.completed,
                "failed": self.failed,
            },
            "metadata": self.metadata,
        }


def _file_lines(data: bytes) -> Iterator[bytes]:
    """The lines of a file, as ``data.split(b"\\n")`` gives them, one at a time: a 200 MB
    input is not copied whole a second time."""
    start = 0
    while (end := data.find(b"\n", start)) >= 0:
        yield data[start:end]
        start = end + 1
    yield data[start:]


def _uniform(*parts: object) -> float:
    blob = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(blob, digest_size=8).digest(), "big") / 2.0**64


def _line_out(custom_id: str, status: int | None, body: Any, error: Any = None) -> bytes:
    response = (
        None
        if status is None
        else {"status_code": status, "request_id": f"req_{uuid.uuid4().hex[:24]}", "body": body}
    )
    line = {
        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
        "custom_id": custom_id,
        "response": response,
        "error": error,
    }
    return compact_json(line) + b"\n"


def _list_page(items: list[dict[str, Any]], query: dict[str, list[str]]) -> dict[str, Any]:
    """A cursor page of ``items`` (newest first) after ``?after=ID``, ``?limit=N`` long."""
    try:
        limit = int(query.get("limit", ["20"])[0])
    except ValueError:
        raise ApiError(400, "limit must be an integer", param="limit") from None
    if not 1 <= limit <= 100:
        raise ApiError(400, "limit must lie between 1 and 100", param="limit")
    after = query.get("after", [None])[0]
    start = 0
    if after is not None:
        ids = [i["id"] for i in items]
        if after not in ids:
            raise ApiError(404, f"no object {after!r} to list after", param="after")
        start = ids.index(after) + 1
    page = items[start : start + limit]
    return {
        "object": "list",
        "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": start + limit < len(items),
    }


_SIMULATED_FAILURE = ApiError(
    500,
    "The server had an error while processing this request (simulated).",
    type="server_error",
    code="internal_error",
).body()


class BatchDesk:
    """The files and batches of one server, and the tasks that answer batches."""

    def __init__(
        self,
        answer: LinesAnswer,
        behaviour: BatchBehaviour,
        seed: int = 0,
        *,
        slice_lines: int = LINES_PER_SLICE,
        slices_at_once: int = 1,
    ) -> None:
        """``answer`` takes ``slice_lines`` lines at a time, ``slices_at_once`` slices of
        a batch in flight (more than one where worker processes answer them)."""
        self.answer = answer
        self.behaviour = behaviour
        self.seed = seed
        self.slice_lines = slice_lines
        self.slices_at_once = slices_at_once
        self.files: dict[str, SimFile] = {}
        self.batches: dict[str, SimBatch] = {}
        self._tasks: set[asyncio.Task] = set()
        # one batch answered at a time, oldest first (a lock wakes its waiters in order): the
        # first batch ends while the others wait, and its results can be read meanwhile
        self._turn = asyncio.Lock()

    # -- dispatch --------------------------------------------------------------------------

    def handles(self, path: str) -> bool:
        return path in ("/v1/files", "/v1/batches") or path.startswith(
            ("/v1/files/", "/v1/batches/")
        )

    async def handle(
        self, method: str, path: str, query: str, content_type: str, body: bytes
    ) -> tuple[int, Any, str]:
        """``(status, body, media type)`` of one files or batches request; a ``bytes``
        body is sent as it is (a file's content)."""
        q = parse_qs(query)
        parts = path.split("/")[2:]  # ["files", id?, "content"?]
        head, rest = parts[0], parts[1:]
        if head == "files":
            return self._files(method, rest, q, content_type, body)
        return self._batches(method, rest, q, body)

    @staticmethod
    def _allow(method: str, wanted: str, path: str) -> None:
        if method != wanted:
            raise ApiError(405, f"method {method} is not allowed on {path}", code=None)

    # -- files -----------------------------------------------------------------------------

    def _files(
        self, method: str, rest: list[str], q: dict, content_type: str, body: bytes
    ) -> tuple[int, Any, str]:
        if not rest:
            if method == "GET":
                items = [f.obj() for f in _newest_first(self.files.values())]
                return 200, _list_page(items, q), "application/json"
            self._allow(method, "POST", "/v1/files")
            return 200, self._upload(content_type, body).obj(), "application/json"
        found = self.files.get(rest[0])
        if found is None:
            raise ApiError(404, f"No such File object: {rest[0]}", code=None, param="id")
        if rest[1:] == ["content"]:
            self._allow(method, "GET", "/v1/files/{id}/content")
            return 200, found.data, "application/octet-stream"
        if rest[1:]:
            raise ApiError(404, f"unknown path /v1/files/{'/'.join(rest)}", code="not_found")
        if method == "DELETE":
            del self.files[found.id]
            return 200, {"id": found.id, "object": "file", "deleted": True}, "application/json"
        self._allow(method, "GET", "/v1/files/{id}")
        return 200, found.obj(), "application/json"

    def _upload(self, content_type: str, body: bytes) -> SimFile:
        form = parse_form(content_type, body)
        purpose = form.get("purpose")
        upload = form.get("file")
        if purpose is None or upload is None or upload.filename is None:
            raise ApiError(400, "an upload needs a `purpose` field and a `file` part")
        if purpose.data.decode("utf-8", "replace") not in ("batch", "user_data"):
            raise ApiError(400, "this server keeps files of purpose `batch` only", param="purpose")
        if len(upload.data) > MAX_FILE_BYTES:
            raise ApiError(400, f"a file may hold at most {MAX_FILE_BYTES} bytes", param="file")
        made = SimFile(
            f"file-{uuid.uuid4().hex[:24]}",
            upload.filename,
            purpose.data.decode("utf-8"),
            upload.data,
            int(time.time()),
        )
        self.files[made.id] = made
        return made

    def _store_file(self, name: str, data: bytes) -> str:
        made = SimFile(
            f"file-{uuid.uuid4().hex[:24]}", name, "batch_output", data, int(time.time())
        )
        self.files[made.id] = made
        return made.id

    # -- batches ---------------------------------------------------------------------------

    def _batches(self, method: str, rest: list[str], q: dict, body: bytes) -> tuple[int, Any, str]:
        if not rest:
            if method == "GET":
                items = [b.obj() for b in _newest_first(self.batches.values())]
                return 200, _list_page(items, q), "application/json"
            self._allow(method, "POST", "/v1/batches")
            return 200, self._create(body).obj(), "application/json"
        found = self.batches.get(rest[0])
        if found is None:
            raise ApiError(404, f"No such Batch object: {rest[0]}", code=None, param="id")
        if rest[1:] == ["cancel"]:
            self._allow(method, "POST", "/v1/batches/{id}/cancel")
            if found.status not in TERMINAL:
                found.cancel = True
                found.status = "cancelling"
                found.stamps["cancelling"] = int(time.time())
            return 200, found.obj(), "application/json"
        if rest[1:]:
            raise ApiError(404, f"unknown path /v1/batches/{'/'.join(rest)}", code="not_found")
        self._allow(method, "GET", "/v1/batches/{id}")
        return 200, found.obj(), "application/json"

    def _create(self, raw: bytes) -> SimBatch:
        try:
            req = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(400, f"the request body is not valid JSON ({exc})") from None
        if not isinstance(req, dict):
            raise ApiError(400, "the request body must be a JSON object")
        file_id = req.get("input_file_id")
        if file_id not in self.files:
            raise ApiError(400, f"no input file {file_id!r}", param="input_file_id")
        if self.files[file_id].purpose != "batch":
            raise ApiError(400, "the input file must have purpose `batch`", param="input_file_id")
        endpoint = req.get("endpoint")
        if endpoint not in BATCH_ENDPOINTS:
            raise ApiError(
                400, f"endpoint must be one of {list(BATCH_ENDPOINTS)}", param="endpoint"
            )
        if req.get("completion_window") != "24h":
            raise ApiError(400, "completion_window must be '24h'", param="completion_window")
        metadata = req.get("metadata")
        if metadata is not None:
            if not isinstance(metadata, dict) or len(metadata) > MAX_METADATA_KEYS:
                raise ApiError(400, "metadata must map at most 16 keys", param="metadata")
            for k, v in metadata.items():
                if not isinstance(v, str) or len(k) > 64 or len(v) > 512:
                    raise ApiError(400, "metadata keys <= 64 and values <= 512 chars", "metadata")
        batch = SimBatch(
            id=f"batch_{uuid.uuid4().hex[:24]}",
            input_file_id=file_id,
            endpoint=endpoint,
            completion_window="24h",
            metadata=metadata,
            created_at=int(time.time()),
            ordinal=len(self.batches),
        )
        self.batches[batch.id] = batch
        task = asyncio.get_running_loop().create_task(self._run(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return batch

    def _validate(self, batch: SimBatch) -> list[tuple[str, dict[str, Any]]]:
        """The lines of the batch's input, or the errors that fail it (set on the batch)."""
        errors: list[dict[str, Any]] = []
        lines: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        models: set[str] = set()

        def bad(code: str, message: str, line: int | None) -> None:
            errors.append({"code": code, "message": message, "param": None, "line": line})

        if self.behaviour.invalid:
            bad("invalid_request", "this batch was set to fail validation (simulated)", None)
        for number, raw in enumerate(_file_lines(self.files[batch.input_file_id].data), start=1):
            if not raw or raw.isspace():
                continue
            try:
                line = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError):
                bad("invalid_json_line", "this line is not valid JSON", number)
                continue
            cid = line.get("custom_id") if isinstance(line, dict) else None
            if not isinstance(cid, str) or not cid:
                bad("missing_custom_id", "every line needs a custom_id string", number)
                continue
            if cid in seen:
                bad("duplicate_custom_id", f"custom_id {cid!r} appears twice", number)
            seen.add(cid)
            if line.get("method") != "POST" or line.get("url") != batch.endpoint:
                bad("invalid_url", f"every line must POST to {batch.endpoint}", number)
            body = line.get("body")
            if not isinstance(body, dict):
                bad("invalid_body", "every line needs a JSON object body", number)
                continue
            models.add(str(body.get("model")))
            lines.append((cid, body))
        if len(models) > 1:
            bad("mismatched_model", f"the lines name several models: {sorted(models)}", None)
        if not lines and not errors:
            bad("empty_file", "the input file holds no requests", None)
        if len(lines) > MAX_LINES:
            bad("too_many_requests", f"a batch may hold at most {MAX_LINES} requests", None)
        if errors:
            batch.errors = errors[:100]
            return []
        return lines

    async def _run(self, batch: SimBatch) -> None:
        """Validate, wait, then answer every line and write the output and error files, in
        the batches' turn: one batch at a time, in the order they were created."""
        behaviour = self.behaviour
        lines = self._validate(batch)
        if batch.errors is not None:
            self._finish(batch, "failed")
            return
        batch.total = len(lines)
        if behaviour.delay_s:
            await asyncio.sleep(behaviour.delay_s)
        async with self._turn:
            await self._answer(batch, lines)

    async def _answer(self, batch: SimBatch, lines: list[tuple[str, dict[str, Any]]]) -> None:
        """Answer the lines of ``batch`` (up to its expiry, or a cancel) and end it."""
        behaviour = self.behaviour
        output: list[bytes] = []
        errors: list[bytes] = []
        done = 0
        if not batch.cancel:
            batch.status = "in_progress"
            batch.stamps["in_progress"] = int(time.time())
            # lines answered before the batch expires (all when it does not)
            limit = min(len(lines), behaviour.expire_after or len(lines))
            window = self.slice_lines * self.slices_at_once
            while done < limit and not batch.cancel:
                # a window of slices in flight at once, answered in order; a cancel is seen
                # between windows (between slices without worker processes)
                chunk = lines[done : min(done + window, limit)]
                failing = [
                    _uniform("batch-fail", self.seed, batch.ordinal, cid) < behaviour.fail_share
                    for cid, _ in chunk
                ]
                asked = [line for line, fails in zip(chunk, failing, strict=True) if not fails]
                slices = [
                    asked[i : i + self.slice_lines] for i in range(0, len(asked), self.slice_lines)
                ]
                parts = await asyncio.gather(*(self.answer(part, batch.id) for part in slices))
                answers = iter([answer for part in parts for answer in part])
                for (cid, _), fails in zip(chunk, failing, strict=True):
                    status, out = (500, _SIMULATED_FAILURE) if fails else next(answers)
                    (output if status == 200 else errors).append(_line_out(cid, status, out))
                    batch.completed += status == 200
                    batch.failed += status != 200
                done += len(chunk)
                await asyncio.sleep(0)  # let polls and online requests in
        if done < len(lines):
            cancelled = batch.cancel
            error = {
                "code": "batch_cancelled" if cancelled else "batch_expired",
                "message": "This request was not executed: the batch was cancelled."
                if cancelled
                else "This request could not be executed before the completion window expired.",
            }
            for cid, _ in lines[done:]:
                errors.append(_line_out(cid, None, None, error))
                batch.failed += 1
            state = "cancelled" if cancelled else "expired"
        else:
            state = "completed"
            batch.status = "finalizing"
            batch.stamps["finalizing"] = int(time.time())
        if output:
            batch.output_file_id = self._store_file(f"{batch.id}_output.jsonl", b"".join(output))
        if errors:
            batch.error_file_id = self._store_file(f"{batch.id}_error.jsonl", b"".join(errors))
        self._finish(batch, state)

    @staticmethod
    def _finish(batch: SimBatch, state: str) -> None:
        batch.status = state
        batch.stamps[state] = int(time.time())


def _newest_first(items: Any) -> list[Any]:
    """Files or batches as a listing orders them: newest first, later creations first."""
    return sorted(reversed(list(items)), key=lambda item: -item.created_at)
