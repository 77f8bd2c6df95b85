"""A report of an ad-hoc study: one dataset and one rubric, without editing the runs file.

``judgepanel report --dataset KIND:PATH --rubric PATH [--answers FILE]`` writes a runs file
of its own under the output folder (``study-runs.yaml``): one profile, built from a profile
of the project's runs file (its families, send options and prices), with the one dataset,
a store in the output folder and a scoring design for the dataset's kind; and one run
whose notebooks are those of :data:`CANDIDATES` whose declared needs the study meets
(`judgepanel.core.needs`). Each candidate it leaves out is named with the reasons, so a
study learns what its data lacks rather than meeting a failing cell. With an answers file
the answers are imported into the store first (those of images a study skips as absent
from disk left out, and counted) and the families are the file's judges; nothing is sent
unless the report is asked to score. A note says, before any notebook runs, where a
rubric scale is the default or differs from the data (:mod:`judgepanel.core.scales`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from judgepanel.core.answers_file import (
    HOLISTIC,
    answer_ranges,
    read_answers,
    read_table,
    write_answers,
)
from judgepanel.core.config import Config, DatasetRef
from judgepanel.core.needs import Study, declared_needs, load_study, unmet
from judgepanel.core.rubric import Rubric, default_rubric_path, load_rubric
from judgepanel.core.scales import scale_notes
from judgepanel.core.store import ImportedRow
from judgepanel.report.execute import ReportError, _absolute_raw

CANDIDATES: tuple[str, ...] = (
    "00_scoring",
    "01_mtmm_validity",
    "02_input_ablation",
    "03_trio_sweep",
    "10_agreement",
)
"""The notebooks a study of rated images may render, each run only where its needs are met."""
STUDY_PROFILE = "study"
STUDY_RUNS_FILE = "study-runs.yaml"
STUDY_STORE = "study.sqlite"
DEFAULT_DESIGN: dict[str, Any] = {"holistic_k": 5, "dimension_r": 2, "temperature": 0.3}
"""The scoring design of a kind the runs file gives none: a small one, to be scored first."""
IMPORTED_PRICE: dict[str, float] = {"input": 0.0, "output": 0.0}
"""The price of a judge whose answers were imported and not sent from here."""


@dataclass(frozen=True)
class StudyRequest:
    """What ``judgepanel report --dataset`` was asked to do.

    Attributes:
        kind: the dataset's kind (a rated-image kind).
        root: the dataset's folder.
        rubric: the rubric file or folder (``None``: the base profile's, else the project's).
        answers: an answers CSV to import before the notebooks run.
        temperature: the temperature the answers were drawn at (0.0: unknown).
        only: only candidates whose name starts with one of these prefixes.
        outputs: the output folder (``None``: ``outputs/study-<dataset>``).
        profile: the base profile of the runs file.
        score: the report scores the dataset (else the notebooks read the store only).
        missing_images: ``error`` or ``skip`` for images absent from disk
            (``--missing-images``; None: ``error``).
    """

    kind: str
    root: Path
    rubric: Path | None = None
    answers: Path | None = None
    temperature: float = 0.0
    only: tuple[str, ...] = ()
    outputs: Path | None = None
    profile: str = "demo"
    score: bool = False
    missing_images: str | None = None

    @property
    def loader_keys(self) -> dict[str, Any]:
        """The keys the dataset is read with (``missing_images`` where given)."""
        ref = DatasetRef(self.kind, self.kind, self.root)
        return ref.with_missing_images(self.missing_images).loader_keys


@dataclass(frozen=True)
class PreparedStudy:
    """The runs file written for a study, where its report goes, and its one run."""

    runs_file: Path
    outputs: Path
    run: str
    notebooks: tuple[str, ...]


def dataset_key(name: str) -> str:
    """A dataset's name as a key of the runs file and the store (no spaces or slashes)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "study"


