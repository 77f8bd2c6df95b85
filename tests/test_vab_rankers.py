"""Score-then-rank judges for VAB, on hand-made scores whose answers are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from judgepanel.core.config import load_config
from judgepanel.core.errors import ConfigError
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.stats import bh
from judgepanel.studies.vab import (
    FUSED,
    PANEL,
    best_judge,
    fit_fused,
    image_features,
    like_for_like_pairs,
    load_run,
    load_training_world,
    panel_scores,
    rank_vs_direct,
    ranker_name,
    score_then_rank,
    task_scores,
)
from judgepanel.studies.vab.rankers import BUILT_IN
from judgepanel.studies.vab.verdicts import leader_test

TASKS = pd.DataFrame(
    {
        "task_id": ["t2", "t3", "t4"],
        "n_images": [2, 3, 4],
        "domain": ["photograph", "fine-art", "illustration"],
        "labels": [("A", "B"), ("A", "B", "C"), ("A", "B", "C", "D")],
        "ground_truth_best": ["A", "B", "D"],
        "ground_truth_worst": [None, "C", "A"],
    }
)
# Latent quality rank of each image (higher is better), consistent with the gold labels.
QUALITY = {
    "t2/A": 2, "t2/B": 1,
    "t3/A": 2, "t3/B": 3, "t3/C": 1,
    "t4/A": 1, "t4/B": 2, "t4/C": 3, "t4/D": 4,
}  # fmt: skip


def _rows(item, family, holistic, dims, reps=2):
    """score_table rows: ``reps`` holistic answers around ``holistic`` and one per dimension."""
    rows = [
        {"item": item, "family": family, "kind": "holistic", "dimension": "",
         "repetition": r, "value": holistic + (0.5 if r % 2 else -0.5)}
        for r in range(reps)
    ]  # fmt: skip
    rows += [
        {"item": item, "family": family, "kind": "dimension", "dimension": d,
         "repetition": 0, "value": v}
        for d, v in dims.items()
    ]  # fmt: skip
    return rows


def _flat_dims(value=5.0, **over):
    return {d: over.get(d, value) for d in DIMENSIONS}


def _training_world(n=80, seed=0):
    """Human means follow family f's composition score; every other feature is noise."""
    rng = np.random.default_rng(seed)
    target = pd.Series(np.linspace(1.0, 9.0, n), index=[f"p{i:03d}" for i in range(n)])
    rows = []
    for item, y in target.items():
        for fam in ("f", "g"):
            dims = {d: float(rng.uniform(1, 9)) for d in DIMENSIONS}
            if fam == "f":
                dims["composition"] = y
            rows += _rows(item, fam, float(rng.uniform(1, 9)), dims)
    return pd.DataFrame(rows), target


def _vab_scores():
    """f's holistic scores invert the quality order; f's composition follows it; g's
    holistic scores follow it."""
    rows = []
    for item, q in QUALITY.items():
        rows += _rows(item, "f", 10.0 - 2 * q, _flat_dims(composition=1.0 + 2.0 * q))
        rows += _rows(item, "g", 1.0 + 2 * q, _flat_dims())
    return pd.DataFrame(rows)


def test_image_features_are_holistic_then_dimension_means_on_complete_items():
    scores = pd.DataFrame(
        _rows("x", "f", 4.0, _flat_dims(2.0))
        + _rows("x", "g", 6.0, _flat_dims(3.0))
        + _rows("y", "f", 8.0, _flat_dims(7.0))
        + _rows("y", "g", 2.0, {d: 1.0 for d in DIMENSIONS if d != "emotion"})
    )
    X = image_features(scores, ["f", "g"])
    assert list(X.index) == ["x"]  # y lacks g's emotion score
    assert list(X.columns[:2]) == ["f", "g"]
    assert list(X.columns[2:]) == [f"{f}:{d}" for f in ("f", "g") for d in DIMENSIONS]
    assert X.loc["x", "f"] == pytest.approx(4.0)  # mean of 3.5 and 4.5
    assert X.loc["x", "g:quality"] == pytest.approx(3.0)
    with pytest.raises(ValueError, match="at least one family"):
        image_features(scores, [])


