"""Every notebook executed through papermill on the small scored project, as the report does.

The pages checked here are those of the shared report (``small_report``), built once per
test run with an endpoint and :data:`SECRET` in the environment; the tests of failures and
of the command build reports of their own, since they change what the report is given.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from report_checks import assert_reads_well
from small_project import SECRET

from judgepanel.cli import build_parser
from judgepanel.cli.report import report_command
from judgepanel.report.execute import execute_notebook
from judgepanel.report.index import write_index
from judgepanel.stats import bh

CASES = [
    ("test-eva", "00_scoring"),
    ("test-eva", "01_mtmm_validity"),
    ("test-para", "02_input_ablation"),
    ("test-eva", "03_trio_sweep"),
    ("test-headroom", "04_headroom"),
    ("test-vab", "05_vab"),
    ("test-visionq", "06_visionq"),
    ("test-logprob", "09_logprob"),
    ("test-para", "10_agreement"),
]


def _check_00(tables: Path, markdown: str) -> None:
    saving = pd.read_csv(tables / "savings.csv").set_index("design")
    one, n_k = saving.loc["one sample per request"], saving.loc["n = k"]
    cached = saving.loc["n = k, cached"]
    # n = k bills each prompt once for its repetitions; the cache bills less again
    assert n_k["requests"] < one["requests"] and n_k["input_tokens"] < one["input_tokens"]
    assert one["output_tokens"] == pytest.approx(n_k["output_tokens"], rel=0.1)
    assert cached["usd"] < n_k["usd"] < one["usd"]
    assert saving.loc["one sample per request, cached", "cached_tokens"] > 0
    assert one["cached_tokens"] == 0
    assert "less (measured on" in markdown


def _check_03(tables: Path, markdown: str) -> None:
    table = pd.read_csv(tables / "table_trios.csv")
    assert len(table) == 10 and list(table["rank"]) == list(range(1, 11))
    assert table["fused_rho"].is_monotonic_decreasing
    assert (tables / "table_trios_long.csv").exists()
    assert (tables.parent / "figures" / "trio_forest.png").exists()
    # the pre-declared trio is 02's: linked, and left out of the nine counted here (count rows)
    assert re.search(r"\d of 9 with q &lt; 0.05", markdown)  # a count row, linked
    assert 'data-claim-ref="test-' in markdown
    long = pd.read_csv(tables / "table_trios_long.csv", keep_default_na=False)
    assert "aurora+basalt+cobalt" not in set(long["trio"]) and len(long) == 9 * 4
    assert (long["claim"] != "").all() and (long["verdict"] != "").all()


def _check_04(tables: Path, markdown: str) -> None:
    for name in (
        "table_headroom",
        "table_robustness",
        "table_partitions",
        "table_baselines",
        "table_baselines_owned",
        "table_transfer",
        "table_granularity",
        "table_feature_selection",
        "table_recipe",
        "table_retest",
        "table_top_decile",
    ):
        assert (tables / f"{name}.csv").exists(), name
    head = pd.read_csv(tables / "table_headroom.csv")
    assert list(head["dataset"]) == ["eva", "para"]
    inside = (head["headroom_low"] <= head["headroom"]) & (
        head["headroom"] <= head["headroom_high"]
    )
    assert inside.all()
    assert len(pd.read_csv(tables / "table_retest_trios.csv")) == 20
    parts = pd.read_csv(tables / "table_partitions.csv")
    assert parts.groupby(["dataset", "block"]).size().eq(4).all()  # 3 random + seed 42
    assert set(pd.read_csv(tables / "table_recipe.csv")["action"]) <= {"panel", "single"}
    costs = pd.read_csv(tables / "table_recipe_costs.csv").set_index(["dataset", "option"])
    # k and R of the small project's design: eva k=6, para k=5, R=2.
    assert costs.loc[("eva", "best single"), "calls_per_image"] == 6
    assert costs.loc[("eva", "pre-declared panel"), "calls_per_image"] == 3 * (6 + 5 * 2)
    assert costs.loc[("para", "all 5 families"), "calls_per_image"] == 5 * (5 + 5 * 2)
    assert (costs["usd_per_1000"] > 0).all()
    assert "Rule:" in markdown
    # section 10: fitted on one half of eva (40 images), deployed on the other
    acc = pd.read_csv(tables / "table_deploy_accuracy.csv").set_index(["metric", "scorer"])
    assert acc.loc[("spearman", "deployed"), "n"] == 20
    assert acc.loc[("spearman", "out of fold"), "n"] == 20
    diff = pd.read_csv(tables / "table_deploy_differences.csv")
    assert set(diff["comparison"]) == {"deployed − out of fold", "deployed − best single"}
    dep = acc.loc[("spearman", "deployed"), "value"]
    oof = acc.loc[("spearman", "out of fold")]
    assert f"ρ {dep:.3f}" in markdown and "Fitted on 20 images of eva" in markdown
    where = "inside" if oof["ci_low"] <= dep <= oof["ci_high"] else "outside"
    assert f"{where} the out-of-fold interval [{oof['ci_low']:.3f}" in markdown
    # section 9's cheaper design: eva has logprob calls (k = 6, R = 2), para none
    cheap = pd.read_csv(tables / "table_recipe_logprob.csv")
    assert list(cheap["dataset"]) == ["eva", "eva"]
    single, panel = cheap.iloc[0], cheap.iloc[1]
    assert single["option"].startswith("best single (") and panel["option"] == "pre-declared panel"
    assert (single["sampled_calls_per_image"], single["expected_calls_per_image"]) == (6, 1)
    assert (panel["sampled_calls_per_image"], panel["expected_calls_per_image"]) == (48, 18)
    # the decision is the non-inferiority row's: its one-sided p and the interval's low end
    assert (cheap["offered"] == ((cheap["ci_low"] > -cheap["margin"]) & (cheap["p"] < 0.05))).all()
    assert cheap["claim"].str.contains("logprob-noninferior:eva:").all()
    assert (
        cheap["verdict"]
        .str.match(r"not worse by more than 0\.02|a loss of 0\.02 not ruled out")
        .all()
    )
    assert (cheap["expected_usd_per_1000"] < cheap["sampled_usd_per_1000"]).all()
    assert "para: no logprob run is named" in markdown


def _check_05(tables: Path, markdown: str) -> None:
    versus = pd.read_csv(tables / "table_vab_score_then_rank.csv", keep_default_na=False)
    assert "ahead" not in versus.columns  # no cell names a winner: the verdict is the claim's
    out = versus["excluded"] != ""
    # a ranker's pass^3 (its ap@1 by construction) and the repeated rows of two rankers stay
    # in the table, out of the family: every pass^3 row here has a ranker on one side
    pass3 = versus["stat"] == "pass3"
    assert (out == pass3).all()
    assert (versus.loc[out, "verdict"] == "not tested").all() and (versus.loc[out, "q"] == "").all()
    # each tested row's q is BH over its own family: a family against itself, or the panels
    tested = versus.loc[~out]
    assert set(tested["family"]) == {"own-protocol", "score-then-rank"}
    own = tested["a"] == "rank:" + tested["b"]
    assert (tested.loc[own, "family"] == "own-protocol").all()
    for _, rows in tested.groupby("family"):
        q = bh(rows["p"].astype(float).to_numpy())
        assert np.allclose(rows["q"].astype(float), q, atol=1e-5)
    for name in ("leader", "rank_leader", "primary", "score_then_rank", "vote", "position",
                 "above_chance"):  # fmt: skip
        table = pd.read_csv(tables / f"table_vab_{name}.csv")
        assert {"verdict", "claim"} <= set(table.columns), name
        assert table["claim"].str.startswith("test-vab.05.").all(), name
    # the leaders are best-of rows, tested against all the others at once
    for name in ("leader", "rank_leader"):
        lead = pd.read_csv(tables / f"table_vab_{name}.csv", keep_default_na=False)
        assert len(lead) == 1
        assert lead.loc[0, "verdict"] in ("leads", "highest by point estimate only")
    # the middle slot is fixed by the first and the last: out of the family
    pos = pd.read_csv(tables / "table_vab_position.csv", keep_default_na=False)
    assert (pos.loc[pos["slot"] == "middle", "verdict"] == "not tested").all()
    ledger = json.loads((tables.parent / "claims.json").read_text(encoding="utf-8"))["05_vab"]
    primary = ledger["claims"]["test-vab.05.primary"]
    assert primary["family"] == "" and primary["role"] == "headline"
    assert "ratio" not in pd.read_csv(tables / "table_vab_degradation.csv").columns
    assert "Primary comparison, declared before any result: TB-1 ap@1" in markdown
    assert "is ahead" not in markdown and "lie wholly above chance" not in markdown
    # every count of verdicts is a ledger row of its own, linked
    assert 'data-claim="test-vab.05.count:above-chance"' in markdown
    assert "with q &lt; 0.05" in markdown and "excludes zero" not in markdown


def _check_06(tables: Path, markdown: str) -> None:
    last = pd.read_csv(tables / "table_visionq_last_letter.csv")
    # the verdict reads the comparison within numbers of panels; the raw one is kept beside it
    assert {
        "raw_delta",
        "raw_p",
        "chance_gold_last",
        "chance_gold_other",
        "delta",
        "p",
        "q",
    } <= set(last.columns)
    assert list(last["claim"]) == [f"test-visionq.06.last-panel:{j}" for j in last["judge"]]
    strata = pd.read_csv(tables / "table_visionq_last_letter_strata.csv")
    assert np.allclose(strata.groupby("judge")["weight"].sum(), 1.0)
    assert np.allclose(strata["chance"], 1 / strata["n_choices"])
    bias = pd.read_csv(tables / "table_visionq_position.csv")
    assert list(bias["claim"]) == [f"test-visionq.06.last-share:{j}" for j in bias["judge"]]
    assert {"chi2_p", "fit_p", "fit_q", "verdict"} <= set(bias.columns)
    ledger = json.loads((tables.parent / "claims.json").read_text(encoding="utf-8"))["06_visionq"]
    assert set(last["claim"]) | set(bias["claim"]) <= set(ledger["claims"])
    assert set(ledger["families"]) == {
        f"test-visionq.06.{name}"
        for name in ("above-chance", "judge-pairs", "last-panel", "last-share", "letter-fit")
    }
    # judges against each other on resampled papers, the higher first; no McNemar
    pairs = pd.read_csv(tables / "table_visionq_judge_pairs.csv")
    assert (pairs["delta"] >= 0).all() and np.allclose(pairs["q"], bh(pairs["p"].to_numpy()))
    assert not (tables / "table_visionq_mcnemar.csv").exists()
    lead = pd.read_csv(tables / "table_visionq_leader.csv")
    assert len(lead) == 1 and lead.loc[0, "claim"] == "test-visionq.06.leader"
    fit = pd.read_csv(tables / "table_visionq_letter_fit.csv")
    assert list(fit["claim"]) == [f"test-visionq.06.letter-fit:{j}" for j in fit["judge"]]
    assert 'data-claim="test-visionq.06.count:judge-pairs"' in markdown
    assert "with q &lt; 0.05" in markdown and "McNemar" not in markdown
    assert "Within each number of panels" in markdown and "decides nothing" in markdown
    assert "interval lies wholly above zero" not in markdown


def _check_09(tables: Path, markdown: str) -> None:
    designs = pd.read_csv(tables / "table_logprob_designs.csv")
    # the small project's eva design: k = 6, so one sample, means of 2, 5 and 6, the expected score
    names = {"one sample", "mean of 2", "mean of 5", "mean of 6", "expected score"}
    assert set(designs["design"]) == names
    assert designs.groupby(["family", "metric"]).size().eq(5).all()
    fused = pd.read_csv(tables / "table_logprob_fused.csv")
    calls = fused[fused["metric"] == "spearman"].set_index("design")["calls_per_image"]
    # the three pre-declared families, k holistic and min(k, R = 2) per dimension each
    assert calls.to_dict() == {
        "1 holistic, 1 per dimension": 18,
        "2 holistic, 2 per dimension": 36,
        "5 holistic, 2 per dimension": 45,
        "6 holistic, 2 per dimension": 48,
        "expected score": 18,
    }
    assert (fused["n"] == 40).all()
    gran = pd.read_csv(tables / "table_logprob_granularity.csv")
    assert set(gran["design"]) == {"mean of 6", "expected score"}
    # every sampled design is tested against the expected score, none picked as closest
    versus = pd.read_csv(tables / "table_logprob_versus.csv")
    assert len(versus) == 5 * 4 and versus.groupby("family").size().eq(4).all()
    assert not (tables / "table_logprob_closest.csv").exists()
    assert "against the study's design (6 holistic, 2 per dimension)" in markdown
    sources = pd.read_csv(tables / "table_logprob_sources.csv").set_index(["family", "kind"])
    assert sources.loc[("ember", "holistic_logprob"), "fallback_share"] == 1.0  # sends none
    assert sources.loc[("aurora", "holistic_logprob"), "fallbacks"] == 0
    assert "by construction" in markdown and "ember sent none" in markdown


def _check_10(tables: Path, markdown: str) -> None:
    card = pd.read_csv(tables / "judge_card.csv", keep_default_na=False)
    assert list(card["judge"]) == ["aurora", "basalt", "cobalt", "dune", "ember"]
    assert set(card["alt_test"]) <= {"passes", "does not pass"}
    assert all(c.startswith("test-para.10.alt-test-") for c in card["claim"])  # the index links
    alt = pd.read_csv(tables / "table_alt_test.csv").set_index("judge")
    assert "panel mean" in alt.index and (alt["epsilon"] == 0.1).all()
    assert (alt["metric"] == "neg_rmse").all() and (alt["mapping"] == "linear 1-10 -> 1-5").all()
    assert (tables.parent / "figures" / "alt_test_advantage.png").exists()
    assert markdown.index("ε = 0.1") < markdown.index("Against the human mean")  # ε first
    assert 'class="jp-claim"' in markdown
    index = (tables.parent.parent / "index.html").read_text(encoding="utf-8")
    assert 'href="test-para/10_agreement.html"' in index and "Judge card" in index
    # after the holistic sections, every mapped dimension, its map named in each row
    dims = pd.read_csv(tables / "table_dimension_agreement.csv")
    assert list(dict.fromkeys(dims["dimension"])) == ["quality", "composition", "colour"]
    assert len(dims) == 3 * 5 and (dims["mapping"] == "linear 1-10 -> 1-5").all()
    dim_alt = pd.read_csv(tables / "table_dimension_alt_test.csv", keep_default_na=False)
    assert set(dim_alt["dimension"]) == {"quality", "composition", "colour", "pooled dimensions"}
    assert markdown.index("Against the human mean") < markdown.index("Per dimension:")
    # the passes are counted by a row of their own over the section's family
    assert "judge and dimension tests of this section that pass within ε = 0.1: " in markdown
    ledger = json.loads((tables.parent / "claims.json").read_text(encoding="utf-8"))
    rows = ledger["10_agreement"]["claims"].values()
    assert {r["kind"] for r in rows} == {"alt-test", "count"}


CHECKS = {
    "00_scoring": _check_00,
    "03_trio_sweep": _check_03,
    "04_headroom": _check_04,
    "05_vab": _check_05,
    "06_visionq": _check_06,
    "09_logprob": _check_09,
    "10_agreement": _check_10,
}


def _markdown_outputs(executed: Path) -> str:
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    outs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    return "\n".join(
        o["data"]["text/markdown"] for o in outs if "text/markdown" in o.get("data", {})
    )


@pytest.mark.slow
@pytest.mark.parametrize(("run", "notebook"), CASES, ids=[c[1] for c in CASES])
def test_notebook_executes_and_writes_its_tables(small_report, run, notebook):
    run_dir = small_report / run
    assert (run_dir / f"{notebook}.html").exists(), sorted(p.name for p in run_dir.iterdir())
    html = (run_dir / f"{notebook}.html").read_text(encoding="utf-8")
    executed = (run_dir / f"{notebook}.ipynb").read_text(encoding="utf-8")
    assert "Simulated data." in html  # the banner of every simulated run
    assert SECRET not in html and SECRET not in executed
    tables = list((run_dir / "tables").glob("*.csv"))
    assert tables, "a notebook shows at least one table, written as CSV"
    for path in tables:
        assert SECRET not in path.read_text(encoding="utf-8")
    assert "Traceback" not in html
    assert_reads_well(run_dir, notebook)
    if notebook in CHECKS:
        CHECKS[notebook](run_dir / "tables", _markdown_outputs(run_dir / f"{notebook}.ipynb"))


@pytest.mark.slow
def test_failing_cell_is_named_and_the_report_exits_non_zero(small_project, tmp_path, monkeypatch):
    # A dataset root that does not exist makes the first code cell after the parameters fail.
    from judgepanel.core.config import load_config

    text = small_project.runs_file.read_text().replace(
        str(small_project.root / "synth" / "synth-eva"), str(tmp_path / "missing-eva")
    )
    broken = tmp_path / "runs.yaml"
    broken.write_text(text)
    config = load_config(broken)
    result = execute_notebook(config, config.run("test-eva"), "00_scoring", tmp_path / "out")
    assert not result.ok
    assert "00_scoring.ipynb" in result.error and "cell" in result.error
    assert "missing-eva" in result.error or "not found" in result.error
    index = write_index(tmp_path / "out", [result], config)
    assert "failed" in index.read_text()

    args = build_parser().parse_args(
        [
            "report",
            "--runs-file",
            str(broken),
            "--profile",
            "test",
            "--run",
            "test-eva",
            "--only",
            "00",
            "--outputs",
            str(tmp_path / "out2"),
        ]
    )

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert report_command(args) == 1
    assert (tmp_path / "out2" / "index.html").exists()


@pytest.mark.slow
def test_report_command_writes_the_index_with_headlines(small_report):
    """The shared report is made by `report_command` from its command line (shared_report)."""
    index = (small_report / "index.html").read_text()
    assert "test-eva/00_scoring.html" in index
    assert "planned calls answered" in index  # a headline computed by the notebook
    assert (small_report / "test-eva" / "tables" / "coverage.csv").exists()
    assert SECRET not in index
    assert os.environ.get("OPENAI_API_KEY") != SECRET  # the build restored the environment


def test_a_runs_file_without_n_images_reads_every_image(small_project, tmp_path):
    """n_images is optional: without it every rated image counts, in scoring and analysis."""
    from judgepanel.core.config import load_config
    from judgepanel.studies import fusion

    raw = yaml.safe_load(small_project.runs_file.read_text())
    for design in raw["scoring"].values():
        design.pop("n_images", None)
    runs_file = tmp_path / "papermill_runs.yaml"
    runs_file.write_text(yaml.safe_dump(raw))
    config = load_config(runs_file)
    run = config.run("test-eva")
    rated = fusion.load_rated(run, config, families=list(run.profile.families))
    assert rated.design.n_images is None
    assert len(rated.data.images) == 40 and len(rated.blocks.items) == 40
