"""``judgepanel agree`` per judge and dimension (issue 44): each rubric dimension against
the attribute the dataset maps to it, on that attribute's range by a named map; the
alt-test pooled over dimensions (each image x dimension one instance); a custom rubric and
a ``ratings`` card; a dataset without an overall rating; a question that cannot be asked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from release_files import CARD, generic_ratings, write_generic
from test_rubric_data import MIXED, write

from judgepanel.claims.rows import Family
from judgepanel.claims.wording import prose_problems
from judgepanel.cli import main
from judgepanel.cli.agree import _answers_calls
from judgepanel.cli.exit_codes import BAD_INPUT
from judgepanel.core.frames import read_calls
from judgepanel.core.rubric import load_rubric
from judgepanel.datasets import load_dataset
from judgepanel.stats import alt_test, judge_agreement
from judgepanel.stats.scale_map import LinearMap
from judgepanel.studies import agreement

FAMILIES = ["aurora", "basalt", "cobalt", "dune", "ember"]
DIMENSIONS = ["quality", "composition", "colour"]
B = 40


def _args(project, kind: str, *extra: str) -> list[str]:
    root = project.root / "synth" / f"synth-{kind}"
    return ["agree", "--dataset", f"{kind}:{root}", "--store", str(project.store),
            "--resamples", str(B), *extra]  # fmt: skip


def _json(argv: list[str], capsys) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


# --- the small scored project: EVA and PARA, the project's rubric -------------------------


def test_every_judge_gets_every_mapped_dimension_with_its_map(small_project, capsys):
    info = _json(_args(small_project, "para", "--json"), capsys)
    assert list(info["questions"]) == ["holistic", *DIMENSIONS] and not info["not_compared"]
    for key in DIMENSIONS:
        q = info["questions"][key]
        assert q["column"] == key and q["scale"] == [1, 5]
        assert q["mapping"] == "linear 1-10 -> 1-5" and q["label"] == f"{key} vs attribute {key}"
        assert {"alpha_interval", "ICC(2,1)"} <= set(q["human_reliability"])
    assert list(info["judges"]) == [*FAMILIES, "panel mean"]
    for name, judge in info["judges"].items():
        assert list(judge["questions"]) == ["holistic", *DIMENSIONS]
        # the holistic entry stays at the judge's top level, as before dimensions
        assert judge["alt_test"] == judge["questions"]["holistic"]["alt_test"]
        for key in DIMENSIONS:
            entry = judge["questions"][key]
            alt = entry["alt_test"]
            assert set(alt) >= {"winning_rate", "advantage_probability", "passed", "epsilon",
                                "metric", "q", "mapping"}  # fmt: skip
            assert alt["mapping"] == "linear 1-10 -> 1-5"
            assert alt["passed"] == (alt["winning_rate"] >= 0.5)
            if name != "panel mean":
                assert entry["repetitions"] == 2 and -1 <= entry["qwk"]["estimate"] <= 1
    assert info["mapping"] == info["questions"]["holistic"]["mapping"]


def test_text_gives_a_block_per_dimension_naming_its_map(small_project, capsys):
    assert main(_args(small_project, "eva", "--min-items", "10")) == 0
    lines = capsys.readouterr().out.splitlines()
    for key in DIMENSIONS:
        at = lines.index(
            f"{key} vs attribute {key} ({key}, 1-4): 40 images; judge scores mapped "
            "linear 1-10 -> 1-4"
        )
        assert lines[at + 1].startswith("  people: alpha_interval")
        block = lines[at + 2 : at + 2 + len(FAMILIES) + 1]
        assert [x.split(":")[0].strip() for x in block] == [*FAMILIES, "panel mean"]
        assert all(x.endswith(("passed", "not passed")) for x in block)
    for line in lines:
        assert "equivalent" not in line and "significant" not in line


def test_question_restricts_and_pooling_is_the_alt_test_of_image_dimension_pairs(
    small_project, capsys
):
    argv = _args(small_project, "para", "--json", "--min-items", "10", "--pool-dimensions",
                 "--dimension", "quality", "--question", "colour")  # fmt: skip
    info = _json(argv, capsys)
    assert list(info["questions"]) == ["quality", "colour"] and "mapping" not in info
    pooled = info["pooled"]
    assert pooled["dimensions"] == ["quality", "colour"]
    assert pooled["mapping"] == (
        "per dimension: quality linear 1-10 -> 1-5; colour linear 1-10 -> 1-5"
    )
    root = small_project.root / "synth" / "synth-para"
    ds = load_dataset("para", str(root))
    stored = read_calls(small_project.store)
    inputs = [
        agreement.agreement_data(ds, stored, "para", question=key) for key in ("quality", "colour")
    ]
    humans = pd.concat([d.humans.assign(dimension=d.question) for d in inputs])
    parts = []
    for d in inputs:
        means = d.judge_means()
        own = means[means["rater"] == "basalt"].set_index("image_id")["score"]
        index = pd.MultiIndex.from_arrays(
            [own.index, [d.question] * len(own)], names=["image_id", "dimension"]
        )
        parts.append(pd.Series(d.mapping(own.to_numpy()), index=index))
    direct = alt_test(humans, pd.concat(parts), epsilon=0.1, min_items_per_annotator=10,
                      pool_dimensions=True)  # fmt: skip
    alt = info["judges"]["basalt"]["pooled"]["alt_test"]
    assert alt["winning_rate"] == direct.winning_rate
    assert alt["advantage_probability"] == direct.advantage_probability
    assert alt["n_instances"] == direct.n_instances
    assert (
        alt["n_instances"]
        > info["judges"]["basalt"]["questions"]["quality"]["alt_test"]["n_instances"]
    )
    assert alt["mapping"] == pooled["mapping"]
    assert set(info["judges"]["panel mean"]["pooled"]["alt_test"]) >= {"passed", "q"}


def test_pooling_needs_a_dimension(small_project, capsys):
    argv = _args(small_project, "para", "--pool-dimensions", "--question", "holistic")
    assert main(argv) == BAD_INPUT
    assert "--pool-dimensions pools dimensions" in capsys.readouterr().err


# --- a study of its own: a custom rubric and a ratings card ------------------------------


def _card(*, overall: bool = True, asymmetry_range: list | None = None) -> dict:
    card = yaml.safe_load(yaml.safe_dump(CARD))
    card["attributes"]["sharpness"]["dimension"] = "asymmetry"  # rubric 0-2, people 1-5
    card["attributes"]["clutter"]["dimension"] = "border"  # higher is worse: turned round
    if asymmetry_range is not None:
        card["attributes"]["sharpness"]["range"] = asymmetry_range
    if not overall:
        del card["attributes"]["aesthetic"]
    return card


def _answers(ds, path: Path, seed: int = 3) -> Path:
    """Two judges answer both mapped dimensions twice, near the people's means."""
    rng = np.random.default_rng(seed)
    rows = []
    for judge, noise in (("lynx", 0.3), ("otter", 0.8)):
        for sample in (0, 1):
            for img in ds.images.itertuples():
                sym = (img.asymmetry - 1) / 2  # people's 1-5 onto the rubric's 0-2
                sym_score = int(np.clip(round(sym + rng.normal(0, noise)), 0, 2))
                border = int(np.clip(round(img.border + rng.normal(0, noise)), 1, 5))
                rows.append((img.image_id, judge, "asymmetry", sample, sym_score))
                rows.append((img.image_id, judge, "border", sample, border))
    frame = pd.DataFrame(rows, columns=["image_id", "judge", "dimension", "sample", "score"])
    frame.to_csv(path, index=False)
    return path


