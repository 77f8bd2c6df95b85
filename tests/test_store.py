"""The SQLite checkpoint store: round trip, WAL, completed keys, failed-row replacement."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from dataclasses import astuple
from pathlib import Path

import pandas as pd
import pytest

from judgepanel.cli.export import export_command
from judgepanel.cli.status import status_command
from judgepanel.core.calls import KEY_FIELDS, CallKey
from judgepanel.core.store import SCHEMA_VERSION, CallResult, Store, StoreError


def key(item: str = "img1", rep: int = 0, dataset: str = "eva", **kw) -> CallKey:
    fields = {
        "dataset": dataset,
        "item": item,
        "family": "aurora",
        "model": "sim-aurora-v1",
        "call_type": "holistic",
        "dimension": "",
        "repetition": rep,
        "temperature": 0.3,
        "rubric_sha": "r" * 64,
        "prompt_hash": "p" * 64,
    }
    fields.update(kw)
    return CallKey(**fields)


OK = CallResult(
    status="ok",
    answer='{"score": 7, "reason": "é sharp"}',
    parsed={"score": 7, "reason": "é sharp"},
    value=7.0,
    prompt_tokens=900,
    completion_tokens=20,
    cost=0.00032,
    latency_s=0.2,
    attempts=2,
    reasks=1,
    finish_reason="stop",
    seed=123,
)
FAILED = CallResult(status="failed", reason="http 500 after 6 attempts", attempts=6, cost=0.0)


def test_round_trip_and_wal(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        assert store.journal_mode == "wal"
        store.record(key(), OK)
        store.record(key(rep=1), FAILED)
        df = store.frame()
    assert list(df.columns[: len(KEY_FIELDS)]) == list(KEY_FIELDS)
    assert len(df) == 2
    ok = df[df.status == "ok"].iloc[0]
    assert ok.value == 7.0
    assert json.loads(ok.parsed) == {"score": 7, "reason": "é sharp"}
    assert ok.answer == OK.answer
    assert (ok.prompt_tokens, ok.completion_tokens, ok.attempts, ok.reasks) == (900, 20, 2, 1)
    assert ok.temperature == 0.3 and ok.repetition == 0
    assert ok.created_at.endswith("+00:00")
    bad = df[df.status == "failed"].iloc[0]
    assert pd.isna(bad.value) and pd.isna(bad.parsed)
    assert bad.reason == "http 500 after 6 attempts"
    # the WAL mode is a property of the file: a fresh connection sees it
    con = sqlite3.connect(tmp_path / "s.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION
    )
    con.close()


def test_completed_keys(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.record(key("a"), OK)
        store.record(key("b"), FAILED)
        store.record(key("c", dataset="para"), OK)
        store.record(key("d", temperature=0.7), OK)
        all_keys = store.completed_keys()
        assert all_keys == {
            key("a").as_tuple(),
            key("b").as_tuple(),
            key("c", dataset="para").as_tuple(),
            key("d", temperature=0.7).as_tuple(),
        }
        assert store.completed_keys("eva", include_failed=False) == {
            key("a").as_tuple(),
            key("d", temperature=0.7).as_tuple(),
        }
        assert store.completed_keys("para") == {key("c", dataset="para").as_tuple()}
        # temperature is part of the key: the same call at 0.3 is not the one at 0.7
        assert key("d", temperature=0.3).as_tuple() not in all_keys
        assert store.is_completed(key("a")) and not store.is_completed(key("zz"))


def test_failed_rows_are_replaced_ok_rows_never(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.record(key("a"), FAILED)
        store.record(key("a"), OK)  # --retry-failed: the failure is replaced
        store.record(key("b"), OK)
        store.record(key("b"), FAILED)  # an ok answer is never overwritten
        other = CallResult(status="ok", answer="{}", parsed={"score": 2}, value=2.0)
        store.record(key("b"), other)
        df = store.frame().set_index("item")
        assert store.count() == 2
    assert df.loc["a", "status"] == "ok" and df.loc["a", "value"] == 7.0
    assert df.loc["b", "status"] == "ok" and df.loc["b", "value"] == 7.0


def test_frame_filters_and_spend(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.record(key("a"), OK)
        store.record(key("a", call_type="dimension", dimension="colour"), OK)
        store.record(key("b", dataset="para"), FAILED)
        assert len(store.frame(dataset="eva")) == 2
        assert set(store.frame(call_types=["dimension"]).dimension) == {"colour"}
        assert list(store.frame(status="failed").item) == ["b"]
        assert store.spend() == pytest.approx(2 * OK.cost)
        assert store.spend("para") == 0.0
        empty = store.frame(dataset="nothing")
        assert len(empty) == 0 and "value" in empty.columns


def test_rejects_a_foreign_file(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="schema version 99"):
        Store(path)
    with pytest.raises(FileNotFoundError):
        Store(tmp_path / "missing.sqlite", readonly=True)


def test_committed_rows_survive_kill(tmp_path: Path) -> None:
    """A process killed right after its commits (no close, no checkpoint) loses nothing."""
    path = tmp_path / "s.sqlite"
    code = f"""
