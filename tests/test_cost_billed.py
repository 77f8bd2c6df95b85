"""Cost as billed: cached prompt tokens at their own price, the provider's reported cost, and
rows drawn n to a request, kept by the store (schema 3) and shown by status and the cost table."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgepanel.cli.export import export_command
from judgepanel.cli.status import status_command
from judgepanel.core.budget import request_bound
from judgepanel.core.calls import KEY_FIELDS, CallKey, key_digest
from judgepanel.core.config import Price, load_config
from judgepanel.core.coverage import (
    COST_COLUMNS,
    cost_summary,
    describe_mix,
    samples_per_request_mix,
)
from judgepanel.core.store import SCHEMA_VERSION, CallResult, Store, Tokens


def key(item: str = "img1", rep: int = 0, model: str = "sim-aurora-v1", **kw) -> CallKey:
    fields = {
        "dataset": "eva",
        "item": item,
        "family": "aurora",
        "model": model,
        "call_type": "holistic",
        "dimension": "",
        "repetition": rep,
        "temperature": 0.3,
        "rubric_sha": "r" * 64,
        "prompt_hash": "p" * 64,
    }
    fields.update(kw)
    return CallKey(**fields)


def ok(**kw) -> CallResult:
    fields = {
        "status": "ok",
        "answer": '{"score": 6}',
        "parsed": {"score": 6},
        "value": 6.0,
        "prompt_tokens": 1000,
        "completion_tokens": 20,
        "cost": 0.0003,
        "billed": 1,
    }
    fields.update(kw)
    return CallResult(**fields)


class Args:
    def __init__(self, **kw) -> None:
        self.__dict__.update(kw)


# -- prices ------------------------------------------------------------------------------


def test_cached_tokens_are_billed_at_the_cached_price() -> None:
    price = Price(input=0.30, output=2.50, cached_input=0.075)
    # 1000 prompt tokens of which 400 cached: 600 at the input price, 400 at the cached one
    assert price.cost(1000, 100, 400) == pytest.approx((600 * 0.30 + 400 * 0.075 + 250) / 1e6)
    assert price.cost(1000, 100, cached_tokens=1000) < price.cost(1000, 100)
    # no cached price: a cached token costs what any input token costs
    full = Price(0.30, 2.50)
    assert full.cost(1000, 100, 400) == full.cost(1000, 100)
    # the two-argument call of existing callers is unchanged, to the last bit
    assert full.cost(1000, 100) == (1000 * 0.30 + 100 * 2.50) / 1e6
    assert price.cost(1000, 100) == full.cost(1000, 100)


def test_cached_tokens_must_be_part_of_the_prompt() -> None:
    price = Price(0.30, 2.50, 0.075)
    with pytest.raises(ValueError, match="between 0 and prompt_tokens"):
        price.cost(100, 10, 101)
    with pytest.raises(ValueError, match="between 0 and prompt_tokens"):
        price.cost(100, 10, -1)
    assert price.cost(0, 10, 0) == pytest.approx(10 * 2.50 / 1e6)


def test_the_budget_bound_never_counts_on_a_cache_hit() -> None:
    """A reservation must hold whatever the cache does: it charges the full input price."""
    messages = [{"role": "user", "content": "rate this image " * 20}]
    bound = request_bound(messages, 50, max_reasks=1)
    assert bound.cost(Price(0.30, 2.50, cached_input=0.075)) == bound.cost(Price(0.30, 2.50))


def test_the_project_prices_carry_cached_input() -> None:
    config = load_config()
    for model in ("sim-aurora-v1", "sim-basalt-v1", "sim-cobalt-v1", "sim-dune-v1", "sim-ember-v1"):
        p = config.price(model)
        assert p.cached_input == p.input / 4, model
    router = config.price("router/sim-aurora-v1")
    assert (router.input, router.cached_input, router.output) == (0.30, 0.075, 2.50)
    # real models: no confirmed cached price, so none is claimed
    for model in config.profile("paper").families.values():
        assert config.price(model).cached_input is None, model


# -- the store -----------------------------------------------------------------------------


def test_the_new_fields_round_trip(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.record(key("a"), ok(cached_tokens=600, reported_cost=0.00021, samples_per_request=5))
        store.record(key("b"), ok())
        df = store.frame().set_index("item")
        export = tmp_path / "calls.csv"
    a, b = df.loc["a"], df.loc["b"]
    assert (a.cached_tokens, a.reported_cost, a.samples_per_request) == (600, 0.00021, 5)
    assert pd.isna(b.cached_tokens) and pd.isna(b.reported_cost) and b.samples_per_request == 1
    assert str(df["cached_tokens"].dtype) == "Int64"
    assert df["reported_cost"].dtype == np.float64
    cols = list(df.reset_index().columns)
    assert cols.index("cached_tokens") == cols.index("prompt_tokens") + 1
    assert cols.index("reported_cost") == cols.index("cost") + 1
    assert export_command(Args(store=tmp_path / "s.sqlite", out=export)) == 0
    exported = pd.read_csv(export).set_index("item")
    assert {"cached_tokens", "reported_cost", "samples_per_request"} <= set(exported.columns)
    assert (
        exported.loc["a", "cached_tokens"] == 600 and exported.loc["a", "reported_cost"] == 0.00021
    )


def test_samples_per_request_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ok(samples_per_request=0)


def test_resends_add_up_cached_tokens_and_reported_cost(tmp_path: Path) -> None:
    unreadable = CallResult(
        status="failed",
        reason="unparseable: no score in the answer",
        prompt_tokens=2000,
        completion_tokens=40,
        cost=0.0006,
        attempts=2,
        reasks=1,
        billed=2,
        cached_tokens=1500,
        reported_cost=0.0004,
        samples_per_request=1,
    )
    unanswered = CallResult(
        status="failed", reason="connection error after 6 attempts", attempts=6, billed=0
    )
    unreported = CallResult(
        status="failed",
        reason="unparseable: no score",
        prompt_tokens=1000,
        completion_tokens=20,
        billed=1,
        cached_tokens=None,
        reported_cost=None,
    )
    with Store(tmp_path / "s.sqlite") as store:
        # a billed failure, then an ok resend: both sums grow, samples_per_request is replaced
        store.record(key("a"), unreadable)
        store.record(key("a"), ok(cached_tokens=800, reported_cost=0.0002, samples_per_request=3))
        # a failure that billed nothing (and knew nothing) does not make the resend unknown
        store.record(key("b"), unanswered)
        store.record(key("b"), ok(cached_tokens=700, reported_cost=0.0003))
        # a billed answer that reported nothing leaves the sum unknown for good
        store.record(key("c"), unreported)
        store.record(key("c"), ok(cached_tokens=700, reported_cost=0.0003))
        # an ok row is never replaced, so nothing is added to it either
        store.record(key("a"), ok(cached_tokens=5, reported_cost=1.0))
        df = store.frame().set_index("item")
    a = df.loc["a"]
    assert (a.prompt_tokens, a.cached_tokens, a.billed) == (3000, 2300, 3)
    assert a.reported_cost == pytest.approx(0.0006)
    assert a.cost == pytest.approx(0.0009)
    assert a.samples_per_request == 3
    b = df.loc["b"]
    assert (b.cached_tokens, b.billed, b.attempts) == (700, 1, 7)
    assert b.reported_cost == pytest.approx(0.0003)
    c = df.loc["c"]
    assert pd.isna(c.cached_tokens) and pd.isna(c.reported_cost) and c.billed == 2


SCHEMA_2 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '2');
CREATE TABLE calls (
    dataset TEXT NOT NULL, item TEXT NOT NULL, family TEXT NOT NULL, model TEXT NOT NULL,
    kind TEXT NOT NULL, dimension TEXT NOT NULL, repetition INTEGER NOT NULL,
    temperature REAL NOT NULL, rubric_sha TEXT NOT NULL, prompt_hash TEXT NOT NULL,
    answer TEXT, value REAL, parsed TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')), reason TEXT NOT NULL DEFAULT '',
    failure TEXT NOT NULL DEFAULT '' CHECK (failure IN ('', 'retryable', 'final')),
    prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL NOT NULL DEFAULT 0,
    latency_s REAL, attempts INTEGER NOT NULL, reasks INTEGER NOT NULL DEFAULT 0,
    billed INTEGER NOT NULL DEFAULT 0, finish_reason TEXT, seed INTEGER,
    created_at TEXT NOT NULL, key_digest INTEGER NOT NULL,
    PRIMARY KEY (dataset, item, family, model, kind, dimension, repetition, temperature,
                 rubric_sha, prompt_hash)
);
CREATE INDEX calls_digest ON calls (dataset, status, key_digest);
CREATE TABLE pending (
    key TEXT PRIMARY KEY, dataset TEXT NOT NULL, item TEXT NOT NULL, model TEXT NOT NULL,
    seed INTEGER, bound REAL NOT NULL, started_at TEXT NOT NULL
);
CREATE TABLE interrupted (
    key TEXT NOT NULL, dataset TEXT NOT NULL, item TEXT NOT NULL, model TEXT NOT NULL,
    seed INTEGER, bound REAL NOT NULL, started_at TEXT NOT NULL, found_at TEXT NOT NULL
);
"""
"""The DDL of schema 2, as the store wrote it before schema 3."""


