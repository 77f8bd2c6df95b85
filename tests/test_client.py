"""The async client against the real simulated judge server: clean runs, injected faults,
re-asks, non-retryable errors, kill -9 and resume, retry-failed, running inside a loop."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from judgepanel.core.calls import CallSpec
from judgepanel.core.client import ClientError, run_calls
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.retry import RetryPolicy
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel.studies.common.rubric_plan import plan_images

PRICES = {
    "sim-aurora-v1": Price(0.30, 2.50),
    "sim-basalt-v1": Price(0.20, 0.60),
    "sim-cobalt-v1": Price(0.10, 0.30),
}
FAST = RetryPolicy(max_attempts=6, base=0.05, cap=0.4, max_server_delay=2.0)
FAILURE_REASON = re.compile(
    r"^(http (408|409|429|5\d\d) after \d+ attempts"
    r"|timeout after \d+ attempts"
    r"|connection error after \d+ attempts"
    r"|unparseable: .+)$"
)


def make_images(folder: Path, n: int, size: tuple[int, int] = (96, 72)) -> pd.DataFrame:
    """``n`` distinct small images (JPEG and PNG) with an image table for the planner."""
    rng = np.random.default_rng(7)
    rows = []
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        base = rng.integers(0, 255, size=3)
        small = (max(2, size[1] // 8), max(2, size[0] // 8), 3)
        arr = np.clip(base + rng.normal(0, 10 + 10 * i, size=small), 0, 255).astype(np.uint8)
        img = Image.fromarray(arr).resize(size, Image.Resampling.BILINEAR)  # smooth, small files
        path = folder / (f"im{i:03d}.jpg" if i % 2 == 0 else f"im{i:03d}.png")
        img.save(path)
        rows.append({"image_id": f"im{i:03d}", "path": str(path)})
    return pd.DataFrame(rows)


def simple_plan(
    images: pd.DataFrame,
    reps: int = 2,
    dimension_r: int = 0,
    families: dict[str, str] | None = None,
) -> list[CallSpec]:
    families = families or {"aurora": "sim-aurora-v1"}
    design = ScoringDesign(holistic_k=reps, dimension_r=dimension_r, temperature=0.3)
    return plan_images(images, families, design, dataset="eva")


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    return "sim-local"


def keyset(df: pd.DataFrame) -> set[tuple]:
    from judgepanel.core.calls import KEY_FIELDS

    return set(df[list(KEY_FIELDS)].itertuples(index=False, name=None))


def planned(specs: list[CallSpec]) -> set[tuple]:
    return {s.key.as_tuple() for s in specs}


def test_clean_run_scores_every_call(sim_server, tmp_path: Path, api_key: str) -> None:
    images = make_images(tmp_path / "img", 3)
    families = {"aurora": "sim-aurora-v1", "cobalt": "sim-cobalt-v1"}
    specs = simple_plan(images, reps=2, dimension_r=1, families=families)
    assert len(specs) == 3 * 2 * (2 + 5)
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False),
        )
        df = store.frame()
        assert summary.planned == summary.sent == summary.ok == len(specs)
        assert (summary.failed, summary.skipped, summary.retries) == (0, 0, 0)
        assert not summary.stopped_by_budget
        assert keyset(df) == planned(specs)
        assert (df.status == "ok").all() and df.value.between(1, 10).all()
        assert (df.attempts == 1).all()
        # cost is the price applied to the usage the server reported
        for row in df.itertuples():
            assert row.prompt_tokens > 0 and row.completion_tokens > 0
            price = PRICES[row.model]
            assert row.cost == pytest.approx(price.cost(row.prompt_tokens, row.completion_tokens))
        assert summary.spend == pytest.approx(store.spend())
        # a second run finds everything checkpointed and sends nothing
        again = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False),
        )
        assert (again.skipped, again.sent) == (len(specs), 0)
        assert store.count() == len(specs)


@pytest.mark.timeout(180)
def test_faults_end_ok_or_failed_with_reason(sim_server_factory, tmp_path: Path, api_key: str):
    server = sim_server_factory(error_rate=0.3, malformed_rate=0.3, timeout_rate=0.05)
    specs = simple_plan(make_images(tmp_path / "img", 6), reps=6)  # 36 calls
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at(server.base_url),
                concurrency=12,
                timeout=1.0,
                max_attempts=6,
                max_reasks=2,
                policy=FAST,
                progress=False,
            ),
        )
        df = store.frame()
    assert keyset(df) == planned(specs)  # every planned call is recorded exactly once
    assert summary.ok + summary.failed == len(specs) == len(df)
    ok, failed = df[df.status == "ok"], df[df.status == "failed"]
    assert len(ok) == summary.ok and len(failed) == summary.failed
    assert ok.value.between(1, 10).all() and ok.value.notna().all()
    assert failed.value.isna().all()  # never a placeholder score
    assert all(FAILURE_REASON.match(r) for r in failed.reason), list(failed.reason)
    # every attempt beyond a call's first is a counted retry (HTTP retries and re-asks)
    assert summary.retries == int((df.attempts - 1).sum()) > 0
    assert summary.reasks == int(df.reasks.sum()) > 0
    assert (df.attempts <= 6).all() and (df.reasks <= 2).all()
    # re-asked calls paid for every answered attempt
    reasked = ok[ok.reasks > 0]
    assert len(reasked) > 0
    for row in reasked.itertuples():
        assert row.cost == pytest.approx(
            PRICES[row.model].cost(row.prompt_tokens, row.completion_tokens)
        )


def test_unknown_model_stops_the_run_at_the_first_call(sim_server, tmp_path: Path, api_key):
    """A wrong model id (404) is wrong for every call: the run stops at once, sending no
    more than the calls already in flight, and records nothing against the plan."""
    specs = simple_plan(
        make_images(tmp_path / "img", 10), reps=10, families={"ghost": "sim-ghost-v9"}
    )
    prices = {"sim-ghost-v9": Price(1.0, 1.0)}
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=prices,
            options=ClientOptions(
                endpoint=Endpoint.at(sim_server.base_url), concurrency=1, progress=False
            ),
        )
        assert store.count() == 0
        assert store.possibly_billed().calls == 0  # its reservation was released
    assert summary.aborted.startswith("http 404: The model `sim-ghost-v9` does not exist")
    assert (summary.sent, summary.failed, summary.retries) == (0, 0, 0)
    assert summary.unsent == len(specs) == 100


def ledger(path: Path) -> pd.DataFrame:
    """The simulated server's own record of every answer it billed, priced like ours."""
    import json

    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    df = pd.DataFrame(rows, columns=["model", "seed", "prompt_tokens", "completion_tokens"])
    df["cost"] = [
        PRICES[m].cost(p, c)
        for m, p, c in zip(df.model, df.prompt_tokens, df.completion_tokens, strict=True)
    ]
    return df


