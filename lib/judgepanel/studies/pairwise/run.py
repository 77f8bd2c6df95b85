"""What the pairwise notebook (11) starts from: pairs, the people's labels, the choices and
the study's own scores of the same images.

The store is opened read-only and closed again; nothing is sent.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from judgepanel.core.config import Run
from judgepanel.core.errors import ConfigError
from judgepanel.core.frames import read_calls, score_table
from judgepanel.datasets.pairs import KIND, PairLabels, load_pairs
from judgepanel.studies.common.run_dataset import dataset_of_kind
from judgepanel.studies.pairwise.analysis import equal_calls
from judgepanel.studies.pairwise.choices import choices_from_calls
from judgepanel.studies.pairwise.parameters import PairwiseParameters
from judgepanel.studies.pairwise.sampling import HOLISTIC, label_pairs, paired_images, study_pairs


@dataclass(frozen=True)
class PairwiseData:
    """A pairwise run as the analyses read it.

    Attributes:
        data: the ``pairs`` dataset (a rated source).
        pairs: the pairs asked (``pair_id``, ``image_a``, ``image_b``).
        labelled: the pairs labelled by the people, one block per question asked.
        human: the overall human mean of each paired image, by image id.
        choices: one row per answered pairwise call.
        calls: the pairwise dataset's stored calls; ``scored``: the scored dataset's.
        scores: the scored dataset's holistic and dimension scores (``score_table``).
        calls_per_image: the pairwise calls per image, at which the scores are compared.
    """

    data: PairLabels
    pairs: pd.DataFrame
    labelled: pd.DataFrame
    human: pd.Series
    choices: pd.DataFrame
    calls: pd.DataFrame
    scored: pd.DataFrame
    scores: pd.DataFrame
    calls_per_image: int


def load_run(run: Run, params: PairwiseParameters) -> PairwiseData:
    """Read the run's pairwise dataset, its choices and the scores it is compared with.

    Raises:
        ConfigError: the run's dataset is not a ``pairs`` dataset of a rated source, or
            ``scored_dataset`` names no dataset of the profile.
    """
    ref = dataset_of_kind(run, (KIND,), use="the pairwise study")
    data = load_pairs(ref.root, **ref.loader_keys)
    if data.rated is None or params.scored_dataset is None:
        raise ConfigError(
            f"run {run.name!r}: the pairwise notebook compares a rated dataset's pairs with "
            "its scores: give the dataset `rated:` and the run `scored_dataset:`"
        )
    scored_ref = run.profile.dataset(params.scored_dataset)
    images = paired_images(data, params)
    pairs = study_pairs(data, params)
    asked = choices_from_calls(read_calls(run.profile.store, ref.name), pairs)
    questions = [q for q in dict.fromkeys(asked["question"]) if q == HOLISTIC or q in images.images]
    labelled = pd.concat(
        [label_pairs(pairs, images, q, params.z_decided).assign(question=q) for q in questions],
        ignore_index=True,
    )
    human = images.images.set_index("image_id")["mean_score"].rename(index=str)
    scored = read_calls(run.profile.store, scored_ref.name)
    return PairwiseData(
        data=data,
        pairs=pairs,
        labelled=labelled,
        human=human,
        choices=asked,
        calls=read_calls(run.profile.store, ref.name),
        scored=scored,
        scores=score_table(scored, scored_ref.name),
        calls_per_image=equal_calls(params.orders, params.pairs_per_image),
    )
