"""What the rubric-fusion notebooks start from: the run's rated datasets, read once.

:func:`load_rated` reads one rated-image dataset of a run as its scoring design sampled
it, the ok rubric answers of the panel from the store (opened read-only and closed), and
builds the feature blocks; every notebook of the study starts from the same
:class:`RatedData`. :func:`load_run` reads every dataset of a run, and
:func:`load_profile_rated` every scored rated dataset of its profile, for the analyses
whose family of comparisons spans datasets. Where the data and the store live, and the
scoring design, come from the resolved run and its runs file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgepanel.core.config import Config, DatasetRef, Run, ScoringDesign
from judgepanel.core.frames import SCORE_COLUMNS, read_calls, score_table, scored_dataset
from judgepanel.core.rubric import Rubric, load_rubric
from judgepanel.datasets import Dataset
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.studies.common.run_dataset import dataset_of_kind
from judgepanel.studies.fusion.blocks import Blocks, build_blocks

USE = "the rubric-fusion study"


@dataclass(frozen=True)
class RatedData:
    """One rated-image dataset of a run, as the analyses read it.

    Attributes:
        name: the dataset's key in the profile and the store.
        design: its scoring design (repetitions, temperature, sample).
        data: the images the design scored, with their human ratings.
        calls: the stored calls of the dataset (``columns`` of :func:`load_rated`).
        scores: the ok holistic and dimension answers of the panel (``score_table``).
        blocks: the feature blocks, on the images that have every feature.
        rubric: the run's rubric (its dimensions are the blocks' P columns).
    """

    name: str
    design: ScoringDesign
    data: Dataset
    calls: pd.DataFrame
    scores: pd.DataFrame
    blocks: Blocks
    rubric: Rubric | None = None

    @property
    def images(self) -> pd.DataFrame:
        """The scored images' human labels, indexed by image id."""
        return self.data.images.set_index("image_id")

    @property
    def n_dropped(self) -> int:
        """Scored images left out of the blocks for a missing feature."""
        return len(self.data.images) - len(self.blocks.items)


def _read(
    ref: DatasetRef,
    design: ScoringDesign,
    store: str | Path,
    families: Sequence[str],
    columns: Sequence[str] | None,
    rubric: Rubric,
) -> RatedData:
    """A rated dataset's scored images, calls, scores and blocks under ``rubric``."""
    data = scored_dataset(ref.kind, ref.root, design, **ref.loader_keys)
    calls = read_calls(store, ref.name, columns=columns)
    scores = score_table(
        calls,
        ref.name,
        families=list(families),
        rubric_sha=rubric.sha256,
        temperature=design.temperature,
    )
    ids = data.images["image_id"]
    human = (  # without an overall rating the blocks' target is missing, never invented
        data.images.set_index("image_id")["mean_score"]
        if data.has_overall
        else pd.Series(float("nan"), index=pd.Index(ids, name="image_id"), name="mean_score")
    )
    blocks = build_blocks(
        scores, human, list(families), dimensions=rubric.keys, holistic=rubric.holistic is not None
    )
    return RatedData(ref.name, design, data, calls, scores, blocks, rubric)


def load_rated(
    run: Run,
    config: Config,
    *,
    families: Sequence[str],
    dataset: str | None = None,
    columns: Sequence[str] | None = SCORE_COLUMNS,
) -> RatedData:
    """Read one rated-image dataset of ``run``: its scored images, calls, scores and blocks.

    Args:
        run: the resolved run (its profile gives the dataset's root and the store).
        config: the runs file ``run`` comes from (its scoring design of the dataset's kind).
        families: the panel, in order.
        dataset: a dataset of the run's profile; None: the run's only dataset.
        columns: store columns to read (None: all, for cost and token tables).

    Raises:
        ConfigError: the dataset is not a rated-image dataset (eva or para), or the run
            spans several datasets and ``dataset`` is None.
    """
    ref = dataset_of_kind(run, rated_kinds(), dataset, use=USE)
    rubric = load_rubric(run.rubric)
    return _read(ref, config.design(ref.kind), run.profile.store, families, columns, rubric)


def load_run(
    run: Run,
    config: Config,
    *,
    families: Sequence[str],
    columns: Sequence[str] | None = SCORE_COLUMNS,
) -> dict[str, RatedData]:
    """:func:`load_rated` for every dataset of ``run``, by name in the run's order."""
    return {
        name: load_rated(run, config, families=families, dataset=name, columns=columns)
        for name in run.datasets
    }


def load_profile_rated(
    run: Run,
    config: Config,
    *,
    families: Sequence[str],
    loaded: Mapping[str, RatedData] | None = None,
) -> dict[str, RatedData]:
    """Every rated-image dataset of the run's profile that the store holds calls for.

    Cross-dataset analyses start here: the fusion paper treats the MTMM cells of both datasets as
    one family. A dataset with no holistic or dimension call in the store is left out (a
    profile may be scored one dataset at a time, and a dataset of logprob calls alone, such
    as ``eva-logprob``, is no rubric scoring of its own); ``loaded`` hands over datasets
    the caller has already read.
    """
    loaded = loaded or {}
    store = run.profile.store
    out: dict[str, RatedData] = {}
    for name, ref in run.profile.datasets.items():
        if ref.kind not in rated_kinds():
            continue
        if name in loaded:
            out[name] = loaded[name]
        elif len(read_calls(store, name, call_types=("holistic", "dimension"), columns=["kind"])):
            design = config.design(ref.kind)
            rubric = load_rubric(run.rubric)
            out[name] = _read(ref, design, store, families, SCORE_COLUMNS, rubric)
    return out