@pytest.mark.timeout(180)
def test_retryable_failures_are_resent_by_a_plain_resume(
    sim_server_factory, sim_server, tmp_path: Path, api_key
):
    """Timeouts after the attempts are used up are retryable: the same command run again
    sends them, without --retry-failed."""
    stalled = sim_server_factory(timeout_rate=1.0)
    specs = simple_plan(make_images(tmp_path / "img", 2), reps=2)
    with Store(tmp_path / "s.sqlite") as store:
        first = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at(stalled.base_url), timeout=0.5, max_attempts=1, progress=False
            ),
        )
        assert first.failed == first.retryable == len(specs)
        df = store.frame()
        assert set(df.reason) == {"timeout after 1 attempts"} and set(df.failure) == {"retryable"}
        again = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False),
        )
        assert (again.skipped, again.sent, again.ok) == (0, len(specs), len(specs))
        df = store.frame()
    assert (df.status == "ok").all() and (df.failure == "").all()
    assert (df.attempts == 2).all()  # the timed-out attempt stays counted


@pytest.mark.timeout(180)
def test_final_failures_wait_for_retry_failed_and_keep_their_cost(
    sim_server_factory, tmp_path: Path, api_key
):
    """Unreadable answers after their re-asks are final: a plain resume leaves them, and
    --retry-failed sends them again without losing what the unreadable answers cost, so
    the store's spend is what the endpoint billed."""
    book = tmp_path / "billed.jsonl"
    garbled = sim_server_factory(malformed_rate=1.0, ledger=book)
    specs = simple_plan(make_images(tmp_path / "img", 2), reps=2)
    with Store(tmp_path / "s.sqlite") as store:
        first = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at(garbled.base_url),
                max_reasks=1,
                max_failure_share=1.0,
                progress=False,
            ),
        )
        assert first.failed >= 1 and first.retryable == 0 and not first.aborted
        before = store.frame(status="failed").set_index(["item", "repetition"])
        assert set(before.failure) == {"final"} and (before.billed == 2).all()
        assert (before.cost > 0).all() and len(before) == first.failed
        good = sim_server_factory(ledger=book)
        kept = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(endpoint=Endpoint.at(good.base_url), progress=False),
        )
        assert (kept.skipped, kept.sent) == (len(specs), 0)
        redo = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at(good.base_url), retry_failed=True, progress=False
            ),
        )
        assert redo.sent == redo.ok == len(before)
        every = store.frame()
        after = every.set_index(["item", "repetition"]).loc[before.index]
        spend = store.spend()
    assert (every.status == "ok").all()
    assert (after.billed == 3).all() and (after.attempts == before.attempts + 1).all()
    assert (after.cost > before.cost).all()
    billed = ledger(book)
    assert len(billed) == int(every.billed.sum()) > len(specs)
    assert spend == pytest.approx(billed.cost.sum(), rel=1e-9)
    assert spend == pytest.approx(first.spend + redo.spend, rel=1e-9)