def test_fused_ranker_follows_what_the_training_world_rewards():
    train_scores, target = _training_world()
    out = score_then_rank(
        _vab_scores(), TASKS, families=["f", "g"], panel=["f", "g"],
        train_scores=train_scores, train_target=target, train_dataset="para",
    )  # fmt: skip
    assert out.rankers == ("rank:f", "rank:g", PANEL, FUSED)
    assert out.fused is not None and out.fused.n_train == 80
    assert out.fused.features[:2] == ("f", "g")
    assert out.fused.oof_rho > 0.9  # the training world is easy: composition is the target
    s = task_scores(out.predictions, TASKS).set_index(["judge", "task_id", "metric"])
    for metric in ("top1", "bot1", "tb1"):
        for task in TASKS.task_id:
            # f's holistic mean inverts quality: wrong everywhere; the fused panel learned
            # to read f's composition score instead, and g's holistic mean is right.
            assert s.loc[("rank:f", task, metric), "ap1"] == 0.0
            assert s.loc[(FUSED, task, metric), "ap1"] == 1.0
            assert s.loc[("rank:g", task, metric), "pass3"] == 1.0
    # The panel mean is the mean of the families' z-scored holistic means.
    hol = (
        _vab_scores()
        .query("kind == 'holistic'")
        .groupby(["item", "family"])["value"]
        .mean()
        .rename("score")
        .rename_axis(["image_id", "family"])
        .reset_index()
    )
    expected = panel_scores(hol, ["f", "g"])
    got = out.image_scores.query("ranker == @PANEL").set_index("image_id")["score"]
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
    ties = out.ties.set_index("ranker")
    assert (ties["n_tasks"] == 3).all() and (ties["n_failed"] == 0).all()


def test_vab_labels_never_reach_the_rankers():
    train_scores, target = _training_world()
    kwargs = dict(families=["f", "g"], panel=["f", "g"], train_scores=train_scores,
                  train_target=target)  # fmt: skip
    a = score_then_rank(_vab_scores(), TASKS, **kwargs)
    scrambled = TASKS.assign(ground_truth_best=["B", "A", "A"], ground_truth_worst=[None, "B", "B"])
    b = score_then_rank(_vab_scores(), scrambled, **kwargs)
    pd.testing.assert_frame_equal(a.image_scores, b.image_scores)
    cols = ["task_id", "judge", "kind", "repetition", "pred_best", "pred_worst"]
    pd.testing.assert_frame_equal(a.predictions[cols], b.predictions[cols])


def test_fused_ranker_refuses_small_worlds_and_other_features():
    train_scores, target = _training_world(n=10)
    with pytest.raises(ValueError, match="only 10 images"):
        fit_fused(train_scores, target, ["f", "g"], train_dataset="para")
    train_scores, target = _training_world()
    fused = fit_fused(train_scores, target, ["f", "g"], check_oof=False)
    assert np.isnan(fused.oof_rho)
    only_f = _vab_scores().query("family == 'f'")
    with pytest.raises(ValueError, match="no holistic scores for families: g"):
        fused.predict(only_f)


def test_an_unscored_image_fails_its_set_for_every_ranker():
    scores = _vab_scores()
    scores = scores.loc[scores["item"] != "t3/C"]
    train_scores, target = _training_world()
    out = score_then_rank(scores, TASKS, families=["f"], panel=["f", "g"],
                          train_scores=train_scores, train_target=target)  # fmt: skip
    t3 = out.predictions.loc[out.predictions.task_id == "t3"]
    assert (t3["status"] == "failed").all()
    assert (out.ties["n_failed"] == 1).all()
    s = task_scores(out.predictions, TASKS)
    assert (s.loc[s.task_id == "t3", "ap1"] == 0.0).all()


