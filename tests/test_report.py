"""The report's plumbing without executing notebooks: the index keeps earlier executions,
stale headlines go, and scoring before the notebooks shares one ceiling per profile."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgepanel.cli import build_parser
from judgepanel.cli.exit_codes import RUN_STOPPED
from judgepanel.cli.report import report_command
from judgepanel.core.config import load_config
from judgepanel.core.store import Store
from judgepanel.report import nbtools
from judgepanel.report.index import NotebookResult, record_outcome, write_index


def runs_file(tmp: Path, eva_root: Path, *, max_cost: float = 100.0) -> Path:
    """One profile with two dataset keys over the same images, and one run for each."""
    runs = {
        "profiles": {
            "p": {
                "description": "two runs",
                "simulated": True,
                "store": str(tmp / "store.sqlite"),
                "datasets": {
                    "a": {"kind": "eva", "root": str(eva_root)},
                    "b": {"kind": "eva", "root": str(eva_root)},
                },
                "families": {"aurora": "sim-aurora-v1", "cobalt": "sim-cobalt-v1"},
                "concurrency": 8,
                "max_cost": max_cost,
            }
        },
        "scoring": {"eva": {"holistic_k": 2, "dimension_r": 1, "temperature": 0.3}},
        "prices": {
            "sim-aurora-v1": {"input": 0.30, "output": 2.50},
            "sim-cobalt-v1": {"input": 0.10, "output": 0.30},
        },
        "runs": {
            "r-a": {"profile": "p", "dataset": "a", "notebooks": ["00_scoring"]},
            "r-b": {
                "profile": "p",
                "dataset": "b",
                "notebooks": ["00_scoring", "01_mtmm_validity"],
            },
        },
    }
    path = tmp / "runs.yaml"
    path.write_text(yaml.safe_dump(runs), encoding="utf-8")
    return path


def test_index_keeps_notebooks_executed_earlier(tmp_path: Path) -> None:
    config = load_config(runs_file(tmp_path, tmp_path / "eva"))
    out = tmp_path / "outputs"
    for run, name in (("r-a", "00_scoring"), ("r-b", "00_scoring")):
        (out / run).mkdir(parents=True, exist_ok=True)
        (out / run / f"{name}.html").write_text("<html></html>")
    # an earlier command executed r-a (and it failed); this one executes only r-b
    record_outcome(out, NotebookResult("r-a", "00_scoring", False, 3.0, None, "cell [4] raised X"))
    now = NotebookResult("r-b", "00_scoring", True, 2.0, out / "r-b" / "00_scoring.html")
    index = write_index(out, [now], config).read_text()
    assert "r-a/00_scoring.html" in index and "r-b/00_scoring.html" in index
    assert "failed: cell [4] raised X" in index
    assert "01_mtmm_validity" not in index  # never executed: not listed
    assert index.index("<h2>r-a</h2>") < index.index("<h2>r-b</h2>")  # runs-file order


def test_setup_drops_the_notebooks_stale_headlines(tmp_path: Path) -> None:
    tables = tmp_path / "run" / "tables"
    tables.mkdir(parents=True)
    stale = {"value": 0.5, "text": "old"}
    (tmp_path / "run" / "headlines.json").write_text(
        json.dumps({"00_scoring": {"coverage": stale}, "01_mtmm_validity": {"x": stale}})
    )
    nb = nbtools.setup(run="run", name="00_scoring", tables_dir=tables, simulated=False)
    kept = json.loads((tmp_path / "run" / "headlines.json").read_text())
    assert kept == {"01_mtmm_validity": {"x": stale}}
    nb.headline("coverage", 0.9, "new")
    kept = json.loads((tmp_path / "run" / "headlines.json").read_text())
    assert kept["00_scoring"] == {"coverage": {"value": 0.9, "text": "new"}}


def test_headlines_keep_the_order_the_notebook_states_them(tmp_path: Path) -> None:
    tables = tmp_path / "run" / "tables"
    nb = nbtools.setup(run="run", name="02_input_ablation", tables_dir=tables, simulated=False)
    for key in ("primary", "vs_best", "sham_cost"):
        nb.headline(key, 0.1, f"{key}: Δρ = +0.100")
    kept = json.loads((tmp_path / "run" / "headlines.json").read_text(encoding="utf-8"))
    assert list(kept["02_input_ablation"]) == ["primary", "vs_best", "sham_cost"]
    assert "Δρ" in (tmp_path / "run" / "headlines.json").read_text(encoding="utf-8")


def test_a_headline_that_claims_too_much_is_refused(tmp_path: Path) -> None:
    tables = tmp_path / "run" / "tables"
    nb = nbtools.setup(run="run", name="07_temperature", tables_dir=tables, simulated=False)
    with pytest.raises(ValueError, match="headline 'rule' of 07_temperature: equivalence"):
        nb.headline("rule", "held", "high temperature is no worse than low")
    with pytest.raises(ValueError, match="non-finite"):
        nb.headline("band", 0.6, "the band is [0.622, inf]")
    nb.headline("rule", "no loss detected", "no loss detected (down to −0.153)")
    kept = json.loads((tmp_path / "run" / "headlines.json").read_text(encoding="utf-8"))
    assert list(kept["07_temperature"]) == ["rule"]  # nothing of the refused ones is kept


def scoring_report(work: Path, eva: Path, ceiling: float, *, lanes: int):
    """The parsed `report --score` of both runs under ``ceiling``, scored in ``lanes``.

    These tests check the scoring before the notebooks: 00 runs without its savings sample,
    and its page and the call explorers are not rendered (``--tables-only``)."""
    work.mkdir()
    path = runs_file(work, eva, max_cost=ceiling)
    return build_parser().parse_args(
        ["report", "--runs-file", str(path), "--profile", "p", "--score", "--only", "00",
         "--outputs", str(work / "outputs"), "--score-lanes", str(lanes),
         "-p", "savings_images=0", "--tables-only"]
    )  # fmt: skip


@pytest.mark.timeout(240)
def test_report_score_shares_the_profile_ceiling(sim_server, tmp_path: Path, monkeypatch, capsys):
    """`report --score` scores two runs; their spend together stays under the profile's
    max_cost, and the second run is stopped by what the first one left."""
    from test_scoring_cli import write_eva

    from judgepanel.core.budget import request_bound
    from judgepanel.core.scoring import plan_target
    from judgepanel.core.settings import ScoreRequest, resolve_settings
    from judgepanel.studies import score_run

    monkeypatch.setenv("OPENAI_BASE_URL", sim_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    eva = write_eva(tmp_path / "eva")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # what one run actually costs (S), and the largest reservation of one call (B)
    probe = runs_file(scratch, eva)
    spend = score_run("r-a", runs_file=probe, progress=False).spend
    settings = resolve_settings(ScoreRequest(run="r-a", runs_file=probe))
    specs = plan_target(settings.targets[0], settings)
    bound = max(
        request_bound(s.build(), s.max_tokens, 2).cost(settings.prices[s.key.model]) for s in specs
    )
    # room for all of the first run and half of the second
    ceiling = spend + bound + spend / 2
    work = tmp_path / "work"
    args = scoring_report(work, eva, ceiling, lanes=1)
    # (--only that matches no notebook is an error now; scoring stops before any notebook)
    assert report_command(args) == RUN_STOPPED
    said = capsys.readouterr().err
    assert re.search("r-b: the budget stopped the run \\(profile 'p' max_cost", said)
    with Store(work / "store.sqlite", readonly=True) as store:
        by_dataset = store.frame(columns=["dataset", "cost"]).groupby("dataset")["cost"]
        assert by_dataset.size()["a"] == len(specs)  # the first run completed
        assert 0 < by_dataset.size()["b"] < len(specs)  # the second one was stopped
        assert store.spend() <= ceiling


@pytest.mark.timeout(300)
@pytest.mark.slow
def test_runs_scored_side_by_side_split_the_ceiling(
    sim_server, tmp_path: Path, monkeypatch, capsys
):
    """Two lanes score two datasets at once in two processes; with room for both they
    overlap and complete, and with room for 1.5 runs each lane stops at its half, so the
    spend together still stays under the profile's max_cost."""
    from test_scoring_cli import write_eva

    from judgepanel.report.timings import TIMINGS_FILE
    from judgepanel.studies import score_run

    monkeypatch.setenv("OPENAI_BASE_URL", sim_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    eva = write_eva(tmp_path / "eva")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    spend = score_run("r-a", runs_file=runs_file(scratch, eva), progress=False).spend
    for name, ceiling in (("room", 100.0), ("tight", 1.5 * spend)):
        work = tmp_path / name
        args = scoring_report(work, eva, ceiling, lanes=2)
        if name == "room":
            report_command(args)
            steps = json.loads((work / "outputs" / TIMINGS_FILE).read_text())["steps"]
            a, b = (s for s in steps if s["phase"] == "scoring")
            assert a["start"] < b["end"] and b["start"] < a["end"]  # side by side
            assert a["calls"] == b["calls"] > 0
            # no server of the report's own: the client's CPU only
            assert a["client_cpu_s"] > 0 and "server_cpu_s" not in a and "cpu_s" not in a
            full = a["calls"]
        else:
            assert report_command(args) == RUN_STOPPED
            said = capsys.readouterr().err
            assert re.search(r"the budget stopped the run \(profile 'p' max_cost share", said)
        with Store(work / "store.sqlite", readonly=True) as store:
            assert store.spend() <= ceiling
            sizes = store.frame(columns=["dataset", "cost"]).groupby("dataset").size()
        if name == "tight":  # neither lane could finish on its half
            assert 0 < sizes["a"] < full and 0 < sizes["b"] < full


@pytest.mark.timeout(300)
@pytest.mark.slow
def test_a_started_simulator_serves_each_lane_alike(tmp_path: Path, monkeypatch, capsys):
    """`report --start-sim` starts one simulated server per scoring lane (one server
    answers on one core); every request carries its seed, so the store holds the same
    answers as when one server answered both runs."""
    from test_scoring_cli import write_eva

    from judgepanel.report.timings import TIMINGS_FILE

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    eva = write_eva(tmp_path / "eva")
    stored = {}
    for lanes in (1, 2):
        work = tmp_path / f"lanes-{lanes}"
        args = scoring_report(work, eva, 100.0, lanes=lanes)
        args.start_sim = True
        report_command(args)
        listening = [
            line for line in capsys.readouterr().out.splitlines() if "listening at" in line
        ]
        assert len(listening) == 1 and listening[0].count("http://127.0.0.1:") == lanes
        # each run's step records the CPU of its client and of the server it sent to
        steps = json.loads((work / "outputs" / TIMINGS_FILE).read_text())["steps"]
        scoring = [s for s in steps if s["phase"] == "scoring"]
        assert len(scoring) == 2, scoring
        for step in scoring:
            assert step["client_cpu_s"] > 0 and step["server_cpu_s"] > 0, step
            assert step["cpu_s"] == pytest.approx(step["client_cpu_s"] + step["server_cpu_s"])
        with Store(work / "store.sqlite", readonly=True) as store:
            frame = store.frame(columns=["dataset", "item", "family", "kind", "dimension",
                                         "repetition", "answer", "value", "cost"])  # fmt: skip
        stored[lanes] = frame.sort_values(list(frame.columns[:6])).reset_index(drop=True)
        assert set(stored[lanes]["dataset"]) == {"a", "b"} and stored[lanes]["value"].notna().all()
    pd.testing.assert_frame_equal(stored[1], stored[2])