@pytest.fixture()
def study(tmp_path: Path):
    def make(*, overall: bool = True, holistic: bool = False, asymmetry_range=None):
        ratings = generic_ratings()
        if not overall:
            ratings = ratings[ratings["attribute"] != "aesthetic"]
        root = write_generic(
            tmp_path / "derm",
            card=_card(overall=overall, asymmetry_range=asymmetry_range),
            ratings=ratings,
        )
        ds = load_dataset("ratings", str(root))
        text = MIXED + ("holistic: {scale: {min: 1, max: 10}}\n" if holistic else "")
        rubric = write(tmp_path, text)
        answers = _answers(ds, tmp_path / "answers.csv")
        argv = ["agree", "--dataset", f"ratings:{root}", "--answers", str(answers),
                "--rubric", str(rubric), "--resamples", str(B), "--min-items", "3"]  # fmt: skip
        return ds, rubric, argv

    return make


def test_a_custom_rubric_agrees_per_dimension_on_the_cards_attributes(study, capsys):
    ds, rubric_file, argv = study()
    rubric = load_rubric(rubric_file)
    # the dataset has an overall rating but this rubric asks no holistic question
    assert [q.key for q in agreement.questions(ds, rubric)] == ["asymmetry", "border"]
    info = _json([*argv, "--json", "--pool-dimensions"], capsys)
    assert info["rubric"] == "dermoscopy" and list(info["questions"]) == ["asymmetry", "border"]
    sym = info["questions"]["asymmetry"]
    assert (sym["attribute"], sym["column"], sym["scale"]) == ("sharpness", "asymmetry", [1, 5])
    assert sym["mapping"] == "linear 0-2 -> 1-5"
    assert info["questions"]["border"]["mapping"] == "linear 1-5 -> 1-5"
    assert list(info["judges"]) == ["lynx", "otter", "panel mean"]
    assert info["pooled"]["dimensions"] == ["asymmetry", "border"]
    # the numbers are the stats module's on the attribute's ratings, after the named map
    humans = ds.ratings[["image_id", "rater_id", "asymmetry"]].rename(
        columns={"rater_id": "rater", "asymmetry": "score"}
    )
    answers = pd.read_csv(argv[argv.index("--answers") + 1])
    own = answers[(answers["judge"] == "lynx") & (answers["dimension"] == "asymmetry")]
    own = own.groupby("image_id", as_index=False)["score"].mean()
    direct = judge_agreement(own, humans, scale=(1, 5), mapping=LinearMap((0, 2), (1, 5)),
                             n_resamples=B, seed=0).set_index("metric")  # fmt: skip
    entry = info["judges"]["lynx"]["questions"]["asymmetry"]
    assert entry["qwk"]["estimate"] == pytest.approx(direct.loc["qwk", "estimate"])
    assert entry["bias"]["estimate"] == pytest.approx(direct.loc["bias", "estimate"])
    assert entry["repetitions"] == 2
    pooled = info["judges"]["lynx"]["pooled"]["alt_test"]
    assert (
        pooled["mapping"] == "per dimension: asymmetry linear 0-2 -> 1-5; border linear 1-5 -> 1-5"
    )
    assert main([*argv, "--pool-dimensions"]) == 0
    out = capsys.readouterr().out
    assert "asymmetry vs attribute sharpness (asymmetry, 1-5): 8 images; judge scores mapped " \
        "linear 0-2 -> 1-5" in out  # fmt: skip
    assert out.splitlines()[-4].startswith("pooled over asymmetry, border (each image x dimension")


