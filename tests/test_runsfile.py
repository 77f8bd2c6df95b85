"""The runs file's schema: a typo is an error that names its file, line and key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
import yaml

from judgepanel.core.config import DatasetRef, dataset_model, load_config
from judgepanel.core.errors import ConfigError
from judgepanel.core.paths import project_root
from judgepanel.datasets.kinds import all_kinds, kind_names, rated_kinds

DATASET_KINDS, IMAGE_KINDS = kind_names(), rated_kinds()
RUNS = (project_root() / "papermill_runs.yaml").read_text(encoding="utf-8")


def _broken(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """The project's runs file with the first ``old`` replaced; the line it sits on."""
    assert old in RUNS, old
    text = RUNS.replace(old, new, 1)
    line = text[: text.index(new)].count("\n") + 1
    path = tmp_path / "papermill_runs.yaml"
    path.write_text(text, encoding="utf-8")
    return path, line


def _error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(info.value)


def test_the_project_runs_file_is_valid():
    config = load_config()
    assert "demo-eva" in config.runs and config.run("demo-headroom").datasets == (
        "eva",
        "para",
        "ava",
    )


def test_schema_kinds_are_the_loaders_kinds():
    models = [dataset_model(kind) for kind in all_kinds()]
    assert [get_args(m.model_fields["kind"].annotation)[0] for m in models] == list(DATASET_KINDS)


def _defaults(kind: str, rated: str | None = None) -> tuple[tuple[str, str | None], ...]:
    """The options an entry of ``kind`` resolves to when it names none: a rated kind's
    ``missing_images`` policy, ``error``; a ``pairs`` entry's file and rated source."""
    if kind == "pairs":
        return (("pairs", "pairs.csv"), ("rated", rated), ("missing_images", "error"))
    return (("missing_images", "error"),) if kind in IMAGE_KINDS else ()


def test_the_project_datasets_are_their_entries_resolved():
    """Each dataset of the committed runs file is its entry's kind and root, nothing more
    (a rated kind's ``missing_images`` at its default, a ``pairs`` entry's rated source)."""
    base = project_root()
    expected = {
        (profile, name): DatasetRef(
            name,
            entry["kind"],
            base / entry["root"],
            options=_defaults(entry["kind"], entry.get("rated")),
        )
        for profile, spec in yaml.safe_load(RUNS)["profiles"].items()
        for name, entry in spec["datasets"].items()
    }
    config = load_config()
    loaded = {(p.name, n): ref for p in config.profiles.values() for n, ref in p.datasets.items()}
    assert loaded == expected


KEYS = (
    {kind: "kind, root" for kind in DATASET_KINDS}
    | {kind: "kind, root, missing_images" for kind in IMAGE_KINDS}
    | {"visionq": "kind, root, questions, eligible"}
    | {"pairs": "kind, root, pairs, rated, missing_images"}
)
"""The keys a dataset entry of each kind takes, as an error lists them."""


def _with_dataset(tmp_path: Path, *lines: str) -> tuple[Path, int]:
    """The project's runs file with a dataset ``x`` of ``lines`` in the demo profile; the
    line of its name."""
    entry = "".join(f"      {line}\n" for line in lines)
    return _broken(tmp_path, "      vab: {kind: vab,", entry + "      vab: {kind: vab,")


@pytest.mark.parametrize("kind", DATASET_KINDS)
def test_an_entry_of_each_kind_loads(tmp_path, kind):
    path, _ = _with_dataset(tmp_path, f"x: {{kind: {kind}, root: data/x}}")
    ref = load_config(path).profile("demo").dataset("x")
    assert ref == DatasetRef("x", kind, tmp_path / "data" / "x", options=_defaults(kind))