import os, signal
from judgepanel.core.store import Store, CallResult
from judgepanel.core.calls import CallKey
s = Store({str(path)!r})
for i in range(50):
    s.record(CallKey('eva', f'i{{i}}', 'f', 'm', 'holistic', '', 0, 0.3, '', ''),
             CallResult(status='ok', parsed={{'score': 5}}, value=5.0))
os.kill(os.getpid(), signal.SIGKILL)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert proc.returncode == -9
    with Store(path) as store:
        assert store.count() == 50


class Args:
    def __init__(self, **kw) -> None:
        self.__dict__.update(kw)


def test_status_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.record(key("a"), OK)
        store.record(key("b"), FAILED)
    assert status_command(Args(store=path, json=True)) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["calls"], info["ok"], info["failed"]) == (2, 1, 1)
    assert info["failures"] == [
        {"failure": "retryable", "reason": "http 500 after 6 attempts", "n": 1}
    ]
    assert info["rubrics"] == [{"rubric_sha": "r" * 64, "n": 2}]
    assert info["spend"] == pytest.approx(OK.cost)
    assert status_command(Args(store=path, json=False)) == 0
    text = capsys.readouterr().out
    assert "failures by reason" in text and "http 500 after 6 attempts" in text
    for suffix in ("csv", "parquet"):
        out = tmp_path / f"calls.{suffix}"
        assert export_command(Args(store=path, out=out)) == 0
        df = pd.read_csv(out) if suffix == "csv" else pd.read_parquet(out)
        assert len(df) == 2 and {"value", "reason", "cost"} <= set(df.columns)
    assert export_command(Args(store=path, out=tmp_path / "x.xlsx")) == 1
    assert status_command(Args(store=tmp_path / "none.sqlite", json=False)) == 1


def test_second_sender_is_refused(tmp_path: Path) -> None:
    """Two processes sending into one store would pay for every call twice."""
    path = tmp_path / "s.sqlite"
    with Store(path) as first, Store(path) as second:
        with first.sending():
            lock = second.sending()
            with pytest.raises(StoreError, match="another process"):
                lock.__enter__()
        with second.sending():  # released when the first is done
            pass


def test_senders_of_different_datasets_run_side_by_side(tmp_path: Path) -> None:
    """The lock is per dataset: two scorings of different datasets may send at once, a
    second sender of the same dataset is refused by name, and a whole-store sender meets
    every dataset's sender."""
    path = tmp_path / "s.sqlite"
    with Store(path) as first, Store(path) as second:
        with first.sending(["eva"]), second.sending(["para", "vab"]):
            with pytest.raises(StoreError, match="another process is sending calls of eva"):
                second.sending(["visionq", "eva"]).__enter__()
            with pytest.raises(StoreError, match="another process"):
                second.sending().__enter__()
        # the refused attempt took nothing: visionq is free, and both are free afterwards
        with first.sending(["visionq"]), second.sending(["eva", "para"]):
            pass
        with first.sending(), pytest.raises(StoreError, match="calls of para"):
            second.sending(["para"]).__enter__()


