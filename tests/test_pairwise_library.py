"""The pairwise study's library: the ``pairs`` kind, pairs from rated data, Bradley-Terry.

The Bradley-Terry fit is checked against an independent fit of the same penalised
likelihood (scikit-learn's logistic regression on the +-1 design, ``C = 1 / alpha``), ties
counted as half a win each.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import choix
import numpy as np
import pandas as pd
import pytest
from release_files import write_generic
from sklearn.linear_model import LogisticRegression

from judgepanel.core.rubric import load_rubric
from judgepanel.datasets import DatasetError, get_kind, load_ratings
from judgepanel.datasets.pairs import load_pairs
from judgepanel.stats.bradley_terry import fit_bradley_terry
from judgepanel.studies.pairwise import human_noise, label_pairs, sample_pairs
from judgepanel.studies.pairwise.parameters import PairwiseParameters
from judgepanel.studies.pairwise.plan import questions
from judgepanel.studies.pairwise.sampling import study_pairs

GOOD = "image_a,image_b,winner,rater\np1,p2,a,r1\np2,p3,B,r1\np1,p3,tie,r2\n"


def _pairs_folder(root: Path, pairs: str = GOOD) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "img").mkdir()
    for name in ("p1", "p2", "p3"):
        (root / "img" / f"{name}.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    (root / "images.csv").write_text(
        "image_id,path\n" + "".join(f"{n},img/{n}.jpg\n" for n in ("p1", "p2", "p3"))
    )
    (root / "pairs.csv").write_text(pairs)
    return root


def test_pairs_kind_reads_a_good_file(tmp_path):
    data = load_pairs(_pairs_folder(tmp_path / "mine"))
    assert get_kind("pairs").loader is load_pairs and not get_kind("pairs").rated
    assert data.pairs["winner"].tolist() == ["a", "b", "tie"]
    assert data.pairs["rater"].tolist() == ["r1", "r1", "r2"]
    assert data.pairs["line"].tolist() == [2, 3, 4]
    assert len(data.images) == 3 and data.rated is None


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("p1,p9,a", "an image not listed in images.csv"),
        ("p2,p2,b", "an image paired with itself"),
        ("p1,p2,left", "a winner other than a, b, tie"),
    ],
)
def test_pairs_kind_refuses_bad_lines_naming_file_and_line(tmp_path, line, says):
    root = _pairs_folder(tmp_path / "mine", GOOD + line + "\n")
    before = sorted(p.name for p in root.rglob("*"))
    with pytest.raises(DatasetError) as info:
        load_pairs(root)
    message = str(info.value)
    assert str(root / "pairs.csv") in message and says in message and "line 5" in message
    assert sorted(p.name for p in root.rglob("*")) == before  # nothing written


def test_pairs_kind_pairs_a_rated_dataset(tmp_path):
    root = write_generic(tmp_path / "rated")
    data = load_pairs(root, rated="ratings")
    assert data.rated is not None and len(data.images) == len(data.rated.images)
    with pytest.raises(DatasetError, match="no per-image human ratings"):
        load_pairs(root, rated="vab")


def test_sampled_pairs_give_each_image_its_budget():
    ids = [f"i{k:03d}" for k in range(101)]
    for budget in (1, 2, 4, 5):
        pairs = sample_pairs(ids, budget, seed=3)
        degree = Counter(pairs["image_a"].tolist() + pairs["image_b"].tolist())
        assert not (pairs["image_a"] == pairs["image_b"]).any()
        assert pairs["pair_id"].is_unique
        assert max(degree.values()) <= budget and np.mean(list(degree.values())) > budget - 0.1
    assert sample_pairs(ids, 4, seed=3).equals(sample_pairs(ids, 4, seed=3))


def test_decided_pairs_follow_the_stated_rule(tmp_path):
    data = load_ratings(write_generic(tmp_path / "rated"))
    noise = human_noise(data)
    r = data.ratings.groupby("image_id")["score"]
    expected_se = r.std(ddof=1) / np.sqrt(r.count())
    assert np.allclose(noise.loc[expected_se.index, "se"], expected_se)
    pairs = sample_pairs(data.images["image_id"].tolist(), 3, seed=0)
    labelled = label_pairs(pairs, data, z=1.0)
    a, b = noise.loc[labelled["image_a"]], noise.loc[labelled["image_b"]]
    diff = a["mean"].to_numpy() - b["mean"].to_numpy()
    se = np.sqrt(a["se"].to_numpy() ** 2 + b["se"].to_numpy() ** 2)
    assert (labelled["decided"].to_numpy() == (np.abs(diff) > se)).all()
    assert (labelled["human"].to_numpy() == np.where(diff > 0, "a", "b")).all()
    assert 0 < labelled["decided"].sum() < len(labelled)


def _comparisons(seed: int = 0, n: int = 40, m: int = 300):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    truth = rng.normal(size=n)
    y = (rng.random(m) < 1 / (1 + np.exp(truth[b] - truth[a]))).astype(float)
    y[:25] = 0.5  # ties: half a win each
    return n, a, b, y


def bt_design(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The +-1 design of the comparisons twice over, labelled 1 then 0 (weights y, 1 - y)."""
    x = np.zeros((a.size, n))
    x[np.arange(a.size), a], x[np.arange(a.size), b] = 1.0, -1.0
    return np.vstack([x, x]), np.r_[np.ones(a.size), np.zeros(a.size)]


