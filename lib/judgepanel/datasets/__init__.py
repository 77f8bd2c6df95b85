"""Dataset loaders: the real on-disk formats of EVA, PARA, VAB and VisionQ, the released
files of AVA, AADB, KonIQ-10k, SPAQ, LAPIS, LIVE in the Wild and CADB, and the generic
``ratings`` format.

The same loaders read the real datasets and the synthetic world, which is written in the
real formats. Every bad input raises `DatasetError`, naming the file, column and item.
"""

from typing import Any

import judgepanel.datasets.builtin as _builtin  # noqa: F401  (registers the built-in kinds)
from judgepanel.datasets._common import Dataset as Dataset
from judgepanel.datasets._common import DatasetError as DatasetError
from judgepanel.datasets.aadb import load_aadb as load_aadb
from judgepanel.datasets.attribute import Attribute as Attribute
from judgepanel.datasets.ava import load_ava as load_ava
from judgepanel.datasets.cadb import load_cadb as load_cadb
from judgepanel.datasets.eva import load_eva as load_eva
from judgepanel.datasets.kinds import DatasetKind as DatasetKind
from judgepanel.datasets.kinds import Key as Key
from judgepanel.datasets.kinds import get_kind, rated_kinds
from judgepanel.datasets.kinds import register_kind as register_kind
from judgepanel.datasets.kinds import unregister_kind as unregister_kind
from judgepanel.datasets.koniq import load_koniq as load_koniq
from judgepanel.datasets.lapis import load_lapis as load_lapis
from judgepanel.datasets.live import load_live_wild as load_live_wild
from judgepanel.datasets.para import load_para as load_para
from judgepanel.datasets.ratings import load_ratings as load_ratings
from judgepanel.datasets.spaq import load_spaq as load_spaq
from judgepanel.datasets.vab import load_vab as load_vab
from judgepanel.datasets.visionq import load_visionq as load_visionq


def load_dataset(kind: str, root: str, **keys: Any) -> Dataset:
    """A rated image dataset by its kind in ``papermill_runs.yaml``, read by the loader its
    registration names (`judgepanel.datasets.kinds`); ``keys`` are the kind's declared
    runs-file keys, passed to the loader where given."""
    if kind not in rated_kinds():
        raise DatasetError(
            f"dataset kind {kind!r} has no per-image human ratings; "
            f"expected one of {', '.join(rated_kinds())}"
        )
    return get_kind(kind).loader(root, **keys)