@pytest.mark.parametrize("kind", DATASET_KINDS)
def test_a_misspelt_dataset_key_names_its_line_and_the_keys_of_its_kind(tmp_path, kind):
    """The key's own line, though the union's error puts the kind into its location; a
    missing ``root`` names the dataset."""
    path, line = _with_dataset(tmp_path, "x:", f"  kind: {kind}", "  rooot: data/x")
    message = _error(path)
    assert (
        f"papermill_runs.yaml:{line + 2}: profiles.demo.datasets.x.rooot: unknown key 'rooot'; "
        f"the keys of kind '{kind}' are: {KEYS[kind]}\n" in message + "\n"
    )
    assert f"papermill_runs.yaml:{line}: profiles.demo.datasets.x: missing key 'root'" in message


@pytest.mark.parametrize("key", ["questions", "eligible"])
@pytest.mark.parametrize("kind", [k for k in DATASET_KINDS if k != "visionq"])
def test_visionq_keys_belong_to_visionq_alone(tmp_path, kind, key):
    path, line = _with_dataset(tmp_path, "x:", f"  kind: {kind}", "  root: data/x", f"  {key}: f")
    assert f":{line + 3}: profiles.demo.datasets.x.{key}: unknown key '{key}'; " in _error(path)


def test_visionq_names_its_question_and_id_files(tmp_path):
    path, _ = _with_dataset(
        tmp_path, "x: {kind: visionq, root: data/x, questions: q.jsonl, eligible: ids.txt}"
    )
    ref = load_config(path).profile("demo").dataset("x")
    assert (ref.questions, ref.eligible) == (tmp_path / "q.jsonl", tmp_path / "ids.txt")


def test_a_misspelt_key_names_its_line_and_the_keys_that_exist(tmp_path):
    path, line = _broken(tmp_path, "    max_cost:", "    max_cots:")
    message = _error(path)
    assert re.search(
        rf"papermill_runs\.yaml:{line}: profiles\.demo\.max_cots: unknown key", message
    )
    assert "max_cost" in message.split("the keys here are:")[1]


def test_an_unknown_dataset_kind_lists_the_known_ones(tmp_path):
    path, line = _broken(tmp_path, "kind: eva,", "kind: evaa,")
    message = _error(path)
    assert f":{line}: profiles.demo.datasets.eva.kind: unknown dataset kind 'evaa'" in message
    known = "eva, para, ratings, ava, aadb, koniq, spaq, lapis, live_wild, cadb, vab, visionq"
    assert f"known kinds: {known}" in message
    path, line = _with_dataset(tmp_path, "x:", "  root: data/x")
    message = _error(path)
    assert f":{line}: profiles.demo.datasets.x: missing key 'kind'; known kinds: {known}" in message


def test_a_wrong_type_and_a_missing_key_name_their_lines(tmp_path):
    path, line = _broken(tmp_path, "holistic_k: 25", "holistic_k: many")
    assert re.search(rf":{line}: scoring\.eva\.holistic_k: .*integer", _error(path))
    path, line = _broken(tmp_path, "dataset: vab\n", "\n")
    assert "runs.demo-vab: give either `dataset` or `datasets`" in _error(path)


def test_runs_naming_what_does_not_exist(tmp_path):
    path, line = _broken(tmp_path, "    dataset: visionq\n", "    dataset: visionqq\n")
    message = _error(path)
    assert (
        f":{line}: runs.demo-visionq.dataset: profile 'demo' has no dataset 'visionqq'" in message
    )
    path, line = _broken(
        tmp_path, "profile: demo\n    dataset: vab", "profile: dem\n    dataset: vab"
    )
    assert f":{line}: runs.demo-vab.profile: unknown profile 'dem'" in _error(path)


def test_every_problem_is_reported_at_once(tmp_path):
    text = RUNS.replace("    max_cost:", "    max_cots:", 1).replace(
        "holistic_k: 25", "holistic_k: x"
    )
    path = tmp_path / "papermill_runs.yaml"
    path.write_text(text, encoding="utf-8")
    assert len(_error(path).splitlines()) == 2


def test_not_yaml_is_a_config_error(tmp_path):
    path = tmp_path / "runs.yaml"
    path.write_text("profiles: [unclosed\n", encoding="utf-8")
    assert "not valid YAML" in _error(path)


