"""The API key never leaves the environment: not in the store file, the command's output,
the recorded failure reasons, or error messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judgepanel.core.client import api_key_from_env, scrub, scrub_value

KEY = "sk-jp-DISTINCTIVE-9f3c7e21a4b86d05"


def store_bytes(store: Path) -> bytes:
    """The store file with its WAL and shared-memory companions."""
    data = b""
    for suffix in ("", "-wal", "-shm"):
        p = Path(str(store) + suffix)
        if p.exists():
            data += p.read_bytes()
    return data


def test_scrub() -> None:
    text = f"Incorrect API key provided: {KEY}; header Authorization: Bearer {KEY}"
    out = scrub(text, KEY)
    assert KEY not in out and "sk-jp" not in out
    assert "[redacted]" in out
    # key-shaped tokens are removed even when they are not the current key
    assert "sk-other1234567" not in scrub("bad key sk-other1234567 given", KEY)
    assert scrub("Bearer abc.def", None) == "Bearer [redacted]"


def test_a_text_too_short_for_a_secret_and_a_number_read_no_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call's empty reason and numeric answer are kept as they are without reading the
    key variables (once per stored call otherwise); a text that may hold the key is still
    scrubbed of it."""
    from judgepanel.core.client import secrets

    reads: list[str | None] = []
    real = secrets._secrets

    def counted(secret: str | None) -> list[str]:
        reads.append(secret)
        return real(secret)

    monkeypatch.setattr(secrets, "_secrets", counted)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert (scrub(""), scrub("ok"), scrub_value(None), scrub_value(7.5), scrub_value(3)) == (
        "",
        "ok",
        None,
        7.5,
        3,
    )
    assert reads == []
    assert scrub(f"echo {KEY}") == "echo [redacted]"
    assert scrub_value({"why": KEY}) == {"why": "[redacted]"}
    assert reads == [None, None]


def test_missing_key_message_names_the_variable_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "   ")
    with pytest.raises(Exception, match="OPENAI_API_KEY is not set"):
        api_key_from_env()


def test_a_key_read_from_another_variable_is_scrubbed_too(monkeypatch) -> None:
    # A key with no "sk-" shape, read through an endpoint's own variable.
    plain = "gateway-4c1d9e7a0b2f"
    monkeypatch.setenv("GATEWAY_TOKEN", plain)
    assert plain in scrub(f"rejected: {plain}")  # not yet known as a key
    assert api_key_from_env("GATEWAY_TOKEN") == plain
    assert scrub(f"rejected: {plain}") == "rejected: [redacted]"


@pytest.mark.timeout(240)
def test_key_appears_nowhere(sim_server_factory, tmp_path: Path, monkeypatch, capsys) -> None:
    from test_scoring_cli import write_eva, write_runs_file

    from judgepanel.cli import main

    server = sim_server_factory(error_rate=0.3, malformed_rate=0.4, timeout_rate=0.05)
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url, PYTHONUNBUFFERED="1")
    outputs = []
    command = [sys.executable, "-m", "judgepanel.cli", "score", "--run", "t-eva"]
    for extra in (
        # faults with few attempts, so failures with reasons are recorded; progress shown
        ["--timeout", "1", "--max-attempts", "2", "--max-reasks", "0"],
        # an endpoint that refuses connections: every attempt fails
        ["--base-url", "http://127.0.0.1:9/v1", "--max-attempts", "1", "--retry-failed"],
    ):
        res = subprocess.run(
            [*command, "--runs-file", str(runs), *extra],
            capture_output=True,
            text=True,
            env=env,
            timeout=200,
        )
        outputs.append(res.stdout + res.stderr)
    # the dry run, status and export, in this process with the same environment
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    store = tmp_path / "store.sqlite"
    export = tmp_path / "calls.csv"
    for argv in (
        ["score", "--run", "t-eva", "--runs-file", str(runs), "--dry-run"],
        ["status", "--store", str(store)],
        ["status", "--store", str(store), "--json"],
        ["export", "--store", str(store), "--out", str(export)],
    ):
        assert main(argv) == 0
        captured = capsys.readouterr()
        outputs.append(captured.out + captured.err)

    from judgepanel.core.store import Store

    with Store(store) as s:
        df = s.frame()
    failed = df[df.status == "failed"]
    assert len(failed) > 0  # the check below covers real failure reasons
    assert any("connection error" in r for r in failed.reason)
    for text in outputs:
        assert KEY not in text
    assert KEY.encode() not in store_bytes(store)
    assert KEY not in export.read_text()
    assert not any(KEY in str(r) for r in df.reason)
    assert not any(KEY in str(a) for a in df.answer)
    # the simulated server's log never saw it printed either
    log = getattr(server, "log_path", None)
    if log is not None and Path(log).exists():
        assert KEY not in Path(log).read_text(errors="replace")


@pytest.mark.timeout(240)
@pytest.mark.slow
def test_an_echoed_key_is_scrubbed_from_answers(sim_server_factory, tmp_path: Path) -> None:
    """An endpoint that copies the key into its answers: the answer, the parsed answer and
    the export carry ``[redacted]`` instead, and the scores are still read."""
    from test_scoring_cli import write_eva, write_runs_file

    from judgepanel.core.store import Store

    server = sim_server_factory(echo_key=True)
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url)
    store = tmp_path / "store.sqlite"
    export = tmp_path / "calls.csv"
    for argv in (
        ["score", "--run", "t-eva", "--runs-file", str(runs), "--no-progress"],
        ["export", "--store", str(store), "--out", str(export)],
    ):
        res = subprocess.run(
            [sys.executable, "-m", "judgepanel.cli", *argv],
            capture_output=True, text=True, env=env, timeout=200,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
        assert KEY not in res.stdout + res.stderr
    with Store(store) as s:
        df = s.frame()
    assert len(df) == 42 and (df.status == "ok").all()
    assert df.answer.str.contains("[redacted]", regex=False).all()
    assert df.parsed.str.contains("[redacted]", regex=False).all()
    assert KEY.encode() not in store_bytes(store)
    assert KEY not in export.read_text()


def test_scrub_value_scrubs_every_string_and_key_as_scrub_does(monkeypatch) -> None:
    """The secrets are read once for a whole value, and texts too short to hold one are
    kept unscanned: every string comes out as `scrub` gives it alone."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_key_from_env()
    value = {
        "score": 7,
        "reason": f"it said {KEY} and Bearer tok.en",
        "distribution": {"1": 0.25, "10": 0.75, KEY: 1.0},
        "notes": ["ok", "sk-", "sk-abcdef12", ("bear", None, 2.5)],
    }
    out = scrub_value(value)
    assert out["score"] == 7 and out["distribution"]["1"] == 0.25
    assert out["reason"] == scrub(value["reason"]) and KEY not in out["reason"]
    assert list(out["distribution"]) == ["1", "10", scrub(KEY)] == ["1", "10", "[redacted]"]
    assert out["notes"] == ["ok", "sk-", "[redacted]", ("bear", None, 2.5)]
    assert out["notes"][:3] == [scrub(s) for s in value["notes"][:3]]
