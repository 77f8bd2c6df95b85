"""Repetitions as samples (``n``), and cost as billed, against the real simulated server.

With ``samples_per_request`` above one, k repetitions of a prompt go as ceil(k / N)
requests; each choice is stored as its own repetition row, billed a share of its request.
The simulator's ledger is its own record of what it billed, priced from its own table:
the store's spend must equal it, with caching and ``n`` in play.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_client import keyset, make_images, planned, simple_plan

from judgepanel.core.client import repetition_groups, run_calls
from judgepanel.core.config import load_config
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.paths import project_root
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel_sim.judges.pricing import DEFAULT_PRICES

RUNS = load_config(project_root() / "papermill_runs.yaml")


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-samples-test-0001")
    return "sk-samples-test-0001"


def book(path: Path) -> pd.DataFrame:
    return pd.DataFrame([json.loads(line) for line in path.read_text().splitlines()])


def _run(server, specs, store, **options):
    prices = {m: RUNS.price(m) for m in {s.key.model for s in specs}}
    return run_calls(
        specs,
        store,
        prices=prices,
        options=ClientOptions(endpoint=Endpoint.at(server.base_url), progress=False, **options),
    )


def test_the_demo_prices_are_the_simulators_own():
    """The runs file prices the simulated models as the simulator bills them (two tables
    kept apart on purpose: the server never reads our configuration)."""
    for model, sim in DEFAULT_PRICES.items():
        ours = RUNS.price(model)
        assert (ours.input, ours.cached_input, ours.output) == (
            sim.input,
            sim.cached_input,
            sim.output,
        ), model
        batch = ours.batch()
        assert batch is not None, model
        assert (batch.input, batch.cached_input, batch.output) == pytest.approx(
            (
                sim.input * sim.batch_share,
                sim.cached_input * sim.batch_share,
                sim.output * sim.batch_share,
            )
        ), model


def test_groups_are_runs_of_one_prompt():
    specs = simple_plan(make_images(Path("/tmp") / "jp-groups", 2), reps=7)
    groups = repetition_groups(specs, 3)
    assert [len(g) for g in groups] == [3, 3, 1, 3, 3, 1]
    assert all(len({g_.key.item for g_ in g}) == 1 for g in groups)
    assert [len(g) for g in repetition_groups(specs, 1)] == [1] * 14


@pytest.mark.timeout(180)
def test_n_at_a_time_stores_every_repetition_and_spend_equals_the_ledger(
    sim_server_factory, tmp_path: Path, api_key: str
):
    """12 repetitions of 4 images at 5 per request: 3 requests per image (5 + 5 + 2), 48
    rows with their own keys; the store's spend and the provider's reported cost both
    equal the server's ledger to the cent, with its prompt cache in play."""
    ledger = tmp_path / "billed.jsonl"
    server = sim_server_factory(ledger=ledger, cache_window=64, report_cost=True)
    specs = simple_plan(make_images(tmp_path / "img", 4), reps=12)
    with Store(tmp_path / "s.sqlite") as store:
        summary = _run(server, specs, store, samples_per_request=5)
        df = store.frame()
        spend = store.spend()
    billed = book(ledger)
    assert summary.ok == len(specs) == len(df) and keyset(df) == planned(specs)
    assert summary.requests == len(billed) == 4 * 3
    assert sorted(df.samples_per_request.value_counts().items()) == [(2, 8), (5, 40)]
    assert billed.choices.tolist().count(5) == 8
    assert int(df.prompt_tokens.sum()) == int(billed.prompt_tokens.sum())
    assert int(df.cached_tokens.sum()) == int(billed.cached_tokens.sum()) > 0
    assert round(spend, 2) == round(billed.cost.sum(), 2)
    assert spend == pytest.approx(billed.cost.sum(), rel=1e-9)
    assert df.reported_cost.sum() == pytest.approx(billed.cost.sum(), rel=1e-9)
    # one request per image billed the prompt once, against 12 one at a time
    one = tmp_path / "one.jsonl"
    single = sim_server_factory(ledger=one, cache_window=64, report_cost=True)
    with Store(tmp_path / "t.sqlite") as store:
        _run(single, specs, store)
    assert book(one).prompt_tokens.sum() > 3 * billed.prompt_tokens.sum()


@pytest.mark.timeout(180)
def test_a_model_that_ignores_n_falls_back_to_single_requests(
    sim_server_factory, tmp_path: Path, api_key: str
):
    """The router model returns one choice whatever ``n`` asks: the rest of that group is
    asked one at a time, later groups are split before they are sent, every repetition is
    stored once, and the summary says so once."""
    ledger = tmp_path / "billed.jsonl"
    server = sim_server_factory(ledger=ledger)
    specs = simple_plan(
        make_images(tmp_path / "img", 3), reps=6, families={"router": "router/sim-aurora-v1"}
    )
    with Store(tmp_path / "s.sqlite") as store:
        summary = _run(server, specs, store, samples_per_request=3, concurrency=1)
        df = store.frame()
    assert summary.ok == len(specs) == len(df)
    assert len(summary.notes) == 1 and "returned 1 of 3 choices" in summary.notes[0]
    assert "one per request" in summary.line()
    assert (df.samples_per_request == 1).all()
    assert len(book(ledger)) == len(specs)  # one request per repetition in the end


@pytest.mark.timeout(240)
def test_scores_drawn_n_at_a_time_follow_the_single_draw_distribution(
    sim_server_factory, tmp_path: Path, api_key: str
):
    """400 holistic scores of one image drawn one per request, and 400 drawn eight per
    request: a chi-square test of the two score distributions does not reject (p > 0.001).
    The same test on 400 draws of another image does reject, so 400 draws can see a real
    difference."""
    server = sim_server_factory()
    images = make_images(tmp_path / "img", 6)
    first = images.iloc[[0]].reset_index(drop=True)
    other = images.iloc[[5]].reset_index(drop=True)
    plan = simple_plan(first, reps=400)

    def values(specs, samples: int, name: str) -> np.ndarray:
        with Store(tmp_path / f"{name}.sqlite") as store:
            _run(server, specs, store, samples_per_request=samples, concurrency=16)
            return store.frame().value.to_numpy()

    alone = values(plan, 1, "alone")
    tenfold = values(plan, 8, "eight")
    elsewhere = values(simple_plan(other, reps=400), 1, "other")

    def pvalue(a: np.ndarray, b: np.ndarray) -> float:
        table = pd.crosstab(
            np.r_[np.zeros(len(a)), np.ones(len(b))], np.r_[a, b].round().astype(int)
        )
        table = table.loc[:, table.sum() >= 10]  # cells too thin for the approximation
        return float(stats.chi2_contingency(table.to_numpy())[1])

    assert len(alone) == len(tenfold) == 400
    assert pvalue(alone, tenfold) > 0.001
    assert pvalue(alone, elsewhere) < 0.001
