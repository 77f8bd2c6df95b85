"""What the VAB notebook starts from: tasks, stored calls and the predictions table.

The store is opened read-only and closed again. :func:`load_training_world` reads the
rated scoring world the fused score-then-rank judge trains on (never a VAB label).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgepanel.core.config import Config, Run, ScoringDesign
from judgepanel.core.frames import read_calls, score_table, scored_dataset
from judgepanel.datasets import load_vab
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.studies.common.run_dataset import dataset_of_kind
from judgepanel.studies.vab.plan import KIND
from judgepanel.studies.vab.predictions import predictions_from_store


@dataclass(frozen=True)
class VabData:
    """A VAB dataset of a run, as the analyses read it.

    Attributes:
        tasks: the loaded tasks.
        design: the ``vab`` scoring design of the set images' rubric calls.
        calls: every stored call of the dataset.
        predictions: one row per comparison call of the panel (planned calls included).
    """

    tasks: pd.DataFrame
    design: ScoringDesign
    calls: pd.DataFrame
    predictions: pd.DataFrame


def load_run(
    run: Run,
    config: Config,
    *,
    families: Sequence[str],
    n_orders: int,
    seed: int,
) -> VabData:
    """Read the run's VAB dataset: its tasks, calls and the panel's predictions.

    Args:
        run: the resolved run (its profile gives the dataset's root and the store).
        config: the runs file ``run`` comes from (its ``vab`` scoring design).
        families: the judges whose predictions are kept.
        n_orders, seed: the standard orders asked, as planned.

    Raises:
        ConfigError: the run's dataset is not a VAB dataset, or the run spans several.
    """
    ref = dataset_of_kind(run, (KIND,), use="the VAB study")
    design = config.design(ref.kind)
    tasks = load_vab(ref.root)
    calls = read_calls(run.profile.store, ref.name)
    pred = predictions_from_store(calls, tasks, n_orders=n_orders, seed=seed)
    pred = pred.loc[pred["judge"].isin(list(families))].reset_index(drop=True)
    return VabData(tasks, design, calls, pred)


def load_training_world(
    run: Run,
    config: Config,
    name: str,
    *,
    families: Sequence[str],
    rubric_sha: str | None = None,
) -> tuple[pd.DataFrame, pd.Series]:
    """The fused ranker's training data: a rated scoring world's scores and human means.

    The world is the dataset ``name`` of the run's profile (e.g. ``para``), on the images
    its scoring design covers, so the scores and the human means refer to the same images.

    Returns:
        (score_table rows, human mean per image).

    Raises:
        ConfigError: the world has no per-image human ratings (not eva or para).
        ValueError: the store holds no scores of it for these families (score its run
            first).
    """
    ref = dataset_of_kind(
        run, rated_kinds(), name, use="the fused ranker's training world (per-image ratings)"
    )
    design = config.design(ref.kind)
    data = scored_dataset(ref.kind, ref.root, design, **ref.loader_keys)
    try:
        scores = score_table(
            read_calls(run.profile.store, name),
            name,
            families=list(families),
            rubric_sha=rubric_sha,
            temperature=design.temperature,
        )
    except ValueError as exc:
        raise ValueError(
            f"the fused ranker trains on {name!r}, but the store has no usable scores of it "
            f"({exc}); score that dataset's run first, or choose another fusion_train"
        ) from None
    data.require_overall(f"the fused ranker's training on {name!r}")
    return scores, data.images.set_index("image_id")["mean_score"]
