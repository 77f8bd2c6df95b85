"""The synthetic aesthetic worlds: determinism, files in the real formats, world sanity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from scipy.stats import spearmanr

from judgepanel.cli import main
from judgepanel.datasets import load_eva, load_para
from judgepanel.stats import noise_ceiling
from judgepanel_sim.world import EVA_WORLD, PARA_WORLD, simulate, write_world, write_worlds
from judgepanel_sim.world import files as files_module
from judgepanel_sim.world.aesthetic import (
    KNOBS,
    LATENTS,
    OWN_KNOBS,
    knob_table,
    knob_visibility,
    sample_latents,
)

EVA_HEADER = (
    "image_id=user_id=score=difficulty=visual=composition=quality=semantic=vote_time=1=2=3=4"
)


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def synth_dir(tmp_path_factory) -> Path:
    """`judgepanel data synth --n-images 40` for the two aesthetic worlds."""
    out = tmp_path_factory.mktemp("synth")
    code = main(["data", "synth", "--out", str(out), "--n-images", "40", "--only", "eva,para"])
    assert code == 0
    return out


@pytest.fixture(scope="module")
def worlds() -> dict[str, object]:
    """Both worlds simulated in memory (no pixels), large enough for statistics."""
    return {"eva": simulate(EVA_WORLD, 300, seed=5), "para": simulate(PARA_WORLD, 300, seed=5)}


# --- files and round trip --------------------------------------------------------------------


def test_synth_command_writes_the_real_layouts(synth_dir):
    eva = synth_dir / "synth-eva"
    para = synth_dir / "synth-para"
    raw = (eva / "data" / "votes_filtered.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf" + EVA_HEADER.encode() + b"\n")
    assert len(list((eva / "EVA_together").glob("*.jpg"))) == 40
    header = (para / "annotation" / "PARA-Images.csv").read_text().splitlines()[0]
    assert header.split(",")[:4] == ["sessionId", "imageName", "userId", "aestheticScore"]
    assert header.endswith("willingnessToShare,semantic")
    names = sorted(p.relative_to(para / "imgs").as_posix() for p in (para / "imgs").rglob("*.jpg"))
    assert len(names) == 40
    assert all(n.startswith("session") and "/iaa_pub" in n and n.endswith("_.jpg") for n in names)
    with Image.open(next((eva / "EVA_together").glob("*.jpg"))) as img:
        assert img.format == "JPEG" and min(img.size) >= 256


def test_latents_live_outside_the_dataset_folders(synth_dir):
    truth = synth_dir / "truth"
    lat = pd.read_csv(truth / "synth-eva-latents.csv", dtype={"image_id": str})
    assert set(LATENTS) <= set(lat.columns) and len(lat) == 40
    for folder in ("synth-eva", "synth-para"):
        for p in (synth_dir / folder).rglob("*"):
            assert "latent" not in p.name and "truth" not in p.name
        data = _files(synth_dir / folder)
        text = b"".join(v for k, v in data.items() if k.endswith(".csv")).decode("utf-8-sig")
        assert "hidden" not in text and "consensus" not in text
    assert not list(synth_dir.glob(".*partial"))


def test_round_trip_through_the_loaders(synth_dir):
    eva = load_eva(synth_dir / "synth-eva")
    para = load_para(synth_dir / "synth-para")
    assert len(eva.images) == 40 and len(para.images) == 40
    assert eva.images["n_raters"].between(30, 40).all()
    assert para.images["n_raters"].between(22, 28).all()
    assert eva.ratings["score"].between(0, 10).all()
    assert set(eva.ratings["score"].unique()) <= set(range(11))
    assert (para.ratings["score"] * 2 % 1 == 0).all()
    assert para.ratings["quality"].between(1, 5).all()
    # the loaders' image ids are those of the truth file, so tests can join them
    lat = pd.read_csv(synth_dir / "truth" / "synth-eva-latents.csv", dtype={"image_id": str})
    assert set(lat["image_id"]) == set(eva.images["image_id"])
    assert eva.images["image_id"].str.fullmatch(r"\d+").all()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    a = write_world(PARA_WORLD, tmp_path / "a", n_images=8, seed=11)
    b = write_world(PARA_WORLD, tmp_path / "b", n_images=8, seed=11)
    c = write_world(PARA_WORLD, tmp_path / "c", n_images=8, seed=12)
    fa, fb, fc = _files(a), _files(b), _files(c)
    assert fa == fb
    assert fa.keys() != fc.keys() or fa != fc
    ta = (tmp_path / "a" / "truth" / "synth-para-latents.csv").read_bytes()
    assert ta == (tmp_path / "b" / "truth" / "synth-para-latents.csv").read_bytes()
    e1 = write_world(EVA_WORLD, tmp_path / "d", n_images=6, seed=11)
    e2 = write_world(EVA_WORLD, tmp_path / "e", n_images=6, seed=11)
    assert _files(e1) == _files(e2)


def test_complete_worlds_are_kept_unless_forced(tmp_path):
    log: list[str] = []
    write_worlds(tmp_path, n_images=5, seed=1, only=("para",), log=log.append)
    csv = tmp_path / "synth-para" / "annotation" / "PARA-Images.csv"
    before = csv.stat().st_mtime_ns
    write_worlds(tmp_path, n_images=5, seed=1, only=("para",), log=log.append)
    assert "kept" in log[-1] and csv.stat().st_mtime_ns == before
    with pytest.raises(ValueError, match="--force"):
        write_worlds(tmp_path, n_images=5, seed=2, only=("para",), log=log.append)
    write_worlds(tmp_path, n_images=6, seed=2, only=("para",), force=True, log=log.append)
    assert load_para(tmp_path / "synth-para").images.shape[0] == 6
    assert not list(tmp_path.glob(".synth-para*"))


def test_an_interrupted_write_leaves_no_world_that_looks_complete(tmp_path, monkeypatch):
    def boom(sim, folder):
        raise KeyboardInterrupt

    monkeypatch.setattr(files_module, "write_images", boom)
    with pytest.raises(KeyboardInterrupt):
        write_worlds(tmp_path, n_images=4, seed=1, only=("eva",), log=lambda _: None)
    assert not (tmp_path / "synth-eva").exists()
    monkeypatch.undo()
    write_worlds(tmp_path, n_images=4, seed=1, only=("eva",), log=lambda _: None)
    assert len(load_eva(tmp_path / "synth-eva").images) == 4
    assert not list(tmp_path.glob(".synth-eva*"))


def test_bad_parameters_fail_before_anything_is_written(tmp_path, capsys):
    assert main(["data", "synth", "--out", str(tmp_path), "--n-images", "0", "--only", "eva"]) == 1
    assert "n_images must be positive" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_simulator_answers_bad_input_with_the_table_s_code(tmp_path, capsys):
    """``data synth`` and ``sim-server`` exit as every command does on bad input."""
    from judgepanel.cli import exit_codes
    from judgepanel_sim import exit_codes as sim_codes

    assert (sim_codes.OK, sim_codes.BAD_INPUT) == (exit_codes.OK, exit_codes.BAD_INPUT)
    prices = tmp_path / "prices.yaml"
    prices.write_text("models: [not, a, table]\n")
    assert main(["sim-server", "--prices", str(prices), "--port", "0"]) == exit_codes.BAD_INPUT
    assert capsys.readouterr().err.count("\n") == 1


def test_unknown_world_is_an_error(tmp_path, capsys):
    assert main(["data", "synth", "--out", str(tmp_path), "--only", "eva,avaa"]) == 1
    assert "avaa" in capsys.readouterr().err


# --- the world model -------------------------------------------------------------------------


def test_latents_are_mildly_correlated_and_knobs_are_noisy_functions_of_them():
    rng = np.random.default_rng(0)
    lat = sample_latents(4000, rng)
    corr = np.corrcoef(lat[list(LATENTS)].to_numpy().T)
    off = corr[~np.eye(len(LATENTS), dtype=bool)]
    assert (off > -0.05).all() and (off < 0.5).all() and off.mean() > 0.1
    knobs = knob_table(lat, rng)
    for knob, latent in [("blur_sigma", "quality"), ("clutter", "composition")]:
        rho = -spearmanr(knobs[knob], lat[latent])[0]
        assert 0.3 < rho < 0.95, (knob, rho)
    assert 0.3 < spearmanr(knobs["harmony"], lat["colour"])[0] < 0.95
    # faint: distinctiveness and emotion reach their knobs only weakly
    assert 0.1 < spearmanr(knobs["detail"], lat["distinctiveness"])[0] < 0.5
    assert 0.1 < spearmanr(knobs["light_warmth"], lat["emotion"])[0] < 0.5


@pytest.mark.slow
def test_knob_visibility_orders_the_latents_as_the_world_card_says():
    assert set(KNOBS) - {"seed", "hue"} == {k for ks in OWN_KNOBS.values() for k in ks}
    vis = knob_visibility(n=1500, seed=1, folds=3).set_index("latent")
    own, every = vis["r2_own_knobs"], vis["r2_all_knobs"]
    clear = own[["quality", "composition", "colour"]]
    faint = own[["distinctiveness", "emotion"]]
    assert (clear > 0.6).all() and ((faint > 0.05) & (faint < 0.5)).all()
    assert clear.min() > faint.max() + 0.2
    assert np.isnan(own["hidden"]) and every["hidden"] < 0.15
    assert (every[list(OWN_KNOBS)] > own[list(OWN_KNOBS)] - 0.05).all()


def test_raters_per_image(worlds):
    eva = worlds["eva"].ratings.groupby("image_id").size()
    para = worlds["para"].ratings.groupby("imageName").size()
    assert eva.between(30, 40).all() and eva.nunique() > 5
    assert para.between(22, 28).all() and para.nunique() > 2
    assert not worlds["eva"].ratings.duplicated(["image_id", "user_id"]).any()


def test_attributes_are_positively_collinear_with_the_overall_score(worlds):
    eva = (
        worlds["eva"]
        .ratings.groupby("image_id")[["score", "visual", "composition", "quality", "semantic"]]
        .mean()
    )
    for col in ("visual", "composition", "quality", "semantic"):
        assert spearmanr(eva[col], eva["score"])[0] > 0.5, col
    para = (
        worlds["para"]
        .ratings.groupby("imageName")[
            ["aestheticScore", "qualityScore", "compositionScore", "colorScore", "lightScore"]
        ]
        .mean()
    )
    for col in ("qualityScore", "compositionScore", "colorScore", "lightScore"):
        assert spearmanr(para[col], para["aestheticScore"])[0] > 0.5, col


def test_para_like_humans_are_more_reliable_than_eva_like(worlds):
    eva = noise_ceiling(
        worlds["eva"].ratings, n_splits=20, columns={"rater": "user_id"}
    ).split_half_r
    para = noise_ceiling(
        worlds["para"].ratings,
        n_splits=20,
        columns={"item": "imageName", "rater": "userId", "score": "aestheticScore"},
    ).split_half_r
    assert 0.5 < eva < para < 0.99


def test_more_of_the_judgement_is_visible_in_the_para_like_world(worlds):
    def visible_share(sim, image: str, score: str) -> float:
        means = sim.ratings.groupby(image, sort=False)[score].mean()
        key = (
            sim.images["image_id"]
            if image == "image_id"
            else sim.images["file"].str.split("/").str[-1]
        )
        lat = sim.images.set_index(key.to_numpy()).loc[means.index]
        shown = lat[["quality", "composition", "colour"]].sum(axis=1)
        return spearmanr(shown, means.to_numpy())[0]

    eva = visible_share(worlds["eva"], "image_id", "score")
    para = visible_share(worlds["para"], "imageName", "aestheticScore")
    assert para > eva + 0.15
    hidden_eva = spearmanr(
        worlds["eva"].images["hidden"],
        worlds["eva"].ratings.groupby("image_id", sort=False)["score"].mean().to_numpy(),
    )[0]
    assert hidden_eva > 0.3
