"""Small datasets written in the released formats of AVA, AADB, KonIQ-10k, SPAQ and LAPIS,
and in the generic ``ratings`` format, for the loader and command-line tests.

Each writer makes a folder as the release unpacks (see /work/shared/DATASETS.md), with
a few images whose ratings follow a hidden quality (so a noise ceiling is defined), and
returns it. Image files are a few bytes: the loaders only check that they exist. The
other forms these releases circulate in (KonIQ's scores file, SPAQ's CSV, AADB's per-split
CSVs and .mat, PARA's GIAA files) and the LIVE in the Wild and CADB releases are written
by tests/release_forms.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

JPEG = b"\xff\xd8\xff\xd9"


def touch_images(folder: Path, names: list[str]) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(JPEG)


def _truth(n: int, seed: int) -> np.ndarray:
    return np.linspace(-1.5, 1.5, n) + np.random.default_rng(seed).normal(0, 0.2, n)


# --- the generic format ----------------------------------------------------------------------

CARD = {
    "name": "tiny-photos",
    "images": "images",
    "licence": "CC0 1.0",
    "citation": "Nobody, A. (2026). Tiny photos.",
    "attributes": {
        "aesthetic": {"range": [1, 10], "higher": "better", "dimension": "holistic"},
        "sharpness": {"range": [1, 5], "higher": "better", "dimension": "quality"},
        "clutter": {"range": [1, 5], "higher": "worse", "dimension": "composition"},
    },
}


def write_generic(
    root: Path,
    *,
    ratings: pd.DataFrame | None = None,
    summary: pd.DataFrame | None = None,
    card: dict | None = None,
    images: pd.DataFrame | None = None,
) -> Path:
    """A ``ratings`` folder: the card, images.csv, and the tables given (default: per-rater
    ratings of 8 images by 5 raters on the three attributes of ``CARD``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "dataset.yaml").write_text(yaml.safe_dump(card or CARD, sort_keys=False))
    if ratings is None and summary is None:
        ratings = generic_ratings()
    ids = pd.concat([t["image_id"] for t in (ratings, summary) if t is not None]).unique()
    if images is None:
        images = pd.DataFrame(
            {
                "image_id": ids,
                "path": [f"{i}.jpg" for i in ids],
                "split": ["test" if k % 4 == 0 else "train" for k in range(len(ids))],
            }
        )
    images.to_csv(root / "images.csv", index=False)
    touch_images(root / "images", list(images["path"]))
    if ratings is not None:
        ratings.to_csv(root / "ratings.csv", index=False)
    if summary is not None:
        summary.to_csv(root / "summary.csv", index=False)
    return root


def generic_ratings(n_images: int = 8, n_raters: int = 5, seed: int = 0) -> pd.DataFrame:
    """Per-rater ratings of the three attributes of ``CARD``, long."""
    rng = np.random.default_rng(seed)
    truth = _truth(n_images, seed)
    rows = []
    for i, t in enumerate(truth):
        for r in range(n_raters):
            score = int(np.clip(round(5.5 + 2 * t + rng.normal(0, 1)), 1, 10))
            sharp = int(np.clip(round(3 + t + rng.normal(0, 1)), 1, 5))
            clutter = int(np.clip(round(3 - t + rng.normal(0, 1)), 1, 5))
            for attribute, value in (("aesthetic", score), ("sharpness", sharp)):
                rows.append((f"img{i:02d}", attribute, value, f"r{r}", ""))
            rows.append((f"img{i:02d}", "clutter", clutter, f"r{r}", ""))
    return pd.DataFrame(rows, columns=["image_id", "attribute", "value", "rater_id", "count"])


# --- AVA -------------------------------------------------------------------------------------


