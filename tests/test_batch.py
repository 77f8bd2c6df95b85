"""Batch mode end to end: ``judgepanel score --batch`` against the simulator's batch API.

The same plan scored online and through batches stores the same answers (the batch lines
carry the online requests' seeds), the batch spend equals what the simulator billed, and
a client killed at any step of a batch run resumes without a call stored twice or a
request answered twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgepanel.core.batch import BatchBook
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.core.store import Store
from tests.test_scoring_cli import jp_inline, write_eva

ANSWER_COLUMNS = [
    "dataset",
    "item",
    "family",
    "kind",
    "dimension",
    "repetition",
    "answer",
    "value",
    "status",
    "attempts",
    "reasks",
    "billed",
    "seed",
    "prompt_tokens",
    "completion_tokens",
]


def runs_file(tmp: Path, eva_root: Path, store: Path, **profile: object) -> Path:
    runs = {
        "profiles": {
            "t": {
                "description": "test",
                "simulated": True,
                "store": str(store),
                "datasets": {"eva": {"kind": "eva", "root": str(eva_root)}},
                "families": {"aurora": "sim-aurora-v1", "cobalt": "sim-cobalt-v1"},
                "predeclared": ["aurora"],
                "concurrency": 8,
                "max_cost": 100.0,
                **profile,
            }
        },
        "scoring": {"eva": {"holistic_k": 3, "dimension_r": 1, "temperature": 0.3, "n_images": 4}},
        "prices": {
            "sim-aurora-v1": {"input": 0.30, "output": 2.50, "batch_discount": 0.5},
            "sim-cobalt-v1": {"input": 0.10, "output": 0.30, "batch_discount": 0.5},
        },
        "parameters": {"seed": 0},
        "runs": {"t-eva": {"profile": "t", "dataset": "eva", "notebooks": ["00_scoring"]}},
    }
    path = tmp / f"runs-{store.stem}.yaml"
    path.write_text(yaml.safe_dump(runs), encoding="utf-8")
    return path


def score(monkeypatch: pytest.MonkeyPatch, url: str, rf: Path, *extra: str) -> int:
    """``judgepanel score --run t-eva`` in this process; add ``--batch`` to batch it."""
    args = ["score", "--run", "t-eva", "--runs-file", str(rf), "--no-progress", *extra]
    if "--batch" in extra:
        args += ["--batch-poll", "0.05"]
    return jp_inline(monkeypatch, url, *args)


def ledger_lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def answers(store_path: Path) -> pd.DataFrame:
    with Store(store_path, readonly=True) as store:
        return store.frame(columns=ANSWER_COLUMNS).reset_index(drop=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_eva(tmp_path_factory.mktemp("batch-world") / "eva", n_images=4)


@pytest.mark.timeout(240)
def test_batch_and_online_store_the_same_answers_and_spend_equals_the_ledger(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    with start_sim_server(SimConfig(ledger=ledger)) as server:
        online = tmp_path / "online.sqlite"
        assert score(monkeypatch, server.base_url, runs_file(tmp_path, world, online)) == 0
        online_billed = ledger_lines(ledger)
        batched = tmp_path / "batched.sqlite"
        rf = runs_file(tmp_path, world, batched)
        assert score(monkeypatch, server.base_url, rf, "--batch") == 0
    batch_billed = [x for x in ledger_lines(ledger) if "batch" in x]
    a, b = answers(online), answers(batched)
    assert len(a) == 4 * 2 * (3 + 5 * 1)  # images x families x (k + 5R)
    pd.testing.assert_frame_equal(a, b)
    with Store(batched, readonly=True) as store:
        spend = store.spend()
        assert store.batched().calls == 0  # every chunk closed
        chunks = BatchBook(store).chunks(open_only=False)
    assert len(batch_billed) == len(b) == len(online_billed)
    assert len({x["custom_id"] for x in batch_billed}) == len(batch_billed)
    assert spend == pytest.approx(sum(x["cost"] for x in batch_billed), rel=1e-9)
    online_spend = sum(x["cost"] for x in online_billed)
    assert spend == pytest.approx(online_spend / 2, rel=1e-9)  # the batch price: half
    assert {c.state for c in chunks} == {"done"} and len(chunks) == 2  # one per model


@pytest.mark.timeout(240)
def test_batch_workers_answer_and_bill_as_the_server_itself(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines answered in worker processes: the same stored answers, the same bills line by
    line, and the same failed and expired lines, as answering in the server's process."""
    stored, billed = {}, {}
    for workers in (0, 2):
        ledger = tmp_path / f"ledger-{workers}.jsonl"
        store = tmp_path / f"store-{workers}.sqlite"
        rf = runs_file(tmp_path, world, store)
        with start_sim_server(
            SimConfig(
                ledger=ledger, batch_workers=workers, batch_fail_share=0.2, batch_expire_after=10
            )
        ) as server:
            assert score(monkeypatch, server.base_url, rf, "--batch") == 0
        stored[workers] = answers(store)
        with Store(store, readonly=True) as s:
            chunks = BatchBook(s).chunks(open_only=False)
        assert {c.status for c in chunks} >= {"expired"}  # the expiry cut some batches
        # a bill's batch id is drawn at random; the rest of it is the line's
        billed[workers] = sorted(
            json.dumps({k: v for k, v in x.items() if k != "batch"}, sort_keys=True)
            for x in ledger_lines(ledger)
        )
    assert (stored[0]["attempts"] > 1).any()  # failed lines were asked again
    pd.testing.assert_frame_equal(stored[0], stored[2])
    assert billed[0] == billed[2] and len(billed[0]) == int(stored[0]["billed"].sum())


