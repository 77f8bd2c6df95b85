"""Each notebook declares what it needs of a study, and a study lacking it is told why.

The declarations live in the notebooks' own metadata; these tests read them as a report
does (`judgepanel.core.needs`) on the seed study and on a study with its own rubric and
no overall rating (the posters world).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scoring_cli import write_eva

from judgepanel.core.needs import NEEDS, Study, declared_needs, unmet
from judgepanel.core.paths import NOTEBOOK_DIR, project_root
from judgepanel.core.rubric import load_rubric
from judgepanel.datasets import load_dataset
from judgepanel_sim.world.posters import write_posters

NOTEBOOKS = sorted(p.stem for p in (project_root() / NOTEBOOK_DIR).glob("[0-9]*.ipynb"))
ROOT = project_root()


@pytest.fixture(scope="module")
def seed_study(tmp_path_factory) -> Study:
    eva = write_eva(tmp_path_factory.mktemp("eva"))
    return Study("eva", load_dataset("eva", str(eva)), load_rubric(ROOT / "rubric"))


@pytest.fixture(scope="module")
def posters_study(tmp_path_factory) -> Study:
    folder = write_posters(tmp_path_factory.mktemp("posters"), n_images=12, seed=5)
    rubric = load_rubric(ROOT / "rubric" / "posters.yaml")
    return Study("ratings", load_dataset("ratings", str(folder)), rubric)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_declares_known_needs(name: str) -> None:
    needs = declared_needs(name)
    assert needs, f"{name} declares no needs in its metadata"
    assert set(needs) <= set(NEEDS)


def test_the_seed_study_meets_the_aesthetic_notebooks(seed_study: Study) -> None:
    for name in ("00_scoring", "01_mtmm_validity", "02_input_ablation", "03_trio_sweep"):
        assert unmet(declared_needs(name), seed_study) == [], name
    assert unmet(declared_needs("10_agreement"), seed_study) == []
    assert unmet(declared_needs("05_vab"), seed_study) == ["its dataset is not a vab dataset"]


def test_a_study_without_holistic_question_or_overall_rating(posters_study: Study) -> None:
    assert unmet(declared_needs("00_scoring"), posters_study) == []
    assert unmet(declared_needs("01_mtmm_validity"), posters_study) == []
    ablation = unmet(declared_needs("02_input_ablation"), posters_study)
    assert ablation[:2] == ["no overall human rating", "the rubric asks no holistic question"]
    assert "lacks quality, composition, colour, distinctiveness, emotion" in ablation[2]
    # 10 compares every mapped dimension where there is no holistic question to compare
    assert unmet(declared_needs("10_agreement"), posters_study) == []


def test_agreement_needs_a_question_people_rated_too(posters_study: Study) -> None:
    seed_rubric = load_rubric(ROOT / "rubric")
    unrelated = Study("ratings", posters_study.dataset, seed_rubric)
    assert unmet(declared_needs("10_agreement"), unrelated) == [
        "no question of the rubric that people rated too (no overall rating with a holistic "
        "question, and no attribute validating a rubric dimension)"
    ]


def test_an_unknown_need_is_refused(tmp_path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"judgepanel": {"needs": ["a_holistic_mood"]}})
    nbformat.write(nb, tmp_path / "99_x.ipynb")
    with pytest.raises(ValueError, match="unknown needs"):
        declared_needs("99_x", tmp_path)
