"""The rubric-fusion scoring plan: k holistic calls and R calls per rubric dimension.

Registered as the planner of the single-image dataset kinds (EVA, PARA); VAB's
score-then-rank reuses :func:`plan_images` for its set images.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from judgepanel.core.calls import CallSpec, PromptSpec, make_spec
from judgepanel.core.client import cached_data_url
from judgepanel.core.config import DatasetRef, ScoringDesign
from judgepanel.core.frames import scored_dataset
from judgepanel.core.parsing import parse_score
from judgepanel.core.paths import project_root
from judgepanel.core.prompts import DIMENSIONS, Rubric, bytes_data_url, load_rubric
from judgepanel.core.score_logprobs import TOP_LOGPROBS, LogprobScoring
from judgepanel.core.scoring import register_planner
from judgepanel.core.settings import IMAGE_KINDS, ScoreSettings
from judgepanel.datasets import Dataset
from judgepanel.datasets.vab import image_mime
from judgepanel.studies.fusion.parameters import FusionParameters
from judgepanel.studies.fusion.temperature import load_rule

SCORE_MAX_TOKENS = 200
"""Completion cap of a rubric call: the JSON score and a one-sentence reason fit in ~60."""

LOGPROB_KINDS: dict[str, str] = {"holistic": "holistic_logprob", "dimension": "dimension_logprob"}
"""The stored prompt kind of a rubric prompt asked once with logprobs (``prompt_mode:
logprob``); its prompt, rubric hash and other key fields are the sampled prompt's."""

LOGPROB_BODY: tuple[tuple[str, object], ...] = (("logprobs", True), ("top_logprobs", TOP_LOGPROBS))
"""The request fields of a logprob call."""


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


def _build(rubric: Rubric, kind: str, dimension: str, path: str) -> list[dict[str, Any]]:
    return rubric.messages(kind, dimension, cached_data_url(path))


def _build_from_bytes(
    rubric: Rubric, kind: str, dimension: str, data: bytes
) -> list[dict[str, Any]]:
    return rubric.messages(kind, dimension, _bytes_url(data))


@lru_cache(maxsize=32)
def _bytes_url(data: bytes) -> str:
    """An in-memory image (a VAB set image) as a data URL, remembering the recent ones as
    :func:`~judgepanel.core.client.cached_data_url` does for files."""
    return bytes_data_url(data, image_mime(data))


def _text_chars(messages: list[dict[str, Any]]) -> int:
    n = 0
    for msg in messages:
        content = msg["content"]
        if isinstance(content, str):
            n += len(content)
        else:
            n += sum(len(p.get("text", "")) for p in content if p.get("type") == "text")
    return n