@pytest.mark.parametrize("alpha", [0.05, 1.0])
def test_bradley_terry_equals_scikit_learn(alpha):
    n, a, b, y = _comparisons()
    fit = fit_bradley_terry(n, a, b, y, alpha=alpha)
    x, label = bt_design(n, a, b)
    lr = LogisticRegression(
        C=1 / alpha, fit_intercept=False, tol=1e-12, max_iter=10_000, solver="newton-cholesky"
    ).fit(x, label, sample_weight=np.r_[y, 1 - y])
    assert np.abs(lr.coef_[0] - fit.scores).max() < 1e-6


@pytest.mark.parametrize("alpha", [0.05, 1.0])
def test_bradley_terry_equals_choix(alpha):
    """choix's penalised fit, fed each win twice and a tie once in each direction (half a
    win each, so its likelihood is twice ours) with the penalty alpha (twice ours, halved)."""
    n, a, b, y = _comparisons()
    fit = fit_bradley_terry(n, a, b, y, alpha=alpha)
    data = []
    for first, second, share in zip(a, b, y, strict=True):
        if share == 0.5:
            data += [(first, second), (second, first)]
        else:
            data += [(first, second) if share == 1 else (second, first)] * 2
    theirs = choix.opt_pairwise(n, data, alpha=alpha, method="Newton-CG", tol=1e-12)
    assert np.abs(theirs - fit.scores).max() < 1e-6


def test_bradley_terry_orders_items_by_their_wins_and_checks_input():
    a, b = np.array([0, 0, 1, 0]), np.array([1, 2, 2, 2])
    fit = fit_bradley_terry(3, a, b, np.array([1.0, 1.0, 1.0, 0.5]))
    assert fit.scores[0] > fit.scores[1] > fit.scores[2]
    assert fit.n_comparisons.tolist() == [3, 2, 3]
    with pytest.raises(ValueError, match="compared with itself"):
        fit_bradley_terry(3, np.array([1]), np.array([1]), np.array([1.0]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fit_bradley_terry(3, np.array([0]), np.array([1]), np.array([2.0]))


def test_pair_table_keeps_sampled_columns():
    pairs = sample_pairs(["x", "y", "z"], 2)
    assert list(pairs.columns) == ["pair_id", "image_a", "image_b"]
    assert isinstance(pairs, pd.DataFrame) and len(pairs) == 3


def test_a_pairs_file_is_asked_each_unordered_pair_once(tmp_path):
    data = load_pairs(_pairs_folder(tmp_path / "mine", GOOD + "p2,p1,b,r3\n"))
    pairs = study_pairs(data, PairwiseParameters())
    assert pairs["pair_id"].tolist() == ["p1|p2", "p2|p3", "p1|p3"]
    assert questions(load_rubric(), ["composition"]) == [
        ("holistic", ""),
        ("dimension", "composition"),
    ]
    with pytest.raises(ValueError, match="not in the rubric"):
        questions(load_rubric(), ["sharpness"])
