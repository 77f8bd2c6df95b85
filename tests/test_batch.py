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

from judgepanel.core.batch import CRASH_ENV, BatchBook
from judgepanel.core.store import Store
from judgepanel.report.launcher import start_sim_server
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
    with start_sim_server(ledger=ledger) as server:
        online = tmp_path / "online.sqlite"
        assert (
            jp_inline(
                monkeypatch,
                server.base_url,
                "score",
                "--run",
                "t-eva",
                "--runs-file",
                str(runs_file(tmp_path, world, online)),
                "--no-progress",
            )
            == 0
        )
        online_billed = ledger_lines(ledger)
        batched = tmp_path / "batched.sqlite"
        rf = runs_file(tmp_path, world, batched)
        assert (
            jp_inline(
                monkeypatch,
                server.base_url,
                "score",
                "--run",
                "t-eva",
                "--runs-file",
                str(rf),
                "--batch",
                "--batch-poll",
                "0.05",
                "--no-progress",
            )
            == 0
        )
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


def _score(rf: Path, base_url: str, *extra: str, crash: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sim-local"}
    env.pop(CRASH_ENV, None)
    if crash:
        env[CRASH_ENV] = crash
    return subprocess.run(
        [
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
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=200,
    )


@pytest.mark.timeout(400)
@pytest.mark.parametrize("step", ["uploaded", "created", "polling", "ingesting"])
def test_a_batch_run_killed_at_any_step_resumes_without_paying_twice(
    world: Path, tmp_path: Path, step: str
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    store_path = tmp_path / "store.sqlite"
    rf = runs_file(tmp_path, world, store_path)
    with start_sim_server(ledger=ledger, batch_delay=0.3) as server:
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
