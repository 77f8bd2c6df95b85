"""The agreement study's inputs: people's ratings and the judges' repetitions, as tidy frames.

One *question* at a time: ``holistic`` (the judges' holistic answers against the dataset's
overall rating) or a rubric dimension (the judges' answers to that dimension against the
attribute the dataset maps to it, :func:`judgepanel.datasets.mapping.validations`).
:func:`questions` lists what a dataset and a rubric can answer together.

People's ratings come from the dataset's per-rater table (EVA- and PARA-like releases carry
rater ids); a release of vote histograms or per-image means only (AVA) has no rater to
leave out or compare, so :attr:`AgreementData.humans` is None and the per-image human mean
stands in where only the mean is needed. The judges' answers come from the store, one row
per repetition; the rubric scale of the question is mapped linearly onto the people's
range (its ends onto the attribute's ends), and every result names that map.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgepanel.core.config import Config, Run
from judgepanel.core.frames import read_calls, score_table, scored_dataset
from judgepanel.core.rubric import Rubric, load_rubric
from judgepanel.datasets import Dataset
from judgepanel.datasets.attribute import HOLISTIC
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.datasets.mapping import validations
from judgepanel.errors import JudgepanelError
from judgepanel.stats.ratings import ITEM, RATER, SCORE
from judgepanel.stats.scale_map import LinearMap
from judgepanel.studies.common.run_dataset import dataset_of_kind

USE = "the agreement study"
PANEL = "panel mean"
"""The fused panel's name: the mean of the families' holistic means."""
MEAN_RATER = "human mean"
"""The one rater of the stand-in frame of a dataset without rater ids."""
OVERALL = "score"
"""The ratings column of the overall rating (its per-image mean is ``mean_score``)."""


class AgreementError(JudgepanelError, ValueError):
    """A question the agreement study cannot ask of a dataset, a rubric or a store."""


@dataclass(frozen=True)
class Question:
    """One question the judges and the people both answered.

    Attributes:
        key: ``holistic`` or the rubric dimension's key.
        column: the people's column: ``score`` (the overall rating) or the attribute's.
        attribute: the attribute's name as released (``overall rating`` for holistic).
    """

    key: str
    column: str
    attribute: str

    @property
    def call_type(self) -> str:
        """The calls of the judges' answers: holistic or dimension (the store's ``kind``)."""
        return HOLISTIC if self.key == HOLISTIC else "dimension"

    @property
    def label(self) -> str:
        """E.g. ``holistic vs the overall rating`` or ``symmetry vs attribute symmetry``."""
        if self.key == HOLISTIC:
            return "holistic vs the overall rating"
        return f"{self.key} vs attribute {self.attribute}"


def questions(data: Dataset, rubric: Rubric) -> list[Question]:
    """What ``data`` and ``rubric`` can be compared on: ``holistic`` when the dataset has
    an overall rating and the rubric a holistic question, then every rubric dimension an
    attribute of the dataset validates, in the rubric's order.

    An attribute naming a dimension the rubric lacks is left out, as ``data describe
    --rubric`` leaves it unmapped.
    """
    out: list[Question] = []
    if data.has_overall and rubric.holistic is not None:
        out.append(Question(HOLISTIC, OVERALL, "overall rating"))
    mapped = {
        v.dimension: v
        for v in validations(data)
        if v.dimension is not None and v.dimension != HOLISTIC
    }
    for key in rubric.keys:
        if key in mapped:
            out.append(Question(key, mapped[key].column, mapped[key].name))
    return out


def question_of(data: Dataset, rubric: Rubric, key: str) -> Question:
    """The question ``key`` of :func:`questions`, or an error naming those there are.

    Raises:
        AgreementError: ``key`` is not a question ``data`` and ``rubric`` share.
    """
    found = {q.key: q for q in questions(data, rubric)}
    if key in found:
        return found[key]
    if key == HOLISTIC:
        data.require_overall("the agreement of judges with people")
        raise AgreementError(f"{rubric.source}: the rubric asks no holistic question to agree on")
    known = ", ".join(found) or "none"
    if key in rubric.dimensions:
        raise AgreementError(
            f"{data.name}: no rated attribute validates the rubric dimension {key!r} "
            f"(the questions it shares with the rubric: {known})"
        )
    raise AgreementError(
        f"{key!r} is neither 'holistic' nor a dimension of the rubric "
        f"{rubric.name or rubric.source} (the questions {data.name} shares with it: {known})"
    )


@dataclass(frozen=True)
class AgreementData:
    """One rated dataset as the agreement study reads it.

    Attributes:
        dataset: the dataset's key in the store.
        humans: per-rater ratings (``image_id``, ``rater``, ``score``), or None when the
            release has no rater ids.
        means: the per-image human mean as a one-rater tidy frame (for the functions
            that need only the mean).
        repetitions: the judges' holistic answers (``image_id``, ``family``,
            ``repetition``, ``score``) on the rubric's scale.
        scale: the people's rating range (low, high).
        mapping: the linear map of the rubric scale onto it.
        cost: per family, USD of the dataset's rubric calls (holistic and dimension) as
            the store recorded them (NaN, not known, where any was imported: imported
            answers carry no price), and the images they cover.
        reason: why the rater-id statistics are skipped ("" when they are not).
        question: ``holistic`` or the rubric dimension compared.
        column: the people's column compared (``score``: the overall rating).
    """

    dataset: str
    humans: pd.DataFrame | None
    means: pd.DataFrame
    repetitions: pd.DataFrame
    scale: tuple[int, int]
    mapping: LinearMap
    cost: pd.DataFrame
    reason: str = ""
    question: str = HOLISTIC
    column: str = OVERALL

    @property
    def families(self) -> list[str]:
        """The judge families, in the order of the store's answers."""
        return list(dict.fromkeys(self.repetitions["family"]))

    def judge_means(self) -> pd.DataFrame:
        """Each family's mean score per image over its repetitions, tidy (``rater`` = family)."""
        means = self.repetitions.groupby(["family", ITEM], sort=True)[SCORE].mean()
        return means.reset_index().rename(columns={"family": RATER})

    def panel_mean(self) -> pd.Series:
        """The panel mean per image: the mean of the families' means, on images all scored."""
        wide = self.judge_means().pivot(index=ITEM, columns=RATER, values=SCORE).dropna()
        return wide.mean(axis=1).rename(SCORE)


