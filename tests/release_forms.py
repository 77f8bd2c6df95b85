"""More released forms, beside tests/release_files.py: the other files in which KonIQ-10k,
SPAQ, AADB and PARA circulate, and LIVE in the Wild and CADB.

Each writer makes a folder with the form's real file name, header, delimiter, quoting and
line ends, and rows written here (never copies of released files) whose votes follow a
hidden quality, so that a noise ceiling is defined. The writers that the ceiling tests
check against also return the votes or ratings they drew, for an independent computation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from release_files import aadb_name, touch_images

KONIQ_SCORES_HEADER = "image_name,c1,c2,c3,c4,c5,c_total,MOS,SD,MOS_zscore"
AADB_CSV_COLUMNS = [
    "ImageFile",
    "BalacingElements",
    "ColorHarmony",
    "Content",
    "DoF",
    "Light",
    "MotionBlur",
    "Object",
    "Repetition",
    "RuleOfThirds",
    "Symmetry",
    "VividColor",
    "score",
]


def vote_counts(
    n_images: int, levels: int, seed: int, low: int = 100, high: int = 136, spread: float = 1.2
) -> np.ndarray:
    """Vote counts, images x levels, around a hidden quality per image (its spread
    ``spread``: small spreads give ceilings well below 1)."""
    rng = np.random.default_rng(seed)
    truth = np.linspace(-spread, spread, n_images) + rng.normal(0, spread / 4, n_images)
    centre = (levels + 1) / 2 + truth * (levels - 1) / 4
    counts = []
    for c in centre:
        p = np.exp(-0.5 * ((np.arange(1, levels + 1) - c) / (0.22 * levels)) ** 2)
        counts.append(rng.multinomial(int(rng.integers(low, high)), p / p.sum()))
    return np.asarray(counts)


def _moments(counts: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = counts.sum(axis=1)
    mean = counts @ levels / n
    var = (counts @ levels**2 - n * mean**2) / (n - 1)
    return mean, np.sqrt(var)


# --- KonIQ-10k: koniq10k_scores_and_distributions.csv -----------------------------------------


def write_koniq_scores(root: Path, counts: np.ndarray) -> Path:
    """The authors' scores file: counts c1..c5, MOS and SD on the 1-5 vote scale."""
    mean, sd = _moments(counts, np.arange(1.0, 6.0))
    z = 50 + 20 * (mean - mean.mean()) / mean.std()
    names = [f"{10004473 + 37 * i}.jpg" for i in range(len(counts))]
    lines = [KONIQ_SCORES_HEADER]
    for name, c, m, s, zz in zip(names, counts, mean, sd, z, strict=True):
        lines.append(f"{name},{','.join(map(str, c))},{c.sum()},{m:.5f},{s:.5f},{zz:.5f}")
    root.mkdir(parents=True, exist_ok=True)
    (root / "koniq10k_scores_and_distributions.csv").write_text("\n".join(lines) + "\n")
    touch_images(root / "1024x768", names)
    return root


def write_koniq_sets(root: Path, counts: np.ndarray) -> Path:
    """The sets file of the same votes: fractions, MOS on 1-100, SD on the vote scale."""
    mean, sd = _moments(counts, np.arange(1.0, 6.0))
    names = [f"{10004473 + 37 * i}.jpg" for i in range(len(counts))]
    lines = ["image_name,c1,c2,c3,c4,c5,c_total,MOS,SD,set"]
    for i, (name, c, m, s) in enumerate(zip(names, counts, mean, sd, strict=True)):
        fractions = ",".join(f"{v / c.sum():.6f}" for v in c)
        mos = 1 + (m - 1) / 4 * 99
        split = ("training", "validation", "test")[i % 3]
        lines.append(f"{name},{fractions},{c.sum()},{mos:.4f},{s:.4f},{split}")
    root.mkdir(parents=True, exist_ok=True)
    (root / "koniq10k_distributions_sets.csv").write_text("\n".join(lines) + "\n")
    touch_images(root / "1024x768", names)
    return root


# --- SPAQ: the CSV export ---------------------------------------------------------------------


def write_spaq_csv(root: Path, frame: pd.DataFrame, folder: str = "Annotations") -> Path:
    """The comma-separated export of the workbook (the header's spaces kept, unquoted)."""
    (root / folder).mkdir(parents=True, exist_ok=True)
    frame.to_csv(root / folder / "MOS and Image attribute scores.csv", index=False)
    touch_images(root / "TestImage", [str(n) for n in frame["Image name"]])
    return root


