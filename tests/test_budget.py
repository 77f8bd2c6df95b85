"""The budget: the per-call upper bound, the reservation ledger, and the hard ceiling
under high concurrency against the real simulated server."""

from __future__ import annotations

import io
import math
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from judgepanel.core.budget import (
    IMAGE_FLOOR_TOKENS,
    Budget,
    RequestShape,
    image_token_bound,
    request_bound,
)
from judgepanel.core.config import Price
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.prompts import bytes_data_url
from judgepanel.core.rubric import load_rubric
from judgepanel.core.sendconfig import ClientOptions


def png_url(w: int, h: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (120, 80, 40)).save(buf, format="PNG")
    return bytes_data_url(buf.getvalue(), "image/png")


def test_image_bound() -> None:
    assert image_token_bound(64, 64) == IMAGE_FLOOR_TOKENS
    assert image_token_bound(1024, 768) == 64 * 48 + 48
    # monotone in size
    assert image_token_bound(2048, 2048) > image_token_bound(1024, 1024)


def test_request_shape_counts_bytes_messages_and_images() -> None:
    rubric = load_rubric()
    msgs = rubric.messages("dimension", "colour", png_url(1024, 768))
    shape = RequestShape.of(msgs, 200)
    text = msgs[0]["content"] + msgs[1]["content"][0]["text"]
    assert shape.text_bytes == len(text.encode("utf-8"))
    assert shape.n_messages == 2
    assert shape.image_sizes == ((1024, 768),)
    bound = request_bound(msgs, 200, max_reasks=2)
    assert bound.billed_answers == 3
    assert bound.output_tokens == 200
    assert bound.input_tokens >= shape.text_bytes + image_token_bound(1024, 768)
    price = Price(0.30, 2.50)
    assert bound.cost(price) == pytest.approx(3 * price.cost(bound.input_tokens, 200))
    # non-ASCII text is bounded by its UTF-8 bytes, not its characters
    cjk = [{"role": "user", "content": "图像美学评分" * 10}]
    assert RequestShape.of(cjk, 10).text_bytes == 3 * 60


def test_bound_exceeds_a_realistic_tokenizer() -> None:
    """Real tokenizers give ~4 characters a token in English; the bound must be above."""
    rubric = load_rubric()
    msgs = rubric.messages("holistic", "", png_url(512, 512))
    shape = RequestShape.of(msgs, 200)
    assert shape.input_bound() > math.ceil(shape.text_bytes / 4) + 765  # 765: a 4-tile image
    assert shape.input_expected() < shape.input_bound()


def test_ledger() -> None:
    b = Budget(max_cost=1.0)
    assert b.try_reserve(0.6)
    assert not b.try_reserve(0.5)  # 0.6 + 0.5 > 1.0
    assert b.try_reserve(0.4)
    b.settle(0.6, 0.1)  # actual cost replaces the reservation
    assert b.spent == pytest.approx(0.1) and b.reserved == pytest.approx(0.4)
    assert b.try_reserve(0.5)
    b.settle(0.4, 0.05)
    b.settle(0.5, 0.6)  # an overshoot of the bound is counted
    assert b.reserved == 0 and b.in_flight == 0
    assert b.spent == pytest.approx(0.75) and b.bound_exceeded == 1
    assert Budget(None).try_reserve(1e9)


@pytest.mark.timeout(120)
def test_the_store_ceiling_counts_what_came_before() -> None:
    """``max_total_cost`` holds over the store's prior spend and reservations as well."""
    budget = Budget(max_cost=None, max_total_cost=1.0, prior=0.7)
    assert budget.fits(0.3) and not budget.fits(0.31)
    assert budget.remaining == pytest.approx(0.3)
    both = Budget(max_cost=0.2, max_total_cost=1.0, prior=0.7)
    assert both.fits(0.2) and not both.fits(0.21)  # the tighter of the two
    assert both.try_reserve(0.2) and both.remaining == pytest.approx(0.0)


def test_ceiling_holds_under_high_concurrency(sim_server_factory, tmp_path: Path, monkeypatch):
    """32 calls in flight and a ceiling that allows only part of the plan: spend stays under
    it, the run says the budget stopped it, and unsent calls are not recorded."""
    from test_client import make_images, simple_plan

    from judgepanel.core.client import run_calls
    from judgepanel.core.store import Store

    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    server = sim_server_factory(latency_ms=100)
    images = make_images(tmp_path / "img", 8, size=(1024, 768))
    # short answers and no re-asks keep the bound within a few times the actual cost, so
    # the ceiling leaves room for 32 reservations yet stops well before the 240 calls
    specs = [replace(s, max_tokens=30) for s in simple_plan(images, reps=30)]
    price = Price(0.30, 2.50)
    bound = request_bound(specs[0].build(), 30, max_reasks=0).cost(price)
    max_cost = 32 * bound
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices={"sim-aurora-v1": price},
            options=ClientOptions(
                endpoint=Endpoint.at(server.base_url),
                concurrency=32,
                max_cost=max_cost,
                max_reasks=0,
                progress=False,
            ),
        )
        df = store.frame()
    assert summary.stopped_by_budget and not summary.aborted
    assert summary.spend <= max_cost
    assert df["cost"].sum() <= max_cost
    assert df["cost"].sum() == pytest.approx(summary.spend)
    assert df["cost"].max() < bound  # every actual cost stayed within its reservation
    # waiting on in-flight calls lets more than the first 32 reservations run, but the
    # ceiling stops the plan before its end, and nothing unsent is recorded
    assert 32 < len(df) < len(specs)
    assert len(df) == summary.ok + summary.failed == summary.sent
    assert summary.unsent == len(specs) - len(df)
    assert (df.attempts >= 1).all() and set(df.status) <= {"ok", "failed"}
    # the spend left unused is less than one more call's bound: the run stopped only when
    # the next reservation no longer fitted
    assert max_cost - summary.spend < bound
