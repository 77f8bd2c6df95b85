"""The generic ``ratings`` format: dataset.yaml, images.csv, ratings.csv or summary.csv.

Good folders load into the same `Dataset` as EVA and PARA (per-rater ratings, vote
histograms, summaries); every bad input is a `DatasetError` naming the file and the
key and line, or the column and lines.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from release_files import CARD, generic_ratings, touch_images, write_generic

from judgepanel.core.describe import describe_dataset, describe_lines
from judgepanel.core.paths import project_root
from judgepanel.datasets import Dataset, DatasetError, load_dataset, load_ratings
from judgepanel.datasets.mapping import rubric_mapping


def _error(root: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load_ratings(root)
    return str(info.value)


def test_per_rater_ratings_load_like_eva(tmp_path):
    ds = load_dataset("ratings", str(write_generic(tmp_path)))
    assert isinstance(ds, Dataset) and ds.name == "tiny-photos" and len(ds) == 8
    assert (ds.licence, ds.citation) == ("CC0 1.0", "Nobody, A. (2026). Tiny photos.")
    assert ds.score_range == (1.0, 10.0) and ds.votes is None and ds.summary is None
    assert ds.images.columns.tolist() == [
        "image_id",
        "path",
        "n_raters",
        "mean_score",
        "quality",
        "composition",
        "score_sd",
        "split",
    ]
    assert (ds.images["n_raters"] == 5).all() and len(ds.ratings) == 40
    assert ds.ratings.columns.tolist() == [
        "image_id",
        "rater_id",
        "score",
        "quality",
        "composition",
    ]
    raw = generic_ratings()
    first = raw[raw["image_id"] == "img00"]
    assert ds.images.loc[0, "mean_score"] == first[first.attribute == "aesthetic"].value.mean()
    # clutter is higher-is-worse and validates composition: the tables hold 1 + 5 - clutter
    clutter = first[first.attribute == "clutter"].value.astype(float)
    assert ds.images.loc[0, "composition"] == pytest.approx(6 - clutter.mean())
    assert ds.attributes["composition"].name == "clutter" and ds.attributes["composition"].reversed
    assert ds.attributes["quality"].name == "sharpness"
    assert not ds.attributes["quality"].reversed
    assert set(ds.images["split"]) == {"train", "test"}
    assert all(Path(p).is_file() for p in ds.images["path"])


def test_a_histogram_and_a_summary_load_into_votes_and_summary(tmp_path):
    votes = pd.DataFrame(
        {
            "image_id": ["a", "a", "b", "b", "c", "c", "c"],
            "attribute": "aesthetic",
            "value": [3, 5, 4, 6, 7, 8, 9],
            "count": [2, 1, "", 3, 1, 1, 2],
        }
    )
    ds = load_ratings(write_generic(tmp_path / "h", ratings=votes))
    assert ds.ratings.empty and ds.summary is None
    assert ds.votes["count"].sum() == 11
    assert ds.images["n_raters"].tolist() == [3, 4, 4]
    assert ds.images["mean_score"].tolist() == pytest.approx([11 / 3, 22 / 4, 33 / 4])
    assert ds.images.loc[0, "score_sd"] == pytest.approx(np.std([3, 3, 5], ddof=1))

    summary = pd.DataFrame(
        {
            "image_id": ["a", "b", "c", "a", "b", "c"],
            "attribute": ["aesthetic"] * 3 + ["sharpness"] * 3,
            "mean": [4.5, 6.0, 7.5, 2, 3, 4],
            "sd": [1.0, 1.5, 0.5, "", "", ""],
            "n": [20, 25, 22, "", "", ""],
        }
    )
    ds = load_ratings(write_generic(tmp_path / "s", summary=summary))
    assert ds.ratings.empty and ds.votes is None
    assert ds.images["n_raters"].tolist() == [20, 25, 22]
    assert ds.images["score_sd"].tolist() == [1.0, 1.5, 0.5]
    assert ds.images["quality"].tolist() == [2, 3, 4]
    assert ds.summary["n"].isna().sum() == 3


def test_a_released_mean_wins_and_the_ratings_give_n(tmp_path):
    """AADB's way: released means in summary.csv, the raw ratings in ratings.csv."""
    ratings = generic_ratings(n_images=3)
    summary = pd.DataFrame(
        {"image_id": ["img00", "img01", "img02"], "attribute": "aesthetic", "mean": [9, 8, 7]}
    )
    ds = load_ratings(write_generic(tmp_path, ratings=ratings, summary=summary))
    assert ds.images["mean_score"].tolist() == [9, 8, 7]
    assert (ds.images["n_raters"] == 5).all() and len(ds.ratings) == 15


