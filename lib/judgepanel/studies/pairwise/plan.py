"""The pairwise scoring plan: every pair x family x rubric question x order.

Registered as the planner of the ``pairs`` dataset kind. A ``pairs`` dataset with
``rated: KIND`` is paired by :func:`study_pairs` (``pairs_per_image`` comparisons each
image, on ``pair_images`` of its images); one of people's own choices is asked its own
pairs. Each pair is asked ``orders`` times (1: as drawn; 2: both orders, repetitions 0 and
1), for the holistic question and each dimension of ``pair_dimensions``. The plan is
pair-major, so both images of a pair are read and encoded once for all its calls;
``judgepanel score`` sends it resumably and within the budget like every plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from judgepanel.core.calls import CallSpec, PromptSpec, make_spec
from judgepanel.core.client import cached_data_url
from judgepanel.core.config import DatasetRef
from judgepanel.core.rubric import Rubric, load_rubric
from judgepanel.core.scoring import register_planner
from judgepanel.core.settings import ScoreSettings
from judgepanel.datasets.pairs import KIND, PairLabels, load_pairs
from judgepanel.studies.pairwise.parameters import PairwiseParameters
from judgepanel.studies.pairwise.prompt import (
    PAIR_CALL_TYPES,
    pair_messages,
    pair_prompt_hash,
    read_pair_answer,
)
from judgepanel.studies.pairwise.sampling import study_pairs

MAX_TOKENS = 100
"""Completion cap of a pairwise call: ``BEST: A`` and a sentence of reasons fit well."""


def questions(rubric: Rubric, dimensions: Sequence[str] | None) -> list[tuple[str, str]]:
    """(question, dimension) of each rubric question asked pairwise: the holistic one where
    the rubric asks it, then ``dimensions`` (None: every dimension of the rubric).

    Raises:
        ValueError: a dimension the rubric does not have.
    """
    chosen = list(rubric.keys) if dimensions is None else list(dimensions)
    unknown = [d for d in chosen if d not in rubric.dimensions]
    if unknown:
        raise ValueError(f"pair_dimensions: {unknown} not in the rubric's {list(rubric.keys)}")
    out = [("holistic", "")] if rubric.holistic is not None else []
    return out + [("dimension", d) for d in chosen]


def _build(rubric: Rubric, question: str, dimension: str, paths: tuple[str, str]) -> list[Any]:
    return pair_messages(
        rubric, question, dimension, (cached_data_url(paths[0]), cached_data_url(paths[1]))
    )


def plan_pairs(
    data: PairLabels,
    families: Mapping[str, str],
    params: PairwiseParameters,
    *,
    dataset: str,
    temperature: float,
    rubric: Rubric,
    limit_images: int | None = None,
) -> list[CallSpec]:
    """Every pairwise call of ``data`` (see the module docstring)."""
    pairs = study_pairs(data, params, limit_images=limit_images)
    paths = dict(zip(data.images["image_id"].astype(str), data.images["path"], strict=True))
    asked = questions(rubric, params.pair_dimensions)
    hashes = {q: pair_prompt_hash(rubric, *q) for q in asked}
    specs: list[CallSpec] = []
    for pair in pairs.itertuples(index=False):
        shown = [
            (paths[pair.image_a], paths[pair.image_b]),
            (paths[pair.image_b], paths[pair.image_a]),
        ]
        for question, dimension in asked:
            for order in range(params.orders):
                prompt = PromptSpec(
                    dataset=dataset,
                    item=pair.pair_id,
                    call_type=PAIR_CALL_TYPES[question],
                    prompt_hash=hashes[(question, dimension)],
                    build=partial(_build, rubric, question, dimension, shown[order]),
                    parse=partial(read_pair_answer, order=order),
                    max_tokens=MAX_TOKENS,
                    temperature=temperature,
                    dimension=dimension,
                    rubric_sha=rubric.sha256,
                    n_images=2,
                )
                for family, model in families.items():
                    specs.append(make_spec(prompt, family=family, model=model, repetition=order))
    return specs


def pair_parameters(parameters: Mapping[str, Any]) -> PairwiseParameters:
    """The study's parameters from a run's values (defaults where not given)."""
    fields = PairwiseParameters.model_fields
    return PairwiseParameters(**{k: v for k, v in parameters.items() if k in fields})


def plan_dataset(target: DatasetRef, settings: ScoreSettings) -> list[CallSpec]:
    """Every pairwise call of a ``pairs`` dataset under the run's parameters."""
    data = load_pairs(target.root, **target.loader_keys)
    return plan_pairs(
        data,
        settings.families,
        pair_parameters(settings.parameters),
        dataset=target.name,
        temperature=settings.temperature_for(target),
        rubric=load_rubric(settings.rubric),
        limit_images=settings.limit_images,
    )


PLAN_PARAMETERS: tuple[str, ...] = (
    "pairs_per_image",
    "orders",
    "pair_dimensions",
    "pair_images",
    "pair_sample_seed",
)
"""The run parameters that decide a pairwise plan."""

register_planner(KIND, plan_dataset, parameters=PLAN_PARAMETERS, model=PairwiseParameters)