@pytest.mark.timeout(120)
def test_an_unreachable_endpoint_stops_the_run(tmp_path: Path, api_key: str) -> None:
    """Nothing listens on port 9: the first call that uses up its attempts on connection
    errors stops the run; the plan is not turned into 40 recorded failures."""
    specs = simple_plan(make_images(tmp_path / "img", 4), reps=10)
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at("http://127.0.0.1:9/v1"),
                concurrency=2,
                policy=FAST,
                progress=False,
            ),
        )
        df = store.frame()
    assert "http://127.0.0.1:9/v1 is unreachable" in summary.aborted
    assert "connection error after 6 attempts" in summary.aborted
    assert 1 <= len(df) <= 2 and set(df.failure) == {"retryable"}
    assert summary.unsent == len(specs) - len(df) >= 38


@pytest.mark.timeout(120)
def test_too_many_failures_stop_the_run(sim_server_factory, tmp_path: Path, api_key: str):
    """Every answer a 429 or a 500: once 20 calls completed, more than 20% of them failed,
    and the run stops instead of recording the other 40."""
    server = sim_server_factory(error_rate=1.0)
    specs = simple_plan(make_images(tmp_path / "img", 6), reps=10)
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at(server.base_url), concurrency=2, max_attempts=1, progress=False
            ),
        )
        n = store.count()
    assert "calls failed, more than the 20% allowed (--max-failure-share)" in summary.aborted
    assert 20 <= n <= 22 and summary.unsent == len(specs) - n


def test_missing_key_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    specs = simple_plan(make_images(tmp_path / "img", 1), reps=1)
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(ClientError, match="OPENAI_API_KEY"):
        run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(endpoint=Endpoint.at("http://127.0.0.1:9/v1"), progress=False),
        )


def test_duplicate_keys_are_a_planner_bug(tmp_path: Path, api_key: str) -> None:
    specs = simple_plan(make_images(tmp_path / "img", 1), reps=1)
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(ClientError, match="twice"):
        run_calls(specs + specs, store, prices=PRICES, options=ClientOptions(progress=False))


def test_missing_price_is_refused_before_sending(tmp_path: Path, api_key: str) -> None:
    specs = simple_plan(make_images(tmp_path / "img", 1), reps=1)
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(ClientError, match="no price"):
        run_calls(specs, store, prices={}, options=ClientOptions(progress=False))
    assert Store(tmp_path / "s.sqlite").count() == 0