def test_a_sample_keeps_the_votes_and_summaries_of_its_images(tmp_path):
    votes = generic_ratings(n_images=12).assign(rater_id="", count=1)
    ds = load_ratings(write_generic(tmp_path, ratings=votes))
    some = ds.sample(5, seed=1)
    assert len(some) == 5 and set(some.votes["image_id"]) == set(some.images["image_id"])
    assert some.attributes == ds.attributes and some.citation == ds.citation


# --- any rubric, no overall rating -----------------------------------------------------------

LESIONS = {
    "name": "tiny-lesions",
    "images": "images",
    "attributes": {
        "asymmetry": {"range": [0, 2], "higher": "better", "dimension": "asymmetry"},
        "colours": {"range": [1, 6], "higher": "better", "dimension": "colour_count"},
        "notes": {"range": [1, 5], "higher": "better"},
    },
}


def _lesions(n_images: int = 12, n_raters: int = 6, seed: int = 3) -> pd.DataFrame:
    """Per-rater ratings on the scales of ``LESIONS``, each image with its own truth."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_images):
        t = rng.normal()
        for r in range(n_raters):
            asym = int(np.clip(round(1 + 0.8 * t + rng.normal(0, 0.4)), 0, 2))
            colours = int(np.clip(round(3.5 + 1.2 * t + rng.normal(0, 0.6)), 1, 6))
            rows += [(f"les{i:02d}", "asymmetry", asym, f"d{r}", ""),
                     (f"les{i:02d}", "colours", colours, f"d{r}", "")]  # fmt: skip
            if r < 2:
                rows.append((f"les{i:02d}", "notes", int(rng.integers(1, 6)), f"d{r}", ""))
    return pd.DataFrame(rows, columns=["image_id", "attribute", "value", "rater_id", "count"])


def test_a_dataset_without_an_overall_rating_loads_and_says_what_it_lacks(tmp_path):
    ds = load_ratings(write_generic(tmp_path, ratings=_lesions(), card=LESIONS))
    assert not ds.has_overall and ds.score_range is None
    assert ds.images.columns.tolist() == [
        "image_id", "path", "n_raters", "asymmetry", "colour_count", "notes", "split",
    ]  # fmt: skip
    assert (ds.images["n_raters"] == 6).all()  # the most rated attribute's raters
    assert ds.attributes["colour_count"].name == "colours"
    with pytest.raises(DatasetError, match="the fusion study needs an overall rating.*"
                       r"its rated attributes: asymmetry, colour_count, notes"):  # fmt: skip
        ds.require_overall("the fusion study")
    some = ds.sample(5, seed=0)  # stratified by the scaled attribute means
    assert len(some) == 5 and set(some.ratings["image_id"]) == set(some.images["image_id"])
    assert ds.stratifier().between(0, 1).all()


def test_an_attribute_maps_to_any_rubric_and_a_missing_dimension_is_named(tmp_path):
    ds = load_ratings(write_generic(tmp_path, ratings=_lesions(), card=LESIONS))
    keys = ("asymmetry", "border", "colour_count")
    assert rubric_mapping(ds, keys, "lesions.yaml") == {
        "asymmetry": "asymmetry", "colour_count": "colour_count",
    }  # fmt: skip
    with pytest.raises(
        DatasetError,
        match=r"attribute 'asymmetry' validates 'asymmetry', "
        r"which the rubric seed does not declare; its dimensions are: quality",
    ):
        rubric_mapping(ds, ("quality", "composition"), "seed")  # fmt: skip


def test_describe_maps_each_dimension_with_its_ceiling(tmp_path):
    from judgepanel.core.rubric import load_rubric

    root = write_generic(tmp_path / "lesions", ratings=_lesions(n_images=30), card=LESIONS)
    rubric = tmp_path / "lesions.yaml"
    rubric.write_text(
        "name: lesions\ndimensions:\n"
        "  asymmetry: {title: Asymmetry, asks: how asymmetric, scale: {min: 0, max: 2}}\n"
        "  border: {title: Border, asks: how irregular the border, scale: {min: 0, max: 2}}\n"
        "  colour_count: {title: Colours, asks: how many colours, scale: {min: 1, max: 6}}\n"
    )
    info = describe_dataset(
        "ratings", root, n_splits=20, n_resamples=50, rubric=load_rubric(rubric)
    )
    assert info["ceiling"] is None and info["ceiling_reason"] == "the dataset has no overall rating"
    by = {m["dimension"]: m for m in info["mapping"]}
    assert list(by) == ["asymmetry", "border", "colour_count"]  # no holistic question
    assert (
        by["asymmetry"]["attribute"] == "asymmetry" and by["colour_count"]["attribute"] == "colours"
    )
    for d in ("asymmetry", "colour_count"):
        assert 0.5 < by[d]["ceiling"] <= 1 and by[d]["ceiling_method"] == "per_rater_split_half"
    assert by["border"]["column"] is None and by["border"]["ceiling"] is None
    text = "\n".join(describe_lines(info))
    assert "noise ceiling  none: the dataset has no overall rating" in text


# --- bad input ------------------------------------------------------------------------------


def _card_error(tmp_path: Path, text: str) -> str:
    root = write_generic(tmp_path)
    (root / "dataset.yaml").write_text(text)
    return _error(root)


CARD_TEXT = yaml.safe_dump(CARD, sort_keys=False)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("licence:", "license:", r"dataset\.yaml:3: \(top level\)\.license: unknown key; the keys"),
        ("name: tiny-photos\n", "", r"dataset\.yaml:1: \(top level\): missing key 'name'"),
        ("higher: worse", "higher: lower", r":\d+: attributes\.clutter\.higher: expected better"),
        (
            "- 1\n    - 5\n    higher: better\n    dimension: quality",
            "- 5\n    - 1\n    higher: better\n    dimension: quality",
            r"attributes\.sharpness\.range: expected",
        ),
        (
            "dimension: quality",
            "dimension: 3-sharp",
            r"attributes\.sharpness\.dimension: expected holistic, none or the key of a",
        ),
        ("dimension: composition", "dimension: holistic", "at most one attribute may have"),
        ("dimension: composition", "dimension: quality", "takes the column 'quality'"),
        ("  clutter:", "  split:", r"attributes\.split: an attribute may not be called 'split'"),
        ("name: tiny-photos", "name: [tiny", "not valid YAML"),
    ],
)
def test_a_bad_card_names_its_line_and_key(tmp_path, old, new, expected):
    assert old in CARD_TEXT, old
    message = _card_error(tmp_path, CARD_TEXT.replace(old, new, 1))
    assert re.search(expected, message), message
    assert "dataset.yaml" in message


def test_a_card_line_number_is_the_keys_line(tmp_path):
    text = CARD_TEXT.replace("higher: worse", "higher: worse\n    weight: 2")
    line = text[: text.index("weight:")].count("\n") + 1
    message = _card_error(tmp_path, text)
    assert f"dataset.yaml:{line}: attributes.clutter.weight: unknown key" in message
    assert "range, higher, dimension" in message


def _rewrite(root: Path, name: str, row: int, column: str, value: object) -> int:
    """Set one cell of a written table; returns the line it is on."""
    frame = pd.read_csv(root / name, dtype=str, keep_default_na=False)
    frame.loc[row, column] = value
    frame.to_csv(root / name, index=False)
    return row + 2


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("value", "high", r"column 'value' has 1 value\(s\) that are not numbers in 1-10"),
        ("value", "11", r"column 'value' has 1 value\(s\) that are not numbers in 1-10"),
        ("attribute", "blur", "column 'attribute' has an attribute not in dataset.yaml"),
        ("image_id", "img99", "column 'image_id' has an image id not in images.csv"),
        ("count", "1.5", "column 'count' has 1 value\\(s\\) that are not whole numbers"),
        ("count", "2", "column 'count' has a count other than 1 on a row with a rater id"),
        ("rater_id", "", "column 'rater_id' has an empty cell where other rows of the same"),
        ("rater_id", "r1", "column 'rater_id' has a rater rating one image twice"),
    ],
)
def test_a_bad_rating_names_file_column_and_line(tmp_path, column, value, expected):
    root = write_generic(tmp_path)
    line = _rewrite(root, "ratings.csv", 6, column, value)
    message = _error(root)
    assert "ratings.csv" in message and re.search(expected, message), message
    assert f"line {line} " in message


def test_a_row_with_too_many_cells_names_its_line(tmp_path):
    root = write_generic(tmp_path)
    lines = (root / "ratings.csv").read_text().splitlines()
    lines[4] += ",extra"
    (root / "ratings.csv").write_text("\n".join(lines) + "\n")
    message = _error(root)
    assert "ratings.csv: cannot be parsed" in message and "line 5" in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda f: f.rename(columns={"rater_id": "rater"}), "unknown column(s) rater"),
        (lambda f: f.drop(columns="value"), "missing column(s) value"),
    ],
)
def test_a_misnamed_column_is_refused(tmp_path, change, expected):
    root = write_generic(tmp_path)
    change(pd.read_csv(root / "ratings.csv", dtype=str)).to_csv(root / "ratings.csv", index=False)
    assert expected in _error(root)


def test_bad_images_name_their_lines(tmp_path):
    root = write_generic(tmp_path)
    (root / "images" / "img03.jpg").unlink()
    message = _error(root)
    assert "images.csv: column 'path' has an image missing on disk" in message
    assert "line 5 (image_id=img03)" in message
    root = write_generic(tmp_path / "dup")
    line = _rewrite(root, "images.csv", 2, "image_id", "img00")
    message = _error(root)
    assert "an id listed more than once" in message and f"line {line} " in message


def test_bad_summaries_name_their_lines(tmp_path):
    summary = pd.DataFrame(
        {"image_id": ["a", "b", "c"], "attribute": "aesthetic", "mean": [4, 5, 6], "sd": 1.0}
    )
    summary["n"] = [10, 12, 9]
    root = write_generic(tmp_path, summary=summary)
    _rewrite(root, "summary.csv", 1, "sd", "-1")
    assert "column 'sd' has a value that is not a number of at least 0" in _error(root)
    _rewrite(root, "summary.csv", 1, "sd", "1")
    _rewrite(root, "summary.csv", 2, "n", "")
    message = _error(root)
    assert "column 'n' has an empty cell where other rows" in message and "line 4" in message
    _rewrite(root, "summary.csv", 2, "n", "9")
    _rewrite(root, "summary.csv", 2, "image_id", "a")
    assert "column 'attribute' has an image listed twice" in _error(root)


def test_missing_files_and_overall_ratings_are_named(tmp_path):
    root = write_generic(tmp_path)
    (root / "ratings.csv").unlink()
    assert "holds neither ratings.csv nor summary.csv" in _error(root)
    (root / "dataset.yaml").unlink()
    assert "dataset.yaml: the dataset card (dataset.yaml) is missing" in _error(root)
    no_overall = generic_ratings(n_images=3)
    no_overall = no_overall[
        ~((no_overall.image_id == "img01") & (no_overall.attribute == "aesthetic"))
    ]
    message = _error(write_generic(tmp_path / "b", ratings=no_overall))
    assert "1 image(s) have no rating of the overall attribute 'aesthetic'; first: img01" in message
    assert "not a folder" in _error(tmp_path / "nowhere")


def test_the_worked_example_of_data_readme_loads(tmp_path):
    """The four files of data/README.md's example, written as shown, load as described."""
    text = (project_root() / "data" / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Any rated image dataset") : text.index("### Releases read")]
    blocks = re.findall(r"```\w*\n(.*?)```", section, re.S)
    names = ["dataset.yaml", "images.csv", "ratings.csv", "summary.csv"]
    for name, block in zip(names, blocks, strict=True):
        (tmp_path / name).write_text(block, encoding="utf-8")
    touch_images(tmp_path / "images", ["2024/p001.jpg", "2024/p002.jpg", "2025/p003.jpg"])
    ds = load_ratings(tmp_path)
    assert ds.name == "street-photos" and len(ds) == 3
    assert ds.images["mean_score"].tolist() == [6.5, 4.0, 8.5]
    assert ds.images["composition"].tolist() == pytest.approx([6 - 2.4, 6 - 3.1, 6 - 1.8])
    assert ds.images.loc[0, "mood"] == pytest.approx((12 * 5 + 30 * 6) / 42)
    assert ds.votes["attribute"].eq("mood").all() and ds.summary["n"].tolist() == [25, 24, 25]