def ava_lines(n_images: int = 12, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    lines = []
    for i, t in enumerate(_truth(n_images, seed)):
        p = np.exp(-0.5 * ((np.arange(1, 11) - (5.5 + 1.5 * t)) / 1.5) ** 2)
        counts = rng.multinomial(60, p / p.sum())
        lines.append(" ".join(map(str, [i + 1, 953600 + i, *counts, 0, 15, 1396])))
    return lines


def write_ava(root: Path, lines: list[str] | None = None, test: list[str] | None = None) -> Path:
    lines = ava_lines() if lines is None else lines
    root.mkdir(parents=True, exist_ok=True)
    (root / "AVA.txt").write_text("\n".join(lines) + "\n")
    ids = [line.split()[1] for line in lines if len(line.split()) > 1]
    (root / "aesthetics_image_lists").mkdir(exist_ok=True)
    test = ids[::4] if test is None else test
    (root / "aesthetics_image_lists" / "generic_test.jpgl").write_text("\n".join(test) + "\n")
    touch_images(root / "images", [f"{i}.jpg" for i in ids])
    return root


# --- AADB ------------------------------------------------------------------------------------

AADB_ATTRIBUTES = ("ColorHarmony", "RuleOfThirds", "Light")


def aadb_name(i: int) -> tuple[str, str]:
    """An image's AADB file name and the Flickr URL it was rebuilt from."""
    server, photo = 200 + i, f"{19452343000 + i}_8ee7e5e375_b.jpg"
    return f"farm1_{server}_{photo}", f"http://farm1.staticflickr.com/{server}/{photo}"


def write_aadb(root: Path, n_images: int = 9, raw: bool = True, seed: int = 0) -> Path:
    """List files for three splits (3 images each) and, with ``raw``, the MTurk file with
    5 workers an image and 3 image slots a row."""
    rng = np.random.default_rng(seed)
    truth = _truth(n_images, seed)
    folder = root / "imgListFiles_label"
    folder.mkdir(parents=True, exist_ok=True)
    names = [aadb_name(i)[0] for i in range(n_images)]
    for s, split in enumerate(("Train", "Validation", "Test")):
        members = range(s, n_images, 3)
        score = [f"{names[i]} {np.clip(0.5 + 0.15 * truth[i], 0, 1):.4f}" for i in members]
        (folder / f"imgList{split}Regression_score.txt").write_text("\n".join(score) + "\n")
        for attribute in AADB_ATTRIBUTES:
            rows = [f"{names[i]} {np.clip(0.3 * truth[i], -1, 1):.3f}" for i in members]
            path = folder / f"imgList{split}Regression_{attribute}.txt"
            path.write_text("\n".join(rows) + "\n")
    touch_images(root / "datasetImages_originalSize", names)
    if raw:
        rows = []
        for w in range(5):
            for start in range(0, n_images, 3):
                row = {"HITId": f"h{start}", "WorkerId": f"A{w:03d}X"}
                for k, i in enumerate(range(start, min(start + 3, n_images)), start=1):
                    score = int(np.clip(round(3 + truth[i] + rng.normal(0, 0.7)), 1, 5))
                    row[f"Input.image_url{k}"] = aadb_name(i)[1]
                    row[f"Answer.overallScore{k}"] = score
                rows.append(row)
        pd.DataFrame(rows).to_csv(root / "AADB_AllinAll.csv", index=False)
    return root


# --- KonIQ-10k -------------------------------------------------------------------------------


def koniq_frame(n_images: int = 10, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i, t in enumerate(_truth(n_images, seed)):
        p = np.exp(-0.5 * ((np.arange(1, 6) - (3 + t)) / 0.9) ** 2)
        total = int(rng.integers(100, 136))
        counts = rng.multinomial(total, p / p.sum())
        votes = np.repeat(np.arange(1, 6), counts)
        rows.append(
            {
                "image_name": f"{826373 + i}.jpg",
                **{f"c{k + 1}": round(c / total, 6) for k, c in enumerate(counts)},
                "c_total": total,
                "MOS": round(1 + (votes.mean() - 1) / 4 * 99, 4),
                "SD": round(votes.std(ddof=1), 4),
                "set": ("training", "validation", "test")[i % 3],
            }
        )
    return pd.DataFrame(rows)


def write_koniq(root: Path, frame: pd.DataFrame | None = None) -> Path:
    frame = koniq_frame() if frame is None else frame
    root.mkdir(parents=True, exist_ok=True)
    frame.to_csv(root / "koniq10k_distributions_sets.csv", index=False)
    touch_images(root / "1024x768", list(frame["image_name"].astype(str)))
    return root


# --- SPAQ ------------------------------------------------------------------------------------

SPAQ_COLUMNS = ["Image name", "MOS", "Brightness", "Colorfulness", "Contrast", "Noisiness"]


def spaq_frame(n_images: int = 6, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"Image name": [f"{i + 1:05d}.jpg" for i in range(n_images)]})
    for column in ("MOS", "Brightness", "Colorfulness", "Contrast", "Noisiness", "Sharpness"):
        frame[column] = np.round(rng.uniform(10, 90, n_images), 2)
    return frame


def write_spaq(root: Path, frame: pd.DataFrame | None = None) -> Path:
    frame = spaq_frame() if frame is None else frame
    (root / "Annotations").mkdir(parents=True, exist_ok=True)
    frame.to_excel(root / "Annotations" / "MOS and Image attribute scores.xlsx", index=False)
    touch_images(root / "TestImage", [str(n) for n in frame["Image name"]])
    return root


# --- LAPIS -----------------------------------------------------------------------------------


def lapis_frame(n_images: int = 8, n_raters: int = 6, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i, t in enumerate(_truth(n_images, seed)):
        art = ("impressionism", "baroque")[i % 2]
        for p in range(n_raters):
            rows.append(
                {
                    "image_id": 100 + i,
                    "file": f"{art}/img_{i:03d}.jpg",
                    "response": int(np.clip(round(50 + 15 * t + rng.normal(0, 10)), 0, 100)),
                    "participant_id": 5000 + p,
                    "age": 20 + p,
                    "nationality": "BE",
                    "demo_gender": ("f", "m")[p % 2],
                    "demo_edu": "MSc",
                    "style": art.title(),
                    "genre": "landscape",
                }
            )
    return pd.DataFrame(rows)


def write_lapis(root: Path, frame: pd.DataFrame | None = None, sets: bool = True) -> Path:
    frame = lapis_frame() if frame is None else frame
    (root / "annotation").mkdir(parents=True, exist_ok=True)
    frame.to_csv(root / "annotation" / "LAPIS_individualratings_metaANDdemodata.csv", index=False)
    files = list(frame["file"].astype(str).drop_duplicates())
    touch_images(root / "images", files)
    if sets:
        (root / "imageset").mkdir(exist_ok=True)
        names = [Path(f).name for f in files]
        for k, name in enumerate(("TrainImageSet.txt", "ValImageSet.txt", "TestImageSet.txt")):
            (root / "imageset" / name).write_text("\n".join(names[k::3]) + "\n")
    return root


WRITERS = {
    "ratings": write_generic,
    "ava": write_ava,
    "aadb": write_aadb,
    "koniq": write_koniq,
    "spaq": write_spaq,
    "lapis": write_lapis,
}
"""Each kind's writer, by its dataset kind."""
