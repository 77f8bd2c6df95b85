"""Every released form of each kind is read, and its noise ceiling agrees with one computed
here independently: split-half Spearman-Brown over votes or raters, or classical test
theory from each image's mean, SD and n (to 0.01)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from release_files import (
    CARD,
    ava_lines,
    spaq_frame,
    write_aadb,
    write_ava,
    write_generic,
    write_spaq,
)
from release_forms import (
    para_giaa_ratings,
    vote_counts,
    write_aadb_csvs,
    write_aadb_mat,
    write_cadb,
    write_koniq_scores,
    write_koniq_sets,
    write_live,
    write_para_giaa,
    write_spaq_csv,
)
from scipy import stats

from judgepanel.datasets import DatasetError, load_dataset
from judgepanel.stats import noise_ceiling

SPLITS = 400


def ctt_ceiling(mean: np.ndarray, sd: np.ndarray, n: np.ndarray) -> float:
    """sqrt of (Var(mean) - mean error variance) / Var(mean), sd a sample SD."""
    var = np.var(mean, ddof=1)
    return float(np.sqrt((var - np.mean(sd**2 / n)) / var))


def vote_split_half(counts: np.ndarray, levels: np.ndarray, seed: int = 1) -> float:
    """Exchangeable votes: half of each image's votes drawn without replacement, the
    half-means' Spearman r averaged over splits, Spearman-Brown, square root."""
    rng = np.random.default_rng(seed)
    rs = []
    for _ in range(SPLITS):
        a = np.array([rng.multivariate_hypergeometric(c, c.sum() // 2) for c in counts])
        b = counts - a
        rs.append(stats.spearmanr(a @ levels / a.sum(1), b @ levels / b.sum(1))[0])
    r = float(np.mean(rs))
    return float(np.sqrt(2 * r / (1 + r)))


def rater_split_half(scores: np.ndarray, seed: int = 1) -> float:
    """Per-rater split-half of an images x raters matrix, as above."""
    rng = np.random.default_rng(seed)
    k = scores.shape[1]
    rs = []
    for _ in range(SPLITS):
        shuffled = rng.permuted(scores, axis=1)
        rs.append(stats.spearmanr(shuffled[:, : k // 2].mean(1), shuffled[:, k // 2 :].mean(1))[0])
    r = float(np.mean(rs))
    return float(np.sqrt(2 * r / (1 + r)))


def ceiling(ds, attribute: str, metric: str = "spearman") -> float:  # type: ignore[no-untyped-def]
    return noise_ceiling(
        ds, attribute=attribute, metric=metric, n_splits=SPLITS, n_resamples=20
    ).ceiling


# --- KonIQ-10k ---------------------------------------------------------------------------------


def test_koniq_both_files_give_the_same_votes_and_one_scale(tmp_path):
    counts = vote_counts(60, 5, seed=3, spread=0.15)
    scores = load_dataset("koniq", str(write_koniq_scores(tmp_path / "s", counts)))
    sets = load_dataset("koniq", str(write_koniq_sets(tmp_path / "d", counts)))
    assert scores.images["n_raters"].tolist() == sets.images["n_raters"].tolist()
    assert np.allclose(scores.images["mean_score"], sets.images["mean_score"])
    assert scores.attributes["mos"].high == 5 and sets.attributes["mos"].high == 100
    assert "mos_zscore" in scores.images and "split" not in scores.images
    assert any("on 1-100" in n and "rescaled" in n for n in sets.notes)
    mean, sd = counts @ np.arange(1, 6) / counts.sum(1), None
    sd = np.sqrt((counts @ np.arange(1, 6) ** 2 - counts.sum(1) * mean**2) / (counts.sum(1) - 1))
    expected = ctt_ceiling(mean, sd, counts.sum(1))
    for ds in (scores, sets):  # MOS and SD on one scale: the ceiling is not 0.99999
        assert ceiling(ds, "mos", "pearson") == pytest.approx(expected, abs=0.01)
    assert 0.6 < expected < 0.95  # where a wrong error variance would show
    assert ceiling(sets, "score") == pytest.approx(
        vote_split_half(counts, np.arange(1.0, 6.0)), abs=0.01
    )


def test_koniq_scale_options_are_checked(tmp_path):
    counts = vote_counts(12, 5, seed=4)
    root = write_koniq_scores(tmp_path, counts)
    with pytest.raises(DatasetError, match=r"on 1-5 rather than 1-100; pass mos_scale='1-5'"):
        load_dataset("koniq", str(root), mos_scale="1-100")
    frame = pd.read_csv(root / "koniq10k_scores_and_distributions.csv")
    frame["SD"] *= 24.75
    frame.to_csv(root / "koniq10k_scores_and_distributions.csv", index=False)
    with pytest.raises(DatasetError, match=r"SD.*pass sd_scale='mos'"):
        load_dataset("koniq", str(root))
    assert load_dataset("koniq", str(root), sd_scale="mos").summary["sd"].max() > 5


# --- AVA ---------------------------------------------------------------------------------------


def test_ava_vote_ceiling_matches_an_independent_split(tmp_path):
    lines = ava_lines(n_images=60, seed=2)
    ds = load_dataset("ava", str(write_ava(tmp_path, lines)))
    counts = np.array([line.split()[2:12] for line in lines], dtype=np.int64)
    assert ceiling(ds, "score") == pytest.approx(
        vote_split_half(counts, np.arange(1.0, 11.0)), abs=0.01
    )


# --- SPAQ --------------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["Annotations", "."])
def test_spaq_csv_export_reads_as_the_workbook(tmp_path, folder):
    frame = spaq_frame()
    workbook = load_dataset("spaq", str(write_spaq(tmp_path / "x", frame)))
    csv = load_dataset("spaq", str(write_spaq_csv(tmp_path / "c", frame, folder)))
    assert np.allclose(csv.images["mean_score"], workbook.images["mean_score"])
    assert np.allclose(csv.images["quality"], workbook.images["quality"])
    assert csv.notes[0] == "read MOS and Image attribute scores.csv"


# --- AADB --------------------------------------------------------------------------------------


def test_aadb_split_csvs_with_the_authors_spelling_and_overlap(tmp_path):
    root = write_aadb_csvs(tmp_path, n_images=9, overlap=2)
    ds = load_dataset("aadb", str(root))
    assert ds.images["split"].value_counts().to_dict() == {"test": 5, "train": 3, "validation": 1}
    assert ds.attributes["balancing_elements"].name == "BalancingElements"
    assert ds.images["balancing_elements"].notna().all()
    assert any("BalacingElements (the authors' spelling)" in n for n in ds.notes)
    assert any("2 image(s) listed in both Validation and Test" in n for n in ds.notes)
    kept = load_dataset("aadb", str(root), overlap="validation")
    assert kept.images["split"].value_counts()["validation"] == 3
    with pytest.raises(DatasetError, match=r"TestNewRegression_\.csv:\d.*two splits.*overlap="):
        load_dataset("aadb", str(root), overlap="error")
    test = pd.read_csv(root / "imgListTestNewRegression_.csv")
    test.loc[len(test) - 1, "score"] = 0.01
    test.to_csv(root / "imgListTestNewRegression_.csv", index=False)
    with pytest.raises(DatasetError, match=r"in two splits with other labels"):
        load_dataset("aadb", str(root))


def test_aadb_mat_holds_train_and_test_scores(tmp_path):
    ds = load_dataset("aadb", str(write_aadb_mat(tmp_path)))
    assert ds.images["split"].tolist() == ["train"] * 6 + ["test"] * 3
    assert ds.images["mean_score"].between(0, 1).all() and list(ds.attributes) == ["score"]


# --- PARA GIAA ---------------------------------------------------------------------------------


def test_para_giaa_histograms_and_population_sds(tmp_path):
    ratings = para_giaa_ratings(spread=0.25)
    ds = load_dataset("para", str(write_para_giaa(tmp_path, ratings)))
    assert len(ds) == 30 and ds.ratings.empty and set(ds.images["split"]) == {"train", "test"}
    assert (ds.images["n_raters"] == 25).all()
    by_image = ratings.groupby("image")
    images = ds.images.set_index("image_id").loc[[f"iaa_pub{1200 + i}_.jpg" for i in range(30)]]
    assert np.allclose(images["mean_score"], by_image["aestheticScore"].mean())
    assert np.allclose(images["composition"], by_image["compositionScore"].mean())
    q = by_image["qualityScore"]
    expected = ctt_ceiling(q.mean().to_numpy(), q.std(ddof=1).to_numpy(), q.size().to_numpy())
    assert ceiling(ds, "quality", "pearson") == pytest.approx(expected, abs=0.01)
    assert 0.6 < expected < 0.95
    assert any("population SD (ddof 0" in n for n in ds.notes)
    counts = np.array([[(v == k).sum() for k in range(1, 6)] for _, v in by_image["colorScore"]])
    assert ceiling(ds, "colour") == pytest.approx(
        vote_split_half(counts, np.arange(1.0, 6.0)), abs=0.01
    )
    assert ds.citation.startswith("Yang, Y.") and ds.licence


def test_aadb_raw_ratings_ceiling_matches_an_independent_split(tmp_path):
    ds = load_dataset("aadb", str(write_aadb(tmp_path, n_images=60)))
    raw = pd.read_csv(tmp_path / "AADB_AllinAll.csv")
    columns = [(f"Input.image_url{k}", f"Answer.overallScore{k}") for k in (1, 2, 3)]
    long = pd.concat(
        [raw[[u, s]].set_axis(["url", "score"], axis=1) for u, s in columns], ignore_index=True
    ).dropna()
    matrix = np.vstack([g.to_numpy(float) for _, g in long.groupby("url")["score"]])
    assert ceiling(ds, "score") == pytest.approx(rater_split_half(matrix), abs=0.01)


# --- LIVE in the Wild and CADB -----------------------------------------------------------------


def test_live_wild_means_sds_and_the_authors_n(tmp_path):
    root, ratings = write_live(tmp_path, spread=3.0)
    ds = load_dataset("live_wild", str(root))
    assert len(ds) == 33 and "t1.bmp" not in set(ds.images["image_id"])
    assert len(load_dataset("live_wild", str(root), training_images="keep")) == 40
    kept = ratings[7:]
    expected = ctt_ceiling(kept.mean(1), kept.std(1, ddof=1), np.full(33, 175.0))
    assert ceiling(ds, "score", "pearson") == pytest.approx(expected, abs=0.01)
    assert 0.6 < expected < 0.95 and any("n = 175" in n for n in ds.notes)


def test_cadb_per_rater_composition_without_an_overall_rating(tmp_path):
    root, scores = write_cadb(tmp_path)
    ds = load_dataset("cadb", str(root))
    assert not ds.has_overall and ds.attributes["composition"].dimension == "composition"
    assert (ds.images["n_raters"] == 5).all()
    matrix = np.array([entry["scores"] for entry in scores.values()], dtype=float)
    assert ceiling(ds, "composition") == pytest.approx(rater_split_half(matrix), abs=0.01)


def test_aadb_test_and_testnew_lists_read_testnew_and_say_so(tmp_path):
    root = write_aadb(tmp_path, raw=False)
    folder = root / "imgListFiles_label"
    for path in folder.glob("imgListTestRegression_*.txt"):
        (folder / path.name.replace("Test", "TestNew")).write_text(path.read_text())
    ds = load_dataset("aadb", str(root))
    assert ds.images["split"].value_counts()["test"] == 3
    assert "imgListTestRegression_*.txt not read: TestNew is the test split" in ds.notes


@pytest.mark.parametrize("ddof", [0, 1])
def test_a_summary_card_says_its_sd_convention(tmp_path, ddof):
    rng = np.random.default_rng(5)
    values = np.clip(np.linspace(2, 8, 30)[:, None] + rng.normal(0, 1.5, (30, 6)), 1, 10)
    ids = [f"s{i:02d}" for i in range(30)]
    summary = pd.DataFrame(
        {
            "image_id": ids,
            "attribute": "aesthetic",
            "mean": values.mean(1),
            "sd": values.std(1, ddof=ddof),
            "n": 6,
        }
    )
    card = {**CARD, "sd_ddof": ddof, "attributes": {"aesthetic": CARD["attributes"]["aesthetic"]}}
    ds = load_dataset("ratings", str(write_generic(tmp_path, summary=summary, card=card)))
    expected = ctt_ceiling(values.mean(1), values.std(1, ddof=1), np.full(30, 6.0))
    assert ceiling(ds, "score", "pearson") == pytest.approx(expected, abs=0.01)
    assert any(f"ddof {ddof}" in n for n in ds.notes)


def test_para_giaa_mean_that_is_not_its_histograms_is_named(tmp_path):
    root = write_para_giaa(tmp_path, para_giaa_ratings(8, 6))
    path = root / "annotation" / "PARA-GiaaTrain.csv"
    frame = pd.read_csv(path)
    frame.loc[1, "compositionScore_mean"] = 4.9
    path.write_bytes(frame.to_csv(index=False).replace("\n", "\r\n").encode())
    with pytest.raises(
        DatasetError, match=r"PARA-GiaaTrain\.csv: column 'compositionScore_mean'.*line 3 "
    ):
        load_dataset("para", str(root))


def test_aadb_repeated_worker_ratings_are_a_listed_note(tmp_path):
    root = write_aadb(tmp_path)
    raw = pd.read_csv(root / "AADB_AllinAll.csv")
    pd.concat([raw, raw.iloc[[0]]]).to_csv(root / "AADB_AllinAll.csv", index=False)
    with pytest.warns(RuntimeWarning, match="repeated"):
        ds = load_dataset("aadb", str(root))
    assert "AADB_AllinAll.csv: 3 repeated (worker, image) rating(s) averaged to one" in ds.notes