# --- AADB: per-split CSVs and AADBinfo.mat ----------------------------------------------------


def write_aadb_csvs(root: Path, n_images: int = 9, overlap: int = 2, seed: int = 0) -> Path:
    """Mirrors' ``imgList{Train,Validation,TestNew}Regression_.csv``; the last ``overlap``
    validation images are listed in TestNew too, with identical labels."""
    rng = np.random.default_rng(seed)
    names = [aadb_name(i)[0] for i in range(n_images)]
    rows = {
        name: [name, *np.round(rng.uniform(-1, 1, 11), 2), round(float(rng.uniform(0, 1)), 2)]
        for name in names
    }
    thirds = np.array_split(np.arange(n_images), 3)
    splits = {
        "Train": list(thirds[0]),
        "Validation": list(thirds[1]),
        "TestNew": list(thirds[2]) + list(thirds[1][len(thirds[1]) - overlap :]),
    }
    root.mkdir(parents=True, exist_ok=True)
    for split, members in splits.items():
        table = pd.DataFrame([rows[names[i]] for i in members], columns=AADB_CSV_COLUMNS)
        table.to_csv(root / f"imgList{split}Regression_.csv", index=False)
    touch_images(root / "datasetImages_originalSize", names)
    return root


def write_aadb_mat(root: Path, n_train: int = 6, n_test: int = 3) -> Path:
    """``AADBinfo.mat``: name lists as 1 x N cells, scores as 1 x N rows."""
    from scipy.io import savemat

    names = [aadb_name(i)[0] for i in range(n_train + n_test)]
    scores = np.round(np.linspace(0.1, 0.9, n_train + n_test), 3)

    def cell(values: list[str]) -> np.ndarray:
        out = np.empty((1, len(values)), dtype=object)
        out[0, :] = values
        return out

    root.mkdir(parents=True, exist_ok=True)
    savemat(
        root / "AADBinfo.mat",
        {
            "trainNameList": cell(names[:n_train]),
            "trainScore": scores[None, :n_train],
            "testNameList": cell(names[n_train:]),
            "testScore": scores[None, n_train:],
        },
    )
    touch_images(root / "datasetImages_originalSize", names)
    return root


# --- PARA: the GIAA files ---------------------------------------------------------------------

PARA_HISTOGRAMS = (
    "compositionScore",
    "colorScore",
    "dofScore",
    "lightScore",
    "contentScore",
    "contentPreference",
    "willingnessToShare",
)


def para_giaa_ratings(
    n_images: int = 30, n_raters: int = 25, seed: int = 0, spread: float = 1.0
) -> pd.DataFrame:
    """Per-rater ratings behind the GIAA rows: aesthetic on half points, quality with
    decimals, the others 1-5."""
    rng = np.random.default_rng(seed)
    truth = np.linspace(-spread, spread, n_images) + rng.normal(0, spread / 5, n_images)
    rows = []
    for i, t in enumerate(truth):
        for u in range(n_raters):
            row = {"image": i, "rater": u}
            row["aestheticScore"] = float(
                np.clip(np.round((3 + 1.2 * t + rng.normal(0, 0.8)) * 2) / 2, 1, 5)
            )
            row["qualityScore"] = float(np.clip(3 + t + rng.normal(0, 0.7), 1, 5))
            for name in PARA_HISTOGRAMS:
                row[name] = int(np.clip(round(3 + t + rng.normal(0, 0.9)), 1, 5))
            rows.append(row)
    return pd.DataFrame(rows)