def test_without_an_overall_rating_every_dimension_is_still_compared(study, capsys):
    ds, rubric_file, argv = study(overall=False, holistic=True)
    assert not ds.has_overall
    info = _json([*argv, "--json"], capsys)
    assert list(info["questions"]) == ["asymmetry", "border"] and "mapping" not in info
    assert "qwk" not in info["judges"]["lynx"]  # no holistic entry at the top
    assert main([*argv, "--question", "holistic"]) == BAD_INPUT
    assert "needs an overall rating, and this dataset has none" in capsys.readouterr().err
    inputs = agreement.study_inputs(
        ds, _calls_of(argv, ds, rubric_file), ds.name, rubric=load_rubric(rubric_file)
    )
    assert inputs.holistic is None and "has no overall rating" in inputs.no_holistic
    assert list(inputs.dimensions) == ["asymmetry", "border"] and not inputs.skipped


def _calls_of(argv: list[str], ds, rubric_file: Path) -> pd.DataFrame:
    calls, _ = _answers_calls(Path(argv[argv.index("--answers") + 1]), ds, load_rubric(rubric_file))
    return calls


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("texture", "'texture' is neither 'holistic' nor a dimension of the rubric dermoscopy"),
        ("network", "no rated attribute validates the rubric dimension 'network'"),
    ],
)
def test_a_question_the_study_cannot_ask_is_one_line(study, capsys, question, message):
    _, _, argv = study()
    assert main([*argv, "--question", question]) == BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


