"""The simulator's batch API through the official SDK, with request shapes of the kind
OpenAI's batch guide shows (ids like ``request-1``, a plain text prompt) and the image
lines judgepanel sends: files, batches, listing by metadata, cancelling, validation."""

from __future__ import annotations

import itertools
import json
import re
import time
from pathlib import Path

import openai
import pytest

from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.core.prompts import bytes_data_url
from judgepanel.core.rubric import load_rubric
from judgepanel_sim.judges import marginal
from judgepanel_sim.judges.protocol import compact_json
from judgepanel_sim.judges.server import SimApp


def _line(cid: str, model: str = "sim-cobalt-v1", seed: int | None = 1) -> str:
    body = {
        "model": model,
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Rate this photograph from 1 to 10. Reply with a number."},
        ],
        "max_tokens": 1000,
    }
    if seed is not None:
        body["seed"] = seed
    return json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
                       "body": body})  # fmt: skip


def _wait(client: openai.OpenAI, batch_id: str, timeout: float = 30.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        batch = client.batches.retrieve(batch_id)
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return batch
        assert time.monotonic() < deadline, batch.status
        time.sleep(0.05)


@pytest.fixture(scope="module")
def client():  # type: ignore[no-untyped-def]
    with start_sim_server(SimConfig(batch_delay_s=0.5)) as server:
        yield openai.OpenAI(api_key="sim-local", base_url=server.base_url)


def test_files_upload_list_retrieve_read_and_delete(client: openai.OpenAI) -> None:
    data = "\n".join(_line(f"request-{i}") for i in range(3)).encode()
    made = client.files.create(file=("batchinput.jsonl", data), purpose="batch")
    assert (made.purpose, made.bytes, made.filename) == ("batch", len(data), "batchinput.jsonl")
    assert client.files.retrieve(made.id).id == made.id
    assert made.id in [f.id for f in client.files.list()]
    assert client.files.content(made.id).content == data
    assert client.files.delete(made.id).deleted
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(made.id)


def test_a_batch_answers_each_line_as_the_online_request_and_is_found_by_metadata(
    client: openai.OpenAI,
) -> None:
    lines = [_line("request-1", seed=11), _line("request-2", seed=None)]
    made = client.files.create(file=("in.jsonl", "\n".join(lines).encode()), purpose="batch")
    batch = client.batches.create(input_file_id=made.id, endpoint="/v1/chat/completions",
                                  completion_window="24h", metadata={"tag": "find-me"})  # fmt: skip
    assert batch.status == "validating" and batch.metadata == {"tag": "find-me"}
    listed = [b for b in client.batches.list(limit=2) if (b.metadata or {}).get("tag") == "find-me"]
    assert [b.id for b in listed] == [batch.id]
    done = _wait(client, batch.id)
    assert done.status == "completed" and done.request_counts.completed == 2
    assert done.error_file_id is None
    out = [json.loads(x) for x in client.files.content(done.output_file_id).text.splitlines()]
    assert sorted(o["custom_id"] for o in out) == ["request-1", "request-2"]
    first = next(o for o in out if o["custom_id"] == "request-1")
    assert first["response"]["status_code"] == 200 and first["error"] is None
    online = client.chat.completions.create(**json.loads(lines[0])["body"])
    body = first["response"]["body"]
    assert body["choices"][0]["message"]["content"] == online.choices[0].message.content
    assert body["usage"]["prompt_tokens"] == online.usage.prompt_tokens


def test_a_cancelled_batch_returns_its_lines_as_cancelled(client: openai.OpenAI) -> None:
    made = client.files.create(file=("in.jsonl", "\n".join(_line(f"c{i}") for i in range(4))
                                     .encode()), purpose="batch")  # fmt: skip
    batch = client.batches.create(input_file_id=made.id, endpoint="/v1/chat/completions",
                                  completion_window="24h")  # fmt: skip
    assert client.batches.cancel(batch.id).status == "cancelling"
    done = _wait(client, batch.id)
    assert done.status == "cancelled" and done.output_file_id is None
    errors = [json.loads(x) for x in client.files.content(done.error_file_id).text.splitlines()]
    assert len(errors) == 4
    assert {e["error"]["code"] for e in errors} == {"batch_cancelled"}
    assert all(e["response"] is None for e in errors)


@pytest.mark.parametrize(
    ("lines", "code"),
    [
        ([_line("a"), _line("a")], "duplicate_custom_id"),
        ([_line("a"), _line("b", model="sim-dune-v1")], "mismatched_model"),
        (["{not json"], "invalid_json_line"),
        ([_line("a").replace("/v1/chat/completions", "/v1/embeddings")], "invalid_url"),
    ],
)
def test_a_file_that_breaks_the_rules_fails_validation(
    client: openai.OpenAI, lines: list[str], code: str
) -> None:
    made = client.files.create(file=("in.jsonl", "\n".join(lines).encode()), purpose="batch")
    batch = client.batches.create(input_file_id=made.id, endpoint="/v1/chat/completions",
                                  completion_window="24h")  # fmt: skip
    done = _wait(client, batch.id)
    assert done.status == "failed" and done.output_file_id is None
    assert code in [e.code for e in done.errors.data]


def test_bad_requests_get_openai_errors(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="no input file"):
        client.batches.create(input_file_id="file-none", endpoint="/v1/chat/completions",
                              completion_window="24h")  # fmt: skip
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_none")


def _masked(body: object) -> bytes:
    """A response body's bytes with its random id and its clock field blanked."""
    return re.sub(rb'"(id|created)":("chatcmpl-[0-9a-f]+"|\d+)', b"", compact_json(body))


def test_a_slice_of_lines_is_answered_as_each_line_alone(make_jpeg) -> None:
    """Batch lines answered together (their score distributions worked out on one grid)
    get the bytes and bills each gets alone: logprob and sampled lines, several families,
    prompts and temperatures, a model that sends no logprobs, malformed answers and a
    request that is refused."""
    rubric = load_rubric()
    urls = [bytes_data_url(make_jpeg(seed), "image/jpeg") for seed in (1, 2)]
    bodies = []
    for i, (model, url) in enumerate(
        itertools.product(["sim-aurora-v1", "sim-dune-v1", "sim-ember-v1"], urls)
    ):
        for j, (call_type, dim) in enumerate([("holistic", ""), ("dimension", "composition")]):
            body = {
                "model": model,
                "messages": rubric.messages(call_type, dim, url),
                "temperature": [0.3, 1.0, 0.0][(i + j) % 3],
                "max_tokens": 200,
                "seed": 10 * i + j,
            }
            if (i + j) % 4:
                body.update(logprobs=True, top_logprobs=[20, 2, 0][(i + j) % 3])
            bodies.append(body)
    bodies.insert(3, {"model": "sim-unknown", "messages": bodies[0]["messages"]})
    items = [(body, -(n + 1)) for n, body in enumerate(bodies)]
    config = SimConfig(malformed_rate=0.3, report_cost=True)
    together = SimApp(config).lines_answer(items)
    marginal._WORKED_OUT._data.clear()
    marginal._MEMO._data.clear()
    alone = [SimApp(config).line_answer(body, counter) for body, counter in items]
    assert [r[0] for r in together] == [r[0] for r in alone] and together[3][0] == 404
    assert [r[2] for r in together] == [r[2] for r in alone]
    assert [_masked(r[1]) for r in together] == [_masked(r[1]) for r in alone]
    assert sum(b"top_logprobs" in _masked(r[1]) for r in together) >= 4


def test_batches_are_answered_one_at_a_time_in_the_order_they_were_created(
    tmp_path: Path,
) -> None:
    """The first batch is answered whole before the second begins: its results can be
    read while the server answers the next one (all three wait half a second first, so
    they are all open when the answering starts)."""
    ledger = tmp_path / "ledger.jsonl"
    with start_sim_server(SimConfig(ledger=ledger, batch_delay_s=0.5)) as server:
        client = openai.OpenAI(api_key="sim-local", base_url=server.base_url)
        made = []
        for b in range(3):
            data = "\n".join(_line(f"b{b}-{i}", seed=100 * b + i) for i in range(40)).encode()
            upload = client.files.create(file=(f"in{b}.jsonl", data), purpose="batch")
            made.append(
                client.batches.create(
                    input_file_id=upload.id,
                    endpoint="/v1/chat/completions",
                    completion_window="24h",
                ).id
            )
        assert [_wait(client, b).status for b in made] == ["completed"] * 3
    billed = [json.loads(x)["batch"] for x in ledger.read_text().splitlines()]
    assert billed == [b for b in made for _ in range(40)]