def write_para_giaa(root: Path, ratings: pd.DataFrame, test_every: int = 4) -> Path:
    """``PARA-GiaaTrain.csv`` and ``PARA-GiaaTest.csv`` with CRLF line ends; SDs are
    population SDs (ddof 0), as PARA's are."""
    lines: dict[str, list[str]] = {"Train": [], "Test": []}
    header = ["imageName", "sessionId", "semantic"]
    header += [f"aestheticScore_{k / 2:.1f}" for k in range(2, 11)]
    header += ["aestheticScore_mean", "aestheticScore_std", "qualityScore_mean", "qualityScore_std"]
    for name in PARA_HISTOGRAMS:
        header += [f"{name}_{k}" for k in range(1, 6)] + [f"{name}_mean", f"{name}_std"]
    header += ["imgEmotion_Happy", "imgEmotion_Calm", "difficultyOfJudgment_mean", "age_18-21"]
    names = []
    for i, rows in ratings.groupby("image"):
        name, session = f"iaa_pub{1200 + i}_.jpg", f"session{1 + i // 10}"
        names.append((session, name))
        a = rows["aestheticScore"].to_numpy()
        cells = [name, session, "portrait"]
        cells += [str(int((a == k / 2).sum())) for k in range(2, 11)]
        q = rows["qualityScore"].to_numpy()
        cells += [f"{a.mean():.6f}", f"{a.std():.6f}", f"{q.mean():.6f}", f"{q.std():.6f}"]
        for column in PARA_HISTOGRAMS:
            v = rows[column].to_numpy()
            cells += [str(int((v == k).sum())) for k in range(1, 6)]
            cells += [f"{v.mean():.6f}", f"{v.std():.6f}"]
        cells += ["0.4", "0.6", "1.8", "0.2"]
        lines["Test" if i % test_every == 0 else "Train"].append(",".join(cells))
    (root / "annotation").mkdir(parents=True, exist_ok=True)
    for split, body in lines.items():
        text = "\r\n".join([",".join(header), *body]) + "\r\n"
        (root / "annotation" / f"PARA-Giaa{split}.csv").write_bytes(text.encode())
    for session, name in names:
        touch_images(root / "imgs" / session, [name])
    return root


# --- LIVE in the Wild -------------------------------------------------------------------------


def write_live(
    root: Path, n_images: int = 40, n_ratings: int = 175, seed: int = 0, spread: float = 25.0
) -> tuple[Path, np.ndarray]:
    """``Data/AllImages_release.mat``, ``AllMOS_release.mat``, ``AllStdDev_release.mat``
    (MOS 0-100, SD of the ratings), the first seven images the study's training images
    (under ``Images/trainingImages/``); returns the folder and the drawn ratings."""
    from scipy.io import savemat

    rng = np.random.default_rng(seed)
    truth = np.linspace(50 - spread, 50 + spread, n_images) + rng.normal(0, spread / 5, n_images)
    ratings = np.clip(truth[:, None] + rng.normal(0, 18, (n_images, n_ratings)), 0, 100)
    names = np.empty((n_images, 1), dtype=object)
    names[:, 0] = [f"{i + 1}.bmp" if i >= 7 else f"t{i + 1}.bmp" for i in range(n_images)]
    (root / "Data").mkdir(parents=True, exist_ok=True)
    savemat(root / "Data" / "AllImages_release.mat", {"AllImages_release": names})
    savemat(root / "Data" / "AllMOS_release.mat", {"AllMOS_release": ratings.mean(axis=1)[None, :]})
    savemat(
        root / "Data" / "AllStdDev_release.mat",
        {"AllStdDev_release": ratings.std(axis=1, ddof=1)[None, :]},
    )
    touch_images(root / "Images" / "trainingImages", list(names[:7, 0]))
    touch_images(root / "Images", list(names[7:, 0]))
    return root, ratings


# --- CADB -------------------------------------------------------------------------------------


def write_cadb(root: Path, n_images: int = 40, seed: int = 0) -> tuple[Path, dict]:
    """``composition_scores.json``: per image five raters' 1-5 scores, their fractions and
    mean; images under ``images/``. Returns the folder and the scores."""
    rng = np.random.default_rng(seed)
    truth = np.linspace(-1.2, 1.2, n_images) + rng.normal(0, 0.2, n_images)
    scores = {}
    for i, t in enumerate(truth):
        s = np.clip(np.round(3 + t + rng.normal(0, 0.8, 5)), 1, 5).astype(int).tolist()
        dist = [round(s.count(k) / 5, 1) for k in range(1, 6)]
        scores[f"{3000 + 17 * i}.jpg"] = {
            "scores": s,
            "dist": dist,
            "mean": round(float(np.mean(s)), 1),
        }
    root.mkdir(parents=True, exist_ok=True)
    (root / "composition_scores.json").write_text(json.dumps(scores, indent=4))
    touch_images(root / "images", list(scores))
    return root, scores