def test_a_range_off_the_integer_grid_is_said_not_compared(study, capsys):
    _, _, argv = study(asymmetry_range=[0.5, 5.5])
    info = _json([*argv, "--json"], capsys)
    assert list(info["questions"]) == ["border"]
    assert "runs 0.5-5.5, not between two integers" in info["not_compared"]["asymmetry"]
    assert main([*argv, "--dimension", "asymmetry"]) == BAD_INPUT
    assert "not between two integers" in capsys.readouterr().err


# --- the ledger's claims of several questions on one page --------------------------------


def test_claims_of_a_dimension_keep_apart_from_the_holistic_ones(study):
    ds, rubric_file, argv = study()
    rubric = load_rubric(rubric_file)
    inputs = agreement.study_inputs(ds, _calls_of(argv, ds, rubric_file), ds.name, rubric=rubric)
    fam = Family("dims", "every judge and dimension", method="fdr_by")
    ids = set()
    for key, data in inputs.dimensions.items():
        results = agreement.alt_tests(data, epsilon=0.2, min_items=3)
        claims = agreement.alt_claims(results, dataset=ds.name, family=fam, question=key)
        assert {c.scope for c in claims} == {key}
        ids |= {c.id for c in claims}
        for c in claims:
            assert c.id.startswith(f"alt-test-{key}-")
            assert not prose_problems(c.words())
    assert len(ids) == 2 * 3  # two dimensions, two judges and the panel mean each
    holistic = agreement.alt_claims(
        agreement.alt_tests(inputs.dimensions["border"], epsilon=0.2, min_items=3),
        dataset=ds.name,
        family=fam,
    )
    assert [c.id for c in holistic] == ["alt-test-lynx", "alt-test-otter", "alt-test-panel_mean"]
    assert {c.scope for c in holistic} == {""}


def test_a_judge_that_never_varies_has_no_repeatability_to_measure():
    """A family answering one value to every image and repetition (a dimension it scores
    only one way) gets a note, not an error; the others are measured as before."""
    rng = np.random.default_rng(0)
    images = [f"img{i}" for i in range(12)]
    reps = pd.DataFrame(
        [(img, fam, r, 1.0 if fam == "flat" else float(rng.integers(0, 3)))
         for fam in ("flat", "lively") for r in range(2) for img in images],
        columns=["image_id", "family", "repetition", "score"],
    )  # fmt: skip
    means = pd.DataFrame({"image_id": images, "rater": "human mean", "score": 1.0})
    data = agreement.AgreementData(
        dataset="tiny", humans=None, means=means, repetitions=reps, scale=(0, 2),
        mapping=LinearMap((0, 2), (0, 2)), cost=pd.DataFrame(), question="symmetry",
        column="symmetry",
    )  # fmt: skip
    table = agreement.repeatability(data, n_resamples=B).set_index("family")
    assert "nothing varies" in table.loc["flat", "note"] and np.isnan(table.loc["flat", "alpha"])
    assert np.isfinite(table.loc["lively", "alpha"]) and table.loc["lively", "k"] == 2
