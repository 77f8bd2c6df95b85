"""What the VisionQ notebook starts from: eligible questions, stored calls, predictions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgepanel.core.config import load_config
from judgepanel.core.frames import read_calls
from judgepanel.datasets.visionq import load_questions
from judgepanel.studies.visionq.metrics import predictions_from_store


@dataclass(frozen=True)
class VisionqData:
    """A VisionQ dataset of a run: its eligible questions and the judges' predictions."""

    questions: pd.DataFrame
    predictions: pd.DataFrame


def load_run(
    dataset: str,
    root: str | Path,
    *,
    profile: str,
    store: str | Path,
    runs_file: str | Path,
    families: Mapping[str, str],
    rotations: int,
    seed: int,
) -> VisionqData:
    """Read a VisionQ dataset of a run (the profile may name its question files).

    The store may also hold answers to questions of another world written under the same
    dataset name (a quick world before a full one): only the loaded questions' answers are
    read, as coverage counts only planned calls.
    """
    ref = load_config(runs_file).profile(profile).dataset(dataset)
    questions = load_questions(root, ref.questions, ref.eligible)
    calls = read_calls(store, dataset, kinds=["visionq"])
    calls = calls[calls["item"].isin(set(questions["id"]))]
    preds = predictions_from_store(
        calls, questions, families=families, rotations=rotations, seed=seed
    )
    return VisionqData(questions, preds)