def _humans(data: Dataset, column: str = OVERALL) -> tuple[pd.DataFrame | None, str]:
    """Per-rater ratings of ``column`` as a tidy frame (repeated asks averaged), or None
    and why."""
    ratings = data.ratings
    if (
        ratings.empty
        or "rater_id" not in ratings.columns
        or column not in ratings.columns
        or ratings[column].isna().all()
    ):
        what = "vote histograms" if column == OVERALL else f"{column!r} as per-image means"
        return None, (
            f"{data.name} releases {what} without rater ids, so the statistics that "
            "need raters (people's reliability, the alternative annotator test) are skipped"
        )
    frame = ratings[["image_id", "rater_id", column]].dropna()
    frame = frame.rename(columns={"rater_id": RATER, column: SCORE})
    frame = frame.assign(image_id=frame[ITEM].astype(str))
    return frame.groupby([ITEM, RATER], as_index=False)[SCORE].mean(), ""


def _people_range(data: Dataset, question: Question) -> tuple[int, int]:
    """The people's range of ``question``'s column, as two integers (kappa needs a grid).

    Raises:
        AgreementError: the range is not two integers.
    """
    if question.key == HOLISTIC:
        assert data.score_range is not None  # a dataset with an overall rating has its range
        low, high = data.score_range
        if int(low) != low or int(high) != high:
            raise AgreementError(f"{data.name}: rating range {low}-{high} is not two integers")
        return int(low), int(high)
    if question.column in data.attribute_ranges:
        low, high = data.attribute_ranges[question.column]
    else:
        attr = data.attributes[question.column]
        low, high = attr.low, attr.high
    if int(low) != low or int(high) != high:
        raise AgreementError(
            f"{data.name}: attribute {question.attribute!r} runs {low:g}-{high:g}, not between "
            "two integers; the agreement study needs an integer grid (QWK, the alt-test's "
            "accuracy) and does not compare it"
        )
    return int(low), int(high)


