"""The agreement study's inputs: people's ratings and the judges' repetitions, as tidy frames.

People's ratings come from the dataset's per-rater table (EVA- and PARA-like releases carry
rater ids); a release of vote histograms only (AVA) has no rater to leave out or compare,
so :attr:`AgreementData.humans` is None and the per-image human mean stands in where only
the mean is needed. The judges' holistic answers come from the store, one row per
repetition; the rubric's 1-10 scale is mapped linearly onto the dataset's rating range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgepanel.core.config import Config, Run
from judgepanel.core.frames import read_calls, score_table, scored_dataset
from judgepanel.core.prompts import Rubric, load_rubric
from judgepanel.datasets import Dataset
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.stats.ratings import ITEM, RATER, SCORE
from judgepanel.stats.scale_map import LinearMap
from judgepanel.studies.common.run_dataset import dataset_of_kind

USE = "the agreement study"
PANEL = "panel mean"
"""The fused panel's name: the mean of the families' holistic means."""
MEAN_RATER = "human mean"
"""The one rater of the stand-in frame of a dataset without rater ids."""


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
            the store recorded them, and the images they cover.
        reason: why the rater-id statistics are skipped ("" when they are not).
    """

    dataset: str
    humans: pd.DataFrame | None
    means: pd.DataFrame
    repetitions: pd.DataFrame
    scale: tuple[int, int]
    mapping: LinearMap
    cost: pd.DataFrame
    reason: str = ""

    @property
    def families(self) -> list[str]:
        """The judge families, in the order of the store's answers."""
        return list(dict.fromkeys(self.repetitions["family"]))

    def judge_means(self) -> pd.DataFrame:
        """Each family's mean holistic score per image, tidy (``rater`` = family)."""
        means = self.repetitions.groupby(["family", ITEM], sort=True)[SCORE].mean()
        return means.reset_index().rename(columns={"family": RATER})

    def panel_mean(self) -> pd.Series:
        """The panel mean per image: the mean of the families' means, on images all scored."""
        wide = self.judge_means().pivot(index=ITEM, columns=RATER, values=SCORE).dropna()
        return wide.mean(axis=1).rename(SCORE)


def _humans(data: Dataset) -> tuple[pd.DataFrame | None, str]:
    """Per-rater ratings as a tidy frame (repeated asks averaged), or None and why."""
    ratings = data.ratings
    if ratings.empty or "rater_id" not in ratings.columns or ratings["score"].isna().all():
        return None, (
            f"{data.name} releases vote histograms without rater ids, so the statistics that "
            "need raters (people's reliability, the alternative annotator test) are skipped"
        )
    frame = ratings[["image_id", "rater_id", "score"]].dropna().rename(columns={"rater_id": RATER})
    frame = frame.assign(image_id=frame[ITEM].astype(str))
    return frame.groupby([ITEM, RATER], as_index=False)[SCORE].mean(), ""


def agreement_data(
    data: Dataset,
    calls: pd.DataFrame,
    dataset: str,
    *,
    families: Sequence[str] | None = None,
    rubric: Rubric | None = None,
) -> AgreementData:
    """The study's inputs from a loaded dataset and the store's calls of ``dataset``.

    ``rubric`` is the one the calls were asked with (default: the project's); its holistic
    scale is mapped onto the dataset's.

    Raises:
        ValueError: the rubric asks no holistic question, the store holds no holistic
            answer of ``dataset``'s images, or the dataset's range is not two integers.
    """
    rubric = rubric or load_rubric()
    data.require_overall("the agreement of judges with people")
    if rubric.holistic is None:
        raise ValueError(f"{rubric.source}: the rubric asks no holistic question to agree on")
    judge_scale = (rubric.holistic.scale.min, rubric.holistic.scale.max)
    answers = score_table(
        calls, dataset, families=families, rubric_sha=rubric.sha256, kinds=("holistic",)
    )
    images = set(data.images["image_id"].astype(str))
    answers = answers.assign(item=answers["item"].astype(str))
    answers = answers[answers["item"].isin(images)]
    if answers.empty:
        raise ValueError(f"the store's holistic answers of {dataset!r} cover none of its images")
    reps = answers.rename(columns={"item": ITEM, "value": SCORE})[
        [ITEM, "family", "repetition", SCORE]
    ].astype({SCORE: float})
    assert data.score_range is not None  # a dataset with an overall rating has its range
    low, high = data.score_range
    if int(low) != low or int(high) != high:
        raise ValueError(f"{data.name}: rating range {low}-{high} is not two integers")
    scale = (int(low), int(high))
    scored = set(reps[ITEM])
    humans, reason = _humans(data)
    if humans is not None:
        humans = humans[humans[ITEM].isin(scored)].reset_index(drop=True)
    means = data.images[["image_id", "mean_score"]].rename(columns={"mean_score": SCORE})
    means = means.assign(image_id=means[ITEM].astype(str), rater=MEAN_RATER).dropna()
    means = means[means[ITEM].isin(scored)]
    rubric = calls[
        (calls["dataset"] == dataset)
        & calls["kind"].isin(["holistic", "dimension"])
        & calls["item"].astype(str).isin(images)
    ]
    if families is not None:
        rubric = rubric[rubric["family"].isin(list(families))]
    cost = rubric.groupby("family").agg(usd=("cost", "sum"), n_images=("item", "nunique"))
    return AgreementData(
        dataset=dataset,
        humans=humans,
        means=means[[ITEM, RATER, SCORE]],
        repetitions=reps.reset_index(drop=True),
        scale=scale,
        mapping=LinearMap(judge_scale, scale),
        cost=cost,
        reason=reason,
    )


def load_agreement(run: Run, config: Config, *, families: Sequence[str]) -> AgreementData:
    """The run's rated dataset (as its scoring design sampled it) with the store's calls."""
    ref = dataset_of_kind(run, rated_kinds(), None, use=USE)
    data = scored_dataset(ref.kind, ref.root, config.design(ref.kind))
    calls = read_calls(run.profile.store, ref.name)
    rubric = load_rubric(run.rubric)
    return agreement_data(data, calls, ref.name, families=families, rubric=rubric)