def _scores_table(values: dict[str, list[float]], metric="tb1") -> pd.DataFrame:
    rows = []
    for fam, vals in values.items():
        for i, v in enumerate(vals):
            rows.append({"judge": fam, "task_id": f"t{i}", "metric": metric, "ap1": v,
                         "pass3": float(v == 1.0)})  # fmt: skip
    return pd.DataFrame(rows)


def test_best_judge_and_like_for_like_pairs():
    s = _scores_table({"f": [1, 0, 0, 0], "g": [1, 1, 0, 0], "h": [1, 1, 0, 0]})
    assert best_judge(s, ["f", "g", "h"]) == "g"  # ties go to the first in order
    assert best_judge(s, ["h", "g"]) == "h"
    with pytest.raises(ValueError):
        best_judge(s, ["nobody"])
    rankers = ("rank:f", "rank:g", PANEL, FUSED)
    pairs = like_for_like_pairs(["f", "g"], rankers, best_direct="g", best_rank="rank:f")
    assert pairs == [
        ("rank:f", "f"),
        ("rank:g", "g"),
        (PANEL, "g"),
        (FUSED, "g"),
        ("rank:f", "g"),
    ]
    assert like_for_like_pairs(["f"], ("rank:f",), best_direct="f", best_rank="rank:f") == [
        ("rank:f", "f")
    ]
    assert ranker_name("f") == "rank:f"


def test_rank_vs_direct_is_paired_with_bh_over_the_rows_that_test_something():
    n = 40
    right = [1.0] * n
    half = [1.0 if i % 2 else 0.0 for i in range(n)]
    s = pd.concat(
        [
            _scores_table({"f": half, "rank:f": right, "g": right, "rank:g": right}, "tb1"),
            _scores_table({"f": half, "rank:f": right, "g": right, "rank:g": right}, "top1"),
        ]
    )
    out = rank_vs_direct(s, [("rank:f", "f"), ("rank:g", "g")], n_resamples=500)
    assert len(out) == 2 * 2 * 2  # pairs x metrics x stats
    # a ranker's pass^3 is its ap@1: those rows stay, marked, out of the correction
    tested = out["excluded"] == ""
    assert list(out.loc[~tested, "stat"].unique()) == ["pass3"]
    assert (out.loc[~tested, "excluded"] == BUILT_IN).all() and out.loc[~tested, "q"].isna().all()
    np.testing.assert_allclose(out.loc[tested, "q"], bh(out.loc[tested, "p"].to_numpy()))
    assert "ahead" not in out.columns  # no cell names a winner; the verdict is the claim's
    f = out.loc[(out.a == "rank:f") & (out.metric == "tb1") & (out.stat == "ap1")].iloc[0]
    assert f.delta == pytest.approx(0.5)
    assert f.ci_low > 0 and f.p < 0.01
    g = out.loc[(out.a == "rank:g") & (out.metric == "tb1") & (out.stat == "ap1")].iloc[0]
    assert g.delta == 0.0 and g.p == 1.0


def _para_world(tmp_path):
    from judgepanel_sim.world.world import write_worlds

    synth = tmp_path / "synth"
    write_worlds(synth, n_images=30, seed=3, only=("para",), log=lambda *_: None)
    runs = {
        "profiles": {
            "t": {
                "description": "test", "simulated": True, "store": str(tmp_path / "s.sqlite"),
                "datasets": {
                    "para": {"kind": "para", "root": str(synth / "synth-para")},
                    "vab": {"kind": "vab", "root": str(tmp_path / "vab")},
                },
                "families": {"f": "m-f"}, "predeclared": ["f"],
            }
        },
        "scoring": {"para": {"holistic_k": 2, "dimension_r": 1, "temperature": 0.3,
                             "n_images": 20, "sample_seed": 0},
                    "vab": {"holistic_k": 2, "dimension_r": 1, "temperature": 0.3}},
        "prices": {"m-f": {"input": 0.1, "output": 0.1}},
        "runs": {"t-vab": {"profile": "t", "dataset": "vab", "notebooks": ["05_vab"]}},
    }  # fmt: skip
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump(runs))
    return load_config(path)