def plan_images(
    images: pd.DataFrame,
    families: dict[str, str],
    design: ScoringDesign,
    *,
    dataset: str,
    kinds: tuple[str, ...] = ("holistic", "dimension"),
    only: Mapping[str, Collection[str]] | None = None,
    logprob: LogprobScoring | None = None,
) -> list[CallSpec]:
    """Every rubric call for ``images`` x ``families``: k holistic and R per dimension.

    Calls per image and family are ``design.holistic_k + 5 * design.dimension_r``. The plan
    is image-major (image, then family, then prompt, then repetition), so the repetitions
    of one image are adjacent and its file is read and encoded once.

    Args:
        images: columns ``image_id`` and ``path`` (an image file), or ``image_id`` and
            ``data`` (encoded image bytes held in memory, as VAB's shards give them).
        families: family name -> model id.
        design: repetitions and temperature.
        dataset: the dataset key in the store.
        kinds: the prompt kinds to plan; ``sham`` (the sham rubric's dimension prompts)
            takes ``design.sham_r`` repetitions.
        only: prompt kind -> the families that get it, for a kind that only some of
            ``families`` need (the others get every kind of ``kinds``). The plan stays
            image-major, so each image is still encoded once.
        logprob: ask each holistic and dimension prompt once, with logprobs, read by this
            (kinds ``LOGPROB_KINDS``; ``None``: sample them k and R times).

    Raises:
        ValueError: missing columns, duplicate image ids, or ``only`` naming a kind not
            planned or a family not in ``families``.
    """
    if "image_id" not in images.columns or not {"path", "data"} & set(images.columns):
        raise ValueError(
            f"image table needs image_id and path (or data); it has {list(images.columns)}"
        )
    in_memory = "data" in images.columns
    sources = images["data"] if in_memory else images["path"].astype(str)
    builder = _build_from_bytes if in_memory else _build
    ids = images["image_id"].astype(str)
    dupes = ids[ids.duplicated()].unique()
    if len(dupes):
        raise ValueError(f"duplicate image ids in the image table: {', '.join(dupes[:5])}")
    only = dict(only or {})
    for kind, fams in only.items():
        if kind not in kinds:
            raise ValueError(f"`only` names prompt kind {kind!r}, which is not planned {kinds}")
        unknown = sorted(set(fams) - set(families))
        if unknown:
            raise ValueError(f"`only` names families not planned for {kind!r}: {unknown}")
    rubric = load_rubric()
    reps_of = {"holistic": design.holistic_k, "dimension": design.dimension_r}
    reps_of["sham"] = design.sham_r
    plan = [("holistic", "", design.holistic_k)] if "holistic" in kinds else []
    plan += [(k, d, reps_of[k]) for k in kinds if k != "holistic" for d in DIMENSIONS]
    prompts: list[tuple[str, str, str, int, str, int]] = []
    for kind, dim, reps in plan:
        chars = _text_chars(rubric.messages(kind, dim, "<image>"))
        stored = kind
        if logprob is not None and kind in LOGPROB_KINDS:
            stored, reps = LOGPROB_KINDS[kind], min(reps, 1)
        prompts.append((kind, stored, dim, reps, rubric.prompt_hash(kind, dim), chars))
    temperature = float(design.temperature)
    extra = {"extra_body": LOGPROB_BODY, "parse_choice": logprob}
    specs: list[CallSpec] = []
    for image_id, source in zip(ids, sources, strict=True):
        asked = [
            (
                kind,
                reps,
                PromptSpec(
                    dataset=dataset,
                    item=image_id,
                    kind=stored,
                    prompt_hash=phash,
                    build=partial(builder, rubric, kind, dim, source),
                    parse=parse_score,
                    max_tokens=SCORE_MAX_TOKENS,
                    temperature=temperature,
                    dimension=dim,
                    rubric_sha=rubric.sha_of(kind),
                    text_chars=chars,
                    **(extra if stored != kind else {}),
                ),
            )
            for kind, stored, dim, reps, phash, chars in prompts
        ]
        for family, model in families.items():
            for kind, reps, prompt in asked:
                if kind in only and family not in only[kind]:
                    continue
                for rep in range(reps):
                    specs.append(make_spec(prompt, family=family, model=model, repetition=rep))
    return specs


def plan_dataset(target: DatasetRef, settings: ScoreSettings) -> list[CallSpec]:
    """Every rubric call of a rated-image dataset: the images its scoring design covers.

    A run whose parameters name a ``temperature_rule`` also gets the rule's grid: its
    family's dimension calls at every temperature of the rule, on the rule's subset. With
    ``prompt_mode: logprob`` each holistic and dimension prompt is asked once, with
    logprobs (the sham rubric and the temperature grid are sampled as always).
    """
    design = settings.designs[target.name]
    data = scored_dataset(target.kind, target.root, design)
    images = data.images
    if settings.limit_images is not None:
        images = images.head(settings.limit_images)
    specs = plan_images(
        images,
        settings.families,
        design,
        dataset=target.name,
        logprob=logprob_scoring(settings.parameters),
    )
    if design.sham_r > 0:
        # The sham rubric is scored for the pre-declared families, as seed 000 does.
        sham_families = {f: m for f, m in settings.families.items() if f in settings.predeclared}
        specs += plan_images(images, sham_families, design, dataset=target.name, kinds=("sham",))
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
            images, {family: settings.families[family]}, grid_design, dataset=target.name
        )
    return specs


KINDS: tuple[str, ...] = IMAGE_KINDS
for _kind in KINDS:
    register_planner(
        _kind,
        plan_dataset,
        parameters=("temperature_rule", *LOGPROB_PARAMETERS),
        model=FusionParameters,
    )