def test_recovery_moves_only_the_locked_datasets(tmp_path: Path) -> None:
    """A reservation of a dataset another process is sending is in flight, not lost."""
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.reserve(key("a", dataset="eva"), 0.01)
        store.reserve(key("b", dataset="para"), 0.02)
    with Store(path) as store, store.sending(["eva"]):
        assert astuple(store.recover_interrupted(["eva"])) == (1, 0.01)
        assert astuple(store.recover_interrupted(["eva"])) == (0, 0.0)
        assert astuple(store.possibly_billed()) == (2, 0.03)
    with Store(path) as store, store.sending():
        assert astuple(store.recover_interrupted()) == (1, 0.02)


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_the_lock_holds_through_every_path_to_the_file(tmp_path: Path, link: str) -> None:
    """A symlink or a hard link names the same file: it must meet the same lock, or two
    writers would send (and pay for) the same calls twice."""
    path = tmp_path / "s.sqlite"
    Store(path).close()
    other = tmp_path / "elsewhere" / "alias.sqlite"
    other.parent.mkdir()
    if link == "symlink":
        other.symlink_to(path)
    else:
        other.hardlink_to(path)
    with Store(path) as first, Store(other) as second:
        with first.sending(), pytest.raises(StoreError, match="another process"):
            second.sending().__enter__()
        with second.sending(), pytest.raises(StoreError, match="another process"):
            first.sending().__enter__()


