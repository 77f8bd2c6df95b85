"""Off-the-shelf comparator scores: the file checks, the import command and the analyses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgepanel.cli import main
from judgepanel.datasets import DatasetError
from judgepanel.datasets.comparators import load_scores, wide_scores
from judgepanel.studies.fusion.blocks import Blocks
from judgepanel.studies.fusion.comparators import compare_with_vlms
from judgepanel.studies.fusion.robustness import label_matched_arms
from judgepanel_sim.world.comparators import MODELS, comparator_scores


def _write(tmp_path, text, name="scores.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("image_id,model\na,m\n", r"missing column\(s\) \['score'\]"),
        ("image_id,model,score\n", "no scores"),
        ("image_id,model,score\na,m,1\nb,m,high\n", r"row 3 \(b, m\): score 'high'"),
        ("image_id,model,score\na,m,1\na,m,2\n", "row 3: model 'm' scores image 'a' twice"),
        ("image_id,model,score\na,,1\n", "row 2 has an empty image_id or model"),
        ("image_id,model,score\na,m,inf\n", "not a finite number"),
    ],
)
def test_a_bad_score_file_names_the_file_and_the_row(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(DatasetError, match=message) as info:
        load_scores(path)
    assert str(path) in str(info.value)


def test_unknown_images_and_a_missing_file(tmp_path):
    path = _write(tmp_path, "image_id,model,score\na,m,1\nzz,m,2\n")
    with pytest.raises(DatasetError, match=r"1 image id\(s\) are not in the dataset.*zz"):
        load_scores(path, known_images=["a", "b"])
    with pytest.raises(DatasetError, match="not found"):
        load_scores(tmp_path / "absent.csv")
    table = load_scores(path)
    wide = wide_scores(table, ["zz", "a", "b"])
    assert wide.loc["zz", "m"] == 2 and np.isnan(wide.loc["b", "m"])


def test_the_stand_in_scores_are_named_as_image_statistics():
    stats = pd.DataFrame(
        {
            "laplacian_sharpness": [1.0, 2.0],
            "colourfulness": [10.0, 0.0],
            "mean_luminance": [0.5, 0.9],
            "clipped_highlights": [0.0, 0.2],
            "clipped_shadows": [0.0, 0.0],
        },
        index=pd.Index(["a", "b"], name="image_id"),
    )
    long = comparator_scores(stats)
    assert set(long["model"]) == set(MODELS) and all(m.startswith("imagestat-") for m in MODELS)
    exposure = long[long["model"] == "imagestat-exposure"].set_index("image_id")["score"]
    assert exposure["a"] == 0.0 and exposure["b"] == pytest.approx(-0.6)


def _blocks(n=120, seed=0):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"i{k:03d}" for k in range(n)])
    y = pd.Series(rng.normal(size=n), index=idx)
    H = pd.DataFrame({f: y + rng.normal(scale=s, size=n) for f, s in
                      (("a", 0.5), ("b", 1.0), ("c", 1.5))}, index=idx)  # fmt: skip
    P = pd.DataFrame(
        {f"{f}:{d}": H[f] + rng.normal(size=n) for f in H for d in
         ("quality", "composition", "colour", "distinctiveness", "emotion")}, index=idx
    )  # fmt: skip
    return Blocks(y=y, H=H, P=P, H_split=H, H_blocks3=None)


def test_the_best_vlm_against_imported_models():
    blocks = _blocks()
    rng = np.random.default_rng(1)
    imported = pd.DataFrame(
        {"good": blocks.y + rng.normal(scale=0.3, size=len(blocks.y)),
         "noise": rng.normal(size=len(blocks.y))}, index=blocks.items
    )  # fmt: skip
    res = compare_with_vlms(blocks, imported, n_resamples=300).set_index(["metric", "comparator"])
    assert set(res["arm"]) == {"a"}
    assert res.loc[("spearman", "noise"), "delta"] > 0.3 > res.loc[("spearman", "good"), "delta"]
    assert res.loc[("spearman", "noise"), "q"] < 0.05
    assert (res["p_max"] >= res["p"]).all()  # corrected for picking the best of three
    assert (res["n_images"] == len(blocks.items)).all()


def test_label_matched_arms_stack_the_imported_scores():
    blocks = _blocks()
    stats = pd.DataFrame({"s": np.arange(len(blocks.items), dtype=float)}, index=blocks.items)
    imported = pd.DataFrame({"m": blocks.y * 2}, index=blocks.items)
    arms, _ = label_matched_arms(blocks, ["a", "b", "c"], stats, imported=imported, n_jobs=1)
    assert {"imported_ridge", "imported_gb"} <= set(arms)
    with pytest.raises(ValueError, match="1 image"):
        label_matched_arms(blocks, ["a", "b", "c"], stats, imported=imported.iloc[1:], n_jobs=1)


def test_import_command_checks_against_the_dataset(tmp_path, capsys):
    from test_scoring_cli import write_eva

    from judgepanel.datasets import load_eva

    eva_world = write_eva(tmp_path / "eva")
    kind_root = f"eva:{eva_world}"
    first = str(load_eva(eva_world).images["image_id"].iloc[0])
    good = _write(tmp_path, f"image_id,model,score\n{first},nima,5.5\n")
    out = tmp_path / "out" / "eva.csv"
    assert main(["import", "scores", str(good), "--dataset", kind_root, "--out", str(out)]) == 0
    assert "nima 1/" in capsys.readouterr().out and out.exists()
    bad = _write(tmp_path, "image_id,model,score\nnot-an-image,nima,5\n", "bad.csv")
    assert main(["import", "scores", str(bad), "--dataset", kind_root, "--out", str(out)]) == 1
    assert "not in the dataset" in capsys.readouterr().err
    assert main(["import", "scores", str(good), "--dataset", "vab:x", "--out", str(out)]) == 1


def test_the_demo_writes_what_the_import_command_writes(tmp_path, capsys):
    """`make data` checks the stand-in scores in the process that computes them; the file
    is byte for byte what `judgepanel import scores` writes from the same raw CSV."""
    from test_scoring_cli import write_eva

    from judgepanel_sim.world.comparators import main as stand_in

    kind_root = f"eva:{write_eva(tmp_path / 'eva')}"
    raw, checked, imported = (tmp_path / n for n in ("raw.csv", "checked.csv", "imported.csv"))
    args = ["--dataset", kind_root, "--out", str(raw), "--cache", str(tmp_path / "cache")]
    assert stand_in([*args, "--imported", str(checked)]) == 0
    assert main(["import", "scores", str(raw), "--dataset", kind_root, "--out", str(imported)]) == 0
    assert checked.read_bytes() == imported.read_bytes()
    assert len(pd.read_csv(checked)) == len(pd.read_csv(raw)) > 0
