"""Dataset loaders: the real on-disk formats of EVA, PARA, VAB and VisionQ.

The same loaders read the real datasets and the synthetic world, which is written in the
real formats. Every bad input raises `DatasetError`, naming the file, column and item.
"""

from judgepanel.datasets._common import Dataset as Dataset
from judgepanel.datasets._common import DatasetError as DatasetError
from judgepanel.datasets.eva import load_eva as load_eva
from judgepanel.datasets.para import load_para as load_para
from judgepanel.datasets.vab import load_vab as load_vab
from judgepanel.datasets.visionq import load_visionq as load_visionq

_RATED = {"eva": load_eva, "para": load_para}


def load_dataset(kind: str, root: str) -> Dataset:
    """A rated image dataset by its kind in ``papermill_runs.yaml`` (``eva`` or ``para``)."""
    try:
        loader = _RATED[kind]
    except KeyError:
        raise DatasetError(
            f"dataset kind {kind!r} has no per-image human ratings; "
            f"expected one of {sorted(_RATED)}"
        ) from None
    return loader(root)
