"""Deploying an arm: the model file (arrays and JSON, never a pickle), its predictions,
the shift check, and ``judgepanel fit`` then ``predict`` end to end against the real
simulated judge server on a small world and a folder of new images."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image
from test_scoring_cli import jp_inline

from judgepanel.cli.exit_codes import BAD_INPUT, BUDGET, OK
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.studies.common.combiners import gb_combiner
from judgepanel.studies.fusion.blocks import ridge_combiner
from judgepanel.studies.fusion.deploy import (
    ARMS,
    DeployedModel,
    ModelFileError,
    arm_features,
    describe_shift,
    load_model,
    save_model,
    shift_table,
)
from judgepanel.studies.fusion.deploy.arms import arm_spec, calls_needed, feature_columns
from judgepanel.studies.fusion.deploy.fit import predict_combiner
from judgepanel.studies.fusion.deploy.trees import predict_trees, tree_arrays
from judgepanel_sim.world.world import write_worlds

FAMILIES = {"aurora": "sim-aurora-v1", "basalt": "sim-basalt-v1", "cobalt": "sim-cobalt-v1"}


# -- the combiner as arrays ----------------------------------------------------------------


def _regression(seed: int = 0, n: int = 150, p: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(5, 2, size=(n, p))
    y = X[:, 0] + np.sin(X[:, 1]) * 2 + 0.3 * X[:, 2] * X[:, 3] + rng.normal(0, 0.5, n)
    return X, y


def test_gradient_boosting_as_arrays_predicts_as_sklearn() -> None:
    X, y = _regression()
    model = gb_combiner().fit(X, y)
    arrays = tree_arrays(model)
    # new rows, some beyond the training range, some exactly on a threshold
    rng = np.random.default_rng(1)
    new = rng.normal(5, 4, size=(400, X.shape[1]))
    new[0, :] = arrays["threshold"][arrays["feature"] >= 0][0]
    np.testing.assert_allclose(predict_trees(arrays, new), model.predict(new), rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        predict_combiner("gb", arrays, new), model.predict(new), rtol=0, atol=1e-12
    )
    assert len(arrays["tree_offsets"]) == 101  # 100 trees


def test_ridge_as_arrays_predicts_as_sklearn() -> None:
    from judgepanel.studies.fusion.deploy.fit import fit_combiner

    X, y = _regression(seed=2)
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    arrays = fit_combiner(arm_spec("H_ridge"), frame, pd.Series(y))
    pipe = ridge_combiner().fit(X, y)
    new = np.random.default_rng(3).normal(5, 3, size=(50, X.shape[1]))
    np.testing.assert_allclose(predict_combiner("ridge", arrays, new), pipe.predict(new),
                               rtol=0, atol=1e-10)  # fmt: skip


def test_a_model_file_round_trips(tmp_path: Path) -> None:
    X, y = _regression()
    arrays = {f"combiner.{k}": v for k, v in tree_arrays(gb_combiner().fit(X, y)).items()}
    meta = {"format": "judgepanel-deployed-scorer", "version": 1, "arm": "H_gb",
            "feature_columns": list("abcdef"), "families": {"a": "m"}}  # fmt: skip
    path = save_model(DeployedModel(meta, arrays), tmp_path / "m.npz")
    back = load_model(path)
    assert back.meta == meta and back.columns == list("abcdef")
    for k, v in arrays.items():
        np.testing.assert_array_equal(back.arrays[k], v)


class _Creates:
    """A pickle that creates a file as it is loaded (what a hostile model file does)."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self):
        return (open, (str(self.target), "w"))


def test_a_crafted_pickle_is_refused_and_never_runs(tmp_path: Path, monkeypatch, capsys) -> None:
    target = tmp_path / "created-by-the-pickle"
    bad = tmp_path / "model.npz"
    bad.write_bytes(pickle.dumps(_Creates(target)))
    # the pickle works: loading it the unsafe way creates the file
    probe = tmp_path / "probe"
    pickle.loads(pickle.dumps(_Creates(probe))).close()
    assert probe.exists()
    with pytest.raises(ModelFileError, match="refused without loading it"):
        load_model(bad)
    images = tmp_path / "images"
    images.mkdir()
    code = jp_inline(monkeypatch, "http://127.0.0.1:9/v1", "predict", "--model", str(bad),
                     "--images", str(images), "--out", str(tmp_path / "s.csv"))  # fmt: skip
    err = capsys.readouterr().err
    assert code == BAD_INPUT and "not a judgepanel model file" in err and "pickle" in err
    assert not target.exists() and not (tmp_path / "s.csv").exists()
    # the same object inside a zip of arrays, as an object array, is refused as well
    inside = tmp_path / "inside.npz"
    with inside.open("wb") as fh:
        np.savez(fh, meta_json=np.frombuffer(b"{}", np.uint8),
                 evil=np.array([_Creates(target)], dtype=object))  # fmt: skip
    with pytest.raises(ModelFileError, match="pickled Python objects"):
        load_model(inside)
    assert not target.exists()