def test_training_world_reads_the_sampled_images_and_names_a_missing_score(tmp_path):
    config = _para_world(tmp_path)
    from judgepanel.core.calls import CallKey
    from judgepanel.core.store import CallResult, Store
    from judgepanel.datasets import load_dataset

    sample = load_dataset("para", str(tmp_path / "synth" / "synth-para")).sample(20, 0)
    empty, store = tmp_path / "empty.sqlite", tmp_path / "s.sqlite"
    Store(empty).close()
    with Store(store) as db:
        for item in sample.images["image_id"]:
            for r in _rows(item, "f", 5.0, _flat_dims()):
                key = CallKey("para", item, "f", "m-f", r["kind"], r["dimension"],
                              r["repetition"], 0.3, "x", "h")  # fmt: skip
                db.record(key, CallResult("ok", value=r["value"]))
    run = config.run("t-vab")  # its profile's store is ``store``
    scores, human = load_training_world(run, config, "para", families=["f"])
    assert set(scores["item"]) == set(sample.images["image_id"])
    assert set(human.index) == set(sample.images["image_id"])
    unscored = run.model_copy(update={"profile": run.profile.model_copy(update={"store": empty})})
    with pytest.raises(ValueError, match="score that dataset's run first"):
        load_training_world(unscored, config, "para", families=["f"])
    rated = " or ".join(sorted(rated_kinds()))  # every kind with per-image ratings
    kind = f"run 't-vab': .* needs a dataset of kind {rated}, but 'vab' is of kind 'vab'"
    with pytest.raises(ConfigError, match=kind):
        load_training_world(run, config, "vab", families=["f"])


def test_each_study_refuses_a_run_whose_dataset_is_of_another_kind(tmp_path):
    from judgepanel.studies import fusion, visionq

    config = _para_world(tmp_path)
    run = config.run("t-vab")
    wrong = "run 't-vab': the {} needs a dataset of kind {}, but 'vab' is of kind 'vab'"
    rated = " or ".join(sorted(rated_kinds()))
    with pytest.raises(ConfigError, match=wrong.format("rubric-fusion study", rated)):
        fusion.load_rated(run, config, families=["f"])
    with pytest.raises(ConfigError, match=wrong.format("VisionQ study", "visionq")):
        visionq.load_run(run, families={"f": "m-f"}, rotations=0, seed=0)
    para = run.model_copy(update={"name": "t-para", "datasets": ("para",)})
    with pytest.raises(ConfigError, match=r"run 't-para': the VAB study .* 'para' is of kind"):
        load_run(para, config, families=["f"], n_orders=3, seed=0)


def test_the_leader_is_separated_only_from_judges_its_margin_clears():
    n = 200
    strong = np.arange(n) % 10 < 8
    close = strong.copy()
    close[[0, 1, 2, 3]] = False  # four tasks only the leader gets
    close[[8, 9]] = True  # two only the runner-up gets: a gap of one point
    hits = {"strong": strong, "close": close, "weak": np.arange(n) % 10 < 3}
    rows = [
        {"task_id": f"t{i}", "judge": f, "metric": "tb1", "ap1": float(h[i]), "pass3": 0.0}
        for f, h in hits.items()
        for i in range(n)
    ]
    scores = pd.DataFrame(rows)
    lead = leader_test(scores, ["close", "weak", "strong"], n_resamples=500, seed=1)
    assert lead.order == ["strong", "close", "weak"]
    assert lead.not_separated() == ["close"] and lead.separated() == ["weak"]
    assert lead.margin == pytest.approx(0.01) and lead.p >= 0.05
