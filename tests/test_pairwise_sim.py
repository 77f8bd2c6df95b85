"""The pairwise study end to end against the real simulated judge server.

A small EVA-like world is paired (``kind: pairs, rated: eva``), planned from a runs file's
run (``pairs_per_image``, ``orders``), sent by ``score_run`` as every plan is (resumable,
within the ceiling), and the simulator's choices, made from the pixels as its judges score
them, agree with the people on decided pairs, show its judges' slot pull, and give
Bradley-Terry scores equal to scikit-learn's logistic regression to 1e-6.
"""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.linear_model import LogisticRegression
from test_pairwise_library import bt_design

from judgepanel.core.config import load_config
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.frames import read_calls, score_table
from judgepanel.core.paths import project_root
from judgepanel.core.rubric import load_rubric
from judgepanel.core.scoring import score_run
from judgepanel.datasets.pairs import load_pairs
from judgepanel.stats.bradley_terry import DEFAULT_ALPHA
from judgepanel.studies.pairwise.analysis import (
    accuracy_table,
    adaptive_vs_random,
    billed,
    equal_calls,
    equal_calls_table,
    panel_table,
)
from judgepanel.studies.pairwise.choices import (
    bradley_terry_scores,
    choices_from_calls,
    position_consistency,
)
from judgepanel.studies.pairwise.parameters import PairwiseParameters
from judgepanel.studies.pairwise.plan import plan_pairs
from judgepanel.studies.pairwise.sampling import label_pairs, study_pairs
from judgepanel.studies.pairwise.verdicts import adaptive_claims, equal_calls_claims, panel_claim
from judgepanel_sim.judges.families import FAMILIES
from judgepanel_sim.judges.handlers import SimRequest, find_handler
from judgepanel_sim.judges.protocol import ImageView
from judgepanel_sim.world.world import write_worlds

JUDGES = ("aurora", "cobalt", "ember")
PARAMS = {"pairs_per_image": 4, "orders": 2, "pair_dimensions": ["composition"]}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pairwise")
    write_worlds(root / "synth", n_images=40, seed=11, only=("eva",), log=lambda *a: None)
    main = yaml.safe_load((project_root() / "papermill_runs.yaml").read_text())
    runs = {
        "profiles": {
            "test": {
                "description": "pairs of a small world",
                "simulated": True,
                "store": str(root / "store.sqlite"),
                "datasets": {
                    "eva-pairs": {
                        "kind": "pairs",
                        "root": str(root / "synth" / "synth-eva"),
                        "rated": "eva",
                    },
                    "eva": {"kind": "eva", "root": str(root / "synth" / "synth-eva")},
                },
                "families": {f: FAMILIES[f].model_id for f in JUDGES},
                "predeclared": list(JUDGES),
                "concurrency": 8,
                "max_cost": 5.0,
            }
        },
        "scoring": {"eva": {"holistic_k": 4, "dimension_r": 0, "temperature": 0.3}},
        "prices": main["prices"],
        "parameters": {"n_resamples": 200, "seed": 0},
        "runs": {
            "scores": {"profile": "test", "dataset": "eva", "notebooks": []},
            "pairs": {
                "profile": "test",
                "dataset": "eva-pairs",
                "notebooks": [],
                "parameters": PARAMS,
            },
        },
    }
    (root / "runs.yaml").write_text(yaml.safe_dump(runs, sort_keys=False))
    return root


def _data(project: Path):
    return load_pairs(project / "synth" / "synth-eva", rated="eva")


def test_the_plan_asks_every_pair_question_and_order(project):
    data = _data(project)
    params = PairwiseParameters(**PARAMS)
    pairs = study_pairs(data, params)
    specs = plan_pairs(
        data,
        {f: FAMILIES[f].model_id for f in JUDGES},
        params,
        dataset="eva-pairs",
        temperature=0.3,
        rubric=load_rubric(),
    )
    assert len(specs) == len(pairs) * 2 * 2 * len(JUDGES)  # questions x orders x judges
    assert {s.key.call_type for s in specs} == {"pair_holistic", "pair_dimension"}
    assert len({s.key for s in specs}) == len(specs)
    first, second = [s for s in specs if s.key.family == "aurora"][:2]  # orders 0 and 1
    assert (first.key.item, first.key.repetition, second.key.repetition) == (pairs.pair_id[0], 0, 1)
    # the two orders show the same two images in swapped slots; the simulator takes it
    images = [
        [p for p in s.build()[-1]["content"] if p["type"] == "image_url"] for s in (first, second)
    ]
    assert images[0] == images[1][::-1]
    parts, views = [], []
    for p in first.build()[-1]["content"]:
        if p["type"] == "text":
            parts.append(("text", p["text"]))
        else:
            view = ImageView.from_bytes(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]))
            parts.append(("image", view))
            views.append(view)
    req = SimRequest(
        model="sim-aurora-v1",
        family=FAMILIES["aurora"],
        system_text="",
        user_text="\n".join(str(v) for k, v in parts if k == "text"),
        parts=parts,
        images=views,
        temperature=0.3,
        seed=0,
        max_tokens=100,
        rng=np.random.default_rng(0),
    )
    assert find_handler(req).name == "pairwise"
    assert first.parse(find_handler(req).answer(req))["winner"] in ("a", "b")