def test_unreadable_image_is_recorded_not_sent(sim_server, tmp_path: Path, api_key: str):
    images = make_images(tmp_path / "img", 2)
    Path(images.path[1]).unlink()
    specs = simple_plan(images, reps=1)
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False),
        )
        df = store.frame().set_index("item")
    assert (summary.ok, summary.failed) == (1, 1)
    assert df.loc["im001", "reason"].startswith("request not built: FileNotFoundError")
    assert df.loc["im001", "attempts"] == 0


def test_run_calls_inside_a_running_loop(sim_server, tmp_path: Path, api_key: str) -> None:
    """A notebook kernel already runs an event loop; the sync wrapper must still work."""
    specs = simple_plan(make_images(tmp_path / "img", 1), reps=3)

    async def inside() -> int:
        with Store(tmp_path / "s.sqlite") as store:
            return run_calls(
                specs,
                store,
                prices=PRICES,
                options=ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False),
            ).ok

    assert asyncio.run(inside()) == 3


KILL_SCRIPT = textwrap.dedent(
    """
    import sys
    import pandas as pd
    from judgepanel.core.client import run_calls
    from judgepanel.core.sendconfig import ClientOptions
    from judgepanel.core.config import Price, ScoringDesign
    from judgepanel.core.endpoint import Endpoint
    from judgepanel.studies.common.rubric_plan import plan_images
    from judgepanel.core.store import Store

    base_url, store_path, table, samples = sys.argv[1:5]
    images = pd.read_csv(table)
    design = ScoringDesign(holistic_k=10, dimension_r=0, temperature=0.3)
    specs = plan_images(images, {"aurora": "sim-aurora-v1"}, design, dataset="eva")
    with Store(store_path) as store:
        options = ClientOptions(endpoint=Endpoint.at(base_url), concurrency=4, progress=False,
                                samples_per_request=int(samples))
        run_calls(specs, store, prices={"sim-aurora-v1": Price(0.3, 2.5)}, options=options)
    """
)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("samples", [1, 5])
def test_kill_and_resume(
    sim_server_factory, tmp_path: Path, api_key: str, capsys, samples: int
) -> None:
    """kill -9 mid-run, then resume: the final keys are exactly the plan, nothing twice, and
    nothing checkpointed before the kill is sent again. The calls in flight at the kill
    left their reservations: the resume reports them, `status` shows them as possibly
    billed, and with them every answer the server billed is accounted for. With five
    samples per request a request in flight holds five calls."""
    book = tmp_path / "billed.jsonl"
    server = sim_server_factory(latency_ms=150, ledger=book)
    images = make_images(tmp_path / "img", 6)
    table = tmp_path / "images.csv"
    images.to_csv(table, index=False)
    specs = simple_plan(images, reps=10)  # 60 calls, ~2.3 s at 4 in flight
    store_path = tmp_path / "s.sqlite"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            KILL_SCRIPT,
            server.base_url,
            str(store_path),
            str(table),
            str(samples),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "OPENAI_API_KEY": api_key},
    )
    try:
        deadline = time.monotonic() + 60
        n = 0
        while time.monotonic() < deadline and proc.poll() is None:
            if store_path.exists():
                try:
                    con = sqlite3.connect(store_path, timeout=5)
                    n = con.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
                    con.close()
                except sqlite3.OperationalError:
                    n = 0  # the schema is still being created
                if n >= 12:
                    break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    from judgepanel.cli import main

    with Store(store_path, readonly=True) as store:
        in_flight = store.possibly_billed()
    # 4 workers each hold a request (of `samples` calls) from reservation to record
    assert 1 <= in_flight.calls <= 4 * samples and in_flight.bound > 0
    assert main(["status", "--store", str(store_path)]) == 0
    shown = capsys.readouterr().out
    assert f"possibly billed, unanswered: {in_flight.calls} calls" in shown
    assert f"${in_flight.bound:.4f}" in shown

    with Store(store_path) as store:
        before = store.frame().set_index(["item", "repetition"])
        assert 12 <= len(before) < len(specs)
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(endpoint=Endpoint.at(server.base_url), progress=False),
        )
        after = store.frame()
        unanswered = store.possibly_billed()
        spend = store.spend()
    assert summary.interrupted == in_flight.calls == unanswered.calls
    assert summary.interrupted_bound == pytest.approx(in_flight.bound)
    assert "were in flight when an earlier run was interrupted" in summary.line()
    # the server billed what the store recorded, plus at most one answer per call that
    # was in flight at the kill (one attempt each here: no faults), within its bound
    billed = ledger(book)
    if samples == 1:
        extra = len(billed) - int(after.billed.sum())
        assert 0 <= extra <= in_flight.calls
    else:  # one billed request answered several rows
        assert (after.samples_per_request > 1).any()
        assert len(billed) < int(after.billed.sum())
    assert -1e-12 <= billed.cost.sum() - spend <= in_flight.bound
    assert keyset(after) == planned(specs)
    assert len(after) == len(specs)  # the primary key holds: no duplicates
    # the resume skipped exactly what was committed before the kill and sent only the rest
    assert summary.skipped == len(before)
    assert summary.sent == len(specs) - len(before)
    kept = after.set_index(["item", "repetition"]).loc[before.index]
    assert (kept.created_at == before.created_at).all()
    assert (kept.answer == before.answer).all()


