"""What the rubric-fusion notebooks start from: one call per dataset of a run.

:func:`load_rated` reads a rated-image dataset as its scoring design sampled it, the ok
rubric answers of the panel from the store (opened read-only and closed), and builds the
feature blocks; every notebook of the study starts from the same :class:`RatedData`.
:func:`load_profile_rated` reads every scored rated dataset of a profile, for the analyses
whose family of comparisons spans datasets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgepanel.core.config import ScoringDesign, load_config
from judgepanel.core.frames import SCORE_COLUMNS, read_calls, score_table, scored_dataset
from judgepanel.core.prompts import load_rubric
from judgepanel.core.settings import IMAGE_KINDS
from judgepanel.datasets import Dataset
from judgepanel.studies.fusion.blocks import Blocks, build_blocks


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
    """

    name: str
    design: ScoringDesign
    data: Dataset
    calls: pd.DataFrame
    scores: pd.DataFrame
    blocks: Blocks

    @property
    def images(self) -> pd.DataFrame:
        """The scored images' human labels, indexed by image id."""
        return self.data.images.set_index("image_id")

    @property
    def n_dropped(self) -> int:
        """Scored images left out of the blocks for a missing feature."""
        return len(self.data.images) - len(self.blocks.items)


def load_rated(
    name: str,
    kind: str,
    root: str | Path,
    *,
    store: str | Path,
    runs_file: str | Path,
    families: Sequence[str],
    columns: Sequence[str] | None = SCORE_COLUMNS,
) -> RatedData:
    """Read dataset ``name`` of a run: its scored images, calls, scores and blocks.

    Args:
        name: the dataset's key in the store.
        kind: ``eva`` or ``para``.
        root: its folder.
        store: the checkpoint store.
        runs_file: the runs file whose scoring design of ``kind`` was used.
        families: the panel, in order.
        columns: store columns to read (None: all, for cost and token tables).
    """
    design = load_config(runs_file).design(kind)
    data = scored_dataset(kind, root, design)
    calls = read_calls(store, name, columns=columns)
    scores = score_table(
        calls,
        name,
        families=list(families),
        rubric_sha=load_rubric().sha256,
        temperature=design.temperature,
    )
    human = data.images.set_index("image_id")["mean_score"]
    blocks = build_blocks(scores, human, list(families))
    return RatedData(name, design, data, calls, scores, blocks)


def load_run(
    datasets: Mapping[str, Mapping[str, str]],
    *,
    store: str | Path,
    runs_file: str | Path,
    families: Sequence[str],
    columns: Sequence[str] | None = SCORE_COLUMNS,
) -> dict[str, RatedData]:
    """:func:`load_rated` for every dataset of a run (``{name: {"kind", "root"}}``)."""
    return {
        name: load_rated(
            name,
            ref["kind"],
            ref["root"],
            store=store,
            runs_file=runs_file,
            families=families,
            columns=columns,
        )
        for name, ref in datasets.items()
    }


def load_profile_rated(
    profile: str,
    *,
    store: str | Path,
    runs_file: str | Path,
    families: Sequence[str],
    loaded: Mapping[str, RatedData] | None = None,
) -> dict[str, RatedData]:
    """Every rated-image dataset of ``profile`` that the store holds calls for.

    Cross-dataset analyses start here: seed 000 treats the MTMM cells of both datasets as
    one family. A dataset with no holistic or dimension call in the store is left out (a
    profile may be scored one dataset at a time, and a dataset of logprob calls alone, such
    as ``eva-logprob``, is no rubric scoring of its own); ``loaded`` hands over datasets
    the caller has already read.
    """
    loaded = loaded or {}
    out: dict[str, RatedData] = {}
    for name, ref in load_config(runs_file).profile(profile).datasets.items():
        if ref.kind not in IMAGE_KINDS:
            continue
        if name in loaded:
            out[name] = loaded[name]
        elif len(read_calls(store, name, kinds=("holistic", "dimension"), columns=["kind"])):
            out[name] = load_rated(
                name, ref.kind, ref.root, store=store, runs_file=runs_file, families=families
            )
    return out
