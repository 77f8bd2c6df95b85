"""The rubric is data: prompts, answer format, parsing, store keys and calls follow from it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_scoring_cli import images_table, jp_inline, write_eva, write_runs_file

from judgepanel.core.calls import AnswerError
from judgepanel.core.config import ScoringDesign, load_config
from judgepanel.core.frames import read_calls
from judgepanel.core.parsing import parse_score
from judgepanel.core.prompts import DIMENSIONS, sha256sums_text
from judgepanel.core.rubric import RubricError, Scale, load_rubric
from judgepanel.core.settings import ScoreRequest, resolve_settings
from judgepanel.studies.common.rubric_plan import plan_images

ROOT = Path(__file__).resolve().parents[1]

# Computed from the seed rubric before the rubric became data: the bytes sent, and so every
# stored call's key, must not move.
SEED_SHA = "4bddcc76c4cd307f80cf32269e6a84e0032776533255af3598130f289ff41a15"
SEED_SHAM_SHA = "36a934b3f51f69aa09f9191de58947a96c0c7a27106a9eb306ec2b9c96a3a6b8"
SEED_HOLISTIC = "4c0bc11350fd406b23946d7bc6a188ca34d50f5e3a7fc54d0f890f4057e662aa"
SEED_PROMPTS = {
    "quality": (
        "6f11f53684a34d5bd555887d67761d6abc6e712f3e7affbfb75df022f783ecb4",
        "3c36ad409615e027a6d0c724c0b11eda7e5d064c6f9fbd73f8ecb34dbc1451a2",
    ),
    "composition": (
        "2c3afcb8d9f8a03eb848b23a62eda13052e246bd48e69b3b9685c477c1153ecf",
        "09ab3cbd7e06b69317dc7357a07e500c1ec96af238a68828492a643670181b0b",
    ),
    "colour": (
        "0446e46379d22838e573714ab9244e926b089860aed58f92399651a82223f07b",
        "8142022fb62db6efbfbb3b0aa689986bd483e845540990d3bf6f25eb21fee8fc",
    ),
    "distinctiveness": (
        "bb3d4ef87740dcf0084b8b1495c82c990f75d8c106eb2db478f1ad7ddd91d135",
        "c3004b56fe1dd63d882052bc95136851e84710f3e00d3e4e96e2777c56b9bdf7",
    ),
    "emotion": (
        "e6e8503ecd32a5faae103a199ef4f4af59366abce380b2fbc7bc75d0eb5577b0",
        "14fa641e7175094de1a894517b3a185651e61e2bb27fd62e90529836aa20d290",
    ),
}

MIXED = textwrap.dedent(
    """\
    name: dermoscopy
    dimensions:
      asymmetry:
        title: Asymmetry
        asks: how asymmetric the lesion is in shape and colour
        role: You are a dermatologist.
        scale: {min: 0, max: 2}
        tiers:
          "2": [Asymmetric along both axes.]
          "1": [Asymmetric along one axis.]
          "0": [Symmetric.]
      border:
        title: Border
        asks: how irregular the border is
        scale: {min: 1, max: 5}
      network:
        title: Pigment network
        asks: what pigment network the lesion shows
        levels: [absent, atypical, typical]
      veil:
        title: Blue-white veil
        asks: whether a blue-white veil is present
        scale:
          levels: {absent: 0, present: 1}
    """
)


def write(tmp: Path, text: str, name: str = "rubric.yaml") -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def user_text(messages: list[dict]) -> str:
    return messages[-1]["content"][0]["text"]


# -- the seed rubric, unchanged ------------------------------------------------------------


def test_seed_rubric_hashes_and_prompts_unchanged() -> None:
    rubric = load_rubric(ROOT / "rubric")
    assert rubric.sha256 == SEED_SHA and rubric.sham_sha256 == SEED_SHAM_SHA
    assert rubric.prompt_hash("holistic") == SEED_HOLISTIC
    assert tuple(rubric.dimensions) == DIMENSIONS
    for dim, (real, sham) in SEED_PROMPTS.items():
        assert rubric.prompt_hash("dimension", dim) == real
        assert rubric.prompt_hash("sham", dim) == sham
        assert rubric.dimensions[dim].scale == Scale(1, 10)
        assert rubric.parser("dimension", dim) is parse_score
    assert rubric.parser("holistic") is parse_score
    assert sha256sums_text(ROOT / "rubric") == (ROOT / "rubric" / "SHA256SUMS").read_text()
    assert load_rubric() is rubric  # the project's rubric/ folder by default


# -- a single-file rubric ------------------------------------------------------------------


def test_mixed_scales_build_the_contracted_prompts(tmp_path: Path) -> None:
    rubric = load_rubric(write(tmp_path, MIXED))
    assert rubric.name == "dermoscopy" and rubric.holistic is None and rubric.sham is None
    assert rubric.sha256 == __import__("hashlib").sha256(MIXED.encode()).hexdigest()
    assert rubric.call_types() == ("dimension",)
    asym = rubric.messages("dimension", "asymmetry", "<image>")
    assert asym[0]["content"] == (
        "You are a dermatologist. You score one image on a single dimension of a rubric and "
        "always answer in JSON."
    )
    assert user_text(asym) == (
        "Rubric dimension: Asymmetry (how asymmetric the lesion is in shape and colour).\n"
        "Score tiers, each with the criteria an image at that tier shows:\n"
        "2: Asymmetric along both axes.\n1: Asymmetric along one axis.\n0: Symmetric.\n"
        "Score the image below on Asymmetry only, with an integer from 0 to 2.\n"
        'Reply with JSON only, exactly in the form {"score": <integer 0-2>, '
        '"reason": "<one sentence>"}.'
    )
    border = rubric.messages("dimension", "border", "<image>")
    assert border[0]["content"].startswith("You are an expert image rater. ")
    assert user_text(border) == (
        "Rubric dimension: Border (how irregular the border is).\n"
        "Score the image below on Border only, with an integer from 1 to 5.\n"
        'Reply with JSON only, exactly in the form {"score": <integer 1-5>, '
        '"reason": "<one sentence>"}.'
    )
    assert user_text(rubric.messages("dimension", "network", "<image>")) == (
        "Rubric dimension: Pigment network (what pigment network the lesion shows).\n"
        "Score the image below on Pigment network only, with one of the levels: absent, "
        "atypical, typical.\n"
        'Reply with JSON only, exactly in the form {"score": "<level>", '
        '"reason": "<one sentence>"}.'
    )
    assert rubric.dimensions["network"].scale.levels == (
        ("absent", 0), ("atypical", 1), ("typical", 2)
    )  # fmt: skip
    assert rubric.dimensions["veil"].scale == Scale(0, 1, (("absent", 0), ("present", 1)))


def test_default_holistic_question(tmp_path: Path) -> None:
    text = MIXED + "holistic:\n  scale: {min: 1, max: 7}\n"
    rubric = load_rubric(write(tmp_path, text))
    assert rubric.holistic_text == (
        "Rate the overall quality of this image.\nUse an integer scale from 1 to 7.\n"
        'Reply with JSON only, exactly in the form {"score": <integer 1-7>, '
        '"reason": "<one sentence>"}.\nDo not add any other text.'
    )
    assert rubric.call_types() == ("holistic", "dimension")
    parse = rubric.parser("holistic")
    assert parse('{"score": 7}')["score"] == 7
    with pytest.raises(AnswerError, match="outside"):
        parse('{"score": 8}')
    custom = load_rubric(write(tmp_path, MIXED + 'holistic:\n  text: "Rate it."\n', "c.yaml"))
    assert custom.holistic_text == "Rate it." and custom.holistic.scale == Scale(1, 10)


def test_answers_are_checked_against_each_scale(tmp_path: Path) -> None:
    rubric = load_rubric(write(tmp_path, MIXED))
    asym = rubric.parser("dimension", "asymmetry")
    assert asym('{"score": 0, "reason": "r"}')["score"] == 0
    assert asym('```json\n{"score": 2}\n```')["score"] == 2
    for bad in ('{"score": 3}', '{"score": -1}', '{"score": "typical"}'):
        with pytest.raises(AnswerError):
            asym(bad)
    network = rubric.parser("dimension", "network")
    assert network('{"score": "atypical", "reason": "r"}') == {
        "score": 1, "level": "atypical", "reason": "r"
    }  # fmt: skip
    assert network('{"score": " Typical "}')["score"] == 2
    assert network('{"score": 0}')["level"] == "absent"
    for bad in ('{"score": "present"}', '{"score": 3}', '{"score": 1.5}', "no answer", ""):
        with pytest.raises(AnswerError):
            network(bad)
    assert network('cut off: "score": "typical", "reason": "the net')["truncated"] is True
    veil = rubric.parser("dimension", "veil")
    assert veil('{"score": "present"}')["score"] == 1


def test_no_holistic_question_plans_no_holistic_calls(tmp_path: Path) -> None:
    rubric = load_rubric(write(tmp_path, MIXED))
    images = images_table(tmp_path, 2)
    design = ScoringDesign(holistic_k=3, dimension_r=2, temperature=0.3)
    specs = plan_images(images, {"aurora": "sim-aurora-v1"}, design, dataset="x", rubric=rubric)
    assert len(specs) == 2 * 4 * 2
    assert {(s.key.call_type, s.key.rubric_sha) for s in specs} == {("dimension", rubric.sha256)}
    assert {s.key.dimension for s in specs} == set(rubric.dimensions)
    net = next(s for s in specs if s.key.dimension == "network")
    assert net.parse('{"score": "typical"}')["score"] == 2
    assert net.key.prompt_hash == rubric.prompt_hash("dimension", "network")
    with pytest.raises(ValueError, match="no sham variant"):
        plan_images(images, {"a": "m"}, design, dataset="x", call_types=("sham",), rubric=rubric)


def test_single_file_sham_variant(tmp_path: Path) -> None:
    text = MIXED + "sham: {asymmetry: border, border: network, network: veil, veil: asymmetry}\n"
    rubric = load_rubric(write(tmp_path, text))
    assert rubric.call_types() == ("dimension", "sham")
    assert rubric.sham_sha256 not in ("", rubric.sha256)
    sham = user_text(rubric.messages("sham", "border", "<image>"))
    assert "Rubric dimension: Border" in sham and "Score tiers" not in sham


# -- bad rubric files ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("asks: how irr", "wording: how irr"), r"dimensions\.border: unknown key wording"),
        (("{min: 1, max: 5}", "{min: 5, max: 1}"), r"dimensions\.border\.scale: min 5 is greater"),
        (("[absent, atypical, typical]", "[]"), r"dimensions\.network\.levels: no levels"),
        (("  border:\n", "  asymmetry:\n"), r"line \d+: key 'asymmetry' is given twice"),
        (('"1": [Asym', '"3": [Asym'), r"dimensions\.asymmetry\.tiers\.3: tier band outside"),
        (("{absent: 0, present: 1}", "{absent: 0, present: 0}"), r"level value 0 given twice"),
        (("name: dermoscopy", "nmae: dermoscopy"), r"unknown key nmae"),
    ],
)
def test_errors_name_the_file_and_the_key(tmp_path: Path, change, message) -> None:
    old, new = change
    assert old in MIXED
    path = write(tmp_path, MIXED.replace(old, new, 1))
    with pytest.raises(RubricError, match=message) as info:
        load_rubric(path)
    assert str(path) in str(info.value)


def test_sham_must_be_a_derangement(tmp_path: Path) -> None:
    text = MIXED + "sham: {asymmetry: asymmetry, border: network, network: veil, veil: border}\n"
    path = write(tmp_path, text)
    with pytest.raises(RubricError, match=r"sham: not a derangement: \['asymmetry'\]"):
        load_rubric(path)
    with pytest.raises(RubricError, match="no rubric file"):
        load_rubric(tmp_path / "missing.yaml")


# -- the runs file and the command line ------------------------------------------------------


def test_runs_file_names_the_rubric(tmp_path: Path) -> None:
    rubric_file = write(tmp_path, MIXED, "derm.yaml")
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    raw = yaml.safe_load(runs.read_text())
    raw["runs"]["t-eva"]["rubric"] = "derm.yaml"  # relative to the runs file
    runs.write_text(yaml.safe_dump(raw))
    config = load_config(runs)
    assert config.run("t-eva").rubric == rubric_file
    assert config.profile("t").rubric is None
    settings = resolve_settings(ScoreRequest(run="t-eva", config=config))
    assert settings.rubric == rubric_file
    other = write(tmp_path, MIXED + "\n", "other.yaml")
    chosen = resolve_settings(ScoreRequest(run="t-eva", config=config, rubric=other))
    assert chosen.rubric == other  # --rubric wins over the run's


def test_check_loads_each_runs_rubric(tmp_path: Path, capsys) -> None:
    from judgepanel.cli import main

    write(tmp_path, MIXED.replace("{min: 1, max: 5}", "{min: 5, max: 1}"), "derm.yaml")
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    raw = yaml.safe_load(runs.read_text())
    raw["profiles"]["t"]["rubric"] = "derm.yaml"
    runs.write_text(yaml.safe_dump(raw))
    assert main(["check", "--runs-file", str(runs), "--profile", "t"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  rubric derm.yaml" in out and "dimensions.border.scale: min 5" in out
    code = main(["score", "--run", "t-eva", "--runs-file", str(runs), "--dry-run"])
    assert code != 0 and "derm.yaml" in capsys.readouterr().err


@pytest.mark.timeout(240)
def test_score_with_rubric_keys_calls_by_its_hash(sim_server, tmp_path, monkeypatch, capsys):
    rubric_file = write(tmp_path, MIXED, "derm.yaml")
    rubric = load_rubric(rubric_file)
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    code = jp_inline(
        monkeypatch, sim_server.base_url, "score", "--run", "t-eva", "--runs-file", str(runs),
        "--rubric", str(rubric_file), "--no-progress", "--max-reasks", "0",
        "--max-failure-share", "1",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    calls = read_calls(tmp_path / "store.sqlite", "eva")
    # 3 images x 2 families x 4 dimensions x R=1, no holistic question
    assert len(calls) == 24
    assert set(calls["rubric_sha"]) == {rubric.sha256}
    assert set(calls["kind"]) == {"dimension"}
    assert set(calls["dimension"]) == set(rubric.dimensions)
    for dim, sub in calls.groupby("dimension"):
        expected = rubric.prompt_hash("dimension", str(dim))
        assert set(sub["prompt_hash"]) == {expected}
        ok = sub[sub["status"] == "ok"]
        scale = rubric.dimensions[str(dim)].scale
        assert ok["value"].between(scale.min, scale.max).all()
        assert sub.loc[sub["status"] != "ok", "value"].isna().all()


NOTEBOOK_RUBRIC = textwrap.dedent(
    """\
    dimensions:
      sharpness: {title: Sharpness, asks: how sharp the subject is}
      balance: {title: Balance, asks: how balanced the frame is, scale: {min: 1, max: 5}}
      mood:
        title: Mood
        asks: what mood the image carries
        levels: {bleak: 1, cold: 2, calm: 3, mild: 4, warm: 5, bright: 6, lively: 7, joyful: 8}
    """
)
"""A rubric whose every dimension the simulated judges can answer within its scale (the
simulator answers integers), so that every image has every feature."""


@pytest.mark.timeout(300)
def test_scoring_notebook_follows_the_rubric(sim_server, tmp_path, monkeypatch, capsys):
    """Notebooks 00 and 01 on a rubric without a holistic question and with named levels:
    they run, 00's tables hold the rubric's dimensions, and 01 (whose cells compare each
    dimension prompt with the holistic one) says it has nothing to test (``report --rubric``)."""
    from judgepanel.cli import main

    rubric_file = write(tmp_path, NOTEBOOK_RUBRIC, "nb.yaml")
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    raw = yaml.safe_load(runs.read_text())
    raw["runs"]["t-eva"]["notebooks"] = ["00_scoring", "01_mtmm_validity"]
    runs.write_text(yaml.safe_dump(raw))
    code = jp_inline(
        monkeypatch, sim_server.base_url, "score", "--run", "t-eva", "--runs-file", str(runs),
        "--rubric", str(rubric_file), "--no-progress", "--max-failure-share", "1",
    )  # fmt: skip
    assert code == 0
    out = tmp_path / "out"
    code = main(
        ["report", "--profile", "t", "--runs-file", str(runs), "--rubric", str(rubric_file),
         "--only", "00,01", "--tables-only", "--outputs", str(out), "--jobs", "1",
         "-p", "savings_images=0"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr()
    tables = out / "t-eva" / "tables"
    dist = pd.read_csv(tables / "score_distribution.csv")
    assert set(dist["prompt"]) <= set(load_rubric(rubric_file).dimensions)
    cov = pd.read_csv(tables / "coverage.csv")
    assert set(cov["kind"]) == {"dimension"} and cov["planned"].sum() == 3 * 2 * 3
    assert "holistic" not in set(pd.read_csv(tables / "repetition_agreement.csv")["prompt"])
    assert not (tables / "table5_mtmm_cells.csv").exists()
    executed = (out / "t-eva" / "01_mtmm_validity.ipynb").read_text(encoding="utf-8")
    assert "asks no holistic question" in executed


def test_custom_templates_and_a_folder_without_sham(tmp_path: Path) -> None:
    text = MIXED + textwrap.dedent(
        """\
        prompts:
          dimension_system: "{role} Answer in JSON."
          dimension_user: "{title}: {asks}. Scale {scale_min}-{scale_max}; {scale_text}."
        """
    )
    rubric = load_rubric(write(tmp_path, text))
    msgs = rubric.messages("dimension", "border", "<image>")
    assert msgs[0]["content"] == "You are an expert image rater. Answer in JSON."
    assert user_text(msgs) == (
        "Border: how irregular the border is. Scale 1-5; with an integer from 1 to 5."
    )
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "rubric.yaml").write_bytes((ROOT / "rubric" / "rubric.yaml").read_bytes())
    (folder / "prompts.yaml").write_bytes((ROOT / "rubric" / "prompts.yaml").read_bytes())
    copy = load_rubric(folder)
    assert copy.sha256 == SEED_SHA and copy.sham is None and copy.sham_sha256 == ""
    assert copy.prompt_hash("dimension", "quality") == SEED_PROMPTS["quality"][0]


def test_logprob_calls_read_each_dimensions_scale(tmp_path: Path) -> None:
    from judgepanel.core.score_logprobs import LogprobScoring

    rubric = load_rubric(write(tmp_path, MIXED))
    images = images_table(tmp_path, 1)
    design = ScoringDesign(holistic_k=0, dimension_r=3, temperature=0.3)
    with pytest.raises(ValueError, match="named levels"):
        plan_images(
            images, {"a": "m"}, design, dataset="x", rubric=rubric, logprob=LogprobScoring()
        )
    ints = load_rubric(write(tmp_path, MIXED.split("  network:")[0], "ints.yaml"))
    specs = plan_images(
        images, {"a": "m"}, design, dataset="x", rubric=ints, logprob=LogprobScoring()
    )
    readers = {s.key.dimension: s.parse_choice for s in specs}
    assert len(specs) == 2 and {s.key.call_type for s in specs} == {"dimension_logprob"}
    assert (readers["asymmetry"].lo, readers["asymmetry"].hi) == (0, 2)
    assert (readers["border"].lo, readers["border"].hi) == (1, 5)
