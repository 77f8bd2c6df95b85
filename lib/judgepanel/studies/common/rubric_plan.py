"""The rubric calls for a table of images: k holistic calls and R calls per rubric dimension.

The fusion study plans them for its rated images (:mod:`judgepanel.studies.fusion.plan`);
VAB's score-then-rank plans them for the images of its sets
(:mod:`judgepanel.studies.vab.plan`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from functools import lru_cache, partial
from typing import Any

import pandas as pd

from judgepanel.core.calls import CallSpec, PromptSpec, make_spec
from judgepanel.core.client import cached_data_url
from judgepanel.core.config import ScoringDesign
from judgepanel.core.prompts import bytes_data_url
from judgepanel.core.rubric import Rubric, load_rubric
from judgepanel.core.score_logprobs import TOP_LOGPROBS, LogprobScoring
from judgepanel.datasets.vab import image_mime

SCORE_MAX_TOKENS = 200
"""Completion cap of a rubric call: the JSON score and a one-sentence reason fit in ~60."""

LOGPROB_CALL_TYPE_OF: dict[str, str] = {
    "holistic": "holistic_logprob",
    "dimension": "dimension_logprob",
}
"""The stored call type of a rubric prompt asked once with logprobs (``prompt_mode:
logprob``), by the sampled prompt's call type; its prompt, rubric hash and other key fields
are the sampled prompt's."""

LOGPROB_CALL_TYPES: tuple[str, ...] = tuple(LOGPROB_CALL_TYPE_OF.values())
"""The call types a logprob run adds to the sampled calls."""

LOGPROB_BODY: tuple[tuple[str, object], ...] = (("logprobs", True), ("top_logprobs", TOP_LOGPROBS))
"""The request fields of a logprob call."""


def _build(rubric: Rubric, call_type: str, dimension: str, path: str) -> list[dict[str, Any]]:
    return rubric.messages(call_type, dimension, cached_data_url(path))


def _build_from_bytes(
    rubric: Rubric, call_type: str, dimension: str, data: bytes
) -> list[dict[str, Any]]:
    return rubric.messages(call_type, dimension, cached_bytes_url(data))


@lru_cache(maxsize=32)
def cached_bytes_url(data: bytes) -> str:
    """An in-memory image (a VAB set image) as a data URL, remembering the recent ones as
    :func:`~judgepanel.core.client.cached_data_url` does for files: the calls of one set
    are adjacent in a plan, so each image is encoded once for all of them, and its one
    string is what the request encoder recognises (:mod:`judgepanel.core.providers.openai`)."""
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


def _logprob_reader(
    logprob: LogprobScoring, rubric: Rubric, call_type: str, dimension: str
) -> LogprobScoring:
    """The logprob reader of one prompt, on that prompt's integer scale."""
    scale = rubric.scale(call_type, dimension)
    if scale.levels is not None:
        raise ValueError(
            f"{rubric.source}: dimension {dimension!r} is scored on named levels, which "
            "prompt_mode logprob cannot read; use prompt_mode sample"
        )
    if (scale.min, scale.max) == (logprob.lo, logprob.hi):
        return logprob
    return dataclasses.replace(logprob, lo=scale.min, hi=scale.max)


def plan_images(
    images: pd.DataFrame,
    families: dict[str, str],
    design: ScoringDesign,
    *,
    dataset: str,
    call_types: tuple[str, ...] = ("holistic", "dimension"),
    only: Mapping[str, Collection[str]] | None = None,
    logprob: LogprobScoring | None = None,
    rubric: Rubric | None = None,
) -> list[CallSpec]:
    """Every rubric call for ``images`` x ``families``: k holistic and R per dimension.

    Calls per image and family are ``design.holistic_k`` (none when the rubric asks no
    holistic question) plus ``design.dimension_r`` per dimension of the rubric. The plan
    is image-major (image, then family, then prompt, then repetition), so the repetitions
    of one image are adjacent and its file is read and encoded once.

    Args:
        images: columns ``image_id`` and ``path`` (an image file), or ``image_id`` and
            ``data`` (encoded image bytes held in memory, as VAB's shards give them).
        families: family name -> model id.
        design: repetitions and temperature.
        dataset: the dataset key in the store.
        call_types: the call types to plan; ``sham`` (the sham rubric's dimension prompts)
            takes ``design.sham_r`` repetitions.
        only: call type -> the families that get it, for a call type that only some of
            ``families`` need (the others get every call type of ``call_types``). The plan stays
            image-major, so each image is still encoded once.
        logprob: ask each holistic and dimension prompt once, with logprobs, read by this
            (call types ``LOGPROB_CALL_TYPE_OF``; ``None``: sample them k and R times).
        rubric: the rubric whose prompts, parsers and hash the calls get (default: the
            project's ``rubric/`` folder).

    Raises:
        ValueError: missing columns, duplicate image ids, or ``only`` naming a call type not
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
    for call_type, fams in only.items():
        if call_type not in call_types:
            raise ValueError(
                f"`only` names call type {call_type!r}, which is not planned {call_types}"
            )
        unknown = sorted(set(fams) - set(families))
        if unknown:
            raise ValueError(f"`only` names families not planned for {call_type!r}: {unknown}")
    rubric = rubric or load_rubric()
    if "sham" in call_types and not rubric.sham:
        raise ValueError(f"{rubric.source}: the rubric has no sham variant to plan")
    reps_of = {"holistic": design.holistic_k, "dimension": design.dimension_r}
    reps_of["sham"] = design.sham_r
    asks_holistic = "holistic" in call_types and rubric.holistic is not None
    plan = [("holistic", "", design.holistic_k)] if asks_holistic else []
    plan += [(k, d, reps_of[k]) for k in call_types if k != "holistic" for d in rubric.keys]
    prompts: list[tuple[str, str, str, int, str, int, dict[str, Any]]] = []
    for call_type, dim, reps in plan:
        chars = _text_chars(rubric.messages(call_type, dim, "<image>"))
        stored = call_type
        parsing: dict[str, Any] = {"parse": rubric.parser(call_type, dim)}
        if logprob is not None and call_type in LOGPROB_CALL_TYPE_OF:
            stored, reps = LOGPROB_CALL_TYPE_OF[call_type], min(reps, 1)
            reader = _logprob_reader(logprob, rubric, call_type, dim)
            parsing.update(extra_body=LOGPROB_BODY, parse_choice=reader)
        prompts.append(
            (call_type, stored, dim, reps, rubric.prompt_hash(call_type, dim), chars, parsing)
        )
    temperature = float(design.temperature)
    specs: list[CallSpec] = []
    for image_id, source in zip(ids, sources, strict=True):
        asked = [
            (
                call_type,
                reps,
                PromptSpec(
                    dataset=dataset,
                    item=image_id,
                    call_type=stored,
                    prompt_hash=phash,
                    build=partial(builder, rubric, call_type, dim, source),
                    max_tokens=SCORE_MAX_TOKENS,
                    temperature=temperature,
                    dimension=dim,
                    rubric_sha=rubric.sha_of(call_type),
                    text_chars=chars,
                    **parsing,
                ),
            )
            for call_type, stored, dim, reps, phash, chars, parsing in prompts
        ]
        for family, model in families.items():
            for call_type, reps, prompt in asked:
                if call_type in only and family not in only[call_type]:
                    continue
                for rep in range(reps):
                    specs.append(make_spec(prompt, family=family, model=model, repetition=rep))
    return specs