@pytest.mark.slow
def test_scored_from_a_run_resumably_and_within_the_budget(project, sim_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    runs_file = project / "runs.yaml"
    endpoint = Endpoint.at(sim_server.base_url)
    tight = score_run(
        "pairs", runs_file=runs_file, endpoint=endpoint, progress=False, max_cost=1e-4
    )
    assert tight.stopped_by_budget and tight.unsent > 0
    full = score_run("pairs", runs_file=runs_file, endpoint=endpoint, progress=False)
    assert full.failed == 0 and not full.stopped_by_budget
    again = score_run("pairs", runs_file=runs_file, endpoint=endpoint, progress=False)
    assert again.sent == 0 and again.skipped == again.planned == tight.ok + full.ok

    config = load_config(runs_file)
    data = _data(project)
    pairs = study_pairs(data, PairwiseParameters(**PARAMS))
    calls = read_calls(config.profiles["test"].store, "eva-pairs")
    choices = choices_from_calls(calls, pairs)
    assert len(choices) == again.planned
    # accuracy on the people's decided pairs: well above a coin for the holistic question
    human = label_pairs(pairs, data.rated)
    holistic = choices[choices["question"] == "holistic"].merge(human, on="pair_id")
    decided = holistic[holistic["decided"]]
    assert len(decided) > 20 and (decided["winner"] == decided["human"]).mean() > 0.58
    # ember's slot pull shows: the first slot is named more often than the second
    position = position_consistency(choices).set_index(["judge", "question"])
    assert position.loc[("ember", "holistic"), "first_slot"] > 0.55
    assert (position["consistent"] > 0.4).all()

    # Bradley-Terry on the simulator's choices equals the independent fit to 1e-6
    ids = data.rated.images["image_id"].astype(str).tolist()
    one = choices[(choices["judge"] == "aurora") & (choices["question"] == "holistic")]
    bt = bradley_terry_scores(one, ids)
    index = {image: k for k, image in enumerate(ids)}
    a, b = one["image_a"].map(index).to_numpy(), one["image_b"].map(index).to_numpy()
    y = (one["winner"] == "a").to_numpy(float)
    x, label = bt_design(len(ids), a, b)
    lr = LogisticRegression(
        C=1 / DEFAULT_ALPHA,
        fit_intercept=False,
        tol=1e-12,
        max_iter=10_000,
        solver="newton-cholesky",
    ).fit(x, label, sample_weight=np.r_[y, 1 - y])
    assert np.abs(lr.coef_[0] - bt.to_numpy()).max() < 1e-6
    mean = data.rated.images.set_index("image_id")["mean_score"].reindex(ids)
    assert np.corrcoef(bt.to_numpy(), mean.to_numpy())[0, 1] > 0.3


def test_the_analyses_compare_comparisons_with_scores_at_equal_calls(
    project, sim_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    runs_file = project / "runs.yaml"
    for run in ("scores", "pairs"):
        score_run(
            run, runs_file=runs_file, endpoint=Endpoint.at(sim_server.base_url), progress=False
        )
    config = load_config(runs_file)
    store = config.profiles["test"].store
    data = _data(project)
    params = PairwiseParameters(**PARAMS)
    pairs = study_pairs(data, params)
    calls = read_calls(store, "eva-pairs")
    scored = read_calls(store, "eva")
    choices = choices_from_calls(calls, pairs)
    human = data.rated.images.set_index("image_id")["mean_score"]
    human.index = human.index.astype(str)
    ids = human.index.tolist()
    labelled = pd.concat(
        [label_pairs(pairs, data.rated, q).assign(question=q) for q in ("holistic", "composition")]
    )
    acc = accuracy_table(choices, labelled, ids, n_resamples=200, seed=0)
    assert set(acc["question"]) == {"holistic", "composition"} and len(acc) == 2 * len(JUDGES)
    assert ((acc["acc_low"] <= acc["accuracy"]) & (acc["accuracy"] <= acc["acc_high"])).all()
    assert (acc["accuracy"] > 0.5).mean() > 0.5

    c = equal_calls(params.orders, params.pairs_per_image)
    assert c == 4
    scores = score_table(scored, "eva")
    table = equal_calls_table(
        choices, scores, human, c, billed(calls, scored, c, ids), n_resamples=200, seed=0
    )
    assert table["judge"].tolist() == sorted(JUDGES) and (table["usd_pairs"] > 0).all()
    assert np.allclose(table["delta"], table["rho_pairs"] - table["rho_scores"])
    claims = equal_calls_claims(table, "eva")
    assert [cl.id for cl in claims] == [f"pairs-vs-scores:{j}" for j in sorted(JUDGES)]
    assert all(cl.family == "pairwise/equal-calls" and "billed" in cl.note for cl in claims)

    adaptive = adaptive_vs_random(choices, human, n_resamples=200, seed=0)
    assert (adaptive["pairs"] > 0).all() and len(adaptive_claims(adaptive, "eva")) == len(JUDGES)
    panel = panel_table(choices, scores, human, c, n_resamples=200, seed=0)
    assert panel_claim(panel, "eva").id == "panel-pairs-vs-scores"
    assert panel["rho_pairs"].iloc[0] > 0.3
