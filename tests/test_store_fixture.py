"""A store written by the earlier, single-module store code opens as it is.

``fixtures/store/store-v4.sqlite`` was written once by ``fixtures/store/make_store_v4.py``
before the store became a package; the values below were read from it then. Reading it
now must give the same frame, the same summary and the same reservations, to the bit.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from judgepanel.core.batch import BatchBook
from judgepanel.core.store import SCHEMA_VERSION, Reservations, Store, StoreSummary, Tokens

FIXTURE = Path(__file__).parent / "fixtures" / "store" / "store-v4.sqlite"
R, P = "r" * 64, "p" * 64
AT = "2025-01-02T03:04:05.000000+00:00"
BATCH_AT = "2026-12-04T14:47:07.124234+00:00"

DTYPES = {
    "dataset": "str", "item": "str", "family": "str", "model": "str", "kind": "str",
    "dimension": "str", "repetition": "int64", "temperature": "float64", "rubric_sha": "str",
    "prompt_hash": "str", "answer": "str", "value": "float64", "parsed": "str", "status": "str",
    "reason": "str", "failure": "str", "prompt_tokens": "Int64", "cached_tokens": "Int64",
    "completion_tokens": "Int64", "cost": "float64", "reported_cost": "float64",
    "latency_s": "float64", "attempts": "int64", "reasks": "int64", "billed": "int64",
    "finish_reason": "str", "seed": "Int64", "samples_per_request": "int64", "created_at": "str",
}  # fmt: skip
"""The frame's columns in order, and their types, as read at fixture time."""


def answered(score: int) -> dict:
    """The answer, value and parsed text of a row that scored ``score``."""
    text = f'{{"score": {score}, "reason": "é fine"}}'
    return {"answer": text, "value": float(score), "parsed": text}


BASE = {
    "dataset": "eva", "family": "aurora", "model": "sim-aurora-v1", "kind": "holistic",
    "dimension": "", "repetition": 0, "temperature": 0.3, "rubric_sha": R, "prompt_hash": P,
    "status": "ok", "reason": "", "failure": "", "prompt_tokens": 1000, "cached_tokens": None,
    "completion_tokens": 20, "cost": 0.00035, "reported_cost": None, "latency_s": 0.25,
    "attempts": 1, "reasks": 0, "billed": 1, "finish_reason": "stop", "seed": 11,
    "samples_per_request": 1, "created_at": AT,
}  # fmt: skip
"""What the rows below share, unless they say otherwise."""
DRAWN_N_2 = {"cached_tokens": 400, "reported_cost": 0.0003, "samples_per_request": 2}
COBALT = {"family": "cobalt", "model": "sim-cobalt-v1", "created_at": BATCH_AT}
NO_ANSWER = {
    "answer": None, "value": None, "parsed": None, "status": "failed", "failure": "retryable",
    "prompt_tokens": None, "completion_tokens": None, "cost": 0.0, "latency_s": None,
    "billed": 0, "finish_reason": None,
}  # fmt: skip

ROWS = [
    {"item": "img1", **answered(5), "kind": "dimension", "dimension": "colour", "cost": 0.0007,
     "attempts": 2, "reasks": 1, "billed": 2},
    {"item": "img1", **answered(6), **DRAWN_N_2},
    {"item": "img1", **answered(7), **DRAWN_N_2, "repetition": 1},
    {"item": "img1", **answered(4), **COBALT, "cost": 0.0001, "latency_s": 30.0, "seed": 21},
    {"item": "img2", **answered(8), **DRAWN_N_2},
    {"item": "img2", **answered(9), **DRAWN_N_2, "repetition": 1},
    {"item": "img2", **COBALT, **NO_ANSWER, "reason": "http 500 after 1 attempts", "seed": 22},
    {"item": "img3", **NO_ANSWER, "reason": "http 500 after 6 attempts", "attempts": 6,
     "seed": None},
    {"item": "img3", "answer": "no score here", "value": None, "parsed": None,
     "status": "failed", "reason": "unparseable: no JSON object", "failure": "final",
     "repetition": 1, "completion_tokens": 5, "cost": 0.0004, "latency_s": None, "attempts": 3,
     "reasks": 2, "billed": 3, "seed": 12},
    {"item": "img4", **answered(7), "prompt_tokens": None, "completion_tokens": None,
     "cost": 0.0002, "attempts": 3, "seed": 13},
    {"item": "pimg2", **answered(3), "dataset": "para", "seed": 32},
]  # fmt: skip
"""The frame, row by row in the store's key order, as changes to ``BASE``."""

