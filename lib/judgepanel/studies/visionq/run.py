"""What the VisionQ notebook starts from: eligible questions, stored calls, predictions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from judgepanel.core.config import Run
from judgepanel.core.frames import read_calls
from judgepanel.datasets.visionq import load_questions
from judgepanel.studies.common.run_dataset import dataset_of_kind
from judgepanel.studies.visionq.plan import KIND
from judgepanel.studies.visionq.predictions import predictions_from_store


@dataclass(frozen=True)
class VisionqData:
    """A VisionQ dataset of a run: its eligible questions and the judges' predictions."""

    questions: pd.DataFrame
    predictions: pd.DataFrame


def load_run(
    run: Run,
    *,
    families: Mapping[str, str],
    rotations: int,
    seed: int,
) -> VisionqData:
    """Read the run's VisionQ dataset (its profile may name the question files).

    The store may also hold answers to questions of another world written under the same
    dataset name (a quick world before a full one): only the loaded questions' answers are
    read, as coverage counts only planned calls.

    Args:
        run: the resolved run (its profile gives the dataset's files and the store).
        families: judge name -> model id, the judges whose answers are read.
        rotations, seed: the rotations asked, as planned.

    Raises:
        ConfigError: the run's dataset is not a VisionQ dataset, or the run spans several.
    """
    ref = dataset_of_kind(run, (KIND,), use="the VisionQ study")
    questions = load_questions(ref.root, ref.questions, ref.eligible)
    calls = read_calls(run.profile.store, ref.name, call_types=["visionq"])
    calls = calls[calls["item"].isin(set(questions["id"]))]
    preds = predictions_from_store(
        calls, questions, families=families, rotations=rotations, seed=seed
    )
    return VisionqData(questions, preds)
