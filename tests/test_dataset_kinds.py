"""A dataset kind is one registration: a toy kind registered in one call is known to the
runs file, `load_dataset`, ``--dataset KIND:PATH`` and ``data describe``, and forgetting it
leaves the registry as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from judgepanel.cli import main
from judgepanel.core.config import DatasetRef, ScoringDesign, dataset_model, load_config
from judgepanel.core.errors import ConfigError
from judgepanel.core.paths import project_root
from judgepanel.core.settings import ScoreRequest, resolve_settings
from judgepanel.datasets import Dataset, DatasetError, load_dataset
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute
from judgepanel.datasets.kinds import (
    DatasetKind,
    Key,
    all_kinds,
    kind_names,
    rated_kinds,
    register_kind,
    unregister_kind,
)

RUNS = (project_root() / "papermill_runs.yaml").read_text(encoding="utf-8")
ANCHOR = "      vab: {kind: vab,"
"""A line of the demo profile's datasets; the toy entries go before it."""


def load_toy(root: str | Path, scores: str = "scores.csv") -> Dataset:
    """A toy format: ``images/<image_id>.jpg`` and a table of ``image_id, rater_id,
    score`` (1 to 5), named by the ``scores`` key."""
    root = Path(root).resolve()
    table = root / scores
    if not table.is_file():
        raise DatasetError(f"{table}: the scores table is missing")
    long = pd.read_csv(table, dtype={"image_id": str, "rater_id": str})
    ids = list(dict.fromkeys(long["image_id"]))
    images = pd.DataFrame({"image_id": ids, "path": [str(root / f"images/{i}.jpg") for i in ids]})
    ratings = long.rename(columns={"score": "value"}).assign(attribute="score")
    overall = Attribute("score", "score", 1, 5, dimension=HOLISTIC)
    return assemble("toy", root, images, [overall], table, ratings=ratings)


TOY = DatasetKind(
    "toy",
    load_toy,
    "rated_images",
    summary="Toy: ``scores.csv`` and ``images/``.",
    keys={"scores": Key(str, "scores.csv", doc="the scores table under root")},
    design={"holistic_k": 2, "dimension_r": 1, "temperature": 0.5},
)


@pytest.fixture
def toy() -> Iterator[DatasetKind]:
    """The toy kind, registered for one test and forgotten after it."""
    before = all_kinds()
    register_kind(TOY)
    yield TOY
    unregister_kind("toy")
    assert all_kinds() == before


@pytest.fixture
def toy_folder(tmp_path: Path) -> Path:
    """Four images, three raters each."""
    root = tmp_path / "data" / "toy"
    (root / "images").mkdir(parents=True)
    rows = []
    for i in range(4):
        (root / "images" / f"im{i}.jpg").write_bytes(b"not read")
        rows += [(f"im{i}", f"r{r}", 1 + (i + r) % 5) for r in range(3)]
    pd.DataFrame(rows, columns=["image_id", "rater_id", "score"]).to_csv(
        root / "scores.csv", index=False
    )
    return root


def _runs_file(tmp_path: Path, *lines: str) -> Path:
    """The project's runs file with ``lines`` added to the demo profile's datasets."""
    entry = "".join(f"      {line}\n" for line in lines)
    path = tmp_path / "papermill_runs.yaml"
    path.write_text(RUNS.replace(ANCHOR, entry + ANCHOR, 1), encoding="utf-8")
    return path


def test_a_runs_file_naming_the_kind_validates(toy, tmp_path):
    path = _runs_file(
        tmp_path,
        "toy: {kind: toy, root: data/toy}",
        "toy2: {kind: toy, root: data/toy, scores: other.csv}",
    )
    config = load_config(path)
    demo = config.profile("demo")
    root = tmp_path / "data" / "toy"
    assert demo.dataset("toy") == DatasetRef(
        "toy", "toy", root, options=(("scores", "scores.csv"),)
    )
    assert demo.dataset("toy2").options == (("scores", "other.csv"),)
    assert config.design("toy") == ScoringDesign(holistic_k=2, dimension_r=1, temperature=0.5)
    assert config.design("eva") == load_config().design("eva")  # the file's own, unchanged


def test_an_unknown_key_of_the_kind_lists_its_keys(toy, tmp_path):
    path = _runs_file(tmp_path, "x: {kind: toy, root: data/x, scroes: s.csv}")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert (
        "profiles.demo.datasets.x.scroes: unknown key 'scroes'; "
        "the keys of kind 'toy' are: kind, root, scores"
    ) in str(info.value)


def test_the_kind_is_listed_wherever_kinds_are(toy):
    assert kind_names()[-1] == "toy" and "toy" in rated_kinds()
    model = dataset_model(toy)
    assert model.__name__ == "ToyDataset" and model.__doc__ == TOY.summary


def test_load_dataset_reads_it(toy, toy_folder):
    ds = load_dataset("toy", str(toy_folder))
    assert len(ds) == 4 and ds.name == "toy"
    assert ds.ratings.shape[0] == 12
    means = ds.images.set_index("image_id")["mean_score"]
    assert means["im0"] == pytest.approx((1 + 2 + 3) / 3)


def test_dataset_kind_path_resolves(toy, toy_folder, tmp_path):
    runs = _runs_file(tmp_path)
    request = ScoreRequest(
        runs_file=runs,
        dataset=f"toy:{toy_folder}",
        families=("aurora",),
        models=("sim-aurora-v1",),
        store=tmp_path / "calls.sqlite",
    )
    resolved = resolve_settings(request)
    assert resolved.targets == (DatasetRef("toy", "toy", toy_folder),)
    assert resolved.designs["toy"] == ScoringDesign(2, 1, 0.5)


def test_data_describe_reads_it(toy, toy_folder, capsys):
    assert main(["data", "describe", "--dataset", f"toy:{toy_folder}", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["kind"], info["n_images"]) == ("toy", 4)


def test_forgotten_it_is_unknown_again(tmp_path, toy_folder):
    register_kind(TOY)
    unregister_kind("toy")
    assert "toy" not in kind_names() and "toy" not in rated_kinds()
    with pytest.raises(ConfigError, match="unknown dataset kind 'toy'; known kinds: eva, "):
        load_config(_runs_file(tmp_path, "x: {kind: toy, root: data/x}"))
    with pytest.raises(DatasetError, match="has no per-image human ratings"):
        load_dataset("toy", str(toy_folder))
    request = ScoreRequest(dataset=f"toy:{toy_folder}", families=("a",), models=("m",))
    with pytest.raises(ConfigError, match="--dataset kind 'toy': expected one of eva, "):
        resolve_settings(request)


def test_a_name_is_registered_once():
    eva = all_kinds()[0]
    with pytest.raises(ValueError, match="already registered"):
        register_kind(DatasetKind("eva", load_toy, "rated_images"))
    assert register_kind(eva) is eva  # the same record again is no change
    with pytest.raises(ValueError, match="every kind's"):
        DatasetKind("toy", load_toy, "rated_images", keys={"root": Key(str)})