SUMMARY = {
    "schema_version": 4,
    "journal_mode": "wal",
    "calls": 11,
    "ok": 8,
    "failed": 3,
    "retryable": 2,
    "final": 1,
    "spend": 0.00315,
    "billed_answers": 12,
    "unanswered_calls": 1,
    "unanswered_bound": 0.0010999999999999998,
    "batched_calls": 2,
    "batched_bound": 0.0007,
    "attempts": 21,
    "first": AT,
    "last": BATCH_AT,
    "tokens": {"input": 8000, "cached": 1600, "output": 145},
    "cost_estimated": 0.00315,
    "cost_reported": 0.0012,
    "reported_calls": 4,
    "billed_calls": 9,
    "samples_per_request": {1: 7, 2: 4},
    "models": [
        {
            "model": "sim-aurora-v1",
            "calls": 9,
            "input_tokens": 7000,
            "cached_tokens": 1600,
            "output_tokens": 125,
            "cost_estimated": 0.00305,
            "cost_reported": 0.0012,
            "reported_calls": 4,
            "billed_calls": 8,
            "samples_per_request": {1: 5, 2: 4},
        },
        {
            "model": "sim-cobalt-v1",
            "calls": 2,
            "input_tokens": 1000,
            "cached_tokens": None,
            "output_tokens": 20,
            "cost_estimated": 0.0001,
            "cost_reported": None,
            "reported_calls": 0,
            "billed_calls": 1,
            "samples_per_request": {1: 2},
        },
    ],
    "counts": [
        {
            "dataset": "eva",
            "family": "aurora",
            "kind": "dimension",
            "status": "ok",
            "n": 1,
            "cost": 0.0007,
        },
        {
            "dataset": "eva",
            "family": "aurora",
            "kind": "holistic",
            "status": "failed",
            "n": 2,
            "cost": 0.0004,
        },
        {
            "dataset": "eva",
            "family": "aurora",
            "kind": "holistic",
            "status": "ok",
            "n": 5,
            "cost": 0.0016,
        },
        {
            "dataset": "eva",
            "family": "cobalt",
            "kind": "holistic",
            "status": "failed",
            "n": 1,
            "cost": 0.0,
        },
        {
            "dataset": "eva",
            "family": "cobalt",
            "kind": "holistic",
            "status": "ok",
            "n": 1,
            "cost": 0.0001,
        },
        {
            "dataset": "para",
            "family": "aurora",
            "kind": "holistic",
            "status": "ok",
            "n": 1,
            "cost": 0.00035,
        },
    ],
    "failures": [
        {"failure": "retryable", "reason": "http 500 after 1 attempts", "n": 1},
        {"failure": "retryable", "reason": "http 500 after 6 attempts", "n": 1},
        {"failure": "final", "reason": "unparseable: no JSON object", "n": 1},
    ],
    "rubrics": [{"rubric_sha": R, "n": 11}],
}
"""``Store.summary()`` at fixture time, less the path of the file."""

COMPLETED = {
    -8380919096129901029, -8254630653472077616, -7477914717859074760, -6161394282928348498,
    -4674776509954199301, -242911150363880947, 7343206804344285168, 8166841235786377682,
}  # fmt: skip
RETRYABLE_FAILED = 7343206804344285168  # img3 rep 1: final, not ok
BATCHED = {-2615157762699366680, 4307349953300404292}


def expected_frame() -> pd.DataFrame:
    df = pd.DataFrame([{**BASE, **row} for row in ROWS])
    return df[list(DTYPES)].astype(DTYPES)


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    """The fixture copied, so that opening it leaves nothing beside the committed file."""
    path = tmp_path / "store-v4.sqlite"
    shutil.copyfile(FIXTURE, path)
    return path


def summary_of(store: Store) -> dict:
    """The typed summary as plain data, less the path of the file (checked here)."""
    info = store.summary()
    assert isinstance(info, StoreSummary) and info.store == str(store.path)
    assert info.tokens == Tokens(8000, 1600, 145) and info.models[1].cost_reported is None
    data = info.as_dict()
    del data["store"]
    return data


@pytest.mark.parametrize("readonly", [True, False])
def test_a_store_written_before_the_split_reads_the_same(copied: Path, readonly: bool) -> None:
    with Store(copied, readonly=readonly) as store:
        # read as it is, or migrated to schema 5 (the import tables) when opened to write
        version = 4 if readonly else SCHEMA_VERSION
        assert store.schema_version == version and SCHEMA_VERSION == 5
        frame = store.frame()
        assert summary_of(store) == {**SUMMARY, "schema_version": version}
        assert store.imports().empty and store.imported_digests() == set()
        assert store.possibly_billed() == Reservations(3, 0.0018)
        assert store.batched() == Reservations(2, 0.0007)
        assert store.spend() == 0.00315 and store.spend("para") == 0.00035
        assert store.total_committed() == 0.0049499999999999995
        assert store.completed_digests("eva") == COMPLETED
        assert store.completed_digests("eva", include_failed=False) == COMPLETED - {
            RETRYABLE_FAILED
        }
        assert store.batched_digests() == BATCHED
        assert store.samples_per_request_mix() == {1: 7, 2: 4}
        assert store.samples_per_request_mix("eva", ["sim-cobalt-v1"]) == {1: 2}
        assert (store.n_items("eva"), store.count()) == (4, 11)
        chunks = BatchBook(store).summary()
        assert [(c["state"], c["status"], c["calls"], c["bound"]) for c in chunks] == [
            ("submitted", "in_progress", 1, 0.0005),
            ("exported", None, 1, 0.0002),
        ]
        failed = store.frame(dataset="eva", status="failed", columns=["item", "reason"])
    pd.testing.assert_frame_equal(frame, expected_frame())
    assert list(failed.item) == ["img2", "img3", "img3"]


def test_writing_to_it_adds_up_as_before(copied: Path) -> None:
    """A resend of its retryable failure adds to what the earlier sends cost."""
    from judgepanel.core.calls import CallKey
    from judgepanel.core.store import CallResult

    key = CallKey("eva", "img3", "aurora", "sim-aurora-v1", "holistic", "", 0, 0.3, R, P)
    with Store(copied) as store:
        store.record(key, CallResult(status="ok", parsed={"score": 2}, value=2.0, cost=0.001))
        row = store.frame(dataset="eva", columns=["item", "repetition", "attempts", "cost"])
    img3 = row[(row.item == "img3") & (row.repetition == 0)].iloc[0]
    assert (img3.attempts, img3.cost) == (7, 0.001)