def agreement_data(
    data: Dataset,
    calls: pd.DataFrame,
    dataset: str,
    *,
    families: Sequence[str] | None = None,
    rubric: Rubric | None = None,
    question: str = HOLISTIC,
) -> AgreementData:
    """The study's inputs for one question from a loaded dataset and the store's calls.

    ``rubric`` is the one the calls were asked with (default: the project's). ``question``
    (``holistic`` or a dimension key) chooses the judges' answers (kind holistic, or kind
    dimension of that key), the people's column (the overall rating, or the attribute
    mapped to the dimension) and the scale map (the question's rubric scale onto that
    column's range).

    Raises:
        DatasetError: ``holistic`` of a dataset without an overall rating.
        AgreementError: the rubric does not ask ``question``, no attribute validates it,
            the store holds no answer to it of ``dataset``'s images, or the people's range
            is not two integers.
    """
    rubric = rubric or load_rubric()
    if question == HOLISTIC:
        data.require_overall("the agreement of judges with people")
    asked = question_of(data, rubric, question)
    scale_of = rubric.scale(asked.call_type, "" if asked.key == HOLISTIC else asked.key)
    judge_scale = (scale_of.min, scale_of.max)
    answers = score_table(
        calls, dataset, families=families, rubric_sha=rubric.sha256, call_types=(asked.call_type,)
    )
    if asked.key != HOLISTIC:
        answers = answers[answers["dimension"] == asked.key]
    images = set(data.images["image_id"].astype(str))
    answers = answers.assign(item=answers["item"].astype(str))
    answers = answers[answers["item"].isin(images)]
    if answers.empty:
        what = "holistic answers" if asked.key == HOLISTIC else f"answers to {asked.key!r}"
        raise AgreementError(f"the store's {what} of {dataset!r} cover none of its images")
    reps = answers.rename(columns={"item": ITEM, "value": SCORE})[
        [ITEM, "family", "repetition", SCORE]
    ].astype({SCORE: float})
    scale = _people_range(data, asked)
    scored = set(reps[ITEM])
    humans, reason = _humans(data, asked.column)
    if humans is not None:
        humans = humans[humans[ITEM].isin(scored)].reset_index(drop=True)
    mean_column = "mean_score" if asked.key == HOLISTIC else asked.column
    means = data.images[["image_id", mean_column]].rename(columns={mean_column: SCORE})
    means = means.assign(image_id=means[ITEM].astype(str), rater=MEAN_RATER).dropna()
    means = means[means[ITEM].isin(scored)]
    rubric_calls = calls[
        (calls["dataset"] == dataset)
        & calls["kind"].isin(["holistic", "dimension"])
        & calls["item"].astype(str).isin(images)
    ]
    if families is not None:
        rubric_calls = rubric_calls[rubric_calls["family"].isin(list(families))]
    cost = rubric_calls.groupby("family").agg(usd=("cost", "sum"), n_images=("item", "nunique"))
    # not known (NaN) for a family with imported answers, which carry no price; the priced
    # families keep groupby's own sum, so their figures stay the same to the last digit
    unpriced = rubric_calls["cost"].isna().groupby(rubric_calls["family"]).any()
    cost.loc[unpriced.reindex(cost.index, fill_value=False), "usd"] = float("nan")
    return AgreementData(
        dataset=dataset,
        humans=humans,
        means=means[[ITEM, RATER, SCORE]],
        repetitions=reps.reset_index(drop=True),
        scale=scale,
        mapping=LinearMap(judge_scale, scale),
        cost=cost,
        reason=reason,
        question=asked.key,
        column=asked.column,
    )


@dataclass(frozen=True)
class StudyInputs:
    """Every question of a run's dataset, as notebook 10 reads them.

    Attributes:
        dataset: the dataset's key in the store.
        holistic: the holistic question's inputs, or None (``no_holistic`` says why).
        dimensions: each mapped dimension's inputs, in the rubric's order.
        skipped: dimension -> why it is not compared (no answers, a non-integer range).
        no_holistic: why there is no holistic question ("" when there is one).
    """

    dataset: str
    holistic: AgreementData | None
    dimensions: dict[str, AgreementData]
    skipped: dict[str, str]
    no_holistic: str = ""


def _run_inputs(run: Run, config: Config) -> tuple[Dataset, pd.DataFrame, str, Rubric]:
    ref = dataset_of_kind(run, rated_kinds(), None, use=USE)
    data = scored_dataset(ref.kind, ref.root, config.design(ref.kind), **ref.loader_keys)
    calls = read_calls(run.profile.store, ref.name)
    return data, calls, ref.name, load_rubric(run.rubric)


def load_agreement(run: Run, config: Config, *, families: Sequence[str]) -> AgreementData:
    """The run's rated dataset (as its scoring design sampled it) with the store's calls."""
    data, calls, name, rubric = _run_inputs(run, config)
    return agreement_data(data, calls, name, families=families, rubric=rubric)


def study_inputs(
    data: Dataset,
    calls: pd.DataFrame,
    dataset: str,
    *,
    families: Sequence[str] | None = None,
    rubric: Rubric | None = None,
) -> StudyInputs:
    """Every question of :func:`questions`: the holistic one where there is one, and each
    mapped dimension; a dimension the study cannot compare is kept with its reason."""
    rubric = rubric or load_rubric()
    asked = questions(data, rubric)
    holistic = None
    no_holistic = ""
    if asked and asked[0].key == HOLISTIC:
        try:
            holistic = agreement_data(data, calls, dataset, families=families, rubric=rubric)
        except ValueError as exc:  # no holistic answers in the store
            no_holistic = str(exc)
    elif not data.has_overall:
        no_holistic = f"{data.name} has no overall rating"
    else:
        no_holistic = f"the rubric {rubric.name or rubric.source} asks no holistic question"
    dimensions: dict[str, AgreementData] = {}
    skipped: dict[str, str] = {}
    for q in asked:
        if q.key == HOLISTIC:
            continue
        try:
            dimensions[q.key] = agreement_data(
                data, calls, dataset, families=families, rubric=rubric, question=q.key
            )
        except ValueError as exc:  # no answers to it, or a range off the integer grid
            skipped[q.key] = str(exc)
    return StudyInputs(dataset, holistic, dimensions, skipped, no_holistic)


def load_study(run: Run, config: Config, *, families: Sequence[str]) -> StudyInputs:
    """:func:`study_inputs` of the run's rated dataset (as its scoring design sampled it)."""
    data, calls, name, rubric = _run_inputs(run, config)
    return study_inputs(data, calls, name, families=families, rubric=rubric)
