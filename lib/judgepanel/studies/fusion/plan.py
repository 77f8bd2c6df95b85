"""The rubric-fusion scoring plan: k holistic calls and R calls per rubric dimension.

Registered as the planner of the single-image dataset kinds (EVA, PARA). The rubric calls
of a table of images are :func:`~judgepanel.studies.common.rubric_plan.plan_images`, which
VAB's score-then-rank plans for its set images too; here they get the dataset's scoring
design, the sham rubric and a run's temperature grid.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgepanel.core.calls import CallSpec
from judgepanel.core.config import DatasetRef, ScoringDesign
from judgepanel.core.frames import scored_dataset
from judgepanel.core.paths import project_root
from judgepanel.core.rubric import load_rubric
from judgepanel.core.score_logprobs import LogprobScoring
from judgepanel.core.scoring import register_planner
from judgepanel.core.settings import ScoreSettings
from judgepanel.datasets import Dataset
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel.studies.fusion.parameters import FusionParameters
from judgepanel.studies.fusion.temperature import load_rule

LOGPROB_PARAMETERS: tuple[str, ...] = ("prompt_mode", "logprobs_mode", "logprob_min_mass")
"""The run parameters that decide a run's logprob calls."""


def logprob_scoring(parameters: Mapping[str, Any]) -> LogprobScoring | None:
    """How a run's logprob calls are read, ``None`` unless its ``prompt_mode`` is
    ``logprob``.

    Raises:
        ValueError: a value ``FusionParameters`` does not accept (so that a misspelt mode
            is not scored as ``sample`` without a word).
    """
    given = {k: parameters[k] for k in LOGPROB_PARAMETERS if parameters.get(k) is not None}
    try:
        chosen = FusionParameters(**given)
    except ValidationError as exc:
        raise ValueError(f"run parameters: {exc.errors()[0]['msg']}: {given}") from None
    if chosen.prompt_mode != "logprob":
        return None
    return LogprobScoring(min_mass=chosen.logprob_min_mass, mode=chosen.logprobs_mode)


def plan_dataset(target: DatasetRef, settings: ScoreSettings) -> list[CallSpec]:
    """Every rubric call of a rated-image dataset: the images its scoring design covers.

    A run whose parameters name a ``temperature_rule`` also gets the rule's grid: its
    family's dimension calls at every temperature of the rule, on the rule's subset. With
    ``prompt_mode: logprob`` each holistic and dimension prompt is asked once, with
    logprobs (the sham rubric and the temperature grid are sampled as always).
    """
    design = settings.designs[target.name]
    rubric = load_rubric(settings.rubric)
    data = scored_dataset(target.kind, target.root, design, **target.loader_keys)
    images = data.images
    if settings.limit_images is not None:
        images = images.head(settings.limit_images)
    specs = plan_images(
        images,
        settings.families,
        design,
        dataset=target.name,
        logprob=logprob_scoring(settings.parameters),
        rubric=rubric,
    )
    if design.sham_r > 0:
        # The sham rubric is scored for the pre-declared families, as the fusion paper does.
        sham_families = {f: m for f, m in settings.families.items() if f in settings.predeclared}
        specs += plan_images(
            images, sham_families, design, dataset=target.name, call_types=("sham",), rubric=rubric
        )
    rule_file = settings.parameters.get("temperature_rule")
    if rule_file:
        # The grid's base temperature repeats calls of the main design: plan each key once.
        planned = {s.key for s in specs}
        grid = plan_temperature_grid(target, settings, data, rule_path(rule_file))
        specs += [s for s in grid if s.key not in planned]
    return specs


def rule_path(path: str | Path) -> Path:
    """A rule file named in a runs file: relative paths are read from the project root."""
    p = Path(path)
    return p if p.is_absolute() else project_root() / p


def plan_temperature_grid(
    target: DatasetRef, settings: ScoreSettings, data: Dataset, path: Path
) -> list[CallSpec]:
    """The dimension calls of a pre-registered temperature rule on one of its datasets."""
    rule = load_rule(path)
    if target.name not in (rule.exploratory, rule.confirmatory):
        return []
    family = rule.family_of(settings.predeclared)
    if family not in settings.families:
        raise ValueError(f"{path}: family {family!r} is not among {list(settings.families)}")
    images = data.sample(rule.n_images, rule.sample_seed).images
    specs: list[CallSpec] = []
    for t in rule.grid():
        grid_design = ScoringDesign(holistic_k=0, dimension_r=rule.dimension_r, temperature=t)
        specs += plan_images(
            images,
            {family: settings.families[family]},
            grid_design,
            dataset=target.name,
            rubric=load_rubric(settings.rubric),
        )
    return specs


KINDS: tuple[str, ...] = rated_kinds()
for _kind in KINDS:
    register_planner(
        _kind,
        plan_dataset,
        parameters=("temperature_rule", *LOGPROB_PARAMETERS),
        model=FusionParameters,
    )
