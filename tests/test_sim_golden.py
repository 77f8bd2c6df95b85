"""Every byte the simulated judges send stays as recorded (see ``tests/sim_golden.py``).

The digests in ``tests/data/sim_golden.json`` were recorded before the server was made
cheaper; any answer, usage or error that differs names the first request it differs on.
"""

from __future__ import annotations

import json

import pytest
from sim_golden import GOLDEN_FILE, SERVERS, corpus, in_process_digests, requests_digest, send_all


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def requests(golden: dict):
    reqs = corpus()
    assert requests_digest(reqs) == golden["requests_sha256"], (
        "the golden request corpus itself changed (prompt builders, images or image "
        "libraries); re-record it with `python tests/sim_golden.py --write` on code known "
        "to answer as before"
    )
    return reqs


def _first_difference(got: dict[str, str], want: dict[str, str]) -> str | None:
    for name, digest in want.items():
        if got.get(name) != digest:
            return name
    extra = sorted(set(got) - set(want))
    return extra[0] if extra else None


def test_corpus_is_varied(requests):
    names = [r.name.split("-", 1)[1] for r in requests]
    assert len(requests) >= 200
    for kind in (
        "holistic",
        "dimension",
        "sham",
        "foreign",
        "n3",
        "logprobs",
        "stream",
        "responses",
        "vab_top1",
        "vab_bot1",
        "vab_tb1",
        "visionq",
        "bad",
    ):
        assert any(n.startswith(kind) for n in names), kind


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_server_responses_are_byte_identical(server, requests, golden, sim_server_factory):
    proc = sim_server_factory(**SERVERS[server])
    got = dict(send_all(proc.base_url, requests))
    assert _first_difference(got, golden[server]) is None, (
        f"{server} server: the response to {_first_difference(got, golden[server])} changed"
    )


def test_in_process_answers_are_identical(requests, golden):
    got = dict(in_process_digests(requests))
    assert _first_difference(got, golden["in_process"]) is None, (
        f"in-process answer to {_first_difference(got, golden['in_process'])} changed"
    )