@pytest.mark.timeout(120)
def test_retry_after_is_honoured_and_failures_recorded(
    sim_server_factory, tmp_path: Path, api_key: str
) -> None:
    """Every request answered 429 (Retry-After: 1 s) or 500: calls fail after their
    attempts with the last error as reason. A 429 pauses the model's whole lane for the
    server's 1 s, although our own back-off here never exceeds 0.4 s: so the calls retried
    after a 500 wait too, unless they went back before the first 429 (without the pause
    only the half refused with a 429 would wait)."""
    server = sim_server_factory(error_rate=1.0)
    specs = simple_plan(make_images(tmp_path / "img", 2), reps=6)
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at(server.base_url),
                concurrency=4,
                max_attempts=2,
                policy=RetryPolicy(max_attempts=2, base=0.05, cap=0.4, max_server_delay=5.0),
                progress=False,
            ),
        )
        df = store.frame()
    assert summary.failed == len(specs) == len(df) and summary.ok == 0
    assert summary.retries == len(specs)
    assert all(re.fullmatch(r"http (429|500) after 2 attempts", r) for r in df.reason)
    assert (df.attempts == 2).all() and df.value.isna().all() and (df.cost == 0).all()
    assert 0 < summary.refused < summary.requests == 2 * len(specs)
    assert (df.latency_s >= 1.0).mean() >= 0.75


class _ScriptedBodies:
    """A real HTTP server on a free loopback port that answers each request with the next
    body of a script, with status 200 and a JSON content type, whatever the body is."""

    def __init__(self, bodies: list[bytes]) -> None:
        import http.server
        import threading

        script = list(bodies)
        lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                with lock:
                    body = script.pop(0)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.left = script

    def __enter__(self) -> _ScriptedBodies:
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _completion(content: str, usage: object = None) -> bytes:
    import json

    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "sim-aurora-v1",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content},
             "finish_reason": "stop"}
        ],
    }  # fmt: skip
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body).encode()