def choose_notebooks(
    study: Study, only: tuple[str, ...] = ()
) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The candidates ``study`` meets the needs of, and those it does not with the reasons
    (only candidates that ``only`` selects)."""
    chosen, skipped = [], []
    for name in CANDIDATES:
        if only and not name.startswith(only):
            continue
        reasons = unmet(declared_needs(name), study)
        if reasons:
            skipped.append((name, reasons))
        else:
            chosen.append(name)
    return chosen, skipped


def skip_line(name: str, reasons: list[str]) -> str:
    """The line a report prints for a notebook it skips."""
    return f"skipped {name}: {'; '.join(reasons)}"


@dataclass(frozen=True)
class AnswersDesign:
    """What an answers file says of its own design: who answered, how often, how hot."""

    families: dict[str, str]
    holistic_k: int
    dimension_r: int
    temperature: float


def answers_design(path: Path, temperature: float) -> AnswersDesign:
    """The judges of an (already checked) answers file, each with its model (the file's
    ``model`` column, else the judge's name), and the most answers one judge gave one image
    to the holistic question and to a dimension.

    Raises:
        ReportError: a judge answers under two models (a family is one model).
    """
    table = read_table(path)
    model = table["model"] if "model" in table.columns else table["judge"]
    table["model"] = model.where(model != "", table["judge"])
    families: dict[str, str] = {}
    for judge, models in table.groupby("judge", sort=False)["model"]:
        found = list(dict.fromkeys(models))
        if len(found) > 1:
            raise ReportError(
                f"{path}: judge {judge!r} answers as several models ({', '.join(found)}); "
                "a judge is one model: give each model its own judge name"
            )
        families[str(judge)] = found[0]
    holistic = table["dimension"] == HOLISTIC

    def most(rows: pd.DataFrame, by: list[str]) -> int:
        return int(rows.groupby(by).size().max()) if len(rows) else 0

    return AnswersDesign(
        families=families,
        holistic_k=most(table[holistic], ["judge", "image_id"]),
        dimension_r=most(table[~holistic], ["judge", "image_id", "dimension"]),
        temperature=temperature,
    )


def _design(config: Config, kind: str, rubric: Rubric, answers: AnswersDesign | None) -> dict:
    """The study's scoring design: its answers' when imported, else the runs file's for
    the kind, else :data:`DEFAULT_DESIGN`; no sham calls without a sham variant."""
    if answers is not None:
        return {
            "holistic_k": answers.holistic_k,
            "dimension_r": answers.dimension_r,
            "temperature": answers.temperature,
        }
    base = dict((config.raw.get("scoring") or {}).get(kind) or DEFAULT_DESIGN)
    if not rubric.sham:
        base.pop("sham_r", None)
    return base


def _profile(
    raw: dict[str, Any],
    request: StudyRequest,
    name: str,
    store: Path,
    rubric_path: Path,
    answers: AnswersDesign | None,
) -> dict[str, Any]:
    """The study's profile: the base profile's send options with the study's one dataset,
    its store and, with answers, the answers' judges as its families."""
    profile = dict(raw["profiles"][request.profile])
    profile.pop("rubric", None)  # the run names the study's rubric
    profile["store"] = str(store)
    entry = {"kind": request.kind, "root": str(request.root.resolve()), **request.loader_keys}
    profile["datasets"] = {name: entry}
    what = f"{name} ({request.kind}) under the rubric {rubric_path.name}"
    if answers is None:
        profile["description"] = (
            f"An ad-hoc study of {what}, with profile {request.profile}'s judges."
        )
        return profile
    profile["families"] = dict(answers.families)
    profile.pop("predeclared", None)
    known = {*answers.families, *answers.families.values()}
    limits = {k: v for k, v in (profile.get("limits") or {}).items() if k in known}
    profile["limits"] = limits
    if not limits:
        profile.pop("limits")
    profile["simulated"] = False  # the answers came from elsewhere
    profile["description"] = (
        f"An ad-hoc study of {what}; the judges' answers were imported from "
        f"{request.answers.name if request.answers else 'a file'}."
    )
    return profile


def study_runs(
    config: Config,
    request: StudyRequest,
    *,
    name: str,
    rubric_path: Path,
    rubric: Rubric,
    notebooks: list[str],
    outputs: Path,
    answers: AnswersDesign | None = None,
) -> dict[str, Any]:
    """The runs file of a study, as YAML data (see the module's description)."""
    raw = _absolute_raw(config)
    if request.profile not in (raw.get("profiles") or {}):
        known = ", ".join(raw.get("profiles") or {})
        raise ReportError(f"{config.path}: no profile {request.profile!r}; profiles are: {known}")
    profile = _profile(raw, request, name, outputs / STUDY_STORE, rubric_path, answers)
    prices = dict(raw.get("prices") or {})
    unpriced = [m for m in profile["families"].values() if m not in prices]
    if unpriced and request.score:
        raise ReportError(
            f"{config.path}: no price for model(s) {', '.join(unpriced)}; add them under "
            "`prices:` so that the budget of --score can be enforced"
        )
    prices.update({m: dict(IMPORTED_PRICE) for m in unpriced})
    parameters: dict[str, Any] = {"score": request.score}
    if answers is not None:
        parameters["savings_images"] = 0  # measured on simulated judges only
    run = {
        "profile": STUDY_PROFILE,
        "dataset": name,
        "notebooks": list(notebooks),
        "rubric": str(rubric_path),
        "parameters": parameters,
    }
    return {
        "profiles": {STUDY_PROFILE: profile},
        "scoring": {request.kind: _design(config, request.kind, rubric, answers)},
        "prices": prices,
        "parameters": dict(raw.get("parameters") or {}),
        "runs": {name: run},
    }


def prepare_study(
    config: Config, request: StudyRequest, echo: Callable[[str], None] = print
) -> PreparedStudy:
    """Check the study, say which candidates it skips and why, import its answers, and
    write its runs file; the report then runs that file's one run.

    Raises:
        ReportError: no candidate applies, or a judge of the answers is two models.
        RubricError, DatasetError, AnswersError, StoreError: the rubric, the dataset or
            the answers cannot be read (nothing is written).
    """
    profile = config.profile(request.profile)
    rubric_path = Path(request.rubric or profile.rubric or default_rubric_path()).resolve()
    rubric = load_rubric(rubric_path)
    study = load_study(request.kind, request.root, rubric, **request.loader_keys)
    assert study.dataset is not None
    name = dataset_key(study.dataset.name)
    outputs = Path(request.outputs or Path("outputs") / f"study-{name}").resolve()
    notebooks, skipped = choose_notebooks(study, request.only)
    for notebook, reasons in skipped:
        echo(skip_line(notebook, reasons))
    if not notebooks and not skipped:
        raise ReportError(
            f"--only {','.join(request.only)} matches none of the notebooks a study renders: "
            f"{', '.join(CANDIDATES)}"
        )
    if not notebooks:
        raise ReportError(
            f"no notebook of {', '.join(n for n, _ in skipped)} applies to {name}; each "
            "one skipped says why above"
        )
    answers = None
    observed = None
    rows: list[ImportedRow] = []
    if request.answers is not None:
        skipped = set(study.dataset.skipped)  # absent from disk under --missing-images skip
        labelled = [*study.dataset.images["image_id"].astype(str), *sorted(skipped)]
        read = read_answers(
            request.answers,
            dataset=name,
            images=labelled,
            rubric=rubric,
            temperature=request.temperature,
        )
        rows = [r for r in read if r.key.item not in skipped]
        observed = answer_ranges(rows)
        if len(rows) < len(read):
            left = {r.key.item for r in read} & skipped
            echo(
                f"left out {len(read) - len(rows)} answers of {len(left)} image(s) absent "
                f"from disk (--missing-images skip), of {len(read)} in {request.answers.name}"
            )
    source = request.answers.name if request.answers is not None else ""
    for note in scale_notes(rubric, study.dataset, observed, source):
        echo(f"note: {note}")
    if request.answers is not None:
        outputs.mkdir(parents=True, exist_ok=True)
        outcome = write_answers(rows, request.answers, outputs / STUDY_STORE, dataset=name)
        if outcome.note():
            echo(outcome.note())
        stored = outcome.kept + outcome.unchanged
        again = f"; {stored} already stored" if stored else ""
        echo(f"imported {outcome.written} answers of {name} from {request.answers.name}{again}")
        answers = answers_design(request.answers, request.temperature)
    runs = study_runs(
        config,
        request,
        name=name,
        rubric_path=rubric_path,
        rubric=rubric,
        notebooks=notebooks,
        outputs=outputs,
        answers=answers,
    )
    path = outputs / STUDY_RUNS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(runs, sort_keys=False), encoding="utf-8")
    echo(f"study runs file: {path}; notebooks {', '.join(notebooks)}")
    return PreparedStudy(path, outputs, name, tuple(notebooks))
