"""00's savings table: the designs without a prompt cache, read from the cached servers'
ledgers, bill what a server without a cache bills for the same calls."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from judgepanel.core.client import run_calls
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.core.scoring import plan_target
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.settings import ScoreRequest, resolve_settings
from judgepanel.core.store import Store
from judgepanel.studies.fusion.savings_plan import (
    measure_savings,
    repetitions_per_prompt,
    sample_items,
)
from tests.test_batch import runs_file
from tests.test_scoring_cli import write_eva


def ledger(path: Path) -> pd.DataFrame:
    return pd.DataFrame([json.loads(x) for x in path.read_text().splitlines() if x.strip()])


@pytest.mark.timeout(240)
@pytest.mark.slow
def test_uncached_designs_bill_what_a_server_without_a_cache_bills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = write_eva(tmp_path / "eva", n_images=4)
    rf = runs_file(tmp_path, world, tmp_path / "unused.sqlite")
    settings = resolve_settings(ScoreRequest(run="t-eva", runs_file=rf))
    plan = plan_target(settings.targets[0], settings)
    table = measure_savings(plan, settings.prices, n_images=3, concurrency=4).set_index("design")

    sample = sample_items(plan, 3, seed=0)
    scale = len(plan) / len(sample)
    n = repetitions_per_prompt(plan)
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    for label, per_request in (("one sample per request", 1), ("n = k", n)):
        book = tmp_path / f"plain-{per_request}.jsonl"
        with (
            start_sim_server(SimConfig(ledger=book), log_dir=tmp_path) as server,  # no prompt cache
            Store(tmp_path / f"plain-{per_request}.sqlite") as store,
        ):
            options = ClientOptions(
                endpoint=Endpoint.at(server.base_url),
                progress=False,
                samples_per_request=per_request,
            )
            summary = run_calls(sample, store, prices=settings.prices, options=options)
        assert summary.ok == len(sample)
        plain = ledger(book)
        assert "uncached_cost" not in plain.columns
        row = table.loc[label]
        assert row["requests"] == pytest.approx(len(plain) * scale)
        assert row["input_tokens"] == pytest.approx(plain["prompt_tokens"].sum() * scale)
        assert row["output_tokens"] == pytest.approx(plain["completion_tokens"].sum() * scale)
        assert row["cached_tokens"] == 0
        assert row["usd"] == pytest.approx(plain["cost"].sum() * scale, rel=1e-12)
        cached = table.loc[f"{label}, cached"]
        # the same requests, some of whose prompt tokens the cache billed at its lower price
        assert cached["requests"] == row["requests"]
        assert cached["input_tokens"] == row["input_tokens"]
        assert 0 < cached["cached_tokens"] < cached["input_tokens"]
        assert cached["usd"] < row["usd"]
    assert table.loc["n = k", "requests"] < table.loc["one sample per request", "requests"]