# -- features and the shift check ----------------------------------------------------------


def _scores(items: list[str], families: list[str], k: int, r: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in items:
        for f in families:
            rows += [(i, f, "holistic", "", rep, float(rng.integers(1, 11))) for rep in range(k)]
            rows += [(i, f, "dimension", d, rep, float(rng.integers(1, 11)))
                     for d in DIMENSIONS for rep in range(r)]  # fmt: skip
    return pd.DataFrame(rows, columns=["item", "family", "kind", "dimension", "repetition",
                                       "value"])  # fmt: skip


def test_features_match_the_study_and_a_missing_one_stays_missing() -> None:
    from judgepanel.studies.fusion.blocks import build_blocks, hp_design

    items = [f"i{n}" for n in range(12)]
    fams = ["a", "b"]
    scores = _scores(items, fams, k=15, r=2)
    y = pd.Series(np.arange(12.0), index=items)
    blocks = build_blocks(scores, y, fams)
    items = list(blocks.items)  # the study's order
    hp = arm_features(scores, ARMS["H+P_gb"], fams, 15, items)
    pd.testing.assert_frame_equal(hp, hp_design(blocks, fams).astype(float), check_names=False)
    split = arm_features(scores, ARMS["H_split_gb"], fams, 15, items)
    np.testing.assert_allclose(split.to_numpy(), blocks.split_of(fams).to_numpy())
    b3 = arm_features(scores, ARMS["H_blocks3_gb"], fams, 15, items)
    np.testing.assert_allclose(b3.to_numpy(), blocks.blocks3_of(fams).to_numpy())
    # every answer of b's colour dimension for i3 lost, and all of i5's holistic runs of a
    lost = scores[~(((scores["item"] == "i3") & (scores["family"] == "b")
                     & (scores["dimension"] == "colour"))
                    | ((scores["item"] == "i5") & (scores["family"] == "a")
                       & (scores["kind"] == "holistic")))]  # fmt: skip
    got = arm_features(lost, ARMS["H+P_gb"], fams, 15, items)
    assert np.isnan(got.loc["i3", "b:colour"]) and np.isnan(got.loc["i5", "a"])
    assert got.isna().sum().sum() == 2
    assert feature_columns(ARMS["P_validated_gb"], fams, 5) == [
        "a:quality", "a:composition", "a:colour", "b:quality", "b:composition", "b:colour"
    ]  # fmt: skip
    assert calls_needed(ARMS["H_gb"], ["a"], 5, 3) == [("a", "holistic", "", 5)]
    with pytest.raises(ValueError, match="need k >= 15"):
        arm_features(scores, ARMS["H_blocks3_gb"], fams, 5, items)
    with pytest.raises(ValueError, match=r"unknown arm 'H\+P'"):
        arm_spec("H+P")


def test_the_shift_check_names_the_feature_that_moved() -> None:
    rng = np.random.default_rng(0)
    cols = ["a", "b", "c", "d"]
    train = rng.normal(0, 1, size=(200, 4))
    same = pd.DataFrame(rng.normal(0, 1, size=(150, 4)), columns=cols)
    table = shift_table(train, same, cols)
    assert not table["differs"].any() and describe_shift(table) is None
    moved = same.copy()
    moved["c"] += 3.0
    table = shift_table(train, moved, cols)
    assert table["differs"].tolist() == [True, False, False, False]
    assert table.loc[0, "feature"] == "c" and table.loc[0, "share_above"] > 0.5
    text = describe_shift(table)
    assert text.startswith("warning:") and "c (KS D" in text and "1 of 4 features" in text


# -- fit, then predict, against the simulated judges ---------------------------------------


def _project(root: Path) -> Path:
    """A small EVA-like world (40 images, 30 scored) and a runs file for it."""
    synth = root / "synth"
    write_worlds(synth, n_images=40, seed=11, only=("eva",), log=lambda *a: None)
    main = yaml.safe_load((Path(__file__).resolve().parents[1] / "papermill_runs.yaml").read_text())
    runs = {
        "profiles": {
            "t": {
                "description": "deploy test",
                "simulated": True,
                "store": str(root / "store.sqlite"),
                "datasets": {"eva": {"kind": "eva", "root": str(synth / "synth-eva")}},
                "families": FAMILIES,
                "predeclared": list(FAMILIES),
                "concurrency": 16,
                "max_cost": 20.0,
            }
        },
        "scoring": {"eva": {"holistic_k": 3, "dimension_r": 1, "temperature": 0.3, "n_images": 30}},
        "prices": {m: main["prices"][m] for m in FAMILIES.values()},
        "parameters": {"n_resamples": 200, "seed": 0},
        "runs": {"t-eva": {"profile": "t", "dataset": "eva", "notebooks": ["00_scoring"]}},
    }
    path = root / "runs.yaml"
    path.write_text(yaml.safe_dump(runs), encoding="utf-8")
    return path


def _new_images(folder: Path, scene, n: int = 4) -> Path:
    (folder / "sub").mkdir(parents=True)
    for i in range(n):
        where = folder / ("sub" if i % 2 else "") / f"new_{i}.jpg"
        scene(seed=100 + i, size=(160, 120)).save(where, quality=85)
    (folder / "notes.txt").write_text("not an image")
    return folder


@pytest.mark.timeout(280)
@pytest.mark.slow
def test_fit_then_predict_a_folder_of_new_images(
    sim_server, tmp_path: Path, monkeypatch, capsys, scene
) -> None:
    from judgepanel.studies import score_run

    runs = _project(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    summary = score_run(
        "t-eva", runs_file=runs, endpoint=Endpoint.at(sim_server.base_url), progress=False
    )
    assert summary.failed == 0
    url = sim_server.base_url
    model_path = tmp_path / "model.npz"
    assert jp_inline(monkeypatch, url, "fit", "--run", "t-eva", "--runs-file", str(runs),
                     "--arm", "H+P_gb", "--out", str(model_path)) == OK  # fmt: skip
    out = capsys.readouterr().out
    assert "fitted H+P_gb on 30 labelled images of eva" in out and "precision@10%" in out
    model = load_model(model_path)
    m = model.meta
    assert m["families"] == FAMILIES and (m["k"], m["r"], m["temperature"]) == (3, 1, 0.3)
    assert m["feature_columns"][:3] == list(FAMILIES) and len(m["feature_columns"]) == 18
    assert len(m["training"]["sha256"]) == 64 and m["rubric_sha256"]
    assert set(m["prompt_hashes"]) == {"holistic", *(f"dimension:{d}" for d in DIMENSIONS)}
    assert [r["metric"] for r in m["oof_accuracy"]] == ["spearman", "kendall_b", "precision@10%"]
    for r in m["oof_accuracy"]:
        assert r["ci_low"] <= r["value"] <= r["ci_high"] and r["n"] == 30
    assert {"numpy", "scikit-learn", "judgepanel"} <= set(m["packages"])

    # a folder of new images: the dry run prices exactly the calls the features need
    folder = _new_images(tmp_path / "new", scene)
    scores_csv = tmp_path / "scores.csv"
    args = ("predict", "--model", str(model_path), "--images", str(folder), "--out",
            str(scores_csv), "--no-progress")  # fmt: skip
    assert jp_inline(monkeypatch, url, *args, "--dry-run") == OK
    out = capsys.readouterr().out
    per_image = 3 * (3 + 5 * 1)
    assert f"{4 * per_image} calls planned" in out and f"{4 * per_image} to send, 0 already" in out
    assert "upper bound" in out and "nothing was sent" in out and not scores_csv.exists()
    assert jp_inline(monkeypatch, url, *args) == OK
    out = capsys.readouterr().out
    assert "wrote 4 images" in out and "4 scored" in out
    shift = pd.read_csv(tmp_path / "scores.shift.csv")
    assert sorted(shift["feature"]) == sorted(m["feature_columns"]) and shift["q"].notna().all()
    table = pd.read_csv(scores_csv, keep_default_na=False)
    assert table["image_id"].tolist() == ["new_0.jpg", "new_2.jpg", "sub/new_1.jpg",
                                          "sub/new_3.jpg"]  # fmt: skip
    assert sorted(table["rank"].astype(int)) == [1, 2, 3, 4]
    assert table["complete"].astype(str).eq("True").all() and (table["failed_calls"] == "").all()
    assert list(table.columns[3:21]) == m["feature_columns"]
    # the score is the model's prediction from the written features
    X = table[m["feature_columns"]].astype(float).to_numpy()
    expected = predict_combiner("gb", model.combiner_arrays(), X)
    np.testing.assert_allclose(table["score"].astype(float), expected, atol=1e-12)
    # ... and sklearn's own fit on the recorded training data predicts the same
    refit = gb_combiner().fit(model.arrays["train_X"], model.arrays["train_y"])
    np.testing.assert_allclose(table["score"].astype(float), refit.predict(X), atol=1e-12)
    # a rerun sends nothing; the training folder reuses the training calls
    assert jp_inline(monkeypatch, url, *args, "--dry-run") == OK
    assert f"0 to send, {4 * per_image} already stored" in capsys.readouterr().out
    train_root = tmp_path / "synth" / "synth-eva"
    again = ("predict", "--model", str(model_path), "--dataset", f"eva:{train_root}", "--out",
             str(tmp_path / "train.csv"), "--dry-run")  # fmt: skip
    assert jp_inline(monkeypatch, url, *again) == OK
    out = capsys.readouterr().out
    assert "store dataset eva)" in out
    assert f"{10 * per_image} to send, {30 * per_image} already stored" in out

    # images unlike the training images: the shift check warns, naming features
    odd = tmp_path / "odd"
    odd.mkdir()
    for i in range(6):
        Image.new("RGB", (160, 120), (8 * i, 8 * i, 8 * i)).save(odd / f"dark_{i}.png")
    odd_args = ("predict", "--model", str(model_path), "--images", str(odd), "--out",
                str(tmp_path / "odd.csv"), "--no-progress")  # fmt: skip
    assert jp_inline(monkeypatch, url, *odd_args) == OK
    out = capsys.readouterr().out
    assert "warning: the new images differ from the training images in" in out
    shifted = pd.read_csv(tmp_path / "odd.shift.csv")
    assert shifted["differs"].any() and shifted.loc[0, "feature"] in out

    # a ceiling that stops the run: unsent calls are named, their images get no score
    tiny = ("predict", "--model", str(model_path), "--images", str(_new_images(
        tmp_path / "more", scene, n=2)), "--out", str(tmp_path / "more.csv"), "--no-progress",
        "--max-cost", "0.0000001")  # fmt: skip
    assert jp_inline(monkeypatch, url, *tiny) == BUDGET
    capsys.readouterr()
    more = pd.read_csv(tmp_path / "more.csv", keep_default_na=False)
    assert (more["score"] == "").all() and more["failed_calls"].str.contains("not sent").all()
    assert more["missing_features"].str.contains("aurora").all()
    # the same images through the batch API, without the ceiling: every one scored
    batched = ("predict", "--model", str(model_path), "--images", str(tmp_path / "more"),
               "--out", str(tmp_path / "more.csv"), "--no-progress", "--batch",
               "--batch-poll", "0.05")  # fmt: skip
    assert jp_inline(monkeypatch, url, *batched) == OK
    capsys.readouterr()
    more = pd.read_csv(tmp_path / "more.csv", keep_default_na=False)
    assert more["complete"].astype(str).eq("True").all() and (more["score"] != "").all()

    # a model that does not match what would be sent is refused, naming the difference
    assert jp_inline(monkeypatch, url, *args, "--models", "aurora=sim-aurora-v2") == BAD_INPUT
    assert "model id of aurora: fitted on sim-aurora-v1" in capsys.readouterr().err
    tampered = DeployedModel({**m, "rubric_sha256": "0" * 64,
                              "prompt_hashes": {**m["prompt_hashes"], "holistic": "f" * 64}},
                             model.arrays)  # fmt: skip
    bad = save_model(tampered, tmp_path / "tampered.npz")
    code = jp_inline(monkeypatch, url, "predict", "--model", str(bad), "--images", str(folder),
                     "--out", str(tmp_path / "t.csv"))  # fmt: skip
    err = capsys.readouterr().err
    assert code == BAD_INPUT and "rubric SHA-256" in err and "prompt holistic" in err
    assert not (tmp_path / "t.csv").exists()


# -- the rehearsal of notebook 04 ----------------------------------------------------------


def test_the_out_of_fold_row_is_two_sided_and_says_which_way_the_estimate_erred() -> None:
    from judgepanel.claims.rows import Claim
    from judgepanel.studies.fusion.deploy.holdout import ALTERNATIVES, oof_words

    assert ALTERNATIVES == {"out of fold": "two-sided", "best single": "greater"}

    def row(delta: float, lo: float, hi: float, p: float) -> Claim:
        return Claim(id="x", a="H+P_gb deployed", b="its out-of-fold estimate", dataset="d",
                     metric="spearman", unit="images", estimate=delta, ci_low=lo, ci_high=hi,
                     p=p)  # fmt: skip

    assert oof_words(row(0.10, 0.02, 0.20, 0.01)).endswith(
        "the out-of-fold estimate was pessimistic"
    )
    assert oof_words(row(-0.10, -0.20, -0.02, 0.01)).endswith(
        "the out-of-fold estimate was optimistic"
    )
    quiet = oof_words(row(0.02, -0.01, 0.05, 0.4))
    assert "optimistic" not in quiet and "pessimistic" not in quiet


def test_the_rehearsal_fits_one_half_and_scores_the_other() -> None:
    from judgepanel.studies.fusion import deploy
    from judgepanel.studies.fusion.deploy import describe_holdout, oof_words, rehearse
    from judgepanel.studies.fusion.deploy.holdout import split_half

    items = [f"i{n:02d}" for n in range(60)]
    fams = {"a": "ma", "b": "mb", "c": "mc"}
    scores = _scores(items, list(fams), k=3, r=1, seed=4)
    hol = scores[scores["kind"] == "holistic"].groupby("item")["value"].mean()
    noise = np.random.default_rng(5).normal(0, 0.5, 60)
    y = pd.Series(hol.reindex(items).to_numpy() + noise, index=items)
    train, test = split_half(pd.Index(items), 0)
    assert len(train) == len(test) == 30 and not set(train) & set(test)
    h = rehearse(scores, y, fams, k=3, r=1, temperature=0.3, n_resamples=200, seed=0)
    assert (h.n_train, h.n_test) == (30, 30)
    acc = h.accuracy.set_index(["metric", "scorer"])
    assert set(acc.index.get_level_values("scorer")) == {"deployed", "out of fold", "best single"}
    assert (h.accuracy["ci_low"] <= h.accuracy["value"]).all()
    assert (h.accuracy["value"] <= h.accuracy["ci_high"]).all()
    d = h.differences.set_index(["metric", "comparison"])
    for metric in ("spearman", "kendall_b", "precision@10%"):
        dep = acc.loc[(metric, "deployed"), "value"]
        oof = acc.loc[(metric, "out of fold")]
        row = d.loc[(metric, "deployed − out of fold")]
        assert row["delta"] == pytest.approx(dep - oof["value"])
        assert row["deployed_in_oof_interval"] == (oof["ci_low"] <= dep <= oof["ci_high"])
    text = describe_holdout(h, "eva")
    assert text.startswith("Fitted on 30 images of eva and applied to the other 30")
    assert "matches" not in text and "no worse" not in text
    # the estimate is tested both ways, the gain over the best single model one way
    assert set(h.differences["alternative"]) == {"two-sided", "greater"}
    oof = h.differences[h.differences["comparison"] == "deployed − out of fold"]
    assert (oof["alternative"] == "two-sided").all()
    claims = deploy.holdout_claims(h, "eva")
    assert [c.alternative for c in claims] == list(h.differences["alternative"])
    for c in claims:
        assert c.words() in text or oof_words(c) in text


def test_a_fit_refuses_a_design_its_answers_do_not_have() -> None:
    from judgepanel.studies.fusion.deploy import fit_arm

    items = [f"i{n:02d}" for n in range(20)]
    scores = _scores(items, ["a", "b"], k=5, r=2)
    y = pd.Series(np.arange(20.0), index=items)
    # the answers have k=5 and R=2; a design of k=25 would be recorded wrongly
    with pytest.raises(
        ValueError, match="holds 5 holistic repetitions of a, the scoring design 25"
    ):
        fit_arm(ARMS["H_gb"], scores, y, {"a": "ma", "b": "mb"}, k=25, r=2, temperature=0.3,
                n_resamples=50, seed=0)  # fmt: skip
    model = fit_arm(ARMS["P_gb"], scores, y, {"a": "ma", "b": "mb"}, k=5, r=2,
                    temperature=0.3, n_resamples=50, seed=0)  # fmt: skip
    assert model.meta["calls"] == [["a", "dimension", d, 2] for d in DIMENSIONS] + [
        ["b", "dimension", d, 2] for d in DIMENSIONS
    ]
    # more stored repetitions than the design's (another run at the same temperature, as
    # the quick report's temperature grid adds) are no reason to refuse
    fit_arm(ARMS["P_gb"], scores, y, {"a": "ma", "b": "mb"}, k=5, r=1, temperature=0.3,
            n_resamples=50, seed=0)  # fmt: skip