def test_a_price_may_name_its_cached_input_price(tmp_path):
    path, _ = _broken(
        tmp_path, "sim-dune-v1: {input: 0.10, cached_input: 0.025,", "sim-dune-v1: {input: 0.10,"
    )
    assert load_config(path).price("sim-dune-v1").cached_input is None  # optional
    assert load_config().price("sim-dune-v1").cached_input == 0.025


def test_a_bad_cached_input_price_names_its_line(tmp_path):
    path, line = _broken(tmp_path, "cached_input: 0.05,", "cached_input: -0.05,")
    assert re.search(
        rf"papermill_runs\.yaml:{line}: prices\.sim-basalt-v1\.cached_input: .*greater than or "
        "equal to 0",
        _error(path),
    )
    path, line = _broken(tmp_path, "cached_input: 0.05,", "cached_input: cheap,")
    assert re.search(rf":{line}: prices\.sim-basalt-v1\.cached_input: .*number", _error(path))
    path, line = _broken(tmp_path, "cached_input: 0.05,", "cache_input: 0.05,")
    message = _error(path)
    assert f":{line}: prices.sim-basalt-v1.cache_input: unknown key" in message
    assert "cached_input" in message.split("the keys here are:")[1]


def test_limits_and_samples_per_request_come_from_the_profile_and_yield_to_flags(tmp_path):
    """A profile's `limits` (by family name or model id) and `samples_per_request`, a run's
    own `samples_per_request`, and the command line's flags above both."""
    from judgepanel.core.settings import ScoreRequest, resolve_settings

    path, _ = _broken(
        tmp_path,
        "    concurrency: 32\n",
        "    concurrency: 32\n    limits:\n      aurora: {rpm: 600, tpm: 90000}\n"
        "      sim-basalt-v1: {rpm: 300}\n    samples_per_request: 4\n",
    )
    send = resolve_settings(ScoreRequest(run="demo-eva", runs_file=path)).send
    assert send.samples_per_request == 4
    assert (send.limits["sim-aurora-v1"].rpm, send.limits["sim-aurora-v1"].tpm) == (600, 90000)
    assert send.limits["sim-basalt-v1"].rpm == 300 and "sim-cobalt-v1" not in send.limits
    flags = resolve_settings(
        ScoreRequest(run="demo-eva", runs_file=path, options={"rpm": 60, "samples_per_request": 2})
    )
    assert flags.send.samples_per_request == 2
    assert {m: lim.rpm for m, lim in flags.send.limits.items()} == {
        m: 60 for m in flags.families.values()
    }
    assert flags.send.limits["sim-aurora-v1"].tpm == 90000  # a flag replaces only what it names
    assert flags.send.source("samples_per_request") == "command line"
    assert send.source("samples_per_request") == "profile 'demo'"


def test_limits_must_name_a_family_or_model(tmp_path):
    path, _ = _broken(
        tmp_path,
        "    concurrency: 32\n",
        "    concurrency: 32\n    limits:\n      zephyr: {rpm: 5}\n",
    )
    assert "`limits` names neither a family nor a model id: ['zephyr']" in _error(path)


def test_a_misspelt_limit_lists_the_keys_of_a_limit(tmp_path):
    path, line = _broken(
        tmp_path,
        "    concurrency: 32\n",
        "    concurrency: 32\n    limits:\n      aurora: {rpmm: 5}\n",
    )
    assert (
        f":{line + 2}: profiles.demo.limits.aurora.rpmm: unknown key 'rpmm'; "
        "the keys here are: rpm, tpm" in _error(path)
    )


def test_a_key_the_code_sets_is_no_key_of_the_file(tmp_path):
    """A run's ``name`` is its key and its ``own_parameters`` its ``parameters``: neither
    may be written."""
    path, line = _broken(tmp_path, "    dataset: visionq\n", "    dataset: visionq\n    name: x\n")
    message = _error(path)
    assert f":{line + 1}: runs.demo-visionq.name: unknown key 'name'; the keys here are:" in message
    assert "own_parameters" not in message.split("the keys here are:")[1]
