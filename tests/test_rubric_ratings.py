"""Human ratings mapped to any rubric: a ``ratings`` attribute may validate any rubric
dimension, the overall rating is optional, and ``data describe --rubric`` shows the mapping
with a noise ceiling per attribute."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from release_files import CARD, generic_ratings, write_generic
from test_rubric_data import MIXED, write

from judgepanel.cli import main
from judgepanel.cli.exit_codes import BAD_INPUT
from judgepanel.core.rubric import load_rubric
from judgepanel.datasets import load_dataset
from judgepanel.studies.agreement import agreement_data


def test_ratings_attribute_may_validate_any_rubric_dimension(tmp_path: Path, capsys) -> None:
    card = yaml.safe_load(yaml.safe_dump(CARD))
    card["attributes"]["sharpness"]["dimension"] = "asymmetry"  # a dimension of MIXED
    card["attributes"]["clutter"]["dimension"] = "texture"  # a dimension MIXED lacks
    root = write_generic(tmp_path / "derm", card=card)
    ds = load_dataset("ratings", str(root))
    assert {"asymmetry", "texture"} <= set(ds.images.columns)
    rubric_file = write(tmp_path, MIXED + "holistic: {scale: {min: 1, max: 10}}\n")
    args = ["data", "describe", "--dataset", f"ratings:{root}", "--rubric", str(rubric_file)]
    assert main([*args, "--json", "--resamples", "20", "--splits", "20"]) == 0
    info = json.loads(capsys.readouterr().out)
    rows = {r["dimension"]: r for r in info["mapping"]}
    assert list(rows) == ["holistic", "asymmetry", "border", "network", "veil"]
    assert rows["holistic"]["attribute"] == "aesthetic" and rows["holistic"]["ceiling"] > 0
    assert rows["asymmetry"]["attribute"] == "sharpness"
    assert rows["asymmetry"]["column"] == "asymmetry"
    assert rows["asymmetry"]["ceiling_method"] == "per_rater_split_half"
    assert (
        rows["border"]["attribute"] is None and "no attribute" in rows["border"]["ceiling_reason"]
    )
    assert info["unmapped"] == [{"attribute": "clutter", "dimension": "texture"}]
    assert info["rubric"]["sha256"] == load_rubric(rubric_file).sha256
    assert main([*args, "--resamples", "20", "--splits", "20"]) == 0
    out = capsys.readouterr().out
    assert "asymmetry            sharpness" in out and "per-rater split-half" in out
    assert "names dimension 'texture', which this rubric does not have" in out
    bad = write(tmp_path, "dimensions: {}\n", "bad.yaml")
    assert main([*args[:-1], str(bad)]) == BAD_INPUT
    assert "bad.yaml" in capsys.readouterr().err


def test_the_holistic_attribute_is_optional(tmp_path: Path, capsys) -> None:
    card = yaml.safe_load(yaml.safe_dump(CARD))
    del card["attributes"]["aesthetic"]
    card["attributes"]["sharpness"]["dimension"] = "asymmetry"
    ratings = generic_ratings()
    ratings = ratings[ratings["attribute"] != "aesthetic"]
    root = write_generic(tmp_path / "derm", card=card, ratings=ratings)
    ds = load_dataset("ratings", str(root))
    assert not ds.has_overall and "mean_score" not in ds.images
    assert ds.images["asymmetry"].notna().all()
    assert (ds.images["n_raters"] == 5).all()
    assert len(ds.sample(4, seed=1)) == 4
    rubric_file = write(tmp_path, MIXED + "holistic: {scale: {min: 1, max: 10}}\n")
    args = ["data", "describe", "--dataset", f"ratings:{root}", "--rubric", str(rubric_file)]
    assert main([*args, "--json", "--resamples", "20", "--splits", "20"]) == 0
    info = json.loads(capsys.readouterr().out)
    rows = {r["dimension"]: r for r in info["mapping"]}
    assert rows["holistic"]["attribute"] is None and info["ceiling"] is None
    assert rows["asymmetry"]["ceiling_method"] == "per_rater_split_half"
    with pytest.raises(ValueError, match="needs an overall rating, and this dataset has none"):
        agreement_data(ds, pd.DataFrame(), "derm")
    two = yaml.safe_load(yaml.safe_dump(CARD))
    two["attributes"]["sharpness"]["dimension"] = "holistic"
    (root / "dataset.yaml").write_text(yaml.safe_dump(two))
    with pytest.raises(Exception, match="at most one attribute may have"):
        load_dataset("ratings", str(root))
