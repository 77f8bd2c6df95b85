"""The dataset kinds judgepanel ships: one `register_kind` call each, in the order the
runs file's error messages list them."""

from __future__ import annotations

from typing import Literal

from judgepanel.datasets.aadb import load_aadb
from judgepanel.datasets.ava import load_ava
from judgepanel.datasets.cadb import load_cadb
from judgepanel.datasets.eva import load_eva
from judgepanel.datasets.kinds import DatasetKind, Key, register_kind
from judgepanel.datasets.koniq import load_koniq
from judgepanel.datasets.lapis import load_lapis
from judgepanel.datasets.live import load_live_wild
from judgepanel.datasets.pairs import load_pairs
from judgepanel.datasets.para import load_para
from judgepanel.datasets.ratings import load_ratings
from judgepanel.datasets.spaq import load_spaq
from judgepanel.datasets.vab import load_vab
from judgepanel.datasets.visionq import load_questions

RATED = "rated_images"
MISSING = {
    "missing_images": Key(
        Literal["error", "skip"],
        "error",
        doc="images absent from disk: an error, or left out of the run (skip)",
    )
}
"""The runs-file key every rated kind's loader takes (`judgepanel.datasets.presence`).

A run scores images, so its entry takes ``error`` or ``skip``; ``keep`` (labels alone) is
for ``data describe --option missing_images=keep``, which reads no image."""

register_kind(
    DatasetKind(
        "eva",
        load_eva,
        RATED,
        summary="EVA: ``data/votes_filtered.csv`` and the images under ``EVA_together/``.",
        keys=MISSING,
    )
)
register_kind(
    DatasetKind(
        "para",
        load_para,
        RATED,
        summary="PARA: ``annotation/PARA-Images.csv`` (or the GIAA files) and ``imgs/<session>/``.",
        keys=MISSING,
        options={
            "sd_ddof": Key(int, 0, doc="the released SDs' ddof (PARA's GIAA std: 0)"),
        },
    )
)
register_kind(
    DatasetKind(
        "ratings",
        load_ratings,
        RATED,
        summary="Ratings: ``dataset.yaml``, ``images.csv``, and "
        "``ratings.csv`` or ``summary.csv``.",
        keys=MISSING,
    )
)
register_kind(
    DatasetKind(
        "ava",
        load_ava,
        RATED,
        summary="AVA: ``AVA.txt``, the official test list, ``images/``.",
        keys=MISSING,
    )
)
register_kind(
    DatasetKind(
        "aadb",
        load_aadb,
        RATED,
        summary="AADB: the label lists, per-split CSVs or ``AADBinfo.mat``, "
        "``AADB_AllinAll.csv`` where present, the images.",
        keys=MISSING,
        options={
            "overlap": Key(
                Literal["test", "validation", "error"],
                "test",
                doc="where an image listed in both Validation and Test goes",
            ),
        },
    )
)
register_kind(
    DatasetKind(
        "koniq",
        load_koniq,
        RATED,
        summary="KonIQ-10k: ``koniq10k_distributions_sets.csv`` or "
        "``koniq10k_scores_and_distributions.csv``, and the images under ``1024x768/``.",
        keys=MISSING,
        options={
            "mos_scale": Key(
                Literal["1-100", "1-5"] | None, doc="the MOS's scale (default: as documented)"
            ),
            "sd_scale": Key(
                Literal["votes", "mos"], "votes", doc="the SD's scale (default: 1-5 votes)"
            ),
        },
    )
)
register_kind(
    DatasetKind(
        "spaq",
        load_spaq,
        RATED,
        summary="SPAQ: the ``Annotations/`` workbook (or its CSV) of MOS and attribute "
        "scores, ``TestImage/``.",
        keys=MISSING,
    )
)
register_kind(
    DatasetKind(
        "lapis",
        load_lapis,
        RATED,
        summary="LAPIS: the individual-ratings CSV under ``annotation/``, "
        "``images/``, ``imageset/``.",
        keys=MISSING,
    )
)
register_kind(
    DatasetKind(
        "live_wild",
        load_live_wild,
        RATED,
        summary="LIVE in the Wild: ``Data/All{Images,MOS,StdDev}_release.mat`` and ``Images/``.",
        keys=MISSING,
        options={
            "training_images": Key(
                Literal["drop", "keep"], "drop", doc="the study's seven training images"
            ),
            "ratings_per_image": Key(int, 175, doc="n of every image (none is released)"),
            "sd_ddof": Key(int, 1, doc="the released SDs' ddof"),
        },
    )
)
register_kind(
    DatasetKind(
        "cadb",
        load_cadb,
        RATED,
        summary="CADB: ``composition_scores.json`` (five raters an image) and ``images/``.",
        keys=MISSING,
    )
)
register_kind(
    DatasetKind(
        "vab",
        load_vab,
        "tasks",
        summary="VAB: the ``data/test-*.parquet`` shards, one task a row, its images embedded.",
        noun="tasks",
    )
)
register_kind(
    DatasetKind(
        "visionq",
        load_questions,
        "tasks",
        "VisionQ: ``data/benchmark/`` (questions, data points) and the crops under ``bench/``.",
        keys={
            "questions": Key(str | None, path=True, doc="the question file, if not under root"),
            "eligible": Key(str | None, path=True, doc="the eligible-id list, if not under root"),
        },
        scored=False,
        noun="questions",
    )
)
register_kind(
    DatasetKind(
        "pairs",
        load_pairs,
        "tasks",
        summary="Pairs: ``images.csv`` and ``pairs.csv`` (image_a, image_b, winner, rater), "
        "or a rated dataset to pair (``rated: KIND``).",
        keys={
            "pairs": Key(str, "pairs.csv", doc="the pairwise labels under root"),
            "rated": Key(str | None, doc="pair the rated dataset of this kind under root"),
            **MISSING,
        },
        scored=False,
        noun="pairs",
    )
)
