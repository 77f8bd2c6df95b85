"""Dataset loaders: the real on-disk formats of EVA, PARA, VAB and VisionQ, the released
files of AVA, AADB, KonIQ-10k, SPAQ and LAPIS, and the generic ``ratings`` format.

The same loaders read the real datasets and the synthetic world, which is written in the
real formats. Every bad input raises `DatasetError`, naming the file, column and item.
"""

from collections.abc import Callable

from judgepanel.datasets._common import Dataset as Dataset
from judgepanel.datasets._common import DatasetError as DatasetError
from judgepanel.datasets.aadb import load_aadb as load_aadb
from judgepanel.datasets.attribute import Attribute as Attribute
from judgepanel.datasets.ava import load_ava as load_ava
from judgepanel.datasets.eva import load_eva as load_eva
from judgepanel.datasets.koniq import load_koniq as load_koniq
from judgepanel.datasets.lapis import load_lapis as load_lapis
from judgepanel.datasets.para import load_para as load_para
from judgepanel.datasets.ratings import load_ratings as load_ratings
from judgepanel.datasets.spaq import load_spaq as load_spaq
from judgepanel.datasets.vab import load_vab as load_vab
from judgepanel.datasets.visionq import load_visionq as load_visionq

RATED_LOADERS: dict[str, Callable[[str], Dataset]] = {
    "eva": load_eva,
    "para": load_para,
    "ratings": load_ratings,
    "ava": load_ava,
    "aadb": load_aadb,
    "koniq": load_koniq,
    "spaq": load_spaq,
    "lapis": load_lapis,
}
"""The rated-image dataset kinds, each with its loader (`judgepanel.core.settings.IMAGE_KINDS`
lists the same kinds)."""


def load_dataset(kind: str, root: str) -> Dataset:
    """A rated image dataset by its kind in ``papermill_runs.yaml`` (see `RATED_LOADERS`)."""
    try:
        loader = RATED_LOADERS[kind]
    except KeyError:
        raise DatasetError(
            f"dataset kind {kind!r} has no per-image human ratings; "
            f"expected one of {', '.join(RATED_LOADERS)}"
        ) from None
    return loader(root)