def test_malformed_bodies_are_unreadable_answers(tmp_path: Path, api_key: str) -> None:
    """Success responses that are not readable chat completions neither crash the run nor
    go uncharged: each is an unreadable answer (re-asked), charged its bound when it
    reports no usable token counts."""
    from judgepanel.core.budget import request_bound

    specs = simple_plan(make_images(tmp_path / "img", 1), reps=3)
    good = {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912}
    bodies = [
        # call 1: three unreadable answers, then it fails (max_reasks=2)
        b'{"choices": [{"message": {"content": "trunc',  # not JSON at all
        b'{"choices": [{}]}',  # no message
        b'{"choices": "zz"}',  # choices of the wrong type
        # call 2: a readable answer whose usage is not a count: charged the bound
        _completion('{"score": 6}', usage={"prompt_tokens": "abc", "completion_tokens": 3}),
        # call 3: a readable answer with usage: charged its usage
        _completion('{"score": 7}', usage=good),
    ]
    price = PRICES["sim-aurora-v1"]
    answer_bound = request_bound(specs[0].build(), specs[0].max_tokens, 0).cost(price)
    with _ScriptedBodies(bodies) as server, Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at(server.base_url),
                concurrency=1,
                max_reasks=2,
                policy=FAST,
                progress=False,
            ),
        )
        df = store.frame().set_index("repetition").sort_index()
        assert server.left == []
    assert (summary.ok, summary.failed, summary.reasks) == (2, 1, 2)
    first, second, third = (df.loc[i] for i in range(3))
    assert first.status == "failed" and first.reason == "unparseable: empty answer"
    assert (first.attempts, first.reasks) == (3, 2)
    assert first.cost == pytest.approx(3 * answer_bound)
    assert pd.isna(first.prompt_tokens)
    assert second.status == "ok" and second.value == 6.0
    assert second.cost == pytest.approx(answer_bound) and pd.isna(second.prompt_tokens)
    assert third.status == "ok" and third.value == 7.0
    assert third.cost == pytest.approx(price.cost(900, 12)) and third.prompt_tokens == 900
    assert summary.spend == pytest.approx(df.cost.sum())


def test_a_store_write_error_stops_every_worker(sim_server, tmp_path: Path, api_key: str):
    """An answer the store cannot hold ends the run: the other workers do not go on
    sending (and paying for) calls whose answers could not be recorded either.

    What the other worker stored before the failure depends on how fast the machine is;
    what it may store after it does not: only the one call it had in flight.
    """
    from dataclasses import replace

    from judgepanel.core.parsing import parse_score
    from judgepanel.core.store import utc_now

    failed_at: list[str] = []

    def unstorable(text: str) -> dict:
        failed_at.append(utc_now())
        return {"score": parse_score(text), "x": {1}}  # a set: not JSON serialisable

    specs = simple_plan(make_images(tmp_path / "img", 2), reps=10)
    specs[0] = replace(specs[0], parse=unstorable)
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(TypeError, match="not JSON serializable"):
            run_calls(
                specs,
                store,
                prices=PRICES,
                options=ClientOptions(
                    endpoint=Endpoint.at(sim_server.base_url), concurrency=2, progress=False
                ),
            )
        stored = [r[0] for r in store.connection.execute("SELECT created_at FROM calls")]
    assert failed_at and len(stored) < len(specs) - 1
    after = [t for t in stored if t > failed_at[0]]
    assert len(after) <= 1, (failed_at[0], sorted(stored))  # the other worker's call in flight


def test_the_client_sends_through_the_sdks_aiohttp_transport() -> None:
    """The pinned aiohttp extra is what the client uses (half the SDK's CPU per call, see
    bench/bench_client.py); without it the SDK's default transport would be chosen."""
    import openai

    from judgepanel.core.client import http_transport

    transport = http_transport(5.0)
    assert isinstance(transport, openai.DefaultAioHttpClient)


def test_encode_body_equals_the_json_encoder() -> None:
    """The spliced request body is byte for byte what ``json.dumps`` writes, for one or
    several images, URLs that are not base64 data URLs, and texts that read like a slot."""
    import base64
    import json

    from judgepanel.core.providers import encode_body

    def url(n: int) -> str:
        return "data:image/jpeg;base64," + base64.b64encode(bytes(range(n % 256)) * 7).decode()

    def image(u: str) -> dict:
        return {"type": "image_url", "image_url": {"url": u, "detail": "auto"}}

    bodies = [
        {"model": "m", "messages": [{"role": "user", "content": "no image, é"}]},
        {
            "model": "m",
            "messages": [
                {"role": "system", "content": "Score it."},
                {"role": "user", "content": [{"type": "text", "text": "A"}, image(url(9))]},
            ],
            "seed": 3,
        },
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": [image(url(n)) for n in (5, 6, 7)]},
                {"role": "user", "content": [image("https://example.org/a.jpg")]},
            ],
        },
        {
            "model": "m",
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "judgepanel-image-0"}, image(url(4))],
                }
            ],
        },
    ]
    for body in bodies:
        assert encode_body(body) == json.dumps(body, separators=(",", ":")).encode()
