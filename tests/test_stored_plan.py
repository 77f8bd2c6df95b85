"""A plan whose calls are (mostly) stored: read from the store once, each digest made once.

A scoring run on a plan the store holds already (a notebook re-running its scoring cell, the
temperature run's calls shared with the EVA and PARA runs) reads what the store holds in
one query, works each call's digest out once, and names no call by its batch id unless it
sends it; a run that sends reads the store again only after writing to it, and stores what
a run from scratch stores.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pandas as pd
import pytest

from judgepanel.core.batch import run_batches
from judgepanel.core.calls import CallKey, CallSpec, key_digest, seed_from_key
from judgepanel.core.client import run_calls
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.core.scoring import plan_target
from judgepanel.core.settings import ScoreRequest, ScoreSettings, resolve_settings
from judgepanel.core.store import CallResult, Store
from judgepanel.studies.vab.protocol import plan_calls  # (importing a study registers them all)
from tests.test_batch import answers, runs_file
from tests.test_scoring_cli import write_eva

DIGEST_QUERY = "SELECT key_digest FROM calls"
LINES_QUERY = "SELECT custom_id, key, seed, bound FROM batch_lines"


def _key(item: str = "a", temperature: float = 0.3, **kw: object) -> CallKey:
    fields = {
        "dataset": "eva",
        "item": item,
        "family": "aurora",
        "model": "sim-aurora-v1",
        "call_type": "holistic",
        "dimension": "",
        "repetition": 0,
        "temperature": temperature,
        "rubric_sha": "r" * 64,
        "prompt_hash": "p" * 64,
    }
    return CallKey(**{**fields, **kw})  # type: ignore[arg-type]


def test_digest_and_seed_are_the_recorded_formulas_and_the_digest_is_made_once() -> None:
    """What the store holds was digested and seeded by these formulas: they must not move."""
    keys = [
        _key(),
        _key("é/ü 画像", 0.1 + 0.2, repetition=7, dimension="light", call_type="dimension"),
        _key("x", 1.0, family="b", model="m/n:1", rubric_sha="", prompt_hash=""),
        _key("y", 0.0, repetition=123456),
    ]
    for k in keys:
        values = k.as_tuple()
        blob = "\x1f".join(repr(v) if isinstance(v, float) else str(v) for v in values)
        digest = int.from_bytes(
            hashlib.blake2b(blob.encode(), digest_size=8).digest(), "big", signed=True
        )
        seed_blob = "\x1f".join(str(v) for v in values).encode("utf-8")
        seed = int.from_bytes(hashlib.sha256(seed_blob).digest()[:4], "big") & 0x7FFFFFFF
        assert key_digest(k) == k.digest == digest
        assert seed_from_key(k) == seed
    k = keys[0]
    assert "digest" in vars(k)  # kept on the key once made
    twin = dataclasses.replace(k)
    assert twin == k and hash(twin) == hash(k) and "digest" not in vars(twin)
    assert dataclasses.asdict(k).keys() == dataclasses.asdict(twin).keys()
    other = dataclasses.replace(k, repetition=1)
    assert other.digest != k.digest


def test_completed_digests_of_several_datasets_in_one_query(tmp_path: Path) -> None:
    ok = CallResult(answer="7", value=7.0, parsed=None, status="ok", attempts=1)
    final = CallResult(
        answer="x", value=None, parsed=None, status="failed", reason="bad", attempts=1
    )
    retry = CallResult(
        answer=None, value=None, parsed=None, status="failed", reason="503 after 3 attempts",
        attempts=3,
    )  # fmt: skip
    rows = {
        _key("a"): ok,
        _key("b"): final,
        _key("c"): retry,
        _key("a", dataset="para"): ok,
        _key("b", dataset="para"): final,
        _key("a", dataset="ava"): ok,
    }
    with Store(tmp_path / "s.sqlite") as store:
        for key, result in rows.items():
            store.record(key, result)
        statements: list[str] = []
        store.connection.set_trace_callback(statements.append)
        both = store.completed_digests(["eva", "para"])
        assert len([s for s in statements if DIGEST_QUERY in s]) == 1
        assert both == store.completed_digests("eva") | store.completed_digests("para")
        digests = {k.dataset + k.item: k.digest for k in rows}
        assert both == {digests[n] for n in ("evaa", "evab", "paraa", "parab")}
        ok_only = store.completed_digests(("eva", "para"), include_failed=False)
        assert ok_only == {digests["evaa"], digests["paraa"]}
        assert store.completed_digests() == both | {digests["avaa"]}
        assert store.completed_digests([]) == set()


def _settings(tmp: Path, world: Path, store: Path, url: str) -> ScoreSettings:
    request = ScoreRequest(
        run="t-eva",
        runs_file=runs_file(tmp, world, store, batch=True, batch_poll=0.05),
        options={"endpoint": Endpoint(url), "progress": False},
        source="score_run",
    )
    return resolve_settings(request)


def _traced_batches(
    store_path: Path, specs: list[CallSpec], settings: ScoreSettings
) -> tuple[object, list[str]]:
    statements: list[str] = []
    with Store(store_path) as store:
        store.connection.set_trace_callback(statements.append)
        summary = run_batches(specs, store, prices=settings.prices, options=settings.send)
    return summary, statements


@pytest.mark.timeout(240)
def test_a_stored_plan_is_read_once_and_a_partial_one_resumes_as_from_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, full = write_eva(tmp_path / "eva", n_images=4), tmp_path / "full.sqlite"
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    with start_sim_server(SimConfig()) as server:
        settings = _settings(tmp_path, world, full, server.base_url)
        specs = plan_target(settings.targets[0], settings)
        first, statements = _traced_batches(full, specs, settings)
        assert first.sent == first.ok == len(specs) == 4 * 2 * (3 + 5)
        chunks = len({s.key.model for s in specs})  # one file a model at this size
        # each ingested chunk's lines are read once (matched, then written)
        assert len([s for s in statements if LINES_QUERY in s]) == chunks
        reference = answers(full)

        again, statements = _traced_batches(full, specs, settings)
        assert (again.planned, again.skipped, again.sent, again.unsent) == (len(specs),) * 2 + (
            0,
            0,
        )
        assert len([s for s in statements if DIGEST_QUERY in s]) == 1
        assert not [s for s in statements if LINES_QUERY in s]

        # the same plan online: one query too
        statements.clear()
        with Store(full) as store:
            store.connection.set_trace_callback(statements.append)
            online = run_calls(specs, store, prices=settings.prices, options=settings.send)
        assert (online.skipped, online.sent) == (len(specs), 0)
        assert len([s for s in statements if DIGEST_QUERY in s]) == 1

        # one image's calls gone: only they are sent, and the store is as it was
        partial = tmp_path / "partial.sqlite"
        with Store(full, readonly=True) as src, Store(partial) as dst:
            src.connection.backup(dst.connection)
        with Store(partial) as store, store.connection as conn:
            conn.execute("DELETE FROM calls WHERE item = '1002'")
        resumed, statements = _traced_batches(partial, specs, settings)
    per_image = 2 * (3 + 5)
    assert (resumed.skipped, resumed.sent, resumed.ok, resumed.unsent) == (
        len(specs) - per_image,
        per_image,
        per_image,
        0,
    )
    # read before sending, and once more after the results were written
    assert len([s for s in statements if DIGEST_QUERY in s]) == 2
    pd.testing.assert_frame_equal(answers(partial), reference)


def test_the_calls_of_one_vab_set_share_each_image_string() -> None:
    """A set's images are encoded once for all its calls: one string each, which the
    request encoder recognises without scanning it again."""
    rng = __import__("numpy").random.default_rng(0)
    from io import BytesIO

    from PIL import Image

    def png(i: int) -> bytes:
        out = BytesIO()
        arr = rng.integers(0, 255, size=(8, 8, 3), dtype="uint8")
        Image.fromarray(arr).save(out, format="PNG")
        return out.getvalue() + bytes([i])  # distinct bytes, each a readable PNG

    tasks = pd.DataFrame(
        {
            "task_id": ["t1"],
            "n_images": [3],
            "labels": [("p", "q", "r")],
            "images": [tuple(png(i) for i in range(3))],
        }
    )
    specs = plan_calls(tasks, {"aurora": "sim-aurora-v1", "basalt": "sim-basalt-v1"})
    assert len(specs) > 6

    built = [s.build() for s in specs]  # all alive at once: no address is reused
    seen = [
        {
            id(part["image_url"]["url"])
            for msg in messages
            if isinstance(msg["content"], list)
            for part in msg["content"]
            if part.get("type") == "image_url"
        }
        for messages in built
    ]
    assert all(len(u) == 3 for u in seen)
    assert len(set().union(*seen)) == 3  # three strings for every call of the set