def schema_2_store(path: Path) -> None:
    """A store as schema 2 wrote it: an ok call, a retryable failure, one interrupted call."""
    con = sqlite3.connect(path)
    con.executescript(SCHEMA_2)
    rows = [
        (key("a"), "ok", "", "", 900, 20, 0.002, 2, 1, 2),
        (key("b"), "failed", "http 500 after 6 attempts", "retryable", None, None, 0.0, 6, 0, 0),
    ]
    for k, status, reason, failure, pt, ct, cost, attempts, reasks, billed in rows:
        con.execute(
            f"INSERT INTO calls VALUES ({', '.join('?' * 27)})",
            (*k.as_tuple(), "{}", 6.0 if status == "ok" else None, None, status, reason,
             failure, pt, ct, cost, 0.1, attempts, reasks, billed, "stop", 1,
             "2026-01-01T00:00:00+00:00", key_digest(k)),
        )  # fmt: skip
    con.execute(
        "INSERT INTO interrupted VALUES ('k', 'eva', 'z', 'sim-aurora-v1', 1, 0.01, 't0', 't1')"
    )
    con.commit()
    con.close()


def _columns(path: Path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return [row[1] for row in con.execute("PRAGMA table_info(calls)")]
    finally:
        con.close()


def _version(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    finally:
        con.close()


OLD_COLUMNS = [c for c in KEY_FIELDS] + [
    "status", "reason", "failure", "prompt_tokens", "completion_tokens", "cost", "attempts",
    "reasks", "billed", "value",
]  # fmt: skip


def test_a_schema_2_store_is_read_as_is(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    schema_2_store(path)
    with Store(path, readonly=True) as old:
        assert old.schema_version == 2
        df = old.frame().set_index("item")
        info = old.summary()
        mix = old.samples_per_request_mix("eva")
    assert pd.isna(df["cached_tokens"]).all() and pd.isna(df["reported_cost"]).all()
    assert list(df["samples_per_request"]) == [1, 1]
    assert df.loc["a", "prompt_tokens"] == 900 and df.loc["b", "failure"] == "retryable"
    assert mix == {1: 2}
    assert info.cost_reported is None and info.tokens.cached is None
    assert info.unanswered_calls == 1
    # reading wrote nothing: the file is still schema 2, without the new columns
    assert _version(path) == "2" and "cached_tokens" not in _columns(path)


def test_a_schema_2_store_is_migrated_in_place_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    schema_2_store(path)
    with Store(path, readonly=True) as old:
        before = old.frame(columns=OLD_COLUMNS)
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 5
        after = store.frame()
        assert store.possibly_billed().calls == 1  # the interrupted call is still counted
        # a plain resume sends the retryable failure again; its resend adds up as ever
        assert store.completed_digests("eva") == {key_digest(key("a"))}
        store.record(key("b"), ok(cached_tokens=250, reported_cost=0.0001, samples_per_request=2))
    pd.testing.assert_frame_equal(after[OLD_COLUMNS], before)
    assert pd.isna(after["cached_tokens"]).all() and (after["samples_per_request"] == 1).all()
    assert _version(path) == str(SCHEMA_VERSION)
    assert {"cached_tokens", "reported_cost", "samples_per_request"} <= set(_columns(path))
    with Store(path, readonly=True) as store:
        b = store.frame().set_index("item").loc["b"]
    assert (b.cached_tokens, b.samples_per_request, b.attempts) == (250, 2, 7)
    assert b.reported_cost == pytest.approx(0.0001)
    with Store(path) as again:  # opening a migrated file again changes nothing
        assert again.schema_version == SCHEMA_VERSION and again.count() == 2


# -- status and the cost table -------------------------------------------------------------


def mixed_store(path: Path) -> None:
    """sim-aurora-v1: 5 repetitions drawn in one request of n=5 and 2 drawn alone, cached
    tokens known, no reported cost; router/sim-aurora-v1: 3 rows drawn alone with usage.cost."""
    with Store(path) as store:
        for rep in range(5):
            store.record(key("a", rep), ok(cached_tokens=800, samples_per_request=5, cost=0.0001))
        for rep in range(2):
            store.record(key("b", rep), ok(cached_tokens=0, cost=0.0003))
        for rep in range(3):
            store.record(
                key("a", rep, model="router/sim-aurora-v1", family="router"),
                ok(cost=0.0003, reported_cost=0.0004),
            )
        store.record(
            key("c", model="router/sim-aurora-v1", family="router"),
            CallResult(status="failed", reason="http 429 after 6 attempts", attempts=6),
        )


def test_summary_and_status_on_a_mixed_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path)
    with Store(path, readonly=True) as store:
        info = store.summary()
        assert store.samples_per_request_mix("eva") == {1: 6, 5: 5}
        assert store.samples_per_request_mix("eva", models=["sim-aurora-v1"]) == {1: 2, 5: 5}
        assert store.samples_per_request_mix("eva", models=["router/sim-aurora-v1"]) == {1: 4}
        assert store.samples_per_request_mix("para") == {}
    models = {m.model: m for m in info.models}
    aurora, router = models["sim-aurora-v1"], models["router/sim-aurora-v1"]
    assert (aurora.calls, aurora.input_tokens, aurora.cached_tokens) == (7, 7000, 4000)
    assert aurora.output_tokens == 140
    assert aurora.cost_estimated == pytest.approx(5 * 0.0001 + 2 * 0.0003)
    assert aurora.cost_reported is None and aurora.reported_calls == 0
    assert aurora.samples_per_request == {1: 2, 5: 5}
    assert (router.calls, router.reported_calls, router.billed_calls) == (4, 3, 3)
    assert router.cost_reported == pytest.approx(3 * 0.0004)
    assert router.cached_tokens is None  # the router reported no cached tokens
    assert info.tokens == Tokens(input=10000, cached=4000, output=200)
    assert info.cost_estimated == pytest.approx(info.spend)
    assert info.cost_reported == pytest.approx(3 * 0.0004)
    assert (info.reported_calls, info.billed_calls) == (3, 10)
    assert info.samples_per_request == {1: 6, 5: 5}

    assert status_command(Args(store=path, json=True)) == 0
    as_json = json.loads(capsys.readouterr().out)
    by_model = {m["model"]: m for m in as_json["models"]}
    assert by_model["sim-aurora-v1"]["samples_per_request"] == {"1": 2, "5": 5}
    assert by_model["router/sim-aurora-v1"]["cost_reported"] == pytest.approx(0.0012)

    assert status_command(Args(store=path, json=False)) == 0
    text = capsys.readouterr().out
    assert "cost per model" in text
    for header in ("input tokens", "cached tokens", "output tokens", "cost estimated"):
        assert header in text
    rows = [line.strip() for line in text.splitlines()]
    table = [row for row in rows if row.startswith(("sim-", "router/")) and " holds " not in row]
    lines = {row.split()[0]: row for row in table}
    assert len(lines) == 2
    assert "not reported" in lines["sim-aurora-v1"] and "4,000" in lines["sim-aurora-v1"]
    assert "$0.0012" in lines["router/sim-aurora-v1"]
    assert "sim-aurora-v1 holds 2 rows drawn one at a time and 5 rows drawn 5 to a request" in text
    assert "router/sim-aurora-v1 holds" not in text  # one value: nothing to say
    assert "reported by the provider $0.0012 on 3 of 10 billed calls" in text


def test_status_of_a_store_without_reported_cost_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.record(key("a"), ok())
    assert status_command(Args(store=path, json=False)) == 0
    text = capsys.readouterr().out
    assert "not reported" in text and "reported by the provider" not in text
    assert "drawn" not in text


def test_the_cost_table_has_cached_tokens_and_reported_usd(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path)
    with Store(path, readonly=True) as store:
        calls = store.frame()
    table = cost_summary(calls, "eva", n_images=3)
    assert list(table.columns) == COST_COLUMNS
    assert COST_COLUMNS.index("cached_tokens") == COST_COLUMNS.index("prompt_tokens") + 1
    assert COST_COLUMNS.index("reported_usd") == COST_COLUMNS.index("cost_usd") + 1
    rows = table.set_index("family")
    assert rows.loc["aurora", "cached_tokens"] == 4000
    assert pd.isna(rows.loc["aurora", "reported_usd"])  # no row reported a cost
    assert pd.isna(rows.loc["router", "cached_tokens"])  # no row reported cached tokens
    assert rows.loc["router", "reported_usd"] == pytest.approx(0.0012)
    assert rows.loc["all", "cached_tokens"] == 4000
    assert rows.loc["all", "reported_usd"] == pytest.approx(0.0012)
    assert rows.loc["all", "cost_usd"] == pytest.approx(calls["cost"].sum())
    assert rows.loc["all", "usd_per_image"] == pytest.approx(calls["cost"].sum() / 3)
    assert samples_per_request_mix(calls[calls["model"] == "sim-aurora-v1"]) == {1: 2, 5: 5}


def test_a_send_that_billed_nothing_reports_no_cost(tmp_path: Path) -> None:
    """A failure with no answer may carry 0.0 reported; it must not make a family's
    unreported answers look reported as free."""
    with Store(tmp_path / "s.sqlite") as store:
        store.record(key("a"), ok())
        store.record(
            key("b"),
            CallResult(status="failed", reason="timeout after 6 attempts", reported_cost=0.0),
        )
        calls = store.frame()
        info = store.summary()
    assert pd.isna(cost_summary(calls, "eva", 2).set_index("family").loc["aurora", "reported_usd"])
    assert info.cost_reported is None and info.reported_calls == 0


def test_describe_mix() -> None:
    assert describe_mix({1: 1}) == "1 row drawn one at a time"
    assert describe_mix({5: 10, 1: 3, 2: 1200}) == (
        "3 rows drawn one at a time, 1,200 rows drawn 2 to a request and "
        "10 rows drawn 5 to a request"
    )
    assert describe_mix({}) == ""