CRASH_DRIVER = Path(__file__).parent / "batch_crash_driver.py"


def _score(rf: Path, base_url: str, *extra: str, crash: str = "") -> subprocess.CompletedProcess:
    """``judgepanel score --batch`` in a subprocess; with ``crash``, the test driver that
    scores the same run and kills itself at that step (through the library's fault hook)."""
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sim-local"}
    if crash:
        command = [sys.executable, str(CRASH_DRIVER), str(rf), "t-eva", crash]
    else:
        command = [
            sys.executable,
            "-m",
            "judgepanel.cli",
            "score",
            "--run",
            "t-eva",
            "--runs-file",
            str(rf),
            "--batch",
            "--batch-poll",
            "0.05",
            "--no-progress",
            *extra,
        ]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=200)


@pytest.mark.timeout(400)
@pytest.mark.parametrize("step", ["uploaded", "created", "polling", "ingesting"])
@pytest.mark.slow
def test_a_batch_run_killed_at_any_step_resumes_without_paying_twice(
    world: Path, tmp_path: Path, step: str
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    store_path = tmp_path / "store.sqlite"
    rf = runs_file(tmp_path, world, store_path)
    with start_sim_server(SimConfig(ledger=ledger, batch_delay_s=0.3)) as server:
        killed = _score(rf, server.base_url, crash=step)
        assert killed.returncode == -9, killed.stderr
        with Store(store_path, readonly=True) as store:
            book = BatchBook(store)
            states = [c.state for c in book.chunks(open_only=False)]
            stored_before = store.count()
        expected = {
            "uploaded": "planned",
            "created": "uploaded",
            "polling": "submitted",
            "ingesting": "submitted",
        }[step]
        assert states[0] == expected and stored_before == 0  # nothing half-ingested
        resumed = _score(rf, server.base_url)
        assert resumed.returncode == 0, resumed.stderr
        assert "picked up" in resumed.stdout
    billed = [x for x in ledger_lines(ledger) if "batch" in x]
    with Store(store_path, readonly=True) as store:
        frame = store.frame()
        assert store.batched().calls == 0
        assert store.spend() == pytest.approx(sum(x["cost"] for x in billed), rel=1e-9)
    assert len(frame) == 64 and (frame["status"] == "ok").all()
    assert (frame["attempts"] == 1).all()  # each call answered once, never twice
    ids = [x["custom_id"] for x in billed]
    assert len(ids) == len(set(ids)) == 64  # no request answered twice


def run_batch_offline(infile: Path, outfile: Path, base_url: str) -> None:
    """What ``vllm run-batch -i IN -o OUT`` does, against the simulator's online endpoint:
    every input line's body posted as it is, and one output line per request in vLLM's
    shape (an error as ``response`` without a body and the message in ``error``)."""
    import uuid

    import httpx

    out = []
    with httpx.Client(base_url=base_url, headers={"Authorization": "Bearer x"}) as http:
        for raw in infile.read_text().splitlines():
            line = json.loads(raw)
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
            reply = http.post("/chat/completions", json=line["body"], timeout=60)
            ok = reply.status_code == 200
            out.append(
                {
                    "id": f"vllm-{uuid.uuid4().hex}",
                    "custom_id": line["custom_id"],
                    "response": {
                        "status_code": reply.status_code,
                        "request_id": f"vllm-batch-{uuid.uuid4().hex}",
                        **({"body": reply.json()} if ok else {}),
                    },
                    "error": None if ok else reply.json()["error"]["message"],
                }
            )
    outfile.write_text("".join(json.dumps(o) + "\n" for o in out))


@pytest.mark.timeout(300)
def test_the_offline_round_trip_matches_online_and_refuses_what_it_cannot_match(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgepanel.cli import main

    with start_sim_server() as server:
        online = tmp_path / "online.sqlite"
        assert score(monkeypatch, server.base_url, runs_file(tmp_path, world, online)) == 0
        store = tmp_path / "offline.sqlite"
        rf = runs_file(tmp_path, world, store)
        infile, outfile = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        assert (
            main(
                [
                    "batch",
                    "export",
                    "--run",
                    "t-eva",
                    "--runs-file",
                    str(rf),
                    "--out",
                    str(infile),
                    "--families",
                    "aurora",
                ]
            )
            == 0
        )
        lines = infile.read_text().splitlines()
        assert len(lines) == 4 * (3 + 5)  # aurora only
        with Store(store, readonly=True) as s:
            assert s.batched().calls == len(lines)  # in flight: nothing else sends them
        run_batch_offline(infile, outfile, server.base_url)
        # a line naming no exported call stops the import before anything is written
        stray = json.loads(outfile.read_text().splitlines()[0])
        stray["custom_id"] = "jp-" + "0" * 32
        bad = tmp_path / "bad.jsonl"
        bad.write_text(outfile.read_text() + json.dumps(stray) + "\n")
        assert (
            main(["batch", "import", str(bad), "--store", str(store), "--runs-file", str(rf)]) == 1
        )
        with Store(store, readonly=True) as s:
            assert s.count() == 0
        assert (
            main(["batch", "import", str(outfile), "--store", str(store), "--runs-file", str(rf)])
            == 0
        )
        assert (
            main(["batch", "import", str(outfile), "--store", str(store), "--runs-file", str(rf)])
            == 1
        )  # imported already
        # the rest of the run through the provider path: both paths fill one store
        assert score(monkeypatch, server.base_url, rf, "--batch") == 0
    pd.testing.assert_frame_equal(answers(online), answers(store))


@pytest.mark.timeout(300)
def test_expired_batches_failed_lines_and_unreadable_answers_are_sent_again(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    store = tmp_path / "store.sqlite"
    rf = runs_file(tmp_path, world, store)
    with start_sim_server(
        SimConfig(ledger=ledger, batch_expire_after=12, batch_fail_share=0.1, malformed_rate=0.1)
    ) as server:
        code = score(monkeypatch, server.base_url, rf, "--batch")
    assert code == 0
    billed = ledger_lines(ledger)
    with Store(store, readonly=True) as s:
        frame = s.frame()
        chunks = BatchBook(s).chunks(open_only=False)
        assert s.spend() == pytest.approx(sum(x["cost"] for x in billed), rel=1e-9)
        assert s.batched().calls == 0
    assert len(frame) == 64 and (frame["status"] == "ok").all()
    assert {c.status for c in chunks} >= {"expired"}  # some batches ran out of time
    assert (frame["reasks"] > 0).any()  # unreadable answers were asked again, in batches
    assert (frame["billed"] == frame["reasks"] + 1).all()  # each billed answer counted
    # a 500 line is not billed: billed answers match the ledger exactly
    assert int(frame["billed"].sum()) == len(billed)


@pytest.mark.timeout(200)
def test_a_batch_that_fails_validation_stops_the_run_and_loses_nothing(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgepanel.cli.exit_codes import ABORTED

    store = tmp_path / "store.sqlite"
    rf = runs_file(tmp_path, world, store)
    with start_sim_server(SimConfig(batch_invalid=True)) as server:
        code = score(monkeypatch, server.base_url, rf, "--batch")
    assert code == ABORTED
    with Store(store, readonly=True) as s:
        chunks = BatchBook(s).chunks(open_only=False)
        assert s.count() == 0 and s.batched().calls == 0
    assert chunks and {c.state for c in chunks} == {"abandoned"}
    assert "failed validation" in chunks[0].note


@pytest.mark.timeout(200)
def test_the_ceiling_holds_in_batch_mode(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from judgepanel.cli.exit_codes import BUDGET

    ledger = tmp_path / "ledger.jsonl"
    store = tmp_path / "store.sqlite"
    rf = runs_file(tmp_path, world, store)
    ceiling = 0.004
    with start_sim_server(SimConfig(ledger=ledger)) as server:
        code = score(monkeypatch, server.base_url, rf, "--batch", "--max-cost", str(ceiling))
        assert code == BUDGET
        with Store(store, readonly=True) as s:
            first = s.count()
            assert 0 < first < 64 and s.spend() <= ceiling
        assert sum(x["cost"] for x in ledger_lines(ledger)) <= ceiling
        capsys.readouterr()
        assert jp_inline(monkeypatch, server.base_url, "status", "--store", str(store)) == 0
        assert score(monkeypatch, server.base_url, rf, "--batch") == 0
    with Store(store, readonly=True) as s:
        assert s.count() == 64
        assert s.spend() == pytest.approx(sum(x["cost"] for x in ledger_lines(ledger)), rel=1e-9)


@pytest.mark.timeout(200)
def test_batches_in_flight_are_shown_and_never_sent_online_too(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    store = tmp_path / "store.sqlite"
    rf = runs_file(tmp_path, world, store)
    base = ["score", "--run", "t-eva", "--runs-file", str(rf), "--no-progress"]
    with start_sim_server(SimConfig(ledger=ledger, batch_delay_s=1.5)) as server:
        assert jp_inline(monkeypatch, server.base_url, *base, "--batch", "--no-wait") == 0
        capsys.readouterr()
        assert jp_inline(monkeypatch, server.base_url, "status", "--store", str(store)) == 0
        shown = capsys.readouterr().out
        assert "in batches: 64 calls in 2 open batches" in shown
        assert jp_inline(monkeypatch, server.base_url, *base) == 0  # online: nothing to send
        assert ledger_lines(ledger) == []
        assert jp_inline(monkeypatch, server.base_url, *base, "--batch", "--batch-poll", "0.1") == 0
    with Store(store, readonly=True) as s:
        assert s.count() == 64 and s.batched().calls == 0
    assert len(ledger_lines(ledger)) == 64


@pytest.mark.timeout(1800)  # builds the small project when it runs first
@pytest.mark.slow
def test_every_study_stores_the_same_answers_through_batches(
    small_project, sim_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The small project (EVA, PARA, logprob calls, VAB sets, VisionQ composites) scored
    again through the batch API stores every answer the online scoring stored, value for
    value: the analyses read nothing else, so only the cost columns of their tables can
    differ."""
    from judgepanel.core.config import load_config
    from judgepanel.studies import score_run

    runs = yaml.safe_load(small_project.runs_file.read_text())
    store = tmp_path / "batched.sqlite"
    runs["profiles"]["test"].update(store=str(store), batch=True, batch_poll=0.05)
    rf = tmp_path / "runs.yaml"
    rf.write_text(yaml.safe_dump(runs, sort_keys=False))
    assert load_config(rf).run("test-eva").profile.send.batch
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    for run in ("test-eva", "test-para", "test-logprob", "test-vab", "test-visionq"):
        summary = score_run(
            run, runs_file=rf, endpoint=Endpoint.at(sim_server.base_url), progress=False
        )
        assert summary.failed == 0 and summary.sent == summary.planned, summary
    online, batched = answers(small_project.store), answers(store)
    assert set(online["dataset"]) == {"eva", "para", "eva-logprob", "vab", "visionq"}
    pd.testing.assert_frame_equal(online, batched)
    with Store(small_project.store, readonly=True) as a, Store(store, readonly=True) as b:
        assert b.spend() == pytest.approx(a.spend() / 2, rel=1e-6)  # half price, same tokens


def logprob_runs_file(tmp: Path, eva_root: Path, store: Path, **profile: object) -> Path:
    """:func:`runs_file` with a logprob run, ``t-lp``: one call per image, family and
    prompt, read from the score token's logprobs (notebook 09's design)."""
    path = runs_file(tmp, eva_root, store, **profile)
    runs = yaml.safe_load(path.read_text(encoding="utf-8"))
    runs["profiles"]["t"]["datasets"]["eva-logprob"] = {"kind": "eva", "root": str(eva_root)}
    runs["runs"]["t-lp"] = {
        "profile": "t",
        "dataset": "eva-logprob",
        "notebooks": ["09_logprob"],
        "parameters": {"prompt_mode": "logprob", "logprobs_mode": "processed"},
    }
    path.write_text(yaml.safe_dump(runs), encoding="utf-8")
    return path


@pytest.mark.timeout(240)
def test_logprob_calls_store_the_same_answers_online_and_through_batches(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A logprob run sent through the batch API stores what the online path stores, row for
    row: the sampled answer, the expected score, its whole distribution and valid mass
    (``parsed``) and the tokens billed; each row costs half, as the simulator billed it."""
    ledger = tmp_path / "ledger.jsonl"
    columns = [*ANSWER_COLUMNS, "parsed", "finish_reason"]
    stores = {}
    with start_sim_server(SimConfig(ledger=ledger)) as server:
        for mode, extra in (("online", ()), ("batched", ("--batch", "--batch-poll", "0.05"))):
            stores[mode] = tmp_path / f"{mode}.sqlite"
            rf = logprob_runs_file(tmp_path, world, stores[mode])
            args = ("score", "--run", "t-lp", "--runs-file", str(rf), "--no-progress", *extra)
            assert jp_inline(monkeypatch, server.base_url, *args) == 0
    frames = {}
    for mode, path in stores.items():
        with Store(path, readonly=True) as store:
            frames[mode] = store.frame(columns=[*columns, "cost"]).reset_index(drop=True)
    online, batched = frames["online"], frames["batched"]
    assert len(online) == 4 * 2 * 6  # images x families x (one holistic + five dimensions)
    assert set(online["kind"]) == {"holistic_logprob", "dimension_logprob"}
    parsed = [json.loads(p) for p in online["parsed"]]
    assert all(p["source"] == "logprobs" and p["distribution"] for p in parsed)
    pd.testing.assert_frame_equal(online[columns], batched[columns])
    assert (batched["cost"] / online["cost"]).to_numpy() == pytest.approx(0.5, rel=1e-9)
    billed = [x for x in ledger_lines(ledger) if "batch" in x]
    assert len(billed) == len(batched)
    assert batched["cost"].sum() == pytest.approx(sum(x["cost"] for x in billed), rel=1e-9)


def test_reading_results_pauses_the_collector_and_restores_it() -> None:
    import gc

    from judgepanel.core.batch.results import collector_paused

    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("a bad file")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # left as it was: off
    finally:
        gc.enable()