def test_the_lock_is_refused_across_processes(tmp_path: Path) -> None:
    """The lock holds between processes too, through a hard link, and ends with the holder."""
    path = tmp_path / "s.sqlite"
    alias = tmp_path / "alias.sqlite"
    Store(path).close()
    alias.hardlink_to(path)
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time\n"
            "from judgepanel.core.store import Store\n"
            "with Store(sys.argv[1]) as s, s.sending():\n"
            "    print('locked', flush=True)\n"
            "    time.sleep(60)\n"
        ), str(path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "locked"
        with Store(alias) as second, pytest.raises(StoreError, match="another process"):
            second.sending().__enter__()
        with Store(alias) as second, pytest.raises(StoreError, match="calls of eva"):
            second.sending(["eva"]).__enter__()
    finally:
        holder.kill()
        holder.wait()
    with Store(alias) as second, second.sending():
        pass


SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
CREATE TABLE calls (
    dataset TEXT NOT NULL, item TEXT NOT NULL, family TEXT NOT NULL, model TEXT NOT NULL,
    kind TEXT NOT NULL, dimension TEXT NOT NULL, repetition INTEGER NOT NULL,
    temperature REAL NOT NULL, rubric_sha TEXT NOT NULL, prompt_hash TEXT NOT NULL,
    answer TEXT, value REAL, parsed TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')), reason TEXT NOT NULL DEFAULT '',
    prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL NOT NULL DEFAULT 0,
    latency_s REAL, attempts INTEGER NOT NULL, reasks INTEGER NOT NULL DEFAULT 0,
    finish_reason TEXT, seed INTEGER, created_at TEXT NOT NULL, key_digest INTEGER NOT NULL,
    PRIMARY KEY (dataset, item, family, model, kind, dimension, repetition, temperature,
                 rubric_sha, prompt_hash)
);
"""


def schema_1_store(path: Path) -> None:
    """A store as the first schema wrote it: an ok call, a retryable and a final failure."""
    from judgepanel.core.calls import key_digest

    con = sqlite3.connect(path)
    con.executescript(SCHEMA_1)
    rows = [
        (key("a"), "ok", "", 0.002, 3, 1),
        (key("b"), "failed", "connection error after 6 attempts", 0.0, 6, 0),
        (key("c"), "failed", "unparseable: no score in the answer", 0.003, 3, 2),
    ]
    for k, status, reason, cost, attempts, reasks in rows:
        con.execute(
            f"INSERT INTO calls VALUES ({', '.join('?' * 25)})",
            (*k.as_tuple(), "{}", None, None, status, reason, None, None, cost, 0.1,
             attempts, reasks, "stop", 1, "2026-01-01T00:00:00+00:00", key_digest(k)),
        )  # fmt: skip
    con.commit()
    con.close()


def test_a_schema_1_store_is_read_as_is_and_migrated_on_write(tmp_path: Path) -> None:
    from judgepanel.core.calls import key_digest

    path = tmp_path / "old.sqlite"
    schema_1_store(path)
    with Store(path, readonly=True) as old:  # reading never writes: the file stays schema 1
        df = old.frame().set_index("item")
        assert old.summary().retryable == 1 and old.possibly_billed().calls == 0
    assert list(df.failure) == ["", "retryable", "final"]
    assert list(df.billed) == [2, 0, 3]
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta").fetchone()[0] == "1"
    con.close()
    with Store(path) as store:  # a writer migrates it in place
        assert store.schema_version == SCHEMA_VERSION
        migrated = store.frame().set_index("item")
        # a plain resume sends the retryable failure again, and only that one
        assert store.completed_digests("eva") == {key_digest(key("a")), key_digest(key("c"))}
        store.record(key("b"), OK)
    pd.testing.assert_frame_equal(migrated[["failure", "billed"]], df[["failure", "billed"]])
    with Store(path, readonly=True) as store:
        assert store.schema_version == SCHEMA_VERSION
        after = store.frame().set_index("item")
    assert after.loc["b", "attempts"] == 6 + OK.attempts
    # 1 -> 3 in one step: schema 3's columns are there too, unknown for the old rows
    assert pd.isna(after.loc["a", "cached_tokens"]) and pd.isna(after.loc["c", "reported_cost"])
    assert list(after["samples_per_request"]) == [1, 1, 1]
    assert pd.isna(df["cached_tokens"]).all() and list(df["samples_per_request"]) == [1, 1, 1]


def test_reservations_survive_until_recorded_or_recovered(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.reserve(key("a"), 0.01, seed=5)
        store.reserve(key("b"), 0.02)
        store.reserve(key("c"), 0.04)
        store.record(key("a"), OK)  # recorded: its reservation goes in the same commit
        store.release(key("c"))  # ended without a bill (an aborting HTTP error)
        assert astuple(store.possibly_billed()) == (1, 0.02)
        assert store.total_committed() == pytest.approx(OK.cost + 0.02)
    with Store(tmp_path / "s.sqlite") as store, store.sending():
        assert astuple(store.recover_interrupted()) == (1, 0.02)
        assert astuple(store.recover_interrupted()) == (0, 0.0)
        # still possibly billed: the endpoint may have answered the lost request
        assert astuple(store.possibly_billed()) == (1, 0.02)


def test_key_tuple_matches_the_dataclass() -> None:
    from dataclasses import astuple

    k = key("x", rep=3)
    assert k.as_tuple() == astuple(k)


def test_completed_digests_match_the_keys(tmp_path: Path) -> None:
    from judgepanel.core.calls import key_digest

    with Store(tmp_path / "s.sqlite") as store:
        store.record(key("a"), CallResult(status="ok", value=5.0))
        store.record(key("b"), CallResult(status="failed", reason="timeout"))
        store.record(key("c", dataset="para"), CallResult(status="ok", value=3.0))
        assert store.completed_digests("eva") == {key_digest(key("a")), key_digest(key("b"))}
        assert store.completed_digests("eva", include_failed=False) == {key_digest(key("a"))}
        assert len({key_digest(key(str(i))) for i in range(1000)}) == 1000
        # The digest changes with any key field, the temperature included.
        assert key_digest(key("a")) != key_digest(key("a", temperature=0.0))


def test_a_file_of_another_kind_is_refused_and_left_alone(tmp_path: Path) -> None:
    """A path to some other file is an error that names it; nothing is written into it."""
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database at all, " * 100)
    before = text.read_bytes()
    with pytest.raises(StoreError, match=r"notes\.sqlite: not a judgepanel store"):
        Store(text)
    assert text.read_bytes() == before
    other = tmp_path / "app.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE users (name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=r"app\.sqlite: not a judgepanel store .*users"):
        Store(other)
    con = sqlite3.connect(other)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    mode = con.execute("PRAGMA journal_mode").fetchone()[0]
    con.close()
    assert tables == {"users"} and mode != "wal"
    # status names the file too, instead of a traceback
    assert status_command(Args(store=text, json=False)) == 1
